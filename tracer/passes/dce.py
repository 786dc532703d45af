"""Dead code elimination: drop values nothing uses, unless running them can fail.

A dead `1.0 / y` must stay: CPython evaluates it and raises ZeroDivisionError when y == 0, so the
compiled function has to fail there too. Everything such an op reads stays alive with it.
"""
from __future__ import annotations

from .. import ir
from ..errors import Status
from ..ops import OPS


def may_fail(v: ir.Value) -> bool:
    """`OpDef.may_fail`, sharpened where it is known to be too cautious.

    add/sub/mul/neg/abs list only FALLBACK (an i64 result past 64 bits), but the op table keys
    statuses by op, not by type: on f64 they never fail (overflow gives inf, as in CPython), so
    a dead f64 `a * b` can go.
    """
    if v.op == "loop" or OPS[v.op].effect:
        return True           # a loop that never ends is an effect too: loops are kept
    if v.regions:
        return any(may_fail(x) for region in v.regions for x in region.values)
    opdef = OPS[v.op]
    if opdef.statuses == (Status.FALLBACK,) and v.type != ir.I64 and v.op != "load":
        return False
    return opdef.may_fail(v)


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
