"""Instances of user classes created inside traced code (`Vec(x, y)` in a traced function).

A `TracedInstance` is the symbolic object: its class (a real Python class, a constant of the
trace) and its attributes (traced numbers, arrays, tuples, lists, other instances, constants).
Calling a plain user class allocates one and inlines `__init__` with `self` bound to it; attribute
reads and writes follow CPython's lookup (data descriptors on the class: properties and
`__slots__`; then the instance's own attributes; then methods, static and class methods and class
attributes); operators call the class's special methods, inlined, with CPython's dispatch rules
(the reflected method first when the right operand's class is a subclass that overrides it; a
dunder returning `NotImplemented` passes the turn; `a += b` tries `__iadd__` then `__add__`).

Operators, Python's protocols and the builtins applied to instances are in
tracer.frontend.instance_ops.

Instances are mutable: `attrs` is replaced, never changed in place, so a frame state snapshots
every instance's attributes cheaply (`snapshot` / `restore_heap`); where paths meet
(tracer.frontend.states), an instance that exists on every path keeps its identity and its
attributes merge like variables, and different instances in one place (`v = Vec(1, 2) if c else
Vec(3, 4)`, `pos = pos + vel` in a loop) merge attribute by attribute into a new instance. Such a
merged instance, and those it was merged from, are *frozen*: which of them a name refers to is
known only at run time, so assigning their attributes (or comparing them with `is`) is a graph
break rather than a silently wrong answer.

Escaping: an instance the traced function returns (or returns in a tuple) comes out as a real
object of its class: the compiled code returns its attributes, and `materialize` (called by
tracer.specialize on each call's result) makes the object with `object.__new__` and sets them, one
object per instance of the trace (`return v, v` gives one object twice). Other escapes (storing one
into an attribute of an argument object; a graph break while one is alive) are not supported: the
call runs as Python.
"""
from __future__ import annotations

import array
import types
from dataclasses import dataclass, field

from tracer.frontend import run_time_strings
from tracer.frontend.builder import is_traced
from tracer.frontend.complexes import TracedComplex
from tracer.frontend.dicts import DynDict, DynSet
from tracer.frontend.dynlists import DynList, python_items
from tracer.frontend.made_arrays import MadeArray
from tracer.frontend.mixed_numbers import MixedNumber, python_value
from tracer.frontend.objects import BoundMethod, ExternalList, ExternalObject, MaybeNone
from tracer.ir import BOOL, F64, I64

HEAPTYPE = 1 << 9                     # Py_TPFLAGS_HEAPTYPE: a class defined by a class statement
IMMUTABLETYPE = 1 << 8                # Py_TPFLAGS_IMMUTABLETYPE: a C type (heap types too: itertools' on 3.13)
MISSING = object()
OBJECT_SLOTS = {name: object.__dict__[name] for name in ("__eq__", "__ne__", "__lt__", "__le__", "__gt__",
                                                         "__ge__", "__init__", "__new__", "__setattr__",
                                                         "__getattribute__", "__delattr__")}
class TracedInstance:
    """An instance of a user class made in the traced code (see the module docstring)."""

    def __init__(self, tracer, cls: type, attrs: dict | None = None, frozen: bool = False):
        self.tracer, self.cls = tracer, cls
        self.attrs: dict = attrs if attrs is not None else {}   # replaced on every store, never mutated
        self.frozen = frozen
        registry(tracer)[self] = None

    @property
    def __class__(self):      # isinstance(obj, Vec) in traced code folds at trace time
        return self.cls

    def store(self, name: str, value) -> None:
        self.attrs = {**self.attrs, name: value}

    def __repr__(self):
        return f"<{self.cls.__name__} object made in the trace>"

    # Python's own protocols, where the interpreter hands an instance to Python (abs(), -x, ~x,


class InstanceIterator:
    """An instance whose class defines __next__, as a Python iterator (each step inlined)."""

    def __init__(self, inst: TracedInstance):
        self.inst = inst

    def __iter__(self):
        return self

    def __next__(self):
        return call_method(self.inst.tracer, special_method(self.inst, "__next__"), self.inst, [])


