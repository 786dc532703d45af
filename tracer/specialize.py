"""A compiled specialization: one trace, optimized and compiled, plus the guards that select it.

Two ways in:
- *native fast path*: when every input is a number, an array or a list or tuple of them passed as an
  argument, the generated CPython entry checks argument types (and pinned values: numbers and
  strings, `op == 'add'`) itself and the C dispatcher checks global/closure bindings; no Python
  runs per call.
- *loaded path*: when inputs come from lists or user objects (a micrograd `MLP`), each call checks
  the structure guards and loads the current numbers in Python, then calls native code with them.
  Contents are never frozen: a weight updated in place is read on the next call.
"""
from __future__ import annotations

import functools
import gc
import time
import types
from array import array
from dataclasses import dataclass, field

import codegen.entry  # module references: codegen imports tracer.ir, so no names at import
import codegen.entry_pins
import codegen.jit
from tracer import native
from tracer.errors import UnsupportedError
from tracer.frontend import buffers
from tracer.frontend.arrays import is_ndarray
from tracer.frontend.callouts import RaisedAfterHeldWrites, is_raise
from tracer.frontend.interpreter import Trace
from tracer.frontend.loader import ALIASED, make_loader, type_label
from tracer.frontend.results import build_result
from tracer.frontend.sources import ABSENT, ArgSource, AttrSource, GatherSource, ItemSource
from tracer.ir import (
    BOOL,
    F64,
    I64,
    ArrayType,
    EntryArg,
    Function,
    ListArg,
    PinnedStr,
    TupleType,
    leaf_types,
    type_of_constant,
)
from tracer.logs import fallback_log
from tracer.transforms.passes import optimize

# a loaded-path specialization whose compiled code gives at least 7 in 8 of its first this many
# calls (or more) to Python runs such calls as Python from then on: trying first costs more than
# it gains
MOSTLY_PYTHON_CALLS = 64


class NeedsPython(Exception):
    """The compiled code returned FALLBACK on the loaded path: the exact answer needs Python."""


def _raise_needs_python(*args):
    raise NeedsPython


