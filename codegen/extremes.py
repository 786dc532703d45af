"""Whole-array maxima and minima of one block of memory, in NumPy's order and vectorized.

NumPy's `np.maximum.reduce` (`a.max()`, `np.min`, `np.ptp`...) of a contiguous array takes the
first element as the start and runs its SIMD loop (numpy/_core/src/umath/loops_minmax.dispatch.c.src,
`simd_reduce_c_*`) over the rest, W lanes of W elements at a time (W: its vector register's bytes
on this CPU, `lane_bytes()`, over the item size):

    acc = [a[0]] * W
    blocks of 8 vectors v0..v7:  acc = f(acc, f(f(f(v0, v1), f(v2, v3)), f(f(v4, v5), f(v6, v7))))
    then single vectors:         acc = f(acc, v)
    r = the lanes of acc folded in halves (NaN in any lane: NumPy's quiet NaN)
    the last elements:           r = f(r, x), one after another

with f(a, b) = a if a is NaN else (a if a > b else b) (`<` for the minimum): x86's maxpd/minpd
with a NaN in the first operand kept. Ties (0.0 and -0.0) and NaNs of other bits come out as
NumPy's; integers have no ties to tell apart. The same tree here is LLVM vector code: vmaxpd and
a NaN mask per vector, about as fast as NumPy's own loop. A 1-d view that is not one block takes
NumPy's scalar loop (`strided_extreme`: 8 running extremes); argmax and argmin search for the
extreme chunk by chunk (`first_extreme`).
"""
from __future__ import annotations

import functools

from llvmlite import ir as ll

from codegen.arrays import (
    ELEMENT_TYPES,
    ITEM_SIZE,
    allocate,
    element_count,
    for_each_index,
    load_element,
    store_element,
)
from codegen.kernel import I1, I32, I64, PTR, ArrayValue, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status

FLOAT_TYPES = (ir.F64, ir.F32)
CHUNK = 4096                 # argmax: the extreme of each chunk of elements, then a search in one
QUIET_NAN = float("nan")     # as an LLVM constant 0x7ff8... (float32: 0x7fc00000): NumPy's


@functools.cache
def lane_bytes() -> int:
    """The bytes of the vector register NumPy's maximum loop runs with on this CPU (its dispatch
    target: AVX-512 64, AVX2 32, else 16). Asked when a max/min is compiled, not at import:
    compiling a function without arrays does not import NumPy."""
    try:
        from numpy._core import _multiarray_umath as umath
        current = umath.__cpu_targets_info__["maximum"]["ddd"]["current"]
    except (ImportError, AttributeError, KeyError, TypeError):
        return 16
    if "V4" in current or "AVX512" in current:
        return 64
    return 32 if "V3" in current or "AVX2" in current else 16



def supports(dtype: ir.ScalarType) -> bool:
    return dtype in FLOAT_TYPES or dtype in ir.INTEGERS


def extreme(k: KernelBuilder, kind: str, dtype: ir.ScalarType, data, n) -> ll.Value:
    """NumPy's max (min) of the n >= 1 elements of `dtype` one after another at `data`."""
    name = f"__tracer_{kind}_{dtype.name}"
    fn = k.module.globals.get(name)
    if fn is None:
        fn = _define(k.module, kind, dtype, name)
    return k.builder.call(fn, [data, n])


def _pick(b: ll.IRBuilder, kind: str, dtype: ir.ScalarType, x, y):
    """f(x, y): x if x is NaN, else x if x > y (x < y), else y, on scalars or vectors alike."""
    if dtype in FLOAT_TYPES:
        better = b.fcmp_ordered(">" if kind == "max" else "<", x, y)
        return b.select(b.fcmp_unordered("uno", x, x), x, b.select(better, x, y))
    compare = b.icmp_unsigned if dtype in ir.UNSIGNED else b.icmp_signed
    return b.select(compare(">" if kind == "max" else "<", x, y), x, y)


