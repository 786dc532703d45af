"""Python lists held in arrays, so that loops over them compile to loops.

A loop over a short list unrolls: each item is its own input (a parameter) or its own traced
value. A loop over a *long* input list (longer than LIST_UNROLL_LIMIT, below) would unroll into
thousands of ops, so the list is *gathered* instead: the loader copies its numbers into one
float64/int64 array per call, and the loop indexes that array with a traced counter.

- `ListView`: a list of numbers (or of equal-length lists of numbers: a row is again a
  ListView) held in a 1-d (2-d) array. Made from an input list, by packing a long list built in
  the trace, or by a list comprehension compiled to a loop (which stores item i at index i).
- `ObjectGroup` / `GroupItem`: a list of objects of one class (micrograd's neurons). Each
  instance attribute read in the loop is gathered across the list: floats into an array, lists
  of floats into the rows of one, values equal on every item into a constant. A `GroupItem`
  is "the item at a traced index": its attribute reads index those arrays, its methods inline
  with `self` bound to it.
- `Zipped`: zip() of views of one length, iterated with one counter.

What the loop needs at trace time (an attribute that differs in kind between items, a list
that changes) raises `NotGatherable`, and the loop unrolls as before.

Writes: `xs[i] = v` into an input list (of floats, ints, or rows of floats) writes its array
instead (`store`), every later read of that list in the trace reads the array
(`held_in_array`), and after the call the loader scatters the array back into the list.
"""
from __future__ import annotations

import types

from tracer.frontend import arrays, buffers, indexing
from tracer.frontend.builder import NeedsPython, is_number, is_traced
from tracer.frontend.iteration import AUTODIFF_UNROLL_LIMIT, ListChanged, RangeIter
from tracer.frontend.objects import BoundMethod, ExternalList, ExternalObject, TracedArray
from tracer.frontend.sources import AttrSource, EachGuard, GatherSource, ItemSource
from tracer.ir import BOOL, F64, I64, I64_MAX, I64_MIN, ArrayType


class NotGatherable(ListChanged):
    """The list cannot be held in an array here: the loop over it unrolls instead."""


# --------------------------------------------------------------------------------- what gathers
def float_list(values) -> bool:
    return bool(values) and all(type(v) is float for v in values)


def int_list(values) -> bool:
    return bool(values) and all(type(v) is int and I64_MIN <= v <= I64_MAX for v in values)


def rows_of_floats(values):
    """m when every value is a list of m floats (m > 0), else None."""
    if not values or any(type(v) is not list for v in values):
        return None
    lengths = {len(v) for v in values}
    if len(lengths) != 1 or not lengths.pop() or not all(float_list(v) for v in values):
        return None
    return len(values[0])


def gather_kind(values, equal_ints_are_constant=False):
    """How the loader gathers these values into an array: ('f64',), ('i64',), ('rows', m).
    (An attribute equal on every item is a constant instead, with `equal_ints_are_constant`.)"""
    if float_list(values):
        return ("f64",)
    if int_list(values) and not (equal_ints_are_constant and all(v == values[0] for v in values)):
        return ("i64",)
    m = rows_of_floats(values)
    return ("rows", m) if m is not None else None


def gathered_array(tracer, values, source, kind) -> TracedArray:
    """The array input the loader builds from `values` (read from `source`) each call."""
    import numpy
    key = source.key
    if key not in tracer.arrays:
        dtype = buffers.item_kind(kind[1]) if kind[0] == "buffer" else I64 if kind[0] == "i64" else F64
        example = numpy.array(values, dtype=numpy.int64 if dtype == I64 else numpy.float64)
        t = ArrayType(dtype, arrays.param_shape(example))
        param = tracer.builder.add_param(str(source), t, example)
        tracer.leaves[key] = (source, param)
        # param=: an item assignment copies it once and writes the final contents back into the
        # loader's array, which the loader then scatters into the list (`store` below)
        tracer.arrays[key] = TracedArray(tracer, param, param=param)
        tracer.gathered_sources[param] = (source, len(values))
    return tracer.arrays[key]


