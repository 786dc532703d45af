"""Specializations to and from the cache folder.

What is stored for a specialization with a native entry (every input an argument): its object
code, the symbols it imports from the process (each by what it is: a tracer.native function (the
runtime's among them), a NumPy object, a slot of NumPy's C API), and its binding guards, each as where
the binding lives (the function's globals, the builtins, a module's dict, a closure cell, an
inlined function's attribute) and a fingerprint of the value it held (tracer.cache.keys). Loading
checks that every binding holds a value with the same fingerprint in this process, links the
object code (tracer.native.load_object: no LLVM) and guards the entry by the identity of those
values, as a compiled one is. Anything that cannot be described that way is not stored.
"""
from __future__ import annotations

import ast
import ctypes
import functools
import itertools
import sys
import types

from tracer import native
from tracer.cache.keys import digest, value_fingerprint
from tracer.cache.store import Store, linkable
from tracer.logs import cache_log
from tracer.numpy_capi import arrfuncs, numpy_api_function

ABSENT_TEXT = "absent"
API_SLOTS = 300          # NumPy's C API slots searched for an imported address (NumPy 1 and 2 have more)
ARRFUNCS_SLOTS = 39      # PyArray_ArrFuncs slots searched: up to the sort functions (33-38; codegen.sorts)
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
               "float64", "complex64", "complex128")


class CachedSpecialization:
    """A specialization loaded from the cache: a native entry and its guards, no trace. The entry
    takes the call's own arguments (`fast`), or the leaves a stored loader reads from them
    (`CachedLoaded`)."""

    fast = True
    from_cache = True

    def __init__(self, meta: dict, loaded, entry_address: int, guards: tuple, fallback):
        self.name = meta["name"]
        self.meta = meta
        self.loaded = loaded            # the object code: unmapped when this is collected
        self.entry_address = entry_address
        self.native_guard_tuple = guards
        self.fallback = fallback
        self.argument_kinds = tuple(meta["arguments"])
        self.timings: dict = {}

    def native_guards(self) -> tuple:
        return self.native_guard_tuple

    def signature(self) -> str:
        return self.meta["signature"]

    def guards(self) -> list[str]:
        return list(self.meta["labels"])

    def __repr__(self) -> str:
        return f"<Specialization {self.name}({self.signature()}) [native entry, from the cache], guards: {self.guards()}>"


class NeedsPython(Exception):
    """The loaded path's entry returned FALLBACK: the exact answer needs Python."""


def _raise_needs_python(*args):
    raise NeedsPython


class _Aliased:
    def __repr__(self):
        return "ALIASED"


ALIASED = _Aliased()      # what a stored loader returns where lists it writes are shared


class CachedLoaded(CachedSpecialization):
    """A stored specialization on the loaded path: its generated loader (checks the guards and
    reads the inputs out of lists and objects), the native entry it feeds, and the lists to
    write back (as tracer.specialize.Specialization's)."""

    fast = False

    def __init__(self, meta: dict, loaded, entry_address: int, guards: tuple, fallback, loader, materialize):
        super().__init__(meta, loaded, entry_address, guards, fallback)
        self.loader = loader
        shape = ast.literal_eval(meta["loader"].get("result", "None"))
        self.result = (lambda result: result) if shape is None else functools.partial(materialize, shape)
        self.leaf_count = meta["loader"]["leaves"]
        self.scatters = [tuple(s) for s in meta["loader"]["scatters"]]
        self.leaf_call = native.Dispatcher(_raise_needs_python, self.name)
        self.leaf_call.add_native(entry_address, _raise_needs_python, ())

    def run(self, args: tuple):
        leaves = self.loader(args)
        if leaves is None:
            return native.MISS
        if leaves is ALIASED:
            return self.fallback(*args)
        try:
            if not self.scatters:
                return self.result(self.leaf_call(*leaves))
            result = self.leaf_call(*leaves[:self.leaf_count])
        except NeedsPython:
            return self.fallback(*args)
        for (k, attr, m), items in zip(self.scatters, leaves[self.leaf_count:]):
            if type(m) is str:                  # an array.array of typecode m
                import numpy
                numpy.frombuffer(items, items.typecode)[:] = leaves[k]
            else:
                native.scatter(leaves[k], items, attr, m)
        return self.result(result)


