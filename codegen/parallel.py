"""Maps outlined into functions of their own (`Outlined`): with `parallel=True`, a map over arrays
runs on every core, its first axis cut into chunks that the runtime's thread pool runs
(tracer/csrc/pool.h, `parallel_for`); and a map whose one use is a sum is computed as the sum
goes (`PendingMap`, codegen.reductions.fused_sum), never stored whole.

The map's loop nest goes into a function of its own, `i32 body(ptr ctx, i64 lo, i64 hi)`, which
runs the map over rows lo..hi of its arrays: `ctx` holds what the body reads of the kernel (the
arrays' data, sizes and strides, the scalars the element computation uses), packed into i64
words. A small map (under MIN_ELEMENTS elements) runs its one chunk on the calling thread.

The body never polls for signals and makes no arrays (the kernel allocates the results first).
What it returns, the pool returns for the first chunk that returned anything but 0:
- RERUN where an element's computation failed (its failures are only noted in a flag, as the
  first run of codegen.lower.lower_map notes them): the kernel runs the map again, here, element
  by element, and stops at the first failing element with its status;
- FALLBACK where NumPy would warn (a watched floating-point flag raised in the chunk: each thread
  has flags of its own, codegen.fpflags), as the kernel itself fails after the map.
"""
from __future__ import annotations

import contextlib
from typing import NamedTuple

from llvmlite import ir as ll

from codegen import arrays, fpflags
from codegen.kernel import DOUBLE, FLOAT, I1, I32, I64, PTR, ArrayValue, KernelBuilder, for_range
from tracer import ir
from tracer.errors import Status
from tracer.ir.ops import OPS

PARALLEL_FOR = "__tracer_parallel_for"      # the pool's entry (tracer/csrc/pool.h)
MIN_ELEMENTS = 1 << 15          # elements per chunk, at least: less work is not worth a thread
RERUN = 0x7FFF0001              # a chunk's element failed: run the map again, element by element
BODY_TYPE = ll.FunctionType(I32, [PTR, I64, I64])


def splits(k: KernelBuilder, v: ir.Value) -> bool:
    """Whether the map `v` runs on the pool: parallel code under Python (the JIT), an array result,
    and a region of scalar ops only (no branch, raise, call into Python or NumPy scalar check),
    reading nothing but scalars of the kernel."""
    if not (k.parallel and k.check_signals is not None and k.deferred is None):
        return False
    types = v.type.elements if isinstance(v.type, ir.TupleType) else (v.type,)
    if not all(isinstance(t, ir.ArrayType) and t.rank >= 1 for t in types):
        return False
    region = v.regions[0]
    if any(x.regions or x.op in ("raise", "python_call", "numpy_scalar_check") for x in region.values):
        return False
    return all(isinstance(x.type, ir.ScalarType) and x in k.regions.values for x in free_values(region))


class PendingMap(NamedTuple):
    """A map not lowered where it stands: its one user, a sum of all its elements, computes its
    elements as it adds them (codegen.reductions.fused_sum)."""
    value: ir.Value
    arguments: tuple             # (inputs, dtypes, out_dtypes), as codegen.arrays.map_elements takes them
    element: object              # codegen.lower.lower_map's element(flag)


def summed_later(fn: ir.Function) -> dict[ir.Value, ir.Value]:
    """map -> the sum that is its one use, later in the same block with nothing between that
    could write the arrays the map reads (a store, a write-back, an op with effects, a region
    other than a map's)."""
    uses, found = fn.uses(), {}

    def visit(block: ir.Block) -> None:
        place = {x: i for i, x in enumerate(block.values)}
        for x in block.values:
            for region in x.regions:
                visit(region)
            if x.op != "reduce" or x.args[0].op != "map" or uses.get(x.args[0]) != 1 or x.args[0] not in place:
                continue
            between = block.values[place[x.args[0]] + 1:place[x]]
            if not any((y.regions and y.op != "map") or y.attrs.get("into") or y.op in ("store", "writeback")
                       or OPS[y.op].effect for y in between):
                found[x.args[0]] = x
    visit(fn.body)
    return found


