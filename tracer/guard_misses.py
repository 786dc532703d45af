"""Why a call missed a specialization: the first of its guards the call's arguments fail, said as
the argument (or the list item, attribute, global) and its old and new type or value.

    x: was float, now int  (guard: type(x) is float)
    n: was 3, now 4  (guard: n == 3)
    len(xs): was 3, now 4  (guard: type(xs) is list and len(xs) == 3)

Only the slow path asks (a call no specialization took, about to compile, when the "tracer.guards"
logger listens): the guards are checked again here, one by one, in Python, in the order the
generated loader (`tracer.frontend.loader`) checks them; the fast path never runs any of this.
"""
from __future__ import annotations

import types

from tracer.cache.entries import argument_kinds
from tracer.frontend.arrays import is_ndarray
from tracer.frontend.loader import type_label
from tracer.frontend.sources import (
    ABSENT,
    ArgSource,
    AttrSource,
    BindingGuard,
    EachGuard,
    GatherSource,
    ItemSource,
    MissingAttrGuard,
    RootSource,
    StructureGuard,
    ValueGuard,
)
from tracer.ir import ARRAY_DTYPE_NAMES, BOOL, F64, I64, NARROW, NUMPY_DTYPE_NAMES, ArrayType
from tracer.specialize import BreakRun, PythonRun, argument_signature

PYTHON_TYPES = {F64: float, I64: int, BOOL: bool}
_MISSING = object()         # a source the new arguments do not have (no such attribute or item)


# ------------------------------------------------------------------------------ describing objects
def kind_of(obj) -> str:
    """An object's type as a user reads it: float, ndarray[float64, 2-d], numpy.float32, list."""
    if obj is _MISSING:
        return "missing"
    if is_ndarray(obj):
        return f"ndarray[{obj.dtype}, {obj.ndim}-d]"
    if type(obj).__module__ == "numpy" and hasattr(obj, "dtype"):
        return f"numpy.{obj.dtype}"
    return type(obj).__name__


def value_of(obj) -> str:
    """A short text of a value: numbers and strings by repr, functions and classes by name."""
    if obj is _MISSING or obj is ABSENT:
        return "missing" if obj is _MISSING else "unbound"
    if obj is None or type(obj) in (bool, int, float, str, tuple):
        text = repr(obj)
        return text if len(text) <= 40 else text[:37] + "..."
    name = getattr(obj, "__qualname__", None)
    if isinstance(name, str):
        return f"<{type(obj).__name__} {name}>"
    return f"a {kind_of(obj)} object"


def describe_arguments(code: types.CodeType, args: tuple, pinned: dict | None = None) -> str:
    """`x: float, n: int = 3`: the frame's arguments by name and kind (pinned ones with their value)."""
    names = code.co_varnames
    parts = []
    for i, a in enumerate(args):
        name = names[i] if i < len(names) else f"arg{i}"
        text = f"{name}: {kind_of(a)}"
        if type(a) in (list, tuple):
            text += f"[{len(a)}]"
        if pinned and i in pinned:
            text += f" = {value_of(pinned[i])}"
        parts.append(text)
    return ", ".join(parts)


def pinned_arguments(trace) -> dict:
    """argument index -> the value the trace used as a constant (an int that decided a loop)."""
    return {g.source.index: g.value for g in trace.pins if isinstance(g.source, ArgSource)}


# ------------------------------------------------------------------------------ the first failed guard
class Miss:
    """One guard the new call fails: what (`subject`), what it was, what it is now, the guard."""

    def __init__(self, subject: str, old: str, new: str, guard: str):
        self.subject, self.old, self.new, self.guard = subject, old, new, guard

    def __str__(self) -> str:
        return f"{self.subject}: was {self.old}, now {self.new}  (guard: {self.guard})"


def first_miss(spec, args: tuple, names: tuple = ()) -> Miss | None:
    """The first guard of `spec` (a Specialization, BreakRun or PythonRun) that the frame's
    argument vector `args` fails, or None when none does. `names`: the arguments' names."""
    if isinstance(spec, PythonRun):                    # the arguments' kinds
        return _signature_miss(spec.signature, args, names)
    if getattr(spec, "from_cache", False):             # loaded from the compile cache: no trace
        return _cached_miss(spec, args, names)
    trace = spec.prefix.trace if isinstance(spec, BreakRun) else spec.trace
    return _trace_miss(trace, args)


