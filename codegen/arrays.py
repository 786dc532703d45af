"""Lowering of arrays: how arrays reach and leave a kernel, where they live, and the array ops.

An IR array is NumPy's layout. At the kernel ABI an array parameter is 1 + 2 * rank arguments:

    ptr data, i64 size_0 ... size_{r-1}, i64 stride_0 ... stride_{r-1}      (strides in bytes)

and inside the kernel it is an `ArrayValue` of those LLVM values (codegen.kernel). Element (i_0, ..., i_{r-1}) is
at byte offset sum(i_k * stride_k) from `data`; a stride may be negative (a reversed view) or
zero (a broadcast axis). Loads are unaligned (align 1): a NumPy view can start anywhere.

Views (`broadcast_in_dim`, `transpose`, `index`, `slice`) are new ArrayValues over the same
memory (and so is a `reshape`, an `index_update`, `index_add` or `mask_update` where its operand
is dead after it: codegen.ownership). Every other array op allocates its result, C-contiguous, from the kernel's *arena*: a
linked list of blocks from the kernel's allocator (`KernelBuilder.allocate_bytes`) that
`KernelBuilder.ret` frees before every return, so nothing leaks whatever path the kernel takes.
An array result leaves the kernel as a C-contiguous buffer the caller owns: its out pointer
points at `{ptr data, ptr base, i64 size_0, ..., i64 size_{r-1}}`, and the caller frees `base`
(codegen.entry makes an ndarray over `data` that frees `base` when it dies).
A result the kernel computed into an arena block of its own is handed over as it is (the block
is taken out of the arena); any other (a view, an argument) is copied into a new block.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import (
    I1,
    I64,
    LLVM_TYPES,
    PTR,
    ArrayValue,
    KernelBuilder,
    for_range,
    for_rows,
    for_strips,
)
from codegen.lowerings import lowering_for, lowers
from tracer import ir
from tracer.errors import Status

I8 = ll.IntType(8)
ELEMENT_TYPES = {**LLVM_TYPES, ir.BOOL: I8,     # NumPy's bool is one byte; a complex number is its parts
                 **{t: ll.ArrayType(LLVM_TYPES[ir.PART_TYPE[t]], 2) for t in ir.COMPLEX}}
ITEM_SIZE = {t: ir.BITS[t] // 8 for t in ELEMENT_TYPES}
ARENA_HEADER = 16           # bytes before each arena block's data: the next block (keeps 16-byte alignment)
NULL = ll.Constant(PTR, None)


def result_struct(t: ir.ArrayType) -> ll.LiteralStructType:
    """What an array result's out pointer points at: data, the block to free, and sizes."""
    return ll.LiteralStructType([PTR, PTR] + [I64] * t.rank)


# ------------------------------------------------------------------------------- memory
def uses_arena(fn: ir.Function) -> bool:
    """Whether some op allocates (every array op but views and element reads; a reduction to a
    scalar allocates its accumulator too)."""
    return any(map(_allocates, fn.walk()))


def allocates_in(block: ir.Block) -> bool:
    """Whether some op of `block` (or of a region inside it) allocates (a write into an array,
    `store`, does not)."""
    return any((_allocates(v) and v.op not in WRITES) or any(map(allocates_in, v.regions)) for v in block.values)


WRITES = ("store", "in_place_check", "writeback")


def _allocates(v: ir.Value) -> bool:
    return ((isinstance(v.type, ir.ArrayType) or any(isinstance(a.type, ir.ArrayType) for a in v.args))
            and v.op not in VIEWS and v.op not in ("dim", "load"))


def start_arena(k: KernelBuilder) -> None:
    """The arena's head slot, empty, at the kernel's entry (call before lowering any op), and
    the arena freed at every return."""
    slot = k.builder.alloca(PTR, name="arena")
    k.builder.store(NULL, slot)
    k.arena = slot
    k.cleanups.append(free_arena)


def free_arena(k: KernelBuilder) -> None:
    """Free every block of the arena (emitted before each return)."""
    free_arena_to(k, NULL)


