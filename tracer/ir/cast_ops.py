"""`cast`: a number converted to another of NumPy's dtypes, as `x.astype(dtype)` converts it.

Narrow dtypes (`int8`...`uint64`, `float16`, `float32`) are computed in a wider type
(`tracer.ir.types.compute_type`): the front end casts operands up, runs the op there, and casts
the result back down. So this one op carries every dtype rule:

- integer to integer: the low bits (NumPy's wraparound: uint8 300 is 44);
- to a float: rounded once, to nearest even; a finite value past the range fails with FALLBACK
  (NumPy gives inf with an "overflow encountered" warning: the Python function runs);
- float to integer: truncated toward zero, where NumPy's C cast gives that; NaN, inf and values
  past the range that cast converts (int32's for targets of 32 bits or less but uint32, int64's
  for uint32 and int64, uint64's for uint64) fail with FALLBACK, so the Python function runs and
  NumPy gives its platform's value and its "invalid value encountered in cast" warning;
- to bool: `x != 0` (NaN is true).

With `checked=True` a cast to an integer also fails with FALLBACK where the value is outside the
target's range. NumPy *scalar*
arithmetic warns there ("overflow encountered in scalar add"), and the Python function gives
that warning; array arithmetic wraps silently, so arrays use the unchecked cast.
"""
from __future__ import annotations

import math

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define
from tracer.ir.types import (
    BOOL,
    DTYPES_BY_NAME,
    F16,
    F32,
    F64,
    FLOATS,
    I8,
    I16,
    I64,
    INTEGERS,
    U8,
    U32,
    U64,
    ScalarType,
    int_range,
)


def float_to_int_range(to: ScalarType) -> tuple[int, int]:
    """The values a float may have (after truncation) for NumPy's C cast to integer type `to` to
    convert without a warning on x86-64: the range of the machine conversion it goes through."""
    if to == U64:
        return -(2 ** 63), 2 ** 64 - 1
    if to in (U32, I64):
        return -(2 ** 63), 2 ** 63 - 1
    return -(2 ** 31), 2 ** 31 - 1


def _cast_type(types, attrs):
    to = DTYPES_BY_NAME.get(attrs.get("to"))
    if len(types) != 1 or not isinstance(types[0], ScalarType) or to is None:
        raise TypeError("cast takes one number and to=<a NumPy dtype name>")
    return to


def _wrapped(x: int, to: ScalarType) -> int:
    lo, hi = int_range(to)
    return (x - lo) % (hi - lo + 1) + lo


def _cast(x, to: str, checked: bool = False):
    import numpy
    t = DTYPES_BY_NAME[to]
    if t == BOOL:
        return bool(x)
    if t in FLOATS:
        with numpy.errstate(over="ignore"):
            r = float(numpy.dtype(to).type(x))
        if math.isinf(r) and not math.isinf(x):       # NumPy warns: "overflow encountered in cast"
            raise OpFailure(Status.FALLBACK)
        return r
    if isinstance(x, float):
        if not math.isfinite(x):
            raise OpFailure(Status.FALLBACK)
        lo, hi = float_to_int_range(t)
        x = int(x)
        if not lo <= x <= hi:
            raise OpFailure(Status.FALLBACK)
    x = int(x)
    if checked and not int_range(t)[0] <= x <= int_range(t)[1]:
        raise OpFailure(Status.FALLBACK)
    return _wrapped(x, t)


def _may_fail(op, v) -> bool:
    """Float to int can always fail; a checked cast to a narrower int range, and a cast to a float
    whose range is smaller than the source's, can."""
    source, to = v.args[0].type, v.type
    if source in FLOATS and to in INTEGERS:
        return True
    if to in INTEGERS and v.attrs.get("checked") and source in INTEGERS:
        return not (int_range(to)[0] <= int_range(source)[0] and int_range(source)[1] <= int_range(to)[1])
    if to == F16:                       # float16's range ends at 65504
        return source not in (BOOL, I8, U8, I16, F16)
    return to == F32 and source == F64


define("cast", "a number as NumPy dtype attrs['to'] (its astype: ints wrap, floats round to nearest, "
        "float to int truncates); checked: an int out of range fails",
        _cast_type, _cast, [Status.FALLBACK], attrs=("to",), fails_when=_may_fail)
