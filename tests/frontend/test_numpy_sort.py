"""Sorting in traced code (tracer.frontend.numpy_sort) against NumPy itself: np.sort, np.argsort,
x.argsort(), np.median, np.percentile and np.quantile, on float64, float32 and int64 arrays of
ranks 1 to 3, sizes around the sort's runs and merges (0, 1, 2, 3, 7, 8, 9, 16, 17, 100, 1000),
with NaNs, infinities, signed zeros and duplicates, along each axis and flattened.

Every function is traced with fullgraph=True and checked by `check` from test_numpy_more:
NumPy's result type, dtype, shape and values bit for bit (signs of zeros included), and the IR
interpreter on the optimized function agrees (so a result that came from the Python function
after the compiled call failed is noticed). The compiled sort is stable: where equal elements
could come out in another order (argsort's ties, -0.0 beside 0.0), the NumPy side asks for
kind='stable'; NumPy's default kind is checked on data whose order has one answer.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_numpy_more import check, same

from tracer import trace

RNG = np.random.default_rng(21)
SIZES = [0, 1, 2, 3, 7, 8, 9, 16, 17, 100, 1000]
DTYPES = [np.float64, np.float32, np.int64]
SPECIAL = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e308, -1e308]


def data(dtype, shape, zeros=True):
    """Random values of `dtype` with duplicates, and for floats NaNs, infinities and (zeros)
    signed zeros."""
    size = int(np.prod(shape))
    if dtype == np.int64:
        return RNG.integers(-20, 20, size=shape).astype(np.int64)
    x = np.round(RNG.normal(size=size) * 4, 1).astype(dtype)       # rounded: duplicates
    special = [v if abs(v) < 1e300 else np.finfo(dtype).max * np.sign(v) for v in SPECIAL]
    if not zeros:                                               # no -0.0 beside 0.0
        special = [v for v in special if v != 0.0]
        x += dtype(0.0)
    picks = RNG.random(size) < 0.15
    x[picks] = RNG.choice(special, size=int(picks.sum()))
    return x.reshape(shape)


def distinct(dtype, shape):
    """Values without ties (and no NaN or zero): every kind of sort gives one order."""
    size = int(np.prod(shape))
    values = RNG.permutation(size).astype(dtype) + 0.5 if dtype != np.int64 else RNG.permutation(size) - size // 2
    return np.asarray(values, dtype=dtype).reshape(shape)


def ids(dtype):
    return np.dtype(dtype).name


# ------------------------------------------------------------------------------- sort
def check_sizes(fn, dtype, sizes, **kwargs):
    """`check` at one size, then the same compiled function (one specialization for every size
    but 1) against NumPy at each of `sizes`."""
    check(fn, data(dtype, (sizes[-1],), **kwargs))
    compiled = trace(fn, fullgraph=True)
    for n in sizes:
        x = data(dtype, (n,), **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("error")            # no fallback to NumPy's warnings
            same(compiled(x.copy()), fn(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_sort_and_argsort_of_vectors(dtype):
    check_sizes(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable"), a.argsort(kind="stable")),
                dtype, SIZES)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_default_kind_where_the_order_is_unique(dtype):
    x = distinct(dtype, (100,))
    check(lambda a: (np.sort(a), np.argsort(a), a.argsort(), np.sort(a, kind="quicksort")), x)
    y = data(dtype, (1000,), zeros=False)
    check(lambda a: np.sort(a), y)           # ties, but equal elements NumPy cannot tell apart


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("n", [5, 300, 20_000])
def test_every_kind_orders_ties_as_numpy_does(dtype, n):
    """Compiled code calls NumPy's own sort functions: ties, -0.0 and 0.0 in NumPy's order."""
    rng = np.random.default_rng(n)
    x = rng.integers(-3, 4, n).astype(dtype)
    if dtype != np.int64:
        x[rng.random(n) < 0.3] *= -1.0                # -0.0 beside 0.0
    for kind in (None, "quicksort", "heapsort", "stable", "mergesort"):
        check(lambda a: (np.sort(a, kind=kind), np.argsort(a, kind=kind)), x)
    check(lambda a: np.unique(a, return_index=True, return_inverse=True, return_counts=True), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(3, 17), (2, 0), (0, 5), (4, 1), (2, 3, 9), (5, 2, 16)])
def test_sort_along_each_axis(dtype, shape):
    x = data(dtype, shape)

    def f(a):
        out = ()
        for axis in [*range(-a.ndim, a.ndim), None]:
            out += (np.sort(a, axis=axis, kind="stable"), np.argsort(a, axis=axis, kind="stable"))
        return out
    check(f, x)


def test_sort_of_ordered_reversed_and_constant_runs():
    f = trace(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable")), fullgraph=True)
    for n in (33, 64, 1000):
        ramp = np.arange(n, dtype=np.float64)
        for x in (ramp, ramp[::-1].copy(), np.zeros(n), np.full(n, np.nan), np.tile([2.0, np.nan, -1.0], n)[:n],
                  (ramp % 7) - 3.0, np.where(ramp % 2 == 0, -0.0, 0.0)):
            same(f(x), (np.sort(x, kind="stable"), np.argsort(x, kind="stable")))
    extremes = np.array([2**63 - 1, -2**63, 0, -1, 2**63 - 1, 5, -2**63], dtype=np.int64)
    check(lambda a: (np.sort(a), np.argsort(a, kind="stable"), np.median(a), np.percentile(a, 50)), extremes)
    wraps = np.array([-2**63, 2**63 - 1], dtype=np.int64)          # b - a wraps in NumPy: Python runs
    same_warnings(lambda a: np.percentile(a, 30), wraps)


def test_sort_of_views_and_lists():
    x = data(np.float64, (6, 9))
    check(lambda a: (np.sort(a[::-1, 1::2], kind="stable"), np.sort(a.T, kind="stable"),
                     np.argsort(a[2], kind="stable")), x)
    check(lambda v: np.sort([v, 1.0, -v, 0.5]), 2.0)


def test_sort_errors_are_numpys():
    with pytest.raises(np.exceptions.AxisError):
        trace(lambda a: np.sort(a, axis=2), fullgraph=True)(np.ones((2, 3)))
    with pytest.raises(np.exceptions.AxisError):
        np.sort(np.ones((2, 3)), axis=2)


# ------------------------------------------------------------------------------- median
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_median_of_vectors(dtype):
    def f(a):
        a = np.where(np.abs(a) > 1e30, 2.0, a).astype(a.dtype)     # (inf beside -inf, max + max warn: below)
        return np.median(a), np.median(np.where(np.isnan(a), 1.5, a).astype(a.dtype))
    check_sizes(f, dtype, [1, 2, 3, 8, 9, 16, 17, 100, 1000], zeros=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(3, 4), (5, 1), (1, 7), (4, 6, 3), (2, 3, 8)])
def test_median_along_axes(dtype, shape):
    x = data(dtype, shape, zeros=False)
    x[np.abs(x) > 1e30] = -3.0

    def f(a):
        return (np.median(a, axis=-1), np.median(a, axis=0), np.median(a, axis=(0, -1)), np.median(a),
                np.median(a, axis=1, keepdims=True), np.median(a, keepdims=True))
    check(f, x)


def test_median_of_nans_infs_and_zeros():
    check(lambda a: np.median(a), np.array([1.0, np.nan, 3.0]))
    check(lambda a: np.median(a), np.array([np.nan, np.nan]))
    check(lambda a: np.median(a), np.array([1.0, np.inf, -np.inf, 2.0, np.inf]))
    check(lambda a: np.median(a), np.array([-0.0, -0.0, 1.0, -2.0]))
    check(lambda a: np.median(a), np.array([1e308, 1e308, 1e308]))
    check(lambda a: np.median(a, axis=0), np.array([[1.0, np.nan], [np.inf, 2.0], [3.0, np.nan]]))
    check(lambda a: np.median(a), np.array([3, -7, 2**62, 5], dtype=np.int64))


def same_warnings(fn, *args):
    """fn compiled gives NumPy's result and warnings (through the Python function)."""
    compiled = trace(fn, fullgraph=True)
    with warnings.catch_warnings(record=True) as expected:
        warnings.simplefilter("always")
        want = fn(*args)
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        got = compiled(*args)
    assert np.array_equal(got, want, equal_nan=True) and np.asarray(got).dtype == np.asarray(want).dtype
    assert [(w.category, str(w.message)) for w in seen] == [(w.category, str(w.message)) for w in expected]
    assert expected, "NumPy gave no warning"


