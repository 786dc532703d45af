"""`tracer.vectorize`: a scalar function (or its gradient) compiled into one loop over arrays.

The oracle is the scalar function called element by element (CPython, or the compiled scalar
gradient), bit for bit with FMA fusion off, on hypothesis-generated broadcastable shapes
(scalars, size-1 axes, empty arrays); gradients also against finite differences.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from tracer import grad, ir, trace, value_and_grad, vectorize

SETTINGS = settings(max_examples=30, deadline=None)


def d(a, b, c):
    return -a * b + (c - a / b) * (a + b) * c - (b * c - a) / (a + c) + b * b * c / a


def clipped(x, y):
    if x > y:
        return math.sqrt(x - y)
    return (y - x) * 0.5


def newton_sqrt(x, guess):
    r = guess
    while abs(r * r - x) > 1e-12 * x:
        r = 0.5 * (r + x / r)
    return r


VECTORIZED: dict = {}


def compiled(fn, transform=None):
    key = (fn, transform)
    if key not in VECTORIZED:
        VECTORIZED[key] = vectorize(fn if transform is None else transform(fn), fuse_fma=False)
    return VECTORIZED[key]


POSITIVE = st.floats(0.5, 4.0, width=64)


@st.composite
def broadcastable(draw, count):
    """`count` arguments: float64 arrays of shapes that broadcast together, or floats."""
    shapes = draw(hnp.mutually_broadcastable_shapes(num_shapes=count, min_dims=0, max_dims=3, max_side=4)).input_shapes
    out = []
    for shape in shapes:
        if not shape and draw(st.booleans()):
            out.append(draw(POSITIVE))
        else:
            out.append(draw(hnp.arrays(np.float64, shape, elements=POSITIVE)))
    return out


def per_element(fn, args):
    """What calling `fn` on each element gives (NumPy broadcasting), as float64 arrays."""
    shape = np.broadcast_shapes(*(np.shape(a) for a in args))
    flat = [np.broadcast_to(a, shape).ravel() for a in args]
    results = [fn(*(float(x[i]) for x in flat)) for i in range(int(np.prod(shape)))]
    return results, shape


@SETTINGS
@given(broadcastable(3))
def test_matches_the_scalar_function(args):
    got = compiled(d)(*args)
    results, shape = per_element(d, args)
    if not shape:
        assert got == results[0] or isinstance(got, np.ndarray) and got.item() == results[0]
        return
    np.testing.assert_array_equal(got, np.array(results).reshape(shape))


@SETTINGS
@given(broadcastable(2))
def test_branches_and_loops_per_element(args):
    for fn in (clipped, newton_sqrt):
        got = compiled(fn)(*args)
        results, shape = per_element(fn, args)
        np.testing.assert_array_equal(np.asarray(got), np.array(results).reshape(shape))


@settings(max_examples=12, deadline=None)
@given(broadcastable(3))
def test_value_and_grad_per_element(args):
    if all(type(a) is float for a in args):
        return
    value, grads = compiled(d, lambda f: value_and_grad(f, argnums=(0, 1, 2)))(*args)
    scalar = trace(value_and_grad(d, argnums=(0, 1, 2)), fuse_fma=False)
    results, shape = per_element(lambda *xs: scalar(*xs), args)
    np.testing.assert_array_equal(value, np.array([r[0] for r in results]).reshape(shape))
    for k in range(3):
        np.testing.assert_array_equal(grads[k], np.array([r[1][k] for r in results]).reshape(shape))


def test_gradients_against_finite_differences():
    rng = np.random.default_rng(0)
    a, b = rng.uniform(0.5, 3, 50), rng.uniform(0.5, 3, 50)
    da, db = vectorize(grad(clipped, argnums=(0, 1)))(a, b)
    eps = 1e-6
    fd_a = (vectorize(clipped)(a + eps, b) - vectorize(clipped)(a - eps, b)) / (2 * eps)
    fd_b = (vectorize(clipped)(a, b + eps) - vectorize(clipped)(a, b - eps)) / (2 * eps)
    np.testing.assert_allclose(da, fd_a, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(db, fd_b, rtol=1e-6, atol=1e-8)


def test_one_loop_no_temporaries():
    f = vectorize(value_and_grad(d, argnums=(0, 1, 2)))
    f(np.ones(3), np.ones(3), 2.0)
    (kernel,) = f.compiled.values()
    maps = [v for v in kernel.function.walk() if v.op == "map"]
    assert len(maps) == 1
    assert sum(1 for v in kernel.function.body.values if v.op == "map") == 1
    region = ir.Function("region", [], maps[0].regions[0])
    assert not [v for v in region.walk() if isinstance(v.type, ir.ArrayType)]      # scalars only inside


def test_errors_are_python_errors():
    with pytest.raises(ZeroDivisionError):
        vectorize(lambda x: 1.0 / x)(np.array([1.0, 0.0]))
    with pytest.raises(ValueError, match="math domain error"):
        vectorize(math.sqrt)(np.array([1.0, -1.0]))
    with pytest.raises(ValueError, match="could not be broadcast|mismatch"):
        vectorize(d)(np.ones(3), np.ones(4), 1.0)
    with pytest.raises(TypeError, match="float64 arrays and floats"):
        vectorize(d)(np.ones(3, dtype=np.int64), 1.0, 1.0)
    with pytest.raises(TypeError, match="float64 arrays and floats"):
        vectorize(d)([1.0, 2.0], 1.0, 1.0)


SCALE = 2.0


def scaled(x):
    return x * SCALE


def test_a_global_that_changes_is_seen():
    global SCALE
    f = vectorize(scaled)
    assert list(f(np.ones(2))) == [2.0, 2.0]
    SCALE = 3.0
    try:
        assert list(f(np.ones(2))) == [3.0, 3.0]          # the trace's guard fails: traced again
    finally:
        SCALE = 2.0


def test_empty_and_size_one_arrays():
    f = vectorize(d)
    assert f(np.ones(0), np.ones((2, 0)), 1.0).shape == (2, 0)
    got = f(np.full((3, 1), 2.0), np.full((1, 4), 3.0), 1.5)
    assert got.shape == (3, 4) and np.all(got == d(2.0, 3.0, 1.5))


def sqrt_plus_inverse(x):
    return math.sqrt(x) + 1.0 / x


def test_the_first_failing_element_decides_the_exception():
    """The loop notes failures without leaving (so it vectorizes), then finds the first failing
    element again, in order: its exception is the one numpy.vectorize would raise."""
    f = vectorize(sqrt_plus_inverse)
    with pytest.raises(ValueError, match="math domain error"):
        f(np.array([2.0, 3.0, -1.0, 0.0, 5.0]))
    with pytest.raises(ZeroDivisionError):
        f(np.array([2.0, 3.0, 0.0, -1.0, 5.0]))
    np.testing.assert_array_equal(f(np.array([4.0, 0.25])), [2.25, 4.5])


def test_out_buffers():
    """out= takes arrays nested as the result is, writes the results into them (no new
    arrays), and returns it; an input that shares memory with an output is read first."""
    f = vectorize(value_and_grad(d, argnums=(0, 1, 2)), fuse_fma=False)
    a, b = np.linspace(1.0, 2.0, 7), np.linspace(2.0, 3.0, 7)
    out = (np.empty(7), (np.empty(7), np.empty(7), np.empty(7)))
    assert f(a, b, 1.5, out=out) is out
    value, grads = f(a, b, 1.5)
    np.testing.assert_array_equal(out[0], value)
    for got, want in zip(out[1], grads):
        np.testing.assert_array_equal(got, want)
    g = vectorize(d, fuse_fma=False)
    x = np.linspace(1.0, 2.0, 5)
    expected = g(x, x, 2.0)
    g(x, x, 2.0, out=x)                          # x is read before it is written
    np.testing.assert_array_equal(x, expected)
    o = np.empty((2, 3))
    assert g(np.ones((2, 1)), np.full(3, 2.0), 3.0, out=o) is o and np.all(o == d(1.0, 2.0, 3.0))
    with pytest.raises(ValueError, match="shape"):
        g(np.ones(3), 1.0, 1.0, out=np.empty(4))
    with pytest.raises(TypeError, match="writeable float64"):
        g(np.ones(3), 1.0, 1.0, out=np.empty(3, dtype=np.float32))
    with pytest.raises(ValueError, match="out= has 1 array"):
        f(a, b, 1.5, out=np.empty(7))


def test_arguments_are_checked_after_the_first_compile_too():
    """Later calls take a shortcut to the compiled loop; what it skips is still checked."""
    f = vectorize(d)
    np.testing.assert_array_equal(f(np.ones(3), np.ones(3), 1.0), d(1.0, 1.0, 1.0))
    with pytest.raises(ValueError, match="could not be broadcast|mismatch"):
        f(np.ones(3), np.ones(4), 1.0)
    with pytest.raises(TypeError, match="float64 arrays and floats"):
        f(np.ones(3, dtype=np.float32), np.ones(3), 1.0)
    assert f(np.ones(3), np.float64(2.0), 1.0).tolist() == [d(1.0, 2.0, 1.0)] * 3     # converted to a float


def test_big_results_reuse_freed_blocks():
    """A freed result of at least codegen.runtime.BIG_BLOCK bytes is kept for the next result
    it fits (so a loop over big arrays does not page-fault fresh memory on every call); a much
    smaller result does not take it."""
    f = vectorize(d, fuse_fma=False)
    a = np.linspace(1.0, 2.0, 200_000)               # 1.6 MB results
    first = f(a, a, 2.0)
    address, expected = first.ctypes.data, first.copy()
    del first
    second = f(a, a, 2.0)
    assert second.ctypes.data == address             # the same memory, every element written again
    np.testing.assert_array_equal(second, expected)
    third = f(a, a, 2.0)                             # `second` still lives: a block of its own
    assert third.ctypes.data != address
    np.testing.assert_array_equal(third, expected)
    del second
    small = f(a[:40_000], a[:40_000], 2.0)           # 320 KB: not given the 1.6 MB block
    assert small.ctypes.data != address
    np.testing.assert_array_equal(small, expected[:40_000])


def floor_plus_half(x):
    return float(math.floor(x)) + 0.5


def test_out_buffers_are_checked_by_the_compiled_loop_too():
    """Once compiled, a call with out= goes straight to the loop, which checks the shapes and
    overlaps itself; what fails them is done in Python as on the first call."""
    g = vectorize(d, fuse_fma=False)
    x, o = np.linspace(1.0, 2.0, 5), np.empty(5)
    assert g(x, x, 2.0, out=o) is o                       # compiles the loop into out=
    expected = g(x, x, 2.0)
    np.testing.assert_array_equal(o, expected)
    g(x, x, 2.0, out=x)                                   # an input is the output: read before written
    np.testing.assert_array_equal(x, expected)
    with pytest.raises(ValueError, match="shape"):
        g(np.ones(5), 1.0, 1.0, out=np.empty(4))
    with pytest.raises(ValueError, match="could not be broadcast|mismatch"):
        g(np.ones(5), np.ones(4), 1.0, out=np.empty(5))
    read_only = np.empty(5)
    read_only.flags.writeable = False
    with pytest.raises(TypeError, match="writeable float64"):
        g(np.ones(5), 1.0, 1.0, out=read_only)
    f = vectorize(value_and_grad(d, argnums=(0, 1, 2)), fuse_fma=False)
    a, b = np.linspace(1.0, 2.0, 7), np.linspace(2.0, 3.0, 7)
    value, grads = f(a, b, 1.5)
    out = (np.empty(7), (np.empty(7), np.empty(7), np.empty(7)))
    for _ in range(2):
        assert f(a, b, 1.5, out=out) is out
        np.testing.assert_array_equal(out[0], value)
        for got, want in zip(out[1], grads):
            np.testing.assert_array_equal(got, want)
    # an element the loop cannot answer exactly (an int past 64 bits): Python's results, into out=
    h, o = vectorize(floor_plus_half), np.empty(2)
    h(np.array([1.5, 2.5]), out=o)
    assert h(np.array([1e30, 2.5]), out=o) is o and o.tolist() == [1e30, 2.5]