@dataclass(frozen=True)
class InstanceKind:
    """How instances of one class with one attribute set merge (a `Many` kind of states.py):
    calling it with the merged attribute values makes the merged instance."""
    cls: type
    names: tuple
    tracer: object = field(compare=False, hash=False, repr=False)

    def __call__(self, *values):
        return TracedInstance(self.tracer, self.cls, dict(zip(self.names, values)), frozen=True)


def registry(tracer) -> dict:
    """The instances alive on the path being traced (made on it, or in the state it was restored
    to), in the order they were made: their attributes are part of each frame state."""
    made = tracer.__dict__.get("traced_instances")
    if made is None:
        made = tracer.__dict__["traced_instances"] = {}
    return made


def snapshot(tracer) -> dict:
    """Each live instance's attributes now (a frame state's heap; cheap: the dicts are shared)."""
    made = tracer.__dict__.get("traced_instances")
    return {inst: inst.attrs for inst in made} if made else {}


def made_since(tracer):
    """A function giving the instances made since this call, with their attributes."""
    mark = len(registry(tracer))
    def made() -> dict:
        return {inst: inst.attrs for inst in list(registry(tracer))[mark:]}
    return made


def restore_heap(tracer, heap: dict) -> None:
    """Back to a frame state's heap: its instances, with their attributes then (those made on
    another path since are not alive on this one)."""
    if heap or tracer.__dict__.get("traced_instances"):
        tracer.__dict__["traced_instances"] = dict.fromkeys(heap)
    for inst, attrs in heap.items():
        inst.attrs = attrs


# ------------------------------------------------------------------------------ classes
def own_attribute(cls: type, name: str):
    """`name` in the class dict of the first class of cls's MRO that has it, else MISSING."""
    for klass in cls.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return MISSING


def unsupported_class(cls: type) -> str | None:
    """Why instances of `cls` cannot be made in traced code, or None."""
    if type(cls) is not type:
        return f"its metaclass is {type(cls).__name__}"
    for klass in cls.__mro__[:-1]:
        if not klass.__flags__ & HEAPTYPE:
            return f"it derives from the builtin class {klass.__name__}"
    if own_attribute(cls, "__new__") is not object.__dict__["__new__"]:
        return "it defines __new__"
    for name in ("__getattribute__", "__getattr__", "__setattr__", "__delattr__"):
        if own_attribute(cls, name) is not OBJECT_SLOTS.get(name, MISSING):
            return f"it defines {name}"
    return None


def is_user_class(fn) -> bool:
    """A class defined by class statements only (no builtin base, not an exception class, not
    one of NumPy's: np.iinfo and the like are NumPy functions to the tracer)."""
    return isinstance(fn, type) and all(k.__flags__ & HEAPTYPE and not k.__flags__ & IMMUTABLETYPE
                                        for k in fn.__mro__[:-1]) and not issubclass(fn, BaseException) \
        and fn.__module__.partition(".")[0] != "numpy"


def class_attribute(tracer, cls: type, name: str):
    """`name` through cls's MRO (its binding guarded: redefining it recompiles), else MISSING.
    Looked up once per trace: the guard is made once."""
    found = tracer.__dict__.setdefault("class_attributes", {})
    key = (cls, name)
    if key not in found:
        try:
            found[key] = tracer.class_lookup(cls, name)
        except AttributeError:
            found[key] = MISSING
    return found[key]


def has_dict(cls: type) -> bool:
    for klass in cls.__mro__[:-1]:
        slots = klass.__dict__.get("__slots__", MISSING)
        if slots is MISSING or "__dict__" in ((slots,) if isinstance(slots, str) else slots):
            return True
    return False


def _python_error(cls: type, action) -> AttributeError:
    """The AttributeError CPython raises for `action` on a fresh instance of `cls` (made with
    object.__new__: no user code runs), for its exact message."""
    try:
        action(object.__new__(cls))
    except AttributeError as exc:
        return exc
    raise AssertionError(f"expected an AttributeError from {cls.__name__}")


