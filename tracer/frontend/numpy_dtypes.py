"""NumPy functions on arrays of the narrow dtypes (int8...uint64, float16): what dtype each gives.

The implementations in `numpy_api`, `numpy_more` and `numpy_sort` compute on int64, float64 (and
float32) arrays. Given an array of a narrow dtype, a function listed here gets its arguments cast
up (exactly) and its result cast to the dtype NumPy gives:

    keep        max, min, sort, ptp...: the input's dtype (each result is one of its elements;
                max, min, argmax and argmin of integers read the elements as they are)
    accumulate  sum, prod, cumsum, cumprod: NumPy's default accumulator, int64 for the signed
                integers and uint64 for the unsigned ones (Linux's `long`)
    index       argmax, argmin, argsort, searchsorted, nonzero: positions (int64)
    to_float    mean, var, std, average, median, percentile, quantile: float64 of integers

float16 keeps its dtype through `keep` and `index`. Its sums, products, means and statistics
(`accumulate`, `to_float`) are float16 as NumPy's, computed in NumPy's float32 steps, rounded to
float16 where NumPy rounds: `tracer.frontend.numpy_float16` (median, percentile and quantile:
their own implementations, tracer.frontend.numpy_sort).
Functions not listed take narrow arrays only where they merely move elements (reshape,
concatenate, slicing: `GraphBuilder.emit` checks the ops); elsewhere a clear "not supported yet".
"""
from __future__ import annotations

from tracer.frontend import numpy_float16
from tracer.frontend.arrays import wrap
from tracer.frontend.dtypes import CAST_NARROW, cast, kind
from tracer.frontend.objects import TracedArray
from tracer.ir import F16, F64, NUMPY_DTYPE_NAMES, U64, UNSIGNED, ArrayType, compute_type
from tracer.ir.reductions import COUNTED_SUMS

KEEP = {"max", "amax", "min", "amin", "sort", "ptp", "nanmax", "nanmin"}
ACCUMULATE = {"sum", "prod", "cumsum", "cumprod", "nansum", "nanprod"}
INDEX = {"argmax", "argmin", "argsort", "searchsorted", "nonzero", "count_nonzero", "digitize"}
EXTREMES = {"max", "amax", "min", "amin", "argmax", "argmin"}     # integers: no cast (not float16)
TO_FLOAT = {"mean", "var", "std", "average", "median", "percentile", "quantile", "nanmean"}


def narrow_dtype(args, kwargs):
    """The first narrow dtype among the array arguments (lists of arrays too), or None."""
    for x in (*args, *kwargs.values()):
        for item in (x if type(x) in (list, tuple) else (x,)):
            if isinstance(item, TracedArray) and item.type.dtype in CAST_NARROW:
                return item.type.dtype
    return None


def _cast_arrays(tracer, x, to_float: bool):
    if type(x) in (list, tuple):
        return type(x)(_cast_arrays(tracer, item, to_float) for item in x)
    if isinstance(x, TracedArray) and x.type.dtype in CAST_NARROW:
        return wrap(tracer, cast(tracer, x.value, F64 if to_float else compute_type(x.type.dtype),
                                 checked=x.type.dtype == U64))
    return x


def _result(tracer, result, dtype):
    """The function's result (arrays and scalars, or a tuple of them) cast to `dtype`."""
    if type(result) is tuple:
        return tuple(_result(tracer, r, dtype) for r in result)
    value = result.value if isinstance(result, TracedArray) else result
    if not hasattr(value, "type") or kind(value) != compute_type(dtype):
        return result
    out = cast(tracer, value, dtype)
    return wrap(tracer, out) if isinstance(out.type, ArrayType) else out


def call_on_narrow(tracer, name: str, impl, dtype, args, kwargs):
    """np.<name>(*args, **kwargs) where an array argument has narrow dtype `dtype`."""
    what = f"np.{name} of a {NUMPY_DTYPE_NAMES[dtype]} array"
    if kwargs.get("dtype") is not None or kwargs.get("out") is not None:
        raise tracer.error(f"{what} with dtype= or out= is not supported yet")
    if name in EXTREMES and dtype != F16 and set(kwargs) <= {"axis", "keepdims"} and len(args) <= 2:
        return impl(tracer, *args, **kwargs)          # of the elements as they are (codegen.extremes)
    if name in KEEP or name in INDEX:
        result = impl(tracer, *_cast_arrays(tracer, args, False), **_cast_arrays(tracer, kwargs, False))
        return _result(tracer, result, dtype) if name in KEEP else result
    if dtype == F16:
        if name in numpy_float16.OWN:
            return impl(tracer, *args, **kwargs)
        if name in numpy_float16.FUNCTIONS:
            return numpy_float16.FUNCTIONS[name](tracer, *args, **kwargs)
        raise tracer.error(f"{what} is not supported yet")
    if name in ACCUMULATE:
        counted = name == "sum" and _counted_sum(args, kwargs)    # read as they are (codegen.reductions)
        result = impl(tracer, *args, **kwargs) if counted else \
            impl(tracer, *_cast_arrays(tracer, args, False), **_cast_arrays(tracer, kwargs, False))
        return _result(tracer, result, U64) if dtype in UNSIGNED else result
    if name in TO_FLOAT:
        return impl(tracer, *_cast_arrays(tracer, args, True), **_cast_arrays(tracer, kwargs, True))
    raise tracer.error(f"{what} is not supported yet")


def _counted_sum(args, kwargs) -> bool:
    """Whether np.sum(x, axis, keepdims=...) sums over some axis of an array x of int8, uint8,
    int16 or uint16: a `reduce` of int64 that reads the elements as they are."""
    if not args or len(args) > 2 or not set(kwargs) <= {"axis", "keepdims"} or "axis" in kwargs and len(args) > 1:
        return False
    x, axis = args[0], args[1] if len(args) > 1 else kwargs.get("axis")
    if not (isinstance(x, TracedArray) and x.type.dtype in COUNTED_SUMS and x.type.rank >= 1):
        return False
    return axis is None or type(axis) is int or type(axis) is tuple and len(axis) > 0 and \
        all(type(d) is int for d in axis)


def handles(name: str) -> bool:
    return name in KEEP | ACCUMULATE | INDEX | TO_FLOAT
