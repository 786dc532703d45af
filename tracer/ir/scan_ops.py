"""Cumulative ops on arrays (registered into `tracer.ir.ops.OPS`): `scan`, NumPy's
`np.add.accumulate` / `np.multiply.accumulate` along one axis (np.cumsum, np.cumprod), and
`np.maximum.accumulate` / `np.minimum.accumulate` (a NaN carries on to the end).

A scan runs in order along its axis, one element after another, exactly as NumPy's accumulate
does, so float results agree with NumPy to the last bit (float32 adds in float32). An int64
result past 64 bits fails with FALLBACK: NumPy wraps it, and the Python function gives that.
A float16 running sum or product is NumPy's float16 loop: each step in float32, rounded to
float16 (one rounding of the exact result); a finite step past float16's range fails with
FALLBACK (NumPy warns "overflow encountered in accumulate").
"""
from __future__ import annotations

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define
from tracer.ir.types import F16, F32, F64, I64, I64_MAX, I64_MIN, ArrayType

SCANS = {"sum", "prod", "max", "min"}


def _scan_type(t, a):
    if len(t) != 1 or not isinstance(t[0], ArrayType) or t[0].dtype not in (F64, F32, F16, I64):
        raise TypeError("scan takes one f64, f32, f16 or i64 array")
    if a["kind"] not in (SCANS if t[0].dtype != F16 else ("sum", "prod")) or not 0 <= a["axis"] < t[0].rank:
        raise TypeError(f"scan: kind {a['kind']!r} along axis {a['axis']} of {t[0]}")
    return t[0]


def _scan(x, kind, axis):
    import numpy as np
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    if x.dtype == np.float16:
        with np.errstate(over="raise"):
            try:
                return ufunc.accumulate(x, axis=axis, dtype=x.dtype)
            except FloatingPointError:
                raise OpFailure(Status.FALLBACK) from None       # NumPy warns: "overflow encountered"
    if x.dtype.kind == "f" or kind in ("max", "min"):
        return ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    exact = ufunc.accumulate(x.astype(object), axis=axis) if x.size else x.copy()
    if any(not I64_MIN <= int(r) <= I64_MAX for r in exact.ravel()):
        raise OpFailure(Status.FALLBACK)          # NumPy's int64 wraps; the Python function gives that
    return exact.astype(np.int64)


def flip(ct, axis: int):
    """A Sym array reversed along `axis` (a `slice` view with step -1 there)."""
    bounds, steps = [], []
    for d in range(ct.type.rank):
        step = -1 if d == axis else 1
        bounds += [ct.constant(I64_MAX if step < 0 else I64_MIN), ct.constant(I64_MIN if step < 0 else I64_MAX)]
        steps.append(step)
    return ct.apply_attrs("slice", *bounds, steps=tuple(steps), shape=ct.type.shape)


def _scan_rule(ct, out, x, kind, axis):
    """d cumsum: the gradient summed from the end (a cumsum of the reversed gradient, reversed)."""
    if kind != "sum":
        raise NotImplementedError(f"the derivative of a cumulative {kind}")
    return flip(flip(ct, axis).apply_attrs("scan", kind="sum", axis=axis), axis)


define("scan", "the running attrs['kind'] (sum, prod, max, min) of x along attrs['axis'], in order (np.cumsum, "
       "np.cumprod, np.maximum.accumulate: NumPy's maximum, NaN wins; "
       "of an f64, f32 or i64 array, or the sum or product of an f16 one; an i64 past 64 bits, or an f16 past "
       "its range, fails with FALLBACK)", _scan_type, _scan,
       [Status.FALLBACK, Status.NO_MEMORY], attrs=("kind", "axis"), vjp=(_scan_rule,))
