"""Inputs and the NumPy oracle for the per-dtype tests (`tests/api/test_dtypes.py`).

- `DTYPES`: every array dtype traced code is meant to take, as NumPy scalar types; `dtype_name`
  names one for test ids (`uint8`, `float16`...).
- Example arrays, the same on every call: `vector` (the dtype's extremes, signs and a fraction
  where it has them), `divisor` (no zeros), `exponent` (small non-negative powers), `grid` (3x4),
  `extremes` (lowest, highest, 3: for overflow of NumPy scalars), `common_values` (what two
  dtypes both represent, for casts).
- `MIXED_PAIRS`: 40 pairs of different dtypes covering NumPy's promotion rules (widening, signed
  with unsigned, integers with float16/float32, the uint64 + int64 -> float64 corner).
- `check(fn, *args)`: `fn` run by NumPy on deep copies of `args` is the oracle; the function
  traced with `fullgraph=True` is called twice (the call that compiles, then one through the
  dispatcher), each on fresh copies, and must give the same exception (type and message) or a
  result of the same kind: arrays of the same dtype and shape, NumPy scalars of the same type,
  values bit for bit (NaN matches NaN, zeros keep their sign; `rtol` relaxes floats where the
  result goes through the C library), plus the same RuntimeWarnings and the same argument
  contents after the call.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np

import tracer

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
          np.float16, np.float32, np.float64]


def dtype_name(dt) -> str:
    return np.dtype(dt).name


def kind(dt) -> str:
    """'b' bool, 'i' signed, 'u' unsigned, 'f' float."""
    return np.dtype(dt).kind


def vector(dt) -> np.ndarray:
    """Six values: the extremes of an integer dtype (so arithmetic wraps), signs, -0.0 and fractions."""
    k = kind(dt)
    if k == "b":
        values = [True, False, True, True, False, False]
    elif k == "i":
        values = [np.iinfo(dt).min, -7, 0, 3, 100, np.iinfo(dt).max]
    elif k == "u":
        values = [0, 1, 3, 100, 200, np.iinfo(dt).max]
    else:
        values = [-2.5, -0.0, 0.5, 3.0, 7.25, 100.0]
    return np.array(values, dtype=dt)


def divisor(dt) -> np.ndarray:
    """Six values with no zero (and no -1, whose quotient of the lowest int overflows)."""
    k = kind(dt)
    if k == "b":
        values = [True] * 6
    elif k == "i":
        values = [3, -2, 5, 7, -3, 2]
    elif k == "u":
        values = [3, 2, 5, 7, 3, 2]
    else:
        values = [2.0, -0.5, 4.0, 0.25, -3.0, 1.5]
    return np.array(values, dtype=dt)


def exponent(dt) -> np.ndarray:
    """Six small non-negative powers for `vector(dt) ** exponent(dt)`."""
    if kind(dt) == "b":
        return np.array([True, False, True, False, True, False])
    return np.array([0, 1, 2, 3, 2, 1], dtype=dt)


def grid(dt) -> np.ndarray:
    """A 3x4 array: extremes and signs spread over rows and columns (ties, for argmax/argmin)."""
    k = kind(dt)
    if k == "b":
        rows = [[True, False, True, False], [False, False, True, True], [True, True, True, False]]
    elif k == "i":
        lo, hi = np.iinfo(dt).min, np.iinfo(dt).max
        rows = [[lo, -3, 0, 5], [7, hi, -1, 2], [100, 1, -100, 5]]
    elif k == "u":
        rows = [[0, 3, np.iinfo(dt).max, 5], [7, 1, 200, 2], [100, 1, 0, 5]]
    else:
        rows = [[-2.5, 0.5, 3.0, -0.0], [7.25, 1.5, -4.0, 2.0], [0.25, -1.0, 6.0, 1.0]]
    return np.array(rows, dtype=dt)


def extremes(dt) -> np.ndarray:
    """[lowest, highest, 3]: elements whose sums and products overflow as NumPy scalars."""
    if kind(dt) == "b":
        return np.array([False, True, True])
    info = np.finfo(dt) if kind(dt) == "f" else np.iinfo(dt)
    return np.array([info.min, info.max, 3], dtype=dt)


def common_values(src, dst) -> np.ndarray:
    """Values of dtype `src` that `dst` represents too (a bool source: False and True)."""
    if kind(src) == "b":
        return np.array([True, False, True])
    values = [0, 1, 3, 7, 100, 127]
    if kind(src) in "if" and kind(dst) in "if":
        values += [-1, -7, -100]
    if kind(src) == "f" and kind(dst) == "f":
        values += [2.5, -0.25, -0.0]
    return np.array(values, dtype=src)


MIXED_PAIRS = [
    (np.bool_, np.int8), (np.bool_, np.uint8), (np.bool_, np.float16), (np.bool_, np.uint64),
    (np.int8, np.int16), (np.int8, np.int32), (np.int8, np.int64), (np.int8, np.uint8),
    (np.int8, np.uint16), (np.int8, np.uint64), (np.int8, np.float16), (np.int8, np.float32),
    (np.int16, np.uint16), (np.int16, np.uint32), (np.int16, np.float16), (np.int16, np.float32),
    (np.int32, np.int64), (np.int32, np.uint32), (np.int32, np.uint64), (np.int32, np.float32),
    (np.int32, np.float64), (np.int64, np.uint64), (np.int64, np.float32), (np.int64, np.float16),
    (np.uint8, np.uint16), (np.uint8, np.int16), (np.uint8, np.uint64), (np.uint8, np.float16),
    (np.uint16, np.int32), (np.uint16, np.uint32), (np.uint16, np.float16), (np.uint16, np.float32),
    (np.uint32, np.int64), (np.uint32, np.float32), (np.uint32, np.float64), (np.uint64, np.float16),
    (np.uint64, np.float64), (np.float16, np.float32), (np.float16, np.float64), (np.float32, np.float64),
]


# --- the oracle -------------------------------------------------------------------------------

def outcome(fn, args):
    """(result, exception or None, sorted RuntimeWarning messages) of `fn(*args)`."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result, exc = fn(*args), None
        except Exception as e:      # the exception is what gets compared
            result, exc = None, e
    return result, exc, sorted({str(w.message) for w in caught if issubclass(w.category, RuntimeWarning)})