def argument_kinds(args: tuple) -> list[str]:
    """Each argument's type as text (an array's dtype and rank too): what a stored entry was made for."""
    kinds = []
    for a in args:
        t = type(a)
        dtype = getattr(a, "dtype", None)
        if dtype is not None and hasattr(a, "ndim") and t.__name__ == "ndarray":   # (its axes of size 1 too)
            kinds.append(f"ndarray[{dtype}, {a.ndim}-d, {''.join('1' if n == 1 else 'n' for n in a.shape)}]")
        else:
            kinds.append(f"{t.__module__}.{t.__qualname__}")
    return kinds


# ---------------------------------------------------------------------- storing
class NotStorable(Exception):
    """Why a compiled entry cannot be stored (said on the "tracer.cache" log, and by explain)."""


def describe_code(name: str, compiled, function, binding_guards, globals: dict, builtins: dict, closure,
                  absent) -> dict:
    """What every stored entry has: its entry symbol, its imports and its binding guards, each
    described as text another process resolves; NotStorable where one cannot be. `compiled`:
    codegen's CompiledFunction of IR `function`; `absent`: what a binding guard expects of a
    name that must not be bound."""
    if any(v.op == "python_call" for v in function.walk()):
        raise NotStorable("it calls into CPython (the callee is an object of this process)")
    guards = []
    binding_guards = stored_guards(binding_guards)
    for g in binding_guards:
        where = _namespace(g.namespace, globals, builtins, closure, binding_guards)
        value = ABSENT_TEXT if g.expected is absent else value_fingerprint(g.expected)
        if where is None or value is None:
            raise NotStorable(f"the guard {g.label} cannot be described in another process")
        guards.append([where, g.key, value])
    imports = {}
    for symbol, address in compiled.imports.items():
        what = _symbol_kind(address)
        if what is None:
            raise NotStorable(f"it imports {symbol}, which the cache cannot link")
        imports[symbol] = what
    return {"name": name, "entry": compiled.entry_symbol, "imports": imports, "guards": guards}


def stored_guards(binding_guards) -> list:
    """The binding guards a stored entry keeps: all but those on the tracer's own Python helpers
    (`list.reverse`'s loop...), whose code the environment's key covers."""
    return [g for g in binding_guards if not g.on_tracer_code]


def describe(spec, args: tuple, globals: dict, builtins: dict, closure, absent) -> dict:
    """The file's description of a compiled Specialization; NotStorable where it cannot be cached."""
    shape = None if spec.fast else spec.trace.result_shape
    if shape is not None and not _literal(shape):
        raise NotStorable("it returns objects of classes it made (they are made in Python from the results)")
    meta = describe_code(spec.name, spec.compiled, spec.optimized, spec.trace.binding_guards, globals, builtins,
                         closure, absent)
    # the arguments, and items of list arguments, the entry takes only at one value (the trace used
    # them as constants)
    pins = entry_pins(spec.entry_args) if spec.fast else []
    if not all(_plain(value) for _, value in pins):
        raise NotStorable("an argument it takes at one value only has no text")
    meta.update(arguments=argument_kinds(args), pins=pins, signature=spec.signature(), labels=spec.guards())
    if not spec.fast:
        loader = spec.loader_function()
        constants = {name: _constant_kind(value, stored_guards(spec.trace.binding_guards), absent)
                     for name, value in loader.constants.items()}
        unknown = [repr(loader.constants[name]) for name, what in constants.items() if what is None]
        if unknown:
            raise NotStorable(f"its loader reads {', '.join(unknown)}, which the cache cannot describe")
        meta["loader"] = {"source": loader.source_text, "constants": constants, "leaves": len(spec.trace.leaves),
                          "scatters": [list(s) for s in spec.scatters], "result": repr(shape)}
    return meta


def entry_pins(entry_args: list) -> list[list]:
    """[where, value] per argument (where: its index) and per item of a list or tuple argument
    (where: the indices down to it, [argument, item, item...]) a native entry takes at one value
    only (tracer.ir.EntryArg.equals, PinnedStr, ListArg.pins)."""
    pins = []

    def items(arg, path: list) -> None:
        pins.extend([[*path, index], value] for index, value in arg.pins)
        for index, child in arg.children:
            items(child, [*path, index])
    for i, a in enumerate(entry_args):
        if hasattr(a, "children"):                 # a ListArg
            items(a, [i])
        elif a.param is None:
            pins.append([i, a.equals])
    return pins


