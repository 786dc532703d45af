"""The loaded path's Python result, made by generated code: one straight-line expression per result
shape, instead of `instances.materialize` walking the shape on every call.

    def build(r):                   # ("tuple", [("list", 0, [None, None]), ("instance", 1, Vec, ...)])
        return ([r[0][0], r[0][1]], new(K0, ('x', 'y'), (r[1][0], r[1][1])))

A shape in which one list, array or instance appears twice (`key` repeated: the same object twice,
or one that holds itself) is made by `materialize`, which keeps them one object; so are the rare
kinds (strings of the run-time table, dicts, sets, optional values...) inside a generated one: each
such part by `materialize` alone, which is the same while no key repeats. A returned list of
run-time length (its columns, arrays) is made by zipping their `tolist()`s.
"""
from __future__ import annotations

import array

from tracer.frontend.dynlists import python_items
from tracer.frontend.instances import materialize
from tracer.frontend.run_time_strings import StrField
from tracer.ir import ScalarType, TupleType

MAX_PARTS = 4000        # a larger shape is walked by materialize (its generated code would be long to compile)
MAX_DEPTH = 40          # nested expressions deeper than this: the same
MAX_BUILDERS = 4096     # shapes remembered (by identity); past this the memo starts again

_builders: dict[int, tuple] = {}     # id(shape) -> (shape, its builder): the shape kept, so its id stays its own


def build_result(shape, result):
    """materialize(shape, result), by code generated for `shape` on first use."""
    if shape is None:
        return result
    hit = _builders.get(id(shape))
    if hit is None or hit[0] is not shape:
        if len(_builders) >= MAX_BUILDERS:
            _builders.clear()
        hit = _builders[id(shape)] = (shape, result_builder(shape))
    return hit[1](result)


def _new(cls, names: tuple, values: tuple):
    """An instance of `cls` with these attributes, set in order (as materialize does)."""
    obj = object.__new__(cls)
    for name, value in zip(names, values):
        object.__setattr__(obj, name, value)
    return obj


def result_builder(shape):
    """A function `build(result)` equal to `lambda result: materialize(shape, result)`."""
    keys: list = []
    count = [0]

    def scan(s, depth: int) -> bool:
        """Whether generated code may make `s` (no key twice, not too large or deep)."""
        count[0] += 1
        if s is None:
            return True
        if count[0] > MAX_PARTS or depth > MAX_DEPTH:
            return False
        kind = s[0]
        if kind == "tuple":
            return all(scan(p, depth + 1) for p in s[1])
        if kind == "list":
            keys.append(s[1])
            return all(scan(p, depth + 1) for p in s[2])
        if kind == "instance":
            keys.append(s[1])
            return all(f is None or scan(f, depth + 1) for _, f in s[3])
        if kind in ("constant", "tolist"):
            return True
        keys.extend(_keys_in(s))
        return True

    if not scan(shape, 0) or len(keys) != len(set(keys)):
        return lambda result: materialize(shape, result)
    constants: dict = {"materialize": materialize, "new": _new, "items": python_items, "array": array.array}

    def constant(value) -> str:
        name = f"K{len(constants)}"
        constants[name] = value
        return name

    def expr(s, r: str) -> str:
        if s is None:
            return r
        kind = s[0]
        if kind == "constant":
            return repr(s[1]) if s[1] is None or type(s[1]) in (bool, int, str) else constant(s[1])
        if kind == "tolist":
            return f"{r}.tolist()"
        if kind == "tuple":
            parts = [expr(p, f"{r}[{i}]") for i, p in enumerate(s[1])]
            return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"
        if kind == "list":
            if all(p is None for p in s[2]):
                return f"list({r}[:{len(s[2])}])"
            return f"[{', '.join(expr(p, f'{r}[{i}]') for i, p in enumerate(s[2]))}]"
        if kind == "instance":
            names, values, k = [], [], 0
            for name, f in s[3]:
                names.append(name)
                if f is not None and f[0] == "constant":
                    values.append(expr(f, ""))
                else:
                    values.append(expr(f, f"{r}[{k}]"))
                    k += 1
            tail = "," if len(values) == 1 else ""
            return f"new({constant(s[2])}, {tuple(names)!r}, ({', '.join(values)}{tail}))"
        if kind == "records":
            return records(s, r)
        if kind == "string" and s[1] is None:         # one string of the run-time table
            return f"{constant(s[2])}[{r}[0]]"
        if kind == "dict":                              # a DynDict: its keys and its values
            return f"dict(zip({expr(s[1], f'{r}[0]')}, {expr(s[2], f'{r}[1]')}))"
        if kind == "array.array":
            return f"array({s[2]!r}, {expr(s[3], r)})"
        return f"materialize({constant(s)}, {r})"        # a rare kind: walked, alone

    def records(s, r: str) -> str:
        """A returned list of run-time length: its columns' Python lists, zipped where its items
        are flat tuples of numbers (dynlists.python_items otherwise)."""
        item = s[1]
        if item is None:
            return "[]"
        if isinstance(item, ScalarType):
            return f"{r}[0].tolist()"
        if isinstance(item, StrField):
            return f"list(map({constant(s[2])}.__getitem__, {r}[0].tolist()))"
        if isinstance(item, TupleType) and all(isinstance(e, ScalarType) for e in item.elements) and item.elements:
            return f"list(zip({', '.join(f'{r}[{j}].tolist()' for j in range(len(item.elements)))}))"
        return f"items({constant(item)}, [a.tolist() for a in {r}], {constant(s[2])})"

    source = f"def build(r):\n    return {expr(shape, 'r')}\n"
    exec(compile(source, "<result builder>", "exec"), constants)
    build = constants["build"]
    build.source_text = source
    return build


def _keys_in(shape) -> list:
    """The keys of the lists, arrays and instances anywhere in `shape` (materialize's `made`)."""
    found: list = []

    def walk(s):
        if isinstance(s, (tuple, list)):
            if len(s) >= 2 and s[0] in ("list", "array.array", "instance") and isinstance(s[1], int):
                found.append(s[1])
            for part in s:
                walk(part)
    walk(shape)
    return found