def sums_as_it_goes(k: KernelBuilder, v: ir.Value, user: ir.Value | None) -> bool:
    """Whether the map `v` is better computed inside its sum (`user`, from `summed_later`; None:
    it has none): a 1-d float64 or float32 result, summed whole in its own dtype, a region of
    scalar ops only, reading nothing but scalars of the kernel."""
    if user is None or user.attrs["kind"] != "sum" or user.attrs["keepdims"] \
            or v.attrs.get("into") or k.deferred is not None:
        return False
    if not (isinstance(v.type, ir.ArrayType) and v.type.rank == 1 and v.type.dtype in (ir.F64, ir.F32)
            and user.type == v.type.dtype and user.attrs["axes"] == (0,)):
        return False
    region = v.regions[0]
    if any(x.regions or x.op in ("raise", "python_call", "numpy_scalar_check") for x in region.values):
        return False
    return all(isinstance(x.type, ir.ScalarType) and x in k.regions.values for x in free_values(region))


def free_values(region: ir.Block) -> list[ir.Value]:
    """The values the region's ops read that it does not make (nor its parameters)."""
    inside = set(region.params) | set(region.values)
    free = []
    for x in region.values:
        for a in x.args:
            if a not in inside and a not in free:
                free.append(a)
    return free


class Outlined:
    """A function of the module that computes rows of a map (KernelBuilder.in_function): what it
    reads of the kernel (the arrays' data, sizes and strides, the scalars of the map's region) is
    packed into i64 words at `ctx`, on the kernel's stack, and unpacked in the function, where
    `rows(lo, count)` gives the arrays from row lo, `count` rows long."""

    def __init__(self, k: KernelBuilder, v: ir.Value, arrays_read: list, function_type: ll.FunctionType, name: str):
        self.k, self.arrays_read = k, arrays_read
        b = k.builder
        self.free = free_values(v.regions[0])
        # constants (a stride 0, a static size) stay constants in the function
        self.words = [x for a in arrays_read for x in (a.data, *a.sizes, *a.strides) if not isinstance(x, ll.Constant)]
        self.words += [k.regions.values[x] for x in self.free]
        with b.goto_entry_block():
            self.ctx = b.alloca(I64, size=max(1, len(self.words)), name=f"{name}_ctx")
        for i, x in enumerate(self.words):
            b.store(pack_word(b, x), b.gep(self.ctx, [k.i64(i)], source_etype=I64))
        self.function = ll.Function(k.module, function_type, k.module.get_unique_name(f"{k.function.name}.{name}"))
        self.function.linkage = "internal"
        self.function.attributes.add("nounwind")

    @contextlib.contextmanager
    def inside(self):
        """Emit the function's body (the builder at its entry, the region's scalars unpacked)."""
        k = self.k
        outer_values = {x: k.regions.values[x] for x in self.free}
        with k.in_function(self.function) as bb:
            context = self.function.args[0]
            unpacked = iter([unpack_word(bb, bb.load(bb.gep(context, [k.i64(i)], source_etype=I64), typ=I64), x.type)
                             for i, x in enumerate(self.words)])

            def take(x: ll.Value) -> ll.Value:
                return x if isinstance(x, ll.Constant) else next(unpacked)
            self._fields = []
            for a in self.arrays_read:           # in the words' order: data, sizes, strides
                self._fields.append((take(a.data), tuple(take(s) for s in a.sizes), tuple(take(s) for s in a.strides)))
            for x in self.free:
                k.regions.values[x] = next(unpacked)
            try:
                yield bb
            finally:
                k.regions.values.update(outer_values)

    def rows(self, lo: ll.Value, count: ll.Value) -> list[ArrayValue]:
        """The arrays read, from row lo on, `count` rows; one shape (checked by the kernel): each
        takes the first array's sizes."""
        b = self.k.builder
        sizes = (count, *self._fields[0][1][1:])
        return [ArrayValue(b.gep(data, [b.mul(lo, strides[0])], source_etype=ll.IntType(8)), sizes, strides)
                for data, _, strides in self._fields]


