"""The IR's types: scalars (`f64`, `f32`, `i64`, `bool`, and NumPy's other dtypes), tuples, arrays (a dtype and a shape whose
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
    name: str  # "f64", "f32", "f16", "i64", "i32", "i16", "i8", "u64", "u32", "u16", "u8", "bool"

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
# NumPy's narrower dtypes. Traced code stores them as they are and computes in a wider type
# (`compute_type`: i64 for integers, f64 for floats), going back with a `cast` (ints wrap, floats
# round once to nearest: for + - * / and sqrt that is exactly the narrow type's own arithmetic).
F16 = ScalarType("f16")
I8, I16, I32 = ScalarType("i8"), ScalarType("i16"), ScalarType("i32")
U8, U16, U32, U64 = ScalarType("u8"), ScalarType("u16"), ScalarType("u32"), ScalarType("u64")

SIGNED = (I8, I16, I32, I64)
UNSIGNED = (U8, U16, U32, U64)
INTEGERS = SIGNED + UNSIGNED
FLOATS = (F16, F32, F64)
NARROW = (F16, F32, I8, I16, I32, U8, U16, U32, U64)     # computed in compute_type, stored as themselves
BITS = {BOOL: 8, F16: 16, F32: 32, F64: 64, I8: 8, I16: 16, I32: 32, I64: 64, U8: 8, U16: 16, U32: 32, U64: 64}
# NumPy's complex dtypes are storage only: an array of them is seen as its parts, a float array
# with one more axis of size 2 (`complex_parts`); traced code computes on the parts
# (tracer.frontend.complex_arrays), and `complex_from_parts` makes a complex array again.
C64, C128 = ScalarType("c64"), ScalarType("c128")
COMPLEX = (C64, C128)
PART_TYPE = {C64: F32, C128: F64}
BITS.update({C64: 64, C128: 128})

NUMPY_DTYPE_NAMES = {   # an array dtype, as NumPy names it
    F64: "float64", F32: "float32", F16: "float16", I64: "int64", I32: "int32", I16: "int16", I8: "int8",
    U64: "uint64", U32: "uint32", U16: "uint16", U8: "uint8", BOOL: "bool",
}
DTYPES_BY_NAME = {name: t for t, name in NUMPY_DTYPE_NAMES.items()}
ARRAY_DTYPE_NAMES = {**NUMPY_DTYPE_NAMES, C64: "complex64", C128: "complex128"}   # what arrays can store

I64_MIN, I64_MAX = -(2 ** 63), 2 ** 63 - 1


def compute_type(t: ScalarType) -> ScalarType:
    """The type arithmetic on `t` runs in: f64 for floats, i64 for integers, bool for bool."""
    return F64 if t in FLOATS else I64 if t in INTEGERS else t


def int_range(t: ScalarType) -> tuple[int, int]:
    """The smallest and largest value of integer type `t`."""
    bits = BITS[t]
    return (0, 2 ** bits - 1) if t in UNSIGNED else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


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
    -0.0 is not 0.0). A failed check is a guard miss. With `numpy`, the argument is a NumPy
    scalar of type's dtype instead (exactly np.float64, np.uint8, np.bool_...); the narrow types
    are always NumPy scalars.
    """
    type: ScalarType
    param: int | None
    equals: object = None
    numpy: bool = False


@dataclass(frozen=True)
class PinnedStr:
    """A positional argument the trace used as a constant string (`if op == "add"` compiled for
    op "add"): the entry only checks that it is exactly a str (not a subclass) with the same
    contents as `equals`; anything else is a guard miss. It feeds no parameter."""
    equals: str
    param = None
    numpy = False


@dataclass(frozen=True)
class ListArg:
    """A positional argument that is exactly a list (or, read for its items alone, a tuple), or an
    `array.array`, taken by the entry point itself: no loader runs in Python.

    `cls` is list, tuple or array.array; `length` the length it must have (None: any). `gathers` are the arrays
    made of its numbers, each `(param, dtype, row)`: F64 or I64 numbers (exactly floats, or ints
    in 64 bits), one per item (`row` 0) or rows of `row` floats (each item a list of that length).
    `items` are items read as scalars, `(param, index, type)`, and `children` items that are lists
    or tuples read the same way, `(index, ListArg)`; `pins` items the trace used as constants,
    `(index, value)`, checked as a PinnedStr (a str value) or an EntryArg's `equals` (a number) are.
    With `scattered`, the numbers of its gathered array go back into the list after a call that
    succeeded (tracer/csrc/gather.c). An array.array (of typecode `typecode`) has items and at most
    one gather, read from its memory: in place where the kernel only reads float64 or int64 items,
    else a float64 (typecodes 'd', 'f') or int64 copy."""
    cls: type
    length: int | None
    gathers: tuple = ()
    items: tuple = ()
    scattered: bool = False
    children: tuple = ()
    typecode: str | None = None
    pins: tuple = ()

    @property
    def params(self) -> list[int]:
        return ([g[0] for g in self.gathers] + [item[0] for item in self.items]
                + [p for _, child in self.children for p in child.params])

    @property
    def buffers(self) -> int:
        """How many arrays the entry gathers from it and the lists inside it."""
        return len(self.gathers) + sum(child.buffers for _, child in self.children)

    @property
    def arrays(self) -> int:
        """How many `array.array`s the entry reads among it and the lists inside it."""
        return int(self.typecode is not None) + sum(child.arrays for _, child in self.children)