def arena_mark(k: KernelBuilder) -> ll.Value:
    """Where the arena starts now: `free_arena_to` frees what is allocated after it."""
    return k.builder.load(k.arena, typ=PTR)


def free_arena_to(k: KernelBuilder, mark: ll.Value, keep: int = 0) -> None:
    """Free the arena's blocks allocated since `mark` (the newest come first in its list), but
    the newest `keep`. A loop does so at the end of each iteration (codegen.lower._lower_body):
    the arrays its body made die with the iteration, but for copies of those it carries to the
    next, so a loop that makes an array per iteration runs in the memory of a few."""
    b = k.builder
    kept = None
    if keep:
        kept = b.load(k.arena, typ=PTR)              # the oldest block kept
        for _ in range(keep - 1):
            kept = b.load(kept, typ=PTR)
    start = b.block
    head = b.load(kept if keep else k.arena, typ=PTR)
    loop, body, done = (k.function.append_basic_block(n) for n in ("free_arena", "free_block", "arena_freed"))
    b.branch(loop)
    b.position_at_end(loop)
    block = b.phi(PTR)
    block.add_incoming(head, start)
    b.cbranch(b.icmp_unsigned("==", block, mark), done, body)
    b.position_at_end(body)
    following = b.load(block, typ=PTR)
    k.free_bytes(block)
    block.add_incoming(following, body)
    b.branch(loop)
    b.position_at_end(done)
    b.store(mark, kept if keep else k.arena)


def copy_to_new(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType) -> ArrayValue:
    """A C-contiguous copy of `a` in a new arena block."""
    out = allocate(k, dtype, a.sizes)
    copy_elements(k, a, out, dtype)
    return out


MAX_BYTES = 2 ** 62     # the largest array made: its byte count (plus a header) stays a positive i64


def byte_size(k: KernelBuilder, dtype: ir.ScalarType, sizes) -> ll.Value:
    """The bytes of an array of `sizes` (each >= 0). A count past MAX_BYTES returns FALLBACK (the
    Python function raises NumPy's error), never a wrapped product: a small block would be
    overrun. Checked by division, which every target has (no 128-bit multiply on wasm32)."""
    b = k.builder
    n = k.i64(ITEM_SIZE[dtype])
    for s in sizes:
        if isinstance(n, ll.Constant) and isinstance(s, ll.Constant) and 0 <= n.constant * s.constant <= MAX_BYTES:
            n = k.i64(n.constant * s.constant)
            continue
        room = b.udiv(k.i64(MAX_BYTES), b.select(b.icmp_signed("==", s, k.i64(0)), k.i64(1), s))
        k.fail_if(b.icmp_unsigned(">", n, room), Status.FALLBACK)
        n = b.mul(n, s)
    return n


def allocate(k: KernelBuilder, dtype: ir.ScalarType, sizes) -> ArrayValue:
    """A new C-contiguous array in the arena (MemoryError if there is no memory)."""
    b = k.builder
    block = k.allocate_bytes(b.add(byte_size(k, dtype, sizes), k.i64(ARENA_HEADER)))
    k.fail_if(b.icmp_unsigned("==", block, NULL), Status.NO_MEMORY)
    b.store(b.load(k.arena, typ=PTR), block)
    b.store(block, k.arena)
    data = b.gep(block, [k.i64(ARENA_HEADER)], source_etype=I8)
    return ArrayValue(data, tuple(sizes), contiguous_strides(k, dtype, sizes))


def contiguous_strides(k: KernelBuilder, dtype: ir.ScalarType, sizes) -> tuple:
    strides, step = [], k.i64(ITEM_SIZE[dtype])
    for s in reversed(sizes):
        strides.append(step)
        step = k.builder.mul(step, s)
    return tuple(reversed(strides))


# ------------------------------------------------------------------------------- elements
def for_each_index(k: KernelBuilder, sizes, body, prefix=()) -> None:
    """Nested loops over every index of `sizes` in row-major order: body(indices)."""
    if not sizes:
        body(prefix)
        return
    def rest(i):
        for_each_index(k, sizes[1:], body, prefix + (i,))
    if len(sizes) > 1:
        for_rows(k, sizes[0], element_count(k, sizes[1:]), rest)
    else:
        for_range(k, sizes[0], rest)