def view_of(tracer, x, always: bool = False):
    """A ListView of `x` when it is a list that can be held in an array, else None: an input
    list of numbers or of equal rows (gathered by the loader), a list of numbers built in the
    trace (packed), a ListView. `always`: even in a trace whose loops over lists unroll."""
    if isinstance(x, ListView):
        return x
    if not tracer.gather_lists and not always:
        return None
    if isinstance(x, ExternalList):
        if type(x.obj) is not list and not isinstance(x, buffers.ExternalBuffer):
            return None                # (the loader's gather reads lists and arrays; tuples unroll)
        held = _array_holding(tracer, x)
        if held is not None:           # (one array per list: a write is seen by every read)
            return held[0]
        items = list(x.obj)
        kind = ("buffer", x.typecode) if isinstance(x, buffers.ExternalBuffer) else gather_kind(items)
        if kind is None:
            return None
        source = GatherSource(x.source, None, kind)
        return ListView(tracer, gathered_array(tracer, items, source, kind), len(items), row_length=_row(kind))
    if type(x) is list and x and all(is_traced(v) or is_number(v) for v in x):
        if len({tracer.builder.kind(v) for v in x}) != 1 or isinstance(getattr(x[0], "type", None), ArrayType):
            return None                # (one kind of number: an array would promote ints to floats)
        packed = arrays.array_from(tracer, x)
        return ListView(tracer, TracedArray(tracer, packed), len(x), built=True)
    return None


def group_of(tracer, x):
    """An ObjectGroup of an input list of objects of one class, else None."""
    if not isinstance(x, ExternalList) or isinstance(x, ListView) or not tracer.gather_lists \
            or type(x.obj) is not list:
        return None
    items = list(x.obj)
    if not items or not all(type(o) is type(items[0]) for o in items):
        return None
    if not (hasattr(items[0], "__dict__") and type(items[0]).__module__ not in ("builtins", "numpy")):
        return None
    return ObjectGroup(tracer, x)


# --------------------------------------------------------------------------------- lists of numbers
class Buffer:
    """The array a compiled list comprehension fills: made at its first append (when the item
    type is known), `size` items long."""

    def __init__(self, size: int):
        self.size, self.array = size, None