@dataclass(eq=False)
class Specialization:
    name: str
    trace: Trace
    optimized: Function
    compiled: object                        # codegen's CompiledFunction (keeps the code alive)
    fast: bool
    entry_args: list[EntryArg] = field(default_factory=list)
    fallback: object = None                 # runs the original function (FALLBACK status)
    leaf_call: object = None                # loaded path: a Dispatcher over the leaf entry
    loader: object = None                   # loaded path: generated guard checks + input loads
    timings: dict = field(default_factory=dict)   # seconds per stage: passes, then codegen's (lower...)
    # the loaded path counts its calls and those the compiled code gave to Python (FALLBACK: a
    # raise an except clause catches, an exact result it cannot give); when most do,
    # `on_mostly_python(self, args)` is told, once (the API then runs such calls as Python)
    calls: int = 0
    fell_back: int = 0
    on_mostly_python: object = None

    # ------------------------------------------------------------------ building
    @classmethod
    def build(cls, trace: Trace, name: str, fuse_fma: bool, fallback, parallel: bool = False,
              keep_object: bool = False) -> Specialization:
        start = time.perf_counter()
        optimized = optimize(trace.function, fuse_fma=fuse_fma)
        optimized.parallel = parallel
        passes = time.perf_counter() - start
        _check_calls_out_once(trace, optimized)
        entry_args = native_entry_args(trace)
        fast = entry_args is not None
        if fast:                      # the entry makes the result, lists included
            optimized.result_containers = result_containers(trace)
        else:
            entry_args = loaded_entry_args(optimized)
        compiled = codegen.jit.compile_function(optimized, entry_args, name, export_kernel=False, keep_object=keep_object)
        spec = cls(name, trace, optimized, compiled, fast, entry_args, fallback,
                   timings={"passes": passes, **compiled.timings})
        if not fast:
            spec.leaf_call = native.Dispatcher(_raise_needs_python, name)
            spec.leaf_call.add_native(compiled.entry_address, _raise_needs_python, ())
        return spec

    def native_guards(self) -> tuple:
        """The binding guards as (namespace, key, expected) tuples for the C dispatcher."""
        return tuple((_class_dict(g.namespace) or g.namespace, g.key, native.ABSENT if g.expected is ABSENT else g.expected)
                     for g in self.trace.binding_guards)

    # ------------------------------------------------------------------ the loaded path
    def load(self, args: tuple) -> list | None:
        """The leaf values for this call, or None when a guard fails (generated code)."""
        return self.loader_function()(args)

    def loader_function(self):
        """The generated loader (tracer.frontend.loader), made on first use."""
        if self.loader is None:
            self.loader = make_loader(self.trace)
        return self.loader

    def run(self, args: tuple):
        """The loaded path's result for the frame's argument vector, or MISS where a guard fails."""
        leaves = self.load(args)
        if leaves is None:
            return native.MISS
        if leaves is ALIASED:           # lists it writes are shared: Python does it
            return self.fallback(*args)
        self.calls += 1
        try:
            return self.call_loaded(leaves)
        except NeedsPython:
            pass                        # (outside the handler: the function's exceptions chain nothing of ours)
        self.fell_back += 1
        if (self.calls >= MOSTLY_PYTHON_CALLS and self.fell_back * 8 >= self.calls * 7
                and self.on_mostly_python is not None):
            tell, self.on_mostly_python = self.on_mostly_python, None
            tell(self, args)
        return self.fallback(*args)

    def call_loaded(self, leaves: list):
        if not self.trace.scattered:
            return build_result(self.trace.result_shape, self.leaf_call(*leaves))
        n = len(self.trace.leaves)
        result = self.leaf_call(*leaves[:n])
        # the lists the compiled code wrote into (held in arrays) get their new numbers
        for (k, attr, m), items in zip(self.scatters, leaves[n:]):
            if type(m) is str:            # an array.array of typecode m
                buffers.scatter(items, leaves[k])
            else:
                native.scatter(leaves[k], items, attr, m)
        # objects made in the traced code and returned: made from their attributes
        return build_result(self.trace.result_shape, result)

    @functools.cached_property
    def scatters(self) -> list[tuple]:
        """(leaf index, attr, row length) of each list written back, as trace.scattered."""
        positions = {id(source): k for k, (source, _) in enumerate(self.trace.leaves)}
        return [(positions[id(s)], s.attr, s.kind[1] if s.kind[0] in ("rows", "buffer") else 0)
                for s in self.trace.scattered]

    # ------------------------------------------------------------------ display
    def signature(self) -> str:
        return ", ".join(f"{p.name}: {type_label(p.type)}" for p in self.optimized.params)

    def guards(self) -> list[str]:
        t = self.trace
        return [str(g) for g in t.guards()]

    def __repr__(self) -> str:
        path = "native entry" if self.fast else "loaded inputs"
        return f"<Specialization {self.name}({self.signature()}) [{path}], guards: {self.guards()}>"


class Finished(Exception):
    """A graph break's prefix could not finish natively (FALLBACK): the original function ran
    as Python instead, and this is its result."""

    def __init__(self, result):
        super().__init__("finished as Python")
        self.result = result