def store(store_: Store, key: str, spec, args: tuple, globals: dict, builtins: dict, closure, absent) -> str | None:
    """Store a compiled Specialization under `key`; its path, or None where it cannot be (said on the log)."""
    try:
        meta = describe(spec, args, globals, builtins, closure, absent)
    except NotStorable as exc:
        cache_log.info("%s: not cached: %s", spec.name, exc)
        return None
    if spec.compiled.object_code is None:
        return None
    # named by what selects it: the same specialization compiled by two processes is one file
    name = digest(meta["arguments"], meta["pins"], meta["guards"], meta.get("loader", {}).get("source"))[:32]
    return store_.write(key, name, meta, spec.compiled.object_code)


def _namespace(ns, globals, builtins, closure, guards) -> list | None:
    if ns is globals:
        return ["globals"]
    if ns is builtins:
        return ["builtins"]
    if type(ns) is dict:
        module = sys.modules.get(ns.get("__name__"))
        return ["module", module.__name__] if module is not None and module.__dict__ is ns else None
    if type(ns) is types.CellType:
        for i, cell in enumerate(closure or ()):
            if cell is ns:
                return ["cell", i]
        for j, g in enumerate(guards):
            cells = getattr(g.expected, "__closure__", None) if type(g.expected) is types.FunctionType else None
            for i, cell in enumerate(cells or ()):
                if cell is ns:
                    return ["cell_of", j, i]
        return None
    if type(ns) is types.FunctionType:
        for j, g in enumerate(guards):
            if g.expected is ns:
                return ["value", j]
    return None


HELPERS = ("np_empty", "np_frombuffer", "gather", "same_values")     # what a loader that gathers calls


def _constant_kind(value, guards, absent) -> list | None:
    """What an object a stored loader names is, as text another process resolves (_constant)."""
    if value is absent:
        return ["absent"]
    for j, g in enumerate(guards):
        if value is g.namespace:
            return ["namespace", j]
        if value is g.expected:
            return ["bound", j]
    if callable(value) and getattr(value, "__name__", None) in ("empty", "frombuffer", "gather", "same_values"):
        name = {"empty": "np_empty", "frombuffer": "np_frombuffer"}.get(value.__name__, value.__name__)
        if _helper(name) is value:
            return ["helper", name]
    if "numpy" in sys.modules:
        for what, obj in _numpy_objects():
            if obj is value:
                return what
    named = value_fingerprint(value)
    if named is not None and named.startswith("named:"):
        return ["named", named[len("named:"):]]
    if _plain(value):
        return ["value", value]
    return None


def _literal(shape) -> bool:
    """Whether a result's shape (tracer.frontend.instances.result_shape) is made of Python literals
    only (no class, no NumPy type), which `ast.literal_eval` reads back equal from its repr."""
    def plain(x):
        if type(x) in (tuple, list, set, frozenset):
            return all(map(plain, x))
        if type(x) is dict:
            return all(map(plain, x)) and all(map(plain, x.values()))
        return type(x) in (bool, int, float, str, bytes, type(None))
    if not plain(shape):
        return False
    try:
        return ast.literal_eval(repr(shape)) == shape
    except (ValueError, SyntaxError):
        return False


def _plain(value) -> bool:
    """A number, string, None or tuple of them: stored as JSON, read back equal."""
    if type(value) is tuple:
        return all(map(_plain, value))
    return type(value) in (bool, int, float, str, type(None))


def _helper(name: str):
    if name == "gather":
        return native.gather
    if name == "same_values":
        return native.same_values
    import numpy
    return {"np_empty": numpy.empty, "np_frombuffer": numpy.frombuffer}[name]


def _symbol_kind(address: int) -> list | None:
    """What the imported `address` is, as text another process resolves (see resolve)."""
    for name in dir(native):
        if name.endswith("_address") and getattr(native, name) == address:
            return ["native", name]
    if "numpy" in sys.modules:
        for what, obj in _numpy_objects():
            if id(obj) == address:
                return what
        for index in range(API_SLOTS):
            if numpy_api_function(index) == address:
                return ["numpy_api", index]
        for name in DTYPE_NAMES:      # NumPy's own sort functions (codegen.sorts)
            table = arrfuncs(name)
            if table is not None:
                slots = list((ctypes.c_void_p * ARRFUNCS_SLOTS).from_address(table))
                if address in slots:
                    return ["arrfuncs", name, slots.index(address)]
    return None


