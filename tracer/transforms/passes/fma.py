"""FMA fusion: an f64 `a * b` feeding an add or sub becomes one fused multiply-add.

fma rounds once instead of twice, so results may differ from CPython in the last bits; that is
why fusion is a separate, optional stage (`optimize(fn, fuse_fma=False)` keeps CPython's bits).
  a*b + c, c + a*b -> fma(a, b, c)
  a*b - c          -> fma(a, b, neg(c))     exact: a*b - c is a*b + (-c)
  c - a*b          -> fma(neg(a), b, c)     exact: (-a)*b is -(a*b)
  matmul(a, b)     -> matmul(a, b, fused=True): each sum over k, in the same order, adds every
                      term with one fma
Only a product with exactly one use is fused: a product used elsewhere is computed anyway, and
fusing it would round the same product two different ways in one function.
"""
from __future__ import annotations

from tracer import ir


def fuse_multiply_add(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    _fuse_block(out.body, out.uses(), {})
    return out


def _fuse_block(block: ir.Block, uses: dict, replaced: dict) -> None:
    kept: list[ir.Value] = []
    for v in block.values:
        v.args = tuple(replaced.get(a, a) for a in v.args)
        for region in v.regions:
            _fuse_block(region, uses, replaced)
        fused = _fuse(v, uses)
        if fused:                          # new values take the add/sub's place, in order
            kept.extend(fused)
            replaced[v] = fused[-1]
        else:
            kept.append(v)
    block.values = kept                    # the fused product is left dead, for DCE
    block.results = [replaced.get(r, r) for r in block.results]


def _fuse(v: ir.Value, uses: dict[ir.Value, int]) -> list[ir.Value]:
    """The new values (last: the fma) that replace `v`, or [] to keep it."""
    if v.op == "matmul" and not v.attrs.get("fused"):
        return [ir.Value("matmul", v.args, v.type, {**v.attrs, "fused": True}, loc=v.loc)]
    if v.type != ir.F64 or v.op not in ("add", "sub") or v.regions:
        return []
    def product(x):
        return x.op == "mul" and x.type == ir.F64 and uses.get(x) == 1
    left, right = v.args
    new = []
    def neg(x):
        if x.op == "const":                # -constant is a constant (folding has already run)
            n = ir.Value("const", (), ir.F64, {"value": -x.attrs["value"]}, loc=v.loc)
        else:
            n = ir.Value("neg", (x,), ir.F64, loc=v.loc)
        new.append(n)
        return n
    if product(left):                      # a*b + c, a*b - c
        a, b = left.args
        c = right if v.op == "add" else neg(right)
    elif product(right):                   # c + a*b, c - a*b
        a, b = right.args
        c = left
        if v.op == "sub":
            a = neg(a)
    else:
        return []
    return new + [ir.Value("fma", (a, b, c), ir.F64, loc=v.loc)]


def count_fused(fn: ir.Function) -> int:
    """How many fma ops `fn` has (what fusion did, for dumps, tests and benchmarks); fused
    matmuls are not counted."""
    return sum(v.op == "fma" for v in fn.walk())