def instantiate(tracer, cls: type, args: list, kwargs: dict):
    reason = unsupported_class(cls)
    if reason is not None:
        raise tracer.error(f"creating an instance of class {cls.__qualname__} in traced code is not supported "
                           f"({reason})")
    inst = TracedInstance(tracer, cls)
    init = class_attribute(tracer, cls, "__init__")
    if init is OBJECT_SLOTS["__init__"]:
        if args or kwargs:
            raise TypeError(f"{cls.__name__}() takes no arguments")
        return inst
    result = call_method(tracer, init, inst, list(args), kwargs)
    if is_traced(result) or isinstance(result, (int, float, str, tuple, list, TracedInstance)):
        raise TypeError(f"__init__() should return None, not '{python_type(result).__name__}'")
    return inst


def python_type(x) -> type:
    if isinstance(x, TracedInstance):
        return x.cls
    if isinstance(x, MadeArray):
        return array.array
    if is_traced(x):
        return {F64: float, I64: int, BOOL: bool}.get(x.type, object)
    if isinstance(x, (ExternalList, ExternalObject)):
        return type(x.obj)
    return type(x)


def call_method(tracer, method, self_obj, args: list, kwargs: dict | None = None):
    """Call a function found on a class with `self_obj` bound (inlined)."""
    if isinstance(method, staticmethod):
        return tracer.call(method.__func__, list(args), kwargs or {})
    if isinstance(method, classmethod):
        return tracer.call(method.__func__, [python_type(self_obj), *args], kwargs or {})
    if isinstance(method, (types.FunctionType, BoundMethod)) or hasattr(method, "py_func"):
        return tracer.call(method, [self_obj, *args], kwargs or {})
    raise tracer.error(f"calling {getattr(method, '__qualname__', type(method).__name__)} of class "
                       f"{python_type(self_obj).__name__} is not supported")


# ------------------------------------------------------------------------------ attributes
def get_attribute(tracer, inst: TracedInstance, name: str):
    """`inst.name`: data descriptors of the class, the instance's attributes, then the class's."""
    cls = inst.cls
    if name == "__class__":
        return cls
    raw = class_attribute(tracer, cls, name)
    if isinstance(raw, property):
        if raw.fget is None:
            raise _python_error(cls, lambda o: getattr(o, name))
        return tracer.call(raw.fget, [inst], {})
    if name in inst.attrs:
        return inst.attrs[name]
    if raw is MISSING or isinstance(raw, types.MemberDescriptorType):
        raise _python_error(cls, lambda o: getattr(o, name))
    if isinstance(raw, types.FunctionType):
        return BoundMethod(raw, inst)
    if isinstance(raw, staticmethod):
        return raw.__func__
    if isinstance(raw, classmethod):
        return BoundMethod(raw.__func__, cls)
    if raw is None or type(raw) in (float, int, bool, str) or isinstance(raw, type) \
            or (type(raw) is tuple and all(type(x) in (float, int, bool, str) for x in raw)):
        return tracer.constant(raw, f"{cls.__name__}.{name}")
    raise tracer.error(f"the attribute {name!r} of class {cls.__name__} (a {type(raw).__name__}) is not supported")


def set_attribute(tracer, inst: TracedInstance, name: str, value) -> None:
    cls = inst.cls
    if name.startswith("__") and name.endswith("__"):
        raise tracer.error(f"assigning .{name} of a {cls.__name__} object is not supported")
    raw = class_attribute(tracer, cls, name)
    if isinstance(raw, property):
        if raw.fset is None:
            raise _python_error(cls, lambda o: setattr(o, name, None))
        tracer.call(raw.fset, [inst, value], {})
        return
    if not isinstance(raw, types.MemberDescriptorType) and not has_dict(cls):
        raise _python_error(cls, lambda o: setattr(o, name, None))
    if inst.frozen:
        raise tracer.error(f"assigning .{name} of a {cls.__name__} object that is one of several objects "
                           f"depending on a traced condition or loop is not supported")
    inst.store(name, value)


