"""`array.array` objects made in traced code (`array('d')`, `array('l', [0] * (n + 1))`,
`array('d', bytes(8 * n))`): a `MadeArray`, the array's items at trace time (traced numbers
or constants), each stored by CPython's rules for the typecode (buffers.stored: an int into a
float array is converted, a float into an int array is CPython's TypeError, an int out of a
narrow array's range runs the Python function). The function returns it as an `array.array`
(instances.materialize).

Supported: len, indexing at indices known at trace time (and, for short arrays, at run time:
tracer.frontend.selected), item assignment at indices known at trace time, iteration, `in`, truth, and the
methods append, extend, insert, pop, remove, count, index, reverse, tolist, and the attributes
typecode and itemsize. Slicing, comparisons, `+` and `*`, and writes at indices known only at
run time are a clear UnsupportedError. A change inside a data-dependent branch or loop is seen
as a list's change is (states.mutable_snapshot: the array's `items`).
"""
from __future__ import annotations

from array import array

from tracer.frontend import buffers
from tracer.frontend.buffers import TYPECODES, stored
from tracer.frontend.builder import is_traced
from tracer.frontend.objects import BoundMethod


class MadeArray:
    """An array.array made in the trace: `typecode`, and `items` (what each item is now)."""

    def __init__(self, tracer, typecode: str, items: list):
        self.tracer, self.typecode, self.items = tracer, typecode, items

    @property
    def __class__(self):             # isinstance(a, array) holds, as in CPython
        return array

    @property
    def itemsize(self) -> int:
        return array(self.typecode).itemsize

    def __repr__(self):
        return f"<array('{self.typecode}') made in traced code>"

    def __len__(self):
        return len(self.items)

    def __bool__(self):
        return bool(self.items)

    def __iter__(self):
        return iter(self.items)

    def __eq__(self, other):
        raise self.tracer.error("comparing an array.array made in traced code is not supported")

    __ne__ = __lt__ = __le__ = __gt__ = __ge__ = __add__ = __mul__ = __rmul__ = __iadd__ = __imul__ = __eq__

    def __contains__(self, x):
        raise self.tracer.error("`in` on an array.array made in traced code is not supported")

    def __delitem__(self, index):
        raise self.tracer.error("del of an item of an array.array made in traced code is not supported")

    __hash__ = None


def make(tracer, typecode, items) -> MadeArray:
    """array(typecode, items): `items` a list (the initializer's items), bytes (the items'
    memory) or None (tracer.frontend.iterables calls it)."""
    if not isinstance(typecode, str) or typecode not in TYPECODES:
        array(typecode)                           # CPython's TypeError or ValueError
        raise tracer.error(f"array('{typecode}') is not supported in traced code (typecodes {''.join(TYPECODES)})")
    if items is None:
        return MadeArray(tracer, typecode, [])
    if isinstance(items, (bytes, bytearray)):
        return MadeArray(tracer, typecode, array(typecode, items).tolist())
    return MadeArray(tracer, typecode, [stored(tracer, typecode, x) for x in items])


def _position(tracer, a: MadeArray, index, message: str) -> int:
    """A trace-time index into `a` (CPython's TypeError and IndexError)."""
    if is_traced(index):
        raise tracer.error("an index known only at run time into an array.array made in traced code is not "
                           "supported here")
    if type(index) not in (int, bool):
        raise TypeError("array indices must be integers")
    n = len(a.items)
    if not -n <= index < n:
        raise IndexError(message)
    return index % n if n else index


def get_item(tracer, a: MadeArray, index):
    if isinstance(index, slice):
        raise tracer.error("slicing an array.array made in traced code is not supported (it makes a new array)")
    if is_traced(index) and tracer.builder.must_be_concrete(index):
        index = tracer.builder.concretize(index, "this index")
    return a.items[_position(tracer, a, index, "array index out of range")]


def set_item(tracer, a: MadeArray, index, value) -> None:
    if isinstance(index, slice):
        raise tracer.error("assigning a slice of an array.array made in traced code is not supported")
    if is_traced(index) and tracer.builder.must_be_concrete(index):
        index = tracer.builder.concretize(index, "this index")
    a.items[_position(tracer, a, index, "array assignment index out of range")] = stored(tracer, a.typecode, value)


# --------------------------------------------------------------------------------- methods
def append(tracer, a, x):
    a.items.append(stored(tracer, a.typecode, x))


def extend(tracer, a, other, items: list):
    """a.extend(other), given the items of `other` (tracer.frontend.iterables calls it)."""
    if (isinstance(other, array) or isinstance(getattr(other, "obj", None), array)) and other.typecode != a.typecode:
        raise TypeError("can only extend with array of same kind")
    a.items.extend([stored(tracer, a.typecode, x) for x in items])


def insert(tracer, a, i, x):
    if is_traced(i):
        raise tracer.error("array.insert() at an index known only at run time is not supported")
    value = stored(tracer, a.typecode, x)
    a.items.insert(i, value)


def pop(tracer, a, i=-1):
    if not a.items:
        raise IndexError("pop from empty array")
    return a.items.pop(_position(tracer, a, i, "pop index out of range"))


def reverse(tracer, a):
    a.items.reverse()


def tolist(tracer, a):
    return list(a.items)


# (count and index: an array argument's, traced as Python: their comparisons may be known only at run time)
METHODS = {"append": append, "extend": extend, "insert": insert, "pop": pop, "reverse": reverse, "tolist": tolist,
           "count": buffers.METHODS["count"], "index": buffers.METHODS["index"]}
FUNCTIONS = {fn: fn for fn in (append, insert, pop, reverse, tolist)}     # (array() and extend: iterables)


def attribute(tracer, a: MadeArray, name: str):
    """`a.name`: a method bound to it, or a constant attribute."""
    if name in ("typecode", "itemsize"):
        return getattr(a, name)
    if name not in METHODS:
        if hasattr(array, name):
            raise tracer.error(f"array.{name}() on an array.array made in traced code is not supported")
        raise AttributeError(f"'array.array' object has no attribute '{name}'")
    return BoundMethod(METHODS[name], a)