def describe_misses(specs: list, args: tuple, code: types.CodeType) -> list[str]:
    """For each specialization, why it does not take `args` (the first guard it fails)."""
    reasons = []
    for spec in specs:
        try:
            miss = first_miss(spec, args, code.co_varnames)
        except Exception as exc:          # a guard whose check raises: say so, never fail the call
            miss = f"its guards could not be checked again ({type(exc).__name__})"
        reasons.append(str(miss) if miss is not None else "no guard fails (taken by another path)")
    return reasons


def _signature_miss(signature: tuple, args: tuple, names: tuple) -> Miss | None:
    for i, (old, new) in enumerate(zip(signature, argument_signature(args))):
        if old != new:
            name = names[i] if i < len(names) else f"argument {i}"
            return Miss(name, _kind_text(old), _kind_text(new), f"calls with {name}: {_kind_text(old)} run as Python")
    return None


def _cached_miss(spec, args: tuple, names: tuple) -> Miss:
    for i, (old, new) in enumerate(zip(spec.argument_kinds, argument_kinds(args))):
        if old != new:
            name = names[i] if i < len(names) else f"argument {i}"
            return Miss(name, old, new, f"{name} is {old} (a specialization from the compile cache)")
    return Miss("the call", "taken by the cached entry", "rejected by its native entry or bindings",
                "one of: " + "; ".join(spec.guards()) if spec.guards() else "argument types and pinned values")


def _kind_text(kind) -> str:
    return kind if isinstance(kind, str) else kind.__name__


def _trace_miss(trace, args: tuple) -> Miss | None:
    cache: dict[int, object] = {}

    def get(source):
        key = id(source)
        if key not in cache:
            cache[key] = _resolve(source, args, get)
        return cache[key]

    for g in trace.binding_guards:
        miss = _binding_miss(g)
        if miss is not None:
            return miss
    for check, guards in ((_structure_miss, trace.structure_guards), (_each_miss, trace.each_guards),
                          (_missing_attr_miss, trace.missing_attr_guards),
                          (_value_miss, [*trace.pins, *trace.identity_guards])):
        for g in guards:
            miss = check(g, get(g.source))
            if miss is not None:
                return miss
    for source, param in trace.leaves:
        obj = get(source.base if isinstance(source, GatherSource) else source)
        miss = _gather_miss(source, obj) if isinstance(source, GatherSource) else _leaf_miss(source, param, obj)
        if miss is not None:
            return miss
    return None


def _resolve(source, args: tuple, get):
    try:
        if isinstance(source, ArgSource):
            return args[source.index]
        if isinstance(source, RootSource):
            return source.obj
        base = get(source.base)
        if base is _MISSING:
            return _MISSING
        if isinstance(source, AttrSource):
            return getattr(base, source.attr)
        if isinstance(source, ItemSource):
            return base[source.index]
        if isinstance(source, GatherSource):
            return base
    except (AttributeError, IndexError, KeyError, TypeError, ValueError):
        return _MISSING
    return _MISSING


def _binding_miss(g: BindingGuard) -> Miss | None:
    try:
        if g.key is None:
            now = g.namespace.cell_contents
        elif isinstance(g.namespace, dict) or type(g.namespace).__name__ == "mappingproxy":
            now = g.namespace.get(g.key, ABSENT)
        else:
            now = getattr(g.namespace, g.key, ABSENT)
    except ValueError:              # an empty cell
        now = ABSENT
    if now is g.expected:
        return None
    subject = "a closure variable" if g.key is None else repr(g.key)
    old, new = value_of(g.expected), value_of(now)
    if old == new:
        old, new = f"{old} (one object)", f"{new} (another)"
    return Miss(subject, old, new, g.label)


def _structure_miss(g: StructureGuard, obj) -> Miss | None:
    if type(obj) is not g.cls:
        return Miss(str(g.source), g.cls.__name__, kind_of(obj), str(g))
    if g.length is not None and len(obj) != g.length:
        return Miss(f"len({g.source})", str(g.length), str(len(obj)), str(g))
    if g.keys is not None and tuple(obj) != g.keys:
        return Miss(f"the keys of {g.source}", repr(g.keys), value_of(tuple(obj)), str(g))
    return None


