"""Common subexpression elimination: one value per (op, operands, attrs, type).

A later duplicate is dropped and its uses go to the first occurrence. That is safe even for ops
that may fail: the duplicate would fail exactly where the first one already did.
"""
from __future__ import annotations

import struct

from tracer import ir
from tracer.ir.ops import OPS


def constant_key(value: object) -> tuple:
    """Equality for constants: same Python type and, for floats, the same bits.

    So 0.0 and -0.0 differ (1/x tells them apart), a NaN equals a NaN with the same bits, and
    True differs from 1 (bool and i64 are different IR types).
    """
    if isinstance(value, float):
        return (float, struct.pack("<d", value))
    return (type(value), value)


def _attrs_key(v: ir.Value) -> tuple:
    return tuple(sorted((k, constant_key(a)) for k, a in v.attrs.items()))


def eliminate_common_subexpressions(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    position = {p: i for i, p in enumerate(out.params)}
    # where arrays are written (`store`), two equal array ops are two different buffers, and
    # two equal reads may straddle a write: then ops on or making arrays are never merged
    writes = any(v.op == "store" for v in out.walk())
    _cse_block(out.body, {}, {}, position, writes)
    return out


def _touches_arrays(v: ir.Value) -> bool:
    return isinstance(v.type, ir.ArrayType) or any(isinstance(a.type, ir.ArrayType) for a in v.args)


def _cse_block(block: ir.Block, first: dict, replaced: dict, position: dict, writes: bool) -> None:
    """`first` holds the values visible here (a region sees its enclosing blocks' values, and
    what it computes stays inside it: a copy of `first` goes down, nothing comes back up)."""
    for p in block.params:
        position[p] = len(position)
    kept = []
    for v in block.values:
        v.args = tuple(replaced.get(a, a) for a in v.args)
        position[v] = len(position)
        if v.regions or v.op == "raise" or OPS[v.op].effect or (writes and _touches_arrays(v)):
            for region in v.regions:     # control flow, raises, tapes, array writes: never merged
                _cse_block(region, dict(first), replaced, position, writes)
            kept.append(v)
            continue
        args = tuple(position[a] for a in v.args)
        # a + b and b + a are the same value (for f64 only which NaN's bits come through may
        # differ; Python promises nothing about NaN bits, and LLVM commutes these freely too)
        if OPS[v.op].commutative:
            args = tuple(sorted(args))
        key = (v.op, args, _attrs_key(v), v.type)
        if key in first:
            replaced[v] = first[key]
        else:
            first[key] = v
            kept.append(v)
    block.values = kept
    block.results = [replaced.get(r, r) for r in block.results]
