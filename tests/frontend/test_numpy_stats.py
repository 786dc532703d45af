"""np.bincount, np.nanmax / np.nanmin, np.ptp, ufunc.accumulate, np.linalg.norm and np.trapezoid in
traced code (tracer.frontend.numpy_stats) against NumPy: `check` (from test_numpy_more) compares
type, dtype, shape and bits, and runs the optimized IR too. Where NumPy raises or warns, the call
runs the Python function: its error and warning."""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from test_numpy_more import check, same

from tracer import trace

RNG = np.random.default_rng(11)


def with_nans(shape):
    x = RNG.normal(size=shape)
    x[RNG.random(shape) < 0.2] = np.nan
    x.flat[0] = -0.0
    return x


def test_bincount_counts_and_weights():
    v = np.array([1, 3, 3, 0, 5, 3])
    check(lambda v: np.bincount(v), v)
    check(lambda v: np.bincount(v, minlength=9), v)
    check(lambda v: np.bincount(v, weights=v * 0.5), v)
    check(lambda v, w: np.bincount(v, w, 2), v, RNG.normal(size=6))
    f = trace(lambda v: (np.bincount(v[:0]), np.bincount(v[:0], minlength=3)))      # (runs as Python: max of
    for got, want in zip(f(v), (np.zeros(0, np.int64), np.zeros(3, np.int64))):     # nothing fails the call)
        assert got.dtype == want.dtype and np.array_equal(got, want)
    check(lambda v: np.bincount(v > 2), v)


def test_bincount_errors_are_numpys():
    f = trace(lambda v: np.bincount(v - 2))
    with pytest.raises(ValueError, match="negative"):
        f(np.array([1, 3]))
    with pytest.raises(ValueError, match="same length"):
        trace(lambda v: np.bincount(v, weights=np.ones(3)))(np.array([1, 2]))


@pytest.mark.parametrize("name", ["nanmax", "nanmin"])
def test_nan_extremes(name):
    fn = getattr(np, name)
    x = with_nans((4, 5))
    check(lambda x: fn(x), x)
    check(lambda x: (fn(x, axis=0), fn(x, axis=1, keepdims=True)), x)
    check(lambda v: fn(v), np.array([4, -2, 9]))
    check(lambda x: fn(x), np.array([-np.inf, np.nan]))
    only_nans = x.copy()
    only_nans[:, 2] = np.nan
    f = trace(lambda x: fn(x, axis=0))
    with pytest.warns(RuntimeWarning, match="All-NaN slice encountered"):
        got = f(only_nans)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(got, fn(only_nans, axis=0), equal_nan=True)


def test_ptp_along_axes_with_numpys_dtypes():
    x = with_nans((4, 5))
    check(lambda x: (np.ptp(x), np.ptp(x, axis=0), np.ptp(x, axis=1, keepdims=True), np.ptp(x, axis=(0, 1))), x)
    y = RNG.normal(size=(3, 4))
    check(lambda x: (np.ptp(x), np.ptp(x, axis=-1), np.ptp(x, keepdims=True)), y)
    check(lambda x: np.ptp(x, axis=0), np.float32(y))
    check(lambda v: (np.ptp(v), np.ptp(v, axis=1)), np.int8([[127, -128, 0], [5, 1, 2]]))    # wraps, as NumPy's
    check(lambda v: np.ptp(v, axis=0), np.uint8([[3, 250], [7, 9]]))
    check(lambda v: np.ptp(v, axis=1), np.zeros((0, 3)))                                        # empty slices: none


def test_ptp_errors_and_warnings_are_numpys():
    f = trace(lambda x: np.ptp(x, axis=0))
    for empty in (np.zeros(0), np.zeros((0, 3))):
        with pytest.raises(ValueError, match="zero-size array"):
            f(empty)
    with pytest.raises(TypeError, match="boolean subtract"):
        trace(lambda x: np.ptp(x))(np.array([True, False]))
    infinite = np.array([[np.inf, 1.0], [np.inf, 2.0]])
    with pytest.warns(RuntimeWarning, match="invalid value encountered in subtract"):
        got = f(infinite)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(got, np.ptp(infinite, axis=0))


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.maximum, np.minimum], ids=lambda u: u.__name__)
def test_accumulate_along_each_axis(ufunc):
    x = with_nans((3, 4)) if ufunc in (np.maximum, np.minimum) else RNG.normal(size=(3, 4))
    check(lambda x: (ufunc.accumulate(x), ufunc.accumulate(x, axis=1), ufunc.accumulate(x.ravel())), x)
    check(lambda v: ufunc.accumulate(v), np.array([3, -1, 4, 1, -5, 9]))
    check(lambda x: ufunc.accumulate(x, axis=0), np.array([[0.0, -0.0], [-0.0, 0.0]]))


