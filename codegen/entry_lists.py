"""List arguments a CPython entry reads itself (tracer.ir.ListArg): a loop over a list of floats
compiles to a loop over an array, and the entry fills that array from the list on each call and
writes the numbers back after it, with no Python code on the way (the loaded path's generated
loader, np.empty and the gather call cost about a microsecond per call; this costs a few
nanoseconds per item).

    type(xs) is list (or tuple), len(xs) == length     else: not this entry's call
    buffer = alloc(n * 8); gather_list(xs, buffer, ...)  every item exactly a float (an int...)
    kernel(buffer, n, 8, ...)
    scatter_list(xs, buffer, ...)                        after a call that succeeded
    free(buffer)                                         on every way out of the entry

The gather and the write-back are tracer/csrc/gather.c's (the loaded path's own `gather` and
`scatter`, called through their C addresses).

An `array.array` argument (ListArg.typecode) is read from its memory, exported for the call:

    data = array_acquire(xs, &view, typecode, n)      exactly an array.array of that typecode, n items
    kernel(data, n, 8, ...)                           float64 or int64 items the kernel only reads
    buffer = alloc(n * 8); array_items(data, ...)     else a float64 or int64 copy, and the export
    PyBuffer_Release(&view)                             released at once
    array_scatter(xs, typecode, buffer, n)            after a call that succeeded, if it wrote

so nothing resizes an array the kernel reads in place, with or without the GIL (the entry releases
every export on each way out, and before it runs the Python function).
"""
from __future__ import annotations

from array import array
from typing import NamedTuple

from llvmlite import ir as ll

from codegen.entry_pins import guard_pin
from codegen.kernel import DOUBLE, I32, I64, PTR, ArrayValue
from tracer import ir

GATHER_LIST, SCATTER_LIST, LISTS_ALIASED = "__tracer_gather_list", "__tracer_scatter_list", "__tracer_lists_aliased"
LIST_OF_NUMBERS = "__tracer_list_of_numbers"          # a returned list of run-time length, from its array
ARRAY_ACQUIRE, ARRAY_ITEMS, ARRAY_SCATTER = "__tracer_array_acquire", "__tracer_array_items", "__tracer_array_scatter"
NUMBER_KINDS = {ir.F64: 0, ir.I64: 1, ir.BOOL: 2}
SIGNATURES = {GATHER_LIST: (I32, [PTR, PTR, I64, I64, I32]), SCATTER_LIST: (I32, [PTR, PTR, I64, I64, I32]),
              LISTS_ALIASED: (I32, [PTR, PTR, I64, PTR, PTR, I64]), LIST_OF_NUMBERS: (PTR, [PTR, I64, I32]),
              ARRAY_ACQUIRE: (PTR, [PTR, PTR, I32, I64]), ARRAY_ITEMS: (ll.VoidType(), [PTR, I32, I64, PTR]),
              ARRAY_SCATTER: (I32, [PTR, I32, PTR, I64]), "PyBuffer_Release": (ll.VoidType(), [PTR])}
# a Py_buffer (part of the stable ABI since 3.11) fits in 11 pointer-sized words (buf, obj, len, itemsize,
# readonly, ndim, format, shape, strides, suboffsets, internal); its `obj` (word 1) is NULL while it
# holds no export
BUFFER_VIEW_WORDS = 11
IN_PLACE = ("d", "l", "q")          # typecodes whose items a kernel reads in place (where 8 bytes wide)
SIZE_OFFSET = 16          # PyVarObject's ob_size, after the reference count and the type
ITEMS_OFFSET = 24         # a list's ob_item (a pointer), a tuple's ob_item[] (the items themselves)
CLASS_SYMBOLS = {list: "PyList_Type", tuple: "PyTuple_Type"}


def buffer_count(entry_args: list) -> int:
    """How many arrays the entry gathers (one buffer each, freed on every way out)."""
    return sum(a.buffers for a in entry_args if isinstance(a, ir.ListArg))


