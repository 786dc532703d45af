"""Lowering of `scan` (np.cumsum, np.cumprod, np.maximum.accumulate, np.minimum.accumulate): the
running sum, product, maximum or minimum along one axis.

One loop nest over the result in row-major order: element i of the axis is element i - 1 of the
result (already written, since row-major order visits it first; along the last axis, kept in a
register rather than read back) combined with x's element i,
and the first element of the axis starts from 0 (-0.0 for floats: -0.0 + x is x) or 1. So the
sum runs in order along the axis, as NumPy's accumulate does; float32 adds in float32; an int64
past 64 bits returns FALLBACK (NumPy wraps it). A running maximum is NumPy's `maximum` loop:
the earlier value where it is > the next or NaN, else the next (so a NaN carries on). Float16
steps are NumPy's float16 loop: in float32, each result rounded to float16 (codegen.reductions's
float_to_half: past float16's range, FALLBACK).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import allocate, for_each_index, load_element, store_element
from codegen.kernel import ArrayValue, KernelBuilder, for_range
from codegen.lowerings import lowers
from codegen.reductions import float_to_half, half_to_float
from tracer import ir

START = {"sum": -0.0, "prod": 1.0, "max": 0.0, "min": 0.0}     # (max, min: the first element itself)


@lowers("scan")
def scan(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    b = k.builder
    kind, axis, dtype = v.attrs["kind"], v.attrs["axis"], v.type.dtype
    out = allocate(k, dtype, a.sizes)
    if dtype == ir.I64:
        start = k.i64(int(START[kind]))
    elif dtype == ir.F16:
        start = ll.Constant(ll.FloatType(), START[kind])        # (the steps in float32)
    else:
        start = ll.Constant(ll.FloatType() if dtype == ir.F32 else ll.DoubleType(), START[kind])

    def step(idx, first, previous):
        """Element idx of the result from the one before it (`previous`, as read back): stored,
        and returned as the next one will read it."""
        x = load_element(k, a, idx, dtype)
        if dtype == ir.F16:
            x = half_to_float(b, x)
        previous = b.select(first, start, previous)
        if kind in ("max", "min"):
            value = b.select(first, x, _extremum(k, kind, dtype, previous, x))
        elif dtype == ir.I64:
            value = k.checked("sadd" if kind == "sum" else "smul", previous, x)
        else:
            value = b.fadd(previous, x) if kind == "sum" else b.fmul(previous, x)
        if dtype == ir.F16:
            value = float_to_half(k, value)
            store_element(k, out, idx, dtype, value)
            return half_to_float(b, value)
        store_element(k, out, idx, dtype, value)
        return value

    if a.sizes and axis == len(a.sizes) - 1:      # along each line, the running value in a register
        def line(outer):
            for_range(k, a.sizes[axis], lambda i, running: [step((*outer, i), b.icmp_signed("==", i, k.i64(0)), running)],
                      [start])
        for_each_index(k, a.sizes[:-1], line)
        return out

    def body(idx):                        # across lines: each element from the line before it
        first = b.icmp_signed("==", idx[axis], k.i64(0))
        before = list(idx)
        before[axis] = b.select(first, k.i64(0), b.sub(idx[axis], k.i64(1)))
        previous = load_element(k, out, before, dtype)
        step(idx, first, half_to_float(b, previous) if dtype == ir.F16 else previous)
    for_each_index(k, a.sizes, body)
    return out


def _extremum(k: KernelBuilder, kind: str, dtype, a, b_):
    """NumPy's maximum(a, b) / minimum(a, b): a where a > b (a < b) or a is NaN, else b (of equal zeros, b)."""
    b = k.builder
    op = ">" if kind == "max" else "<"
    if dtype == ir.I64:
        return b.select(b.icmp_signed(op, a, b_), a, b_)
    keep = b.or_(b.fcmp_ordered(op, a, b_), b.fcmp_unordered("uno", a, a))
    return b.select(keep, a, b_)