def same_values(got: np.ndarray, expected: np.ndarray, rtol: float) -> bool:
    """Integers and bools exactly; floats bit for bit but for NaN payloads (the sign of zero
    counts), or within `rtol`."""
    if expected.dtype.kind != "f":
        return np.array_equal(got, expected)
    if rtol:
        return np.allclose(got, expected, rtol=rtol, atol=0, equal_nan=True)
    zeros = expected == 0
    return (np.array_equal(got, expected, equal_nan=True)
            and np.array_equal(np.signbit(got[zeros]), np.signbit(expected[zeros])))


def check_same(got, expected, where: str, rtol: float = 0.0) -> None:
    """Traced vs NumPy: the same structure, types and dtypes, and values (`same_values`)."""
    if isinstance(expected, tuple):
        assert isinstance(got, tuple) and len(got) == len(expected), f"{where}: {got!r} vs {expected!r}"
        for k, (g, e) in enumerate(zip(got, expected)):
            check_same(g, e, f"{where}[{k}]", rtol)
        return
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray), f"{where}: {type(got).__name__} {got!r} where NumPy gives an ndarray"
        assert got.dtype == expected.dtype, f"{where}: dtype {got.dtype} where NumPy gives {expected.dtype}"
        assert got.shape == expected.shape, f"{where}: shape {got.shape} where NumPy gives {expected.shape}"
    else:
        assert type(got) is type(expected), \
            f"{where}: {type(got).__name__} {got!r} where NumPy gives {type(expected).__name__} {expected!r}"
        if not isinstance(expected, (np.generic, int, float)):
            assert got == expected, f"{where}: {got!r} where NumPy gives {expected!r}"
            return
    assert same_values(np.asarray(got), np.asarray(expected), rtol), \
        f"{where}: {got!r} where NumPy gives {expected!r}"


def check(fn, *args, rtol: float = 0.0) -> None:
    """`fn` traced with fullgraph=True, first and second call, against `fn` run by NumPy."""
    numpy_args = copy.deepcopy(args)
    expected, expected_exc, expected_warnings = outcome(fn, numpy_args)
    traced = tracer.trace(fn, fullgraph=True)
    for call in ("first call", "second call"):
        traced_args = copy.deepcopy(args)
        got, got_exc, got_warnings = outcome(traced, traced_args)
        if expected_exc is not None:
            assert got_exc is not None, f"{call}: returned {got!r} where NumPy raises {expected_exc!r}"
            assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc)), \
                f"{call}: raised {got_exc!r} where NumPy raises {expected_exc!r}"
        else:
            if got_exc is not None:
                raise AssertionError(f"{call}: raised {got_exc!r} where NumPy returns {expected!r}") from got_exc
            check_same(got, expected, f"{call}: result", rtol)
        assert got_warnings == expected_warnings, \
            f"{call}: RuntimeWarnings {got_warnings} where NumPy gives {expected_warnings}"
        for k, (g, e) in enumerate(zip(traced_args, numpy_args)):
            if isinstance(e, np.ndarray):
                check_same(g, e, f"{call}: argument {k} after the call")