def element_address(k: KernelBuilder, a: ArrayValue, indices):
    b = k.builder
    offset = k.i64(0)
    for i, stride in zip(indices, a.strides):
        offset = b.add(offset, b.mul(i, stride))
    return b.gep(a.data, [offset], source_etype=I8)


def load_element(k: KernelBuilder, a: ArrayValue, indices, dtype: ir.ScalarType):
    x = k.builder.load(element_address(k, a, indices), typ=ELEMENT_TYPES[dtype], align=1)
    return k.builder.icmp_unsigned("!=", x, ll.Constant(I8, 0)) if dtype == ir.BOOL else x


def store_element(k: KernelBuilder, a: ArrayValue, indices, dtype: ir.ScalarType, x) -> None:
    if dtype == ir.BOOL:
        x = k.builder.zext(x, I8)
    k.builder.store(x, element_address(k, a, indices), align=1)


def copy_elements(k: KernelBuilder, source: ArrayValue, target: ArrayValue, dtype: ir.ScalarType) -> None:
    """target[...] = source (same sizes), element by element in row-major order, as a map: with
    its own loop where both are contiguous along the last axis (LLVM vectorizes it), one loop
    where both are C-contiguous. A bool is copied as its byte."""
    raw = ir.U8 if dtype == ir.BOOL else dtype
    place = ArrayValue(target.data, source.sizes, target.strides)      # (the sizes are the same: no check)
    map_elements(k, [source], [raw], [raw], lambda x: [x], into=[place])


def check_same_sizes(k: KernelBuilder, sizes_a, sizes_b) -> None:
    """Sizes known only at run time that differ: SHAPE_MISMATCH (NumPy raises its ValueError)."""
    b = k.builder
    for x, y in zip(sizes_a, sizes_b):
        if x is not y:
            k.fail_if(b.icmp_signed("!=", x, y), Status.SHAPE_MISMATCH)


def _bounded_index(k: KernelBuilder, i, n):
    """i, counted from the end when negative; out of bounds returns SHAPE_MISMATCH."""
    b = k.builder
    i = b.select(b.icmp_signed("<", i, k.i64(0)), b.add(i, n), i)
    k.fail_if(b.icmp_unsigned(">=", i, n), Status.SHAPE_MISMATCH)   # unsigned: still negative is huge
    return i


