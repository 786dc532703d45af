"""Algebraic simplification: only identities exact under IEEE-754 doubles and Python's ints.

f64 (every rule holds for all inputs, signed zeros, infinities and NaN included):
  x * 1.0, 1.0 * x, x / 1.0 -> x      multiplying by one is exact, and keeps -0.0 and NaN
  x - 0.0 -> x                        -0.0 - 0.0 is -0.0 and 0.0 - 0.0 is 0.0
  x + -0.0, -0.0 + x -> x             0.0 + -0.0 is 0.0 and -0.0 + -0.0 is -0.0
  x * -1.0, -1.0 * x -> neg(x)        exact sign flip (0.0 * -1.0 is -0.0, like -0.0)
  neg(neg(x)) -> x                    two sign flips
Never on f64: x + 0.0 (-0.0 + 0.0 is +0.0), x - x or x * 0 -> 0 (inf and NaN give NaN; a
negative x * 0 is -0.0), to_f64(to_i64(x)) (truncates).
i64 (the rewritten op cannot overflow, so nothing that could fail is removed):
  x + 0, 0 + x, x - 0, x * 1, 1 * x -> x
  x * 0, 0 * x, x - x -> 0
  neg(neg(x)) -> x                    neg(INT_MIN) fails with FALLBACK, but then the inner neg is
                                      still there (DCE keeps ops that may fail) and fails first;
                                      and FALLBACK means "Python gives the exact answer", which
                                      is x, so replacing the outer neg by x is right either way.
bool:
  not(not(b)) -> b
  select(c, K1, K2) == K1 -> c,  == K2 -> not(c)   for distinct i64 constants K1, K2 (which
                                      exit a branch took: tracer.frontend.branches picks it this way)
(Which NaN comes out of x * -1.0 versus -x may differ in its sign bit; Python does not specify
NaN bits, and only NaN-ness is observable through its float operations.)
"""
from __future__ import annotations

from tracer import ir
from tracer.transforms.passes.cse import constant_key


def _is(v: ir.Value, constant: object) -> bool:
    """Is `v` this exact constant (same type, same bits: -0.0 is not 0.0, 1 is not 1.0)?"""
    return v.op == "const" and constant_key(v.attrs["value"]) == constant_key(constant)


def _zero(v: ir.Value) -> ir.Value:
    return ir.Value("const", (), ir.I64, {"value": 0}, loc=v.loc)


def simplify(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    _simplify_block(out.body, {}, set(out.params))
    return out


def _simplify_block(block: ir.Block, replaced: dict, defined: set) -> None:
    defined.update(block.params)
    kept: list[ir.Value] = []
    for v in block.values:
        v.args = tuple(replaced.get(a, a) for a in v.args)
        for region in v.regions:
            _simplify_block(region, replaced, defined)
        new = v if v.regions else _rewrite(v)
        replaced[v] = new
        if new not in defined:             # v itself, or a new const/neg taking v's place
            defined.add(new)
            kept.append(new)
    block.values = kept
    block.results = [replaced.get(r, r) for r in block.results]


def _rewrite(v: ir.Value) -> ir.Value:
    """What `v` simplifies to: an existing value, a new value, or `v` itself."""
    args = v.args
    if v.type == ir.F64:
        if v.op == "mul":
            for x, c in (args, args[::-1]):
                if _is(c, 1.0):
                    return x
                if _is(c, -1.0):
                    return ir.Value("neg", (x,), ir.F64, loc=v.loc)
        if v.op == "div" and _is(args[1], 1.0):
            return args[0]
        if v.op == "sub" and _is(args[1], 0.0):
            return args[0]
        if v.op == "add":
            for x, c in (args, args[::-1]):
                if _is(c, -0.0):
                    return x
    if v.type == ir.I64 and v.op in ("add", "mul"):
        unit = 0 if v.op == "add" else 1
        for x, c in (args, args[::-1]):
            if _is(c, unit):
                return x
            if v.op == "mul" and _is(c, 0):
                return _zero(v)
    if v.type == ir.I64 and v.op == "sub":
        if _is(args[1], 0):
            return args[0]
        if args[0] is args[1]:
            return _zero(v)
    if v.op == "eq" and args[0].op == "select" and args[1].op == "const" and v.args[1].type == ir.I64:
        c, k1, k2 = args[0].args
        if k1.op == k2.op == "const" and k1.attrs["value"] != k2.attrs["value"]:
            k = args[1].attrs["value"]
            if k == k1.attrs["value"]:
                return c
            if k == k2.attrs["value"]:
                return ir.Value("not", (c,), ir.BOOL, loc=v.loc)
    if v.op in ("neg", "not") and args[0].op == v.op:   # neg(neg(x)) and not(not(b)), any type
        return args[0].args[0]
    return v
