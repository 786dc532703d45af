"""Lowering of the reductions (`reduce`; `argreduce` in codegen.extremes), in NumPy's order.

NumPy's `np.add.reduce` (sum, mean, var...) adds the elements of each run along the array's
last axis *in pairs* (`pairwise_sum` below: blocks of up to 128 elements summed in 8 running
sums, halves of longer runs summed apart and then added), into an output that starts at 0.0;
the runs follow one another in row-major order. An array whose elements are one block of
memory (C- or Fortran-contiguous) summed over every axis is a single run, in memory order.
A sum that keeps the last axis adds element after element (NumPy's inner loop then runs along
the kept axis). Products, maxima and minima go element after element. float32 adds and
multiplies in float32, as NumPy does. (NumPy may reorder the axes of an array of another
layout, a transposed view reduced over some of its axes: there the last bits of a sum may
differ.)

A float16 array's sum or product is NumPy's float16 loop (tracer.ir.reductions): the same runs,
each added (pairwise, `pairwise_sum` reading float16 into float32) or multiplied into the output
taken as a float32, rounded to float16 once per run; where a kept axis runs innermost every
element rounds. Its sum with dtype float32 (np.mean's) sums each run in pieces of BUFFER elements,
NumPy's casting buffers.

An integer or bool sum over every axis of one block of memory is one flat loop (codegen.int_sums);
bools and int8...uint16 (COUNTED_SUMS) add into int64 unchecked, as they cannot overflow.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen import extremes, int_sums
from codegen.arrays import (
    ELEMENT_TYPES,
    ITEM_SIZE,
    allocate,
    check_same_sizes,
    copy_elements,
    element_address,
    element_count,
    for_each_index,
    load_element,
    map_elements,
    store_element,
)
from codegen.casts import double_to_half, half_to
from codegen.kernel import DOUBLE, FLOAT, I1, I32, I64, PTR, ArrayValue, KernelBuilder, for_range
from codegen.lowerings import lowers
from codegen.parallel import Outlined, PendingMap, reduce_rows, split_rows
from tracer import ir
from tracer.errors import Status
from tracer.ir.reductions import COUNTED_SUMS

FLOATS = {ir.F64: DOUBLE, ir.F32: FLOAT}
PAIRWISE_SUMS = {ir.F64: "__tracer_pairwise_sum_f64", ir.F32: "__tracer_pairwise_sum_f32",
                 ir.F16: "__tracer_pairwise_sum_f16"}
# the same sums on the thread pool, bit for bit (tracer/csrc/pool.c; parallel=True code in the JIT)
PARALLEL_SUMS = {ir.F64: "__tracer_parallel_sum_f64", ir.F32: "__tracer_parallel_sum_f32"}
PARALLEL_FUSED_SUMS = {ir.F64: "__tracer_parallel_fused_sum_f64", ir.F32: "__tracer_parallel_fused_sum_f32"}
SUM_TYPES = {**FLOATS, ir.F16: FLOAT}      # what pairwise_sum adds in: float16 in float32, as NumPy's
I8, I16 = ll.IntType(8), ll.IntType(16)
BLOCK = 128              # NumPy's PW_BLOCKSIZE: runs up to this long are summed in 8 running sums
POLL_RUN = 1 << 20       # a longer run polls for signals between its halves (pairwise_sum)
GATHERED = 1 << 22       # a sum of a scattered array gathers at most this many elements (else: by runs)
BUFFER = 8192            # NumPy's casting buffers (np.getbufsize()): a float16 sum in float32 by pieces


def _combine(k: KernelBuilder, kind: str, dtype: ir.ScalarType, acc, x):
    b = k.builder
    if dtype in FLOATS:
        if kind == "sum":
            return b.fadd(acc, x)
        if kind == "prod":
            return b.fmul(acc, x)
        # NumPy's maximum/minimum, element after element: a NaN wins, a tie of signed zeros takes x
        keep = b.fcmp_ordered(">" if kind == "max" else "<", acc, x)
        return b.select(b.or_(keep, b.fcmp_unordered("uno", acc, acc)), acc, x)
    if dtype == ir.BOOL and kind in ("max", "min"):
        return b.or_(acc, x) if kind == "max" else b.and_(acc, x)
    if kind == "sum":
        return k.checked("sadd", acc, x)
    if kind == "prod":
        return k.checked("smul", acc, x)
    compare = b.icmp_unsigned if dtype in ir.UNSIGNED else b.icmp_signed
    return b.select(compare(">=" if kind == "max" else "<=", acc, x), acc, x)


def _start(k: KernelBuilder, kind: str, dtype: ir.ScalarType):
    if dtype in FLOATS:
        return ll.Constant(FLOATS[dtype], {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf")}[kind])
    if dtype == ir.F16:                     # its bits: 0.0, 1.0
        return ll.Constant(I16, {"sum": 0, "prod": 0x3C00}[kind])
    if dtype == ir.BOOL:
        return ll.Constant(I1, kind == "min")
    if dtype in ir.INTEGERS and dtype != ir.I64:                 # (max and min of narrow integers)
        low, high = ir.int_range(dtype)
        bits = ir.BITS[dtype]
        x = {"sum": 0, "prod": 1, "max": low, "min": high}[kind]
        return ll.Constant(ELEMENT_TYPES[dtype], x - (1 << bits) if x >= 1 << (bits - 1) else x)   # (its bits)
    return k.i64({"sum": 0, "prod": 1, "max": ir.I64_MIN, "min": ir.I64_MAX}[kind])


@lowers("reduce")
def reduce(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    if isinstance(a, PendingMap):
        return fused_sum(k, v, a)
    b = k.builder
    kind, axes, source = v.attrs["kind"], v.attrs["axes"], v.args[0].type.dtype
    dtype = v.type.dtype if isinstance(v.type, ir.ArrayType) else v.type     # (bool sums: int64)
    rank = len(a.sizes)
    kept = [d for d in range(rank) if d not in axes]
    count = element_count(k, [a.sizes[d] for d in axes])
    if kind in ("max", "min"):
        k.fail_if(b.icmp_signed("==", count, k.i64(0)), Status.SHAPE_MISMATCH)   # NumPy's ValueError
    out = allocate(k, dtype, [a.sizes[d] for d in kept])
    start = _start(k, kind, dtype)
    for_each_index(k, out.sizes, lambda idx: store_element(k, out, idx, dtype, start))
    def reduce_into(a: ArrayValue, out: ArrayValue) -> None:
        b = k.builder
        if source == ir.F16:
            _float16(k, a, kind, dtype, axes, out)
        elif kind == "sum" and dtype in FLOATS and rank > 0:
            _float_sum(k, a, dtype, axes, out)
        elif kind == "prod" and dtype in FLOATS and rank == 2 and len(axes) == 2:    # in NumPy's order too
            with b.if_else(_inner_is_last(k, a)) as (c_order, f_order):
                with c_order:
                    _in_order(k, a, kind, source, dtype, kept, out)
                with f_order:
                    _in_order(k, ArrayValue(a.data, a.sizes[::-1], a.strides[::-1]), kind, source, dtype, kept, out)
        elif kind == "sum" and source in COUNTED_SUMS and not kept and rank:    # count_nonzero, any, all
            int_sums.counted_sum(k, a, source, out, lambda: _in_order(k, a, kind, source, dtype, [], out))
        elif kind == "sum" and source == dtype == ir.I64 and not kept and rank:
            int_sums.int_sum(k, a, out, lambda: _in_order(k, a, kind, source, dtype, [], out))
        elif kind in ("max", "min") and not kept and rank and _on_pool(k, source, dtype):    # (codegen.parallel)
            reduce_rows(k, a, out, start, lambda rows, slot: _in_order(k, rows, kind, source, dtype, [], slot),
                        lambda acc, x: _combine(k, kind, dtype, acc, x))
        elif kind in ("max", "min") and source == dtype and extremes.supports(dtype) and (not kept or rank == 2):
            _extremes(k, a, kind, dtype, kept, out)
        else:
            _in_order(k, a, kind, source, dtype, kept, out)
    if kept and source != ir.F16 and _on_pool(k, None, None):     # parts of a kept axis on the pool
        split_rows(k, a, kept[0], out, reduce_into)
    else:
        reduce_into(a, out)
    if not isinstance(v.type, ir.ArrayType):
        return load_element(k, out, (), dtype)
    if v.attrs["keepdims"]:
        sizes = tuple(k.i64(1) if d in axes else a.sizes[d] for d in range(rank))
        strides = tuple(k.i64(0) if d in axes else out.strides[kept.index(d)] for d in range(rank))
        return ArrayValue(out.data, sizes, strides)
    return out


def _on_pool(k: KernelBuilder, source: ir.ScalarType | None, dtype: ir.ScalarType | None) -> bool:
    """Whether a reduction runs on the thread pool (parallel=True code in the JIT): one that keeps
    an axis (None, None), or a whole-array max or min of `dtype`."""
    return k.parallel and k.check_signals is not None and k.memory.shared_helpers and k.deferred is None \
        and (source == dtype and dtype in (ir.F64, ir.F32, ir.I64) or source is dtype is None)


def fused_sum(k: KernelBuilder, v: ir.Value, pending: PendingMap) -> ll.Value:
    """The sum of a 1-d map's elements, NumPy's pairwise sum of the array the map would make, bit
    for bit, without the array: a function of the module, `T sum(ctx, lo, n)`, follows the
    pairwise tree (halves of n rounded down to a multiple of 8) down to runs of at most BLOCK
    elements, which it computes into a buffer on its stack and sums as pairwise_sum does. The
    map's inputs are read once and nothing is allocated; long runs poll for signals between their
    halves, as pairwise_sum's do. An
    element whose computation fails is only noted; the map then runs again, stored, element by
    element, and the kernel stops at the failing one with its status."""
    b = k.builder
    inputs, dtypes, out_dtypes = pending.arguments
    dtype = out_dtypes[0]
    for other in inputs[1:]:
        check_same_sizes(k, inputs[0].sizes, other.sizes)
    t = SUM_TYPES[dtype]
    failed = k.stack_slot(I1, "failed")        # an element's failure is noted there (as lower_map's first run)
    b.store(ll.Constant(I1, 0), failed)
    interrupted = k.stack_slot(I32, "interrupted")
    b.store(ll.Constant(I32, 0), interrupted)
    memory = k.memory if k.check_signals is not None else None
    add = Outlined(k, pending.value, inputs, ll.FunctionType(t, [PTR, I64, I64, PTR, PTR]), "sum")
    with add.inside() as bb:
        ctx, lo, n, flag, raised = add.function.args
        run, split = add.function.append_basic_block("run"), add.function.append_basic_block("split")
        bb.cbranch(bb.icmp_signed("<=", n, k.i64(BLOCK)), run, split)
        bb.position_at_end(run)
        with k.builder.goto_entry_block():
            buffer = k.builder.alloca(FLOATS[dtype], size=BLOCK, name="run")
        item = k.i64(ITEM_SIZE[dtype])
        out = ArrayValue(buffer, (n,), (item,))
        map_elements(k, add.rows(lo, n), dtypes, out_dtypes, pending.element(flag), into=[out])
        k.builder.ret(k.builder.call(pairwise_sum(k, dtype), [buffer, n, item, ll.Constant(PTR, None)]))
        bb = k.builder
        bb.position_at_end(split)
        half = bb.sdiv(n, k.i64(2))
        half = bb.sub(half, bb.srem(half, k.i64(8)))
        first = bb.call(add.function, [ctx, lo, half, flag, raised])
        if memory is not None:          # Ctrl-C, and the GIL's release: a poll between halves of long runs
            _poll_between_halves(k, memory, bb, n, raised, t)
        bb.ret(bb.fadd(first, bb.call(add.function, [ctx, bb.add(lo, half), bb.sub(n, half), flag, raised])))
    if k.parallel and k.memory.shared_helpers:      # the same tree, its leaves on the pool (tracer/csrc/pool.c)
        on_pool = k.declare_function(PARALLEL_FUSED_SUMS[dtype], ll.FunctionType(t, [PTR, PTR, I64, PTR, PTR]),
                                     ("nounwind",))
        total = b.call(on_pool, [add.function, add.ctx, inputs[0].sizes[0], failed, interrupted])
    else:
        total = b.call(add.function, [add.ctx, k.i64(0), inputs[0].sizes[0], failed, interrupted])
    if memory is not None:
        k.exit_if_interrupted(b.icmp_signed("!=", b.load(interrupted, typ=I32), ll.Constant(I32, 0)))
    with b.if_then(b.load(failed, typ=I1), likely=False):   # the map again, stored, to its first failure
        map_elements(k, inputs, dtypes, out_dtypes, pending.element(None))
    return b.fadd(_start(k, "sum", dtype), total)


def _poll_between_halves(k: KernelBuilder, memory, b: ll.IRBuilder, n, raised, t) -> None:
    """In a run of more than POLL_RUN elements: the runtime's signal check; if a handler raised,
    1 in `raised` and an early return (as pairwise_sum does)."""
    fn = b.function
    poll, go_on, stop = (fn.append_basic_block(x) for x in ("poll", "polled", "stop"))
    b.cbranch(b.icmp_signed(">", n, k.i64(POLL_RUN)), poll, go_on)
    b.position_at_end(poll)
    check = k.declare_function(memory.check_signals, ll.FunctionType(I32, []), ("cold", "nounwind"))
    check.calling_convention = memory.check_convention
    seen = b.or_(b.call(check, [], cconv=memory.check_convention or None), b.load(raised, typ=I32))
    b.cbranch(b.icmp_signed("!=", seen, ll.Constant(I32, 0)), stop, go_on)
    b.position_at_end(stop)
    b.store(ll.Constant(I32, 1), raised)
    b.ret(ll.Constant(t, 0.0))
    b.position_at_end(go_on)


def _in_order(k: KernelBuilder, a: ArrayValue, kind: str, source, dtype, kept: list, out: ArrayValue):
    """out[kept] = out[kept] <kind> a[index], for every index in row-major order."""
    b = k.builder

    def body(idx):
        place = [idx[d] for d in kept]
        x = load_element(k, a, idx, source)
        acc = load_element(k, out, place, dtype)
        if dtype != source:           # bools (a product too), narrow ints (COUNTED_SUMS) in int64
            x = int_sums.widened(k, x, source)
        if dtype != source and kind == "sum":      # (the sum cannot overflow)
            store_element(k, out, place, dtype, b.add(acc, x))
        else:
            store_element(k, out, place, dtype, _combine(k, kind, dtype, acc, x))
    for_each_index(k, a.sizes, body)


def _extremes(k: KernelBuilder, a: ArrayValue, kind: str, dtype, kept: list, out: ArrayValue):
    """A max or min of every element of one block of memory, or of each row of a 2-d array whose
    rows NumPy's iterator runs innermost, each row one block: NumPy's SIMD loop over it
    (codegen.extremes); of a 1-d view, NumPy's strided loop; of other layouts, element after
    element. Over the first axis of a 2-d array: each row combined into the output in turn."""
    b = k.builder
    item = k.i64(ITEM_SIZE[dtype])
    if not kept:
        with b.if_else(extremes.one_block(k, a, item)) as (block, scattered):
            with block:
                store_element(k, out, (), dtype, extremes.extreme(k, kind, dtype, a.data, element_count(k, a.sizes)))
            with scattered:
                if len(a.sizes) == 1:
                    store_element(k, out, (), dtype, extremes.strided_extreme(k, kind, dtype, a.data, a.sizes[0], a.strides[0]))
                else:
                    _in_order(k, a, kind, dtype, dtype, kept, out)
        return
    if kept == [1]:          # row after row into the output, as NumPy's binary loop: a vectorized map each
        def into_out(i):
            row = ArrayValue(b.gep(a.data, [b.mul(i, a.strides[0])], source_etype=I8), (a.sizes[1],), (a.strides[1],))
            map_elements(k, [out, row], [dtype, dtype], [dtype], lambda acc, x: [_combine(k, kind, dtype, acc, x)], into=[out])
        for_range(k, a.sizes[0], into_out)
        return
    rows = b.and_(_inner_is_last(k, a), b.or_(b.icmp_signed("==", a.strides[1], item),
                                              b.icmp_signed("==", a.sizes[1], k.i64(1))))
    with b.if_else(rows) as (by_rows, scattered):
        with by_rows:
            def row(idx):
                start = element_address(k, a, (idx[0], k.i64(0)))
                store_element(k, out, idx, dtype, extremes.extreme(k, kind, dtype, start, a.sizes[1]))
            for_each_index(k, out.sizes, row)
        with scattered:
            _in_order(k, a, kind, dtype, dtype, kept, out)


def _float_sum(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType, axes: tuple, out: ArrayValue):
    """NumPy's order of a float sum (see the module docstring): the axis NumPy's iterator runs
    innermost is the one of the smallest stride (of a 2-d array; the last, of more); runs along
    it, when it is reduced, are summed in pairs."""
    b = k.builder
    kept = [d for d in range(len(a.sizes)) if d not in axes]

    def add_run(data, n, stride, place):
        total = _pairwise(k, dtype, data, n, stride)
        store_element(k, out, place, dtype, b.fadd(load_element(k, out, place, dtype), total))
    by_runs(k, a, dtype, axes, add_run, lambda: _in_order(k, a, "sum", dtype, dtype, kept, out))


def by_runs(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType, axes: tuple, add_run, in_order):
    """A float reduction of `a` (of element type `dtype`, rank > 0) over `axes` in the runs of
    NumPy's inner loop (tracer.ir.reductions.float_runs): add_run(data, n, stride, place) for
    each run, in order, or in_order() where the iterator runs a kept axis innermost."""
    b = k.builder
    rank = len(a.sizes)
    item = k.i64(ITEM_SIZE[dtype])

    def runs_along(axis):
        others = [d for d in range(rank) if d != axis]
        kept = [d for d in range(rank) if d not in axes]

        def run(idx):
            index = list(idx)
            index.insert(axis, k.i64(0))
            add_run(element_address(k, a, index), a.sizes[axis], a.strides[axis], [index[d] for d in kept])
        for_each_index(k, [a.sizes[d] for d in others], run)

    if len(axes) == rank and rank == 1:
        runs_along(0)
    elif len(axes) == rank:       # one run over every element, in memory order
        count = element_count(k, a.sizes)
        with b.if_else(extremes.one_block(k, a, item)) as (block, scattered):
            with block:
                add_run(a.data, count, item, [])
            with scattered:       # gathered first, as NumPy's buffers do (at most GATHERED elements)
                with b.if_else(b.icmp_signed(">", count, k.i64(GATHERED))) as (huge, small):
                    with huge:
                        runs_along(rank - 1)
                    with small:
                        _gather_in_order(k, a, dtype, rank, add_run)
    elif rank == 2:
        reduced = axes[0]
        inner_reduced = _inner_is_last(k, a) if reduced == 1 else b.not_(_inner_is_last(k, a))
        with b.if_else(inner_reduced) as (pairs, one_by_one):
            with pairs:
                runs_along(reduced)
            with one_by_one:
                in_order()
    elif rank - 1 in axes:
        _merged_runs(k, a, axes, add_run, rank - 1)
    else:
        in_order()


def _merged_runs(k: KernelBuilder, a: ArrayValue, axes: tuple, add_run, start: int, more: bool = True):
    """Runs over axes start... (the last and reduced ones before it, one stride going on over
    them), one per index of the axes before, where NumPy's iterator merges no more of those
    (tracer.ir.reductions.merges: reduced axis start - 1 merges where its stride is the last
    axis's times the size of the run, or it has one element)."""
    b = k.builder
    rank, d = len(a.sizes), start - 1
    if more and d in axes:
        size = element_count(k, a.sizes[start:])
        merge = b.or_(b.icmp_signed("==", a.sizes[d], k.i64(1)),
                      b.icmp_signed("==", a.strides[d], b.mul(a.strides[rank - 1], size)))
        with b.if_else(merge) as (longer, these):
            with longer:
                _merged_runs(k, a, axes, add_run, d)
            with these:
                _merged_runs(k, a, axes, add_run, start, more=False)
        return
    kept = [d for d in range(rank) if d not in axes]

    def run(idx):
        index = list(idx) + [k.i64(0)] * (rank - start)
        add_run(element_address(k, a, index), element_count(k, a.sizes[start:]), a.strides[rank - 1],
                [index[d] for d in kept])
    for_each_index(k, list(a.sizes[:start]), run)


def _float16(k: KernelBuilder, a: ArrayValue, kind: str, dtype: ir.ScalarType, axes: tuple, out: ArrayValue):
    """A float16 array's sum or product into `out` (of `dtype`: float16, NumPy's float16 loop;
    float32, np.add.reduce(a, dtype=float32)), in the runs of a float sum (module docstring)."""
    b = k.builder
    kept = [d for d in range(len(a.sizes)) if d not in axes]
    product = k.stack_slot(FLOAT, "product") if kind == "prod" else None

    def read(place):
        x = load_element(k, out, place, dtype)
        return half_to_float(b, x) if dtype == ir.F16 else x

    def write(place, x):
        store_element(k, out, place, dtype, float_to_half(k, x) if dtype == ir.F16 else x)

    def add_run(data, n, stride, place):
        if kind == "prod":                       # element after element, in float32
            b.store(read(place), product)
            run = ArrayValue(data, (n,), (stride,))
            for_each_index(k, [n], lambda i: b.store(
                b.fmul(b.load(product, typ=FLOAT), half_to_float(b, load_element(k, run, i, ir.F16))), product))
            write(place, b.load(product, typ=FLOAT))
        elif dtype == ir.F32:                    # by NumPy's casting buffers
            def piece(i):
                start = b.mul(i[0], k.i64(BUFFER))
                rest = b.sub(n, start)
                size = b.select(b.icmp_signed("<", rest, k.i64(BUFFER)), rest, k.i64(BUFFER))
                first = b.gep(data, [b.mul(start, stride)], source_etype=I8)
                write(place, b.fadd(read(place), _pairwise(k, ir.F16, first, size, stride)))
            for_each_index(k, [b.sdiv(b.add(n, k.i64(BUFFER - 1)), k.i64(BUFFER))], piece)
        else:
            write(place, b.fadd(read(place), _pairwise(k, ir.F16, data, n, stride)))

    def in_order():                              # each element a call of NumPy's loop
        def body(idx):
            place = [idx[d] for d in kept]
            x = half_to_float(b, load_element(k, a, idx, ir.F16))
            write(place, b.fadd(read(place), x) if kind == "sum" else b.fmul(read(place), x))
        for_each_index(k, a.sizes, body)

    if a.sizes:
        by_runs(k, a, ir.F16, axes, add_run, in_order)
    else:
        in_order()


def half_to_float(b: ll.IRBuilder, h: ll.Value) -> ll.Value:
    """The float32 value of float16 bits `h`, exact, as NumPy's npy_half_to_float."""
    return half_to(b, h, FLOAT)


def float_to_half(k: KernelBuilder, x: ll.Value) -> ll.Value:
    """Float16 bits of float32 `x`, rounded to nearest even, as NumPy's npy_float_to_half (an inf
    or a NaN stays one); a finite value past float16's range fails with FALLBACK (NumPy warns
    "overflow encountered": the Python function runs)."""
    b = k.builder
    bits = double_to_half(b, b.fpext(x, DOUBLE))
    exponent = ll.Constant(I32, 0x7F80_0000)                 # (tested as bits: no float compare of a NaN)
    finite = b.icmp_unsigned("!=", b.and_(b.bitcast(x, I32), exponent), exponent)
    infinite = b.icmp_unsigned("==", b.and_(bits, ll.Constant(I16, 0x7FFF)), ll.Constant(I16, 0x7C00))
    k.fail_if(b.and_(finite, infinite), Status.FALLBACK)
    return bits


def _inner_is_last(k: KernelBuilder, a: ArrayValue) -> ll.Value:
    """Whether NumPy's iterator runs a 2-d array's last axis innermost: unless both strides are
    nonzero and the first is the smaller (a stride of 0, a broadcast, orders nothing)."""
    b = k.builder

    def size(x):
        return k.call_intrinsic("llvm.abs.i64", I64, [I64, I1], x, ll.Constant(I1, 0))
    first, last = size(a.strides[0]), size(a.strides[1])
    zero = k.i64(0)
    swapped = b.and_(b.and_(b.icmp_unsigned("!=", first, zero), b.icmp_unsigned("!=", last, zero)),
                     b.icmp_unsigned("<", first, last))
    return b.not_(swapped)


def _gather_in_order(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType, rank: int, add_run):
    """One run over a's elements gathered in NumPy's iteration order (a 2-d array's by its smaller
    nonzero stride, a larger array's row-major)."""
    if rank != 2:
        _gathered_run(k, a, dtype, add_run)
        return
    with k.builder.if_else(_inner_is_last(k, a)) as (c_order, f_order):
        with c_order:
            _gathered_run(k, a, dtype, add_run)
        with f_order:
            _gathered_run(k, ArrayValue(a.data, a.sizes[::-1], a.strides[::-1]), dtype, add_run)


def _gathered_run(k: KernelBuilder, a: ArrayValue, dtype: ir.ScalarType, add_run):
    """add_run over a's elements copied, in row-major order, into a buffer of their own."""
    buffer = allocate(k, dtype, a.sizes)
    copy_elements(k, a, buffer, dtype)
    add_run(buffer.data, element_count(k, a.sizes), k.i64(ITEM_SIZE[dtype]), [])


def _pairwise(k: KernelBuilder, dtype: ir.ScalarType, data, n, stride) -> ll.Value:
    """pairwise_sum(data, n, stride), and the return of PYTHON_ERROR if a signal handler raised
    while it ran (a run of more than POLL_RUN elements polls)."""
    b = k.builder
    fn = pairwise_sum(k, dtype)
    if k.check_signals is None:
        return b.call(fn, [data, n, stride, ll.Constant(PTR, None)])
    raised = k.stack_slot(I32, "interrupted")
    b.store(ll.Constant(I32, 0), raised)
    if k.parallel and dtype in PARALLEL_SUMS and k.memory.shared_helpers:    # the same sum, on every core
        on_pool = k.declare_function(PARALLEL_SUMS[dtype], ll.FunctionType(SUM_TYPES[dtype], [PTR, PTR, I64, I64, PTR]), ("nounwind",))
        total = b.call(on_pool, [fn, data, n, stride, raised])
    else:
        total = b.call(fn, [data, n, stride, raised])
    k.exit_if_interrupted(b.icmp_signed("!=", b.load(raised, typ=I32), ll.Constant(I32, 0)))
    return total


def pairwise_sum(k: KernelBuilder, dtype: ir.ScalarType) -> ll.Function:
    """The module's `T pairwise_sum(ptr data, i64 n, i64 stride, ptr interrupted)`: defined in
    the module (exported libraries), or declared where the kernel's runtime defines it once for
    the process (the JIT's, `shared_helpers`: not optimized and compiled again for each kernel)."""
    name = PAIRWISE_SUMS[dtype]
    if k.memory.shared_helpers:
        return k.declare_function(name, ll.FunctionType(SUM_TYPES[dtype], [PTR, I64, I64, PTR]), ("nounwind",))
    existing = k.module.globals.get(name)
    return existing if existing is not None else define_pairwise_sum(k.module, dtype, k.memory, "internal")


def define_pairwise_sum(module: ll.Module, dtype: ir.ScalarType, memory, linkage: str = "") -> ll.Function:
    """The module's `T pairwise_sum(ptr data, i64 n, i64 stride, ptr interrupted)`: NumPy's
    pairwise summation (numpy/_core/src/umath/loops_utils.h.src) of n elements `stride` bytes
    apart, in T's arithmetic:

        n < 8:       -0.0 + a[0] + a[1] + ... (in order)
        n <= 128:    8 running sums r[j] = a[j] + a[j+8] + ..., then ((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)),
                     then the last n % 8 elements in order
        else:        pairwise_sum(first n2) + pairwise_sum(the rest), n2 = n/2 rounded down to a
                     multiple of 8

    Where `interrupted` is not NULL, a run longer than POLL_RUN calls the kernel's signal check
    between its halves; if a handler raised, it notes 1 there and returns at once. Of float16
    elements T is float32, as NumPy's HALF_pairwise_sum adds them."""
    t = SUM_TYPES[dtype]
    fn = ll.Function(module, ll.FunctionType(t, [PTR, I64, I64, PTR]), PAIRWISE_SUMS[dtype])
    if linkage:
        fn.linkage = linkage
    fn.attributes.add("nounwind")
    data, n, stride, raised = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))

    def at(i):
        address = b.gep(data, [b.mul(i, stride)], source_etype=ll.IntType(8))
        if dtype == ir.F16:
            return half_to_float(b, b.load(address, typ=I16, align=1))
        return b.load(address, typ=t, align=1)

    def counted(first, last, values, step, body):
        """for i in range(first, last, step): values = body(i, values); the values after."""
        before = b.block
        head, loop, done = (fn.append_basic_block(x) for x in ("head", "body", "done"))
        b.branch(head)
        b.position_at_end(head)
        i = b.phi(I64)
        i.add_incoming(first, before)
        phis = [b.phi(x.type) for x in values]
        for phi, x in zip(phis, values):
            phi.add_incoming(x, before)
        b.cbranch(b.icmp_signed("<", i, last), loop, done)
        b.position_at_end(loop)
        following = body(i, phis)
        i.add_incoming(b.add(i, ll.Constant(I64, step)), b.block)
        for phi, x in zip(phis, following):
            phi.add_incoming(x, b.block)
        b.branch(head)
        b.position_at_end(done)
        return phis, i

    small, blocked, split = (fn.append_basic_block(x) for x in ("small", "block", "split"))
    b.cbranch(b.icmp_signed("<", n, ll.Constant(I64, 8)), small, blocked)
    b.position_at_end(small)
    (total,), _ = counted(ll.Constant(I64, 0), n, [ll.Constant(t, -0.0)], 1, lambda i, r: [b.fadd(r[0], at(i))])
    b.ret(total)

    b.position_at_end(blocked)
    eights = fn.append_basic_block("eights")
    b.cbranch(b.icmp_signed("<=", n, ll.Constant(I64, BLOCK)), eights, split)
    b.position_at_end(eights)
    whole = b.sub(n, b.srem(n, ll.Constant(I64, 8)))
    item = ITEM_SIZE[dtype]
    strided = fn.append_basic_block("strided")

    def finish(r):
        """((r0+r1)+(r2+r3))+((r4+r5)+(r6+r7)), then the last n % 8 elements in order."""
        total = b.fadd(b.fadd(b.fadd(r[0], r[1]), b.fadd(r[2], r[3])), b.fadd(b.fadd(r[4], r[5]), b.fadd(r[6], r[7])))
        (total,), _ = counted(i, n, [total], 1, lambda i, r: [b.fadd(r[0], at(i))])
        b.ret(total)

    if dtype == ir.F16:           # (its elements converted one by one, on the strided path)
        b.branch(strided)
    else:                         # elements one after another: the 8 running sums are the 8 lanes of
        contiguous = fn.append_basic_block("contiguous")         # one vector (the same adds)
        b.cbranch(b.icmp_signed("==", stride, ll.Constant(I64, item)), contiguous, strided)
        b.position_at_end(contiguous)
        eight = ll.VectorType(t, 8)

        def row(i):
            return b.load(b.gep(data, [b.mul(i, stride)], source_etype=ll.IntType(8)), typ=eight, align=1)
        (lanes,), i = counted(ll.Constant(I64, 8), whole, [row(ll.Constant(I64, 0))], 8,
                              lambda i, r: [b.fadd(r[0], row(i))])
        finish([b.extract_element(lanes, ll.Constant(I32, j)) for j in range(8)])

    b.position_at_end(strided)
    sums, i = counted(ll.Constant(I64, 8), whole, [at(ll.Constant(I64, j)) for j in range(8)], 8,
                      lambda i, r: [b.fadd(r[j], at(b.add(i, ll.Constant(I64, j)))) for j in range(8)])
    finish(sums)

    b.position_at_end(split)
    half = b.sdiv(n, ll.Constant(I64, 2))
    half = b.sub(half, b.srem(half, ll.Constant(I64, 8)))
    first = b.call(fn, [data, half, stride, raised])
    if memory.check_signals is not None:
        poll, go_on = fn.append_basic_block("poll"), fn.append_basic_block("polled")
        watching = b.and_(b.icmp_unsigned("!=", raised, ll.Constant(PTR, None)),
                          b.icmp_signed(">", n, ll.Constant(I64, POLL_RUN)))
        b.cbranch(watching, poll, go_on)
        b.position_at_end(poll)
        stop = fn.append_basic_block("stop")
        check = module.globals.get(memory.check_signals) or \
            ll.Function(module, ll.FunctionType(I32, []), memory.check_signals)
        check.attributes.add("cold")
        check.attributes.add("nounwind")
        check.calling_convention = memory.check_convention
        status = b.call(check, [], cconv=memory.check_convention or None)
        seen = b.or_(status, b.load(raised, typ=I32))
        b.cbranch(b.icmp_signed("!=", seen, ll.Constant(I32, 0)), stop, go_on)
        b.position_at_end(stop)
        b.store(ll.Constant(I32, 1), raised)
        b.ret(ll.Constant(t, 0.0))
        b.position_at_end(go_on)
    rest = b.call(fn, [b.gep(data, [b.mul(half, stride)], source_etype=ll.IntType(8)), b.sub(n, half), stride,
                       raised])
    b.ret(b.fadd(first, rest))
    return fn
