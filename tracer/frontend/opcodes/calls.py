"""Opcode handlers: calls, attribute and method loads, function objects."""
from __future__ import annotations

import builtins
import cmath
import math
import operator
import types

from tracer.frontend import (
    arrays,
    buffers,
    complex_arrays,
    complexes,
    dicts,
    dynlists,
    instance_ops,
    instances,
    made_arrays,
    math_more,
    pybuiltins,
)
from tracer.frontend.builder import is_traced
from tracer.frontend.dtypes import numpy_constant
from tracer.frontend.objects import NULL, BoundMethod, ExternalList, ExternalObject, SymbolicFunction, TracedArray
from tracer.ir import BOOL, F64, I64

# modules whose functions are treated as immutable: reading math.sqrt (or np.exp) is not guarded
IMMUTABLE_MODULES = (math, cmath, operator)


def pop_call(stack: list, nargs: int, kw_names: tuple) -> tuple:
    """(callable, args, kwargs) of a CALL with `nargs` arguments, popped off `stack`.
    3.11/3.12 leave [NULL or method, callable or self] below the arguments, 3.13 leaves
    [callable, NULL or self]; either way one of the pair may be NULL."""
    args = stack[len(stack) - nargs:]
    del stack[len(stack) - nargs:]
    top, below = stack.pop(), stack.pop()
    if below is NULL:
        fn = top
    elif top is NULL:
        fn = below
    else:
        fn, args = below, [top, *args]
    n_kw = len(kw_names)
    kwargs = dict(zip(kw_names, args[len(args) - n_kw:])) if n_kw else {}
    return fn, (args[:len(args) - n_kw] if n_kw else list(args)), kwargs


