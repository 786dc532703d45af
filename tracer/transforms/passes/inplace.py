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
(FALLBACK). The other pairs stay in the writeback. codegen probes every map after the check for
NumPy's warnings before the first of them writes (codegen.lower).

`new` may also be `mask_update(W, mask, values)` of W itself (`W[mask] *= -1`): with attrs into=1
it writes W's memory (codegen.masks), when its mask and values are no view of W and nothing
after it reads W. It checks its sizes before it writes, so it goes first among the writes, and
only one does.

An update made in a branch only (`if norm > m: g *= m / norm`) writes a copy of W, made at the
top of the function, and the writeback copies it into W on either path. Where every written
array is written so, in one `if`, and nothing after the `if` may fail, write memory or read W,
each branch gets its own write-back at its end instead (what it does not write stays as it was)
and its maps write into W as above; the copies go. Only if every pair of the branch goes in
place: a write-back in a branch would run before the rest of the function, which then must
not fail.

Item stores (`x[0] = v`, `out[i] = a[i] * 2.0` in a loop) go to a copy of the argument made at
the top of the function (tracer.frontend.arrays.writable). The stores write the argument itself
instead, after an `in_place_check` at the top (it shares no memory with another argument array,
else FALLBACK before anything is written), where either

  - the function never reads the argument's contents, only its sizes, and the copy is only
    ever written (through views too): then a failure after some stores that runs the Python
    function again (FALLBACK: an IndexError, a NumPy warning) is harmless, Python computes and
    stores the same values again, reading nothing the stores changed, and ends as it would
    have (the same elements written, the same error); or
  - every store and read of the copy is in the function's body (no loop or branch), and nothing
    after the first store may fail (nor raise a NumPy warning where those run Python): a
    store checks its index and sizes before it writes.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.ops import FLAG_OPS, OPS, sets_fp_flags

VIEWS = ("transpose", "slice", "broadcast_in_dim", "index")


