"""Lists whose length changes at run time: `DynList`, a list made in the trace and held by the
compiled code in a growing buffer (the IR's `list[...]` type, tracer.ir.list_ops).

A list built in the trace is a Python list of traced items while its length is known at trace
time. Where a data-dependent branch or loop changes its length (`stack.append(x)` in a `while`,
`if i < k: reservoir.append(z)`), the trace fails with ListChanged and is traced again with the
lists made at that site made as DynLists (tracer.frontend.interpreter.trace_frame): `list_new`
where the list is made, then one op per append, pop, item read or write, in order. The handle is
one IR value for the whole function, so branches and loops change the list in place and carry
nothing for it.

Items are numbers of one type (float, int or bool), strings, or tuples of them of one layout; the
type is fixed by the first item (an empty list learns it at its first append). A list whose items
differ in type (a log of ints, floats, strings and None) is traced again as a list of `Mixed`
items (a tag, an int and a float per item): such a list is appended to, written, measured and
returned; an item whose type is known only at run time is read as a `mixed_numbers.MixedNumber`
(the call runs the Python function where it is not a number). Indices are checked as
CPython checks them (IndexError with its messages). What needs the whole list (sum, sorted,
slices, min, max, `in`) runs small Python helpers (tracer.frontend.pybuiltins) whose loops over
the list compile to loops. A DynList that the function returns becomes a Python list.
"""
from __future__ import annotations

from dataclasses import dataclass

from tracer.frontend import mixed_numbers, run_time_strings
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.iteration import ListChanged, RangeIter
from tracer.frontend.objects import TracedArray
from tracer.ir import BOOL, F64, I64, ArrayType, ListType, TupleType

METHODS = ("append", "pop", "insert", "extend", "clear", "copy", "reverse", "index", "count", "remove", "sort")


class DynList:
    """A list of run-time length: `handle` is its `list_new` value, `item` its item type
    (None until the first item is known)."""

    def __init__(self, tracer, handle, item=None):
        self.tracer, self.handle, self.item = tracer, handle, item
        self.site = None        # where the list is made (a retrace may change its item type there)

    def __repr__(self):
        return "<list of run-time length>"

    # a RangeIter over a DynList reads its length at every step (items appended in the loop
    # are seen, as CPython's list iterator sees them)
    def live_length(self, b):
        return length(self.tracer, self)

    def element(self, tracer, index):
        return _load(tracer, self, index)

    def unrolled(self, tracer, start):
        raise tracer.error("a loop over a list whose length is known only at run time cannot unroll here")


@dataclass(frozen=True)
class Mixed:
    """The item type (or a tuple field) of a list of run-time length whose items differ in type
    (float, int, bool, str, None): the IR holds a tag (MIXED_TAGS), an int (an int's or bool's
    value, a string's index in the trace's table) and a float per item."""

    def __str__(self):
        return "mixed"


NONE_ITEM = "None"                   # the type of a None item (held only as Mixed)
MIXED_TAGS = {NONE_ITEM: 0, BOOL: 1, I64: 2, F64: 3, "str": 4}
MIXED_KINDS = {tag: kind for kind, tag in MIXED_TAGS.items()}


def _tag_of(t) -> int:
    return MIXED_TAGS["str" if isinstance(t, run_time_strings.StrField) else t]


def merged(a, b):
    """The item type that holds items of types `a` and `b`, or None."""
    if a == b:
        return a
    if _is_leaf(a) and _is_leaf(b):
        return Mixed()
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elements) == len(b.elements):
        parts = tuple(merged(x, y) for x, y in zip(a.elements, b.elements))
        return None if None in parts else TupleType(parts)
    return None


def _is_leaf(t) -> bool:
    return t in (F64, I64, BOOL, NONE_ITEM) or isinstance(t, (run_time_strings.StrField, Mixed))


def common_type(b, items: list, start=None):
    """The item type of a list of run-time length that holds `items` (and items of type `start`):
    their one type, or Mixed; None when no DynList holds them."""
    t = start
    for x in items:
        u = NONE_ITEM if x is None else item_type(b, x)
        t = u if t is None else merged(t, u) if u is not None else None
        if t is None:
            return None
    return Mixed() if t == NONE_ITEM else t


class DynListMethod:
    """`lst.append` and the other methods of a DynList, to call."""

    def __init__(self, lst: DynList, name: str):
        self.lst, self.name = lst, name


# ------------------------------------------------------------------------------------- making
def item_type(b, value):
    """The type of one item: a scalar type, a TupleType of them (nested tuples too), or None."""
    if type(value) is tuple:
        fields = tuple(item_type(b, x) for x in value)
        if fields and None not in fields:
            return TupleType(fields)
        return None
    if (is_traced(value) and not isinstance(value.type, ArrayType) and value.type in (F64, I64, BOOL)) \
            or (is_number(value) and type(value) in (float, int, bool)):
        return b.kind(value)
    if run_time_strings.is_string(value):          # its index in the trace's string table
        return run_time_strings.StrField()
    if isinstance(value, mixed_numbers.MixedNumber):     # an int or a float, by its tag
        return Mixed()
    return None


