"""Lowering of the list ops (tracer.ir.list_ops): lists whose length changes at run time.

A list is a header like a tape's (codegen.tape: `length`, `capacity`, `data`, on the kernel's
stack, one per `list_new` op, its buffer freed at every return) over a buffer of records of one
8-byte word per field. `list_append` and `list_insert` grow the buffer by doubling it;
`list_insert` and `list_delete` move the records after the index with memmove. The front end
checks every index before an op runs, so these ops trust theirs.

`list_find` (a dict's or set's lookup) keeps a hash index of the items in the header: an
open-addressing table of `slots` words (item index + 1, 0 empty), at most half full, built when
first needed and extended with the items appended since (`indexed` counts those in it); any
other change (set, insert, delete, pop) marks it stale (-1), and the next find rebuilds it.
"""
from __future__ import annotations

from llvmlite import ir as ll

from codegen.arrays import allocate, store_element
from codegen.kernel import I1, I64, PTR, KernelBuilder, for_range
from codegen.lowerings import lowers
from codegen.tape import (
    DATA,
    INDEX,
    INDEXED,
    LENGTH,
    SLOTS,
    free_buffer,
    header_word,
    load_record,
    make_room,
    reset_header,
    store_record,
    word,
)
from tracer import ir
from tracer.errors import Status


def _length(k: KernelBuilder, header):
    return k.builder.load(header_word(k, header, LENGTH), typ=I64)


def _set_length(k: KernelBuilder, header, n) -> None:
    k.builder.store(n, header_word(k, header, LENGTH))


def _item(v_type: ir.ListType, record: tuple):
    return record[0] if not isinstance(v_type.item, ir.TupleType) else record


def _move(k: KernelBuilder, header, to, start, count, words: int) -> None:
    """Move `count` records from index `start` to index `to` (the ranges may overlap)."""
    b = k.builder
    data = b.load(header_word(k, header, DATA), typ=PTR)
    size = k.i64(8 * words)
    k.call_c("memmove", PTR, [PTR, PTR, I64], word(k, data, b.mul(to, k.i64(words))),
             word(k, data, b.mul(start, k.i64(words))), b.mul(count, size))


@lowers("list_new")
def list_new(k: KernelBuilder, v: ir.Value):
    header = k.tapes[v]
    free_buffer(k, header)            # made again (inside a loop): a new, empty list
    reset_header(k, header)
    return header


@lowers("list_append")
def list_append(k: KernelBuilder, v: ir.Value, header, *fields):
    types = v.args[0].type.fields
    length = make_room(k, header, len(types))
    store_record(k, header, length, fields, types)
    _set_length(k, header, k.builder.add(length, k.i64(1)))
    return ()


@lowers("list_get")
def list_get(k: KernelBuilder, v: ir.Value, header, index):
    return _item(v.args[0].type, load_record(k, header, index, v.args[0].type.fields))


@lowers("list_set")
def list_set(k: KernelBuilder, v: ir.Value, header, index, *fields):
    store_record(k, header, index, fields, v.args[0].type.fields)
    _stale(k, header)
    return ()


@lowers("list_len")
def list_len(k: KernelBuilder, v: ir.Value, header):
    return _length(k, header)


@lowers("list_pop")
def list_pop(k: KernelBuilder, v: ir.Value, header):
    last = k.builder.sub(_length(k, header), k.i64(1))
    item = _item(v.args[0].type, load_record(k, header, last, v.args[0].type.fields))
    _set_length(k, header, last)
    _stale(k, header)
    return item


@lowers("list_insert")
def list_insert(k: KernelBuilder, v: ir.Value, header, index, *fields):
    b = k.builder
    types = v.args[0].type.fields
    length = make_room(k, header, len(types))
    _move(k, header, b.add(index, k.i64(1)), index, b.sub(length, index), len(types))
    store_record(k, header, index, fields, types)
    _set_length(k, header, b.add(length, k.i64(1)))
    _stale(k, header)
    return ()


@lowers("list_delete")
def list_delete(k: KernelBuilder, v: ir.Value, header, index):
    b = k.builder
    length = _length(k, header)
    after = b.add(index, k.i64(1))
    _move(k, header, index, after, b.sub(length, after), len(v.args[0].type.fields))
    _set_length(k, header, b.sub(length, k.i64(1)))
    _stale(k, header)
    return ()


@lowers("list_array")
def list_array(k: KernelBuilder, v: ir.Value, header):
    types = v.args[0].type.fields
    field, dtype = v.attrs["field"], v.type.dtype
    n = _length(k, header)
    out = allocate(k, dtype, (n,))
    def copy(i):
        store_element(k, out, (i,), dtype, load_record(k, header, i, types)[field])
    for_range(k, n, copy)
    return out


# ------------------------------------------------------------------------------------- the hash index
def _stale(k: KernelBuilder, header) -> None:
    k.builder.store(k.i64(-1), header_word(k, header, INDEXED))