def map_elements(k: KernelBuilder, v: ir.Value, arguments: tuple, element, into: list | None) -> list[ArrayValue]:
    """codegen.arrays.map_elements on the pool: the map's result arrays (or `into`, written)."""
    inputs, dtypes, out_dtypes = arguments
    b = k.builder
    sizes = inputs[0].sizes
    for other in inputs[1:] + (into or []):
        arrays.check_same_sizes(k, sizes, other.sizes)
    outs = into if into is not None else [arrays.allocate(k, t, sizes) for t in out_dtypes]
    body = Outlined(k, v, inputs + outs, BODY_TYPE, "parallel")
    watched = k.numpy_flags is not None and into is None
    with body.inside() as bb:
        _, lo, hi = body.function.args
        chunks = body.rows(lo, bb.sub(hi, lo))
        flag = k.stack_slot(I1, "failed")     # (an op that may fail whatever its may_fail says notes it)
        bb.store(ll.Constant(I1, 0), flag)
        if watched:
            fpflags.clear_flags(k, k.numpy_flags)
        arrays.map_elements(k, chunks[:len(inputs)], dtypes, out_dtypes, element(flag), into=chunks[len(inputs):])
        bb = k.builder
        with bb.if_then(bb.load(flag, typ=I1), likely=False):
            bb.ret(ll.Constant(I32, RERUN))
        if watched:
            with bb.if_then(fpflags.flags_raised(k, k.numpy_flags), likely=False):
                bb.ret(ll.Constant(I32, int(Status.FALLBACK)))
        bb.ret(ll.Constant(I32, 0))
    # the pool: chunks of at least MIN_ELEMENTS elements (rows of the first axis)
    inner = _product(k, sizes[1:])
    grain = b.add(b.udiv(k.i64(MIN_ELEMENTS - 1), inner), k.i64(1)) if sizes[1:] else k.i64(MIN_ELEMENTS)
    run = k.declare_function(PARALLEL_FOR, ll.FunctionType(I32, [PTR, PTR, I64, I64]), ("nounwind",))
    status = b.call(run, [body.function, body.ctx, sizes[0], grain])
    with b.if_then(b.icmp_unsigned("==", status, ll.Constant(I32, RERUN)), likely=False):
        arrays.map_elements(k, inputs, dtypes, out_dtypes, element(None), into=outs)
    k.fail_if(b.icmp_unsigned("==", status, ll.Constant(I32, int(Status.FALLBACK))), Status.FALLBACK)
    return outs


MAX_PIECES = 64                 # pieces of a whole-array reduction on the pool, at most


def reduce_rows(k: KernelBuilder, a: ArrayValue, out: ArrayValue, start: ll.Constant, in_order, combine) -> None:
    """A reduction of all of `a` (rank >= 1) into the 0-d `out`, which holds `start`, on the pool
    (`by_pieces`): `in_order(rows, slot)` reduces rows into a 0-d ArrayValue `slot` that holds
    the start, element after element, and `combine(acc, x)` folds the pieces' values in their
    order. For max and min that is the one-thread result (a piece's value is its last extreme
    element, and a tie goes to the later one there too)."""
    b = k.builder
    with b.goto_entry_block():
        slots = b.alloca(start.type, size=MAX_PIECES, name="pieces")

    def piece(c, rows, inner_slots):
        slot = k.builder.gep(inner_slots, [c], source_etype=start.type)
        k.builder.store(start, slot)
        in_order(rows[0], ArrayValue(slot, (), ()))

    def combined(pieces):
        value = for_range(k, pieces, lambda c, acc: [combine(acc, b.load(b.gep(slots, [c], source_etype=start.type),
                                                                         typ=start.type))], [start])[0]
        b.store(value, out.data)
    by_pieces(k, [a], [slots], piece, "reduce", lambda: in_order(a, out), combined)


def split_rows(k: KernelBuilder, a: ArrayValue, axis: int, out: ArrayValue, reduce_into) -> None:
    """A reduction that keeps `axis` of `a` (the first axis of its result `out`), on the pool
    (`by_pieces`): `reduce_into(part, out_part)` reduces indices lo..hi along that axis of `a`
    into rows lo..hi of `out`. Each result element is computed as it is on one thread (the order
    within it depends on the strides only), so the results are the one-thread results bit for bit."""
    by_pieces(k, [a, out], [], lambda c, rows: reduce_into(*rows), "reduce_rows", lambda: reduce_into(a, out),
              axes=[axis, 0])


def by_pieces(k: KernelBuilder, cut: list, extra: list, emit, name: str, alone, after=None, axes=None) -> None:
    """Run emit(c, rows, *extra) for each piece c of an axis of the arrays `cut` (`axes`, one per
    array, of one length; default their first), in a function of the module, on the pool, then
    after(pieces): `rows` are the arrays' parts of the piece; the number of pieces depends on the
    sizes only, never on the threads: one per MIN_ELEMENTS elements of the first array, at most
    MAX_PIECES or one per index of the axis.
    With one piece (under 2 * MIN_ELEMENTS elements), alone() runs instead, inline. A piece that
    fails (an int sum past 64 bits, a watched floating-point flag raised) makes the kernel return
    FALLBACK: the Python function runs and raises or warns as it does."""
    b = k.builder
    umin = lambda x, y: k.call_intrinsic("llvm.umin.i64", I64, [I64, I64], x, y)
    axes = axes or [0] * len(cut)
    first_array = cut[0]
    pieces = umin(umin(b.udiv(_product(k, first_array.sizes), k.i64(MIN_ELEMENTS)), k.i64(MAX_PIECES)),
                  first_array.sizes[axes[0]])
    with b.if_else(b.icmp_unsigned(">", pieces, k.i64(1))) as (on_pool, one_piece):
        with on_pool:
            _run_pieces(k, cut, axes, extra, emit, name, pieces)
            if after is not None:
                after(pieces)
        with one_piece:
            alone()


