"""Lowering of `mask_select` (x[mask]) and `mask_update` (a copy of x with x[mask] = values;
tracer/ir/mask_ops.py).

Both check the mask's sizes against x's leading ones (SHAPE_MISMATCH: NumPy's IndexError), then
count the true elements in one pass over the mask. `mask_select` allocates (count, *rest) and
copies, in a second pass, the elements (or sub-arrays of the rest's shape) where the mask is true
into rows 0, 1, ... of it. `mask_update` copies x, checks that array values have count rows
(SHAPE_MISMATCH: NumPy's ValueError) and the rest's sizes, and writes row j of the values (or the
one scalar) at the j-th true position. The running position is a stack slot (SROA makes it a
register).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import (
    allocate,
    check_same_sizes,
    copy_elements,
    element_address,
    for_each_index,
    load_element,
    store_element,
)
from codegen.kernel import I64, ArrayValue, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status


def _count(k: KernelBuilder, mask: ArrayValue) -> ll.Value:
    """The number of true elements of `mask`."""
    b = k.builder
    total = k.stack_slot(I64, "count")
    b.store(k.i64(0), total)

    def body(idx):
        bit = load_element(k, mask, idx, ir.BOOL)
        b.store(b.add(b.load(total, typ=I64), b.zext(bit, I64)), total)
    for_each_index(k, mask.sizes, body)
    return b.load(total, typ=I64)


def _for_true(k: KernelBuilder, mask: ArrayValue, body) -> None:
    """body(idx, j) for each true element of `mask` at idx, j = 0, 1, ... (C order)."""
    b = k.builder
    position = k.stack_slot(I64, "position")
    b.store(k.i64(0), position)

    def visit(idx):
        with b.if_then(load_element(k, mask, idx, ir.BOOL)):
            j = b.load(position, typ=I64)
            body(idx, j)
            b.store(b.add(j, k.i64(1)), position)
    for_each_index(k, mask.sizes, visit)


def _sub(k: KernelBuilder, a: ArrayValue, idx) -> ArrayValue:
    """The view a[idx] (idx: indices of a's leading axes, in bounds)."""
    data = element_address(k, a, tuple(idx))
    return ArrayValue(data, a.sizes[len(idx):], a.strides[len(idx):])


@lowers("mask_select")
def mask_select(k: KernelBuilder, v: ir.Value, x: ArrayValue, mask: ArrayValue):
    dtype = v.type.dtype
    rank = len(mask.sizes)
    check_same_sizes(k, mask.sizes, x.sizes[:rank])
    rest = x.sizes[rank:]
    out = allocate(k, dtype, (_count(k, mask),) + tuple(rest))
    _for_true(k, mask, lambda idx, j: copy_elements(k, _sub(k, x, idx), _sub(k, out, (j,)), dtype))
    return out


@lowers("mask_update")
def mask_update(k: KernelBuilder, v: ir.Value, x: ArrayValue, mask: ArrayValue, values):
    b = k.builder
    dtype = v.type.dtype
    rank = len(mask.sizes)
    check_same_sizes(k, mask.sizes, x.sizes[:rank])
    rest = x.sizes[rank:]
    out = allocate(k, dtype, x.sizes)
    copy_elements(k, x, out, dtype)
    if isinstance(values, ArrayValue):
        k.fail_if(b.icmp_signed("!=", values.sizes[0], _count(k, mask)), Status.SHAPE_MISMATCH)
        check_same_sizes(k, values.sizes[1:], rest)
        _for_true(k, mask, lambda idx, j: copy_elements(k, _sub(k, values, (j,)), _sub(k, out, idx), dtype))
    else:
        _for_true(k, mask, lambda idx, j: for_each_index(
            k, rest, lambda r: store_element(k, _sub(k, out, idx), r, dtype, values)))
    return out
