"""The typed SSA IR: the contract between the front end (`tracer`) and the back end (`codegen`).

A `Function` has typed parameters and a `Block` of `Value`s in definition order; each value is one
operation (`op`, a name from `tracer.ir.ops.OPS`) applied to earlier values (`args`), with static
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

Control flow is structured: an op may own `regions` (Blocks nested in it). A region sees every
value defined before its op (in its own or an enclosing block); its values are invisible outside.
  if    %c                  two regions (then, else), each yielding values of the same types;
                            the op's value is the tuple of what the region that ran yielded
  loop  %init0, %init1...   one region, the body, with one block parameter per carried value;
                            it yields (continue: bool, next0, next1, ...) and runs again with the
                            nexts while `continue`; the op's value is the tuple of the last nexts
  raise                     fails with the exception in attrs (nothing after it in its block runs)
The tape ops (`tape_new`, `tape_push`, ...; type `tape(f64, ...)`) are how autodiff saves a loop's
iterations for its backward loop; they are ordinary ops that touch memory (`OpDef.effect`).
Printed, a region is indented under its op:

      %3     if     %2         (f64,)  f.py:3  if x > 0:
        then:
      %4       mul  x, 3.0     f64     f.py:4  x = x * 3.0
        yield %4
        else:
        ...
"""
from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field

from tracer.errors import SourceLoc
from tracer.ir.types import BOOL, ScalarType, Type


