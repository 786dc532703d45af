"""NumPy's rules for signed zeros and NaN in maximum/minimum and the max/min reductions: a NaN on
either side wins, and a tie (-0.0 against 0.0) gives the second operand, element after element."""
from __future__ import annotations

import numpy as np
import pytest

from tracer import trace

EDGES = [-0.0, 0.0, np.nan, -np.inf, np.inf, 1.0, -1.0]


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(got, want, equal_nan=True)


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_elementwise_extremum_of_edges(ufunc):
    a = np.array([x for x in EDGES for _ in EDGES])
    b = np.array([y for _ in EDGES for y in EDGES])
    f = trace(lambda a, b: ufunc(a, b))
    _same(f(a, b), ufunc(a, b))
    _same(f(b, a), ufunc(b, a))


@pytest.mark.parametrize("ufunc", [np.maximum, np.minimum])
def test_extremum_with_a_scalar_zero(ufunc):
    x = np.array([-0.0, 0.0, -0.0])
    _same(trace(lambda x: ufunc(x, 0.0))(x), ufunc(x, 0.0))
    _same(trace(lambda x: ufunc(x, -0.0))(x), ufunc(x, -0.0))
    _same(trace(lambda x: ufunc(0.0, x))(x), ufunc(0.0, x))


@pytest.mark.parametrize("n", [1, 2, 3, 8, 17])
@pytest.mark.parametrize("reduce", [np.max, np.min])
def test_reductions_over_signed_zeros(reduce, n):
    x = np.where(np.arange(n) % 2 == 0, -0.0, 0.0)
    f = trace(lambda x: reduce(x))
    _same(f(x), reduce(x))
    _same(f(x[::-1].copy()), reduce(x[::-1]))


def clip_both(x, lo, hi):
    return np.clip(x, lo, hi)


def clip_low(x, lo):
    return np.clip(x, lo, None)


def clip_high(x, hi):
    return np.clip(x, None, hi)


BOUNDS = (-0.0, 0.0, 1.0, -1.0, np.nan, np.inf)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("lo", BOUNDS)
def test_clip_keeps_numpys_zeros_and_nans(dtype, lo):
    """Two bounds that are numbers keep x where it equals one; one bound, or bounds that are
    arrays, give the bound (np.maximum's and np.minimum's rule)."""
    x = np.array([-0.0, 0.0, 1.0, -1.0, np.nan, np.inf, 2.0], dtype)
    both, low, high = (trace(f, fullgraph=True) for f in (clip_both, clip_low, clip_high))
    for hi in BOUNDS:
        for got, want in [(both(x, lo, hi), np.clip(x, lo, hi)), (both(x[::2], lo, hi), np.clip(x[::2], lo, hi)),
                          (low(x, lo), np.clip(x, lo, None)), (high(x, hi), np.clip(x, None, hi)),
                          (both(x, np.full(7, lo, dtype), np.full(7, hi, dtype)),
                           np.clip(x, np.full(7, lo, dtype), np.full(7, hi, dtype)))]:
            assert got.dtype == want.dtype
            assert np.array_equal(got, want, equal_nan=True) and (np.signbit(got) == np.signbit(want)).all(), (lo, hi)


def half_power(x):
    return x ** 0.5, np.power(x, 0.5)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_power_of_one_half_is_numpys_square_root(dtype):
    """NumPy's power takes sqrt for an exponent of 0.5: (-0.0) ** 0.5 is -0.0 (pow's is 0.0)."""
    x = np.array([-0.0, 0.0, 4.0, 2.0, np.inf], dtype)
    for got, want in zip(trace(half_power, fullgraph=True)(x), half_power(x)):
        _same(got, want)
