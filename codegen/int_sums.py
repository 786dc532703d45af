"""Sums that count, of one block of memory in one flat loop (codegen.reductions lowers `reduce`
and calls these for a sum over every axis): of bools (np.count_nonzero, np.any, np.all, np.sum
and np.mean of bools) their nonzero bytes counted 64 at a time in the byte lanes of a vector; of
int8, uint8, int16 and uint16 elements (tracer.ir.reductions.COUNTED_SUMS) widened to int64, an
add that cannot overflow; of int64 elements exactly, their upper and lower halves summed apart
(vectorized) into an int128 total that fails with FALLBACK past int64 (NumPy's sum wraps there:
the Python function gives it). Integer sums are exact in any order, so the results are NumPy's.
An array of another layout goes element after element (the caller's `in_order`).
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen import extremes
from codegen.arrays import ELEMENT_TYPES, ITEM_SIZE, element_count, store_element
from codegen.kernel import I64, ArrayValue, KernelBuilder, for_range
from tracer import ir
from tracer.errors import Status

I8, I16 = ll.IntType(8), ll.IntType(16)
COUNTED = 64             # bools counted at once (count_true_bytes): a vector of 64 bytes
LANE_RUNS = 255          # vectors of bools a byte lane counts before the lanes are added up
HALVES = 1 << 31         # int64s whose upper and lower halves are summed apart (int_sum)


def widened(k: KernelBuilder, x: ll.Value, source: ir.ScalarType) -> ll.Value:
    """A bool or narrow int as int64 (sign-extended if signed)."""
    return k.builder.sext(x, I64) if source in ir.SIGNED else k.builder.zext(x, I64)


def counted_sum(k: KernelBuilder, a: ArrayValue, source: ir.ScalarType, out: ArrayValue, in_order) -> None:
    """out[()] = the int64 sum of every element of `a`, of bools (the number of true ones) or
    narrow ints (COUNTED_SUMS: no overflow). Of one block of memory (C- or Fortran-ordered), one
    flat loop (bools: count_true_bytes); else element after element."""
    b = k.builder
    item = ITEM_SIZE[source]
    count = element_count(k, a.sizes)
    with b.if_else(extremes.one_block(k, a, k.i64(item))) as (block, scattered):
        with block:
            if source == ir.BOOL:
                total = count_true_bytes(k, a.data, count)
            else:
                def add(i, total):
                    at = b.gep(a.data, [b.mul(i, k.i64(item))], source_etype=I8)
                    x = b.load(at, typ=ELEMENT_TYPES[source], align=1)
                    return [b.add(total, widened(k, x, source))]
                total, = for_range(k, count, add, [k.i64(0)])
            store_element(k, out, (), ir.I64, total)
        with scattered:
            in_order()


def int_sum(k: KernelBuilder, a: ArrayValue, out: ArrayValue, in_order) -> None:
    """out[()] = the sum of every element of int64 array `a`, failing with FALLBACK where it
    does not fit in int64 (NumPy wraps: the Python function gives that). Of one block of memory,
    one flat loop that LLVM vectorizes: pieces of at most HALVES elements, each summed as the sum
    of their upper halves (x >> 32) and of their lower ones (x & 0xFFFFFFFF), neither of which can
    overflow, added exactly into an int128 total; else element after element, each add checked."""
    b = k.builder
    i128 = ll.IntType(128)
    count = element_count(k, a.sizes)
    with b.if_else(extremes.one_block(k, a, k.i64(8))) as (block, scattered):
        with block:
            def piece(p, total):
                first = b.mul(p, k.i64(HALVES))
                n = b.sub(count, first)
                n = b.select(b.icmp_signed("<", n, k.i64(HALVES)), n, k.i64(HALVES))

                def add(i, high, low):
                    x = b.load(b.gep(a.data, [b.mul(b.add(first, i), k.i64(8))], source_etype=I8), typ=I64, align=1)
                    return [b.add(high, b.ashr(x, k.i64(32))), b.add(low, b.and_(x, k.i64(0xFFFF_FFFF)))]
                high, low = for_range(k, n, add, [k.i64(0), k.i64(0)])
                exact = b.add(b.shl(b.sext(high, i128), ll.Constant(i128, 32)), b.zext(low, i128))
                return [b.add(total, exact)]
            total, = for_range(k, b.udiv(b.add(count, k.i64(HALVES - 1)), k.i64(HALVES)), piece,
                               [ll.Constant(i128, 0)])
            fits = b.icmp_signed("==", b.sext(b.trunc(total, I64), i128), total)
            k.fail_if(b.not_(fits), Status.FALLBACK)
            store_element(k, out, (), ir.I64, b.trunc(total, I64))
        with scattered:
            in_order()


def count_true_bytes(k: KernelBuilder, data: ll.Value, n: ll.Value) -> ll.Value:
    """The number (i64) of nonzero bytes among the n at `data`: COUNTED at a time, compared as
    one vector and counted in its byte lanes, each lane taking at most LANE_RUNS vectors before
    the lanes are added into the total; then the last n % COUNTED bytes one by one."""
    b = k.builder
    lanes = ll.VectorType(I8, COUNTED)
    wide = ll.VectorType(I16, COUNTED)
    zeros = ll.Constant(lanes, None)
    vectors = b.udiv(n, k.i64(COUNTED))

    def chunk(c, total):
        first = b.mul(c, k.i64(LANE_RUNS))
        runs = b.sub(vectors, first)
        runs = b.select(b.icmp_signed("<", runs, k.i64(LANE_RUNS)), runs, k.i64(LANE_RUNS))

        def add(j, acc):
            at = b.gep(data, [b.mul(b.add(first, j), k.i64(COUNTED))], source_etype=I8)
            x = b.load(at, typ=lanes, align=1)
            return [b.sub(acc, b.sext(b.icmp_unsigned("!=", x, zeros), lanes))]
        acc, = for_range(k, runs, add, [zeros], poll=False)
        counted = k.call_intrinsic(f"llvm.vector.reduce.add.v{COUNTED}i16", I16, [wide], b.zext(acc, wide))
        return [b.add(total, b.zext(counted, I64))]
    chunks = b.udiv(b.add(vectors, k.i64(LANE_RUNS - 1)), k.i64(LANE_RUNS))
    total, = for_range(k, chunks, chunk, [k.i64(0)])
    done = b.mul(vectors, k.i64(COUNTED))
    tail = b.gep(data, [done], source_etype=I8)

    def one(i, total):
        x = b.load(b.gep(tail, [i], source_etype=I8), typ=I8, align=1)
        return [b.add(total, b.zext(b.icmp_unsigned("!=", x, ll.Constant(I8, 0)), I64))]
    total, = for_range(k, b.sub(n, done), one, [total], poll=False)
    return total
