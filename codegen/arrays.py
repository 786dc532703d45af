"""Lowering of arrays: how an array reaches a kernel, and the ops that read it.

An IR array is NumPy's layout. At the kernel ABI an array parameter is 1 + 2 * rank arguments:

    ptr data, i64 size_0 ... size_{r-1}, i64 stride_0 ... stride_{r-1}      (strides in bytes)

and inside the kernel it is an `ArrayValue` of those LLVM values. Element (i_0, ..., i_{r-1}) is
at byte offset sum(i_k * stride_k) from `data`; a stride may be negative (a reversed view) or
zero (a broadcast axis). Loads are unaligned (align 1): a NumPy view can start anywhere.
"""
from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir as ll

from tracer import ir
from tracer.errors import Status

from .kernel import DOUBLE, I64, PTR, KernelBuilder

I8 = ll.IntType(8)
ELEMENT_TYPES = {ir.F64: DOUBLE, ir.I64: I64, ir.BOOL: I8}     # NumPy's bool is one byte


class ArrayValue(NamedTuple):
    data: ll.Value
    sizes: tuple
    strides: tuple


def abi_types(t: ir.ArrayType) -> list[ll.Type]:
    """The kernel arguments an array parameter takes."""
    return [PTR] + [I64] * (2 * t.rank)


def from_arguments(t: ir.ArrayType, args: list) -> ArrayValue:
    """The ArrayValue of an array parameter, from its kernel arguments (consumed)."""
    data = args.pop(0)
    sizes = tuple(args.pop(0) for _ in range(t.rank))
    strides = tuple(args.pop(0) for _ in range(t.rank))
    return ArrayValue(data, sizes, strides)


def dim(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    return a.sizes[v.attrs["axis"]]


def load(k: KernelBuilder, v: ir.Value, a: ArrayValue, *indices):
    """a[indices]: a negative index counts from the end; out of bounds returns FALLBACK."""
    b = k.builder
    offset = k.i64(0)
    for i, n, stride in zip(indices, a.sizes, a.strides):
        i = b.select(b.icmp_signed("<", i, k.i64(0)), b.add(i, n), i)
        k.fail_if(b.icmp_unsigned(">=", i, n), Status.FALLBACK)   # unsigned: still negative is huge
        offset = b.add(offset, b.mul(i, stride))
    address = b.gep(a.data, [offset], source_etype=I8)
    dtype = v.type
    x = b.load(address, typ=ELEMENT_TYPES[dtype], align=1)
    if dtype == ir.BOOL:
        return b.icmp_unsigned("!=", x, ll.Constant(I8, 0))
    return x


LOWERINGS = {"dim": dim, "load": load}