def test_norm_and_trapezoid():
    x = RNG.normal(size=(4, 6))
    check(lambda x: (np.linalg.norm(x, axis=1), np.linalg.norm(x, axis=0, keepdims=True)), x)
    assert trace(lambda x: np.linalg.norm(x))(x) == pytest.approx(np.linalg.norm(x), rel=1e-15)
    assert trace(lambda v: np.linalg.norm(v))(np.arange(5)) == pytest.approx(np.linalg.norm(np.arange(5)), rel=1e-15)
    check(lambda x: (np.trapezoid(x), np.trapezoid(x, dx=0.5, axis=0), np.trapezoid(x, x[0] ** 2)), x)
    check(lambda v: np.trapezoid(v), np.array([1, 3, 3, 0]))


def test_diagflat_and_polyval():
    v = RNG.normal(size=3)
    check(lambda v: (np.diagflat(v), np.diagflat(v.reshape(1, 3), -1), np.diagflat([[1, 2], [3, 4]], 1)), v)
    x = np.linspace(-2, 2, 7)
    for fn in (lambda x: np.polyval([1.0, -2.0, 0.5], x), lambda x: np.polyval((3, 1), x[2]),
               lambda x: np.polyval(np.array([2.0, 1.0, 0.0, -1.0]), x), lambda x: np.polyval([2, 3], 2.5)):
        same(trace(fn, fullgraph=True, fuse_fma=False)(x), fn(x))
    got = trace(lambda x: np.polyval([1.0, -2.0, 0.5], x), fuse_fma=False)(x.astype(np.float32))
    assert got.dtype == np.float64          # the coefficients are np.float64 (NEP 50: not weak)
    check(lambda v: np.polyval([2, 3], v), np.arange(4))


def test_interp_as_numpys_loop():
    xp, fp = np.array([0.0, 1.0, 2.5, 4.0]), np.array([3.0, -1.0, 2.0, np.inf])
    x = np.array([-1, 0, 0.5, 1.0, 2.0, 2.5, 3.9, 4.0, 4.5, np.nan])
    for fn in (lambda x, xp, fp: np.interp(x, xp, fp), lambda x, xp, fp: np.interp(x, xp, fp, left=-7.0, right=9),
               lambda x, xp, fp: np.interp(x.reshape(2, 5), xp, fp[::-1]),
               lambda x, xp, fp: np.interp(x, xp[:1], fp[:1]), lambda x, xp, fp: np.interp(x[2], xp, fp),
               lambda x, xp, fp: np.interp(x, xp, np.array([np.inf, np.inf, 1.0, 1.0]))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = trace(fn, fullgraph=True, fuse_fma=False)(x, xp, fp), fn(x, xp, fp)
        assert np.asarray(got).shape == np.asarray(want).shape and np.array_equal(got, want, equal_nan=True)
    with pytest.raises(ValueError, match="same length"):
        trace(lambda x, xp, fp: np.interp(x, xp, fp))(x, xp, fp[:3])


@pytest.mark.parametrize("x, bins, range_", [
    (RNG.normal(size=1000), 10, None), (RNG.normal(size=(10, 10)), 5, (-1.0, 1.0)), (np.arange(20), 4, None),
    (np.full(5, 2.0), 3, None), (np.linspace(0, 1, 101), 10, None), (np.array([0.0, 0.1, 0.2, 0.3, 0.7, 1.0]), 10, None),
], ids=["normal", "range", "ints", "one-value", "on-edges", "tenths"])
def test_histogram_equal_bins(x, bins, range_):
    check(lambda x: np.histogram(x, bins=bins, range=range_), x)


def test_histogram_errors_are_numpys():
    f = trace(lambda x: np.histogram(x))
    with pytest.raises(ValueError, match="autodetected range of \\[nan, nan\\] is not finite"):
        f(np.array([1.0, np.nan]))
    with pytest.raises(ValueError, match="max must be larger than min"):
        trace(lambda x: np.histogram(x, bins=3, range=(1, 0)))(np.ones(3))