def test_median_warns_as_numpy_does():
    same_warnings(lambda a: np.median(a), np.zeros(0))                      # Mean of empty slice
    same_warnings(lambda a: np.median(a, axis=-1), np.zeros((3, 0)))
    same_warnings(lambda a: np.median(a), np.array([-np.inf, np.inf]))       # invalid value in reduce
    same_warnings(lambda a: np.median(a), np.array([1e308, 1.7e308]))        # overflow in reduce
    same_warnings(lambda a: np.median(a, axis=1), np.array([[1.0, 2.0], [1e308, 1.7e308]]))
    check(lambda a: np.median(a, axis=-1), np.zeros((0, 3)))                 # no slice: no warning


# ------------------------------------------------------------------------------- percentiles
@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("nans", [False, True], ids=["numbers", "nans"])
def test_percentile_and_quantile_of_vectors(dtype, nans):
    def f(a):
        a = np.where(np.abs(a) > 1e30, 7.0, a).astype(a.dtype)
        if not nans:
            a = np.where(np.isnan(a), 0.25, a).astype(a.dtype)
        qs = (0, 0.3, 25, 50, 62.5, 99.9, 100)
        return tuple(np.percentile(a, q) for q in qs) + tuple(np.quantile(a, q / 100) for q in qs)
    check_sizes(f, dtype, [1, 2, 3, 7, 16, 17, 100], zeros=False)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
