"""Item stores into argument arrays written in place (tracer.transforms.passes.inplace): `x[0] = v`
and `out[i] = ...` in a loop write the caller's array without a copy, with CPython's results, and
a failure half way leaves the array as CPython leaves it."""
import warnings

import numpy as np
import pytest

from tracer import prange, trace
from tracer.transforms.passes import count_in_place


def set_first(x, v):
    x[0] = v


def fill(out, a):
    for i in range(out.shape[0]):
        out[i] = a[i] * 2.0


def stencil(out, a):
    for i in range(1, a.shape[0] - 1):
        out[i] = (a[i - 1] + a[i] + a[i + 1]) / 3.0


def accumulate(out, a):
    for i in range(out.shape[0]):
        out[i] += a[i] * 2.0


def rows(out, a):
    for i in range(out.shape[0]):
        out[i] = a[i] * 2.0


def two_stores(x, v):
    x[0] = v
    x[5] = v


def read_then_store(x, v):
    t = x[1]
    x[0] = t * v


def filled_and_returned(out, a):
    for i in range(out.shape[0]):
        out[i] = a[i] + 1.0
    return out


def _in_place(compiled, expected=1):
    fn = compiled.specializations[0].optimized
    assert not any(v.op in ("writeback", "copy") for v in fn.walk())
    assert count_in_place(fn) == expected


def _both(f, make, *rest):
    """f run by CPython and compiled on equal fresh arguments: (theirs, mine, compiled)."""
    theirs, mine = make(), make()
    f(theirs, *rest)
    compiled = trace(f)
    data = mine.ctypes.data
    compiled(mine, *rest)
    assert mine.ctypes.data == data
    return theirs, mine, compiled


@pytest.mark.parametrize("f", [fill, stencil])
def test_loops_write_the_argument_with_pythons_results(f):
    a = np.sin(np.arange(1000.0))
    theirs, mine, compiled = _both(f, lambda: np.full(1000, -7.0), a)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)
    for n in (0, 1, 2, 3):                    # short arrays: the same specialization
        theirs, mine = np.full(n, -7.0), np.full(n, -7.0)
        f(theirs, a[:n])
        compiled(mine, a[:n])
        assert np.array_equal(mine, theirs)


def test_one_store_writes_one_element():
    theirs, mine, compiled = _both(set_first, lambda: np.arange(6.0), 2.5)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)
    empty = np.zeros(0)
    with pytest.raises(IndexError, match="index 0 is out of bounds for axis 0 with size 0"):
        compiled(empty, 1.0)


def test_rows_of_a_matrix():
    a = np.arange(12.0).reshape(4, 3)
    theirs, mine, compiled = _both(rows, lambda: np.zeros((4, 3)), a)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)
    for bad in (a[:2], a[:, :2]):             # rows 0 and 1 written, then an IndexError; or a ValueError first
        theirs, mine = np.zeros((4, 3)), np.zeros((4, 3))
        with pytest.raises((IndexError, ValueError)) as python_error:
            rows(theirs, bad)
        with pytest.raises(python_error.type) as my_error:
            compiled(mine, bad)
        assert str(my_error.value) == str(python_error.value)
        assert np.array_equal(mine, theirs)


@pytest.mark.parametrize("f, n_out, n_a", [(fill, 8, 5), (stencil, 5, 8), (accumulate, 8, 5)])
def test_an_index_error_half_way_leaves_what_python_wrote(f, n_out, n_a):
    """The loop runs past one array's end: CPython writes the elements before the bad index,
    then raises."""
    compiled = trace(f)
    compiled(np.zeros(8), np.ones(8))
    a = np.arange(1.0, n_a + 1.0)
    theirs, mine = np.full(n_out, -1.0), np.full(n_out, -1.0)
    with pytest.raises(IndexError) as python_error:
        f(theirs, a)
    with pytest.raises(IndexError) as my_error:
        compiled(mine, a)
    assert str(my_error.value) == str(python_error.value)
    assert np.array_equal(mine, theirs)
    assert not np.array_equal(theirs, np.full(n_out, -1.0))   # (some elements were written)


@pytest.mark.parametrize("f", [fill, accumulate])
def test_a_numpy_warning_half_way_updates_each_element_once(f):
    """a[4] * 2.0 overflows: NumPy warns and stores inf (or raises, where warnings are errors,
    after writing elements 0..3). The Python function runs instead of the compiled one; each
    element ends as one run of CPython leaves it (`accumulate` adds once, not twice)."""
    compiled = trace(f)
    compiled(np.zeros(8), np.ones(8))
    a = np.arange(1.0, 9.0)
    a[4] = 1e308
    theirs, mine = np.arange(8.0), np.arange(8.0)
    with pytest.warns(RuntimeWarning, match="overflow encountered in scalar multiply"):
        f(theirs, a)
    with pytest.warns(RuntimeWarning, match="overflow encountered in scalar multiply"):
        compiled(mine, a)
    assert np.array_equal(mine, theirs)
    theirs, mine = np.arange(8.0), np.arange(8.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(RuntimeWarning):
            f(theirs, a)
        with pytest.raises(RuntimeWarning):
            compiled(mine, a)
    assert np.array_equal(mine, theirs)
    assert not np.array_equal(theirs, np.arange(8.0))


@pytest.mark.parametrize("f", [fill, stencil, accumulate])
def test_out_and_a_one_array_or_views_of_it(f):
    """stencil(x, x) reads elements it wrote before: the compiled call gives CPython's result."""
    compiled = trace(f)
    compiled(np.zeros(10), np.ones(10))
    for split in [lambda x: (x, x), lambda x: (x[1:], x[:-1]), lambda x: (x[:-1], x[1:]),
                  lambda x: (x[::2], x[1::2])]:
        theirs, mine = np.sin(np.arange(12.0)), np.sin(np.arange(12.0))
        f(*split(theirs))
        compiled(*split(mine))
        assert np.array_equal(mine, theirs)


def test_a_strided_view_is_written_through():
    a = np.cos(np.arange(6.0))
    theirs, mine = np.zeros(12), np.zeros(12)
    fill(theirs[::2], a)
    compiled = trace(fill)
    compiled(mine[::2], a)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)


