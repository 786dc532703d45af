"""Generate one straight-line Python function that checks a specialization's guards and loads its
inputs, so the loaded path costs a few tens of nanoseconds per input instead of a tree walk.

    def load(args):
        s0 = args[0]
        if type(s0) is not K0: return None        # structure guard: type(model) is MLP
        s1 = s0.layers
        if type(s1) is not list or len(s1) != 3: return None
        ...
        return [s7, s9, ...]                       # one value per IR parameter
"""
from __future__ import annotations

from tracer.frontend import buffers
from tracer.frontend.interpreter import Trace
from tracer.frontend.sources import ABSENT, ArgSource, AttrSource, GatherSource, ItemSource, RootSource, Source
from tracer.ir import ARRAY_DTYPE_NAMES, BOOL, F64, I64, I64_MAX, I64_MIN, NARROW, NUMPY_DTYPE_NAMES, ArrayType

PY_TYPE = {F64: "float", I64: "int", BOOL: "bool", **{t: f"numpy.{NUMPY_DTYPE_NAMES[t]}" for t in NARROW}}


def type_label(t) -> str:
    """How a parameter's type reads to a Python user: float, or ndarray[float64, 2-d]."""
    if isinstance(t, ArrayType):
        return f"ndarray[{ARRAY_DTYPE_NAMES[t.dtype]}, {t.rank}-d]"
    return PY_TYPE[t]


class _Aliased:
    def __repr__(self):
        return "ALIASED"


ALIASED = _Aliased()


def make_loader(trace: Trace):
    """A function `load(args) -> list | ALIASED | None` (None: some guard failed). The list
    has one value per IR parameter, then the list written back into for each of
    `trace.scattered` (tracer.frontend.gathered.store)."""
    source_text, constants = loader_source(trace)
    namespace = dict(constants, ALIASED=ALIASED)
    exec(compile(source_text, f"<loader of {trace.function.name}>", "exec"), namespace)
    load = namespace["load"]
    load.source_text = source_text
    load.constants = constants
    return load


def loader_source(trace: Trace) -> tuple[str, dict]:
    """The loader's source text, and the objects it names (K0, K1..., and the gather helpers)."""
    lines: list[str] = []
    names: dict[int, str] = {}           # id(source) -> local variable
    constants: dict[str, object] = {"ABSENT": ABSENT}

    def constant(value) -> str:
        name = f"K{len(constants)}"
        constants[name] = value
        return name

    def var(source: Source) -> str:
        key = id(source)
        if key in names:
            return names[key]
        if isinstance(source, ArgSource):
            expr = f"args[{source.index}]"
        elif isinstance(source, RootSource):
            expr = constant(source.obj)
        elif isinstance(source, AttrSource):
            expr = f"{var(source.base)}.{source.attr}"
        elif isinstance(source, ItemSource):
            expr = f"{var(source.base)}[{source.index!r}]"
        else:
            raise TypeError(f"unknown source {source!r}")
        name = names[key] = f"s{len(names)}"
        lines.append(f"{name} = {expr}")
        return name

    for g in trace.binding_guards:
        if g.on_tracer_code:
            continue
        namespace, expected = constant(g.namespace), constant(g.expected)
        if g.key is None:
            lines.append(f"if {namespace}.cell_contents is not {expected}: return None")
        elif isinstance(g.namespace, dict) or type(g.namespace).__name__ == "mappingproxy":
            lines.append(f"if {namespace}.get({g.key!r}, ABSENT) is not {expected}: return None")
        else:
            lines.append(f"if getattr({namespace}, {g.key!r}, ABSENT) is not {expected}: return None")
    for g in trace.structure_guards:
        v = var(g.source)
        check = f"type({v}) is not {constant(g.cls)}"
        if g.length is not None:
            check += f" or len({v}) != {g.length}"
        if g.keys is not None:
            check += f" or tuple({v}) != {constant(g.keys)}"
        lines.append(f"if {check}: return None")
    for g in trace.each_guards:
        v = var(g.source)
        if g.what == "class":
            lines.append(f"if set(map(type, {v})) != {{{constant(g.value)}}}: return None")
        elif g.what == "value":
            lines.append(f"if not same_values({v}, {g.attr!r}, {constant(g.value)}): return None")
        else:
            lines.append(f"if any({g.attr!r} in o.__dict__ for o in {v}): return None")
    for g in trace.missing_attr_guards:
        lines.append(f"if {g.attr!r} in {var(g.source)}.__dict__: return None")
    for g in [*trace.pins, *trace.identity_guards]:
        v = var(g.source)
        if type(g.value) in (int, float, bool, str):
            lines.append(f"if type({v}) is not {type(g.value).__name__} or {v} != {g.value!r}: return None")
        else:
            lines.append(f"if {v} is not {constant(g.value)}: return None")
    def gather(source: GatherSource, base: str) -> str:
        """Lines that build the array of a gathered list (tracer.frontend.gathered): `gather` (C,
        tracer/csrc/gather.c) copies the numbers, checking every item's type exactly."""
        name = f"g{len(names)}"
        names[id(source)] = name
        kind = source.kind
        if kind[0] == "buffer":          # an array.array: its own memory, or a copy
            written = any(s.key == source.key for s in trace.scattered)
            lines.append(f"{name} = {buffers.loader_expression(base, kind[1], written)}")
            return name
        m = kind[1] if kind[0] == "rows" else 0
        shape = f"(len({base}), {m})" if m else f"len({base})"
        dtype = "int64" if kind[0] == "i64" else "float64"
        lines.append(f"{name} = np_empty({shape}, {dtype!r})")
        lines.append(f"if not gather({name}, {base}, {source.attr!r}, {m}): return None")
        return name

    leaves = []
    for source, param in trace.leaves:
        if isinstance(source, GatherSource):
            leaves.append(gather(source, var(source.base)))
            continue
        v = var(source)
        if isinstance(param.type, ArrayType):
            import numpy
            dtype = constant(numpy.dtype(ARRAY_DTYPE_NAMES[param.type.dtype]))
            ones = "".join(f" or ({v}.shape[{a}] == 1) != {n == 1}" for a, n in enumerate(param.type.shape))
            lines.append(f"if type({v}) is not {constant(numpy.ndarray)} or {v}.dtype is not {dtype} "
                         f"or {v}.ndim != {param.type.rank}{ones}: return None")
            leaves.append(v)
            continue
        if param.attrs.get("numpy") or param.type in NARROW:      # a NumPy scalar: of exactly its type
            import numpy
            check = f"type({v}) is not {constant(numpy.dtype(NUMPY_DTYPE_NAMES[param.type]).type)}"
        else:
            check = f"type({v}) is not {PY_TYPE[param.type]}"
        if param.type == I64 and not param.attrs.get("numpy"):
            check += f" or not {I64_MIN} <= {v} <= {I64_MAX}"
        lines.append(f"if {check}: return None")
        leaves.append(v)
    leaves += scatter_targets(trace, var, lines)
    lines.append(f"return [{', '.join(leaves)}]")
    if trace.each_guards or any(isinstance(source, GatherSource) for source, _ in trace.leaves):
        import numpy

        from tracer.native import gather, same_values
        constants.update(np_empty=numpy.empty, np_frombuffer=numpy.frombuffer, gather=gather, same_values=same_values)
    body = "\n".join("        " + line for line in lines)
    source_text = (f"def load(args):\n    try:\n{body}\n"
                   f"    except (AttributeError, IndexError, KeyError, TypeError, ValueError):\n        return None\n")
    return source_text, constants