def _hash(k: KernelBuilder, fields, types):
    """A hash of an item's fields (-0.0 hashes as 0.0: they are equal)."""
    b = k.builder
    h = k.i64(0x243F6A8885A308D3)
    for x, t in zip(fields, types):
        if t == ir.F64:
            x = b.select(b.fcmp_ordered("==", x, k.f64(0.0)), k.f64(0.0), x)
            x = b.bitcast(x, I64)
        elif t == ir.BOOL:
            x = b.zext(x, I64)
        h = b.mul(b.xor(h, x), k.i64(0x9E3779B97F4A7C15 - 2 ** 64))
        h = b.xor(h, b.lshr(h, k.i64(29)))
    return h


def _equal(k: KernelBuilder, a, c, types):
    b = k.builder
    same = ll.Constant(I1, 1)
    for x, y, t in zip(a, c, types):
        eq = b.fcmp_ordered("==", x, y) if t == ir.F64 else b.icmp_signed("==", x, y)
        same = b.and_(same, eq)
    return same


def _probe(k: KernelBuilder, header, key, types, on_empty, on_equal):
    """Walk the table from `key`'s slot until an empty slot (`on_empty(slot address)`) or an
    item equal to `key` (`on_equal(its index)`); each returns the loop's result (an i64)."""
    b = k.builder
    table = b.load(header_word(k, header, INDEX), typ=PTR)
    mask = b.sub(b.load(header_word(k, header, SLOTS), typ=I64), k.i64(1))
    start = b.and_(_hash(k, key, types), mask)
    entry = b.block
    loop, empty, full, equal, nxt, done = (b.append_basic_block(n) for n in
                                           ("probe", "empty", "full", "equal", "next", "probed"))
    b.branch(loop)
    b.position_at_end(loop)
    pos = b.phi(I64)
    pos.add_incoming(start, entry)
    address = word(k, table, pos)
    slot = b.load(address, typ=I64)
    b.cbranch(b.icmp_signed("==", slot, k.i64(0)), empty, full)
    b.position_at_end(empty)
    r_empty = on_empty(address)
    empty_end = b.block
    b.branch(done)
    b.position_at_end(full)
    j = b.sub(slot, k.i64(1))
    b.cbranch(_equal(k, load_record(k, header, j, types), key, types), equal, nxt)
    b.position_at_end(equal)
    r_equal = on_equal(j)
    equal_end = b.block
    b.branch(done)
    b.position_at_end(nxt)
    pos.add_incoming(b.and_(b.add(pos, k.i64(1)), mask), nxt)
    b.branch(loop)
    b.position_at_end(done)
    result = b.phi(I64)
    result.add_incoming(r_empty, empty_end)
    result.add_incoming(r_equal, equal_end)
    return result


def _index_items(k: KernelBuilder, header, start, stop, types) -> None:
    """Put items [start, stop) in the table (an item equal to one there already is not: a find
    gives the first)."""
    b = k.builder
    def insert(i):
        i = b.add(i, start)
        record = load_record(k, header, i, types)
        def empty(address):
            b.store(b.add(i, k.i64(1)), address)
            return k.i64(0)
        _probe(k, header, record, types, empty, lambda j: k.i64(0))
    for_range(k, b.sub(stop, start), insert, poll=False)     # (a find never polls: opcodes.exceptions)


def _ensure_index(k: KernelBuilder, header, length, types) -> None:
    """An index of every item: rebuilt (a table of at least twice as many slots as items) when
    stale or too full, else extended with the items appended since."""
    b = k.builder
    indexed = b.load(header_word(k, header, INDEXED), typ=I64)
    slots = b.load(header_word(k, header, SLOTS), typ=I64)
    rebuild = b.or_(b.icmp_signed("<", indexed, k.i64(0)), b.icmp_signed(">", b.mul(length, k.i64(2)), slots))
    with b.if_then(rebuild, likely=False):
        size = k.stack_slot(I64)
        b.store(k.i64(16), size)
        need = b.mul(length, k.i64(4))          # (room to grow before the next rebuild)
        def grow(_):
            n = b.load(size)
            b.store(b.select(b.icmp_signed("<", n, need), b.mul(n, k.i64(2)), n), size)
        for_range(k, k.i64(58), grow, poll=False)
        n = b.load(size)
        k.call_c("free", ll.VoidType(), [PTR], b.load(header_word(k, header, INDEX), typ=PTR))
        table = k.call_c("calloc", PTR, [I64, I64], n, k.i64(8))
        k.fail_if(b.icmp_unsigned("==", table, ll.Constant(PTR, None)), Status.NO_MEMORY)
        b.store(table, header_word(k, header, INDEX))
        b.store(n, header_word(k, header, SLOTS))
        b.store(k.i64(0), header_word(k, header, INDEXED))
    _index_items(k, header, b.load(header_word(k, header, INDEXED), typ=I64), length, types)
    b.store(length, header_word(k, header, INDEXED))


@lowers("list_find")
def list_find(k: KernelBuilder, v: ir.Value, header, *key):
    b = k.builder
    types = v.args[0].type.fields
    length = _length(k, header)
    out = k.stack_slot(I64)
    b.store(k.i64(-1), out)
    with b.if_then(b.icmp_signed(">", length, k.i64(0))):
        _ensure_index(k, header, length, types)
        b.store(_probe(k, header, key, types, lambda address: k.i64(-1), lambda j: j), out)
    return b.load(out)
