"""The typed SSA IR: the contract between the front end (`tracer`) and the back end (`codegen`).

A `Function` has typed parameters and a `Block` of `Value`s in definition order; each value is one
operation (`op`, a name from `tracer.ops.OPS`) applied to earlier values (`args`), with static
attributes (`attrs`, e.g. a constant's number), a result `type`, and the user's source line (`loc`).
The block's `results` are what the function returns (one value; a `tuple` op builds several).

    >>> print(fn)                      # a table, one line per value, like torch.fx's graph print
    func fma(x: f64, y: f64, z: f64) -> f64
      value  op   operands  type  source
      %0     mul  x, y      f64   fma.py:12  return x * y + z
      %1     add  %0, z     f64   fma.py:12  return x * y + z
      return %1

Values never change after they are built, except through `Function.replace_all_uses`, which passes
use; every pass returns a new or rewritten `Function` that `verify` accepts.
Structured control flow (a later issue) will put `Block`s inside values (`Value.regions`).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Iterator

from .errors import SourceLoc


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


F64 = ScalarType("f64")
F32 = ScalarType("f32")
I64 = ScalarType("i64")
BOOL = ScalarType("bool")

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


def leaf_types(t: Type) -> list[ScalarType]:
    """The scalar leaves of a (possibly nested) tuple type, left to right."""
    if isinstance(t, TupleType):
        return [leaf for e in t.elements for leaf in leaf_types(e)]
    assert isinstance(t, ScalarType), t
    return [t]


# ---------------------------------------------------------------------------------------- values
class Value:
    """One SSA value: the result of applying `op` to `args` (earlier values)."""

    __slots__ = ("op", "args", "attrs", "type", "loc", "name", "regions")

    def __init__(self, op: str, args: tuple["Value", ...], type: Type, attrs: dict | None = None,
                 loc: SourceLoc | None = None, name: str | None = None):
        self.op = op
        self.args = tuple(args)
        self.attrs = attrs or {}
        self.type = type
        self.loc = loc
        self.name = name          # set for params (the Python argument name); else numbered at print
        self.regions: list[Block] = []

    def __repr__(self) -> str:
        return f"<Value {self.name or hex(id(self))} = {self.op} : {self.type}>"


@dataclass
class Block:
    """A list of values in definition order and the values it yields."""
    values: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)


@dataclass
class Function:
    name: str
    params: list[Value]               # op "param", attrs {"index": i}, name = Python argument name
    body: Block
    loc: SourceLoc | None = None      # the `def` line

    @property
    def result(self) -> Value:
        return self.body.results[0]

    @property
    def result_type(self) -> Type:
        return self.result.type

    def walk(self) -> Iterator[Value]:
        """Every value of the body, nested regions included, in definition order."""
        def visit(block: Block):
            for v in block.values:
                yield v
                for region in v.regions:
                    yield from visit(region)
        yield from visit(self.body)

    def uses(self) -> dict[Value, int]:
        """How many times each value is used as an operand or a result."""
        counts: dict[Value, int] = {}
        def visit(block: Block):
            for v in block.values:
                for a in v.args:
                    counts[a] = counts.get(a, 0) + 1
                for region in v.regions:
                    visit(region)
            for r in block.results:
                counts[r] = counts.get(r, 0) + 1
        visit(self.body)
        return counts

    def replace_all_uses(self, old: Value, new: Value) -> None:
        assert old.type == new.type, (old.type, new.type)
        def visit(block: Block):
            for v in block.values:
                if old in v.args:
                    v.args = tuple(new if a is old else a for a in v.args)
                for region in v.regions:
                    visit(region)
            block.results = [new if r is old else r for r in block.results]
        visit(self.body)

    def __str__(self) -> str:
        return format_function(self)


def make_param(index: int, name: str, type: ScalarType, loc: SourceLoc | None = None) -> Value:
    return Value("param", (), type, {"index": index}, loc=loc, name=name)


# -------------------------------------------------------------------------------------- printer
def value_names(fn: Function) -> dict[Value, str]:
    """Printable names: parameters by their Python name, other values %0, %1, ..."""
    names = {p: p.name for p in fn.params}
    counter = itertools.count()
    for v in fn.walk():
        names[v] = f"%{next(counter)}"
    return names


def _format_attrs(v: Value) -> str:
    if v.op == "const":
        return repr(v.attrs["value"])
    return ", ".join(f"{k}={val!r}" for k, val in v.attrs.items())


def format_function(fn: Function, show_source: bool = True) -> str:
    """A table, one line per value: name, op, operands, type, source location and line."""
    names = value_names(fn)
    params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    header = f"func {fn.name}({params}) -> {fn.result_type}"
    rows = []
    for v in fn.walk():
        operands = ", ".join(names[a] for a in v.args)
        attrs = _format_attrs(v)
        if attrs:
            operands = f"{operands}, {attrs}" if operands else attrs
        where = ""
        if show_source and v.loc is not None:
            where = f"{v.loc.filename.rsplit('/', 1)[-1]}:{v.loc.lineno}"
            line = v.loc.source_line
            if line:
                where += f"  {line}"
        rows.append((names[v], v.op, operands, str(v.type), where))
    widths = [max([len(r[i]) for r in rows] + [len(h)]) for i, h in enumerate(("value", "op", "operands", "type"))]
    def fmt(row):
        cells = [row[i].ljust(widths[i]) for i in range(4)]
        return ("  " + "  ".join(cells) + "  " + row[4]).rstrip()
    lines = [header, fmt(("value", "op", "operands", "type", "source"))]
    lines += [fmt(r) for r in rows]
    lines.append("  return " + ", ".join(names[r] for r in fn.body.results))
    return "\n".join(lines)


# ------------------------------------------------------------------------------------- verifier
class VerificationError(Exception):
    pass


def verify(fn: Function) -> Function:
    """Check that `fn` is well formed: known ops, right arity and types, definitions before uses.

    Returns `fn` so it can wrap a pass: `verify(fold_constants(fn))`.
    """
    from .ops import OPS  # ops.py imports this module for the types

    defined: set[Value] = set()
    for i, p in enumerate(fn.params):
        if p.op != "param" or p.attrs.get("index") != i or not isinstance(p.type, ScalarType):
            raise VerificationError(f"{fn.name}: parameter {i} is malformed: {p!r}")
        defined.add(p)

    def check_block(block: Block):
        for v in block.values:
            if v in defined:
                raise VerificationError(f"{fn.name}: {v!r} is defined twice")
            opdef = OPS.get(v.op)
            if opdef is None or v.op == "param":
                raise VerificationError(f"{fn.name}: unknown op {v.op!r}")
            missing = [name for name in opdef.attrs if name not in v.attrs]
            if missing:
                raise VerificationError(f"{fn.name}: {v!r} lacks the attribute(s) {', '.join(missing)}")
            for a in v.args:
                if a not in defined:
                    raise VerificationError(f"{fn.name}: {v!r} uses {a!r} before it is defined")
            try:
                expected = opdef.result_type(tuple(a.type for a in v.args), v.attrs)
            except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
                raise VerificationError(f"{fn.name}: {v!r}: {exc}") from None
            if expected != v.type:
                raise VerificationError(f"{fn.name}: {v!r} has type {v.type}, its op gives {expected}")
            for region in v.regions:
                check_block(region)
            defined.add(v)
        for r in block.results:
            if r not in defined:
                raise VerificationError(f"{fn.name}: result {r!r} is not defined")

    check_block(fn.body)
    if len(fn.body.results) != 1:
        raise VerificationError(f"{fn.name}: a function returns exactly one value")
    return fn


def clone(fn: Function) -> Function:
    """A deep copy of `fn` (new Values), so a pass can rewrite without touching its input."""
    mapping: dict[Value, Value] = {}
    params = [make_param(p.attrs["index"], p.name, p.type, p.loc) for p in fn.params]
    mapping.update(zip(fn.params, params))

    def copy_block(block: Block) -> Block:
        out = Block()
        for v in block.values:
            nv = Value(v.op, tuple(mapping[a] for a in v.args), v.type, dict(v.attrs), v.loc, v.name)
            nv.regions = [copy_block(r) for r in v.regions]
            mapping[v] = nv
            out.values.append(nv)
        out.results = [mapping[r] for r in block.results]
        return out

    return Function(fn.name, params, copy_block(fn.body), fn.loc)


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
