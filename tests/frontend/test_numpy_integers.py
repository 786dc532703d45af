"""Integer array operations traced code does as NumPy does, on every integer dtype: & | ^ << >> ~,
indexing and np.take with int32 (or any integer) index arrays, NumPy scalar constructors
(np.uint64(30), np.int8(5)), np.round / np.around / x.round(), and np.iinfo / np.finfo / np.dtype
(made at trace time; their NumPy scalar attributes are constants of their dtype). NumPy is the
oracle: the same dtype and the same values (bit for bit), or the same exception.
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import tracer

INTEGER_DTYPES = ["int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool"]


def same(got, expected) -> bool:
    if isinstance(expected, tuple):
        return isinstance(got, tuple) and len(got) == len(expected) and all(map(same, got, expected))
    if isinstance(expected, np.ndarray):
        return (isinstance(got, np.ndarray) and got.dtype == expected.dtype and got.shape == expected.shape
                and np.array_equal(got, expected, equal_nan=True))
    return type(got) is type(expected) and (got == expected or (got != got and expected != expected))


def check(fn, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")      # (NumPy's overflow warnings: the values are compared)
        try:
            expected = fn(*args)
        except Exception as exc:   # the exception is compared
            with pytest.raises(type(exc)):
                tracer.trace(fn, fullgraph=True)(*args)
            return
        got = tracer.trace(fn, fullgraph=True)(*args)
    assert same(got, expected), (got, expected)


def bitwise(x, y):
    return x & y, x | y, x ^ y, x << 2, x >> 1, ~x, x & 3, 6 | x


@pytest.mark.parametrize("dt", INTEGER_DTYPES)
def test_bitwise_operators(dt):
    x = np.array([1, 5, 7, 0, 2, 100], dt)
    y = np.array([3, 1, 2, 2, 1, 9], dt)
    check(bitwise, x, y)


def test_bitwise_on_floats_is_numpys_type_error():
    check(lambda x: x & 1, np.ones(3))
    check(lambda x: ~x, np.ones(3))


def splitmix(state, k):
    z = state * np.uint64(0x9E3779B9) + np.uint64(k)
    z = (z ^ (z >> np.uint64(15))) * np.uint64(3)
    return z ^ (z >> np.uint64(31))


def test_uint64_mixing_with_numpy_scalar_constants():
    check(splitmix, np.arange(6, dtype=np.uint64) * np.uint64(1 << 20), 7)


@pytest.mark.parametrize("dt", ["int8", "int16", "int32", "uint8", "uint32", "uint64"])
def test_index_arrays_of_any_integer_dtype(dt):
    x = np.arange(12.0).reshape(4, 3)
    idx = np.array([3, 0, 2, 2], dt)
    check(lambda x, i: (x[i], x[:, 1][i], np.take(x[:, 0], i)), x, idx)

    def scatter(x, i):
        y = x.copy()
        y[i] = -1.0
        np.add.at(y, i, 10.0)
        return y
    check(scatter, x[:, 0], idx)


CONSTRUCTORS = {
    "int8": lambda x: np.int8(5) + np.int8(x), "uint8_of_array": lambda x: np.uint8(np.arange(4) * x),
    "uint16": lambda x: np.uint16(x) * np.uint16(3), "float16": lambda x: np.float16(x) + np.float16(0.1),
    "int64": lambda x: np.int64(x) // 2, "out_of_range": lambda x: np.uint8(300) + x,
}


@pytest.mark.parametrize("fn", list(CONSTRUCTORS.values()), ids=list(CONSTRUCTORS))
def test_numpy_scalar_constructors(fn):
    check(fn, 7)


ROUNDS = {
    "rint": lambda a: np.round(a), "two": lambda a: np.round(a, 2), "method": lambda a: a.round(3),
    "tens": lambda a: np.around(a, -1), "float32": lambda a: np.round(a.astype(np.float32), 1),
    "scalar": lambda a: np.round(a[0], 1), "ints": lambda a: np.round(a.astype(np.int64)),
    "twelve": lambda a: np.round(a, 12),
}


@pytest.mark.parametrize("fn", list(ROUNDS.values()), ids=list(ROUNDS))
def test_round(fn):
    check(fn, np.array([1.2345, 2.5, -0.5, 1234.5678, 0.125, 7.0, -3.25, 1e300, np.nan, -np.inf]))


def clip_to_int16(x):
    info = np.iinfo(np.int16)
    return np.clip(np.round(x), info.min, info.max).astype(np.int16), info.bits


def scaled_by_eps(x):
    eps = np.finfo(x.dtype).eps
    return x / (np.abs(x).max() + eps), eps * 2, np.finfo(np.float32).tiny * 2 + 1.0


def limits_of_dtypes(x):
    return (np.iinfo(np.uint8).max + x, np.iinfo("int8").min, np.dtype(np.float32).itemsize,
            np.finfo(np.float16).max, np.dtype(x.dtype).kind == "f")


@pytest.mark.parametrize("fn, args", [
    (clip_to_int16, (np.array([-40000.0, -3.5, 0.49, 2.5, 40000.0]),)),
    (scaled_by_eps, (np.arange(4.0),)),
    (scaled_by_eps, (np.arange(4.0, dtype=np.float32),)),
    (limits_of_dtypes, (np.arange(3, dtype=np.int32),)),
    (limits_of_dtypes, (np.ones(2),)),
], ids=["iinfo-clip", "finfo-f64", "finfo-f32", "limits-int32", "limits-f64"])
def test_iinfo_finfo_and_dtype(fn, args):
    check(fn, *args)