def _each_miss(g: EachGuard, items) -> Miss | None:
    if items is _MISSING:
        return Miss(str(g.source), "a list", "missing", str(g))
    if g.what == "class":
        kinds = sorted({type(o).__name__ for o in items})
        if kinds != [g.value.__name__]:
            return Miss(f"the items of {g.source}", f"all {g.value.__name__}", ", ".join(kinds), str(g))
    elif g.what == "value":
        for i, o in enumerate(items):
            now = getattr(o, g.attr, _MISSING)
            if type(now) is not type(g.value) or now != g.value:
                return Miss(f"{g.source}[{i}].{g.attr}", value_of(g.value), value_of(now), str(g))
    else:
        for i, o in enumerate(items):
            if g.attr in getattr(o, "__dict__", {}):
                return Miss(f"{g.source}[{i}].{g.attr}", "a class attribute", "an instance attribute", str(g))
    return None


def _missing_attr_miss(g: MissingAttrGuard, obj) -> Miss | None:
    if obj is not _MISSING and g.attr in getattr(obj, "__dict__", {}):
        return Miss(f"{g.source}.{g.attr}", "a class attribute", "an instance attribute", str(g))
    return None


def _value_miss(g: ValueGuard, obj) -> Miss | None:
    if type(g.value) in (int, float, bool, str):
        if type(obj) is not type(g.value):
            return Miss(str(g.source), type(g.value).__name__, kind_of(obj), str(g))
        if obj != g.value:
            return Miss(str(g.source), value_of(g.value), value_of(obj), str(g))
        return None
    if obj is not g.value:
        old, new = value_of(g.value), value_of(obj)
        if old == new:
            old, new = f"{old} (one object)", f"{new} (another)"
        return Miss(str(g.source), old, new, str(g))
    return None


def _leaf_miss(source, param, obj) -> Miss | None:
    t = param.type
    expected = type_label(t)
    if isinstance(t, ArrayType):
        if (not is_ndarray(obj) or obj.dtype.name != ARRAY_DTYPE_NAMES[t.dtype] or not obj.dtype.isnative
                or obj.ndim != t.rank):
            return Miss(str(source), expected, kind_of(obj), f"{source} is an {expected}")
        for axis, n in enumerate(t.shape):
            if (obj.shape[axis] == 1) != (n == 1):
                size = "1" if n == 1 else "not 1"
                return Miss(f"{source}.shape[{axis}]", size, str(obj.shape[axis]),
                            f"{source}.shape[{axis}] {'==' if n == 1 else '!='} 1 (broadcasting)")
        return None
    if param.attrs.get("numpy") or t in NARROW:
        import numpy
        expected = f"numpy.{NUMPY_DTYPE_NAMES[t]}"
        if type(obj) is not numpy.dtype(NUMPY_DTYPE_NAMES[t]).type:
            return Miss(str(source), expected, kind_of(obj), f"type({source}) is {expected}")
        return None
    if type(obj) is not PYTHON_TYPES.get(t):
        return Miss(str(source), expected, kind_of(obj), f"type({source}) is {expected}")
    return None


def _gather_miss(source: GatherSource, items) -> Miss | None:
    kind = source.kind
    if kind[0] == "buffer":
        if type(items).__name__ != "array" or getattr(items, "typecode", None) != kind[1]:
            return Miss(str(source.base), f"an array.array('{kind[1]}')", kind_of(items), f"{source.base} typecode")
        return None
    if type(items) is not list:
        return Miss(str(source.base), "list", kind_of(items), f"type({source.base}) is list")
    want = {"f64": float, "i64": int}.get(kind[0])
    for i, item in enumerate(items):
        o = getattr(item, source.attr, _MISSING) if source.attr else item
        if kind[0] == "rows":
            bad = type(o) is not list or len(o) != kind[1] or any(type(x) is not float for x in o)
            if bad:
                where = f"{source.base}[{i}]" + (f".{source.attr}" if source.attr else "")
                return Miss(where, f"a list of {kind[1]} floats", kind_of(o), f"every row of {source} has {kind[1]} floats")
        elif type(o) is not want:
            where = f"{source.base}[{i}]" + (f".{source.attr}" if source.attr else "")
            return Miss(where, want.__name__, kind_of(o), f"every item of {source} is a {want.__name__}")
    return None