def _define(module: ll.Module, kind: str, dtype: ir.ScalarType, name: str) -> ll.Function:
    t = ELEMENT_TYPES[dtype]
    lanes = lane_bytes() // ITEM_SIZE[dtype]
    vt = ll.VectorType(t, lanes)
    fn = ll.Function(module, ll.FunctionType(t, [PTR, I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    data, n = fn.args
    b = ll.IRBuilder(fn.append_basic_block("entry"))
    first = b.load(data, typ=t, align=1)
    rest = b.gep(data, [ll.Constant(I64, 1)], source_etype=t)
    m = b.sub(n, ll.Constant(I64, 1))

    def f(x, y):
        return _pick(b, kind, dtype, x, y)

    def vector_at(i):
        return b.load(b.gep(rest, [i], source_etype=t), typ=vt, align=1)

    def counted(i0, acc0, step, body):
        """while m - i >= step: acc = body(i, acc); i += step. Returns (i, acc) after it."""
        before = b.block
        head, loop, after = (fn.append_basic_block(s) for s in ("head", "loop", "after"))
        b.branch(head)
        b.position_at_end(head)
        i, acc = b.phi(I64), b.phi(acc0.type)
        i.add_incoming(i0, before)
        acc.add_incoming(acc0, before)
        b.cbranch(b.icmp_signed(">=", b.sub(m, i), ll.Constant(I64, step)), loop, after)
        b.position_at_end(loop)
        new = body(i, acc)
        i.add_incoming(b.add(i, ll.Constant(I64, step)), b.block)
        acc.add_incoming(new, b.block)
        b.branch(head)
        b.position_at_end(after)
        return i, acc

    def eight(i, acc):
        v = [vector_at(b.add(i, ll.Constant(I64, j * lanes))) for j in range(8)]
        return f(acc, f(f(f(v[0], v[1]), f(v[2], v[3])), f(f(v[4], v[5]), f(v[6], v[7]))))

    start = b.insert_element(ll.Constant(vt, ll.Undefined), first, ll.Constant(I32, 0))
    start = b.shuffle_vector(start, ll.Constant(vt, ll.Undefined), ll.Constant(ll.VectorType(I32, lanes), [0] * lanes))
    i, acc = counted(ll.Constant(I64, 0), start, 8 * lanes, eight)
    i, acc = counted(i, acc, lanes, lambda i, acc: f(acc, vector_at(i)))
    r = _fold(b, kind, dtype, acc, lanes)

    def one(j, r):
        return f(r, b.load(b.gep(rest, [j], source_etype=t), typ=t, align=1))
    _, r = counted(i, r, 1, one)
    b.ret(b.select(b.icmp_signed("<", m, ll.Constant(I64, 1)), first, r))     # one element: itself
    return fn


def _fold(b: ll.IRBuilder, kind: str, dtype: ir.ScalarType, acc, lanes: int):
    """The lanes of acc folded as NumPy's npyv_reduce_maxn: NumPy's quiet NaN if a lane is NaN;
    else halves combined, f(high, low) while wider than 128 bits (the compiler's
    _mm512_reduce_max_pd), f(low, high) below."""
    t = acc.type.element
    per_128 = max(1, 16 // ITEM_SIZE[dtype])
    x = acc
    width = lanes
    while width > 1:
        half = width // 2
        low = b.shuffle_vector(x, ll.Constant(x.type, ll.Undefined), ll.Constant(ll.VectorType(I32, half), list(range(half))))
        high = b.shuffle_vector(x, ll.Constant(x.type, ll.Undefined),
                                ll.Constant(ll.VectorType(I32, half), list(range(half, width))))
        x = _pick(b, kind, dtype, high, low) if width > per_128 else _pick(b, kind, dtype, low, high)
        width = half
    r = b.extract_element(x, ll.Constant(I32, 0))
    if dtype not in FLOAT_TYPES:
        return r
    nan_lanes = b.bitcast(b.fcmp_unordered("uno", acc, acc), ll.IntType(lanes))
    return b.select(b.icmp_unsigned("!=", nan_lanes, ll.Constant(ll.IntType(lanes), 0)), ll.Constant(t, QUIET_NAN), r)


def first_extreme(k: KernelBuilder, kind: str, dtype: ir.ScalarType, data, n) -> ll.Value:
    """NumPy's argmax (argmin) of the n >= 1 elements at `data`: the first position of the max
    (min), or of the first NaN. The extreme first (vectorized), then a search for it by vectors."""
    name = f"__tracer_arg{kind}_{dtype.name}"
    fn = k.module.globals.get(name)
    if fn is None:
        fn = _define_search(k, kind, dtype, name)
    return k.builder.call(fn, [data, n])


def _define_search(k: KernelBuilder, kind: str, dtype: ir.ScalarType, name: str) -> ll.Function:
    t = ELEMENT_TYPES[dtype]
    lanes = 4 * lane_bytes() // ITEM_SIZE[dtype]           # a block of four vectors a step
    vt = ll.VectorType(t, lanes)
    extreme_name = f"__tracer_{kind}_{dtype.name}"
    target = k.module.globals.get(extreme_name) or _define(k.module, kind, dtype, extreme_name)
    fn = ll.Function(k.module, ll.FunctionType(I64, [PTR, I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    data, n = fn.args
    entry, chunks, chunk, search, head, block, scan_head, scan, found, done = (fn.append_basic_block(s) for s in (
        "entry", "chunks", "chunk", "search", "head", "block", "scan_head", "scan", "found", "done"))
    b = ll.IRBuilder(entry)
    floats = dtype in FLOAT_TYPES
    size = ll.Constant(I64, CHUNK)

    def extreme_of(c):
        """The extreme of the chunk at c (n - c elements if fewer than CHUNK are left)."""
        left = b.sub(n, c)
        return b.call(target, [b.gep(data, [c], source_etype=t), b.select(b.icmp_signed("<", left, size), left, size)])
    # the chunk holding the first extreme: one that beats every chunk before it (a NaN ends it)
    first = extreme_of(ll.Constant(I64, 0))
    b.branch(chunks)
    b.position_at_end(chunks)
    c, best, start = b.phi(I64), b.phi(t), b.phi(I64)
    c.add_incoming(size, entry)
    best.add_incoming(first, entry)
    start.add_incoming(ll.Constant(I64, 0), entry)
    more = b.icmp_signed("<", c, n)
    b.cbranch(b.and_(more, b.fcmp_ordered("==", best, best)) if floats else more, chunk, search)
    b.position_at_end(chunk)
    x = extreme_of(c)
    op = ">" if kind == "max" else "<"
    better = b.fcmp_unordered(op, x, best) if floats else \
        (b.icmp_unsigned if dtype in ir.UNSIGNED else b.icmp_signed)(op, x, best)     # (a NaN beats a number)
    c.add_incoming(b.add(c, size), chunk)
    best.add_incoming(b.select(better, x, best), chunk)
    start.add_incoming(b.select(better, c, start), chunk)
    b.branch(chunks)
    b.position_at_end(search)

    def matches(x, target):
        """x == target, or both NaN (elementwise on vectors)."""
        if not floats:
            return b.icmp_signed("==", x, target)
        both_nan = b.and_(b.fcmp_unordered("uno", x, x), b.fcmp_unordered("uno", target, target))
        return b.or_(b.fcmp_ordered("==", x, target), both_nan)

    splat = b.insert_element(ll.Constant(vt, ll.Undefined), best, ll.Constant(I32, 0))
    splat = b.shuffle_vector(splat, ll.Constant(vt, ll.Undefined), ll.Constant(ll.VectorType(I32, lanes), [0] * lanes))
    b.branch(head)
    # blocks of `lanes` elements while a whole block is left: any lane a match ends the search
    b.position_at_end(head)
    i = b.phi(I64)
    i.add_incoming(start, search)
    b.cbranch(b.icmp_signed("<=", b.add(i, ll.Constant(I64, lanes)), n), block, scan_head)
    b.position_at_end(block)
    x = b.load(b.gep(data, [i], source_etype=t), typ=vt, align=1)
    hits = b.bitcast(matches(x, splat), ll.IntType(lanes))
    i.add_incoming(b.add(i, ll.Constant(I64, lanes)), block)
    b.cbranch(b.icmp_unsigned("!=", hits, ll.Constant(ll.IntType(lanes), 0)), scan_head, head)
    # element by element from the block that matched (or the last elements): the first match
    b.position_at_end(scan_head)
    j = b.phi(I64)
    j.add_incoming(i, head)
    j.add_incoming(i, block)
    b.cbranch(b.icmp_signed("<", j, n), scan, done)
    b.position_at_end(scan)
    y = b.load(b.gep(data, [j], source_etype=t), typ=t, align=1)
    j.add_incoming(b.add(j, ll.Constant(I64, 1)), scan)
    b.cbranch(matches(y, best), found, scan_head)
    b.position_at_end(found)
    b.ret(j)
    b.position_at_end(done)           # (not reached: the extreme is one of the elements)
    b.ret(ll.Constant(I64, 0))
    return fn


def strided_extreme(k: KernelBuilder, kind: str, dtype: ir.ScalarType, data, n, stride) -> ll.Value:
    """NumPy's max (min) of n >= 1 elements `stride` bytes apart (a 1-d view that is not one
    block): its scalar loop, after the first element 8 running extremes m0..m7 of every 8th
    element, folded as ((m0, m1), (m2, m3)), ((m4, m5), (m6, m7)) into it, then the last
    elements one after another."""
    name = f"__tracer_{kind}_strided_{dtype.name}"
    fn = k.module.globals.get(name)
    if fn is None:
        fn = _define_strided(k.module, kind, dtype, name)
    return k.builder.call(fn, [data, n, stride])


def _define_strided(module: ll.Module, kind: str, dtype: ir.ScalarType, name: str) -> ll.Function:
    t = ELEMENT_TYPES[dtype]
    vt = ll.VectorType(t, 8)
    fn = ll.Function(module, ll.FunctionType(t, [PTR, I64, I64]), name)
    fn.linkage = "internal"
    fn.attributes.add("nounwind")
    data, n, stride = fn.args
    entry, unrolled, head, loop, folded, tail_head, tail, done = (fn.append_basic_block(s) for s in (
        "entry", "unrolled", "head", "loop", "folded", "tail_head", "tail", "done"))
    b = ll.IRBuilder(entry)
    m = b.sub(n, ll.Constant(I64, 1))
    first = b.load(data, typ=t, align=1)

    def f(x, y):
        return _pick(b, kind, dtype, x, y)

    def at(i):
        return b.load(b.gep(data, [b.mul(b.add(i, ll.Constant(I64, 1)), stride)], source_etype=ll.IntType(8)), typ=t, align=1)

    def eight(i):
        v = ll.Constant(vt, ll.Undefined)
        for j in range(8):
            v = b.insert_element(v, at(b.add(i, ll.Constant(I64, j))), ll.Constant(I32, j))
        return v

    def halves(x, width):
        picks = [ll.Constant(ll.VectorType(I32, width // 2), list(range(p, width, 2))) for p in (0, 1)]
        return f(*(b.shuffle_vector(x, ll.Constant(x.type, ll.Undefined), p) for p in picks))
    b.cbranch(b.icmp_signed(">=", m, ll.Constant(I64, 8)), unrolled, tail_head)
    b.position_at_end(unrolled)
    start = eight(ll.Constant(I64, 0))
    b.branch(head)
    b.position_at_end(head)
    i, acc = b.phi(I64), b.phi(vt)
    i.add_incoming(ll.Constant(I64, 8), unrolled)
    acc.add_incoming(start, unrolled)
    b.cbranch(b.icmp_signed("<=", b.add(i, ll.Constant(I64, 8)), m), loop, folded)
    b.position_at_end(loop)
    i.add_incoming(b.add(i, ll.Constant(I64, 8)), loop)
    acc.add_incoming(f(acc, eight(i)), loop)
    b.branch(head)
    b.position_at_end(folded)         # (m0, m1), (m2, m3), ... then (m0, m2), (m4, m6), then (m0, m4)
    pairs = halves(halves(acc, 8), 4)
    into_first = f(first, f(b.extract_element(pairs, ll.Constant(I32, 0)), b.extract_element(pairs, ll.Constant(I32, 1))))
    b.branch(tail_head)
    b.position_at_end(tail_head)
    j, r = b.phi(I64), b.phi(t)
    j.add_incoming(ll.Constant(I64, 0), entry)
    r.add_incoming(first, entry)
    j.add_incoming(i, folded)
    r.add_incoming(into_first, folded)
    b.cbranch(b.icmp_signed("<", j, m), tail, done)
    b.position_at_end(tail)
    j.add_incoming(b.add(j, ll.Constant(I64, 1)), tail)
    r.add_incoming(f(r, at(j)), tail)
    b.branch(tail_head)
    b.position_at_end(done)
    b.ret(r)
    return fn


def one_block(k: KernelBuilder, a: ArrayValue, item, orders=(True, False)) -> ll.Value:
    """Whether the array's elements are one block of memory, C- or Fortran-ordered (NumPy's
    flags: an axis of size 1 has any stride; `orders`: (True,) for C-ordered only); an empty
    array is not."""
    b = k.builder

    def ordered(axes):
        ok, step = ll.Constant(I1, 1), item
        for d in axes:
            single = b.icmp_signed("==", a.sizes[d], k.i64(1))
            ok = b.and_(ok, b.or_(single, b.icmp_signed("==", a.strides[d], step)))
            step = b.mul(step, a.sizes[d])
        return ok
    rank = len(a.sizes)
    nonempty = b.icmp_signed(">", element_count(k, a.sizes), k.i64(0))
    either = [ordered(range(rank - 1, -1, -1) if c_order else range(rank)) for c_order in orders]
    return b.and_(nonempty, either[0] if len(either) == 1 else b.or_(*either))


@lowers("argreduce")
def argreduce(k: KernelBuilder, v: ir.Value, a: ArrayValue):
    """The first index of the largest (smallest) element; a NaN counts as the extreme."""
    b = k.builder
    axis, dtype = v.attrs["axis"], v.args[0].type.dtype
    if axis is None:      # over the flattened array: loop over every axis, counting positions
        sizes, kept = a.sizes, []
        axes = list(range(len(a.sizes)))
    else:
        sizes, axes = a.sizes, [axis]
        kept = [d for d in range(len(a.sizes)) if d != axis]
    k.fail_if(b.icmp_signed("==", element_count(k, [sizes[d] for d in axes]), k.i64(0)), Status.SHAPE_MISMATCH)
    out_sizes = [sizes[d] for d in kept]
    best = allocate(k, dtype, out_sizes)
    where = allocate(k, ir.I64, out_sizes)
    first = [k.i64(0)] * len(sizes)
    for_each_index(k, out_sizes, lambda idx: (
        store_element(k, best, idx, dtype, load_element(k, a, _merge(first, kept, idx), dtype)),
        store_element(k, where, idx, ir.I64, k.i64(0))))

    def body(idx):
        place = [idx[d] for d in kept]
        position = k.i64(0)
        for d in axes:                       # row-major position over the reduced axes
            position = b.add(b.mul(position, sizes[d]), idx[d])
        x, current = load_element(k, a, idx, dtype), load_element(k, best, place, dtype)
        if dtype in FLOAT_TYPES:
            better = b.fcmp_ordered(">" if v.attrs["kind"] == "argmax" else "<", x, current)
            better = b.and_(b.or_(better, k.is_nan(x)), b.not_(k.is_nan(current)))
        elif dtype == ir.BOOL:
            better = b.and_(x, b.not_(current)) if v.attrs["kind"] == "argmax" else b.and_(current, b.not_(x))
        else:
            compare = b.icmp_unsigned if dtype in ir.UNSIGNED else b.icmp_signed
            better = compare(">" if v.attrs["kind"] == "argmax" else "<", x, current)
        store_element(k, best, place, dtype, b.select(better, x, current))
        store_element(k, where, place, ir.I64, b.select(better, position, load_element(k, where, place, ir.I64)))
    if axis is None and supports(dtype):        # a C-ordered block: a vector search (first_extreme)
        with b.if_else(one_block(k, a, k.i64(ITEM_SIZE[dtype]), orders=(True,))) as (block, scattered):
            with block:
                kind = v.attrs["kind"][3:]
                store_element(k, where, (), ir.I64, first_extreme(k, kind, dtype, a.data, element_count(k, sizes)))
            with scattered:
                for_each_index(k, sizes, body)
    else:
        for_each_index(k, sizes, body)
    return load_element(k, where, (), ir.I64) if axis is None else where


def _merge(first, kept, idx):
    out = list(first)
    for d, i in zip(kept, idx):
        out[d] = i
    return out