def test_a_read_only_argument_is_numpys_error():
    out = np.zeros(4)
    out.flags.writeable = False
    compiled = trace(fill)
    compiled(np.zeros(4), np.ones(4))
    with pytest.raises(ValueError, match="read-only"):
        compiled(out, np.ones(4))
    assert np.array_equal(out, np.zeros(4))


def test_a_second_store_out_of_range_leaves_the_first_written():
    theirs, mine = np.zeros(3), np.zeros(3)
    with pytest.raises(IndexError) as python_error:
        two_stores(theirs, 4.0)
    compiled = trace(two_stores)
    compiled(np.zeros(6), 1.0)
    with pytest.raises(IndexError) as my_error:
        compiled(mine, 4.0)
    assert str(my_error.value) == str(python_error.value)
    assert np.array_equal(mine, theirs) and mine[0] == 4.0


def test_a_store_after_a_read_of_the_argument():
    """x is read before the one store, which fails before it writes: nothing after it can fail."""
    theirs, mine, compiled = _both(read_then_store, lambda: np.arange(1.0, 5.0), 3.0)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)
    with pytest.raises(IndexError):
        compiled(np.zeros(1), 2.0)


def test_a_returned_argument_is_written():
    a = np.arange(5.0)
    out = np.zeros(5)
    result = trace(filled_and_returned)(out, a)
    assert np.array_equal(out, a + 1.0) and np.array_equal(result, a + 1.0)


def prange_fill(out, a):
    for i in prange(out.shape[0]):
        out[i] = a[i] * 2.0


def test_a_prange_loop_failing_half_way_leaves_what_python_wrote():
    """Its chunks may run past the iteration that fails: its stores keep to a copy."""
    compiled = trace(prange_fill, parallel=True)
    compiled(np.zeros(10), np.ones(10))
    theirs, mine = np.full(20000, -1.0), np.full(20000, -1.0)
    a = np.arange(15000.0)
    with pytest.raises(IndexError):
        prange_fill(theirs, a)
    with pytest.raises(IndexError):
        compiled(mine, a)
    assert np.array_equal(mine, theirs)
    assert count_in_place(compiled.specializations[0].optimized) == 0


def grid(out, a):
    for i in range(out.shape[0]):
        for j in range(out.shape[1]):
            out[i, j] = a[i, j] * 2.0 + a[j, i]


@pytest.mark.parametrize("dtype", [np.float64, np.int32])
def test_a_grid_of_elements_and_a_failure_half_way(dtype):
    """Stores into an int32 array cast as NumPy casts; a is too small for out half way (an
    IndexError after the rows before were written)."""
    a = np.arange(25.0).reshape(5, 5) / 3.0
    theirs, mine, compiled = _both(grid, lambda: np.zeros((5, 5), dtype), a)
    assert np.array_equal(mine, theirs)
    _in_place(compiled)
    theirs, mine = np.zeros((5, 5), dtype), np.zeros((5, 5), dtype)
    with pytest.raises(IndexError) as python_error:
        grid(theirs, a[:3, :])
    with pytest.raises(IndexError) as my_error:
        compiled(mine, a[:3, :])
    assert str(my_error.value) == str(python_error.value)
    assert np.array_equal(mine, theirs)


def test_a_cast_numpy_refuses_half_way():
    """a[3] is NaN or too large: storing it into an int32 array is NumPy's ValueError or
    OverflowError, after elements 0..2 were written (with or without warnings as errors)."""
    compiled = trace(fill)
    compiled(np.zeros(6, np.int32), np.ones(6))
    for bad in (np.nan, 1e300, 1.5e9):
        _cast_half_way(compiled, bad)


def _cast_half_way(compiled, bad):
    a = np.arange(6.0)
    a[3] = bad
    for action in ("default", "error"):
        theirs, mine = np.full(6, 7, np.int32), np.full(6, 7, np.int32)
        outcomes = []
        for f, out in ((fill, theirs), (compiled, mine)):
            with warnings.catch_warnings(record=True) as seen:
                warnings.simplefilter(action)
                try:
                    f(out, a)
                    outcomes.append([str(w.message) for w in seen])
                except (RuntimeWarning, ValueError, OverflowError) as e:
                    outcomes.append((type(e), str(e)))
        assert outcomes[0] == outcomes[1] and outcomes[0]
        assert np.array_equal(mine, theirs)
