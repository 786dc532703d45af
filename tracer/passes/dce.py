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
    opdef = OPS[v.op]
    if opdef.statuses == (Status.FALLBACK,) and v.type != ir.I64:
        return False
    return opdef.may_fail(v)


def eliminate_dead_code(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    live = set(out.body.results)
    kept = []
    for v in reversed(out.body.values):    # uses come after definitions: walk backwards
        # values holding regions (control flow, a later issue) are kept: their effects are unknown
        if v in live or v.regions or may_fail(v):
            kept.append(v)
            live.update(_reads(v))
    out.body.values = kept[::-1]
    return out


def _reads(v: ir.Value):
    """The operands of `v` and of everything inside its regions."""
    yield from v.args
    for region in v.regions:
        yield from region.results
        for inner in region.values:
            yield from _reads(inner)
