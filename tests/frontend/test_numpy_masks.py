"""Boolean masks in traced code (tracer.frontend.numpy_masks; the IR's mask_select and
mask_update) against NumPy itself: x[mask], x[mask] = v, x[mask] += v, np.nonzero, x.nonzero(),
np.flatnonzero, np.argwhere, np.extract and np.compress, on float64, float32 and int64 arrays of
ranks 1 to 3 and sizes 0, 1, 7 and 100, with masks all false, all true and random, of the whole
shape or of leading axes; arguments written in place, read-only arguments, NumPy's errors, and
the gradient of x[mask] and of x[mask] = v against central differences.

Masks are computed in the trace (`m > 0.5` of a float array argument, or `x > 0`): the result
type, dtype, shape and values are compared bit for bit (signed zeros too) by test_numpy_more's
`same`; `check` also runs the IR interpreter on the optimized function (the compiled call did not
fail over to Python).
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_numpy_more import check, same

from tracer import grad, trace

RNG = np.random.default_rng(21)
SIZES = [0, 1, 7, 100]
DTYPES = [np.float64, np.float32, np.int64]
SHAPES = [(7,), (3, 4), (2, 3, 4)]


def data(dtype, shape):
    if dtype == np.int64:
        return RNG.integers(-5, 5, size=shape).astype(np.int64)
    x = RNG.normal(size=shape).astype(dtype)
    x.flat[::3] = -0.0 if x.size else x.flat[::3]
    return x


def masks(shape):
    """Mask sources (a float array m; the mask is m > 0.5): all false, all true, random."""
    return [np.zeros(shape), np.ones(shape), RNG.random(shape)]


def run_both(fn, *args):
    """fn compiled (fullgraph) and in Python on copies of args: the results and the arguments
    after the call agree."""
    compiled = trace(fn, fullgraph=True)
    copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = fn(*copies)
        got = compiled(*args)
    if expected is not None:
        same(got, expected)
    for a, e in zip(args, copies):
        if isinstance(a, np.ndarray):
            same(a, e)
    return compiled


def each_size(fn, make):
    """One compiled fn against NumPy at each of SIZES (make(n) gives the arguments)."""
    compiled = trace(fn, fullgraph=True)
    for n in SIZES:
        args = make(n)
        copies = [a.copy() for a in args]
        same(compiled(*args), fn(*copies))
        for a, e in zip(args, copies):
            same(a, e)


# ------------------------------------------------------------------------------- x[mask]
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_select_by_a_mask_of_the_whole_shape(dtype, shape):
    def select(x, m):
        return x[m > 0.5]
    for m in masks(shape):
        check(select, data(dtype, shape), m)


@pytest.mark.parametrize("shape", SHAPES[1:], ids=str)
def test_select_by_a_mask_of_leading_axes(shape):
    def select(x, m):
        return x[m > 0.5]
    for k in range(1, len(shape)):
        for m in masks(shape[:k]):
            check(select, data(np.float64, shape), m)


def test_select_at_each_size_and_by_comparisons():
    each_size(lambda x: x[x > 0.0], lambda n: [data(np.float64, (n,))])
    each_size(lambda x: x[x != 2], lambda n: [data(np.int64, (n,))])
    each_size(lambda x, m: x[m > 0.5] * 2.0, lambda n: [data(np.float64, (n, 3)), RNG.random(n)])
    check(lambda x: x[(x > 0.0) & (x < 1.0)].sum(), data(np.float64, (100,)))
    check(lambda x: x[~(x > 0.0)], data(np.float32, (3, 5)))
    check(lambda x: x.T[x.T > 0.0], data(np.float64, (4, 3)))           # a view, strided
    check(lambda x: x[1:][x[1:] > 0.0], data(np.float64, (7,)))


# ------------------------------------------------------------------------------- x[mask] = v
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_assign_a_scalar_into_an_argument(dtype, shape):
    def assign(x, m):
        x[m > 0.5] = 3
        return 0.0
    def update(x, m):
        x[m > 0.5] += 2
        return 0.0
    def from_comparison(x):
        x[x > 0] = 0
        return x.sum()
    for m in masks(shape):
        check(assign, data(dtype, shape), m)
        check(update, data(dtype, shape), m)
    check(from_comparison, data(dtype, shape))


@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_assign_the_selected_count_of_values(shape):
    def negate(x, m):
        x[m > 0.5] = -x[m > 0.5]
        return 0.0
    def from_other(x, y, m):
        x[m > 0.5] = y[m > 0.5] * 2.0
        return x
    def copy_then_assign(x):
        y = x.copy()
        y[y < 0.0] = np.arange(np.count_nonzero(x < 0.0)) * 1.0
        return y
    for m in masks(shape):
        check(negate, data(np.float64, shape), m)
        check(from_other, data(np.float64, shape), data(np.float64, shape), m)
    check(copy_then_assign, data(np.float64, shape))


def test_assign_rows_by_a_mask_of_leading_axes():
    def rows(x, m, r):
        x[m > 0.5] = r                   # r: one row, broadcast to every selected row
        return 0.0
    def each(x, m):
        x[m > 0.5] = x[m > 0.5] * 10.0
        return 0.0
    for m in masks((5,)):
        check(rows, data(np.float64, (5, 3)), m, data(np.float64, (3,)))
        check(each, data(np.float64, (5, 3)), m)
    check(rows, data(np.float64, (2, 3, 4)), RNG.random((2, 3)), data(np.float64, (4,)))
    def one(x, m):
        x[m > 0.5] = np.array([7.0])     # a first size of 1: repeated
        return x
    check(one, data(np.float64, (6,)), RNG.random(6))


def test_assign_at_each_size_in_a_loop_and_into_views():
    def clip_negative(x):
        x[x < 0.0] = 0.0
        return 0.0
    each_size(clip_negative, lambda n: [data(np.float64, (n,))])

    def in_loop(x, n):
        for i in range(n):
            x[x > float(i)] -= 1.0
        return x.sum()
    check(in_loop, data(np.float64, (20,)) * 4.0, 3)

    def into_view(x):
        v = x[1:]
        v[v > 0.0] = 5.0
        return 0.0
    check(into_view, data(np.float64, (7,)))

    def in_branch(x, flag):
        if flag > 0.0:
            x[x > 0.0] = 1.0
        return x
    check(in_branch, data(np.float64, (7,)), 1.0)


def test_read_only_arguments_are_refused_as_numpy_refuses_them():
    def assign(x):
        x[x > 0.0] = 1.0
    x = np.ones(4)
    x.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        assign(x)
    with pytest.raises(ValueError, match="read-only"):
        trace(assign)(x)


def test_errors_are_numpys():
    def select(x, m):
        return x[m > 0.5]
    def assign(x, m, y):
        x[m > 0.5] = y
        return 0.0
    compiled = trace(select, fullgraph=True)
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis "
                                         "is 3 but size of corresponding boolean axis is 2"):
        compiled(np.ones(3), np.ones(2))
    with pytest.raises(IndexError, match="too many indices for array"):
        trace(select, fullgraph=True)(np.ones(3), np.ones((3, 2)))
    compiled = trace(assign, fullgraph=True)
    with pytest.raises(ValueError, match="NumPy boolean array indexing assignment cannot assign 3 input values "
                                         "to the 2 output values where the mask is true"):
        compiled(np.ones(3), np.array([1.0, 0.0, 1.0]), np.arange(3.0))
    x = np.ones(3)
    compiled(x, np.array([1.0, 0.0, 1.0]), np.array([4.0, 5.0]))      # then a good call
    same(x, np.array([4.0, 1.0, 5.0]))


# ------------------------------------------------------------------------------- functions
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_nonzero_argwhere_and_flatnonzero(dtype, shape):
    def indices(x):
        return np.nonzero(x), x.nonzero(), np.flatnonzero(x), np.argwhere(x)
    def of_mask(m):
        return np.nonzero(m > 0.5), np.argwhere(m > 0.5), np.flatnonzero(m > 0.5)
    x = data(dtype, shape)
    x.flat[::2] = 0
    check(indices, x)
    for m in masks(shape):
        check(of_mask, m)


def test_nonzero_at_each_size_and_of_nans():
    each_size(lambda x: np.nonzero(x)[0], lambda n: [data(np.int64, (n,))])
    each_size(lambda x: np.argwhere(x), lambda n: [data(np.float64, (n, 2))])
    check(lambda x: np.flatnonzero(x), np.array([0.0, np.nan, -0.0, 1.0, np.inf]))
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        trace(lambda x: np.nonzero(x.sum()), fullgraph=True)(np.ones(3))


def test_extract_and_compress():
    x = data(np.float64, (3, 4))
    check(lambda c, x: np.extract(c > 0.5, x), RNG.random((3, 4)), x)
    check(lambda x: np.extract(np.mod(x, 2.0) > 0.5, x), x)
    check(lambda c, x: np.compress(c > 0.5, x), RNG.random(12), x)
    check(lambda c, x: np.compress(c > 0.5, x, axis=0), RNG.random(3), x)
    check(lambda c, x: np.compress(c > 0.5, x, axis=1), RNG.random(4), x)
    check(lambda c, x: np.compress(c > 0.5, x, axis=-1), RNG.random(4), data(np.int64, (2, 3, 4)))
    check(lambda x: np.compress([True, False, True], x, axis=0), x)
    for n in (0, 1, 7, 100):
        check(lambda c, x: np.extract(c, x), data(np.int64, (n,)), data(np.float32, (n,)))
    with pytest.raises(ValueError, match="condition must be a 1-d array"):
        trace(lambda c, x: np.compress(c > 0.5, x), fullgraph=True)(np.ones((2, 2)), np.ones(4))
    # a condition of another length than the array's: NumPy's own result (the Python function)
    compress = trace(lambda c, x: np.compress(c > 0.5, x, axis=0), fullgraph=True)
    same(compress(np.array([1.0, 0.0]), x), np.compress(np.array([True, False]), x, axis=0))


# ------------------------------------------------------------------------------- gradients
def central_differences(fn, x, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        out[i] = (fn(up) - fn(down)) / (2 * h)
    return out


def test_gradients_of_selections_and_assignments():
    x = RNG.normal(size=(4, 5))
    x[np.abs(x) < 0.05] = 0.3          # away from the mask's edges (finite differences cross none)

    def selected(a):
        return np.sum(a[a > 0.0] ** 2) + np.sum(a[a[:, 0] > 0.0] * 3.0)
    np.testing.assert_allclose(grad(selected)(x), central_differences(selected, x), atol=1e-6)
    assert np.array_equal(grad(lambda a: np.sum(a[a > 0.0]))(x), (x > 0.0) * 1.0)

    def relu_squares(a):
        b = a * 2.0
        b[b < 0.0] = 0.0
        c = a * 1.0
        c[c > 0.5] = a[a > 0.5] ** 3
        return np.sum(b * b) + np.sum(c)
    np.testing.assert_allclose(grad(relu_squares)(x), central_differences(relu_squares, x), atol=1e-5)

    def scalar_value(a, s):
        b = a * 1.0
        b[a > 0.0] = s
        return np.sum(b * a)
    g = grad(scalar_value, argnums=1)(x, 2.0)
    assert g == pytest.approx(np.sum(x[x > 0.0]))


# ------------------------------------------------------------------------------- bool arguments
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_masks_passed_as_bool_arrays(shape):
    def select(x, m):
        return x[m], np.nonzero(m), np.argwhere(m), m
    def assign(x, m, y):
        x[m] = y[m]
        m[...] = False                    # a bool argument written in place
        return x
    for m in masks(shape):
        check(select, data(np.float64, shape), m > 0.5)
        check(assign, data(np.float64, shape), m > 0.5, data(np.float64, shape))
    compiled = trace(lambda x, m: x[m], fullgraph=True)
    for n in SIZES:
        x, m = data(np.int64, (n, 2)), RNG.random(n) > 0.5
        same(compiled(x, m), x[m])
    with pytest.raises(IndexError, match="boolean index did not match indexed array along axis 0; size of axis "
                                         "is 3 but size of corresponding boolean axis is 2"):
        compiled(np.ones(3), np.array([True, False]))