@pytest.mark.parametrize("shape", [(3, 5), (1, 4), (2, 3, 6)])
def test_percentile_along_axes(dtype, shape):
    x = data(dtype, shape, zeros=False)
    x[~np.isfinite(x) | (np.abs(x) > 1e30)] = 1.25
    x.reshape(-1)[::5] = np.nan if dtype != np.int64 else 3

    def f(a):
        return (np.percentile(a, 40, axis=-1), np.percentile(a, 75.5, axis=0), np.quantile(a, 0.5, axis=(0, 1)),
                np.quantile(a, 0.9, keepdims=True), np.percentile(a, 10, axis=-1, keepdims=True),
                np.quantile(a, 1, axis=0), np.quantile(a, 0, axis=-1))
    check(f, x)


def test_percentile_of_a_list_of_q_and_int_q():
    for dtype in DTYPES:
        x = distinct(dtype, (11,))
        check(lambda a: (np.percentile(a, [5, 50.0, 95]), np.quantile(a, [0, 1]), np.quantile(a, [0.25, 1]),
                         np.quantile(a, 1), np.quantile(a, 0)), x)


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_percentile_of_a_q_only_the_run_time_knows(dtype):
    x = data(dtype, (3, 10), zeros=False)
    x[np.abs(x) > 1e30] = 0.5
    def f(a, q):
        return np.percentile(a, q), np.percentile(a, q, axis=-1), np.quantile(a, q / 100, axis=0)
    check(f, x, 12.5)
    compiled = trace(f, fullgraph=True)
    for q in (0.0, 50.0, 87.5, 100.0, 100):
        same(compiled(x, q), f(x, q))
    check(lambda a, q: (np.percentile(a, q), np.quantile(a, q)), x, 1)
    check(lambda a, lo, hi: (np.percentile(a, [lo, hi]), np.quantile(a, (lo / 100, 0.5, hi / 100))), x, 2.0, 98.0)
    f = trace(lambda a, q: np.percentile(a, q), fullgraph=True)
    for bad in (101.0, -1.0, np.nan):
        with pytest.raises(ValueError, match="Percentiles must be in the range"):
            f(x, bad)


