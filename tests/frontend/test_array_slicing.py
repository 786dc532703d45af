"""NumPy's basic indexing (tracer.frontend.arrays) against NumPy: ints, slices with steps and negative bounds, np.newaxis
and `...`, read as views, written in place (`x[a:b] += y`), and differentiated.

Each case is a function written out with its index (`x[i0, s1:e1:-2, None]`), whose bounds are
int arguments (run-time values in the compiled code). Every call must run natively: a call that
ran the Python function instead would hide a wrong lowering, so `native_only` counts them.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import tracer.api
from tracer import TracerError, grad, trace

SETTINGS = settings(max_examples=40, deadline=None)
SHAPES = hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=5)
_COMPILED: dict = {}


@contextlib.contextmanager
def native_only(expected=True):
    """Fails if a compiled call in the block runs the Python function (unless not `expected`:
    a call that raises NumPy's error runs Python to raise it)."""
    ran = []
    plain = tracer.api.run_plain
    tracer.api.run_plain = lambda *args: (ran.append(args), plain(*args))[1]
    try:
        yield
    finally:
        tracer.api.run_plain = plain
    assert not (ran and expected), f"{len(ran)} call(s) ran Python"


@st.composite
def basic_index(draw, rank):
    """The text of a basic index for an array of `rank` axes, and the names of its int bounds
    with their values."""
    parts, names = [], {}

    def bound(lo, hi):
        if draw(st.booleans()):
            name = f"a{len(names)}"
            names[name] = draw(st.integers(lo, hi))
            return name
        return ""
    used = draw(st.integers(1, rank))
    for _ in range(used):
        if draw(st.integers(0, 3)) == 0:
            parts.append(bound(-3, 2) or "0")
        else:
            step = draw(st.sampled_from(["", ":2", ":-1", ":-2", ":3"]))
            parts.append(f"{bound(-7, 7)}:{bound(-7, 7)}{step}")
    for _ in range(draw(st.integers(0, 2))):
        parts.insert(draw(st.integers(0, len(parts))), "None")
    if used < rank and draw(st.booleans()):
        parts.insert(draw(st.integers(0, len(parts))), "...")
    return ", ".join(parts), names


def function(template: str, index: str, names: dict):
    """A compiled and a plain function `f(x, y, *bounds)` with `template` filled with `index`."""
    key = (template, index)
    if key not in _COMPILED:
        params = ", ".join(["x", "y", *names])
        namespace = {"np": np}
        exec(f"def f({params}):\n    " + template.replace("IDX", index), namespace)
        _COMPILED[key] = namespace["f"], trace(namespace["f"])
    return _COMPILED[key]


def run_both(template, x, index, names, y=1.5):
    """The plain and the compiled result (or exception type), and what each did to its x."""
    plain, compiled = function(template, index, names)
    outcomes = []
    for f in (plain, compiled):
        arg = x.copy()
        with native_only(expected=f is compiled and not isinstance(outcomes[0][0], type)):
            try:
                result = f(arg, y, *names.values())
            except (IndexError, ValueError) as e:
                result = type(e)
        outcomes.append((result, arg))
    return outcomes


def arrays(draw_shape=SHAPES):
    return hnp.arrays(np.float64, draw_shape, elements=st.floats(-5, 5, width=64))


@SETTINGS
@given(st.data())
def test_read(data):
    x = data.draw(arrays())
    index, names = data.draw(basic_index(x.ndim))
    (want, _), (got, _) = run_both("return x[IDX] * 1.0", x, index, names)
    if isinstance(want, type):
        assert got is want, (index, names)
    elif isinstance(want, np.ndarray):
        assert isinstance(got, np.ndarray) and got.shape == want.shape, (index, names, got, want)
        np.testing.assert_array_equal(got, want)
    else:                    # one element: NumPy's scalar type (np.float64) and value
        assert type(got) is type(want) and got == want


@SETTINGS
@given(st.data())
def test_read_of_a_view(data):
    x = data.draw(arrays())
    view = x[::-1] if data.draw(st.booleans()) else x.T
    index, names = data.draw(basic_index(view.ndim))
    (want, _), (got, _) = run_both("return x[IDX] + 0.0", view, index, names)
    if isinstance(want, type):
        assert got is want
    else:
        np.testing.assert_array_equal(got, want)


@SETTINGS
@given(st.data())
def test_update_in_place(data):
    x = data.draw(arrays())
    index, names = data.draw(basic_index(x.ndim))
    template = data.draw(st.sampled_from(["x[IDX] += y", "x[IDX] = y", "x[IDX] *= x[IDX]",
                                          "v = x[IDX]\n    v -= y"]))
    (want, want_x), (got, got_x) = run_both(template, x, index, names)
    assert got is want or (want is None and got is None), (template, index, names)
    np.testing.assert_array_equal(got_x, want_x)


@SETTINGS
@given(st.data())
def test_gradient_of_a_slice(data):
    """d/dx sum(sin(x[idx])) is cos(x) in the places idx selects and 0 elsewhere."""
    x = data.draw(arrays())
    index, names = data.draw(basic_index(x.ndim))
    try:
        x[eval(f"np.s_[{index}]", {"np": np}, names)]
    except IndexError:
        return
    _, compiled = function("return np.sum(np.sin(x[IDX]))", index, names)
    got = trace(grad(compiled.py_func))(x, 0.0, *names.values())
    want = np.zeros_like(x)
    exec(f"want[{index}] = np.cos(x[{index}])", {"np": np, "want": want, "x": x, **names})
    np.testing.assert_allclose(got, want, rtol=1e-15, atol=0)


def test_overlapping_assignment_reads_first():
    def shift(x):
        x[1:] = x[:-1]
        x[:-2] += x[2:]

    a, b = np.arange(6.0), np.arange(6.0)
    with native_only():
        trace(shift)(a)
    shift(b)
    np.testing.assert_array_equal(a, b)


def test_window_loop_stays_a_loop():
    """A sliding window with traced bounds: one native loop, whatever the length."""
    def conv(x, w):
        k = len(w)
        out = np.zeros(len(x) - k + 1)
        for i in range(len(out)):
            out[i] = np.sum(x[i:i + k] * w)
        return out

    f = trace(conv)
    w = np.array([0.25, 0.5, 0.25])
    for n in (3, 10, 1000):
        x = np.sin(np.arange(float(n)))
        with native_only():
            np.testing.assert_allclose(f(x, w), np.convolve(x, w[::-1], "valid"), rtol=1e-14)
    assert len(f.specializations) == 1
    assert sum(1 for _ in f.specializations[0].optimized.walk()) < 60


def test_errors_name_the_line():
    def two_ellipses(x):
        return x[..., ...]

    def zero_step(x):
        return x[::0]

    def float_bound(x):
        return x[1.5:]

    def fancy(x):
        return x[x[0] > 0]                           # (a bool scalar index: not yet)

    x = np.ones(4)
    with pytest.raises(IndexError, match="single ellipsis"):
        trace(two_ellipses, fullgraph=True)(x)
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        trace(zero_step, fullgraph=True)(x)
    with pytest.raises(TypeError, match="slice indices must be integers"):
        trace(float_bound, fullgraph=True)(x)
    with pytest.raises(TracerError, match=r"test_array_slicing.py:\d+.*bool or an array"):
        trace(fancy, fullgraph=True)(x)


def test_broadcast_views_are_read_only():
    def write(x):
        v = np.broadcast_to(x, (3, 4))
        v[0, 0] = 1.0

    with pytest.raises(ValueError, match="read-only"):
        write(np.zeros(4))
    with pytest.raises(ValueError, match="read-only"):
        trace(write)(np.zeros(4))


def _dot_of_zip(a, b):
    s = 0.0
    for u, v in zip(a, b):
        s += u * v
    return s


def _weighted_rows(x):
    out = 0.0
    for i, r in enumerate(x, 1):
        out += i * r.sum()
    return out


def _three(a, b, c):
    t = 0.0
    for p, q, r in zip(a, b, c):
        t += p - q * r
    return t


def _first_rise(v):
    best = -1
    for i, e in enumerate(v):
        if e > best:
            best = e + i
    return best


@pytest.mark.parametrize("fn, args", [
    (_dot_of_zip, (np.arange(5.0), np.arange(5.0)[::-1])),
    (_dot_of_zip, (np.arange(5.0), np.arange(3.0))),            # as long as the shortest
    (_dot_of_zip, (np.arange(5.0), np.arange(0.0))),
    (_weighted_rows, (np.arange(12.0).reshape(3, 4),)),
    (_three, (np.arange(4.0), np.ones(4), np.arange(4.0) * 0.5)),
    (_first_rise, (np.array([3, 1, 4, 1, 5]),)),
], ids=["zip", "zip-shorter", "zip-empty", "enumerate-rows", "zip3", "enumerate-ints"])
def test_zip_and_enumerate_of_arrays_compile_to_loops(fn, args):
    compiled = trace(fn, fullgraph=True)
    assert compiled(*args) == fn(*args)
    longer = tuple(np.concatenate([a] * 3) for a in args)          # another length: the same code
    assert compiled(*longer) == fn(*longer)
    assert len(compiled.specializations) == 1
