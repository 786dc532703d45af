"""Constant folding: an op whose operands are all constants becomes the constant it computes.

The value comes from the op's own evaluator (`ops.evaluate`, the definition of the op), so folding
cannot disagree with run time: the Python float it returns keeps -0.0, NaN and infinities as they
are. An op whose evaluation fails is left in place, to fail at run time as CPython would.
An `if` on a constant condition is replaced by the region that runs (its values move into the
enclosing block, and the if's tuple becomes a `tuple` of what that region yields).
"""
from __future__ import annotations

from tracer import ir
from tracer.errors import OpFailure
from tracer.ir.ops import OPS, evaluate


def fold_constants(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    replaced: dict[ir.Value, ir.Value] = {}
    _fold_block(out.body, replaced)
    return out


def _fold_block(block: ir.Block, replaced: dict) -> None:
    kept = []
    for v in block.values:
        v.args = tuple(replaced.get(a, a) for a in v.args)
        if v.op == "getitem" and v.args[0].op == "tuple":
            replaced[v] = v.args[0].args[v.attrs["index"]]  # (a, b)[1] is b, constant or not
            continue
        if v.op == "if" and v.args[0].op == "const":       # only one side can run: inline it
            taken = v.regions[0] if v.args[0].attrs["value"] else v.regions[1]
            _fold_block(taken, replaced)
            kept.extend(taken.values)
            t = ir.Value("tuple", tuple(replaced.get(r, r) for r in taken.results), v.type, loc=v.loc)
            replaced[v] = t
            kept.append(t)
            continue
        for region in v.regions:
            _fold_block(region, replaced)
        new = _fold(v)
        replaced[v] = new                   # a new const takes v's place in definition order
        kept.append(new)
    block.values = kept
    block.results = [replaced.get(r, r) for r in block.results]


def _fold(v: ir.Value) -> ir.Value:
    """The const that replaces `v`, or `v` itself."""
    if v.regions or v.op in ("const", "tuple", "raise") or OPS[v.op].effect or not isinstance(v.type, ir.ScalarType):
        return v       # a tuple or an array is not a number
        return v
    if not all(a.op == "const" for a in v.args) or _too_costly(v):
        return v
    try:
        value = evaluate(v, [a.attrs["value"] for a in v.args])
    except OpFailure:
        return v
    if ir.type_of_constant(value) != v.type:          # defensive: the evaluator broke its type rule
        return v
    return ir.Value("const", (), v.type, {"value": value}, loc=v.loc)


def _too_costly(v: ir.Value) -> bool:
    """i64 `a ** b` with |a| >= 2 and b >= 64 falls back at run time anyway, but evaluating it
    in Python would build an integer of up to 2**63 bits first (hours, or memory exhaustion)."""
    if v.op != "pow" or v.type != ir.I64:
        return False
    base, exponent = (a.attrs["value"] for a in v.args)
    return abs(base) >= 2 and exponent >= 64