def delete_attribute(tracer, inst: TracedInstance, name: str) -> None:
    raw = class_attribute(tracer, inst.cls, name)
    if isinstance(raw, property) or name not in inst.attrs:
        raise tracer.error(f"deleting .{name} of a {inst.cls.__name__} object is not supported")
    if inst.frozen:
        raise tracer.error(f"deleting .{name} of a {inst.cls.__name__} object that depends on a traced "
                           f"condition or loop is not supported")
    inst.attrs = {k: v for k, v in inst.attrs.items() if k != name}


@dataclass(frozen=True, eq=False)
class SuperBinding:
    """`super()` (or `super(cls, obj)`) in a method of an instance made in the trace."""
    start: type
    obj: TracedInstance


def _object_init(self):
    """object.__init__ reached through super(): nothing to do."""


def make_super(tracer, start, obj) -> SuperBinding:
    if not isinstance(obj, TracedInstance) or not isinstance(start, type) or start not in obj.cls.__mro__:
        raise tracer.error("super() outside a method of an object made in the traced code is not supported")
    return SuperBinding(start, obj)


def super_attribute(tracer, sup: SuperBinding, name: str):
    """`super().name`: looked up in the MRO after `sup.start`, bound to the instance."""
    mro = sup.obj.cls.__mro__
    for klass in mro[mro.index(sup.start) + 1:]:
        if name in klass.__dict__:
            raw = klass.__dict__[name]
            tracer.guard_binding(klass.__dict__, name, raw, f"{klass.__name__}.{name} is <{type(raw).__name__}>")
            break
    else:
        raise AttributeError(f"'super' object has no attribute '{name}'")
    if raw is OBJECT_SLOTS["__init__"]:
        return BoundMethod(_object_init, sup.obj)
    if isinstance(raw, types.FunctionType):
        return BoundMethod(raw, sup.obj)
    if isinstance(raw, property) and raw.fget is not None:
        return tracer.call(raw.fget, [sup.obj], {})
    if isinstance(raw, staticmethod):
        return raw.__func__
    if isinstance(raw, classmethod):
        return BoundMethod(raw.__func__, sup.obj.cls)
    if raw is None or type(raw) in (float, int, bool, str):
        return raw
    raise tracer.error(f"super().{name} (a {type(raw).__name__}) is not supported")


# ------------------------------------------------------------------------------ special methods
def special_method(x, name: str):
    """A special method of x's class (looked up on the class, as CPython does), else MISSING."""
    if not isinstance(x, TracedInstance):
        return MISSING
    raw = class_attribute(x.tracer, x.cls, name)
    return MISSING if raw is None else raw


# ------------------------------------------------------------------------------ escaping
_CONSTANT_ATTRIBUTE = (str, bytes, type(None), type, type(Ellipsis), types.NotImplementedType)


def result_value(tracer, inst: TracedInstance, value_of):
    """The IR value standing for an escaping instance: the tuple of its attributes that are not
    constants of `_CONSTANT_ATTRIBUTE` types (`value_of` gives an attribute's IR value)."""
    kept = [value_of(v) for v in inst.attrs.values() if not isinstance(v, _CONSTANT_ATTRIBUTE)]
    return tracer.builder.emit("tuple", tuple(kept))


