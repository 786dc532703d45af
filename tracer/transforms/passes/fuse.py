"""Loop fusion: a chain of elementwise array ops becomes one `map`, one pass over memory.

`np.exp(x - m) * w + b` is four elementwise ops: unfused, four loops and three temporary
arrays. Each elementwise op on arrays becomes a `map` whose region computes one element, and a
map whose result has exactly one user, another map in the same block, moves into that map's
region (past other maps, which write only their own new arrays). So a chain is one loop that
reads its inputs once and writes its result once:

    %4  map       x, w, b                f64[?]
          element(%5: f64, %6: f64, %7: f64):
    %8    sub     %5, %3                 f64        (%3: the scalar m, read from outside)
    %9    exp     %8                     f64
    %10   mul     %9, %6                 f64
    %11   add     %10, %7                f64
          yield %11

A map's operands are its arrays (one shape; each is read once per element even if used twice);
scalars computed outside are read from the region directly. Fusion never moves a computation
past an op that writes memory (`store`, `writeback`) or holds regions, since those may change
the arrays it reads. Values and failures are those of the unfused ops: each element computes
the same scalar ops in the same order, and any failure of a NumPy function makes the whole call
run Python (ir.Function.python_on_failure), wherever it happens.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.array_ops import ELEMENTWISE
from tracer.ir.ops import OPS


def fuse_elementwise(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    _fuse_block(out.body, out.uses())
    return out


def count_maps(fn: ir.Function) -> int:
    return sum(1 for v in fn.walk() if v.op == "map")


def _fuse_block(block: ir.Block, uses: dict) -> None:
    for v in list(block.values):
        for region in v.regions:
            _fuse_block(region, uses)
        if v.op == "matmul" and _is_outer_product(v):
            _to_broadcast_product(v, block)
        if isinstance(v.type, ir.ArrayType) and (v.op in ELEMENTWISE or _pure_map(v)):
            if v.op != "map":
                before = v.args
                _to_map(v)                # (its arrays once each, however often the op reads them)
                _recount(uses, before, v.args)
            # until none is left: absorbing one producer may leave another map with v as its only
            # user (`np.clip(x * g, lo, hi)` reads x * g in its test and in its select)
            while (producer := next((p for p in dict.fromkeys(v.args) if _fusable(p, v, block, uses)), None)):
                before = v.args + producer.args
                _absorb(v, producer)
                block.values.remove(producer)
                _recount(uses, before, v.args)


def _recount(uses: dict, before: tuple, after: tuple) -> None:
    """Keep `uses` true where operands `before` (of one op, or two) became `after`."""
    for a in before:
        uses[a] = uses.get(a, 0) - 1      # (a new operand of _to_broadcast_product's was not counted)
    for a in after:
        uses[a] = uses.get(a, 0) + 1


def _is_outer_product(v: ir.Value) -> bool:
    a, b = v.args
    return a.type.rank == 2 and b.type.rank == 2 and a.type.shape[1] == 1 and b.type.shape[0] == 1


def _to_broadcast_product(v: ir.Value, block: ir.Block) -> None:
    """A matmul whose sum has one term, `a (m x 1) @ b (1 x n)`, is the product of a and b
    broadcast to m x n: the same numbers (the kernel's sum starts at -0.0, which adds nothing,
    even to -0.0), now an elementwise op that fuses into what uses it (`W -= lr * x.T @ d`)."""
    a, b = v.args
    new = []

    def size(x, axis):
        if x.type.shape[axis] is not None:
            new.append(ir.Value("const", (), ir.I64, {"value": x.type.shape[axis]}, v.loc))
        else:
            new.append(ir.Value("dim", (x,), ir.I64, {"axis": axis}, v.loc))
        return new[-1]
    sizes = (size(a, 0), size(b, 1))
    for x in (a, b):
        new.append(ir.Value("broadcast_in_dim", (x, *sizes), v.type, {"shape": v.type.shape, "dims": (0, 1)}, v.loc))
    at = block.values.index(v)
    block.values[at:at] = new
    v.op, v.args, v.attrs = "mul", (new[-2], new[-1]), {}


def _to_map(v: ir.Value) -> None:
    """Turn elementwise op `v` into a map of the same value (in place: its uses stay)."""
    region = ir.Block()
    element = {}
    for a in v.args:
        if isinstance(a.type, ir.ArrayType) and a not in element:
            element[a] = region.add_param(a.type.dtype, a.loc)
    scalar = ir.Value(v.op, tuple(element.get(a, a) for a in v.args), v.type.dtype, dict(v.attrs), v.loc)
    region.values.append(scalar)
    region.results = [scalar]
    v.op, v.args, v.attrs, v.regions = "map", tuple(element), {}, [region]


def _fusable(producer: ir.Value, consumer: ir.Value, block: ir.Block, uses: dict) -> bool:
    """Whether `producer` (an operand of map `consumer`) can be computed inside it."""
    if producer.op != "map" or not isinstance(producer.type, ir.ArrayType) \
            or uses.get(producer) != 1 or producer not in block.values:
        return False
    start, end = block.values.index(producer), block.values.index(consumer)
    return not any((x.regions and not _pure_map(x)) or x.op in ("store", "writeback") or OPS[x.op].effect
                   for x in block.values[start + 1:end])


def _pure_map(v: ir.Value) -> bool:
    """A map that writes only its new arrays (its region computes scalars: it cannot write)."""
    return v.op == "map" and not v.attrs.get("into")


def _absorb(consumer: ir.Value, producer: ir.Value) -> None:
    """Move map `producer`'s region into map `consumer`'s, where it read producer's element."""
    region = ir.Block()
    arrays: dict[ir.Value, ir.Value] = {}       # operand array -> the new region's parameter

    def element(a):
        if a not in arrays:
            arrays[a] = region.add_param(a.type.dtype, a.loc)
        return arrays[a]

    inner = producer.regions[0]
    ir.copy_block(inner, {p: element(a) for p, a in zip(inner.params, producer.args)}, region)
    produced = region.results[0]
    outer = consumer.regions[0]
    mapping = {p: produced if a is producer else element(a) for p, a in zip(outer.params, consumer.args)}
    ir.copy_block(outer, mapping, region)
    consumer.args = tuple(arrays)
    consumer.regions = [region]
