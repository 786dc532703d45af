"""Integer-array indexing in traced code (tracer.frontend.numpy_take) against NumPy: x[idx],
x[:, idx], x[idx] = v, x[idx] += v, np.take and np.add.at, over float64, float32, int64 and bool
arrays, index arrays of ranks 1 and 2 with negative and repeated indices, and NumPy's IndexError
for an index out of bounds. `check` (from test_numpy_more) compares type, dtype, shape and bits,
and runs the optimized IR too; gradients are checked against finite differences.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_numpy_more import check, same

from tracer import grad, trace

DTYPES = [np.float64, np.float32, np.int64, np.bool_]
RNG = np.random.default_rng(5)


def data(dtype, shape):
    x = RNG.normal(size=shape) * 10
    return (x > 0) if dtype == np.bool_ else x.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_select_rows_and_columns(dtype):
    x, a = data(dtype, (6,)), data(dtype, (4, 5))
    idx = np.array([0, 5, -1, 2, 2])
    check(lambda x, idx: x[idx], x, idx)
    check(lambda a, idx: (a[idx], a[idx, :], a[:, idx[:3] % 5]), a, idx[:3] % 4)
    check(lambda a, idx: a[idx], a, np.array([[0, 1], [3, -2]]))
    check(lambda x: (x[[0, -1, 3]], x[[2]]), x)


def test_select_along_a_middle_axis_and_computed_indices():
    t = data(np.float64, (2, 3, 4))
    check(lambda t, idx: t[:, idx], t, np.array([2, 0, 1, 0]))
    check(lambda x: x[np.argsort(x)], data(np.float64, (7,)))
    check(lambda x, n: x[np.arange(n) * 2], data(np.float64, (9,)), 4)


def test_assign_and_add_at():
    x = data(np.float64, (6,))
    idx = np.array([1, -1, 1, 3])

    def write(x, idx, v):
        x[idx] = v
        return x.sum()

    check(write, x, idx, np.array([1.0, 2.0, 3.0, 4.0]))
    check(write, x, idx, 7.5)
    check(write, data(np.int64, (4, 3)), np.array([2, 0]), np.array([1, 2, 3]))

    def plus(x, idx):
        x[idx] += 1.0          # a repeated index adds once
        return x.sum()

    def add_at(x, idx):
        np.add.at(x, idx, 1.0)  # ... and at every occurrence here
        return x.sum()

    check(plus, x, idx)
    check(add_at, x, idx)
    def add_rows(x, idx, v):
        np.add.at(x, idx, v)
        return x[0, 0]

    check(add_rows, data(np.float32, (3, 2)), np.array([0, 0, 2]), np.ones((3, 2), np.float32))


def test_take():
    a = data(np.float64, (3, 4))
    check(lambda a, idx: (np.take(a, idx), np.take(a, idx, axis=1), np.take(a, idx % 3, axis=0)), a,
          np.array([0, 3, -1]))


def test_out_of_bounds_is_numpys_index_error():
    f = trace(lambda x, idx: x[idx], fullgraph=True)
    x = np.arange(5.0)
    for bad in ([5], [0, -6], [2, 99]):
        with pytest.raises(IndexError, match="out of bounds for axis 0 with size 5"):
            f(x, np.array(bad))
    same(f(x, np.array([4, -5])), x[[4, -5]])

    def write(x, idx):
        x[idx] = 0.0
    g = trace(write, fullgraph=True)
    y = x.copy()
    with pytest.raises(IndexError, match="out of bounds"):
        g(y, np.array([1, 9]))
    assert np.array_equal(y, x)         # nothing written


def test_gradients_match_finite_differences():
    x = np.linspace(-1.0, 2.0, 5)
    idx = np.array([0, 2, 2, -1])

    def loss(x, idx):
        return np.sum(np.sin(x[idx]) * x[idx[:2]].sum())

    def scattered(x, idx):
        y = np.zeros(5)
        np.add.at(y, idx, x[:4] ** 2)
        return np.sum(y * np.arange(5))

    for fn in (loss, scattered):
        g = grad(fn)(x, idx)
        h = 1e-6
        fd = np.array([(fn(x + h * e, idx) - fn(x - h * e, idx)) / (2 * h) for e in np.eye(5)])
        np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_several_index_arrays_pick_elements(dtype):
    """x[rows, cols] (NumPy's advanced indexing with several int arrays, broadcast together): one
    element per pair, negative indices from the end, whole axes after them kept."""
    a, t = data(dtype, (4, 5)), data(dtype, (3, 4, 2))
    rows, cols = np.array([0, 3, -1, 2]), np.array([4, 0, -5, 1])
    check(lambda a, rows, cols: a[rows, cols], a, rows, cols)
    check(lambda a, rows: a[rows[:, None], np.array([[1, 0, 2]])], a, rows)     # broadcast: 4x3
    check(lambda t, rows, cols: (t[rows[:3] % 3, cols[:3] % 4], t[rows[:3] % 3, cols[:3] % 4, :]), t, rows, cols)
    check(lambda t: t[[0, 2], [1, 3], [1, 0]], t)


def test_several_index_arrays_write_and_fail_as_numpy():
    def write(a, rows, cols):
        a[rows, cols] = -1.0
        a[[0, 0], [1, 1]] += 5.0
        a[[1, 2], [0, 3]] = np.array([7.0, 8.0])
        return a
    check(write, data(np.float64, (4, 5)), np.array([0, 3, -1]), np.array([4, 0, 2]))
    f = trace(lambda a, rows, cols: a[rows, cols])
    a = data(np.float64, (4, 5))
    for rows, cols in [(np.array([0, 4]), np.array([0, 0])), (np.array([0, 1]), np.array([0, -6]))]:
        with pytest.raises(IndexError, match="out of bounds for axis"):
            f(a, rows, cols)
    with pytest.raises(IndexError, match="shape mismatch: indexing arrays could not be broadcast"):
        trace(lambda a: a[[0, 1], [0, 1, 2]])(a)


def test_gradient_through_several_index_arrays():
    a = data(np.float64, (3, 4))
    g = grad(lambda a: (a[[0, 2, 2], [1, 3, 3]] ** 2).sum())(a)
    want = np.zeros_like(a)
    want[0, 1] = 2 * a[0, 1]
    want[2, 3] = 4 * a[2, 3]
    assert np.allclose(g, want)


def test_assign_through_an_index_array_on_a_later_axis():
    def write(x, j):
        x[:, j] = -1.0
        x[:, j[:1]] += 1.0
        x[:, j] = np.arange(6.0).reshape(3, 2)
        x[:, j] = np.array([10.0, 20.0])
        return x
    check(write, data(np.float64, (3, 4)), np.array([3, 0]))

    def write3(t, j):
        t[:, j] = 5
        t[:, :, j] = 7
        return t
    check(write3, data(np.int64, (2, 4, 3)), np.array([2, 0]))
