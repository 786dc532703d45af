"""NumPy array arguments in traced code (tracer.frontend.arrays; issue 5, first slice): element reads, sizes, loops.

Each function is plain Python over NumPy arrays; the compiled call must give what CPython (with
NumPy) gives on the same arrays, bit for bit with fusion off (compiled results are Python floats
and ints; NumPy's are np.float64 and np.int64, equal in value), for contiguous arrays and views.
"""
from __future__ import annotations

import ctypes
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from oracle import central_difference, close

from tracer import grad, trace
from tracer.errors import TracerError


def dot(x, w):
    acc = 0.0
    for i in range(len(x)):
        acc += x[i] * w[i]
    return acc


def running_max(x):
    best = x[0]
    for i in range(1, len(x)):
        if x[i] > best:
            best = x[i]
    return best


def relu_layer_sum(W, b, x):
    rows, cols = W.shape
    total = 0.0
    for j in range(rows):
        s = b[j]
        for i in range(cols):
            s += W[j][i] * x[i]          # W[j] then [i]: one element, no view
        total += max(s, 0.0)
    return total


def trace_of(A):
    t = 0.0
    for i in range(min(A.shape[0], A.shape[1])):
        t += A[i, i]
    return t


def ends(x):
    return x[-1] - x[0] + x[len(x) // 2] * x.ndim + x.size


def int_sum(x):
    t = 0
    for i in range(len(x)):
        t += x[i]
    return t


def count_above(x, level):
    n = 0
    i = 0
    while i < len(x):
        if x[i] > level:
            n += 1
        i += 1
    return n


def total_by_iteration(x):
    t = 0.0
    for v in x:                          # a native loop over the elements
        t += v
    return t


def rows_dot(W, x):
    s = 0.0
    for row in W:                        # rows, read element by element
        for i in range(len(row)):
            s += row[i] * x[i]
    return s


def first_negative(x):
    for v in x:
        if v < 0.0:
            return v
    return 0.0


FLOATS = st.floats(-1e6, 1e6, allow_nan=False, width=64)


def vectors(n=None, dtype=np.float64, elements=FLOATS):
    shape = st.integers(1, 40) if n is None else st.just(n)
    return shape.flatmap(lambda k: hnp.arrays(dtype, k, elements=elements))


def views(array):
    """The array and views of it with other layouts (same elements, in order)."""
    yield array
    doubled = np.repeat(array, 2, axis=0)
    yield doubled[::2]                               # strided
    yield np.ascontiguousarray(array[::-1])[::-1]    # negative stride
    if array.ndim == 2:
        yield np.asfortranarray(array)               # column-major


def same(got, expected) -> bool:
    """Compiled vs NumPy: equal values, float bits included, NumPy's scalar type or Python's. (A
    float a loop sums from elements is NumPy's np.float64 once the loop ran, Python's float if it
    ran no time: which one depends on the path, which traced code does not follow.)"""
    kinds = {float: np.float64, int: np.int64, bool: np.bool_}
    python = {v: k for k, v in kinds.items()}
    allowed = {type(expected), kinds.get(type(expected)), python.get(type(expected))}
    if isinstance(expected, (float, np.floating)):
        return type(got) in allowed and np.float64(got).tobytes() == np.float64(expected).tobytes()
    return type(got) in allowed and got == expected


COMPILED = {f.__name__: trace(f, fuse_fma=False) for f in (dot, running_max, relu_layer_sum, trace_of, ends,
                                                          int_sum, count_above, total_by_iteration, rows_dot,
                                                          first_negative)}


@given(st.integers(0, 40).flatmap(lambda n: hnp.arrays(np.float64, n, elements=FLOATS)))
@settings(max_examples=60, deadline=None)
def test_iterating_over_an_array(x):
    for xv in views(x):
        assert same(COMPILED["total_by_iteration"](xv), total_by_iteration(xv))
        assert same(COMPILED["first_negative"](xv), first_negative(xv))
    if len(x) >= 2:
        W = x[: len(x) // 2 * 2].reshape(2, -1)
        ones = np.ones(W.shape[1])
        for Wv in views(W):
            assert same(COMPILED["rows_dot"](Wv, ones), rows_dot(Wv, ones))


@given(st.integers(1, 40).flatmap(lambda n: st.tuples(hnp.arrays(np.float64, n, elements=FLOATS),
                                                      hnp.arrays(np.float64, n, elements=FLOATS))))
@settings(max_examples=60, deadline=None)
def test_dot(xw):
    x, w = xw
    for xv in views(x):
        assert same(COMPILED["dot"](xv, w), dot(xv, w))


@given(vectors())
@settings(max_examples=60, deadline=None)
def test_running_max_and_ends(x):
    for xv in views(x):
        assert same(COMPILED["running_max"](xv), running_max(xv))
        assert same(COMPILED["ends"](xv), ends(xv))


@given(st.integers(1, 8), st.integers(1, 12), st.data())
@settings(max_examples=40, deadline=None)
def test_relu_layer_and_trace(rows, cols, data):
    W = data.draw(hnp.arrays(np.float64, (rows, cols), elements=FLOATS))
    b = data.draw(hnp.arrays(np.float64, rows, elements=FLOATS))
    x = data.draw(hnp.arrays(np.float64, cols, elements=FLOATS))
    for Wv in views(W):
        assert same(COMPILED["relu_layer_sum"](Wv, b, x), relu_layer_sum(Wv, b, x))
        assert same(COMPILED["trace_of"](Wv), trace_of(Wv))
        assert same(COMPILED["trace_of"](Wv.T), trace_of(Wv.T))


@given(vectors(dtype=np.int64, elements=st.integers(-2 ** 40, 2 ** 40)), st.floats(-1e12, 1e12))
@settings(max_examples=40, deadline=None)
def test_int64_arrays(x, level):
    assert same(COMPILED["int_sum"](x), int_sum(x))
    assert same(COMPILED["count_above"](x.astype(np.float64), level), count_above(x.astype(np.float64), level))


def test_one_specialization_for_every_size_and_layout():
    compiled = trace(dot)
    for n in (0, 2, 5, 1000):
        x = np.linspace(0.0, 1.0, n)
        compiled(x, x)
        compiled(x[::-1], x)
    assert len(compiled.specializations) == 1
    compiled(np.arange(5), np.arange(5))            # int64: another specialization
    assert len(compiled.specializations) == 2
    compiled(np.ones(1), np.ones(1))                 # a size of 1 is part of the type (broadcasting)
    assert len(compiled.specializations) == 3
    assert same(compiled(np.ones(1), np.ones(1)), 1.0)


def test_loops_over_arrays_stay_loops():
    compiled = trace(relu_layer_sum)
    compiled(np.ones((50, 784)), np.ones(50), np.ones(784))
    fn = compiled.specializations[0].optimized
    assert sum(1 for v in fn.walk() if v.op == "loop") == 2
    assert sum(1 for _ in fn.walk()) < 60


def test_out_of_bounds_raises_numpys_index_error():
    @trace
    def at(x, i):
        return x[i]
    assert at(np.arange(3.0), -3) == 0.0
    for i in (3, -4):
        with pytest.raises(IndexError) as got:
            at(np.arange(3.0), i)
        with pytest.raises(IndexError) as expected:
            np.arange(3.0)[i]
        assert str(got.value) == str(expected.value)


def test_a_partial_index_is_checked_too():
    """W[j] with j out of bounds raises NumPy's IndexError even when no element is read."""
    @trace
    def row_length(W, j):
        return len(W[j])
    W = np.ones((3, 2))
    assert row_length(W, -3) == 2
    for j in (3, -4, 10):
        with pytest.raises(IndexError) as got:
            row_length(W, j)
        with pytest.raises(IndexError) as expected:
            W[j]
        assert str(got.value) == str(expected.value)


def test_too_many_indices_and_float_indices():
    @trace
    def too_many(x):
        return x[0, 0]
    with pytest.raises(IndexError, match="too many indices for array: array is 1-dimensional, but 2 were indexed"):
        too_many(np.zeros(3))

    @trace
    def float_index(x):
        return x[1.0]
    with pytest.raises(IndexError, match="only integers"):
        float_index(np.zeros(3))


def test_numpy_semantics_where_python_would_raise():
    """1.0 / 0.0 raises in Python; np.float64(1.0) / 0.0 is inf with a RuntimeWarning. Any call
    where a compiled op fails runs the Python function: NumPy's answer and its warning."""
    @trace
    def ratio(x):
        return x[0] / x[1]
    assert ratio(np.array([1.0, 4.0])) == 0.25
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert ratio(np.array([1.0, 0.0])) == np.inf
    assert any("divide by zero" in str(w.message) for w in caught)


def test_unsupported_array_uses_are_clear_errors():
    @trace(fullgraph=True)
    def masked(x):
        return x[np.arange(2), 1]                   # (an index array with an int: not yet)
    with pytest.raises(TracerError, match="indexing with a bool or an array of a NumPy array is not supported"):
        masked(np.ones((3, 3)))

    @trace(fullgraph=True)
    def compared(x):
        return 1.0 if x == x else 0.0
    with pytest.raises(TracerError, match="the truth value of an array"):
        compared(np.ones(3))

    @trace(fullgraph=True)
    def first(x):
        return int(x[0])
    with pytest.raises(TracerError, match="float32 scalar"):
        first(np.ones(3, dtype=np.float32))


def test_arrays_in_objects_are_read_on_every_call():
    class Model:
        def __init__(self):
            self.w = np.arange(4.0)

    @trace
    def predict(m, x):
        return dot(m.w, x)
    m, x = Model(), np.ones(4)
    assert predict(m, x) == 6.0
    m.w[0] = 10.0
    assert predict(m, x) == 16.0


def loss(a, x):
    s = 0.0
    for i in range(len(x)):
        s += (a * x[i] - 1.0) ** 2
    return s


def loss_by_iteration(a, x):
    s = 0.0
    for v in x:
        s += (a * v - 1.0) ** 2
    return s


@pytest.mark.parametrize("f", [loss, loss_by_iteration])
def test_gradient_through_a_loop_over_an_array(f):
    g = grad(f)
    x = np.linspace(-1.0, 2.0, 200)
    for a in (0.5, -1.5):
        assert close(g(a, x), central_difference(f, (a, x), 0), 1e-6, 1e-8)


def test_numpy_array_layout_the_entry_reads():
    """codegen.entry reads PyArrayObject_fields at fixed offsets: check them on a real array."""
    from codegen.entry import ARRAY_DATA, ARRAY_DESCR, ARRAY_DIMENSIONS, ARRAY_ND, ARRAY_STRIDES
    offsets = {ARRAY_DATA: 16, ARRAY_ND: 24, ARRAY_DIMENSIONS: 32, ARRAY_STRIDES: 40, ARRAY_DESCR: 56}
    a = np.zeros((3, 5))[::2, ::-1]
    base = id(a)
    word = lambda field: ctypes.c_int64.from_address(base + offsets[field]).value
    assert word(ARRAY_DATA) == a.ctypes.data
    assert ctypes.c_int32.from_address(base + offsets[ARRAY_ND]).value == 2
    assert [ctypes.c_int64.from_address(word(ARRAY_DIMENSIONS) + 8 * k).value for k in range(2)] == list(a.shape)
    assert [ctypes.c_int64.from_address(word(ARRAY_STRIDES) + 8 * k).value for k in range(2)] == list(a.strides)
    assert word(ARRAY_DESCR) == id(a.dtype) == id(np.dtype("float64"))


def test_a_bug_in_the_tracer_is_an_error_not_a_compiled_raise(monkeypatch):
    """An internal KeyError must not become a `raise` in the compiled code (where a NumPy
    function would hide it by running Python on every call)."""
    from tracer.frontend import arrays, numpy_api

    def broken(tracer, *args, **kwargs):
        return arrays.kind(object())           # a KeyError inside the tracer
    monkeypatch.setitem(numpy_api._IMPLEMENTATIONS, "sum", broken)
    monkeypatch.setattr(numpy_api, "_TABLE", None)        # rebuilt from the table above

    def total(x):
        return np.sum(x)
    with pytest.raises(TracerError, match="internal error in the tracer .KeyError"):
        trace(total)(np.ones(3))


def test_results_are_handed_over_without_a_copy():
    """A result the kernel made is the ndarray's memory (freed with it, through a capsule); a
    view of an argument, or the same result twice, is copied. Either way the arrays are the
    caller's: writable, and independent of the arguments."""
    def results(x):
        y = x * 2.0
        return y, y, x.T, x[::2]

    f = trace(results)
    x = np.arange(6.0).reshape(2, 3)
    for _ in range(3):
        got = f(x)
        for g, e in zip(got, results(x)):
            np.testing.assert_array_equal(g, e)
            assert g.flags.writeable and g.flags.c_contiguous and not np.shares_memory(g, x)
        assert type(got[0].base).__name__ == "PyCapsule"
        got[0][0, 0] = -1.0
        assert got[1][0, 0] == 0.0 and x[0, 0] == 0.0
        del got


def test_results_outlive_the_code_that_made_them():
    """A result's memory is freed by a capsule destructor that must stay loaded after the
    compiled function is gone (it lives in codegen.jit's runtime library). Run in a subprocess:
    a regression is a segfault."""
    import os
    import subprocess
    import sys
    script = (
        "import gc, numpy as np\n"
        "from tracer import trace\n"
        "keep = []\n"
        "for i in range(50):\n"
        "    def f(x, i=i):\n"
        "        return x * 2.0 + i\n"
        "    keep.append(trace(f)(np.ones(100)))\n"      # the dispatcher dies right away
        "gc.collect()\n"
        "filler = [np.ones(10000) for _ in range(50)]\n"
        "assert sum(float(k[0]) for k in keep) == sum(2.0 + i for i in range(50))\n"
        "del keep\n"
        "gc.collect()\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": root})
    assert done.returncode == 0, done.stderr[-2000:]


def test_numpy_functions_keep_the_native_entry():
    """np.sum, np.exp, np.maximum are read from the numpy module (treated as immutable, like math);
    only the global `np` is guarded, so the C dispatcher checks it and no Python runs per call.
    Rebinding the global still recompiles."""
    namespace = {"np": np}
    exec("def f(a):\n    return np.sum(np.exp(np.maximum(a, 0.0)))", namespace)
    f = trace(namespace["f"])
    a = np.array([-1.0, 0.5, 2.0])
    assert f(a) == np.sum(np.exp(np.maximum(a, 0.0)))
    (spec,) = f.specializations
    assert spec.fast, spec
    assert [str(g) for g in spec.trace.guards()] == ["globals()['np'] is <module>"]

    class FakeNumpy:
        maximum, exp = staticmethod(np.maximum), staticmethod(np.exp)
        sum = staticmethod(lambda x: -1.0)
    namespace["np"] = FakeNumpy
    assert f(a) == -1.0                          # what Python gives: not the stale compiled code
    assert len(f.specializations) == 2
