"""NumPy's dtypes in traced code: which dtype an operation gives (NumPy 2's promotion, NEP 50),
and the conversions between them.

Every NumPy dtype an array can have is an IR scalar type (`tracer.ir.types`). float64, int64 and
bool are computed as they are. The narrow ones (`int8`...`uint64`, `float16`, `float32`) are
stored as they are and computed in a wider type: an op on them casts its operands up to
`compute_type` (i64 or f64), runs there, and casts its result back (`narrow`). For integers that
is exactly NumPy's wraparound; for floats one rounding of the exact result, which for + - * / and
sqrt is the narrow type's own arithmetic. Array results wrap silently, as NumPy's do; a scalar
result (an element's arithmetic: np.uint8(200) + np.uint8(100)) that does not fit fails the cast,
so the Python function runs and NumPy gives its value with its "overflow encountered in scalar
add" warning. float32 has its own older path here (to_f32, to_f64), with the same meaning.

Python numbers are "weak" (NEP 50): `uint8_array + 3` is uint8, `+ 3.0` is float64, and a
Python int the dtype cannot hold is NumPy's OverflowError. A traced scalar NumPy made (an
element of an int64 or float64 array, a reduction) is an np.int64 or np.float64, which is strong.
"""
from __future__ import annotations

import sys

from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.ir import (
    BOOL,
    F32,
    F64,
    FLOATS,
    I64,
    INTEGERS,
    NARROW,
    NUMPY_DTYPE_NAMES,
    U64,
    ArrayType,
    ScalarType,
    compute_type,
    int_range,
)

# the narrow dtypes that go through `cast` (float32 has to_f32 and to_f64 of its own)
CAST_NARROW = tuple(t for t in NARROW if t != F32)


def kind(x) -> ScalarType:
    """The element type of an operand (a Python number's own type)."""
    if is_traced(x):
        return x.type.dtype if isinstance(x.type, ArrayType) else x.type
    return {bool: BOOL, int: I64, float: F64}[type(x)]


def numpy_name(t: ScalarType) -> str:
    return NUMPY_DTYPE_NAMES[t]


def cast(tracer, x, to: ScalarType, checked: bool = False):
    """x as dtype `to` (tracer.ir.cast_ops); `checked`: an integer that does not fit fails."""
    b = tracer.builder
    if is_traced(x) and kind(x) == to:
        return x
    attrs = {"to": numpy_name(to), **({"checked": True} if checked else {})}
    return b.emit("cast", (b.value(x),), **attrs)


def widen(tracer, x):
    """A narrow operand in its compute type (a uint64 past int64's range fails: FALLBACK)."""
    t = kind(x)
    if t not in CAST_NARROW:
        return x
    return cast(tracer, x, compute_type(t), checked=t == U64)


def narrow(tracer, result, dtype: ScalarType, checked: bool = False):
    """An op's result, computed in compute_type(dtype), back in `dtype`: arrays wrap (unless
    `checked`), scalars that do not fit fail (NumPy warns for its scalars)."""
    if kind(result) != compute_type(dtype) or dtype not in CAST_NARROW:
        return result
    return cast(tracer, result, dtype, checked=checked or not isinstance(result.type, ArrayType))


def check_weak_int(x, dtype: ScalarType) -> None:
    """NumPy 2 refuses a Python int that an integer dtype cannot hold (`uint8_array + 300`)."""
    if type(x) is int and dtype in INTEGERS:
        lo, hi = int_range(dtype)
        if not lo <= x <= hi:
            raise OverflowError(f"Python integer {x} out of bounds for {numpy_name(dtype)}")


def is_strong(tracer, x) -> bool:
    """Whether x's own dtype takes part in promotion: an array, a NumPy scalar."""
    if not is_traced(x):
        return False
    return isinstance(x.type, ArrayType) or x.type in NARROW or made_by_numpy(tracer, x)


def promote_narrow(tracer, operands) -> ScalarType:
    """NEP 50's result dtype where a narrow dtype takes part: NumPy's own promotion of the
    strong dtypes, then the weak Python numbers (a float makes an integer result float64, an int
    makes a bool one int64)."""
    import numpy
    strong = [kind(x) for x in operands if is_strong(tracer, x)]
    weak = {kind(x) for x in operands if not is_strong(tracer, x)}
    result = numpy.result_type(*(numpy_name(t) for t in strong))
    t = next(t for t, name in NUMPY_DTYPE_NAMES.items() if numpy.dtype(name) == result)
    if F64 in weak and t not in FLOATS:
        return F64
    if I64 in weak and t == BOOL:
        return I64
    return t


def numpy_scalar_dtype(obj) -> ScalarType | None:
    """The dtype of a NumPy scalar argument (np.float64(2.0), np.uint8(7), np.True_), or None."""
    numpy = sys.modules.get("numpy")
    if numpy is None or not isinstance(obj, numpy.generic):
        return None
    name = obj.dtype.name
    return next((t for t, n in NUMPY_DTYPE_NAMES.items() if n == name and type(obj) is numpy.dtype(n).type), None)


def numpy_constant(tracer, obj):
    """A NumPy scalar met at trace time (np.finfo(x).eps, an attribute of a NumPy object) as a
    traced constant of its dtype that is a NumPy scalar; anything else as it is."""
    t = numpy_scalar_dtype(obj)
    if t is None:
        return obj
    value = cast(tracer, tracer.builder.const(obj.item()), t) if t in NARROW else tracer.builder.const(obj.item())
    tracer.numpy_scalars.add(value)
    return value
