"""Which array ops may use the memory of an operand rather than a copy of it, and the lowering
of `reshape`, a view where it may be one.

`index_update`, `index_add` and `mask_update` make a copy of x with some elements written,
`reshape` a copy of x in other sizes, and `copy` a copy (np.roll by 0 of an array just made).
Where x is an array the kernel made (its own arena block, C-contiguous: `owns`) and nothing
reads x, nor anything that may show x's memory, after the op, the op writes into x itself (a
reshape is x's memory in the new sizes, a copy x itself): one pass over memory and one
allocation fewer. NumPy's `out = np.zeros(...); out[idx] = 1.0` is then one fill and the
writes, as in NumPy. So does a map (an elementwise op) whose result has the type of such an
operand, as NumPy's `total += x` does: each element is read before it is written over.

A reshape of an argument array is a view of it too, where the function writes no argument
array (no write-back, no store or map into a view of an array it did not make): nothing can
change what the view shows, and a view returned is copied out (codegen.arrays.export_result).
Either kind of reshape is a view only where its operand is C-contiguous at run time
(codegen.arrays.reshape); else it copies.

"Nothing may show x's memory after the op" is found per block: a value made from x by an op not
known to make a new array (a view, a tuple, an `if` or a loop reading x in its regions) may show
x's memory as long as it is used itself. An x that an op with effects sees (a call into Python,
a list, a tape) is never written.
"""
from __future__ import annotations

from codegen.arrays import VIEWS, contiguous_strides, copy, element_count, is_contiguous
from codegen.kernel import PTR, ArrayValue, KernelBuilder
from codegen.lowerings import lowers
from codegen.parallel import summed_later
from tracer import ir
from tracer.errors import Status
from tracer.ir.array_ops import ELEMENTWISE
from tracer.ir.ops import OPS

TAKERS = ("index_update", "index_add", "mask_update", "reshape", "copy")
# ops whose lowering always returns a new C-contiguous arena block of their own
MAKERS = {"full", "iota", "copy", "pack", "index_update", "index_add", "mask_update", "mask_select",
          "index_select", "sort", "argsort", "reshape"}


def owns(v: ir.Value) -> bool:
    """Whether `v` is an array in a new arena block of its own (a reshape of an argument may be
    a view of it: never)."""
    if not isinstance(v.type, ir.ArrayType) or v.regions and v.op != "map":
        return False
    if v.op in ("map", "mask_update") and v.attrs.get("into"):
        return False                     # (an argument array, written in place)
    if v.op == "map":
        return True
    if v.op == "reshape":
        return v.args[0].op != "param"
    return v.op in MAKERS or v.op in ELEMENTWISE


def memory_reuse(fn: ir.Function) -> dict[ir.Value, int]:
    """The TAKERS that write into (or view) their first operand's memory, the reshapes of
    argument arrays that are views of them, and the maps that write their result over one of
    their operands: each with the place of that operand (see the module docstring)."""
    found: dict[ir.Value, int] = {}
    _visit(fn.body, found, summed_later(fn))
    if not any(map(_may_write_argument, fn.walk())):
        found.update((v, 0) for v in fn.walk() if v.op == "reshape" and v.args[0].op == "param")
    return found


def _may_write_argument(v: ir.Value) -> bool:
    """Whether `v` may write into an argument array: a write-back, or a store or map into an
    array that is not (a view of) one the kernel made."""
    if v.op == "writeback":
        return True
    targets = v.args[:1] if v.op == "store" else v.args[:v.attrs.get("into", 0)] if v.op in ("map", "mask_update") else ()
    for x in targets:
        while x.op in VIEWS or x.op == "reshape":
            x = x.args[0]
        if not owns(x):
            return True
    return False


