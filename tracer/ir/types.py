"""The IR's types: scalars (`f64`, `f32`, `i64`, `bool`), tuples, arrays (a dtype and a shape whose
sizes are known or `None`), the tapes autodiff saves loop iterations in, lists of run-time length, and `EntryArg`, how the
native entry point takes one Python argument.
"""
from __future__ import annotations

from dataclasses import dataclass


# ---------------------------------------------------------------------------------------- types
class Type:
    """Base of IR types. Types are immutable and compared by value."""


@dataclass(frozen=True)
class ScalarType(Type):
    name: str  # "f64", "f32", "i64", "bool"

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True)
class TupleType(Type):
    elements: tuple[Type, ...]

    def __str__(self) -> str:
        return "(" + ", ".join(map(str, self.elements)) + ("," if len(self.elements) == 1 else "") + ")"


@dataclass(frozen=True)
class TapeType(Type):
    """A growing stack of records, one per loop iteration: what autodiff saves in a loop's
    forward pass for its backward (`tape_new`, `tape_push`, `tape_get`, `tape_len`, `tape_free`).
    `elements` are the scalar types of one record."""
    elements: tuple[ScalarType, ...]

    def __str__(self) -> str:
        return "tape(" + ", ".join(map(str, self.elements)) + ")"


@dataclass(frozen=True)
class ListType(Type):
    """A Python list whose length changes at run time (`append`, `pop`), made in the function:
    a handle to one growing buffer of items, each a scalar or a tuple of scalars (`item`). Its
    ops (`list_new`, `list_append`, ... in tracer.ir.list_ops) change the list in place, so one
    handle stays the same list through branches and loops. Printed `list[f64]`."""
    item: Type

    @property
    def fields(self) -> tuple:
        """The scalar types of one item (one for a list of numbers)."""
        return self.item.elements if isinstance(self.item, TupleType) else (self.item,)

    def __str__(self) -> str:
        return f"list[{self.item}]"


@dataclass(frozen=True)
class ArrayType(Type):
    """An n-dimensional array of `dtype` elements, laid out as NumPy lays it out: a data pointer
    and, per axis, a size and a stride in bytes (any sign, so views and transposes need no
    copy). `shape` has one entry per axis: the size when the trace knows it, None when only
    the run time does (a new size then does not recompile). Printed `f64[?, 3]`."""
    dtype: ScalarType
    shape: tuple[int | None, ...]

    @property
    def rank(self) -> int:
        return len(self.shape)

    def __str__(self) -> str:
        return f"{self.dtype}[" + ", ".join("?" if d is None else str(d) for d in self.shape) + "]"


F64 = ScalarType("f64")
F32 = ScalarType("f32")
I64 = ScalarType("i64")
BOOL = ScalarType("bool")

NUMPY_DTYPE_NAMES = {F64: "float64", F32: "float32", I64: "int64", BOOL: "bool"}   # an array dtype, as NumPy names it

I64_MIN, I64_MAX = -(2 ** 63), 2 ** 63 - 1


def type_of_constant(value: object) -> ScalarType:
    """The IR type of a Python number used as a constant (bool before int: bool is an int)."""
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return I64
    if isinstance(value, float):
        return F64
    raise TypeError(f"no IR type for constant {value!r}")


def leaf_types(t: Type) -> list[Type]:
    """The leaves (scalars, tapes, lists, arrays) of a (possibly nested) tuple type, left to right."""
    if isinstance(t, TupleType):
        return [leaf for e in t.elements for leaf in leaf_types(e)]
    assert isinstance(t, (ScalarType, TapeType, ArrayType, ListType)), t
    return [t]


# ---------------------------------------------------------------------------- the native entry ABI
@dataclass(frozen=True)
class EntryArg:
    """How the generated CPython entry point takes one positional Python argument.

    `type` is the exact Python type required: F64 -> float, I64 -> int (not bool; it must fit in
    64 bits), BOOL -> bool. `param` is the index of the IR parameter the unboxed value feeds, or
    None when the trace used the argument's value as a trace-time constant: then the entry only
    checks that the argument equals `equals` (same exact type; floats compare by their bits, so
    -0.0 is not 0.0). A failed check is a guard miss.
    """
    type: ScalarType
    param: int | None
    equals: object = None