def _run_pieces(k: KernelBuilder, cut: list, axes: list, extra: list, emit, name: str, pieces: ll.Value) -> None:
    """by_pieces' function of the module and its run on the pool (the arrays and `extra` packed
    into words on the kernel's stack)."""
    b = k.builder
    words = [pieces, *extra] + [x for a in cut for x in (a.data, *a.sizes, *a.strides)]
    with b.goto_entry_block():
        ctx = b.alloca(I64, size=len(words), name=f"{name}_ctx")
    for i, x in enumerate(words):
        b.store(pack_word(b, x), b.gep(ctx, [k.i64(i)], source_etype=I64))
    function = ll.Function(k.module, BODY_TYPE, k.module.get_unique_name(f"{k.function.name}.{name}"))
    function.linkage = "internal"
    function.attributes.add("nounwind")
    watched = k.numpy_flags is not None
    with k.in_function(function) as bb:
        context, first, end = function.args
        if watched:
            fpflags.clear_flags(k, k.numpy_flags)
        unpacked = iter([unpack_word(bb, bb.load(bb.gep(context, [k.i64(i)], source_etype=I64), typ=I64), x.type)
                         for i, x in enumerate(words)])
        count = next(unpacked)
        inner_extra = [next(unpacked) for _ in extra]
        arrays_in = []
        for a in cut:
            rank = len(a.sizes)
            arrays_in.append((next(unpacked), [next(unpacked) for _ in range(rank)],
                              [next(unpacked) for _ in range(rank)]))

        def piece(i):
            bb = k.builder
            c = bb.add(first, i)
            n = arrays_in[0][1][axes[0]]
            lo = bb.udiv(bb.mul(c, n), count)
            hi = bb.udiv(bb.mul(bb.add(c, k.i64(1)), n), count)
            rows = [ArrayValue(bb.gep(data, [bb.mul(lo, strides[d])], source_etype=ll.IntType(8)),
                               (*sizes[:d], bb.sub(hi, lo), *sizes[d + 1:]), tuple(strides))
                    for (data, sizes, strides), d in zip(arrays_in, axes)]
            emit(c, rows, *inner_extra)
        for_range(k, bb.sub(end, first), piece)
        if watched:          # NumPy would warn: FALLBACK, as the kernel fails where it computes the op itself
            k.fail_if(fpflags.flags_raised(k, k.numpy_flags), Status.FALLBACK)
        k.ret(Status.OK)
    k.poll_now()          # (where the kernel's entry allows, the GIL is released from here on)
    run = k.declare_function(PARALLEL_FOR, ll.FunctionType(I32, [PTR, PTR, I64, I64]), ("nounwind",))
    status = b.call(run, [function, ctx, pieces, k.i64(1)])
    k.fail_if(b.icmp_unsigned("!=", status, ll.Constant(I32, 0)), Status.FALLBACK)   # (an int past 64 bits)


def _product(k: KernelBuilder, sizes) -> ll.Value:
    value = k.i64(1)
    for s in sizes:
        value = k.builder.mul(value, s)
    return value


def pack_word(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
    """x as an i64 word."""
    t = x.type
    if t == PTR:
        return b.ptrtoint(x, I64)
    if t == DOUBLE:
        return b.bitcast(x, I64)
    if t == FLOAT:
        return b.zext(b.bitcast(x, I32), I64)
    if isinstance(t, ll.IntType) and t.width < 64:
        return b.zext(x, I64)
    if t == I64:
        return x
    raise NotImplementedError(f"codegen.parallel: cannot pass a {t} to a chunk")


def unpack_word(b: ll.IRBuilder, word: ll.Value, t: ll.Type) -> ll.Value:
    """The value of type t that `pack_word` made the word of."""
    if t == PTR:
        return b.inttoptr(word, PTR)
    if t == DOUBLE:
        return b.bitcast(word, DOUBLE)
    if t == FLOAT:
        return b.bitcast(b.trunc(word, I32), FLOAT)
    if isinstance(t, ll.IntType) and t.width < 64:
        return b.trunc(word, t)
    return word