def test_percentile_of_infs_and_nans():
    check(lambda a: (np.percentile(a, 30), np.quantile(a, 0.5), np.quantile(a, 1)),
          np.array([-np.inf, 1.0, 2.5, -0.0, 4.0, np.inf]))
    check(lambda a: (np.percentile(a, 30), np.percentile(a, 100)), np.array([5.0, 1.0, np.nan, -2.0, np.inf]))
    check(lambda a: np.percentile(a, 50, axis=0), np.array([[1.0, np.nan], [2.0, 3.0], [np.nan, -5.0]]))


def test_percentile_warns_and_raises_as_numpy_does():
    same_warnings(lambda a: np.percentile(a, 50), np.array([1.0, np.inf]))     # inf - 1: fine; inf * 0.5...
    same_warnings(lambda a: np.percentile(a, 50), np.array([-np.inf, np.inf]))
    same_warnings(lambda a: np.percentile(a, 30), np.array([-1e308, 1.7e308]))
    same_warnings(lambda a: np.percentile(a, 50), np.array([np.inf]))
    for fn in (lambda a: np.percentile(a, 50), lambda a: np.quantile(a, 1)):
        with pytest.raises(IndexError):
            trace(fn, fullgraph=True)(np.zeros(0))
    with pytest.raises(ValueError, match="Percentiles must be in the range"):
        trace(lambda a: np.percentile(a, 101), fullgraph=True)(np.ones(3))
    with pytest.raises(ValueError, match="Quantiles must be in the range"):
        trace(lambda a: np.quantile(a, -0.5), fullgraph=True)(np.ones(3))


# ------------------------------------------------------------------------------- big inputs
def test_large_sorts():
    x = RNG.normal(size=100_003)
    x[::97] = np.nan
    check(lambda a: (np.sort(a, kind="stable"), np.argsort(a, kind="stable"), np.median(a), np.percentile(a, 12.5)),
          x)
    y = RNG.integers(0, 50, size=(7, 3001))
    check(lambda a: (np.argsort(a, axis=-1, kind="stable"), np.argsort(a, axis=0, kind="stable")), y)


# ------------------------------------------------------------------------------- gradients
def central_differences(fn, x, h=1e-6):
    out = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += h
        down[i] -= h
        out[i] = (fn(up) - fn(down)) / (2 * h)
    return out


def test_gradients_through_sort_median_and_percentile():
    from tracer import grad
    w = np.array([0.3, -1.0, 2.0, 0.7, 5.0])
    x = np.array([3.0, 1.0, 2.0, -4.0, 0.5])

    def weighted(a):
        return np.sum(np.sort(a) * w)
    assert np.array_equal(grad(weighted)(x), w[np.argsort(np.argsort(x, kind="stable"), kind="stable")])

    def stats(a):
        return np.median(a) * 2.0 + np.percentile(a, 30) - np.quantile(a, 0.9)
    np.testing.assert_allclose(grad(stats)(x), central_differences(stats, x), atol=1e-6)

    X = RNG.normal(size=(4, 3))

    def along(a):
        return np.sum(np.sort(a, axis=0)[0] * a[1]) + np.sum(np.median(a, axis=-1))
    np.testing.assert_allclose(grad(along)(X), central_differences(along, X), atol=1e-6)


# ------------------------------------------------------------------------------- exported
@pytest.mark.skipif(__import__("shutil").which("cc") is None and __import__("shutil").which("gcc") is None,
                    reason="no C compiler to link exported libraries")
