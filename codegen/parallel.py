"""`parallel=True`: a map over arrays runs on every core, its first axis cut into chunks that the
runtime's thread pool runs (tracer/csrc/pool.h, `parallel_for`).

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

from llvmlite import ir as ll

from codegen import arrays, fpflags
from codegen.kernel import DOUBLE, FLOAT, I1, I32, I64, PTR, ArrayValue, KernelBuilder
from codegen.runtime import PARALLEL_FOR
from tracer import ir
from tracer.errors import Status

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


def free_values(region: ir.Block) -> list[ir.Value]:
    """The values the region's ops read that it does not make (nor its parameters)."""
    inside = set(region.params) | set(region.values)
    free = []
    for x in region.values:
        for a in x.args:
            if a not in inside and a not in free:
                free.append(a)
    return free


def map_elements(k: KernelBuilder, v: ir.Value, arguments: tuple, element, into: list | None,
                 may_fail: bool) -> list[ArrayValue]:
    """codegen.arrays.map_elements on the pool: the map's result arrays (or `into`, written)."""
    inputs, dtypes, out_dtypes = arguments
    b = k.builder
    sizes = inputs[0].sizes
    for other in inputs[1:] + (into or []):
        arrays.check_same_sizes(k, sizes, other.sizes)
    outs = into if into is not None else [arrays.allocate(k, t, sizes) for t in out_dtypes]
    region = v.regions[0]
    free = free_values(region)
    # what the body reads, packed: constants (a stride 0, a static size) stay constants in the body
    words = [x for a in inputs + outs for x in (a.data, *a.sizes, *a.strides) if not isinstance(x, ll.Constant)]
    words += [k.regions.values[x] for x in free]
    with b.goto_entry_block():
        ctx = b.alloca(I64, size=max(1, len(words)), name="parallel_ctx")
    for i, x in enumerate(words):
        b.store(_pack(b, x), b.gep(ctx, [k.i64(i)], source_etype=I64))
    body = ll.Function(k.module, BODY_TYPE, k.module.get_unique_name(f"{k.function.name}.parallel"))
    body.linkage = "internal"
    body.attributes.add("nounwind")
    watched = k.numpy_flags is not None and into is None
    outer_values = {x: k.regions.values[x] for x in free}
    with k.in_function(body) as bb:
        context, lo, hi = body.args
        unpacked = iter([_unpack(bb, bb.load(bb.gep(context, [k.i64(i)], source_etype=I64), typ=I64), x.type)
                         for i, x in enumerate(words)])

        def take(x: ll.Value) -> ll.Value:
            return x if isinstance(x, ll.Constant) else next(unpacked)
        chunks, first_sizes = [], None
        for a in inputs + outs:              # in the words' order: data, sizes, strides
            data = take(a.data)
            a_sizes = tuple(take(size) for size in a.sizes)
            strides = tuple(take(stride) for stride in a.strides)
            first_sizes = first_sizes or a_sizes
            chunks.append(ArrayValue(bb.gep(data, [bb.mul(lo, strides[0])], source_etype=ll.IntType(8)), None, strides))
        # rows lo..hi; one shape (checked above): every chunk takes the first input's sizes
        common = (bb.sub(hi, lo), *first_sizes[1:])
        chunks = [a._replace(sizes=common) for a in chunks]
        for x in free:
            k.regions.values[x] = next(unpacked)
        flag = None
        if may_fail:
            flag = k.stack_slot(I1, "failed")
            bb.store(ll.Constant(I1, 0), flag)
        if watched:
            fpflags.clear_flags(k, k.numpy_flags)
        arrays.map_elements(k, chunks[:len(inputs)], dtypes, out_dtypes, element(flag), into=chunks[len(inputs):])
        bb = k.builder
        if flag is not None:
            with bb.if_then(bb.load(flag, typ=I1), likely=False):
                bb.ret(ll.Constant(I32, RERUN))
        if watched:
            with bb.if_then(fpflags.flags_raised(k, k.numpy_flags), likely=False):
                bb.ret(ll.Constant(I32, int(Status.FALLBACK)))
        bb.ret(ll.Constant(I32, 0))
    k.regions.values.update(outer_values)
    # the pool: chunks of at least MIN_ELEMENTS elements (rows of the first axis)
    inner = _product(k, sizes[1:])
    grain = b.add(b.udiv(k.i64(MIN_ELEMENTS - 1), inner), k.i64(1)) if sizes[1:] else k.i64(MIN_ELEMENTS)
    run = k.declare_function(PARALLEL_FOR, ll.FunctionType(I32, [PTR, PTR, I64, I64]), ("nounwind",))
    status = b.call(run, [body, ctx, sizes[0], grain])
    if may_fail:
        with b.if_then(b.icmp_unsigned("==", status, ll.Constant(I32, RERUN)), likely=False):
            arrays.map_elements(k, inputs, dtypes, out_dtypes, element(None), into=outs)
    k.fail_if(b.icmp_unsigned("==", status, ll.Constant(I32, int(Status.FALLBACK))), Status.FALLBACK)
    return outs


def _product(k: KernelBuilder, sizes) -> ll.Value:
    value = k.i64(1)
    for s in sizes:
        value = k.builder.mul(value, s)
    return value


def _pack(b: ll.IRBuilder, x: ll.Value) -> ll.Value:
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


def _unpack(b: ll.IRBuilder, word: ll.Value, t: ll.Type) -> ll.Value:
    """The value of type t that `_pack` made the word of."""
    if t == PTR:
        return b.inttoptr(word, PTR)
    if t == DOUBLE:
        return b.bitcast(word, DOUBLE)
    if t == FLOAT:
        return b.bitcast(b.trunc(word, I32), FLOAT)
    if isinstance(t, ll.IntType) and t.width < 64:
        return b.trunc(word, t)
    return word

