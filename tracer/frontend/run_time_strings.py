"""Strings chosen at run time: `"#" if n == max_iter else "."`, a label a loop picks.

Strings are constants of the trace. Where a data-dependent branch or loop leaves a different
string on each path, the merged value is a `RunTimeString`: the index of one of those strings in
the trace's table (`GraphBuilder.strings`, each string once), an int the compiled code carries
(`states.StrSlot`). What compiled code does with it: compare it with a string (`==`, `!=`, by
index: equal strings have one index), take its `len`, join strings and such strings
(`"".join(...)`, a `JoinedString`), and return it (alone, in tuples and lists, or joined): the
Python result is made from the table (`instances.materialize`). Anything else (its characters,
formatting, a dict key, a list of run-time length of strings) is a clear UnsupportedError.
"""
from __future__ import annotations

from dataclasses import dataclass

from tracer.errors import UnsupportedError
from tracer.frontend.builder import is_traced
from tracer.ir import BOOL, F64


class RunTimeString:
    """One of the trace's strings, chosen at run time: `index` (a traced int) into `table`."""

    def __init__(self, builder, index):
        self.builder, self.index = builder, index

    def __repr__(self):
        return "<a string chosen at run time>"


def _refuse(self, *args):
    raise UnsupportedError("a string chosen at run time (by a data-dependent branch or loop) can be compared, "
                           "joined and returned; not this", self.builder.loc)


# (no Python-level ==, hash or truth: the tracer's own code must never answer for one)
REFUSED = ("__len__", "__iter__", "__getitem__", "__contains__", "__add__", "__radd__", "__mul__", "__rmul__", "__mod__",
           "__eq__", "__ne__", "__hash__", "__lt__", "__le__", "__gt__", "__ge__", "__bool__", "__str__", "__format__",
           "__int__", "__float__", "__index__")
for _name in REFUSED:
    setattr(RunTimeString, _name, _refuse)


def string_id(builder, s: str) -> int:
    """The index of `s` in the trace's table (added the first time)."""
    ids = builder.string_ids
    if s not in ids:
        ids[s] = len(builder.strings)
        builder.strings.append(s)
    return ids[s]


def index_of(builder, x):
    """The table index of a string or a RunTimeString (an int or a traced int)."""
    return x.index if isinstance(x, RunTimeString) else string_id(builder, x)


def made(builder, index):
    """The value of a merged string: the string itself where its index is a constant."""
    if not is_traced(index):
        return builder.strings[index]
    if index.op == "const":
        return builder.strings[index.attrs["value"]]
    return RunTimeString(builder, index)


@dataclass(frozen=True)
class StrField:
    """The item type (or a tuple field) of a list of run-time length that holds strings: the
    IR holds their indices in the trace's table, an i64 (tracer.frontend.dynlists)."""

    def __str__(self):
        return "str"


def is_string(x) -> bool:
    return type(x) is str or isinstance(x, RunTimeString)


def involved(a, b) -> bool:
    return isinstance(a, RunTimeString) or isinstance(b, RunTimeString)


def compare(tracer, op: str, a, b):
    """a == b, a != b of strings, one chosen at run time; anything else is refused (or, against a
    non-string, CPython's answer: unequal)."""
    builder = tracer.builder
    if not (is_string(a) and is_string(b)):
        if op not in ("eq", "ne"):
            raise TypeError(f"'{SYMBOLS[op]}' not supported between instances of '{_type(a)}' and '{_type(b)}'")
        if is_traced(a) or is_traced(b) or type(a) in (int, float, bool, type(None), tuple, list):
            return op == "ne"
        raise tracer.error("comparing a string chosen at run time with this is not supported")
    x, y = index_of(builder, a), index_of(builder, b)
    if op in ("eq", "ne"):
        return builder.compare(op, x, y)
    # ordered by Python's order of the table's strings: each index mapped to its rank
    order = sorted(range(len(builder.strings)), key=builder.strings.__getitem__)
    rank = {i: r for r, i in enumerate(order)}
    return builder.compare(op, _mapped(builder, x, rank), _mapped(builder, y, rank))


SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">="}


def _type(x) -> str:
    if is_traced(x):
        return {F64: "float", BOOL: "bool"}.get(x.type, "int")
    return "str" if is_string(x) else type(x).__name__


def _mapped(b, index, table: dict):
    """table[index] for a table index known at trace time or at run time (a select per entry)."""
    if not is_traced(index):
        return table[index]
    out = b.const(0)
    for i, value in table.items():
        out = b.emit("select", (b.compare("eq", index, i), b.const(value), out))
    return out


def length(tracer, s: RunTimeString):
    """len(s): the length of the table's string at its index (a select per string)."""
    b = tracer.builder
    return _mapped(b, s.index, {i: len(t) for i, t in enumerate(b.strings)})


class JoinedString:
    """`sep.join(parts)` with a part chosen at run time: returned, it is made from the table."""

    def __init__(self, builder, sep: str, parts: list):
        self.builder, self.sep, self.parts = builder, sep, parts

    def __repr__(self):
        return "<a string joined at run time>"


for _name in REFUSED:
    setattr(JoinedString, _name, _refuse)


def join(sep: str, items) -> JoinedString | None:
    """sep.join(items) where an item is a RunTimeString (the others strings), or of a list of
    run-time length of strings; None for anything else."""
    if isinstance(getattr(items, "item", None), StrField):        # a DynList of strings
        return JoinedString(items.tracer.builder, sep, [items])
    if type(items) not in (list, tuple) or not all(is_string(x) for x in items):
        return None
    chosen = [x for x in items if isinstance(x, RunTimeString)]
    return JoinedString(chosen[0].builder, sep, list(items)) if chosen else None


def result_shape(builder, x) -> tuple:
    """How instances.materialize makes the returned string: ("string", separator or None, table,
    which parts are lists of run-time length)."""
    if not isinstance(x, JoinedString):
        return ("string", None, tuple(builder.strings), (False,))
    return ("string", x.sep, tuple(builder.strings), tuple(not is_string(p) for p in x.parts))


def materialized(shape, values) -> str:
    _, sep, table, lists = shape
    if sep is None:
        return table[values[0]]
    return sep.join(table[i] for v, many in zip(values, lists) for i in (v.tolist() if many else (v,)))


def result_values(tracer, x, to_arrays) -> list:
    """What a returned string carries: its parts' table indices (traced or constant), and for
    a list of run-time length of strings, its array of indices (`to_arrays`: dynlists')."""
    b = tracer.builder
    parts = x.parts if isinstance(x, JoinedString) else [x]
    return [b.value(index_of(b, p)) if is_string(p) else to_arrays(tracer, p)[0].value for p in parts]


def decoded(t, value, builder):
    """A list item's field as the program sees it: a string for a StrField (from its index)."""
    return made(builder, value) if isinstance(t, StrField) else value
