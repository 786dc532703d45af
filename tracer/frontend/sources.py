"""Where a traced input comes from, so each call can load it again (like TorchDynamo's Sources).

A number read from an argument, from a list argument or from an attribute of a user object is a
runtime input: it becomes an IR parameter whose `Source` says how to fetch it from the call's
arguments. Lists and objects are mutable, so their contents are re-read on every call (never
frozen); what the trace relied on about their *shape* (a list's length, an object's class, an int
that decided a loop) becomes a guard checked before the compiled code runs.

Numbers, tuples, functions and modules bound to globals or closure cells are trace-time constants
instead, guarded by the identity of the binding (rebinding a global recompiles).

`tracer.frontend.loader` turns sources and guards into one generated Python function per specialization;
the C dispatcher checks binding guards itself on the native fast path.
"""
from __future__ import annotations

import types
from dataclasses import dataclass


class Source:
    """How to fetch one object from a call's arguments. `key` identifies it structurally, so two
    different inputs never share a parameter even when their printed names coincide."""

    @property
    def key(self) -> tuple:
        raise NotImplementedError


@dataclass(eq=False)
class ArgSource(Source):
    index: int
    name: str

    @property
    def key(self):
        return ("arg", self.index)

    def __str__(self):
        return self.name


@dataclass(eq=False)
class RootSource(Source):
    """A mutable object bound to a global, a closure cell or a default (its binding is guarded)."""
    obj: object
    name: str

    @property
    def key(self):
        return ("root", id(self.obj))

    def __str__(self):
        return self.name


@dataclass(eq=False)
class AttrSource(Source):
    base: Source
    attr: str

    @property
    def key(self):
        return (self.base.key, "attr", self.attr)

    def __str__(self):
        return f"{self.base}.{self.attr}"


@dataclass(eq=False)
class ItemSource(Source):
    base: Source
    index: int

    @property
    def key(self):
        return (self.base.key, "item", self.index)

    def __str__(self):
        return f"{self.base}[{self.index!r}]"


@dataclass(eq=False)
class GatherSource(Source):
    """An array the loader builds each call from the list at `base` (tracer.frontend.gathered): its
    numbers (`attr` None), or attribute `attr` of each of its objects. `kind` is ('f64',),
    ('i64',) or ('rows', m) (lists of m floats); the loader checks every item has that kind."""
    base: Source
    attr: str | None
    kind: tuple

    @property
    def key(self):
        return (self.base.key, "gather", self.attr)

    def __str__(self):
        return f"[x.{self.attr} for x in {self.base}]" if self.attr else f"{self.base}[:]"


# ------------------------------------------------------------------------------------- guards
@dataclass(eq=False)
class StructureGuard:
    """The object at `source` has exactly class `cls` (and, for sequences, length `length`; for
    a dict, the keys `keys`, in order)."""
    source: Source
    cls: type
    length: int | None = None
    keys: tuple | None = None

    def __str__(self):
        text = f"type({self.source}) is {self.cls.__name__}"
        text += f" and len({self.source}) == {self.length}" if self.length is not None else ""
        return text + (f" and tuple({self.source}) == {self.keys!r}" if self.keys is not None else "")


@dataclass(eq=False)
class ValueGuard:
    """The object at `source` is `value`: an equal int/bool of the same type (a pinned input),
    an equal str, or the very same object (a function, None, ...)."""
    source: Source
    value: object

    def __str__(self):
        if type(self.value) in (int, bool, float, str):
            return f"{self.source} == {self.value!r}"
        return f"{self.source} is <{type(self.value).__name__}>"


@dataclass(eq=False)
class MissingAttrGuard:
    """The object at `source` has no instance attribute `attr` (a class attribute was used)."""
    source: Source
    attr: str

    def __str__(self):
        return f"{self.attr!r} not in vars({self.source})"


@dataclass(eq=False)
class EachGuard:
    """Every item of the list at `source`: is exactly class `value` ("class"); has attribute
    `attr` equal to `value` (same type; "value"); has no instance attribute `attr` ("no attr")."""
    source: Source
    what: str
    value: object
    attr: str | None = None

    def __str__(self):
        if self.what == "class":
            return f"every item of {self.source} is a {self.value.__name__}"
        if self.what == "value":
            return f"every item of {self.source} has .{self.attr} == {self.value!r}"
        return f"no item of {self.source} has its own .{self.attr}"


@dataclass(eq=False)
class BindingGuard:
    """What a namespace binds is `expected`, by identity. The namespace is a dict (globals,
    builtins, a module's dict), a class's mappingproxy, a closure cell (key None) or a function
    (key names an attribute such as `__defaults__`). `expected` is ABSENT when the key must be
    missing (a builtin not shadowed by a global). The C dispatcher checks dict, cell and attribute
    guards as (namespace, key, expected) tuples."""
    namespace: object
    key: str | None
    expected: object
    label: str

    def __str__(self):
        return self.label

    @property
    def on_tracer_code(self) -> bool:
        """A guard on the tracer's own Python helpers (a helper's `__code__`, a name in its
        module), which nothing rebinds: the loader does not check it per call, and the compile
        cache does not store it (its key covers the tracer's code)."""
        ns = self.namespace
        module = ns.__module__ if type(ns) is types.FunctionType else ns.get("__name__") if type(ns) is dict else None
        return type(module) is str and module.startswith("tracer.")


class _Absent:
    def __repr__(self):
        return "ABSENT"


ABSENT = _Absent()
