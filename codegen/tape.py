"""Lowering of the tape ops: the per-iteration records a loop's forward pass saves for autodiff.

A tape is a header on the kernel's stack, one per `tape_new` op (allocated in the entry block):
three 8-byte words, `length`, `capacity` (in records) and `data`, a buffer of `capacity` records
of one 8-byte word per field (an f64, an i64, or a bool widened to i64).

`tape_push` appends a record, doubling the buffer with realloc when it is full (MemoryError when
that fails). Every header starts empty at kernel entry and `KernelBuilder.ret` frees every
tape's buffer before any return (`free_tapes`, one of its cleanups), so a function that fails halfway (a raise, a math error) leaks
nothing; `tape_free` releases a buffer as soon as its backward loop is done.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.kernel import DOUBLE, I1, I64, PTR, KernelBuilder
from codegen.lowerings import lowers
from tracer import ir
from tracer.errors import Status

LENGTH, CAPACITY, DATA = 0, 1, 2
FIRST_CAPACITY = 64         # records


def allocate_headers(k: KernelBuilder, fn: ir.Function) -> None:
    """One empty header per `tape_new` op of `fn`, made at entry (call before lowering), and
    their buffers freed at every return."""
    for v in fn.walk():
        if v.op == "tape_new":
            header = _untyped(k, k.builder.alloca(I64, size=3, name="tape"))
            _reset(k, header)
            k.tapes[v] = header
    if k.tapes:
        k.cleanups.append(free_tapes)


def free_tapes(k: KernelBuilder) -> None:
    """Free every tape's buffer (emitted before each return)."""
    for header in k.tapes.values():
        free_buffer(k, header)


def _untyped(k: KernelBuilder, pointer):
    """`pointer` as an untyped `ptr` (llvmlite types an alloca `i64*`, and stores through it
    must then be i64; a round trip through a stack slot, which LLVM removes, gives a `ptr`)."""
    slot = k.builder.alloca(PTR)
    k.builder.store(pointer, slot)
    return k.builder.load(slot, typ=PTR)


def _slot(k: KernelBuilder, base, index):
    """The address of 8-byte word `index` of the untyped pointer `base` (a word of any type)."""
    return k.builder.gep(base, [index], source_etype=I64)


def _field(k: KernelBuilder, header, index: int):
    return _slot(k, header, k.i64(index))


def _reset(k: KernelBuilder, header) -> None:
    b = k.builder
    b.store(k.i64(0), _field(k, header, LENGTH))
    b.store(k.i64(0), _field(k, header, CAPACITY))
    b.store(ll.Constant(PTR, None), _field(k, header, DATA))


def free_buffer(k: KernelBuilder, header) -> None:
    k.call_c("free", ll.VoidType(), [PTR], k.builder.load(_field(k, header, DATA), typ=PTR))


@lowers("tape_new")
def tape_new(k: KernelBuilder, v: ir.Value):
    header = k.tapes[v]
    free_buffer(k, header)            # made again (inside a loop): start empty
    _reset(k, header)
    return header


@lowers("tape_push")
def tape_push(k: KernelBuilder, v: ir.Value, header, *record):
    b = k.builder
    words = len(record)
    length = b.load(_field(k, header, LENGTH), typ=I64)
    capacity = b.load(_field(k, header, CAPACITY), typ=I64)
    with b.if_then(b.icmp_signed("==", length, capacity), likely=False):
        grown = b.select(b.icmp_signed("==", capacity, k.i64(0)), k.i64(FIRST_CAPACITY), b.mul(capacity, k.i64(2)))
        data = b.load(_field(k, header, DATA), typ=PTR)
        new = k.call_c("realloc", PTR, [PTR, I64], data, b.mul(grown, k.i64(8 * max(words, 1))))
        k.fail_if(b.icmp_unsigned("==", new, ll.Constant(PTR, None)), Status.NO_MEMORY)
        b.store(new, _field(k, header, DATA))
        b.store(grown, _field(k, header, CAPACITY))
    data = b.load(_field(k, header, DATA), typ=PTR)
    base = b.mul(length, k.i64(words))
    for j, (x, t) in enumerate(zip(record, v.type.elements)):
        if t == ir.BOOL:
            x = b.zext(x, I64)
        b.store(x, _slot(k, data, b.add(base, k.i64(j))))
    b.store(b.add(length, k.i64(1)), _field(k, header, LENGTH))
    return header


@lowers("tape_get")
def tape_get(k: KernelBuilder, v: ir.Value, header, index):
    b = k.builder
    data = b.load(_field(k, header, DATA), typ=PTR)
    fields = v.args[0].type.elements
    base = b.mul(index, k.i64(len(fields)))
    out = []
    for j, t in enumerate(fields):
        word = _slot(k, data, b.add(base, k.i64(j)))
        if t == ir.F64:
            out.append(b.load(word, typ=DOUBLE))
        elif t == ir.BOOL:
            out.append(b.trunc(b.load(word, typ=I64), I1))
        else:
            out.append(b.load(word, typ=I64))
    return tuple(out)


@lowers("tape_len")
def tape_len(k: KernelBuilder, v: ir.Value, header):
    return k.builder.load(_field(k, header, LENGTH), typ=I64)


@lowers("tape_free")
def tape_free(k: KernelBuilder, v: ir.Value, header):
    free_buffer(k, header)
    _reset(k, header)
    return ()