# ---------------------------------------------------------------------- loading
def load(store_: Store, key: str, args: tuple, globals: dict, builtins: dict, closure, fallback,
         materialize) -> list:
    """The stored specialization under `key` made for arguments like `args` (the same types, the
    same values where it pinned them) whose bindings hold alike values here, linked and ready:
    the most recently used of them, in a list (empty: none). `materialize(shape, result)` makes
    a loaded-path result (tracer.frontend.instances)."""
    if not linkable():
        return []
    kinds = argument_kinds(args)
    found = []
    for path in store_.entries(key):
        got = store_.read(path, key)
        if got is None:
            continue
        meta, code = got
        try:
            if meta["arguments"] != kinds or not all(_same(_at(args, where), value) for where, value in meta["pins"]):
                continue
            linked = link(meta, code, globals, builtins, closure, path)
            if linked is None:
                continue
            loaded, entry, guards = linked
            loader = _loader(meta["loader"], meta["name"], guards) if "loader" in meta else None
        except (KeyError, TypeError, ValueError, IndexError, SyntaxError) as exc:
            cache_log.warning("compile cache: %s cannot be used (%s: %s): a miss", path, type(exc).__name__, exc)
            continue
        if loader is None:
            found.append(CachedSpecialization(meta, loaded, entry, guards, fallback))
        else:
            found.append(CachedLoaded(meta, loaded, entry, guards, fallback, loader, materialize))
        cache_log.info("%s: loaded from the cache (%s)", meta["name"], path)
        return found
    return found


def link(meta: dict, code: bytes, globals: dict, builtins: dict, closure, path: str):
    """(the loaded object, its entry's address, its native guards) for a stored entry whose
    bindings hold alike values here; None (said on the log) where they do not or it cannot be
    linked."""
    try:
        guards = _bindings(meta["guards"], globals, builtins, closure)
        if guards is None:
            cache_log.info("%s: a stored entry's bindings differ here: not used", path)
            return None
        symbols = {name: _resolve(what) for name, what in meta["imports"].items()}
        loaded, (entry,) = native.load_object(code, symbols, (meta["entry"],))
    except (KeyError, TypeError, ValueError, IndexError, ImportError, AttributeError) as exc:
        cache_log.warning("compile cache: %s cannot be used (%s: %s): a miss", path, type(exc).__name__, exc)
        return None
    return loaded, entry, guards


def bindings_hold(guards: tuple) -> bool:
    """Whether every (namespace, key, expected) binding guard holds now (as the C dispatcher checks)."""
    return all(_bound(ns, key) is expected for ns, key, expected in guards)


def _bound(ns, key):
    """What a binding guard's namespace binds `key` to now: a cell's contents, a function's
    attribute, a dict's item; native.ABSENT where nothing is bound (an empty cell too)."""
    if type(ns) is types.CellType:
        try:
            return ns.cell_contents
        except ValueError:
            return native.ABSENT
    if type(ns) is types.FunctionType:
        return getattr(ns, key, native.ABSENT)
    return ns.get(key, native.ABSENT)


def stored_alike(store_: Store, key: str, meta: dict) -> bool:
    """Whether `key` holds an entry made for what `meta` describes (arguments, pins, guards)."""
    for path in store_.entries(key):
        got = store_.read(path, key)
        if got is not None and all(got[0].get(k) == meta[k] for k in ("arguments", "pins", "guards")):
            return True
    return False


PINNABLE_VALUES = 4096       # (the first ones: a long list of numbers costs no more)


def pinnable_values(args: tuple) -> int:
    """A hash of the values a stored entry may pin among `args` (ints, bools and strs, as arguments
    and as items of lists and tuples, nested; the first PINNABLE_VALUES): arguments alike in it are
    looked up in the cache once."""
    def values(obj, depth: int):
        if type(obj) in (int, bool, str):
            yield type(obj), obj
        elif type(obj) in (list, tuple) and depth < 4:
            yield len(obj)
            for item in obj:
                yield from values(item, depth + 1)
    return hash(tuple(itertools.islice((x for a in args for x in values(a, 0)), PINNABLE_VALUES)))


