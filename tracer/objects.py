"""The symbolic stand-ins the interpreter keeps on its stack besides IR values and constants.

- `ExternalList`: a list or tuple that came from outside the traced code (an argument, or an
  attribute of a user object). Its length is guarded; its items are loaded on every call.
- `ExternalObject`: a user object (a micrograd-style `Neuron`); attribute reads are loaded on every
  call, its class is guarded, and its methods are inlined with `self` bound to it.
- `SymbolicFunction` / `BoundMethod`: functions made or looked up inside the trace, to inline.
- `TransformedFunction`: `grad(f)` made inside the trace; calling it differentiates `f` in place.
- `Cell`: a closure cell of a traced frame.
Lists and tuples *built* inside the traced code are plain Python lists and tuples of symbolic items.
"""
from __future__ import annotations

from dataclasses import dataclass, field


class _Null:
    """CPython's NULL stack slot (pushed before a callable, or an unbound local)."""
    def __repr__(self):
        return "NULL"


NULL = _Null()


@dataclass(eq=False)
class Cell:
    contents: object = NULL


class ExternalList:
    """A list/tuple from outside the trace: guarded length, items loaded per call."""

    def __init__(self, tracer, obj, source):
        self.tracer, self.obj, self.source = tracer, obj, source
        self._items: dict[int, object] = {}

    def __len__(self):
        return len(self.obj)

    def item(self, index: int):
        if index not in self._items:
            from .sources import ItemSource
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
    """A NumPy array argument (an IR value of ArrayType), or `array[i]` of one with axes left:
    `prefix` holds the indices already applied (so `W[j][i]` reads one element, no view).

    What traced code can do with it so far: read elements (`x[i]`, `x[i, j]`, `x[i][j]`, with
    traced or constant ints; negative ones count from the end), `for v in x`, `len(x)`,
    `x.shape`, `x.ndim`, `x.size`, `x.dtype` (tracer.arrays)."""

    def __init__(self, tracer, value, prefix: tuple = ()):
        self.tracer, self.value, self.prefix = tracer, value, prefix

    @property
    def rank(self) -> int:
        return self.value.type.rank - len(self.prefix)

    def __repr__(self):
        return f"<array {self.value.type}{'[...]' if self.prefix else ''}>"


def _array_operation_unsupported(name: str):
    def method(self, *args):
        from .arrays import unsupported
        raise unsupported(self.tracer, f"the operation {name}")
    return method


# arithmetic, comparison, truth and iteration on a whole array are not compiled yet: a clear
# error at trace time (not a Python exception that would become a `raise` in compiled code)
for _name in ["add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "matmul", "and", "or", "xor",
              "lshift", "rshift"]:
    setattr(TracedArray, f"__{_name}__", _array_operation_unsupported(_name))
    setattr(TracedArray, f"__r{_name}__", _array_operation_unsupported(_name))
# (== and != stay identity: the interpreter compares its own states; traced code comparing
# arrays is stopped in COMPARE_OP)
for _name in ["neg", "pos", "abs", "invert", "lt", "le", "gt", "ge", "bool", "iter", "float",
              "int", "index", "contains", "round"]:
    setattr(TracedArray, f"__{_name}__", _array_operation_unsupported(_name))