class BreakRun:
    """A specialization with a graph break (tracer.frontend.resume): the compiled prefix, the call
    CPython makes, then the continuation, a traced function of its own (`resume`, a dispatcher)."""

    fast = False

    def __init__(self, prefix: Specialization, resume):
        self.prefix, self.resume = prefix, resume
        self.point = prefix.trace.break_point
        self.entry = None
        if prefix.fast:
            self.entry = native.Dispatcher(_raise_needs_python, prefix.name)
            self.entry.add_native(prefix.compiled.entry_address, prefix.fallback, prefix.native_guards())

    def describe(self) -> str:
        """What happens at the break, in words (`explain` and the "tracer.fallback" log say it)."""
        reason = self.point.reason
        where = "" if reason.loc is None or reason.loc == self.point.loc else f", at {reason.loc}"
        return (f"graph break: compiled up to here, CPython makes this call (because {reason.message}{where}); "
                f"the code after it is compiled when first reached")

    def log(self) -> None:
        fallback_log.info("%s: %s(): %s%s", self.point.loc, self.prefix.name, self.describe(),
                          _quoted_line(self.point.loc))

    def run(self, args: tuple):
        """The call's result for the frame's argument vector, or MISS where the prefix's guards fail."""
        try:
            outputs = self._prefix(args)
        except Finished as done:
            return done.result
        if outputs is native.MISS:
            return outputs
        stack, local_values = self.point.rebuild(outputs if type(outputs) is tuple else (outputs,), args)
        stack = self.point.call(stack)
        return self.resume(*self.point.resume_arguments(local_values, stack))

    def _prefix(self, args: tuple):
        if self.entry is not None:
            return self.entry.try_entries(args)
        leaves = self.prefix.load(args)
        if leaves is None:
            return native.MISS
        if leaves is ALIASED:
            return self.prefix.fallback(*args)
        try:
            return self.prefix.call_loaded(leaves)
        except NeedsPython:
            pass
        return self.prefix.fallback(*args)

    def guards(self) -> list[str]:
        return self.prefix.guards()

    def signature(self) -> str:
        return self.prefix.signature()

    def __repr__(self) -> str:
        return (f"<BreakRun {self.prefix.name}: compiled up to {self.point.loc}, where CPython makes the call "
                f"({self.point.reason.message} at {self.point.reason.loc}); then {self.resume.specializations}>")


def _check_calls_out_once(trace: Trace, optimized: Function) -> None:
    """A function whose compiled code calls into CPython (a print) must never be run again by
    Python from the start: the call would happen twice. UnsupportedError (it runs as Python) where
    it could be."""
    raising = next((v for v in optimized.walk() if is_raise(v)), None)
    if raising is not None and (trace.scattered or any(v.op == "writeback" for v in optimized.walk())):
        raise RaisedAfterHeldWrites(f"{raising.attrs['callee']} is made by CPython from compiled code here, after "
                                    f"writes the compiled code holds in copies until it returns", raising.loc)
    call = next((v for v in optimized.walk() if v.op == "python_call" and not v.attrs.get("harmless")), None)
    if call is None:
        return
    if codegen.entry.may_run_python_again(optimized) or trace.scattered:
        raise UnsupportedError(f"{call.attrs['callee']} is called from compiled code here, and the function can "
                               f"also need Python's exact answer (an int past 64 bits, NumPy's own error...), "
                               f"which would run it from the start and make the call twice", call.loc)


class PythonRun:
    """Calls the tracer could not compile: the arguments' kinds, and the construct that stopped
    the trace. A call whose arguments have these kinds runs the original function in CPython
    (every side effect once, in order); nothing is traced again for them."""

    fast = False
    python = True          # (the API runs the function itself: CodeCompiler.call_existing)

    def __init__(self, name: str, signature: tuple, reason: UnsupportedError):
        self.name = name
        self.signature = signature
        self.reason = reason

    def accepts(self, args: tuple) -> bool:
        return argument_signature(args) == self.signature

    def log(self, where: str = "") -> None:
        """Says so on "tracer.fallback": where (the construct's file:line, else `where`) and why."""
        loc = self.reason.loc
        fallback_log.info("%s: %s() runs as Python for arguments (%s): %s%s", loc or where or "?", self.name,
                          self.describe_signature(), self.reason.message, _quoted_line(loc))

    def describe_signature(self) -> str:
        return ", ".join(kind if isinstance(kind, str) else kind.__name__ for kind in self.signature)

    def __repr__(self) -> str:
        return f"<PythonRun {self.name}({self.describe_signature()}): {self.reason.message} at {self.reason.loc}>"


