"""Lowering of the list ops (tracer.ir.list_ops): lists whose length changes at run time.

A list is a header like a tape's (codegen.tape: `length`, `capacity`, `data`, on the kernel's
stack, one per `list_new` op, its buffer freed at every return) over a buffer of records of one
8-byte word per field. `list_append` and `list_insert` grow the buffer by doubling it;
`list_insert` and `list_delete` move the records after the index with memmove. The front end
checks every index before an op runs, so these ops trust theirs.
"""
from __future__ import annotations

from codegen.arrays import allocate, store_element
from codegen.kernel import I64, PTR, KernelBuilder, for_range
from codegen.lowerings import lowers
from codegen.tape import (
    DATA,
    LENGTH,
    free_buffer,
    header_word,
    load_record,
    make_room,
    reset_header,
    store_record,
    word,
)
from tracer import ir


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
    return ()


@lowers("list_len")
def list_len(k: KernelBuilder, v: ir.Value, header):
    return _length(k, header)


@lowers("list_pop")
def list_pop(k: KernelBuilder, v: ir.Value, header):
    last = k.builder.sub(_length(k, header), k.i64(1))
    item = _item(v.args[0].type, load_record(k, header, last, v.args[0].type.fields))
    _set_length(k, header, last)
    return item


@lowers("list_insert")
def list_insert(k: KernelBuilder, v: ir.Value, header, index, *fields):
    b = k.builder
    types = v.args[0].type.fields
    length = make_room(k, header, len(types))
    _move(k, header, b.add(index, k.i64(1)), index, b.sub(length, index), len(types))
    store_record(k, header, index, fields, types)
    _set_length(k, header, b.add(length, k.i64(1)))
    return ()


@lowers("list_delete")
def list_delete(k: KernelBuilder, v: ir.Value, header, index):
    b = k.builder
    length = _length(k, header)
    after = b.add(index, k.i64(1))
    _move(k, header, index, after, b.sub(length, after), len(v.args[0].type.fields))
    _set_length(k, header, b.sub(length, k.i64(1)))
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
