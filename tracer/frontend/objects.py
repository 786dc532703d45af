"""The symbolic stand-ins the interpreter keeps on its stack besides IR values and constants.

- `ExternalList`: a list or tuple that came from outside the traced code (an argument, or an
  attribute of a user object). Its length is guarded; its items are loaded on every call.
- `ExternalObject`: a user object (a micrograd-style `Neuron`); attribute reads are loaded on every
  call, its class is guarded, and its methods are inlined with `self` bound to it.
- `SymbolicFunction` / `BoundMethod`: functions made or looked up inside the trace, to inline.
- `TransformedFunction`: `grad(f)` made inside the trace; calling it differentiates `f` in place.
- `Cell`: a closure cell of a traced frame.
- `MaybeNone`: a variable that is None on some paths and a number on others.
- `SymbolicRange`: range() with a traced bound.
- `TracedArray` / `ArrayMethod`: a NumPy array and its bound methods (what traced code does with
  them: tracer.frontend.arrays); `array_unsupported` is the error for what it cannot do yet.
Lists and tuples *built* inside the traced code are plain Python lists and tuples of symbolic items.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from tracer.errors import UnsupportedError
from tracer.frontend.sources import ItemSource


class _Null:
    """CPython's NULL stack slot (pushed before a callable, or an unbound local)."""
    def __repr__(self):
        return "NULL"


NULL = _Null()


@dataclass(frozen=True, eq=False)
class MaybeNone:
    """None on some paths, a number on others (`best = None`, then `best = x`): `value` where
    `present` (a traced bool) holds, else None. A test `is None` reads `present`; any other
    use reads `value` after checking `present` (tracer.frontend.opcodes.stack)."""
    present: object
    value: object


@dataclass(eq=False)
class Cell:
    contents: object = NULL
    real: object = None       # a CPython cell a class made at trace time closes over (kept in step)


class ExternalList:
    """A list/tuple from outside the trace: guarded length, items loaded per call."""
    built = False          # (a ListView of a list built in the trace: returned as a new list)

    def __init__(self, tracer, obj, source):
        self.tracer, self.obj, self.source = tracer, obj, source
        self._items: dict[int, object] = {}

    def __len__(self):
        return len(self.obj)

    def item(self, index: int):
        held = self.tracer.held_in_array(self)    # written into in the trace: its items are in an array now
        if held is not None:
            return held.item(index)
        if index not in self._items:
            self._items[index] = self.tracer.wrap(self.obj[index], ItemSource(self.source, index))
        return self._items[index]

    def items(self) -> list:
        return [self.item(i) for i in range(len(self.obj))]

    def __repr__(self):
        return f"<{type(self.obj).__name__} {self.source}>"


class ExternalObject:
    """A user object from outside the trace: guarded class, attributes loaded per call."""

    def __init__(self, tracer, obj, source):
        self.tracer, self.obj, self.source = tracer, obj, source
        self._attrs: dict[str, object] = {}

    def getattr(self, name: str):
        """CPython's attribute lookup: a property on the class wins, then the instance's own
        attribute (loaded per call), then the class attribute (guarded: not shadowed later)."""
        if name not in self._attrs:
            self._attrs[name] = self.tracer.instance_attribute(self, name)
        return self._attrs[name]

    def __repr__(self):
        return f"<{type(self.obj).__name__} object {self.source}>"


@dataclass(eq=False)
class SymbolicFunction:
    """A function object created by MAKE_FUNCTION inside the trace (a lambda, a comprehension)."""
    code: object
    globals: dict
    name: str
    defaults: tuple = ()
    kwdefaults: dict = field(default_factory=dict)
    closure: tuple = ()


@dataclass(eq=False)
class BoundMethod:
    function: object   # a Python function or SymbolicFunction
    self_obj: object


@dataclass(eq=False)
class TransformedFunction:
    transform: object   # a tracer.gradients.Transform


class SymbolicRange:
    """range(start, stop, step) with a traced bound: a `for` over it compiles to a loop. Any
    other use (len, list, indexing) needs its numbers at trace time, which pins them."""

    def __init__(self, tracer, start, stop, step):
        self.tracer = tracer
        self.args = (start, stop, step)

    def concrete(self) -> range:
        b = self.tracer.builder
        return range(*(b.concretize(a, "range()") for a in self.args))

    def __iter__(self):
        return iter(self.concrete())

    def __len__(self):
        return len(self.concrete())

    def __repr__(self):
        return "range(" + ", ".join(map(str, self.args)) + ")"


class TracedArray:
    """A NumPy array in traced code: `value` is its IR value (of ArrayType).

    Python names and containers share this object, so updating the array in place (`W -= g`)
    rebinds `value` here and every name sees the new contents. A view (`W[j]`, `x.T`) knows how
    it was made from its base (`view`: op, extra operands, attrs), and is made again from the
    base's new value after the base is updated. `param` is the IR parameter when the array is a
    function argument (its final contents are written back, tracer.frontend.arrays)."""

    merged = False      # the array one of several paths made (tracer.frontend.states.ArraySlot): never written

    def __init__(self, tracer, value, base: TracedArray | None = None, view: tuple | None = None, param=None):
        self.tracer, self._value, self.base, self.view, self.param = tracer, value, base, view, param
        self._made_from = base.value if base is not None else None

    @property
    def value(self):
        if self.base is not None and self.base.value is not self._made_from:
            op, extra, attrs = self.view
            self._made_from = self.base.value
            self._value = self.tracer.builder.emit(op, (self._made_from, *extra), **attrs)
        return self._value

    def rebind(self, value) -> None:
        """New contents for an array that is not a view (an in-place update)."""
        assert self.base is None and value.type == self._value.type, (self, value)
        self._value = value

    @property
    def type(self):
        return self.value.type

    @property
    def rank(self) -> int:
        return self.value.type.rank

    def __repr__(self):
        return f"<array {self.value.type}>"


@dataclass(eq=False)
class ArrayMethod:
    """`x.sum` and the other array methods, bound to their array (called by
    tracer.frontend.numpy_api.call_array_method)."""
    array: TracedArray
    name: str


def array_unsupported(tracer, what: str) -> UnsupportedError:
    """The error for `what` (an operation, a method, an argument) of a NumPy array the tracer does
    not handle yet."""
    return tracer.error(f"{what} of a NumPy array is not supported yet")


def _array_operation_unsupported(name: str):
    def method(self, *args):
        raise array_unsupported(self.tracer, f"the operation {name}")
    return method


# the interpreter handles arrays in its opcode handlers (tracer.frontend.arrays); a Python operator
# reaching the object itself is a construct it does not handle: a clear error at trace time
# (not a Python exception that would become a `raise` in compiled code)
for _name in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"]:
    setattr(TracedArray, f"__{_name}__", _array_operation_unsupported(_name))
    setattr(TracedArray, f"__r{_name}__", _array_operation_unsupported(_name))
# (== and != stay identity: the interpreter compares its own states; traced code comparing
# arrays goes through COMPARE_OP)
for _name in ["neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "bool", "iter", "float",
              "int", "index", "contains", "round"]:
    setattr(TracedArray, f"__{_name}__", _array_operation_unsupported(_name))
