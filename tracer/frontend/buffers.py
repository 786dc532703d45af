"""`array.array` arguments in traced code: Python's sequence of numbers over typed memory.

An `array('d')` (or 'f', 'b' 'B' 'h' 'H' 'i' 'I' 'l' 'q') passed in is an `ExternalBuffer`: its
class, typecode and length are guarded (a new length compiles again, as a list's does), its items
read as Python floats and ints. A loop over it, or an index known only at run time, reads it
through an array the loader makes from its memory each call (tracer.frontend.gathered: a
`ListView` of kind ('buffer', typecode); a float64 or int64 array in place of the array's own
items, converted where they are narrower). An item assignment follows CPython's rules for the
typecode: a float into an int array is CPython's TypeError, an int into a float array is
converted, a float into array('f') is rounded to float32, an int out of a narrow array's range
makes the call run the Python function (which raises CPython's OverflowError). Writes go to that
array, which the loader copies back into the array.array after the call (so a call that fails
part way and runs the Python function finds its arguments untouched).

Supported: len, indexing (negative too), item assignment, iteration (for, zip, enumerate, sum,
min, max, sorted...), and the methods `count`, `index`, `reverse`, `tolist`, `__getitem__`, `__len__`, and
the attributes `typecode`, `itemsize`. Anything that changes the length (append, extend, pop,
+=), slicing and the operators give a clear UnsupportedError (the function runs as Python).
"""
from __future__ import annotations

from array import array

from tracer.frontend import pybuiltins
from tracer.frontend.builder import NeedsPython, is_number, is_traced
from tracer.frontend.objects import BoundMethod, ExternalList
from tracer.frontend.sources import AttrSource, StructureGuard, ValueGuard
from tracer.ir import BOOL, F64, I64, ArrayType

# integer typecode -> the range of its items
INT_RANGES = {"b": (-2**7, 2**7 - 1), "B": (0, 2**8 - 1), "h": (-2**15, 2**15 - 1), "H": (0, 2**16 - 1),
              "i": (-2**31, 2**31 - 1), "I": (0, 2**32 - 1), "l": (-2**63, 2**63 - 1), "q": (-2**63, 2**63 - 1)}
FLOAT_CODES = ("f", "d")
TYPECODES = (*INT_RANGES, *FLOAT_CODES)
NATIVE = ("d", "l", "q")                # items already float64 / int64: read without converting


class ExternalBuffer(ExternalList):
    """An `array.array` from outside the trace (`obj`): typecode and length guarded."""

    @property
    def typecode(self) -> str:
        return self.obj.typecode

    def __repr__(self):
        return f"<array('{self.typecode}') {self.source}>"


def wrap(tracer, obj: array, source) -> ExternalBuffer:
    """The symbolic value of array `obj` read from `source` (its guards recorded)."""
    if obj.typecode not in TYPECODES:
        raise tracer.error(f"{source} is an array('{obj.typecode}'), which traced code does not support (it "
                           f"reads arrays of typecodes {''.join(TYPECODES)})")
    tracer.structure_guards.setdefault(source.key, StructureGuard(source, array, len(obj)))
    typecode = AttrSource(source, "typecode")
    tracer.identity_guards.setdefault(typecode.key, ValueGuard(typecode, obj.typecode))
    return ExternalBuffer(tracer, obj, source)


def item_kind(typecode: str):
    """The kind of number an item of an array of `typecode` is: F64 or I64."""
    return F64 if typecode in FLOAT_CODES else I64


def loader_expression(base: str, typecode: str, written: bool) -> str:
    """The loader's expression for the float64/int64 array holding array `base`'s items: its
    own memory where the items are float64/int64 and the function does not write it, else a
    copy (converted from a narrower type)."""
    kind = "float64" if typecode in FLOAT_CODES else "int64"
    view = f"np_frombuffer({base}, {typecode!r})"
    if typecode in NATIVE:
        return f"{view}.copy()" if written else view
    return f"{view}.astype({kind!r})"


def scatter(array_obj: array, items) -> None:
    """After a call that wrote into it: the array's items from the float64/int64 array `items`
    (each in its range: the stores checked it)."""
    import numpy
    numpy.frombuffer(array_obj, array_obj.typecode)[:] = items


def stored(tracer, typecode: str, value):
    """`value` as array(typecode) stores it (CPython's rules): an int into a float array is
    converted (into 'f': rounded to float32), a float into an int array is CPython's TypeError,
    an int outside a narrow array's range makes the call run the Python function (which raises
    CPython's OverflowError)."""
    b = tracer.builder
    if not (is_traced(value) or is_number(value)) or isinstance(getattr(value, "type", None), ArrayType):
        raise tracer.error(f"storing {value!r} into an array('{typecode}') is not supported")
    kind = b.kind(value)
    if typecode in FLOAT_CODES:
        if kind not in (F64, I64, BOOL):
            raise tracer.error(f"storing a {kind} number into an array('{typecode}') is not supported")
        value = b.convert(value, F64) if kind != F64 else value
        if typecode == "f":
            if not is_traced(value):
                return float(array("f", [value])[0])
            value = b.emit("to_f64", (b.emit("to_f32", (value,)),))
        return value
    if kind == F64:
        raise TypeError("'float' object cannot be interpreted as an integer")
    value = b.convert(value, I64) if kind != I64 else value
    lo, hi = INT_RANGES[typecode]
    if typecode not in NATIVE:
        if not is_traced(value):
            array(typecode, [value])            # CPython's OverflowError, at trace time
        else:
            outside = b.emit("select", (b.compare("lt", value, lo), b.const(True), b.compare("gt", value, hi)))
            b.raise_if(outside, NeedsPython(f"a number outside array('{typecode}')'s range"))
    return value


# --------------------------------------------------------------------------------- methods
def attribute(tracer, buf: ExternalBuffer, name: str):
    """`buf.name`: a method bound to it, or a constant attribute."""
    if name in ("typecode", "itemsize"):
        return getattr(buf.obj, name)
    method = METHODS.get(name)
    if method is None:
        raise tracer.error(f"calling .{name}() on an array.array from outside the traced function is not "
                           f"supported (it reads and writes items; its length cannot change)")
    return BoundMethod(method, buf)


def _count(a, x):
    n = 0
    for v in a:
        if v == x:
            n += 1
    return n


def _index(a, x):
    for i, v in enumerate(a):
        if v == x:
            return i
    raise ValueError("array.index(x): x not in array")


def _tolist(a):
    return list(a)


def _getitem(a, i):
    return a[i]


def _len(a):
    return len(a)


METHODS = {"count": _count, "index": _index, "reverse": pybuiltins.reverse_list, "tolist": _tolist, "__getitem__": _getitem, "__len__": _len}
