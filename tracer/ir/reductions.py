"""What `reduce` computes, in Python, in the compiled order (codegen.reductions), which is
NumPy's: a float sum adds the runs along the axis NumPy's iterator runs innermost in pairs
(`pairwise_sum`, NumPy's pairwise summation), from 0.0; anything else adds (multiplies, compares)
element after element, row-major over the reduced axes. The op's evaluator (tracer.ir.array_ops)."""
from __future__ import annotations

import math

from tracer.errors import OpFailure, Status
from tracer.ir.types import I64_MAX, I64_MIN


def reduce_in_order(x, kind, axes, keepdims):
    """In the compiled order (codegen.reductions, NumPy's): a float sum adds the runs along the
    axis NumPy runs innermost in pairs (`pairwise_sum`), from 0.0; anything else adds
    (multiplies, compares) element after element, row-major over the reduced axes."""
    import numpy as np
    kept = [d for d in range(x.ndim) if d not in axes]
    count = math.prod(x.shape[d] for d in axes)
    if kind in ("max", "min") and count == 0:
        raise OpFailure(Status.SHAPE_MISMATCH)        # NumPy: "zero-size array to reduction operation"
    moved = np.moveaxis(x, list(axes), list(range(len(kept), x.ndim)))
    if kind == "prod" and x.ndim == 2 and not kept and _first_axis_inner(x):
        moved = x.T                                   # NumPy's iterator runs the first axis innermost
    flat = moved.reshape([x.shape[d] for d in kept] + [count])
    if kind == "sum" and x.dtype in (np.float64, np.float32) and x.ndim:
        out = _float_sum(np, x, axes, kept, flat)
    else:
        out = _in_order(np, flat, kind, count)
    if keepdims:
        out = np.reshape(out, [1 if d in axes else n for d, n in enumerate(x.shape)])
    if out.ndim == 0:
        return out.item()
    return out


def _in_order(np, flat, kind, count):
    """The reduction of each row of `flat` (the reduced elements last), element after element."""
    if flat.dtype not in (np.float64, np.float32) and kind in ("sum", "prod"):
        exact = flat.astype(object)
        out = np.sum(exact, axis=-1) if kind == "sum" else np.prod(exact, axis=-1)
        if any(not I64_MIN <= int(r) <= I64_MAX for r in np.ravel(out)):
            raise OpFailure(Status.FALLBACK)    # NumPy's int64 wraps; the Python function gives that
        return np.asarray(out, dtype=np.int64)
    if count == 0:
        return np.full(flat.shape[:-1], 0.0 if kind == "sum" else 1.0, flat.dtype)
    ufunc = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum}[kind]
    out = ufunc.accumulate(flat, axis=-1)[..., -1]
    return out + flat.dtype.type(0.0) if kind == "sum" else out      # (from 0.0: -0.0 sums to 0.0)


def _float_sum(np, x, axes, kept, flat):
    zero = x.dtype.type(0.0)
    if len(axes) == x.ndim:
        if x.ndim == 1:
            return np.asarray(zero + pairwise_sum(x))
        if x.flags.c_contiguous or x.flags.f_contiguous:
            order = "K"
        elif x.size > GATHERED:              # by runs along the last axis (codegen.reductions)
            return _float_sum_by_runs(np, x, x.ndim - 1, kept)
        else:
            order = "F" if x.ndim == 2 and _first_axis_inner(x) else "C"
        return np.asarray(zero + pairwise_sum(x.ravel(order=order)))
    inner = 0 if x.ndim == 2 and _first_axis_inner(x) else x.ndim - 1
    if inner not in axes:
        return _in_order(np, flat, "sum", flat.shape[-1])
    return _float_sum_by_runs(np, x, inner, kept)


def _float_sum_by_runs(np, x, inner, kept):
    out = np.full([x.shape[d] for d in kept], x.dtype.type(0.0))
    along = np.moveaxis(x, inner, -1)
    others = [d for d in range(x.ndim) if d != inner]
    for index in np.ndindex(*along.shape[:-1]):
        place = tuple(i for d, i in zip(others, index) if d in kept)
        out[place] = out[place] + pairwise_sum(along[index])
    return out


GATHERED = 1 << 22       # the largest scattered array whose sum is one run (codegen.reductions)


def _first_axis_inner(x) -> bool:
    """Whether NumPy's iterator runs the first axis of 2-d x innermost: both strides nonzero and
    the first the smaller."""
    first, last = abs(x.strides[0]), abs(x.strides[1])
    return first != 0 and last != 0 and first < last


def pairwise_sum(a):
    """NumPy's pairwise summation of the 1-d array `a` in its own float type (loops_utils.h.src)."""
    n = len(a)
    if n < 8:
        total = a.dtype.type(-0.0)
        for value in a:
            total = total + value
        return total
    if n <= 128:
        r = list(a[:8])
        i = 8
        while i < n - n % 8:
            r = [r[j] + a[i + j] for j in range(8)]
            i += 8
        total = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
        for value in a[i:]:
            total = total + value
        return total
    half = n // 2
    half -= half % 8
    return pairwise_sum(a[:half]) + pairwise_sum(a[half:])