class ListView(ExternalList):
    """A list held in `array` (1-d: numbers; 2-d: rows, each again a ListView), `length` long.
    While a compiled comprehension fills it, `buffer` is its Buffer and `count` the next index.
    It reads like an input list (an ExternalList, whose paths it shares); an item assignment
    writes its array (`store`), and one held from an input list is scattered back after the
    call."""
    carried = True

    def __init__(self, tracer, array, length: int, buffer: Buffer | None = None, count=None, row_length=None,
                 built: bool = False):
        super().__init__(tracer, [None] * length, None)     # (`obj` gives its type and length)
        self._array, self.length, self.buffer, self.count = array, length, buffer, count
        self.row_length = row_length                # 2-d: the length of a row
        self.built = built                          # made in the trace (not an input's items)

    def __repr__(self):
        return f"<list of {self.length} held in an array>"

    # a ListView is rebuilt from these when a loop carries it (branches.layout_of)
    def fields(self) -> tuple:
        return (self.tracer, self._array, self.length, self.buffer, self.count, self.row_length, self.built)

    @property
    def array(self) -> TracedArray:
        array = self._array if self._array is not None else self.buffer.array
        if array is None:                           # a comprehension that appended nothing
            raise NotGatherable("an empty list comprehension", None)
        return array

    def __len__(self):
        return self.length

    def element(self, tracer, index):
        """The item at `index` (a traced int in range, or an int): a number or a row."""
        item = indexing.subscript(tracer, self.array, index)
        if isinstance(item, TracedArray):
            return ListView(tracer, item, self.row_length, built=self.built)
        if is_traced(item):                 # a Python list's number, not a NumPy scalar
            tracer.python_scalars.add(item)
        return item

    def item(self, index: int):
        return self.element(self.tracer, index)

    def items(self) -> list:
        """The items, one load each (for a short list, or an operation loops do not cover)."""
        return [self.element(self.tracer, i) for i in range(self.length)]

    def unrolled(self, tracer, start: int):
        return iter([self.element(tracer, i) for i in range(start, self.length)])

    # ---- a list comprehension compiled to a loop fills the list, one item per iteration
    def append(self, tracer, value):
        b = tracer.builder
        if tracer.unroll_loops:        # autodiff reads values, not memory: a differentiated comprehension unrolls
            raise NotGatherable("a list comprehension in a differentiated function", b.loc)
        if not (is_traced(value) or is_number(value)) or isinstance(getattr(value, "type", None), ArrayType):
            raise NotGatherable("a list comprehension of non-numbers", b.loc)
        kind = b.kind(value)
        buffer = self.buffer
        if buffer.array is None:
            if kind == BOOL:
                raise NotGatherable("a list comprehension of bools", b.loc)
            made = _allocate(tracer, kind, buffer.size)
            buffer.array = TracedArray(tracer, made)
        if buffer.array.type.dtype != kind:
            raise NotGatherable("a list comprehension whose items change type", b.loc)
        b.emit("store", (buffer.array.value, b.value(value), b.value(self.count)))
        return ListView(tracer, None, self.length, buffer, b.binary("add", self.count, 1), built=True)

    def finish(self, tracer):
        """After the comprehension's loop: every iteration appended exactly once (else the call
        runs the Python function, which builds the list itself)."""
        if self.buffer is None:
            return self
        b = tracer.builder
        b.raise_if(b.compare("ne", self.count, self.length),
                   NeedsPython("a list comprehension that skips items is computed by Python"))
        return ListView(tracer, self.array, self.length, built=True)


def _allocate(tracer, kind, size: int):
    """A `full` array of `size` zeros made at the top of the function (before every loop)."""
    b = tracer.builder
    here = len(b.block.values)
    made = b.emit("full", (b.const(0.0 if kind == F64 else 0), b.const(size)), shape=(size,))
    moved = b.block.values[here:]
    del b.block.values[here:]
    top = b.enclosing[0] if b.enclosing else b.block
    top.values[:0] = moved
    return made


def _row(kind):
    return kind[1] if kind[0] == "rows" else None


# --------------------------------------------------------------------------------- writes
def store(tracer, view: ListView, index, value) -> None:
    """`view[index] = value` into the array that holds the list. An input list's array is
    written back into the list after each call (the loader scatters it, tracer/csrc/gather.c); from
    here on, the trace reads that list from the array (`held_in_array`), never from the list."""
    b = tracer.builder
    array = view.array
    source = gather_source(tracer, view)
    noun = sequence_noun(tracer, view)
    if isinstance(index, slice) or view.row_length is not None:
        raise tracer.error(f"assigning a slice or a whole row of a {noun} held in an array is not supported")
    if noun == "array":
        value = buffers.stored(tracer, source.kind[1], value)
    if not (is_traced(value) or is_number(value)) or isinstance(getattr(value, "type", None), ArrayType) \
            or b.kind(value) != array.type.dtype:
        noun = "int" if array.type.dtype == I64 else "float"
        raise tracer.error(f"only {'an' if noun == 'int' else 'a'} {noun} can be stored into this list of {noun}s "
                           f"in traced code (it is held in an array of {noun}s)")
    if not is_traced(index):
        if type(index) not in (int, bool):
            raise index_type_error(noun, type(index).__name__)
        if not -len(view) <= index < len(view):
            raise IndexError(f"{noun} assignment index out of range")
        index = int(index) % len(view)
    indexing.store_item(tracer, array, index, value)
    if source is not None:
        tracer.written_gathers[source.key] = source