def holds_items(b, items: list) -> bool:
    """Whether a DynList can hold these items (numbers, or tuples of numbers, of one type)."""
    types = {item_type(b, x) for x in items}
    return None not in types and len(types) <= 1


def grow_at_run_time(tracer, lst: list, why: str) -> None:
    """A list made in the trace that an operation at an index known only at run time changes in
    length (`insert`, `pop`): ListChanged, so that the call is traced again with the lists made
    where this one was made of run-time length (when they can be: numbers, tuples of numbers)."""
    made = tracer.list_sites.get(id(lst))
    if made is None or made[0] is not lst or made[1] in tracer.grown_sites or not lst \
            or not holds_items(tracer.builder, lst):
        return
    exc = ListChanged(why, tracer.builder.loc)
    exc.sites, exc.grown = frozenset({made[1]}), {made[1]: item_type(tracer.builder, lst[0])}
    exc.final = True
    raise exc


def new(tracer) -> DynList:
    """An empty list. Its item type is set by the first append (`_fix_type`): until then its
    `list_new` says i64."""
    return DynList(tracer, tracer.builder.emit("list_new", (), item=I64))


def made_from(tracer, items: list, item=None):
    """A DynList holding `items` (a Python list built in the trace), or None when they are not
    numbers (or tuples of numbers) of one type. `item`: the item type, when an earlier trace
    saw one (a list made empty)."""
    b = tracer.builder
    t = common_type(b, items, item)
    if items and (t is None or (item is None and not holds_items(b, items))):
        return None                    # (items of different types: Mixed only where a trace asked)
    lst = new(tracer)
    if t is not None:
        set_type(lst, t)
    for x in items:
        append(tracer, lst, x)
    return lst


def fix_type(tracer, lst: DynList, value) -> None:
    """Learn the item type from `value` (the first item), or check `value` has it. An item of
    another type makes the call traced again, the list made a list of Mixed items."""
    b = tracer.builder
    t = NONE_ITEM if value is None else item_type(b, value)
    if t is None:
        raise tracer.error(f"a list of run-time length holds numbers, strings or tuples of them, not "
                           f"{_describe(value)}")
    if lst.item is None:
        set_type(lst, Mixed() if t == NONE_ITEM else t)
    elif merged(lst.item, t) != lst.item:
        wider = merged(lst.item, t)
        if wider is None or lst.site is None:
            raise tracer.error(f"a list of run-time length whose items change type ({lst.item}, then {t}) is "
                               f"not supported; convert them (e.g. with float())")
        exc = ListChanged(f"a list of run-time length whose items change type ({lst.item}, then {t})", b.loc)
        exc.sites, exc.grown, exc.final = frozenset({lst.site}), {lst.site: wider}, True
        raise exc


def set_type(lst: DynList, t) -> None:
    """The IR holds an item as its flat fields (`list[(i64, i64, f64)]` for ((x, y), v))."""
    lst.item = t
    fields = flat_fields(t)
    ir_item = TupleType(fields) if len(fields) > 1 or isinstance(t, TupleType) else fields[0]
    lst.handle.type = ListType(ir_item)
    lst.handle.attrs["item"] = ir_item


def flat_fields(t) -> tuple:
    if isinstance(t, TupleType):
        return tuple(f for e in t.elements for f in flat_fields(e))
    if isinstance(t, Mixed):
        return (I64, I64, F64)
    return (I64,) if isinstance(t, run_time_strings.StrField) else (t,)


def _flatten(t, value, b) -> list:
    if isinstance(t, TupleType):
        return [f for e, x in zip(t.elements, value) for f in _flatten(e, x, b)]
    if isinstance(t, run_time_strings.StrField):
        return [(run_time_strings.index_of(b, value), I64)]
    if isinstance(t, Mixed) and isinstance(value, mixed_numbers.MixedNumber):
        return [(value.tag, I64), (value.number, I64), (value.real, F64)]
    if isinstance(t, Mixed):
        kind = NONE_ITEM if value is None else item_type(b, value)
        number = (0 if value is None else run_time_strings.index_of(b, value) if kind not in (F64, I64, BOOL)
                  else value)
        return [(_tag_of(kind), I64), (0 if kind == F64 else number, I64), (number if kind == F64 else 0.0, F64)]
    return [(value, t)]


