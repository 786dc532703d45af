"""Lowering of `index_select` (x[idx]), `index_update` (a copy of x with x[idx] = values) and
`index_add` (a copy of x with np.add.at(x, idx, values); tracer/ir/index_ops.py).

Each visits idx in C order; an index i below 0 counts from the end (i + len(x)), and one still
outside [0, len(x)) fails with SHAPE_MISMATCH (NumPy's IndexError; the Python function raises
it). `index_select` copies row i of x into the result at idx's position; the other two copy x
first (or write into x itself where it is dead after: codegen.ownership), then write (or add) the
values' row at that position (or the one scalar) into row i.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import (
    allocate,
    check_same_sizes,
    copy_elements,
    copy_to_new,
    element_address,
    for_each_index,
    load_element,
    store_element,
)
from codegen.kernel import ArrayValue, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status


def _row(k: KernelBuilder, a: ArrayValue, idx) -> ArrayValue:
    """The view a[idx] (idx: indices of a's leading axes, in bounds)."""
    return ArrayValue(element_address(k, a, tuple(idx)), a.sizes[len(idx):], a.strides[len(idx):])


def _for_rows(k: KernelBuilder, x: ArrayValue, idx: ArrayValue, body) -> None:
    """body(position, i) for each position of idx in C order, i its index into x's first axis
    (wrapped, and checked against len(x): SHAPE_MISMATCH)."""
    b = k.builder
    n = x.sizes[0]

    def visit(position):
        i = load_element(k, idx, position, ir.I64)
        i = b.select(b.icmp_signed("<", i, k.i64(0)), b.add(i, n), i)
        k.fail_if(b.icmp_unsigned(">=", i, n), Status.SHAPE_MISMATCH)     # (unsigned: i < 0 too)
        body(position, i)
    for_each_index(k, idx.sizes, visit)


@lowers("index_select")
def index_select(k: KernelBuilder, v: ir.Value, x: ArrayValue, idx: ArrayValue):
    dtype = v.type.dtype
    out = allocate(k, dtype, tuple(idx.sizes) + tuple(x.sizes[1:]))
    _for_rows(k, x, idx, lambda position, i: copy_elements(k, _row(k, x, (i,)), _row(k, out, position), dtype))
    return out


def _copy_then_write(k: KernelBuilder, v: ir.Value, x: ArrayValue, idx: ArrayValue, values, write) -> ArrayValue:
    dtype = v.type.dtype
    out = x if v in k.reused else copy_to_new(k, x, dtype)      # x's own memory, dead after (codegen.ownership)
    if isinstance(values, ArrayValue):
        check_same_sizes(k, values.sizes, tuple(idx.sizes) + tuple(x.sizes[1:]))
    rest = x.sizes[1:]

    def row(position, i):
        target = _row(k, out, (i,))
        source = _row(k, values, position) if isinstance(values, ArrayValue) else None
        for_each_index(k, rest, lambda r: write(target, r, source, dtype))
    _for_rows(k, x, idx, row)
    return out


def _value(k: KernelBuilder, source, r, dtype, scalar) -> ll.Value:
    return load_element(k, source, r, dtype) if source is not None else scalar


@lowers("index_update")
def index_update(k: KernelBuilder, v: ir.Value, x: ArrayValue, idx: ArrayValue, values):
    def write(target, r, source, dtype):
        store_element(k, target, r, dtype, _value(k, source, r, dtype, values))
    return _copy_then_write(k, v, x, idx, values, write)


@lowers("index_add")
def index_add(k: KernelBuilder, v: ir.Value, x: ArrayValue, idx: ArrayValue, values):
    b = k.builder

    def write(target, r, source, dtype):
        old = load_element(k, target, r, dtype)
        added = _value(k, source, r, dtype, values)
        store_element(k, target, r, dtype, b.fadd(old, added) if dtype in (ir.F64, ir.F32) else b.add(old, added))
    return _copy_then_write(k, v, x, idx, values, write)
