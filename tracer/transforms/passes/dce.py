"""Dead code elimination: drop values nothing uses, unless running them can fail.

A dead `1.0 / y` must stay: CPython evaluates it and raises ZeroDivisionError when y == 0, so the
compiled function has to fail there too. Everything such an op reads stays alive with it.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.ops import OPS


def may_fail(v: ir.Value) -> bool:
    """Whether dropping `v` could change what the function does: `OpDef.may_fail`, plus loops
    (one that never ends is an effect too), memory effects, and regions holding such ops."""
    if v.op == "loop" or OPS[v.op].effect or v.attrs.get("into"):     # a map into arrays writes memory
        return True
    if v.regions and any(may_fail(x) for region in v.regions for x in region.values):
        return True
    return OPS[v.op].may_fail(v)


def eliminate_dead_code(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    _dce_block(out.body, set())
    return out


def _dce_block(block: ir.Block, live: set) -> None:
    """Drop the dead values of `block`; `live` gains every outer value the block reads."""
    live.update(block.results)
    kept = []
    for v in reversed(block.values):    # uses come after definitions: walk backwards
        if v in live or may_fail(v):
            kept.append(v)
            live.update(v.args)
            for region in v.regions:
                _dce_block(region, live)
    block.values = kept[::-1]
