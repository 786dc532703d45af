"""Lowering of the tape ops: the per-iteration records a loop's forward pass saves for autodiff.
A list of run-time length (codegen.lists) has the same header and buffer.

A tape is a header on the kernel's stack, one per `tape_new` op (allocated in the entry block):
8-byte words `length`, `capacity` (in records) and `data`, a buffer of `capacity` records of one
8-byte word per field (an f64, an i64, or a bool widened to i64); then three words a list uses
for its hash index (codegen.lists), empty in a tape.

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
INDEX, SLOTS, INDEXED = 3, 4, 5     # a list's hash index (codegen.lists `list_find`); unused by tapes
HEADER_WORDS = 6
FIRST_CAPACITY = 64         # records


HEADER_OPS = ("tape_new", "list_new")     # the ops that make a header (a list's: codegen.lists)


def allocate_headers(k: KernelBuilder, fn: ir.Function) -> None:
    """One empty header per `tape_new` and `list_new` op of `fn`, made at entry (call before
    lowering), and their buffers freed at every return."""
    for v in fn.walk():
        if v.op in HEADER_OPS:
            header = untyped_pointer(k, k.builder.alloca(I64, size=HEADER_WORDS, name="tape"))
            reset_header(k, header)
            k.tapes[v] = header
    if k.tapes:
        k.cleanups.append(free_tapes)


def free_tapes(k: KernelBuilder) -> None:
    """Free every tape's and list's buffer (emitted before each return)."""
    for header in k.tapes.values():
        free_buffer(k, header)


def untyped_pointer(k: KernelBuilder, pointer):
    """`pointer` as an untyped `ptr` (llvmlite types an alloca `i64*`, and stores through it
    must then be i64; a round trip through a stack slot, which LLVM removes, gives a `ptr`)."""
    slot = k.builder.alloca(PTR)
    k.builder.store(pointer, slot)
    return k.builder.load(slot, typ=PTR)


def word(k: KernelBuilder, base, index):
    """The address of 8-byte word `index` of the untyped pointer `base` (a word of any type)."""
    return k.builder.gep(base, [index], source_etype=I64)


def header_word(k: KernelBuilder, header, index: int):
    return word(k, header, k.i64(index))


def reset_header(k: KernelBuilder, header) -> None:
    b = k.builder
    b.store(k.i64(0), header_word(k, header, LENGTH))
    b.store(k.i64(0), header_word(k, header, CAPACITY))
    b.store(ll.Constant(PTR, None), header_word(k, header, DATA))
    b.store(ll.Constant(PTR, None), header_word(k, header, INDEX))
    b.store(k.i64(0), header_word(k, header, SLOTS))
    b.store(k.i64(0), header_word(k, header, INDEXED))


def free_buffer(k: KernelBuilder, header) -> None:
    k.call_c("free", ll.VoidType(), [PTR], k.builder.load(header_word(k, header, DATA), typ=PTR))
    k.call_c("free", ll.VoidType(), [PTR], k.builder.load(header_word(k, header, INDEX), typ=PTR))


@lowers("tape_new")
def tape_new(k: KernelBuilder, v: ir.Value):
    header = k.tapes[v]
    free_buffer(k, header)            # made again (inside a loop): start empty
    reset_header(k, header)
    return header


def make_room(k: KernelBuilder, header, words: int):
    """Room for one more record of `words` words (doubling the buffer when it is full); the
    length before it."""
    b = k.builder
    length = b.load(header_word(k, header, LENGTH), typ=I64)
    capacity = b.load(header_word(k, header, CAPACITY), typ=I64)
    with b.if_then(b.icmp_signed("==", length, capacity), likely=False):
        grown = b.select(b.icmp_signed("==", capacity, k.i64(0)), k.i64(FIRST_CAPACITY), b.mul(capacity, k.i64(2)))
        data = b.load(header_word(k, header, DATA), typ=PTR)
        new = k.call_c("realloc", PTR, [PTR, I64], data, b.mul(grown, k.i64(8 * max(words, 1))))
        k.fail_if(b.icmp_unsigned("==", new, ll.Constant(PTR, None)), Status.NO_MEMORY)
        b.store(new, header_word(k, header, DATA))
        b.store(grown, header_word(k, header, CAPACITY))
    return length


def store_record(k: KernelBuilder, header, index, record, types) -> None:
    """Record `index` (an i64) of the buffer = `record` (values of `types`)."""
    b = k.builder
    data = b.load(header_word(k, header, DATA), typ=PTR)
    base = b.mul(index, k.i64(len(types)))
    for j, (x, t) in enumerate(zip(record, types)):
        if t == ir.BOOL:
            x = b.zext(x, I64)
        b.store(x, word(k, data, b.add(base, k.i64(j))))


def load_record(k: KernelBuilder, header, index, types) -> tuple:
    """The values of record `index` (of `types`)."""
    b = k.builder
    data = b.load(header_word(k, header, DATA), typ=PTR)
    base = b.mul(index, k.i64(len(types)))
    out = []
    for j, t in enumerate(types):
        w = word(k, data, b.add(base, k.i64(j)))
        if t == ir.F64:
            out.append(b.load(w, typ=DOUBLE))
        elif t == ir.BOOL:
            out.append(b.trunc(b.load(w, typ=I64), I1))
        else:
            out.append(b.load(w, typ=I64))
    return tuple(out)


@lowers("tape_push")
def tape_push(k: KernelBuilder, v: ir.Value, header, *record):
    length = make_room(k, header, len(record))
    store_record(k, header, length, record, v.type.elements)
    k.builder.store(k.builder.add(length, k.i64(1)), header_word(k, header, LENGTH))
    return header


@lowers("tape_get")
def tape_get(k: KernelBuilder, v: ir.Value, header, index):
    return load_record(k, header, index, v.args[0].type.elements)


@lowers("tape_len")
def tape_len(k: KernelBuilder, v: ir.Value, header):
    return k.builder.load(header_word(k, header, LENGTH), typ=I64)


@lowers("tape_free")
def tape_free(k: KernelBuilder, v: ir.Value, header):
    free_buffer(k, header)
    reset_header(k, header)
    return ()