def gather_source(tracer, view: ListView):
    """The GatherSource of the input list (or array.array) whose array holds `view`, or None."""
    root = view.array
    while root.base is not None:
        root = root.base
    return tracer.gathered_sources[root.param][0] if root.param in tracer.gathered_sources else None


def index_type_error(noun: str, index_type: str) -> TypeError:
    """CPython's TypeError for an index of the wrong type into a list, tuple or array.array."""
    if noun == "array":
        return TypeError("array indices must be integers")
    return TypeError(f"{noun} indices must be integers or slices, not {index_type}")


def sequence_noun(tracer, x) -> str:
    """"array" for an array.array or a view of one (CPython's messages name it), else "list"."""
    if isinstance(x, buffers.ExternalBuffer):
        return "array"
    source = gather_source(tracer, x) if isinstance(x, ListView) and x._array is not None else None
    return "array" if source is not None and source.kind[0] == "buffer" else "list"


def writable_view(tracer, ext: ExternalList) -> ListView:
    """The ListView an item assignment into `ext` writes: `ext` itself (a ListView), the array
    already holding it, or a new gather."""
    view = view_of(tracer, ext, always=True)
    if view is None:
        raise tracer.error(f"item assignment into {ext!r}: traced code writes into input lists of floats, of "
                           f"ints, or of equal-length rows of floats (held in an array), not into this one")
    return view


def held_in_array(tracer, ext: ExternalList):
    """The ListView holding input list `ext` when the trace has written into that array (its
    items must then be read from the array, not loaded from the list), else None."""
    found = _array_holding(tracer, ext)
    return found[0] if found is not None and found[1].key in tracer.written_gathers else None


def _array_holding(tracer, ext: ExternalList):
    """(ListView, GatherSource) of the array already holding input list `ext`: its own gather,
    or a row of the gathered rows of its parent list (`rows[i]`, or `objs[i].attr`); else None."""
    source = ext.source
    own = tracer.arrays.get((source.key, "gather", None))
    if own is not None:
        return _whole(tracer, own)
    if isinstance(source, ItemSource):
        parent_key, attr, row = source.base.key, None, source.index
    elif isinstance(source, AttrSource) and isinstance(source.base, ItemSource):
        parent_key, attr, row = source.base.base.key, source.attr, source.base.index
    else:
        return None
    parent = tracer.arrays.get((parent_key, "gather", attr))
    if parent is None or tracer.gathered_sources[parent.param][0].kind[0] != "rows":
        return None
    view, gathered_source = _whole(tracer, parent)
    return view.element(tracer, row), gathered_source


def _whole(tracer, array: TracedArray):
    source, length = tracer.gathered_sources[array.param]
    return ListView(tracer, array, length, row_length=_row(source.kind)), source


# --------------------------------------------------------------------------------- lists of objects
_MISSING = object()


class ObjectGroup:
    """An input list of objects of one class, attributes gathered per name on first read."""

    def __init__(self, tracer, ext: ExternalList):
        self.tracer, self.ext = tracer, ext
        self.cls = type(ext.obj[0])
        self.length = len(ext.obj)
        self.fields: dict[str, object] = {}
        tracer.each_guards.setdefault((ext.source.key, "class"), EachGuard(ext.source, "class", self.cls))

    def __len__(self):
        return self.length

    def element(self, tracer, index):
        return GroupItem(self, index)

    def unrolled(self, tracer, start: int):
        return iter(self.ext.items()[start:])

    def field(self, name: str):
        """What attribute `name` of the items is: a ListView (floats, or rows of floats) or a
        constant (equal on every item, guarded)."""
        if name in self.fields:
            return self.fields[name]
        tracer = self.tracer
        objs = list(self.ext.obj)
        if not all(name in vars(o) for o in objs):
            raise NotGatherable(f"attribute {name!r} is not on every item", tracer.loc)
        values = [vars(o)[name] for o in objs]
        kind = gather_kind(values, equal_ints_are_constant=True)
        if kind is not None:
            source = GatherSource(self.ext.source, name, kind)
            made = ListView(tracer, gathered_array(tracer, values, source, kind), self.length, row_length=_row(kind))
        elif type(values[0]) in (int, bool, float) and all(type(v) is type(values[0]) and v == values[0] for v in values) \
                or all(v is values[0] for v in values) and (values[0] is None or isinstance(values[0], types.FunctionType)):
            made = values[0]
            key = (self.ext.source.key, "attr", name)
            tracer.each_guards.setdefault(key, EachGuard(self.ext.source, "value", made, name))
        else:
            raise NotGatherable(f"attribute {name!r} differs in kind between the items", tracer.loc)
        self.fields[name] = made
        return made