def _nest(t, leaves: list, b, tracer=None):
    """The item of type `t` from its flat leaves (consumed from the front; strings from their
    indices in builder `b`'s table, or in a table of strings; `tracer`: the trace's, in one)."""
    if isinstance(t, TupleType):
        return tuple(_nest(e, leaves, b, tracer) for e in t.elements)
    leaf = leaves.pop(0)
    if isinstance(t, run_time_strings.StrField):
        return b[leaf] if isinstance(b, tuple) else run_time_strings.made(b, leaf)
    if isinstance(t, Mixed):
        return _mixed_item(leaf, leaves.pop(0), leaves.pop(0), b, tracer)
    return leaf


def _mixed_item(tag, number, real, b, tracer=None):
    """A Mixed item from its tag, int and float: decoded where the tag is known at trace time."""
    if is_traced(tag):
        if tag.op != "const":             # a number whose type is known only at run time (or Python runs)
            return mixed_numbers.read(tracer, tag, number, real)
        tag = tag.attrs["value"]
    kind = MIXED_KINDS[tag]
    if kind == NONE_ITEM:
        return None
    if kind == "str":
        return b[number] if isinstance(b, tuple) else run_time_strings.made(b, number)
    if kind == F64:
        return real
    if isinstance(b, tuple):
        return bool(number) if kind == BOOL else number
    return b.convert(b.value(number), kind)


def _describe(value) -> str:
    if is_traced(value):
        return f"a {value.type} value"
    return f"a {type(value).__name__}"


def _fields(tracer, lst: DynList, value) -> tuple:
    fix_type(tracer, lst, value)
    b = tracer.builder
    return tuple(b.convert(b.value(x), t) for x, t in _flatten(lst.item, value, b))


# ------------------------------------------------------------------------------------- reading
def length(tracer, lst: DynList):
    return tracer.builder.emit("list_len", (lst.handle,))


def _known(tracer, lst: DynList) -> None:
    if lst.item is None:
        raise tracer.error("reading an item of a list before anything is appended to it is not supported")


def _checked_index(tracer, lst: DynList, index, message: str, extra: int = 0):
    """`index` (an int, or a traced int or bool) as an i64 in [0, len + extra), negative ones
    counted from the end; IndexError(message) when it is out of range."""
    b = tracer.builder
    if is_traced(index) and index.type in (I64, BOOL) or type(index) in (int, bool):
        index = b.convert(b.value(index), I64) if is_traced(index) else int(index)
    else:
        what = index.type if is_traced(index) else type(index).__name__
        raise TypeError(f"list indices must be integers or slices, not {'float' if what == F64 else what}")
    n = length(tracer, lst)
    if not is_traced(index):
        i = b.const(index) if index >= 0 else b.binary("add", n, index)
    else:
        i = b.emit("select", (b.compare("lt", index, 0), b.binary("add", index, n), index))
    limit = b.binary("add", n, extra) if extra else n
    out = b.emit("select", (b.compare("lt", i, 0), b.const(True), b.compare("ge", i, limit)))
    b.raise_if(out, IndexError(message))
    return i


def _unpack(tracer, lst: DynList, v):
    b = tracer.builder
    if isinstance(lst.item, (TupleType, Mixed)):
        leaves = [b.emit("getitem", (v,), index=j) for j in range(len(flat_fields(lst.item)))]
        return _nest(lst.item, leaves, b, tracer)
    return run_time_strings.decoded(lst.item, v, b)


def _load(tracer, lst: DynList, i):
    """The item at i (an i64 known to be in range)."""
    _known(tracer, lst)
    return _unpack(tracer, lst, tracer.builder.emit("list_get", (lst.handle, tracer.builder.value(i))))


def item_at(tracer, lst: DynList, i: int):
    """The item at `i`, which the trace knows is in range (no check)."""
    return _load(tracer, lst, tracer.builder.const(i))


def get(tracer, lst: DynList, index):
    """lst[index]."""
    _known(tracer, lst)
    return _load(tracer, lst, _checked_index(tracer, lst, index, "list index out of range"))


def find(tracer, lst: DynList, value):
    """The index of the first item equal to `value`, or -1 (a NaN `value` is Python's: the
    caller checks it)."""
    if lst.item is None or item_type(tracer.builder, value) is None:
        return -1 if lst.item is None else _scan(tracer, lst, value)
    if item_type(tracer.builder, value) != lst.item:
        return _scan(tracer, lst, value)      # (an int key in a list of floats: compared as Python does)
    return tracer.builder.emit("list_find", (lst.handle, *_fields(tracer, lst, value)))


def _scan(tracer, lst, value):
    from tracer.frontend import pybuiltins
    return tracer.call(pybuiltins.scan_for, [lst, value], {})


def truth(tracer, lst: DynList):
    return tracer.builder.compare("gt", length(tracer, lst), 0)


def to_arrays(tracer, lst: DynList) -> list:
    """One new 1-d array per field of the items (one for a list of numbers)."""
    _known(tracer, lst)
    b = tracer.builder
    return [TracedArray(tracer, b.emit("list_array", (lst.handle,), field=j))
            for j in range(len(flat_fields(lst.item)))]


