"""Dead code elimination: drop values nothing uses, unless running them can fail.

A dead `1.0 / y` must stay: CPython evaluates it and raises ZeroDivisionError when y == 0, so the
compiled function has to fail there too. Everything such an op reads stays alive with it.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.ops import OPS, sets_fp_flags


def may_fail(v: ir.Value, numpy: bool = False) -> bool:
    """Whether dropping `v` could change what the function does: `OpDef.may_fail`, plus loops
    (one that never ends is an effect too), memory effects, and regions holding such ops; with
    `numpy` (NumPy's semantics, ir.Function.python_on_failure), float array arithmetic too, which
    warns where it makes a NaN or an infinity (`np.zeros(2) * x` with an inf in x)."""
    if v.op == "loop" or OPS[v.op].effect or v.attrs.get("into"):     # a map into arrays writes memory
        return True
    if v.regions and any(may_fail(x, numpy) for region in v.regions for x in region.values):
        return True
    return OPS[v.op].may_fail(v) or (numpy and sets_fp_flags(v))


def eliminate_dead_code(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    _dce_block(out.body, set(), fn.python_on_failure)
    return out


def _dce_block(block: ir.Block, live: set, numpy: bool) -> None:
    """Drop the dead values of `block`; `live` gains every outer value the block reads."""
    live.update(block.results)
    kept = []
    for v in reversed(block.values):    # uses come after definitions: walk backwards
        if v in live or may_fail(v, numpy):
            kept.append(v)
            live.update(v.args)
            for region in v.regions:
                _dce_block(region, live, numpy)
    block.values = kept[::-1]