class GroupItem(ExternalObject):
    """The item of an ObjectGroup at a traced index (an ExternalObject for method calls)."""
    carried = True

    def __init__(self, group: ObjectGroup, index):
        super().__init__(group.tracer, group.ext.obj[0], group.ext.source)
        self.group, self.index = group, index

    def fields(self) -> tuple:
        return (self.group, self.index)

    def getattr(self, name: str):
        tracer, group = self.tracer, self.group
        try:
            raw = tracer.class_lookup(group.cls, name)
        except AttributeError:
            raw = _MISSING
        if isinstance(raw, property):
            return tracer.call(raw.fget, [self], {})
        if name in vars(self.obj):
            field = group.field(name)
            return field.element(tracer, self.index) if isinstance(field, ListView) else field
        if raw is _MISSING:
            raise AttributeError(f"'{group.cls.__name__}' object has no attribute '{name}'")
        if not (name.startswith("__") and name.endswith("__")):   # (special methods come from the class)
            if any(name in vars(o) for o in group.ext.obj):
                raise NotGatherable(f"attribute {name!r} is the class's on some items only", tracer.loc)
            key = (group.ext.source.key, "no attr", name)
            tracer.each_guards.setdefault(key, EachGuard(group.ext.source, "no attr", None, name))
        if isinstance(raw, types.FunctionType):
            return BoundMethod(raw, self)
        if isinstance(raw, staticmethod):
            return raw.__func__
        if type(raw) in (float, int, bool):
            return raw
        raise NotGatherable(f"attribute {name!r} of class {group.cls.__name__}", tracer.loc)

    def __repr__(self):
        return f"<{self.group.cls.__name__} object {self.source}[i]>"


# --------------------------------------------------------------------------------- zip
class Zipped:
    """zip() of views of one length: the item at an index is the tuple of theirs."""

    def __init__(self, parts: tuple):
        self.parts = parts
        self.length = min(len(p) for p in parts)

    def __len__(self):
        return self.length

    def element(self, tracer, index):
        return tuple(p.element(tracer, index) for p in self.parts)

    def unrolled(self, tracer, start: int):
        return iter([self.element(tracer, i) for i in range(start, self.length)])


# --------------------------------------------------------------------------------- iteration
# A loop over a list of more items than this is gathered. Measured with the micrograd MLP
# (2 -> w -> w -> 1): at w = 8 the gathered and the unrolled call cost the same, at w = 16 the
# gathered one is 2x faster to call and 4x faster to compile (unrolled, every weight is an input).
LIST_UNROLL_LIMIT = 8


def unroll_limit(tracer) -> int:
    """Differentiated, lists up to AUTODIFF_UNROLL_LIMIT unroll: a loop needs a tape there, and
    the list MLP of examples/train_lists.py (2 -> 16 -> 16 -> 1) compiled its train step in 4.5 s
    and stepped in 42 us so, against 7.4 s and 47 us with its 16-item sums as loops."""
    return AUTODIFF_UNROLL_LIMIT if tracer.unroll_loops else LIST_UNROLL_LIMIT


def loop_over(tracer, view):
    """The iterator of a `for` over `view` (a ListView, ObjectGroup or Zipped): a RangeIter, whose
    loop compiles to a loop op, or (short) a Python iterator over its items, which unrolls."""
    if len(view) <= unroll_limit(tracer):
        return view.unrolled(tracer, 0)
    tracer.gathered_lists = True
    return RangeIter(0, len(view), 1, tracer.builder.const(0), view)


