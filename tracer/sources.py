"""Where a traced input comes from, so each call can load it again (like TorchDynamo's Sources).

A number read from an argument, from a list argument or from an attribute of a user object is a
runtime input: it becomes an IR parameter whose `Source` says how to fetch it from the call's
arguments. Lists and objects are mutable, so their contents are re-read on every call (never
frozen); what the trace relied on about their *shape* (a list's length, an object's class, an int
that decided a loop) becomes a `Guard` checked before the compiled code runs.

Numbers, tuples, functions and modules bound to globals or closure cells are trace-time constants
instead, guarded by the identity of the binding (rebinding a global recompiles).
"""
from __future__ import annotations

from dataclasses import dataclass

from .ir import BOOL, F64, I64, I64_MAX, I64_MIN, ScalarType

PY_TYPE_OF = {F64: float, I64: int, BOOL: bool}


class Source:
    """How to fetch one object from a call's arguments."""

    def load(self, args: tuple, cache: dict):
        key = id(self)
        if key not in cache:
            cache[key] = self._load(args, cache)
        return cache[key]

    def _load(self, args, cache):
        raise NotImplementedError


@dataclass(eq=False)
class ArgSource(Source):
    index: int
    name: str

    def _load(self, args, cache):
        return args[self.index]

    def __str__(self):
        return self.name


@dataclass(eq=False)
class RootSource(Source):
    """A mutable object bound to a global or a closure cell (its binding is guarded)."""
    obj: object
    name: str

    def _load(self, args, cache):
        return self.obj

    def __str__(self):
        return self.name


@dataclass(eq=False)
class AttrSource(Source):
    base: Source
    attr: str

    def _load(self, args, cache):
        return getattr(self.base.load(args, cache), self.attr)

    def __str__(self):
        return f"{self.base}.{self.attr}"


@dataclass(eq=False)
class ItemSource(Source):
    base: Source
    index: int

    def _load(self, args, cache):
        return self.base.load(args, cache)[self.index]

    def __str__(self):
        return f"{self.base}[{self.index}]"


# ------------------------------------------------------------------------------------- guards
@dataclass(eq=False)
class StructureGuard:
    """The object at `source` has exactly class `cls` (and, for sequences, length `length`)."""
    source: Source
    cls: type
    length: int | None = None

    def holds(self, args, cache) -> bool:
        obj = self.source.load(args, cache)
        return type(obj) is self.cls and (self.length is None or len(obj) == self.length)

    def __str__(self):
        text = f"type({self.source}) is {self.cls.__name__}"
        return text + (f" and len({self.source}) == {self.length}" if self.length is not None else "")


@dataclass(eq=False)
class ValueGuard:
    """The number at `source` equals `value` (an int or bool the trace used as a constant)."""
    source: Source
    value: object

    def holds(self, args, cache) -> bool:
        obj = self.source.load(args, cache)
        return type(obj) is type(self.value) and obj == self.value

    def __str__(self):
        return f"{self.source} == {self.value!r}"


@dataclass(eq=False)
class BindingGuard:
    """`namespace[key] is expected` for a globals/builtins dict, or a cell's contents (key None).

    `expected` is ABSENT when the key must be missing (a builtin not shadowed by a global).
    The C dispatcher checks these tuples directly: (namespace, key, expected).
    """
    namespace: object
    key: str | None
    expected: object
    label: str

    def holds(self, args=None, cache=None) -> bool:
        if self.key is None:
            try:
                return self.namespace.cell_contents is self.expected
            except ValueError:
                return False
        return self.namespace.get(self.key, ABSENT) is self.expected

    def __str__(self):
        return self.label


class _Absent:
    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()


def leaf_matches(value, type: ScalarType) -> bool:
    """Whether a loaded leaf can be passed to a parameter of `type` (exact Python type)."""
    if type is not None and value.__class__ is PY_TYPE_OF[type]:
        return type != I64 or I64_MIN <= value <= I64_MAX
    return False