def iterate(tracer, lst: DynList) -> RangeIter:
    """`for x in lst`: a loop that reads the list's length at every step."""
    return RangeIter(0, None, 1, tracer.builder.const(0), lst)


# ------------------------------------------------------------------------------------- writing
def append(tracer, lst: DynList, value) -> None:
    tracer.builder.emit("list_append", (lst.handle, *_fields(tracer, lst, value)))


def set_item(tracer, lst: DynList, index, value) -> None:
    i = _checked_index(tracer, lst, index, "list assignment index out of range")
    tracer.builder.emit("list_set", (lst.handle, i, *_fields(tracer, lst, value)))


def delete_item(tracer, lst: DynList, index) -> None:
    i = _checked_index(tracer, lst, index, "list assignment index out of range")
    tracer.builder.emit("list_delete", (lst.handle, i))


def pop(tracer, lst: DynList, index=-1):
    _known(tracer, lst)
    b = tracer.builder
    if not is_traced(index) and index == -1:
        b.raise_if(b.compare("eq", length(tracer, lst), 0), IndexError("pop from empty list"))
        return _unpack(tracer, lst, b.emit("list_pop", (lst.handle,)))
    b.raise_if(b.compare("eq", length(tracer, lst), 0), IndexError("pop from empty list"))
    i = _checked_index(tracer, lst, index, "pop index out of range")
    item = _load(tracer, lst, i)
    b.emit("list_delete", (lst.handle, i))
    return item


def insert(tracer, lst: DynList, index, value) -> None:
    """lst.insert(index, value): CPython clamps the index to [0, len] (no IndexError)."""
    b = tracer.builder
    if not (type(index) in (int, bool) or is_traced(index) and index.type in (I64, BOOL)):
        raise TypeError(f"'{_describe(index)[2:]}' object cannot be interpreted as an integer")
    index = b.convert(b.value(index), I64) if is_traced(index) else b.const(int(index))
    n = length(tracer, lst)
    i = b.emit("select", (b.compare("lt", index, 0), b.binary("add", index, n), index))
    i = b.emit("max", (b.const(0), b.emit("min", (i, n))))
    b.emit("list_insert", (lst.handle, i, *_fields(tracer, lst, value)))


# ------------------------------------------------------------------------------------- methods
def call_method(tracer, method: DynListMethod, args: list, kwargs: dict):
    from tracer.frontend import pybuiltins
    lst, name = method.lst, method.name
    if kwargs and name != "sort":
        raise TypeError(f"list.{name}() takes no keyword arguments")
    if name == "append" and len(args) == 1:
        return append(tracer, lst, args[0])
    if name == "pop" and len(args) <= 1:
        return pop(tracer, lst, *args)
    if name == "insert" and len(args) == 2:
        return insert(tracer, lst, *args)
    if name == "extend" and len(args) == 1:
        return tracer.call(pybuiltins.extend_list, [lst, args[0]], {})
    if name == "clear" and not args:
        return tracer.call(pybuiltins.clear_list, [lst], {})
    if name == "copy" and not args:
        return tracer.call(pybuiltins.copied_list, [lst], {})
    if name == "reverse" and not args:
        return tracer.call(pybuiltins.reverse_list, [lst], {})
    if name in ("index", "count", "remove") and len(args) == 1:
        return tracer.call(getattr(pybuiltins, f"list_{name}"), [lst, args[0]], {})
    if name == "sort" and not args:
        return tracer.call(pybuiltins.sort_list, [lst], kwargs)
    raise tracer.error(f"list.{name}() with these arguments is not supported on a list of run-time length")


def python_items(item, columns: list, strings: tuple = ()) -> list:
    """The items of a returned DynList of item type `item`, from one list per flat field (and
    the trace's table of strings)."""
    if isinstance(item, run_time_strings.StrField):
        return [strings[x] for x in columns[0]]
    if not isinstance(item, (TupleType, Mixed)):
        return columns[0]
    if not _holds_mixed(item):            # tuples made by zip, field by field (no Python code per item)
        return list(_zipped(item, iter(columns), strings))
    return [_nest(item, list(row), strings) for row in zip(*columns)]


def _holds_mixed(t) -> bool:
    return isinstance(t, Mixed) or isinstance(t, TupleType) and any(map(_holds_mixed, t.elements))


def _zipped(t, columns, strings: tuple):
    """An iterator over the items of type `t` (no Mixed field), made from their flat columns
    (taken from the iterator `columns` in order) and the table of strings."""
    if isinstance(t, TupleType):
        return zip(*[_zipped(e, columns, strings) for e in t.elements])
    column = next(columns)
    return map(strings.__getitem__, column) if isinstance(t, run_time_strings.StrField) else iter(column)