def result_shape(value, memo: dict | None = None):
    """How to make the Python result from the compiled one (`materialize`): None for a value
    returned as it is, ("tuple", parts) for a tuple holding instances or lists, ("list", key,
    parts) for a list built in the trace (returned as a tuple of its items), ("tolist",) for one
    held in an array, ("instance", key, class, [(name, constant or shape)]) for an instance
    (`key`: the same instance or list twice is one object)."""
    memo = {} if memo is None else memo
    if isinstance(value, TracedInstance):
        key = memo.setdefault(value, len(memo))
        fields = [(name, ("constant", v) if isinstance(v, _CONSTANT_ATTRIBUTE) else result_shape(v, memo))
                  for name, v in value.attrs.items()]
        return ("instance", key, value.cls, fields)
    if type(value) is list:
        key = memo.setdefault(id(value), len(memo))
        return ("list", key, [("constant", None) if x is None else result_shape(x, memo) for x in value])
    if isinstance(value, ExternalList) and value.built:
        return ("tolist",)
    if isinstance(value, MadeArray):
        key = memo.setdefault(id(value), len(memo))
        return ("array.array", key, value.typecode, result_shape(value.items, memo))
    if type(value) in (str, bytes, frozenset):
        return ("constant", value)
    if isinstance(value, (run_time_strings.RunTimeString, run_time_strings.JoinedString)):
        return run_time_strings.result_shape(value.builder, value)
    if type(value) is set:             # (of constants: a DynSet holds traced items)
        return ("set constant", tuple(value))
    if isinstance(value, DynList):
        return ("records", value.item, tuple(value.tracer.builder.strings))
    if isinstance(value, MaybeNone):
        return ("optional", result_shape(value.value, memo))
    if isinstance(value, TracedComplex):
        return ("complex", value.numpy_type)
    if isinstance(value, MixedNumber):
        return ("mixed number",)
    if isinstance(value, DynSet):
        return ("set", result_shape(value.keys, memo))
    if isinstance(value, DynDict):
        return ("dict", result_shape(value.keys, memo), result_shape(value.values, memo))
    if type(value) is dict:
        return ("trace-time dict", tuple(value), [result_shape(v, memo) for v in value.values()])
    if type(value) is tuple:
        parts = [("constant", None) if x is None else result_shape(x, memo) for x in value]
        return ("tuple", parts) if any(p is not None for p in parts) else None
    return None


def materialize(shape, result, made: dict | None = None):
    """The Python result of one call: `result` (the compiled code's) rebuilt by `shape`."""
    if shape is None:
        return result
    made = {} if made is None else made
    if shape[0] == "tuple":
        return tuple(materialize(s, r, made) for s, r in zip(shape[1], result))
    if shape[0] == "tolist":
        return result.tolist()
    if shape[0] == "array.array":
        if shape[1] not in made:
            made[shape[1]] = array.array(shape[2], materialize(shape[3], result, made))
        return made[shape[1]]
    if shape[0] == "constant":
        return shape[1]
    if shape[0] == "string":
        return run_time_strings.materialized(shape, result)
    if shape[0] == "optional":
        return materialize(shape[1], result[1], made) if result[0] else None
    if shape[0] == "complex":
        return complex(*result) if shape[1] is None else numpy_scalar(shape[1], complex(*result))
    if shape[0] == "mixed number":
        return python_value(*result)
    if shape[0] == "set constant":
        return set(shape[1])
    if shape[0] == "set":
        return set(materialize(shape[1], result, made))
    if shape[0] == "dict":             # a DynDict: its keys and its values
        return dict(zip(materialize(shape[1], result[0], made), materialize(shape[2], result[1], made)))
    if shape[0] == "trace-time dict":
        return {k: materialize(s, r, made) for k, s, r in zip(shape[1], shape[2], result)}
    if shape[0] == "records":          # a DynList: one array per field of its items
        return [] if shape[1] is None else python_items(shape[1], [a.tolist() for a in result], shape[2])
    if shape[0] == "list":
        if shape[1] not in made:
            made[shape[1]] = [materialize(s, r, made) for s, r in zip(shape[2], result)]
        return made[shape[1]]
    _, key, cls, fields = shape
    if key in made:
        return made[key]
    obj = made[key] = object.__new__(cls)
    values = iter(result)
    for name, field_shape in fields:
        if field_shape is not None and field_shape[0] == "constant":
            value = field_shape[1]
        else:
            value = materialize(field_shape, next(values), made)
        object.__setattr__(obj, name, value)
    return obj


def numpy_scalar(dtype: str, value):
    """np.<dtype>(value)."""
    import numpy
    return numpy.dtype(dtype).type(value)