def iterator_of(tracer, x):
    """The iterator of `for v in x` when x is (or can become) a list held in an array, else None.
    A short input list is not gathered: its loop unrolls over its own items."""
    if isinstance(x, (ListView, Zipped)):
        return loop_over(tracer, x)
    if isinstance(x, ExternalList) and len(x) > unroll_limit(tracer):
        view = view_of(tracer, x) or group_of(tracer, x)
        if view is not None:
            return loop_over(tracer, view)
    return None


def zip_of(tracer, iterables):
    """zip() as one compiled loop when every argument is a long list that can be held in an
    array (one counter indexes them all), else None."""
    if not iterables or any(type(x) is list and len(x) <= unroll_limit(tracer) for x in iterables):
        return None
    views = []
    for x in iterables:
        if isinstance(x, ExternalList) and len(x) <= unroll_limit(tracer):
            return None
        view = view_of(tracer, x) or group_of(tracer, x)
        if view is None:
            return None
        views.append(view)
    return loop_over(tracer, Zipped(tuple(views)))


class ArrayRows:
    """zip() of arrays, or enumerate() of one (`start` then): the item at an index is the tuple
    of the arrays' rows (or elements) there, after the count for enumerate."""

    def __init__(self, arrays_: tuple, start=None):
        self.arrays, self.start = arrays_, start

    def element(self, tracer, index):
        rows = tuple(indexing.subscript(tracer, a, index) for a in self.arrays)
        return rows if self.start is None else (tracer.builder.binary("add", index, self.start), *rows)

    def unrolled(self, tracer, start: int):
        raise tracer.error("a loop over zip() or enumerate() of arrays that cannot compile to a loop")


def over_arrays(x) -> bool:
    """Whether a RangeIter's sequence `x` is an array, or zip() or enumerate() of arrays."""
    return isinstance(x, (TracedArray, ArrayRows))


def rows_of(tracer, iterables, start=None):
    """zip(*iterables) of arrays (enumerate(array) with `start`) as a compiled loop over their
    first axis, as long as the shortest; None unless every iterable is an array."""
    if not iterables or not all(isinstance(x, TracedArray) for x in iterables):
        return None
    if any(x.rank == 0 for x in iterables):
        raise TypeError("iteration over a 0-d array")
    b = tracer.builder
    length = None
    for x in iterables:
        n = arrays.sizes_of(tracer, x.value)[0]
        length = n if length is None else b.emit("select", (b.value(b.compare("lt", n, length)), b.value(n),
                                                              b.value(length)))
    return RangeIter(0, length, 1, b.const(0), ArrayRows(tuple(iterables), start))


def element_at(tracer, sequence, index):
    """The item at a traced `index` of what a RangeIter iterates (an array or a view)."""
    if isinstance(sequence, TracedArray):
        return indexing.subscript(tracer, sequence, index)
    return sequence.element(tracer, index)


class Enumerated:
    """enumerate() of a view: the item at an index is (start + index, the view's item)."""

    def __init__(self, view, start):
        self.view, self.start, self.length = view, start, len(view)

    def __len__(self):
        return self.length

    def element(self, tracer, index):
        number = index if self.start == 0 else tracer.builder.binary("add", index, self.start)
        return (number, self.view.element(tracer, index))

    def unrolled(self, tracer, start: int):
        return iter(list(zip(range(self.start + start, self.start + self.length), self.view.unrolled(tracer, start))))


def enumerate_of(tracer, iterable, start):
    """enumerate() as a compiled loop over a long list, else None."""
    if isinstance(iterable, ExternalList) and len(iterable) <= unroll_limit(tracer):
        return None
    view = (view_of(tracer, iterable) or group_of(tracer, iterable)) \
        if isinstance(iterable, (ExternalList, ListView)) else None
    return None if view is None else loop_over(tracer, Enumerated(view, start))
