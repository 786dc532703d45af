"""Maxima, minima and their positions (codegen.extremes): NumPy's bits, signs of zero and NaNs
included, of arrays that are one block of memory (NumPy's SIMD order of ties: the first element,
then vectors of 8, lanes folded in halves), of rows, and of every other layout (in order).

The arrays are mostly zeros of both signs (each tie's winner shows in the sign), with NaNs of
both signs, at sizes around NumPy's vector and 8-vector steps."""
from __future__ import annotations

import numpy as np
import pytest

from tracer import trace

SIZES = [1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 255, 257, 1000, 4099, 9001]
RNG = np.random.default_rng(11)


def whole_max(a):
    return a.max()


def whole_min(a):
    return np.min(a)


def row_max(a):
    return np.max(a, axis=1)


def row_min(a):
    return a.min(axis=-1)


def spread(a):
    return a.max() - a.min()


def first_max(a):
    return np.argmax(a)


def first_min(a):
    return a.argmin()


def zeros(n, dtype, case):
    """Zeros of random signs; case 1: one NaN; case 2: a NaN and a -NaN; case 3: normal numbers."""
    if case == 3:
        return RNG.standard_normal(n).astype(dtype)
    a = np.zeros(n, dtype)
    a[RNG.random(n) < 0.5] = -0.0
    if case >= 1:
        a[RNG.integers(0, n)] = np.nan
    if case == 2:
        a[RNG.integers(0, n)] = -np.nan
    return a


def layouts(a):
    yield a
    yield a[::2]
    yield a[::-1]
    if a.size % 4 == 0:
        m = a.reshape(4, -1)
        yield from (m, m.T, np.asfortranarray(m), m[:, ::2], m[::-1])


def same_bits(got, want) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    return got.dtype == want.dtype and got.shape == want.shape and got.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_float_extremes_are_numpys_bits(dtype):
    traced = {f: trace(f) for f in (whole_max, whole_min, row_max, row_min, spread)}
    for n in SIZES:
        for case in range(4):
            a = zeros(n, dtype, case)
            for v in layouts(a):
                for f, tf in traced.items():
                    if v.ndim == 1 and f in (row_max, row_min):
                        continue
                    contiguous = v.ndim == 1 or v.flags.c_contiguous or v.flags.f_contiguous or \
                        f in (row_max, row_min) and v.strides[1] == v.itemsize     # (1-d views: NumPy's strided loop)
                    if case == 2 and not contiguous:
                        continue           # (NaNs of two signs in another layout: NumPy's order is its iterator's)
                    got, want = tf(v), f(v)
                    if contiguous or case != 0:
                        assert same_bits(got, want), (f.__name__, n, case, v.shape, v.strides, got, want)
                    else:
                        assert np.array_equal(got, want), (f.__name__, n, case, v.shape, v.strides, got, want)


@pytest.mark.parametrize("dtype", [np.int64, np.uint64])
def test_integer_extremes(dtype):
    traced = {f: trace(f) for f in (whole_max, whole_min, row_max, row_min)}
    info = np.iinfo(dtype)
    for n in SIZES:
        a = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        for v in layouts(a):
            for f, tf in traced.items():
                if v.ndim == 2 or f in (whole_max, whole_min):
                    assert same_bits(tf(v), f(v)), (f.__name__, n, v.shape, v.strides)


def test_a_nan_is_the_result_with_numpys_bits():
    """A NaN inside NumPy's vectors gives its quiet NaN (0x7ff8...), one among the last elements
    or the first element alone keeps its own bits."""
    f = trace(whole_max)
    for n, at in [(1, 0), (40, 0), (40, 39), (40, 17), (1000, 999), (1000, 3)]:
        a = np.arange(n, dtype=np.float64)
        a[at] = -np.nan
        assert same_bits(f(a), whole_max(a)), (n, at)


def test_empty_raises_as_numpy():
    f = trace(whole_max)
    with pytest.raises(ValueError):
        f(np.zeros(0))


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_first_positions(dtype):
    traced = {f: trace(f) for f in (first_max, first_min)}
    for n in SIZES + [100_003]:
        for case in range(5):
            if np.dtype(dtype).kind == "i":
                a = RNG.integers(-3, 4, n).astype(dtype)        # the extreme in many places, many chunks
            else:
                a = np.round(RNG.standard_normal(n), 1).astype(dtype)
                if case == 1:
                    a[RNG.integers(0, n)] = np.nan
                if case == 2:
                    a[RNG.integers(0, n, 3)] = -np.nan
                if case == 3:
                    a = zeros(n, dtype, 0)
                if case == 4:
                    a[RNG.integers(0, n)] = np.inf
                    a[RNG.integers(0, n)] = -np.inf
            for v in layouts(a):
                for f, tf in traced.items():
                    got, want = tf(v), f(v)
                    assert type(got) is type(want) and got == want, (f.__name__, n, case, v.shape, v.strides)


def column_max(a):
    return a.max(axis=0)


def column_min(a):
    return np.min(a, axis=0, keepdims=True)


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.int64])
def test_columns_combine_row_after_row(dtype):
    """Over the first axis: out = f(out, row) for each row in turn, NumPy's binary loop (ties and
    NaNs as NumPy's)."""
    traced = {f: trace(f) for f in (column_max, column_min)}
    for n in (4, 8, 64, 100, 1000, 4100):
        a = zeros(n, dtype, int(RNG.integers(0, 4))) if np.dtype(dtype).kind == "f" else RNG.integers(-9, 9, n).astype(dtype)
        m = a.reshape(4, -1)
        for v in (m, m[:, ::2], m[::-1], a.reshape(-1, 4)):
            for f, tf in traced.items():
                assert same_bits(tf(v), f(v)), (f.__name__, n, v.shape, v.strides)


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint16, np.uint64])
def test_narrow_integers_as_they_are(dtype):
    """Of int8...uint64 arrays: the results and their dtypes as NumPy's (uint64 above 2**63 too)."""
    functions = (whole_max, whole_min, row_max, column_min, first_max, first_min)
    traced = {f: trace(f) for f in functions}
    info = np.iinfo(dtype)
    for n in (4, 8, 100, 1000, 3 * 4096 + 4):
        a = RNG.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        for v in (a, a[::-1], a.reshape(4, -1), a.reshape(4, -1).T):
            for f, tf in traced.items():
                if v.ndim == 1 and f in (row_max, column_min):
                    continue
                got, want = tf(v), f(v)
                assert type(got) is type(want) and same_bits(got, want), (f.__name__, n, v.shape, v.strides)
