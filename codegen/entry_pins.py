"""Arguments, and items of list or tuple arguments, that the trace used as constants
(tracer.ir.PinnedStr, ListArg.pins): the entry checks that each holds that value, and a call where
one does not is a guard miss (the next specialization is tried), as the loaded path's loader
decides (`type(v) is str and v == 'add'`).

A string is checked with no Python code run:

    ob_type == &PyUnicode_Type                        exactly a str (not a subclass)
    length == len(value)                              its length in code points (PyASCIIObject.length; 3.12+)
    utf8 = PyUnicode_AsUTF8AndSize(s, &size)          an ASCII string's own bytes, else its UTF-8 form
    size == len(bytes) and memcmp(utf8, bytes, size) == 0      (CPython keeps that in the string)

A string with no UTF-8 form (a lone surrogate: UnicodeEncodeError, cleared) equals no constant the
entry holds: a miss. A pinned number is unboxed as its EntryArg is and compared as `guard_equals` does.

A str, bytes or None returned as a constant (a result container ("constant", value), whose IR type
is an empty tuple) is made by the entry itself: box_constant.
"""
from __future__ import annotations

import sys

from llvmlite import ir as ll

from codegen.kernel import I32, I64, PTR
from tracer import ir

SIGNATURES = {"PyUnicode_AsUTF8AndSize": (PTR, [PTR, PTR]), "memcmp": (I32, [PTR, PTR, I64]),
              "PyErr_ExceptionMatches": (I32, [PTR]), "PyErr_Clear": (ll.VoidType(), []),
              "PyUnicode_DecodeUTF8": (PTR, [PTR, I64, PTR]), "PyBytes_FromStringAndSize": (PTR, [PTR, I64])}
LENGTH_OFFSET = 16        # PyASCIIObject's length (code points), after the reference count and the type
# (3.11 still has "legacy" strings made by the deprecated C API whose length is 0 until they are
# made ready, as PyUnicode_AsUTF8AndSize does: there, the length is not read first)
LENGTH_IS_SET = sys.version_info >= (3, 12)


def utf8_of(value: str) -> bytes | None:
    """The UTF-8 bytes an entry compares a pinned string with; None where it has none (a lone
    surrogate: only the loaded path checks such a pin)."""
    try:
        return value.encode("utf-8")
    except UnicodeEncodeError:
        return None


def pinnable(value: object) -> bool:
    """Whether the entry can check an argument or item pinned at `value`: a str with a UTF-8 form,
    a float, a bool or an int of 64 bits."""
    if type(value) is str:
        return utf8_of(value) is not None
    return type(value) in (float, bool) or (type(value) is int and ir.I64_MIN <= value <= ir.I64_MAX)


def guard_pin(e, obj: ll.Value, value: object, overflow: ll.Value) -> None:
    """Go on where Python object `obj` is exactly `value` (its type and value), else a guard miss
    (`e`: codegen.entry.EntryBuilder)."""
    if type(value) is str:
        guard_str(e, obj, value)
        return
    arg = ir.EntryArg(ir.type_of_constant(value), None, value)
    e.guard_equals(e.unbox(obj, arg, overflow), arg)


def guard_str(e, obj: ll.Value, value: str) -> None:
    """Go on where `obj` is exactly a str equal to `value`, else a guard miss."""
    b, api = e.builder, e.api
    data = utf8_of(value)
    if data is None:
        raise ValueError(f"codegen: a pinned string with no UTF-8 form: {value!r}")
    ob_type = b.load(b.gep(obj, [ll.Constant(I64, 8)], source_etype=ll.IntType(8)), typ=PTR)
    e.guard(b.icmp_unsigned("==", ob_type, api.address("PyUnicode_Type")))
    if LENGTH_IS_SET:
        length = b.load(b.gep(obj, [ll.Constant(I64, LENGTH_OFFSET)], source_etype=ll.IntType(8)), typ=I64)
        e.guard(b.icmp_signed("==", length, ll.Constant(I64, len(value))))
    size = b.alloca(I64)
    utf8 = api.call("PyUnicode_AsUTF8AndSize", obj, size)
    with b.if_then(b.icmp_unsigned("==", utf8, ll.Constant(PTR, None)), likely=False):
        other = api.call("PyErr_ExceptionMatches", api.exception(UnicodeEncodeError))
        with b.if_then(b.icmp_signed("==", other, ll.Constant(I32, 0)), likely=False):
            e.ret(ll.Constant(PTR, None))         # (a MemoryError): it propagates
        api.call("PyErr_Clear")
        b.branch(e.miss)
    e.guard(b.icmp_signed("==", b.load(size, typ=I64), ll.Constant(I64, len(data))))
    if data:
        same = api.call("memcmp", utf8, _bytes(api.module, data), ll.Constant(I64, len(data)))
        e.guard(b.icmp_signed("==", same, ll.Constant(I32, 0)))


def returnable(value: object) -> bool:
    """Whether the entry can return constant `value` itself (box_constant): None, bytes, or a str
    with a UTF-8 form."""
    return value is None or type(value) is bytes or (type(value) is str and utf8_of(value) is not None)


def box_constant(e, value: object) -> ll.Value:
    """A new reference to `value`, a str, bytes or None the function returns whatever its
    arguments hold (`return op` compiled for op "add"), or NULL with an exception set. The entry
    makes the object on its first call and keeps it: every call returns that one object, as the
    loaded path returns the trace's."""
    b, api = e.builder, e.api
    if value is None:
        result = api.address("_Py_NoneStruct")
    else:
        data = utf8_of(value) if type(value) is str else value
        slot = ll.GlobalVariable(api.module, PTR, f"__tracer_constant_{len(api.module.globals)}")
        slot.initializer, slot.linkage = ll.Constant(PTR, None), "internal"
        kept = b.load(slot, typ=PTR)
        start, make, done = b.block, e.function.append_basic_block("make_constant"), e.function.append_basic_block("constant")
        b.cbranch(b.icmp_unsigned("==", kept, ll.Constant(PTR, None)), make, done)
        b.position_at_end(make)
        size = ll.Constant(I64, len(data))
        made = (api.call("PyUnicode_DecodeUTF8", _bytes(api.module, data + b"\0"), size, ll.Constant(PTR, None))
                if type(value) is str else api.call("PyBytes_FromStringAndSize", _bytes(api.module, data + b"\0"), size))
        b.store(made, slot)                       # (the slot's own reference; NULL where that failed)
        b.branch(done)
        b.position_at_end(done)
        result = b.phi(PTR)
        result.add_incoming(kept, start)
        result.add_incoming(made, make)
    api.call("Py_IncRef", result)                 # (NULL: nothing)
    return result


def _bytes(module: ll.Module, data: bytes) -> ll.GlobalVariable:
    """A private constant holding `data` (a pinned string's UTF-8 bytes)."""
    g = ll.GlobalVariable(module, ll.ArrayType(ll.IntType(8), len(data)), f"__tracer_pin_{len(module.globals)}")
    g.initializer = ll.Constant(g.value_type, bytearray(data))
    g.global_constant = True
    g.linkage = "private"
    g.unnamed_addr = True
    return g