def _quoted_line(loc) -> str:
    line = loc.source_line if loc is not None else ""
    return f"  ({line})" if line else ""


def argument_signature(args: tuple) -> tuple:
    """What decides whether calls trace alike: each argument's type (an array's dtype and rank too)."""
    return tuple(f"{a.dtype}[{a.ndim}-d]" if is_ndarray(a) else type(a) for a in args)


def compile_ir(fn: Function, fuse_fma: bool, fallback=None, parallel: bool = False, keep_object: bool = False):
    """A callable for an IR function with no guards (each parameter is one positional argument
    of exactly its type): optimized, compiled, behind a C dispatcher. Arguments of other types
    raise TypeError; a call the compiled code cannot answer exactly calls `fallback`."""
    optimized = optimize(fn, fuse_fma=fuse_fma)
    optimized.parallel = parallel
    entry_args = [EntryArg(p.type, i) for i, p in enumerate(optimized.params)]
    compiled = codegen.jit.compile_function(optimized, entry_args, optimized.name, export_kernel=False,
                                            keep_object=keep_object)
    expected = ", ".join(type_label(p.type) for p in optimized.params)

    def wrong_arguments(*args):
        raise TypeError(f"{fn.name}() takes ({expected}), got ({', '.join(type(a).__name__ for a in args)})")
    call = native.Dispatcher(wrong_arguments, fn.name)
    call.add_native(compiled.entry_address, fallback or wrong_arguments, ())
    call.compiled = compiled            # keeps the native code loaded
    call.expected = expected
    return call


def entry_args_for(trace: Trace, optimized: Function) -> list:
    """How the native entry takes its Python arguments: the call's own (native_entry_args), or
    the leaves the loaded path's loader reads (loaded_entry_args)."""
    entry_args = native_entry_args(trace)
    return loaded_entry_args(optimized) if entry_args is None else entry_args


def loaded_entry_args(optimized: Function) -> list[EntryArg]:
    """The loaded path's entry: one argument per IR parameter, loaded by the generated loader."""
    return [EntryArg(p.type, i, numpy=bool(p.attrs.get("numpy"))) for i, p in enumerate(optimized.params)]


NUMBERS = (F64, I64, BOOL)      # the items of lists the entry reads (and returns) itself


def result_containers(trace: Trace, bare_arrays: bool = True) -> tuple[str, ...] | None:
    """Function.result_containers, for the entry to make the call's result itself: per tuple and
    array of the result type (pre-order), for a tuple "tuple", "list" (a list returned) or "numbers"
    (a list of run-time length of numbers, from an array) or ("constant", value) (a str, bytes or
    None returned whatever the arguments hold), for an array "array" or "tolist" (a list held in an
    array: the list of its numbers); None where Python must make it (instances, dicts,
    the same list twice...), or where an array is returned as one and not `bare_arrays`."""
    keys: list = []

    def kinds(shape, t) -> list[str] | None:
        if shape is None:
            if not bare_arrays and any(isinstance(x, ArrayType) for x in leaf_types(t)):
                return None
            return _plain_containers(t)
        if shape[0] == "constant" and t == TupleType(()) and codegen.entry_pins.returnable(shape[1]):
            return [shape]
        if shape == ("tolist",) and isinstance(t, ArrayType) and t.rank == 1 and t.dtype in NUMBERS:
            return ["tolist"]
        if (shape[0] == "records" and shape[1] in NUMBERS and shape[2] == () and isinstance(t, TupleType)
                and len(t.elements) == 1 and isinstance(t.elements[0], ArrayType) and t.elements[0].rank == 1
                and t.elements[0].dtype == shape[1]):
            return ["numbers"]
        if shape[0] not in ("tuple", "list") or not isinstance(t, TupleType):
            return None
        parts = shape[1] if shape[0] == "tuple" else shape[2]
        if shape[0] == "list":
            keys.append(shape[1])
        if len(parts) != len(t.elements):
            return None
        out = [shape[0]]
        for part, element in zip(parts, t.elements):
            more = kinds(part, element)
            if more is None:
                return None
            out += more
        return out
    found = kinds(trace.result_shape, trace.function.result_type)
    return None if found is None or len(set(keys)) != len(keys) else tuple(found)


