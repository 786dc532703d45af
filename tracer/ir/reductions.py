"""What `reduce` computes, in Python, in the compiled order (codegen.reductions), which is
NumPy's: a float sum adds the runs along the axis NumPy's iterator runs innermost in pairs
(`pairwise_sum`, NumPy's pairwise summation), from 0.0; anything else adds (multiplies, compares)
element after element, row-major over the reduced axes. The op's evaluator (tracer.ir.array_ops).

Of a float16 array, `reduce` (kind sum or prod) is NumPy's float16 loop: called once per run
(`float_runs`: the runs of a float sum), it takes the output as a float32, adds the run's float32
pairwise sum to it (or multiplies the run's elements in, one after another, in float32) and
rounds it to float16 once. Where the iterator runs a kept axis innermost, each element is a call
of its own: every step rounds. A rounding that overflows fails with FALLBACK (NumPy warns:
"overflow encountered in reduce"). With attrs['dtype'] 'float32' it is np.add.reduce(x,
dtype=float32) (np.mean's sum): NumPy's float32 loop fed through its casting buffers of BUFFER
elements, so each run is summed in pieces of that many.
"""
from __future__ import annotations

import math

from tracer.errors import OpFailure, Status
from tracer.ir.types import BOOL, I8, I16, I64_MAX, I64_MIN, U8, U16

# a sum of these is int64 (as NumPy's of bool; NumPy's of int8 and int16 too, and of uint8 and
# uint16 in uint64): it cannot overflow (an array would need 2**47 elements)
COUNTED_SUMS = (BOOL, I8, U8, I16, U16)

BUFFER = 8192            # NumPy's default buffer size (np.getbufsize()): a casting loop's pieces
GATHERED = 1 << 22       # the largest scattered array whose sum is one run (codegen.reductions)


def reduce_in_order(x, kind, axes, keepdims, dtype=None):
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
    if x.dtype == np.float16 and kind in ("sum", "prod"):
        out = _float16_reduction(np, x, kind, axes, kept, flat, dtype)
    elif kind == "sum" and x.dtype in (np.float64, np.float32) and x.ndim:
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


def float_runs(np, x, axes, kept):
    """NumPy's inner-loop calls of a float sum over `axes` (codegen.reductions makes the same), in
    order: (the output's index, the 1-d run of elements one call reduces into it): along the
    axis its iterator runs innermost, merged with the reduced axes before it where the elements
    go on in one stride (`merges`: x.sum(axis=(1, 2)) of a 3-d array is one run per row). None
    where the iterator runs a kept axis innermost (the reduction goes element after element)."""
    if len(axes) == x.ndim:
        if x.ndim == 1:
            return [((), x)]
        if x.flags.c_contiguous or x.flags.f_contiguous:
            return [((), x.ravel(order="K"))]                  # one run, in memory order
        if x.size <= GATHERED:                                 # gathered into one run
            return [((), x.ravel(order="F" if x.ndim == 2 and _first_axis_inner(x) else "C"))]
        inner = x.ndim - 1                                     # by runs along the last axis
    else:
        inner = 0 if x.ndim == 2 and _first_axis_inner(x) else x.ndim - 1
        if inner not in axes:
            return None
    block = [inner]              # with the reduced axes before the last that NumPy merges with it
    while len(axes) < x.ndim and inner == x.ndim - 1 and merges(x.shape, x.strides, axes, block[0] - 1):
        block.insert(0, block[0] - 1)
    others = [d for d in range(x.ndim) if d not in block]
    runs = np.moveaxis(x, block, list(range(len(others), x.ndim)))
    return [(tuple(i for d, i in zip(others, index) if d in kept), runs[index].reshape(-1))
            for index in np.ndindex(*(x.shape[d] for d in others))]


def merges(sizes, strides, axes, d) -> bool:
    """Whether NumPy's iterator merges reduced axis d with the (merged) axes after it, the last
    axis's stride going on over them all (or d has one element)."""
    return d in axes and (sizes[d] == 1 or strides[d] == strides[-1] * math.prod(sizes[d + 1:]))


def _float_sum(np, x, axes, kept, flat):
    runs = float_runs(np, x, axes, kept)
    if runs is None:
        return _in_order(np, flat, "sum", flat.shape[-1])
    out = np.full([x.shape[d] for d in kept], x.dtype.type(0.0))
    for place, run in runs:
        out[place] = out[place] + pairwise_sum(run)
    return out


def _float16_reduction(np, x, kind, axes, kept, flat, dtype):
    """A float16 array's sum or product (the module's docstring); dtype 'float32': its sum in
    float32, by buffers."""
    if dtype not in (None, "float32") or (dtype and kind != "sum"):
        raise ValueError(f"reduce: the {kind} of a float16 array with dtype {dtype}")
    f32, loop = np.float32, dtype is None
    out = np.full([x.shape[d] for d in kept], f32(0.0 if kind == "sum" else 1.0))
    runs = float_runs(np, x, axes, kept) if x.ndim else None
    if runs is None:                                 # element after element: each a call of its own
        for i in range(flat.shape[-1]):
            element = flat[..., i].astype(f32)
            out = out + element if kind == "sum" else out * element
            out = to_float16_values(np, out) if loop else out
    for place, run in runs or ():
        run = run.astype(f32)
        if not loop:
            for start in range(0, len(run), BUFFER):
                out[place] = out[place] + pairwise_sum(run[start:start + BUFFER])
        elif kind == "sum":
            out[place] = to_float16_values(np, out[place] + pairwise_sum(run))
        else:
            out[place] = to_float16_values(np, np.multiply.accumulate(np.append(out[place], run))[-1])
    return out.astype(np.float16) if loop else out


def to_float16_values(np, x):
    """Float32 values rounded to float16 (and back to float32); FALLBACK where a finite one
    overflows (NumPy's "overflow encountered" warning: the Python function gives it)."""
    with np.errstate(over="ignore"):
        half = np.asarray(x, np.float32).astype(np.float16)
    if np.any(np.isinf(half) & np.isfinite(x)):
        raise OpFailure(Status.FALLBACK)
    return half.astype(np.float32) if np.ndim(half) else np.float32(half)


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