def scatter_targets(trace: Trace, var, lines: list) -> list[str]:
    """The lists to scatter written arrays back into, after lines that return ALIASED (the call
    runs the Python function) unless every list written is reached by one path only.

    The compiled code holds each gathered list in its own array, so a list it writes must not
    also be gathered by another path, be a row of itself twice (`[[0.0] * 3] * 2`), or have
    its items read as parameters by another path: those would read stale numbers."""
    if not trace.scattered:
        return []
    written_keys = {s.key for s in trace.scattered}

    def containers(source: GatherSource) -> str:
        base = var(source.base)
        if source.kind[0] != "rows":
            return f"[{base}]"
        return f"[o.__dict__[{source.attr!r}] for o in {base}]" if source.attr else base

    def same_path(source: Source) -> bool:
        """Whether `source` is a list the trace reads through a written array (same path)."""
        if (source.key, "gather", None) in written_keys:            # the list itself
            return True
        if isinstance(source, AttrSource) and isinstance(source.base, ItemSource):  # objs[i].attr
            return (source.base.base.key, "gather", source.attr) in written_keys
        return isinstance(source, ItemSource) and (source.base.key, "gather", None) in written_keys  # rows[i]

    written = [containers(s) for s in trace.scattered]
    others = [containers(s) for s, _ in trace.leaves if isinstance(s, GatherSource) and s.key not in written_keys]
    others += [f"[{var(s.base)}]" for s, _ in trace.leaves
               if isinstance(s, ItemSource) and not same_path(s.base)]
    others = list(dict.fromkeys(others))        # (each list once: the items of one list read many times)
    if all(part.startswith("[") and part.endswith("]") and part[1:-1].isidentifier() for part in written + others):
        lines.extend(alias_check([part[1:-1] for part in written], [part[1:-1] for part in others]))
        return [var(s.base) for s in trace.scattered]
    lines.append(f"w = [id(x) for part in ({', '.join(written)},) for x in part]")
    lines.append("ids = set(w)")
    check = "len(ids) != len(w)"
    if others:
        lines.append(f"o = [id(x) for part in ({', '.join(others)},) for x in part]")
        check += " or not ids.isdisjoint(o)"
    lines.append(f"if {check}: return ALIASED")
    return [var(s.base) for s in trace.scattered]


def alias_check(written: list[str], others: list[str]) -> list[str]:
    """The loader's line that returns ALIASED where one of the lists `written` (variables) is
    another of them or one of the lists `others`: by identity, with no list of ids built where
    there are only a few lists (none: one list written, no other read)."""
    pairs = [(a, b) for i, a in enumerate(written) for b in written[i + 1:] + others]
    if len(pairs) <= 3:
        return [f"if {' or '.join(f'{a} is {b}' for a, b in pairs)}: return ALIASED"] if pairs else []
    ids = ", ".join(f"id({a})" for a in written)
    check = f"len({{{ids}}}) != {len(written)}"
    if others:
        check += f" or not {{{ids}}}.isdisjoint(({', '.join(f'id({b})' for b in others)},))"
    return [f"if {check}: return ALIASED"]