def _plain_containers(t) -> list[str]:
    """The result containers of a value returned as it is: "tuple" per tuple, "array" per array."""
    if isinstance(t, TupleType):
        return ["tuple", *(kind for element in t.elements for kind in _plain_containers(element))]
    return ["array"] if isinstance(t, ArrayType) else []


GATHERED = {("f64",): F64, ("i64",): I64}


class _NotTaken(Exception):
    """The entry cannot read these inputs itself: the loaded path does."""


def native_entry_args(trace: Trace) -> list | None:
    """How the native entry takes the call's own arguments (the fast path: no Python between the
    call and the kernel): numbers and arrays as they are (EntryArg), lists and tuples read by the
    entry itself (ListArg: numbers gathered into arrays, items read as scalars, lists inside them,
    written back after the call; `array.array`s read from their memory); values the trace used as
    constants checked by the entry (numbers and strings, PinnedStr, arguments or items of lists and
    tuples: ListArg.pins); None where the loaded path must read the inputs (objects' attributes,
    dicts, results made in Python...)."""
    typecodes = array_typecodes(trace)
    pins = [*trace.pins, *(g for g in trace.identity_guards if _pinned_str(g))]
    if (typecodes is None or result_containers(trace) is None or trace.missing_attr_guards
            or trace.each_guards or not all(_native_guard(g) for g in trace.binding_guards)
            or not all(codegen.entry_pins.pinnable(g.value) for g in pins)):
        return None
    shapes = {g.source.key: g for g in trace.structure_guards}
    if any(g.cls not in (list, tuple, array) or g.keys is not None or (g.cls is array) != (g.source.key in typecodes)
           for g in trace.structure_guards) or not typecodes.keys() <= shapes.keys():
        return None
    nodes: dict = {}                  # container source's key -> what the entry reads of it

    def node(source) -> dict:
        """The container at `source`: an argument, or an item of a container checked by a guard."""
        if source.key not in nodes:
            if not (isinstance(source, ArgSource) or (isinstance(source, ItemSource) and type(source.index) is int
                                                      and source.base.key in shapes)):
                raise _NotTaken
            nodes[source.key] = {"source": source, "gathers": [], "items": [], "children": [], "scattered": False,
                                 "pins": []}
            if isinstance(source, ItemSource):
                node(source.base)["children"].append((source.index, source.key))
        return nodes[source.key]

    def list_arg(key) -> ListArg:
        n = nodes[key]
        shape = shapes.get(key)
        cls = list if shape is None else shape.cls
        if (cls is tuple and n["gathers"]) or (n["scattered"] and len(n["gathers"]) != 1) \
                or (cls is array and (n["children"] or n["pins"] or any(g[2] for g in n["gathers"]))):
            raise _NotTaken
        return ListArg(cls, None if shape is None else shape.length, tuple(n["gathers"]), tuple(n["items"]),
                       n["scattered"], tuple((index, list_arg(child)) for index, child in n["children"]),
                       typecodes.get(key), tuple(n["pins"]))

    by_arg: dict[int, object] = {}
    try:
        for i, (source, param) in enumerate(trace.leaves):
            if isinstance(source, ArgSource):
                by_arg[source.index] = EntryArg(param.type, i, numpy=bool(param.attrs.get("numpy")))
            elif isinstance(source, GatherSource) and source.attr is None and source.kind in GATHERED:
                node(source.base)["gathers"].append((i, GATHERED[source.kind], 0))
            elif isinstance(source, GatherSource) and source.attr is None and source.kind[0] == "rows":
                node(source.base)["gathers"].append((i, F64, source.kind[1]))
            elif (isinstance(source, GatherSource) and source.attr is None and source.kind[0] == "buffer"
                  and typecodes.get(source.base.key) == source.kind[1]):
                node(source.base)["gathers"].append((i, buffers.item_kind(source.kind[1]), 0))
            elif (isinstance(source, ItemSource) and type(source.index) is int and source.base.key in shapes
                  and param.type in NUMBERS and not param.attrs.get("numpy")):
                node(source.base)["items"].append((i, source.index, param.type))
            else:
                return None
        for s in trace.scattered:
            if not isinstance(s, GatherSource) or s.attr is not None:
                return None
            node(s.base)["scattered"] = True
        for g in shapes.values():
            node(g.source)
        for pin in pins:           # (a str: PinnedStr; an item of a list or tuple: ListArg.pins)
            source, value = pin.source, pin.value
            if isinstance(source, ArgSource):
                by_arg[source.index] = (PinnedStr(value) if type(value) is str
                                        else EntryArg(type_of_constant(value), None, value))
            elif isinstance(source, ItemSource) and type(source.index) is int and source.base.key in shapes:
                node(source.base)["pins"].append((source.index, value))
            else:
                return None
        for key, n in nodes.items():
            if isinstance(n["source"], ArgSource):
                if n["source"].index in by_arg:
                    return None
                by_arg[n["source"].index] = list_arg(key)
    except _NotTaken:
        return None
    # (an array result could be a view of an array the entry gathered and frees: lists of
    # numbers are made from their arrays before that)
    if nodes and result_containers(trace, bare_arrays=False) is None:
        return None
    return [by_arg[i] for i in range(trace.nargs)] if sorted(by_arg) == list(range(trace.nargs)) else None