def update_in_place(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    writebacks = [v for v in out.body.values if v.op == "writeback"]
    if len(writebacks) != 1:
        return out
    if _stores_in_place(out, writebacks[0]):
        out.body.values.remove(writebacks[0])
        return ir.verify(out)
    trial = ir.clone(out)
    if _into_branch(trial, next(v for v in trial.body.values if v.op == "writeback")):
        return ir.verify(trial)
    if _in_place(out, out.body, writebacks[0]):
        out.body.values.remove(writebacks[0])
    return ir.verify(out)


def _in_place(fn: ir.Function, block: ir.Block, writeback: ir.Value) -> bool:
    """Turn the maps of `writeback` (in `block`) that may write their argument in place into
    such maps, before it; whether none of its pairs is left to copy."""
    uses = fn.uses()
    pairs = list(zip(writeback.args[::2], writeback.args[1::2]))
    chosen = {new: target for target, new in pairs
              if _writable_map(target, new, block, writeback, uses, fn)
              or _writable_update(target, new, block, writeback, uses, fn)}
    # a masked update may fail (sizes) before it writes: only as the first write, and only one
    updates = sorted((m for m in chosen if m.op == "mask_update"), key=block.values.index)
    first = min(map(block.values.index, chosen), default=None)
    for m in updates[1:] if updates and block.values.index(updates[0]) == first else updates:
        del chosen[m]
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
        return False

    maps = sorted(chosen, key=block.values.index)
    between = block.values[block.values.index(maps[0]):block.values.index(writeback)]
    if any((v.regions or OPS[v.op].effect) and v not in chosen for v in between):
        return False     # the maps move to the writeback's place: nothing may write memory in between
    for m in maps:
        block.values.remove(m)
    rest = [x for target, new in pairs if new not in chosen for x in (target, new)]
    # one check before any write: each map's sizes, and no written argument (the ones still
    # copied by the writeback too) shares memory with another argument array
    groups, operands = [], []
    for m in maps:
        arrays = [a for a in dict.fromkeys(m.args) if a is not chosen[m]] if m.op == "map" else []
        operands += [chosen[m], *arrays]
        groups.append(1 + len(arrays))
    operands += rest[::2]
    groups += [1] * len(rest[::2])
    check = ir.Value("in_place_check", tuple(operands), ir.TupleType(()), {"groups": tuple(groups)}, maps[0].loc)
    at = block.values.index(writeback)
    block.values[at:at] = [check, *maps]
    for m in maps:
        if m.op == "map":
            m.args = (chosen[m], *m.args)
        m.attrs = {**m.attrs, "into": 1}
    writeback.args = tuple(rest)
    return not rest


def _into_branch(fn: ir.Function, writeback: ir.Value) -> bool:
    """Move the updates that one `if` makes of copies of the written arguments into its branches,
    each written in place (see the module docstring); False (fn left half-changed) where they
    cannot all be."""
    body = fn.body
    pairs = list(zip(writeback.args[::2], writeback.args[1::2]))
    if not pairs or any(t.op != "param" or c.op != "copy" or c.args[0] is not t or c not in body.values
                        for t, c in pairs):
        return False
    copies = {c: t for t, c in pairs}
    uses = fn.uses()
    for branch in (v for v in body.values if v.op == "if"):
        stores = [[x for x in region.values if x.op == "store" and x.args[0] in copies] for region in branch.regions]
        found = [x.args[0] for region in stores for x in region]
        if not found:
            continue
        if any(len(x.args) != 2 for region in stores for x in region) \
                or any(len({x.args[0] for x in region}) != len(region) for region in stores) \
                or any(uses.get(c) != 1 + found.count(c) for c in copies):
            return False
        after = body.values[body.values.index(branch) + 1:body.values.index(writeback)]
        views = set().union(*(_views_of(t, fn) for t in copies.values()))
        if any(_may_fail(v) or v.regions or OPS[v.op].effect or _reads(v, views) for v in after) \
                or views & set(body.results):
            return False
        for region, written in zip(branch.regions, stores):
            if not written:
                continue
            for x in written:
                region.values.remove(x)
            inner = ir.Value("writeback", tuple(a for x in written for a in (copies[x.args[0]], x.args[1])),
                             ir.TupleType(()), {}, writeback.loc)
            region.values.append(inner)
            if not _in_place(fn, region, inner):
                return False
            region.values.remove(inner)
        body.values.remove(writeback)
        for c in copies:             # (unused now; they may fail only for want of memory)
            body.values.remove(c)
        return True
    return False


def count_in_place(fn: ir.Function) -> int:
    """How many maps, masked updates and item stores write an argument array in place."""
    return sum(1 for v in fn.walk() if (v.op in ("map", "mask_update") and v.attrs.get("into") or v.op == "store")
               and _root(v.args[0]).op == "param")


def _root(v: ir.Value) -> ir.Value:
    while v.op in VIEWS:
        v = v.args[0]
    return v


def _stores_in_place(fn: ir.Function, writeback: ir.Value) -> bool:
    """Let the item stores into the copies of argument arrays (pairs `param, copy(param)` of
    `writeback`) write the arguments themselves, where the module docstring's rules allow;
    whether no pair is left to copy."""
    body = fn.body
    users: dict[ir.Value, list] = {}             # value -> [(user or None for a result, slot)]
    def visit(block: ir.Block) -> None:
        for v in block.values:
            for slot, a in enumerate(v.args):
                users.setdefault(a, []).append((v, slot))
            for region in v.regions:
                visit(region)
        for r in block.results:
            users.setdefault(r, []).append((None, None))
    visit(body)
    top = set(body.values)
    pairs = list(zip(writeback.args[::2], writeback.args[1::2]))
    moved = {}
    for target, copied in pairs:
        if target.op != "param" or copied.op != "copy" or copied.args[0] is not target or copied not in top \
                or len(users.get(copied, ())) < 2 or [t for t, _ in pairs].count(target) != 1:
            continue
        if _only_written(copied, users, writeback, _in_parallel_loops(fn)) and all(
                u is copied or u is writeback or (u is not None and u.op == "dim") for u, _ in users[target]):
            moved[copied] = target
        elif _nothing_fails_after_stores(fn, copied, target, users, writeback, top):
            moved[copied] = target
    if not moved:
        return False
    for v in fn.walk():
        if any(a in moved for a in v.args):
            v.args = tuple(moved.get(a, a) for a in v.args)
    for copied, target in moved.items():
        at = body.values.index(copied)
        body.values[at] = ir.Value("in_place_check", (target,), ir.TupleType(()), {"groups": (1,)}, copied.loc)
    writeback.args = tuple(x for t, c in pairs if c not in moved for x in (t, c))
    return not writeback.args


def _only_written(copied: ir.Value, users: dict, writeback: ir.Value, parallel: set) -> bool:
    """Whether `copied` and the views made of it are only ever the target of stores (or asked
    their sizes), none in a prange loop (its chunks may store past an iteration that fails:
    codegen.prange)."""
    for user, slot in users.get(copied, ()):
        if user is writeback or (user is not None and user.op == "dim"):
            continue
        if user is None or slot != 0 or user.op not in ("store", *VIEWS) or copied in user.args[1:] \
                or user in parallel:
            return False
        if user.op != "store" and not _only_written(user, users, writeback, parallel):
            return False
    return True


def _in_parallel_loops(fn: ir.Function) -> set[ir.Value]:
    return {x for v in fn.walk() if v.op == "loop" and v.attrs.get("parallel")
            for region in v.regions for x in _walk_block(region)}


def _walk_block(block: ir.Block):
    for v in block.values:
        yield from _walk(v)


def _nothing_fails_after_stores(fn: ir.Function, copied: ir.Value, target: ir.Value, users: dict,
                                writeback: ir.Value, top: set) -> bool:
    """Whether every use of `copied` (and of its views) is an op of the body, nothing after its
    first store may fail (the store itself checks before it writes) and nothing after it reads
    `target` (the argument) but through `copied`."""
    shown, stores, pending = {copied}, [], [copied]
    while pending:
        for user, _ in users.get(pending.pop(), ()):
            if user is writeback:
                continue
            if user is None or user not in top:
                return False
            if user.op in VIEWS and user not in shown:
                shown.add(user)
                pending.append(user)
            elif user.op == "store" and user.args[0] in shown:
                stores.append(user)
    if not stores:
        return False
    body = fn.body.values
    first = min(map(body.index, stores))
    if any(u is not copied and u is not writeback and (u is None or u not in top or body.index(u) > first)
           for u, _ in users[target]):
        return False
    warns = fn.python_on_failure
    return not any(v is not writeback and (_may_fail(v) or (warns and any(map(sets_fp_flags, _walk(v)))))
                   for v in body[first + 1:]) and not (writeback.args[2:] and _may_fail(writeback))


def _walk(v: ir.Value):
    yield v
    for region in v.regions:
        for x in region.values:
            yield from _walk(x)


def _may_fail(v: ir.Value) -> bool:
    return OPS[v.op].may_fail(v) or any(_may_fail(x) for r in v.regions for x in r.values)


def _flags_in(block: ir.Block) -> bool:
    """Whether float arithmetic in `block` (or deeper) can raise a floating-point flag."""
    return any((x.op in FLAG_OPS and x.type in (ir.F64, ir.F32)) or any(map(_flags_in, x.regions))
               for x in block.values)


def _views_of(target: ir.Value, fn: ir.Function) -> set[ir.Value]:
    """`target` and every view made from it (transitively) anywhere in `fn`."""
    found = {target}
    for v in fn.walk():
        if v.op in VIEWS and v.args and v.args[0] in found:
            found.add(v)
    return found


def _reads(v: ir.Value, values: set) -> bool:
    return any(a in values for a in v.args) or any(_reads(x, values) for r in v.regions for x in r.values) \
        or any(r in values for region in v.regions for r in region.results)


def _writable_map(target: ir.Value, new: ir.Value, block: ir.Block, writeback: ir.Value, uses: dict,
                  fn: ir.Function) -> bool:
    warns = fn.python_on_failure
    if target.op != "param" or new.op != "map" or new.attrs.get("into") or new.type != target.type \
            or new not in block.values or uses.get(new) != 1 or target not in new.args:
        return False
    views = _views_of(target, fn)
    if any(a in views and a is not target for a in new.args):
        return False
    if any(_may_fail(x) for x in new.regions[0].values):
        return False
    if warns and any(_flags_in(r) for x in new.regions[0].values for r in x.regions):
        return False
    after = block.values[block.values.index(new) + 1:]
    return not any(_reads(x, views) for x in after if x is not writeback) and target not in block.results


def _writable_update(target: ir.Value, new: ir.Value, block: ir.Block, writeback: ir.Value, uses: dict,
                     fn: ir.Function) -> bool:
    """Whether `new` is `W[mask] = values` of argument W itself that may write W's memory: its
    mask and values are no view of W, and nothing after it reads W. It checks the sizes before
    its first write (codegen.masks)."""
    if target.op != "param" or new.op != "mask_update" or new.attrs.get("into") or new.args[0] is not target \
            or new.type != target.type or new not in block.values or uses.get(new) != 1:
        return False
    views = _views_of(target, fn)
    if any(a in views for a in new.args[1:]):
        return False
    after = block.values[block.values.index(new) + 1:]
    return not any(_reads(x, views) for x in after if x is not writeback) and target not in block.results