def _visit(block: ir.Block, found: dict, later: dict) -> None:
    """`later`: map -> the sum that may compute it (codegen.parallel.summed_later): the map reads
    its operands there, not where it stands."""
    at = {v: i for i, v in enumerate(block.values)}
    end = len(block.values)
    users: dict[ir.Value, list] = {}        # value -> [(position, the top-level user, its slot or None)]
    escapes: set[ir.Value] = set()

    def note(user: ir.Value, top: ir.Value, nested: bool) -> None:
        position = at[later[top]] if top in later and later[top] in at else at[top]
        for slot, a in enumerate(user.args):
            users.setdefault(a, []).append((position, top, None if nested else slot))
            if OPS[user.op].effect:
                escapes.add(a)
        for region in user.regions:
            for r in region.results:
                users.setdefault(r, []).append((at[top], top, None))
            for x in region.values:
                note(x, top, True)

    for v in block.values:
        note(v, v, False)
        for region in v.regions:
            _visit(region, found, later)
    live: dict[ir.Value, int] = {}           # value -> the last position where it or what may show it is used

    def until(v: ir.Value, skip: ir.Value | None = None, skipped: int = 0) -> int:
        last = end if v in block.results else -1
        for position, user, slot in users.get(v, ()):
            if user is skip and slot == skipped:
                continue
            last = max(last, position)
            if user is not v and _may_show(user, slot):
                last = max(last, live[user])
        return last
    for v in reversed(block.values):
        live[v] = until(v)

    def dead_after(x: ir.Value, v: ir.Value, slot: int) -> bool:
        return x in at and owns(x) and x not in escapes and v.args.count(x) == 1 and until(x, v, slot) < at[v]
    for v in block.values:
        if v.op == "map" and _writes_over_operand(v):
            slot = next((i for i, x in enumerate(v.args) if isinstance(x.type, ir.ArrayType)
                         and x.type.dtype == v.type.dtype and x.type.rank == v.type.rank and dead_after(x, v, i)), None)
            if slot is not None:
                found[v] = slot
        elif v.op in TAKERS and v.args and dead_after(v.args[0], v, 0):
            found[v] = 0


def _writes_over_operand(v: ir.Value) -> bool:
    """Whether map `v` may write its result over an operand: one array result, each element
    from the operands' elements at its index alone, straight-line, and nothing in it that may
    fail but with FALLBACK (a map whose element fails otherwise runs again, element by element,
    over its operands, to find the failure; a FALLBACK is the same whichever element fails)."""
    def refused(x: ir.Value) -> bool:
        return bool(x.regions or x.op == "raise" or (OPS[x.op].may_fail(x) and set(OPS[x.op].statuses) - {Status.FALLBACK}))
    return isinstance(v.type, ir.ArrayType) and not v.attrs.get("into") and not any(map(refused, v.regions[0].values))


def _may_show(user: ir.Value, slot: int | None) -> bool:
    """Whether what `user` makes may show the memory of its operand at `slot` (None: a value
    its regions read)."""
    if slot is None:
        return True
    return any(isinstance(t, ir.ArrayType) for t in ir.leaf_types(user.type)) and not owns(user)


@lowers("reshape")
def reshape(k: KernelBuilder, v: ir.Value, a: ArrayValue, *sizes):
    b = k.builder
    for s in sizes:
        k.fail_if(b.icmp_signed("<", s, k.i64(0)), Status.SHAPE_MISMATCH)
    k.fail_if(b.icmp_signed("!=", element_count(k, sizes), element_count(k, a.sizes)), Status.SHAPE_MISMATCH)
    strides = contiguous_strides(k, v.type.dtype, sizes)
    if v not in k.reused:
        return ArrayValue(copy(k, v, a).data, tuple(sizes), strides)
    # a's own memory or an argument nothing writes (codegen.ownership), where it is C-contiguous
    with b.if_else(is_contiguous(k, a, v.type.dtype)) as (contiguous, strided):
        with contiguous:
            viewed = b.block
        with strided:
            dense = copy(k, v, a).data
            copied = b.block
    data = b.phi(PTR)
    data.add_incoming(a.data, viewed)
    data.add_incoming(dense, copied)
    return ArrayValue(data, tuple(sizes), strides)
