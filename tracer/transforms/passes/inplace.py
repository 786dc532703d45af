"""Updates of argument arrays written in place: `W -= lr * g` becomes one pass over W's memory.

A function that updates an argument array ends with `writeback(W, new)` (tracer.frontend.arrays): the
new contents are computed into a fresh array and copied into W last, so a failure before that
changes nothing. When `new` is a `map` that can write into W itself (attrs into=1, W also read
as an operand), the temporary and the copy go away. That is safe when:

  - W is a parameter, the map has the same type, reads W itself (not a view of it: it reads
    W[i, j] only while computing element [i, j]) and no other view of W, and only the
    writeback uses its result;
  - nothing after the map reads W (it would see the new contents) or can fail (a failure must
    still leave the arguments unchanged: the Python function then runs from the start);
  - where NumPy's warnings run the Python function instead (fn.python_on_failure), the map's
    float arithmetic is straight-line: codegen checks all of it before the first write
    (codegen.lower's warnings probe), which it cannot do for values computed in a branch.

Before the first such map an `in_place_check` does what could still fail: each W has the
sizes of what its map reads (SHAPE_MISMATCH) and shares no memory with another argument array
(FALLBACK). The other pairs stay in the writeback.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.ops import FLAG_OPS, OPS

VIEWS = ("transpose", "slice", "broadcast_in_dim", "index")


def update_in_place(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    block = out.body
    writebacks = [v for v in block.values if v.op == "writeback"]
    if len(writebacks) != 1:
        return out
    writeback = writebacks[0]
    uses = out.uses()
    pairs = list(zip(writeback.args[::2], writeback.args[1::2]))
    chosen = {new: target for target, new in pairs
              if _writable_map(target, new, block, writeback, uses, fn.python_on_failure)}
    # keep only maps after the last op that may fail (other than the chosen maps and the writeback)
    while chosen:
        failing = [i for i, v in enumerate(block.values)
                   if v is not writeback and v not in chosen and _may_fail(v)]
        last = failing[-1] if failing else -1
        kept = {m: t for m, t in chosen.items() if block.values.index(m) > last}
        if len(kept) == len(chosen):
            break
        chosen = kept
    if not chosen:
        return out

    maps = sorted(chosen, key=block.values.index)
    between = block.values[block.values.index(maps[0]):block.values.index(writeback)]
    if any((v.regions or OPS[v.op].effect) and v not in chosen for v in between):
        return out       # the maps move to the writeback's place: nothing may write memory in between
    for m in maps:
        block.values.remove(m)
    rest = [x for target, new in pairs if new not in chosen for x in (target, new)]
    # one check before any write: each map's sizes, and no written argument (the ones still
    # copied by the writeback too) shares memory with another argument array
    groups, operands = [], []
    for m in maps:
        arrays = [a for a in dict.fromkeys(m.args) if a is not chosen[m]]
        operands += [chosen[m], *arrays]
        groups.append(1 + len(arrays))
    operands += rest[::2]
    groups += [1] * len(rest[::2])
    check = ir.Value("in_place_check", tuple(operands), ir.TupleType(()), {"groups": tuple(groups)}, maps[0].loc)
    at = block.values.index(writeback)
    block.values[at:at] = [check, *maps]
    for m in maps:
        m.args = (chosen[m], *m.args)
        m.attrs = {**m.attrs, "into": 1}
    if rest:
        writeback.args = tuple(rest)
    else:
        block.values.remove(writeback)
    return ir.verify(out)


def count_in_place(fn: ir.Function) -> int:
    return sum(1 for v in fn.walk() if v.op == "map" and v.attrs.get("into") and v.args[0].op == "param")


def _may_fail(v: ir.Value) -> bool:
    return OPS[v.op].may_fail(v) or any(_may_fail(x) for r in v.regions for x in r.values)


def _flags_in(block: ir.Block) -> bool:
    """Whether float arithmetic in `block` (or deeper) can raise a floating-point flag."""
    return any((x.op in FLAG_OPS and x.type in (ir.F64, ir.F32)) or any(map(_flags_in, x.regions))
               for x in block.values)


def _views_of(target: ir.Value, block: ir.Block) -> set[ir.Value]:
    """`target` and every view made from it (transitively) in `block`."""
    found = {target}
    for v in block.values:
        if v.op in VIEWS and v.args and v.args[0] in found:
            found.add(v)
    return found


def _reads(v: ir.Value, values: set) -> bool:
    return any(a in values for a in v.args) or any(_reads(x, values) for r in v.regions for x in r.values) \
        or any(r in values for region in v.regions for r in region.results)


def _writable_map(target: ir.Value, new: ir.Value, block: ir.Block, writeback: ir.Value, uses: dict,
                  warns: bool) -> bool:
    if target.op != "param" or new.op != "map" or new.attrs.get("into") or new.type != target.type \
            or new not in block.values or uses.get(new) != 1 or target not in new.args:
        return False
    views = _views_of(target, block)
    if any(a in views and a is not target for a in new.args):
        return False
    if any(_may_fail(x) for x in new.regions[0].values):
        return False
    if warns and any(_flags_in(r) for x in new.regions[0].values for r in x.regions):
        return False
    after = block.values[block.values.index(new) + 1:]
    return not any(_reads(x, views) for x in after if x is not writeback) and target not in block.results