def array_typecodes(trace: Trace) -> dict | None:
    """The typecode of each `array.array` input by its source's key (tracer.frontend.buffers.wrap
    guards it: `a.typecode == 'd'`); None where the trace has an identity guard of another kind
    than those and pinned strings, which only the loaded path checks."""
    found = {}
    for g in trace.identity_guards:
        if _pinned_str(g):
            continue
        if not (isinstance(g.source, AttrSource) and g.source.attr == "typecode" and type(g.value) is str
                and g.value in buffers.TYPECODES):
            return None
        found[g.source.base.key] = g.value
    return found


def _pinned_str(g) -> bool:
    """Whether identity guard `g` pins a str argument, or a str item of a list or tuple (the trace
    used its value: `op == 'add'`), which the native entry can check (codegen.entry_pins)."""
    return type(g.value) is str and (isinstance(g.source, ArgSource) or isinstance(g.source, ItemSource))


def _native_guard(g) -> bool:
    """Whether the C dispatcher can check this binding guard: a dict (a class's own, behind its
    mappingproxy, too), a cell, a function attribute."""
    return (type(g.namespace) is dict or g.key is None or isinstance(g.namespace, types.FunctionType)
            or _class_dict(g.namespace) is not None)


def _class_dict(namespace) -> dict | None:
    """The dict behind a class's `__dict__` mappingproxy (what the proxy reads: a class attribute
    assigned later is there too), or None."""
    if type(namespace) is not types.MappingProxyType:
        return None
    inner = gc.get_referents(namespace)
    return inner[0] if len(inner) == 1 and type(inner[0]) is dict else None


def entry_args_for_arguments(trace: Trace) -> list[EntryArg]:
    by_arg: dict[int, EntryArg] = {}
    for i, (source, param) in enumerate(trace.leaves):
        by_arg[source.index] = EntryArg(param.type, i, numpy=bool(param.attrs.get("numpy")))
    for pin in trace.pins:
        by_arg[pin.source.index] = EntryArg(type_of_constant(pin.value), None, pin.value)
    assert sorted(by_arg) == list(range(trace.nargs)), "every argument is a leaf or pinned"
    return [by_arg[i] for i in range(trace.nargs)]