def view_count(entry_args: list) -> int:
    """How many `array.array`s the entry reads (one Py_buffer each, released on every way out)."""
    return sum(a.arrays for a in entry_args if isinstance(a, ir.ListArg))


def item_type(typecode: str) -> ll.Type:
    """The LLVM type of one item of an array.array of `typecode` (its C type's width)."""
    if typecode in "fd":
        return ll.FloatType() if typecode == "f" else DOUBLE
    return ll.IntType(8 * array(typecode).itemsize)


def reads_in_place(arg: ir.ListArg) -> bool:
    """Whether the kernel reads array.array `arg`'s own memory: 8-byte float64 or int64 items it does not write."""
    return not arg.scattered and arg.typecode in IN_PLACE and array(arg.typecode).itemsize == 8


class Read(NamedTuple):
    """One list (or tuple) the entry read: an argument, or one inside another."""
    obj: ll.Value
    n: ll.Value                  # its length
    arg: ir.ListArg
    buffers: list                # one per gather
    same_path: bool              # read through a written array: it is one, or a row of one


class ListReader:
    """Reads the ListArg arguments of one entry: `read_argument` for each (before the kernel),
    then `write_back` after a call that succeeded."""

    def __init__(self, e, memory_alloc: str, slots: list[ll.Value], views: list[ll.Value] = ()):
        self.e, self.alloc, self.slots, self.views = e, memory_alloc, slots, list(views)
        self.read: list[Read] = []           # every list read, lists inside lists too

    @property
    def writes(self) -> bool:
        return any(r.arg.scattered for r in self.read)

    def _word(self, obj: ll.Value, offset: int) -> ll.Value:
        b = self.e.builder
        return b.load(b.gep(obj, [ll.Constant(I64, offset)], source_etype=ll.IntType(8)), typ=I64)

    def read_argument(self, obj: ll.Value, arg: ir.ListArg, fn: ir.Function, params: list, overflow,
                      row_of_written: bool = False) -> None:
        """Check list (or tuple) `obj` as `arg` says and read what the kernel takes of it into
        `params` (a guard miss where it is not so)."""
        e, b = self.e, self.e.builder
        if arg.typecode is not None:
            self.read_array(obj, arg, fn, params)
            return
        ob_type = b.load(b.gep(obj, [ll.Constant(I64, 8)], source_etype=ll.IntType(8)), typ=PTR)
        e.guard(b.icmp_unsigned("==", ob_type, e.api.address(CLASS_SYMBOLS[arg.cls])))
        n = self._word(obj, SIZE_OFFSET)
        if arg.length is not None:
            e.guard(b.icmp_signed("==", n, ll.Constant(I64, arg.length)))
        buffers = []
        for param, dtype, row in arg.gathers:
            t = fn.params[param].type
            if not isinstance(t, ir.ArrayType) or t.dtype != dtype or t.rank != (2 if row else 1):
                raise ValueError(f"codegen: a list gathered as {dtype}, rows of {row}, feeds {t}")
            one = b.icmp_signed("==", n, ll.Constant(I64, 1))      # a size of 1 is part of the type
            e.guard(one if t.shape[0] == 1 else b.not_(one))
            if row and (row == 1) != (t.shape[1] == 1):
                e.guard(ll.Constant(ll.IntType(1), 0))
            count = b.mul(n, ll.Constant(I64, row)) if row else n
            slot = self.slots[sum(len(r.buffers) for r in self.read) + len(buffers)]
            buffer = e.api.call(self.alloc, b.mul(b.add(count, ll.Constant(I64, 1)), ll.Constant(I64, 8)))
            b.store(buffer, slot)
            with b.if_then(b.icmp_unsigned("==", buffer, ll.Constant(PTR, None)), likely=False):
                e.api.call("PyErr_NoMemory")
                e.ret(ll.Constant(PTR, None))
            filled = e.api.call(GATHER_LIST, obj, buffer, n, ll.Constant(I64, row), ll.Constant(I32, int(dtype == ir.F64)))
            e.guard(b.icmp_signed("!=", filled, ll.Constant(I32, 0)))
            sizes = (n, ll.Constant(I64, row)) if row else (n,)
            strides = (ll.Constant(I64, 8 * row), ll.Constant(I64, 8)) if row else (ll.Constant(I64, 8),)
            params[param] = ArrayValue(buffer, sizes, strides)
            buffers.append(buffer)
        self.read.append(Read(obj, n, arg, buffers, arg.scattered or row_of_written))
        for param, index, t in arg.items:
            params[param] = e.unbox(self._item(obj, n, arg.cls, index), ir.EntryArg(t, param), overflow)
        for index, value in arg.pins:
            guard_pin(e, self._item(obj, n, arg.cls, index), value, overflow)
        written_rows = arg.scattered and any(row for _, _, row in arg.gathers)
        for index, child in arg.children:
            self.read_argument(self._item(obj, n, arg.cls, index), child, fn, params, overflow, written_rows)

    def read_array(self, obj: ll.Value, arg: ir.ListArg, fn: ir.Function, params: list) -> None:
        """Check that `obj` is exactly an array.array of arg's typecode and length, and read its
        items and its gather (in place, or a copy) into `params` (a guard miss where it is not so)."""
        e, b = self.e, self.e.builder
        view = self.views[sum(r.arg.typecode is not None for r in self.read)]
        n = ll.Constant(I64, arg.length)
        data = e.api.call(ARRAY_ACQUIRE, obj, view, ll.Constant(I32, ord(arg.typecode)), n)
        e.guard(b.icmp_unsigned("!=", data, ll.Constant(PTR, None)))
        for param, index, t in arg.items:
            k = index if index >= 0 else arg.length + index
            if not 0 <= k < arg.length:
                e.guard(ll.Constant(ll.IntType(1), 0))
                continue
            item = b.load(b.gep(data, [ll.Constant(I64, k)], source_etype=item_type(arg.typecode)),
                          typ=item_type(arg.typecode))
            params[param] = self._number(item, arg.typecode, t)
        buffers = []
        for param, dtype, _ in arg.gathers:
            t = fn.params[param].type
            if not isinstance(t, ir.ArrayType) or t.rank != 1 or t.dtype != (ir.F64 if arg.typecode in "fd" else ir.I64):
                raise ValueError(f"codegen: an array('{arg.typecode}') gathered as {dtype} feeds {t}")
            if (arg.length == 1) != (t.shape[0] == 1):       # a size of 1 is part of the type
                e.guard(ll.Constant(ll.IntType(1), 0))
            if reads_in_place(arg):
                params[param] = ArrayValue(data, (n,), (ll.Constant(I64, 8),))
                continue
            slot = self.slots[sum(len(r.buffers) for r in self.read) + len(buffers)]
            buffer = e.api.call(self.alloc, ll.Constant(I64, 8 * (arg.length + 1)))
            b.store(buffer, slot)
            with b.if_then(b.icmp_unsigned("==", buffer, ll.Constant(PTR, None)), likely=False):
                e.api.call("PyErr_NoMemory")
                e.ret(ll.Constant(PTR, None))
            e.api.call(ARRAY_ITEMS, data, ll.Constant(I32, ord(arg.typecode)), n, buffer)
            params[param] = ArrayValue(buffer, (n,), (ll.Constant(I64, 8),))
            buffers.append(buffer)
        if not (arg.gathers and reads_in_place(arg)):       # nothing reads its memory after this
            e.api.call("PyBuffer_Release", view)
        self.read.append(Read(obj, n, arg, buffers, arg.scattered))

    def _number(self, item: ll.Value, typecode: str, t: ir.ScalarType) -> ll.Value:
        """An item read from an array of `typecode` as the parameter's F64 or I64."""
        b = self.e.builder
        if t == ir.F64:
            if typecode not in "fd":
                raise ValueError(f"codegen: an item of an array('{typecode}') read as {t}")
            return b.fpext(item, DOUBLE) if typecode == "f" else item
        if t != ir.I64 or typecode in "fd":
            raise ValueError(f"codegen: an item of an array('{typecode}') read as {t}")
        if item.type.width == 64:
            return item
        return b.zext(item, I64) if typecode.isupper() else b.sext(item, I64)

    def _item(self, obj: ll.Value, n: ll.Value, cls: type, index: int) -> ll.Value:
        """Item `index` of list or tuple `obj` (n long): a guard miss where there is none."""
        e, b = self.e, self.e.builder
        k = ll.Constant(I64, index) if index >= 0 else b.add(n, ll.Constant(I64, index))
        e.guard(b.and_(b.icmp_signed(">=", k, ll.Constant(I64, 0)), b.icmp_signed("<", k, n)))
        items = b.gep(obj, [ll.Constant(I64, ITEMS_OFFSET)], source_etype=ll.IntType(8))
        if cls is list:
            items = b.load(items, typ=PTR)
        return b.load(b.gep(items, [k], source_etype=PTR), typ=PTR)

    def aliased(self) -> ll.Value:
        """Whether the lists the call writes back are not one object each, or are read by another
        path: Python then runs the call, as the loaded path's loader decides
        (tracer.frontend.loader.scatter_targets, whose parts these are)."""
        written, others = [], []            # (object, whether its items are the lists: rows)
        for r in self.read:
            for _, _, row in r.arg.gathers:
                (written if r.arg.scattered else others).append((r.obj, bool(row)))
            if r.arg.items and not r.same_path:
                others.append((r.obj, False))
        if len(written) == 1 and not written[0][1] and not others:     # one list, nothing else read
            return ll.Constant(ll.IntType(1), 0)
        return self.e.builder.icmp_signed("!=", self.e.api.call(LISTS_ALIASED, *self._parts(written),
                                                                 *self._parts(others)), ll.Constant(I32, 0))

    def _parts(self, parts: list[tuple]) -> list[ll.Value]:
        b = self.e.builder
        objects = b.alloca(PTR, max(len(parts), 1))
        rows = b.alloca(I64, max(len(parts), 1))
        for k, (obj, is_rows) in enumerate(parts):
            b.store(obj, b.gep(objects, [ll.Constant(I64, k)], source_etype=PTR))
            b.store(ll.Constant(I64, int(is_rows)), b.gep(rows, [ll.Constant(I64, k)], source_etype=I64))
        return [objects, rows, ll.Constant(I64, len(parts))]

    def write_back(self) -> None:
        """The gathered numbers of the lists the call wrote into, back into them (an error, such
        as a list that changed size in code the kernel called, returns NULL with it set)."""
        e, b = self.e, self.e.builder
        for obj, n, arg, buffers, _ in self.read:
            if not arg.scattered:
                continue
            if arg.typecode is not None:
                for buffer in buffers:
                    status = e.api.call(ARRAY_SCATTER, obj, ll.Constant(I32, ord(arg.typecode)), buffer, n)
                    with b.if_then(b.icmp_signed("!=", status, ll.Constant(I32, 0)), likely=False):
                        e.ret(ll.Constant(PTR, None))
                continue
            for (_, dtype, row), buffer in zip(arg.gathers, buffers):
                status = e.api.call(SCATTER_LIST, obj, buffer, n, ll.Constant(I64, row),
                                    ll.Constant(I32, int(dtype == ir.F64)))
                with b.if_then(b.icmp_signed("!=", status, ll.Constant(I32, 0)), likely=False):
                    e.ret(ll.Constant(PTR, None))