# ---------------------------------------------------------------------------------------- values
class Value:
    """One SSA value: the result of applying `op` to `args` (earlier values)."""

    __slots__ = ("op", "args", "attrs", "type", "loc", "name", "regions")

    def __init__(self, op: str, args: tuple[Value, ...], type: Type, attrs: dict | None = None,
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


@dataclass(eq=False)
class Block:
    """A list of values in definition order and the values it yields (a loop body also has
    parameters: the loop-carried values of the current iteration)."""
    values: list[Value] = field(default_factory=list)
    results: list[Value] = field(default_factory=list)
    params: list[Value] = field(default_factory=list)   # op "block_param", attrs {"index": i}

    def add_param(self, type: Type, loc: SourceLoc | None = None) -> Value:
        p = Value("block_param", (), type, {"index": len(self.params)}, loc=loc)
        self.params.append(p)
        return p


@dataclass
class Function:
    name: str
    params: list[Value]               # op "param", attrs {"index": i}, name = Python argument name
    body: Block
    loc: SourceLoc | None = None      # the `def` line
    # NumPy semantics: where an op fails (Python's float and int ops raise, NumPy's give inf,
    # nan or a wrapped int) the caller runs the Python function instead (codegen.entry)
    python_on_failure: bool = False
    returns_none: bool = False        # the Python function returns None (the IR result is an empty tuple)
    # per leaf of the result: whether it is a NumPy scalar (np.float64, np.int64, np.bool_: an
    # element, a reduction...), which the entry boxes as one; empty: none is
    numpy_results: tuple[bool, ...] = ()
    parallel: bool = False            # `trace(parallel=True)`: maps may run on every core (codegen.parallel)
    # per tuple of the result type, in pre-order, what the entry makes of it: "tuple", "list" (a
    # function that returns a list), "numbers" (a list of the numbers of the tuple's one
    # array: a list of run-time length) or ("constant", value) (an empty tuple that stands for a
    # str, bytes or None returned as it is); per array, "array" or "tolist" (the list of its numbers);
    # empty: every one is a tuple, every array an ndarray
    result_containers: tuple[str, ...] = ()

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


def zero(t: ScalarType) -> object:
    """The Python zero of a scalar type (a placeholder for a path that computes nothing)."""
    return False if t == BOOL else 0.0 if t.name.startswith("f") else 0


def defined_in(blocks) -> set[Value]:
    """Every value defined in `blocks`: their values and parameters, nested regions included."""
    out: set[Value] = set()
    stack = list(blocks)
    while stack:
        block = stack.pop()
        out.update(block.params)
        for v in block.values:
            out.add(v)
            stack.extend(v.regions)
    return out


def used_in(blocks) -> list[Value]:
    """Every value `blocks` read (operands and yields, nested regions included), first use first."""
    used: dict[Value, None] = {}
    def visit(block: Block):
        for v in block.values:
            used.update(dict.fromkeys(v.args))
            for region in v.regions:
                visit(region)
        used.update(dict.fromkeys(block.results))
    for block in blocks:
        visit(block)
    return list(used)


def free_values(v: Value) -> list[Value]:
    """The values defined outside `v`'s regions that they read, first use first."""
    if not v.regions:
        return []
    inner = defined_in(v.regions)
    return [x for x in used_in(v.regions) if x not in inner]


def make_param(index: int, name: str, type: Type, loc: SourceLoc | None = None) -> Value:
    return Value("param", (), type, {"index": index}, loc=loc, name=name)


# -------------------------------------------------------------------------------------- printer
def value_names(fn: Function) -> dict[Value, str]:
    """Printable names: parameters by their Python name, other values %0, %1, ..."""
    names = {p: p.name for p in fn.params}
    counter = itertools.count()
    def visit(block: Block):
        for p in block.params:
            names[p] = f"%{next(counter)}"
        for v in block.values:
            names[v] = f"%{next(counter)}"
            for region in v.regions:
                visit(region)
    visit(fn.body)
    return names


def _format_attrs(v: Value) -> str:
    if v.op == "const":
        return repr(v.attrs["value"])
    if v.op == "tape_new":
        return ""                  # its fields are in its type
    return ", ".join(f"{k}={val!r}" for k, val in v.attrs.items())


REGION_NAMES = {"if": ("then", "else"), "loop": ("body",), "map": ("element",)}


def format_function(fn: Function, show_source: bool = True) -> str:
    """A table, one line per value: name, op, operands, type, source location and line.
    Regions are indented under their op, each with its parameters and what it yields."""
    names = value_names(fn)
    params = ", ".join(f"{p.name}: {p.type}" for p in fn.params)
    header = f"func {fn.name}({params}) -> {fn.result_type}"
    rows: list[tuple] = []        # (name, op, operands, type, source) or (text,) for a region line

    def visit(block: Block, depth: int):
        pad = "  " * depth
        for v in block.values:
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
            rows.append((pad + names[v], pad + v.op, operands, str(v.type), where))
            for label, region in zip(REGION_NAMES.get(v.op, ()), v.regions):
                inner = "  " * (depth + 1)
                if region.params:
                    of = [f" of {names[a]}" for a in v.args[v.attrs.get("into", 0):]] if v.op == "map" else [""] * len(region.params)
                    label += "(" + ", ".join(f"{names[p]}: {p.type}{o}" for p, o in zip(region.params, of)) + ")"
                rows.append((f"{inner}{label}:",))
                visit(region, depth + 1)
                rows.append((f"{inner}yield " + ", ".join(names[r] for r in region.results),))

    visit(fn.body, 0)
    cells = [r for r in rows if len(r) == 5]
    widths = [max([len(r[i]) for r in cells] + [len(h)]) for i, h in enumerate(("value", "op", "operands", "type"))]
    def fmt(row):
        if len(row) == 1:
            return "  " + row[0]
        return ("  " + "  ".join(row[i].ljust(widths[i]) for i in range(4)) + "  " + row[4]).rstrip()
    lines = [header, fmt(("value", "op", "operands", "type", "source"))]
    lines += [fmt(r) for r in rows]
    lines.append("  return " + ", ".join(names[r] for r in fn.body.results))
    return "\n".join(lines)



def clone(fn: Function) -> Function:
    """A deep copy of `fn` (new Values), so a pass can rewrite without touching its input."""
    params = [Value("param", (), p.type, dict(p.attrs), loc=p.loc, name=p.name) for p in fn.params]
    return Function(fn.name, params, copy_block(fn.body, dict(zip(fn.params, params))), fn.loc, fn.python_on_failure,
                    fn.returns_none, fn.numpy_results, fn.parallel, fn.result_containers)


def copy_block(block: Block, mapping: dict[Value, Value], out: Block | None = None) -> Block:
    """Copies of `block`'s values (nested regions included) appended to `out` (a new Block by
    default), their operands renamed through `mapping`, which gains every copy. Parameters
    already in `mapping` are replaced by what it maps them to; the others become `out`'s."""
    out = Block() if out is None else out
    for p in block.params:
        if p not in mapping:
            mapping[p] = out.add_param(p.type, p.loc)
    for v in block.values:
        nv = Value(v.op, tuple(mapping.get(a, a) for a in v.args), v.type, dict(v.attrs), v.loc, v.name)
        nv.regions = [copy_block(r, mapping) for r in v.regions]
        mapping[v] = nv
        out.values.append(nv)
    out.results = [mapping.get(r, r) for r in block.results]
    return out