class CallOps:
    def _call_from_stack(self, nargs: int, kw_names: tuple, extra: int = 0):
        fn, args, kwargs = pop_call(self.stack, nargs, kw_names)
        self.tracer.result_dropped = self.next_instruction_name() == "POP_TOP"
        if fn is super and not args and not kwargs:
            fn, args = super, self.super_arguments()
        self.push(self.call_value(fn, args, kwargs))

    def call_value(self, fn, args: list, kwargs: dict | None = None):
        """What calling `fn` gives (a user class, or an instance of one, as CPython calls them)."""
        kwargs = kwargs or {}
        result = instance_ops.call(self.tracer, fn, list(args), kwargs)
        return self.tracer.call(fn, list(args), kwargs) if result is instance_ops.NOT_HANDLED else result

    def super_arguments(self) -> list:
        """(the `__class__` cell, the first argument) of this frame: zero-argument super()'s."""
        cell = self.cells.get("__class__")
        if cell is None or not self.code.co_argcount:
            raise self.tracer.error("super() without arguments outside a method is not supported")
        first = self.code.co_varnames[0]
        obj = self.cells[first].contents if first in self.cells else self.locals.get(first, NULL)
        return [cell.contents, obj]

    def next_instruction_name(self) -> str | None:
        """The name of the instruction after the one being run (labels and line marks skipped)."""
        for item in self.instrs[self.pc:]:
            if hasattr(item, "opcode"):
                return item.name
        return None

    def op_CALL(self, instr):
        kw_names, self.kw_names = self.kw_names, ()
        self._call_from_stack(instr.arg, kw_names)

    def op_CALL_KW(self, instr):   # 3.13: the keyword names tuple is on top of the stack
        kw_names = self.pop()
        self._call_from_stack(instr.arg, kw_names)

    def op_CALL_FUNCTION_EX(self, instr):
        kwargs = self.pop() if instr.arg & 1 else {}
        args = self.materialize(self.pop())
        if not isinstance(kwargs, dict):
            raise self.tracer.error("** arguments must be a dict")
        self.push(*args, *kwargs.values())
        self._call_from_stack(len(args) + len(kwargs), tuple(kwargs))

    # -- function objects made inside the trace: lambdas, nested defs, comprehensions (3.11)
    def op_MAKE_FUNCTION(self, instr):
        code = self.pop()
        fn = SymbolicFunction(code, self.globals, code.co_qualname)
        flags = instr.arg if isinstance(instr.arg, int) else 0   # 3.13: SET_FUNCTION_ATTRIBUTE
        if flags & 0x08:
            fn.closure = tuple(self.pop())
        if flags & 0x04:
            self.pop()   # annotations
        if flags & 0x02:
            fn.kwdefaults = dict(self.pop())
        if flags & 0x01:
            fn.defaults = tuple(self.pop())
        self.push(fn)

    def op_LOAD_BUILD_CLASS(self, instr):        # a class statement: made at trace time (instance_ops)
        self.push(builtins.__build_class__)

    def op_SET_FUNCTION_ATTRIBUTE(self, instr):
        fn = self.pop()
        value = self.pop()
        if instr.arg & 0x08:
            fn.closure = tuple(value)
        elif instr.arg & 0x02:
            fn.kwdefaults = dict(value)
        elif instr.arg & 0x01:
            fn.defaults = tuple(value)
        self.push(fn)

    # -- attributes
    def load_attribute(self, obj, name: str):
        if isinstance(obj, instances.TracedInstance):
            return instances.get_attribute(self.tracer, obj, name)
        if isinstance(obj, instances.SuperBinding):
            return instances.super_attribute(self.tracer, obj, name)
        if isinstance(obj, ExternalObject):
            return obj.getattr(name)
        if isinstance(obj, TracedArray):
            return arrays.attribute(self.tracer, obj, name)
        if isinstance(obj, complexes.TracedComplex):
            return complexes.attribute(self.tracer, obj, name)
        if isinstance(obj, complex_arrays.ComplexArray):
            return complex_arrays.attribute(self.tracer, obj, name)
        if isinstance(obj, (dicts.DynDict, dicts.DynSet)):
            kind, methods = ("set", dicts.SET_METHODS) if isinstance(obj, dicts.DynSet) else ("dict", dicts.DICT_METHODS)
            if name not in methods:
                raise AttributeError(f"'{kind}' object has no attribute '{name}'")
            return dicts.DictMethod(obj, name)
        if isinstance(obj, dynlists.DynList):
            if name not in dynlists.METHODS:
                raise AttributeError(f"'list' object has no attribute '{name}'")
            return dynlists.DynListMethod(obj, name)
        if is_traced(obj):
            if name == "real":          # True.real is the int 1
                return self.builder.convert(obj, I64) if obj.type == BOOL else obj
            if name == "imag":
                return 0.0 if obj.type == F64 else 0
            method = math_more.number_method(obj, name)      # x.bit_length(), x.is_integer()...
            if method is not None:
                return method
            raise self.tracer.error(f"attribute .{name} of a traced number is not supported")
        if isinstance(obj, buffers.ExternalBuffer):
            return buffers.attribute(self.tracer, obj, name)
        if isinstance(obj, made_arrays.MadeArray):
            return made_arrays.attribute(self.tracer, obj, name)
        if isinstance(obj, ExternalList):
            if getattr(obj, "carried", False) and name in ("index", "count"):   # a gathered.ListView
                return BoundMethod(pybuiltins.list_index if name == "index" else pybuiltins.list_count, obj)
            if getattr(obj, "carried", False):       # a gathered.ListView
                raise self.tracer.error(f"calling .{name}() on a list that compiled code holds in an array (a "
                                        f"comprehension over a long list) is not supported; list(...) of it "
                                        f"makes a Python list that is")
            raise self.tracer.error(f"calling .{name}() on a list from outside the traced function is not supported")
        if isinstance(obj, type) and not name.startswith("__"):
            raw = self.tracer.class_lookup(obj, name)        # a class attribute, guarded
            if isinstance(raw, (staticmethod, classmethod)):
                return getattr(obj, name)
            return self.tracer.constant(raw, f"{obj.__name__}.{name}")
        if isinstance(obj, types.ModuleType):
            # a module attribute is a constant whose binding in the module is guarded (so that
            # `cfg.SCALE = 3.0` recompiles), except in math, cmath and operator, whose functions
            # are treated as immutable
            value = getattr(obj, name)
            label = f"{obj.__name__}.{name}"
            if not any(obj is m for m in IMMUTABLE_MODULES) and obj.__name__ != "numpy" and name in vars(obj):
                self.tracer.guard_binding(obj.__dict__, name, value, f"{label} is <{type(value).__name__}>")
            return self.tracer.constant(value, label)
        return numpy_constant(self.tracer, getattr(obj, name))   # (np.finfo(x).eps: a NumPy scalar)

    def op_LOAD_ATTR(self, instr):
        is_method, name = instr.arg if isinstance(instr.arg, tuple) else (False, instr.arg)
        value = self.load_attribute(self.pop(), name)
        if is_method:
            self.push_callable(value)
        else:
            self.push(value)

    def op_LOAD_METHOD(self, instr):   # 3.11
        self.push(NULL, self.load_attribute(self.pop(), instr.arg))

    def op_LOAD_SUPER_ATTR(self, instr):   # 3.12+: super().name, super().name(...)
        is_method, _, name = instr.arg
        obj = self.pop()
        start = self.pop()
        if self.pop() is not super:
            raise self.tracer.error("LOAD_SUPER_ATTR with a rebound super is not supported")
        value = self.load_attribute(instances.make_super(self.tracer, start, obj), name)
        if is_method:
            self.push_callable(value)
        else:
            self.push(value)

    def op_STORE_ATTR(self, instr):
        obj = self.pop()
        value = self.pop()
        if not isinstance(obj, instances.TracedInstance):
            raise self.tracer.error(f"assigning an attribute of {describe_object(obj)} is not supported (only of "
                                    f"objects made in the traced code)")
        instances.set_attribute(self.tracer, obj, instr.arg, value)

    def op_DELETE_ATTR(self, instr):
        obj = self.pop()
        if not isinstance(obj, instances.TracedInstance):
            raise self.tracer.error(f"deleting an attribute of {describe_object(obj)} is not supported")
        instances.delete_attribute(self.tracer, obj, instr.arg)


def describe_object(obj) -> str:
    if isinstance(obj, (ExternalObject, ExternalList)):
        return repr(obj)
    if is_traced(obj):
        return f"a traced {obj.type}"
    return f"a {type(obj).__name__}"
