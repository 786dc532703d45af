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
"""
from __future__ import annotations

from typing import NamedTuple

from llvmlite import ir as ll

from codegen.kernel import I32, I64, PTR, ArrayValue
from tracer import ir

GATHER_LIST, SCATTER_LIST, LISTS_ALIASED = "__tracer_gather_list", "__tracer_scatter_list", "__tracer_lists_aliased"
LIST_OF_NUMBERS = "__tracer_list_of_numbers"          # a returned list of run-time length, from its array
NUMBER_KINDS = {ir.F64: 0, ir.I64: 1, ir.BOOL: 2}
SIGNATURES = {GATHER_LIST: (I32, [PTR, PTR, I64, I64, I32]), SCATTER_LIST: (I32, [PTR, PTR, I64, I64, I32]),
              LISTS_ALIASED: (I32, [PTR, PTR, I64, PTR, PTR, I64]), LIST_OF_NUMBERS: (PTR, [PTR, I64, I32])}
SIZE_OFFSET = 16          # PyVarObject's ob_size, after the reference count and the type
ITEMS_OFFSET = 24         # a list's ob_item (a pointer), a tuple's ob_item[] (the items themselves)
CLASS_SYMBOLS = {list: "PyList_Type", tuple: "PyTuple_Type"}


def buffer_count(entry_args: list) -> int:
    """How many arrays the entry gathers (one buffer each, freed on every way out)."""
    return sum(a.buffers for a in entry_args if isinstance(a, ir.ListArg))


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

    def __init__(self, e, memory_alloc: str, slots: list[ll.Value]):
        self.e, self.alloc, self.slots = e, memory_alloc, slots
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
        written_rows = arg.scattered and any(row for _, _, row in arg.gathers)
        for index, child in arg.children:
            self.read_argument(self._item(obj, n, arg.cls, index), child, fn, params, overflow, written_rows)

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
            for (_, dtype, row), buffer in zip(arg.gathers, buffers):
                status = e.api.call(SCATTER_LIST, obj, buffer, n, ll.Constant(I64, row),
                                    ll.Constant(I32, int(dtype == ir.F64)))
                with b.if_then(b.icmp_signed("!=", status, ll.Constant(I32, 0)), likely=False):
                    e.ret(ll.Constant(PTR, None))