def test_sorts_in_an_exported_library(tmp_path):
    import importlib.util

    from tracer import export

    def order_stats(x):
        return np.sort(x, kind="stable"), np.argsort(x, kind="stable"), np.median(x), np.percentile(x, 25.0)
    x = data(np.float64, (40,), zeros=False)
    x[np.abs(x) > 1e30] = 1.0
    exported = export(order_stats, x, out_dir=str(tmp_path), name="order_stats")
    spec = importlib.util.spec_from_file_location("exported_order_stats", exported.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for n in (40, 2, 17, 1000):               # (size 1 is another specialization)
        y = data(np.float64, (n,), zeros=False)
        y[np.abs(y) > 1e30] = 1.0
        same(module.order_stats(y), order_stats(y))


def test_sort_method_sorts_in_place():
    def sort_copy(x):
        y = x * 2
        y.sort()
        return y

    def sort_argument(x):
        x.sort()
        return x[0]

    def sort_rows_then_columns(a):
        a[0].sort()
        a.sort(axis=0)
        return a.sum()

    for dtype in DTYPES:
        check(sort_copy, distinct(dtype, (9,)))
        check(sort_argument, distinct(dtype, (7,)))
        check(sort_rows_then_columns, distinct(dtype, (3, 4)))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_unique(dtype):
    check(lambda x: np.unique(x), data(dtype, (40,)))
    check(lambda x: np.unique(x), data(dtype, (3, 5)))
    check(lambda x: np.unique(x), data(dtype, (0,)))
    check(lambda x: np.unique(x * 0), data(dtype, (6,)))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_unique_with_index_inverse_and_counts(dtype):
    """The first index of each value, each element's place (in the input's shape) and the counts;
    NaNs one value, -0.0 and 0.0 one value (the first seen: with return_index NumPy's sort is
    stable, without it NumPy's quicksort may put either zero first, so those data have one)."""
    for x in (data(dtype, (40,), zeros=False), data(dtype, (3, 5), zeros=False), data(dtype, (0,)),
              np.abs(data(dtype, (6,))) * 0):
        check(lambda x: np.unique(x, return_counts=True), x)
        check(lambda x: np.unique(x, return_inverse=True), x)
    for x in (data(dtype, (40,)), data(dtype, (3, 5)), data(dtype, (0,)), data(dtype, (6,)) * 0):
        check(lambda x: np.unique(x, return_index=True), x)
        check(lambda x: np.unique(x, return_index=True, return_inverse=True, return_counts=True), x)
    if dtype != np.int64:
        check(lambda x: np.unique(x, True, True, True), np.array([np.nan, 1.0, np.nan, -0.0, 0.0, 1.0], dtype))


@pytest.mark.parametrize("dtype", DTYPES, ids=ids)
def test_searchsorted_and_digitize(dtype):
    a = np.sort(data(dtype, (30,)))
    v = data(dtype, (4, 5))
    check(lambda a, v: (np.searchsorted(a, v), np.searchsorted(a, v, side="right"), np.searchsorted(a, a)), a, v)
    check(lambda a: np.searchsorted(a, np.sort(a)[::-1], side="right"), a)
    bins = np.unique(data(dtype, (8,)))
    bins = bins[~np.isnan(bins)] if dtype != np.int64 else bins
    for edges in (bins, bins[::-1], np.repeat(bins[:1], 3), bins[:0]):
        check(lambda x, b: (np.digitize(x, b), np.digitize(x, b, right=True)), v, edges)


def test_digitize_of_bins_neither_increasing_nor_decreasing_is_numpys():
    f = trace(lambda x, b: np.digitize(x, b), fullgraph=True)
    with pytest.raises(ValueError, match="monotonically increasing or decreasing"):
        f(np.ones(3), np.array([0.0, 2.0, 1.0]))
    x, bins = np.array([-1.0, 0.5, 2.0]), np.array([0.0, np.nan, 1.0])
    same(f(x, bins), np.digitize(x, bins))          # (NaN bins: NumPy's own answer)
