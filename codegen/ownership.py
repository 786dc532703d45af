"""Which array ops may use the memory of their first operand rather than a copy of it, and the
lowering of `reshape`, a view where it may be one.

`index_update`, `index_add` and `mask_update` make a copy of x with some elements written, and
`reshape` a copy of x in other sizes. Where x is an array the kernel made (its own arena block,
C-contiguous: `owns`) and nothing reads x, nor anything that may show x's memory, after the op,
the op writes into x itself (a reshape is x's memory in the new sizes): one pass over memory and
one allocation fewer. NumPy's `out = np.zeros(...); out[idx] = 1.0` is then one fill and the
writes, as in NumPy.

A reshape of an argument array is a view of it too, where the function writes no array at all
(no store, write-back or map into an argument): nothing can change what the view shows, and a
view returned is copied out (codegen.arrays.export_result). Either kind of reshape is a view only
where its operand is C-contiguous at run time (codegen.arrays.reshape); else it copies.

"Nothing may show x's memory after the op" is found per block: a value made from x by an op not
known to make a new array (a view, a tuple, an `if` or a loop reading x in its regions) may show
x's memory as long as it is used itself. An x that an op with effects sees (a call into Python,
a list, a tape) is never written.
"""
from __future__ import annotations

from codegen.arrays import contiguous_strides, copy, element_count, is_contiguous
from codegen.kernel import PTR, ArrayValue, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status
from tracer.ir.array_ops import ELEMENTWISE
from tracer.ir.ops import OPS

TAKERS = ("index_update", "index_add", "mask_update", "reshape")
# ops whose lowering always returns a new C-contiguous arena block of their own
MAKERS = {"full", "iota", "copy", "pack", "index_update", "index_add", "mask_update", "mask_select",
          "index_select", "sort", "argsort", "reshape"}


def owns(v: ir.Value) -> bool:
    """Whether `v` is an array in a new arena block of its own (a reshape of an argument may be
    a view of it: never)."""
    if not isinstance(v.type, ir.ArrayType) or v.regions and v.op != "map":
        return False
    if v.op == "map":
        return not v.attrs.get("into")
    if v.op == "reshape":
        return v.args[0].op != "param"
    return v.op in MAKERS or v.op in ELEMENTWISE


def memory_reuse(fn: ir.Function) -> set[ir.Value]:
    """The TAKERS that write into (or view) their first operand's memory, and the reshapes of
    argument arrays that are views of them (see the module docstring)."""
    found: set[ir.Value] = set()
    _visit(fn.body, found)
    writes = any(v.op in ("store", "writeback") or v.attrs.get("into") for v in fn.walk())
    if not writes:
        found.update(v for v in fn.walk() if v.op == "reshape" and v.args[0].op == "param")
    return found


def _visit(block: ir.Block, found: set) -> None:
    at = {v: i for i, v in enumerate(block.values)}
    end = len(block.values)
    users: dict[ir.Value, list] = {}        # value -> [(position, the top-level user, its slot or None)]
    escapes: set[ir.Value] = set()

    def note(user: ir.Value, top: ir.Value, nested: bool) -> None:
        for slot, a in enumerate(user.args):
            users.setdefault(a, []).append((at[top], top, None if nested else slot))
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
            _visit(region, found)
    live: dict[ir.Value, int] = {}           # value -> the last position where it or what may show it is used

    def until(v: ir.Value, skip: ir.Value | None = None) -> int:
        last = end if v in block.results else -1
        for position, user, slot in users.get(v, ()):
            if user is skip and slot == 0:
                continue
            last = max(last, position)
            if user is not v and _may_show(user, slot):
                last = max(last, live[user])
        return last
    for v in reversed(block.values):
        live[v] = until(v)
    for v in block.values:
        if v.op not in TAKERS or not v.args:
            continue
        x = v.args[0]
        if x in at and owns(x) and x not in escapes and v.args.count(x) == 1 and until(x, skip=v) < at[v]:
            found.add(v)


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