def _at(args: tuple, where):
    """The argument a stored pin names (an index), or the item of a list or tuple argument (a
    path of indices: entry_pins); None where there is no such item."""
    if type(where) is int:
        return args[where]
    obj = args[where[0]]
    for index in where[1:]:
        if type(obj) not in (list, tuple) or not -len(obj) <= index < len(obj):
            return None
        obj = obj[index]
    return obj


def _same(arg, value) -> bool:
    """Whether an argument is the value an entry pinned (of its type; floats by their bits)."""
    return type(arg) is type(value) and (arg == value if type(value) is not float else arg.hex() == value.hex())


def _bindings(described: list, globals, builtins, closure) -> tuple | None:
    """The native guards of `described` in this process, or None where a value differs."""
    values, guards = [], []
    for where, key, fingerprint in described:
        ns = _find_namespace(where, globals, builtins, closure, values)
        if ns is None:
            return None
        value = _bound(ns, key)
        text = ABSENT_TEXT if value is native.ABSENT else value_fingerprint(value)
        if text != fingerprint:
            return None
        values.append(value)
        guards.append((ns, key, value))
    return tuple(guards)


def _loader(stored: dict, name: str, guards: tuple):
    """The stored loader's function, its names bound to this process's objects."""
    namespace = {"ALIASED": ALIASED}
    for const, what in stored["constants"].items():
        namespace[const] = _constant(what, guards)
    exec(compile(stored["source"], f"<loader of {name}>", "exec"), namespace)
    return namespace["load"]


def _constant(what: list, guards: tuple):
    kind = what[0]
    if kind == "absent":
        return native.ABSENT
    if kind == "namespace":
        return guards[what[1]][0]
    if kind == "bound":
        return guards[what[1]][2]
    if kind == "helper":
        return _helper(what[1])
    if kind == "named":                  # a library object, found where it was (nothing is imported)
        module, _, qualname = what[1].partition(":")
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is None or value_fingerprint(found) != f"named:{what[1]}":
            raise ImportError(f"{what[1]} is not loaded here")
        return found
    if kind == "value":
        return _tuples(what[1])
    for described, obj in _numpy_objects():
        if described == what:
            return obj
    raise ValueError(f"unknown constant {what}")


def _tuples(value):
    return tuple(map(_tuples, value)) if type(value) is list else value


def _find_namespace(where: list, globals, builtins, closure, values: list):
    kind = where[0]
    if kind == "globals":
        return globals
    if kind == "builtins":
        return builtins
    if kind == "module":
        module = sys.modules.get(where[1])
        return module.__dict__ if module is not None else None
    if kind == "cell":
        return closure[where[1]] if closure is not None and where[1] < len(closure) else None
    if kind == "value":
        value = values[where[1]]
        return value if type(value) is types.FunctionType else None
    if kind == "cell_of":
        cells = getattr(values[where[1]], "__closure__", None) or ()
        return cells[where[2]] if where[2] < len(cells) else None
    return None


def _resolve(what: list) -> int:
    kind = what[0]
    if kind == "native":
        if not what[1].endswith("_address"):
            raise ValueError(f"not a native address: {what[1]}")
        return getattr(native, what[1])
    if kind == "numpy_api":
        if not 0 <= what[1] < API_SLOTS:
            raise ValueError(f"NumPy's C API has no slot {what[1]}")
        return numpy_api_function(what[1])
    if kind == "arrfuncs":
        table = arrfuncs(what[1]) if what[1] in DTYPE_NAMES and 0 <= what[2] < ARRFUNCS_SLOTS else None
        if table is None:
            raise ImportError(f"no sort functions of {what[1]} here")
        return (ctypes.c_void_p * ARRFUNCS_SLOTS).from_address(table)[what[2]]
    for described, obj in _numpy_objects():
        if described == what:
            return id(obj)
    raise ValueError(f"unknown import {what}")


def _numpy_objects():
    import numpy
    yield ["numpy", "ndarray"], numpy.ndarray
    for name in DTYPE_NAMES:
        yield ["dtype", name], numpy.dtype(name)
        yield ["scalar", name], numpy.dtype(name).type