# ------------------------------------------------------------------------------ the ops
@lowers("dim")
def dim(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    return a.sizes[v.attrs["axis"]]


@lowers("load")
def load(k: KernelBuilder, v: ir.Value, a: ArrayValue, *indices):
    """a[indices]: a negative index counts from the end; out of bounds returns SHAPE_MISMATCH."""
    indices = [_bounded_index(k, i, n) for i, n in zip(indices, a.sizes)]
    return load_element(k, a, indices, v.type)


@lowers("index")
def index(k: KernelBuilder, v: ir.Value, a: ArrayValue, *indices):
    indices = [_bounded_index(k, i, n) for i, n in zip(indices, a.sizes)]
    data = element_address(k, a, indices)
    return ArrayValue(data, a.sizes[len(indices):], a.strides[len(indices):])


@lowers("broadcast_in_dim")
def broadcast_in_dim(k: KernelBuilder, v: ir.Value, a: ArrayValue, *sizes):
    dims, source = v.attrs["dims"], v.args[0].type.shape
    strides = [k.i64(0)] * len(sizes)
    for axis, (d, n) in enumerate(zip(dims, source)):
        if n == 1:
            continue                       # a size-1 axis repeats: stride 0
        if n is None:
            check_same_sizes(k, (a.sizes[axis],), (sizes[d],))
        strides[d] = a.strides[axis]
    return ArrayValue(a.data, tuple(sizes), tuple(strides))


@lowers("transpose")
def transpose(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    perm = v.attrs["perm"]
    return ArrayValue(a.data, tuple(a.sizes[p] for p in perm), tuple(a.strides[p] for p in perm))


def _slice_bound(k: KernelBuilder, i, n, step: int):
    """Python's slice.indices for one bound: from the end when negative, then clamped."""
    b = k.builder
    i = b.select(b.icmp_signed("<", i, k.i64(0)), b.add(i, n), i)
    low, high = (k.i64(-1), b.sub(n, k.i64(1))) if step < 0 else (k.i64(0), n)
    i = b.select(b.icmp_signed("<", i, k.i64(0)), low, i)
    return b.select(b.icmp_signed(">=", i, n), high, i)


@lowers("slice")
def slice_view(k: KernelBuilder, v: ir.Value, a: ArrayValue, *bounds):
    """x[start:stop:step, ...]: the view starts at the first element, its strides are step times."""
    b = k.builder
    offset, sizes, strides = k.i64(0), [], []
    for axis, step in enumerate(v.attrs["steps"]):
        n, stride = a.sizes[axis], a.strides[axis]
        start = _slice_bound(k, bounds[2 * axis], n, step)
        stop = _slice_bound(k, bounds[2 * axis + 1], n, step)
        span = b.sub(stop, start) if step > 0 else b.sub(start, stop)
        size = b.sdiv(b.add(span, k.i64(abs(step) - 1)), k.i64(abs(step)))
        sizes.append(b.select(b.icmp_signed(">", span, k.i64(0)), size, k.i64(0)))
        offset = b.add(offset, b.mul(start, stride))
        strides.append(b.mul(stride, k.i64(step)))
    return ArrayValue(b.gep(a.data, [offset], source_etype=I8), tuple(sizes), tuple(strides))


@lowers("complex_parts")
def complex_parts(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    part = k.i64(ITEM_SIZE[ir.PART_TYPE[v.args[0].type.dtype]])
    return ArrayValue(a.data, (k.i64(2),) + a.sizes, (part,) + a.strides)


@lowers("complex_from_parts")
def complex_from_parts(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    return ArrayValue(a.data, a.sizes[:-1], a.strides[:-1])


VIEWS = {"broadcast_in_dim", "transpose", "index", "slice", "complex_parts", "complex_from_parts"}


def map_elements(k: KernelBuilder, arrays: list, dtypes: list, out_dtypes: list, element,
                 into: list | None = None) -> list[ArrayValue]:
    """New arrays (or the arrays `into`, written in place), one per out dtype: `element(x_0, ...,
    x_n)` (a list, one scalar per output) of the elements of `arrays` (one shape; sizes that
    differ at run time return FALLBACK), in one loop nest."""
    sizes = arrays[0].sizes
    for other in arrays[1:] + (into or []):
        check_same_sizes(k, sizes, other.sizes)
    outs = into if into is not None else [allocate(k, t, sizes) for t in out_dtypes]

    def loop(inputs, targets, first=None, last=None, shape=sizes):
        def body(idx):
            values = element(*(load_element(k, a, idx, t) for a, t in zip(inputs, dtypes)))
            for out, t, x in zip(targets, out_dtypes, values):
                store_element(k, out, idx, t, x)
        if first is None:
            for_each_index(k, shape, body)
        else:                             # (a strip of a 1-D map: for_strips)
            for_range(k, k.builder.sub(last, first), lambda i: body((k.builder.add(first, i),)))
    if not sizes:
        loop(arrays, outs)
        return outs
    # the common case, every input contiguous along its last axis, gets its own copy of the loop
    # with that stride a constant: LLVM then vectorizes with plain vector loads, not gathers.
    # An input broadcast along the last axis (stride the constant 0: `x[:, None] * g`) is
    # loop-invariant there and fits that case as it is.
    b = k.builder
    unit = ll.Constant(I1, 1)
    every = list(zip(arrays, dtypes)) + list(zip(outs, out_dtypes))
    for a, t in every:
        if not _repeats_along_last_axis(a):
            unit = b.and_(unit, b.icmp_signed("==", a.strides[-1], k.i64(ITEM_SIZE[t])))

    def unit_stride(a, t):
        if _repeats_along_last_axis(a):
            return a
        return ArrayValue(a.data, a.sizes, a.strides[:-1] + (k.i64(ITEM_SIZE[t]),))
    # every array C-contiguous (a new one, most often): the contiguous copy runs one loop over all
    # the elements, not one per row (rows of 2 or 3 elements, points in the plane or in space, do
    # not vectorize), by its trip counts alone: (1, ..., 1, n) instead of the sizes
    shape = sizes
    if len(sizes) > 1 and not any(_repeats_along_last_axis(a) for a, _ in every):   # (whose last stride stays 0)
        whole = ll.Constant(I1, 1)
        for a, t in every:
            whole = b.and_(whole, is_contiguous(k, a, t))
        n = element_count(k, sizes)
        shape = tuple(b.select(whole, k.i64(1), s) for s in sizes[:-1]) + (b.select(whole, n, sizes[-1]),)

    def versions(*strip):
        with b.if_else(unit) as (contiguous, strided):
            with contiguous:
                loop([unit_stride(a, t) for a, t in zip(arrays, dtypes)],
                     [unit_stride(o, t) for o, t in zip(outs, out_dtypes)], *strip, shape=shape)
            with strided:
                loop(arrays, outs, *strip)
    if len(sizes) == 1:                   # both versions in the same strips (polls for signals)
        for_strips(k, sizes[0], versions)
    else:
        versions()
    return outs


def flat_view(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType, n) -> ArrayValue:
    """The C-contiguous array `a` of `n` elements as a 1-D array."""
    return ArrayValue(a.data, (n,), (k.i64(ITEM_SIZE[dtype]),))


def _repeats_along_last_axis(a: ArrayValue) -> bool:
    """Whether the last stride is the constant 0 (a broadcast along the last axis)."""
    stride = a.strides[-1]
    return isinstance(stride, ll.Constant) and stride.constant == 0


def elementwise(k: KernelBuilder, v: ir.Value, operands) -> ArrayValue:
    """A scalar op applied to every element (its scalar operands are the same for each), by the
    op's lowering for the element type."""
    positions = [i for i, a in enumerate(v.args) if isinstance(a.type, ir.ArrayType)]
    scalar = ir.Value(v.op, tuple(ir.Value("param", (), a.type.dtype) if isinstance(a.type, ir.ArrayType) else a
                                  for a in v.args), v.type.dtype, v.attrs)
    scalar_lowering = lowering_for(scalar)

    def element(*xs):
        args = list(operands)
        for i, x in zip(positions, xs):
            args[i] = x
        return [scalar_lowering(k, scalar, *args)]
    return map_elements(k, [operands[i] for i in positions], [v.args[i].type.dtype for i in positions],
                        [v.type.dtype], element)[0]


def element_count(k: KernelBuilder, sizes):
    """The product of `sizes` (i64)."""
    n = k.i64(1)
    for s in sizes:
        n = k.builder.mul(n, s)
    return n


def reduction_start(k: KernelBuilder, kind: str, dtype: ir.ScalarType, count):
    """The start of a reduction. A float sum starts at -0.0 (x + -0.0 is x, even for -0.0) and
    at 0.0 when nothing is summed, as NumPy's sum starts from the first element."""
    if dtype == ir.F64:
        if kind == "sum":
            return k.builder.select(k.builder.icmp_signed("==", count, k.i64(0)), k.f64(0.0), k.f64(-0.0))
        return k.f64({"prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind])
    if dtype == ir.BOOL:
        return ll.Constant(I1, kind == "min")
    return k.i64({"sum": 0, "prod": 1, "max": ir.I64_MIN, "min": ir.I64_MAX}[kind])


@lowers("full")
def full(k: KernelBuilder, v: ir.Value, fill, *sizes):
    for s in sizes:
        k.fail_if(k.builder.icmp_signed("<", s, k.i64(0)), Status.SHAPE_MISMATCH)   # NumPy's ValueError
    out = allocate(k, v.type.dtype, sizes)
    if not v.attrs.get("unread"):         # (else stores write every element before any read)
        for_each_index(k, sizes, lambda idx: store_element(k, out, idx, v.type.dtype, fill))
    return out


@lowers("iota")
def iota(k: KernelBuilder, v: ir.Value, n):
    b = k.builder
    n = b.select(b.icmp_signed("<", n, k.i64(0)), k.i64(0), n)
    out = allocate(k, ir.I64, (n,))
    for_range(k, n, lambda i: store_element(k, out, (i,), ir.I64, i))
    return out


@lowers("pack")
def pack(k: KernelBuilder, v: ir.Value, *elements):
    shape = v.type.shape
    out = allocate(k, v.type.dtype, tuple(k.i64(n) for n in shape))
    positions = [()]
    for n in shape:
        positions = [p + (i,) for p in positions for i in range(n)]
    for position, x in zip(positions, elements):
        store_element(k, out, tuple(k.i64(i) for i in position), v.type.dtype, x)
    return out


@lowers("copy")
def copy(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    if v.op == "copy" and v in k.reused:      # a's own block, dead after (codegen.ownership)
        return a
    out = allocate(k, v.type.dtype, a.sizes)
    copy_elements(k, a, out, v.type.dtype)
    return out


@lowers("store")
def store(k: KernelBuilder, v: ir.Value, target: ArrayValue, value, *indices):
    dtype = v.args[0].type.dtype
    place = index(k, v, target, *indices) if indices else target
    if isinstance(value, ArrayValue):
        check_same_sizes(k, place.sizes, value.sizes)
        copy_elements(k, value, place, dtype)
    else:
        store_element(k, place, (), dtype, value)
    return ()


def _extent(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType):
    """The first and one-past-last byte addresses an array's elements can touch."""
    b = k.builder
    low, high = k.i64(0), k.i64(ITEM_SIZE[dtype])
    for n, s in zip(a.sizes, a.strides):
        reach = b.mul(b.sub(n, k.i64(1)), s)
        negative = b.icmp_signed("<", reach, k.i64(0))
        low = b.add(low, b.select(negative, reach, k.i64(0)))
        high = b.add(high, b.select(negative, k.i64(0), reach))
    empty = b.icmp_signed("==", element_count(k, a.sizes), k.i64(0))
    high = b.select(empty, low, high)
    return b.gep(a.data, [low], source_etype=I8), b.gep(a.data, [high], source_etype=I8)


@lowers("writeback")
def writeback(k: KernelBuilder, v: ir.Value, *pairs, arguments=()):
    """Copy each new contents into its argument array; first, if a written argument shares
    memory with another argument array, FALLBACK (the Python function does it, in its order)."""
    targets = [(t, a.type.dtype) for t, a in zip(pairs[::2], v.args[::2])]
    for target, dtype in targets:
        _check_apart(k, target, dtype)
    for (target, dtype), value in zip(targets, pairs[1::2]):
        copy_elements(k, value, target, dtype)
    return ()


def _check_apart(k: KernelBuilder, target: ArrayValue, dtype: ir.ScalarType) -> None:
    """FALLBACK if argument array `target` shares memory with another argument array."""
    b = k.builder
    t_low, t_high = _extent(k, target, dtype)
    for other, other_type in k.array_params:
        if other is target:
            continue
        o_low, o_high = _extent(k, other, other_type.dtype)
        apart = b.or_(b.icmp_unsigned("<=", t_high, o_low), b.icmp_unsigned("<=", o_high, t_low))
        k.fail_if(b.not_(apart), Status.FALLBACK)


def write_back_if_apart(k: KernelBuilder, target: ArrayValue, dtype: ir.ScalarType, contents: ArrayValue) -> None:
    """target[...] = contents, unless argument array `target` shares memory with another one
    (what an interrupted kernel keeps of a `writeback`, KernelBuilder.poll_signals)."""
    b = k.builder
    t_low, t_high = _extent(k, target, dtype)
    apart = ll.Constant(I1, 1)
    for other, other_type in k.array_params:
        if other is not target:
            o_low, o_high = _extent(k, other, other_type.dtype)
            apart = b.and_(apart, b.or_(b.icmp_unsigned("<=", t_high, o_low), b.icmp_unsigned("<=", o_high, t_low)))
    with b.if_then(apart):
        k.outlined("keep", [contents, target], lambda source, place: copy_elements(k, source, place, dtype))


@lowers("in_place_check")
def in_place_check(k: KernelBuilder, v: ir.Value, *arrays):
    """Before maps write argument arrays in place: per group, the argument's sizes are those of
    the arrays its map reads (else SHAPE_MISMATCH), and it shares no memory with another
    argument array (else FALLBACK). Nothing has been written yet when either fails."""
    start = 0
    for n in v.attrs["groups"]:
        target, *read = arrays[start:start + n]
        for x in read:
            check_same_sizes(k, target.sizes, x.sizes)
        _check_apart(k, target, v.args[start].type.dtype)
        start += n
    return ()


def is_contiguous(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType):
    """Whether `a` is laid out C-contiguously (axes of size 1 may have any stride)."""
    b = k.builder
    ok = ll.Constant(I1, 1)
    for size, stride, expected in zip(a.sizes, a.strides, contiguous_strides(k, dtype, a.sizes)):
        ok = b.and_(ok, b.or_(b.icmp_signed("==", stride, expected), b.icmp_signed("<=", size, k.i64(1))))
    return ok


def _detach(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType):
    """The arena block whose data `a` is, taken out of the arena (so it is not freed), or NULL
    if `a` is not a whole contiguous block of its own."""
    b = k.builder
    if k.arena is None:
        return NULL
    start = b.block
    head, step, found, done = (k.function.append_basic_block(n) for n in
                               ("detach", "detach_next", "detach_found", "detach_done"))
    b.cbranch(is_contiguous(k, a, dtype), head, done)
    b.position_at_end(head)
    slot = b.phi(PTR)                        # the word that points at `block`: the head slot or a block's link
    slot.add_incoming(k.arena, start)
    block = b.load(slot, typ=PTR)
    at_end = b.icmp_unsigned("==", block, NULL)
    mine = b.icmp_unsigned("==", b.gep(block, [k.i64(ARENA_HEADER)], source_etype=I8), a.data)
    b.cbranch(at_end, done, step)
    b.position_at_end(step)
    b.cbranch(mine, found, head)
    slot.add_incoming(block, step)
    b.position_at_end(found)
    b.store(b.load(block, typ=PTR), slot)    # unlink
    b.branch(done)
    b.position_at_end(done)
    result = b.phi(PTR)
    result.add_incoming(NULL, start)
    result.add_incoming(NULL, head)
    result.add_incoming(block, found)
    return result


def export_result(k: KernelBuilder, a: ArrayValue, t: ir.ArrayType, out) -> None:
    """Hand an array result to the caller: write {data, base, sizes} to `out` (see the module
    docstring). Its own arena block goes as it is; anything else is copied into a new block."""
    b = k.builder
    base = _detach(k, a, t.dtype)
    detached = b.icmp_unsigned("!=", base, NULL)
    with b.if_else(detached) as (_, copy_it):
        with _:
            kept = b.block
        with copy_it:
            fresh = k.allocate_bytes(b.add(byte_size(k, t.dtype, a.sizes), k.i64(1)))
            k.fail_if(b.icmp_unsigned("==", fresh, NULL), Status.NO_MEMORY)
            copy_elements(k, a, ArrayValue(fresh, a.sizes, contiguous_strides(k, t.dtype, a.sizes)), t.dtype)
            copied = b.block
    data, owner = b.phi(PTR), b.phi(PTR)
    data.add_incoming(a.data, kept)
    data.add_incoming(fresh, copied)
    owner.add_incoming(base, kept)
    owner.add_incoming(fresh, copied)
    struct = result_struct(t)

    def word(i):
        return b.gep(out, [ll.Constant(ll.IntType(32), 0), ll.Constant(ll.IntType(32), i)], source_etype=struct)
    b.store(data, word(0))
    b.store(owner, word(1))
    for axis, size in enumerate(a.sizes):
        b.store(size, word(2 + axis))

