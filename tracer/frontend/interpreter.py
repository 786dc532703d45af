"""The symbolic bytecode interpreter: runs a function's bytecode with traced values, emitting IR.

`trace_frame` is the entry: given a code object and the real arguments of a call (handed over by
the PEP 523 hook), it runs the bytecode instruction by instruction on a `SymbolicFrame`.
Arithmetic on traced values goes to the `GraphBuilder`; everything known at trace time (ints
from `range`, list lengths, branches on constants) is simply executed, so loops over known ranges
unroll and calls to other Python functions are inlined (a new `SymbolicFrame`).

Opcode handlers live in `tracer/frontend/opcodes/`, one mixin per family; the handler for an
instruction is the method `op_<NAME>`. An instruction without a handler is an `UnsupportedError`
naming it and the user's line.
"""
from __future__ import annotations

import array
import sys
import types
from dataclasses import dataclass, field

from bytecode import Bytecode, Instr, Label, TryBegin

from tracer import native
from tracer.errors import (
    BigIntConstant,
    BigIntInput,
    InternalError,
    SourceLoc,
    TracerError,
    UnsupportedError,
    is_internal,
    unsupported_instruction,
)
from tracer.frontend import arrays, buffers, callouts, dicts, dynlists, gathered, instances, library, numpy_api, resume
from tracer.frontend.binding import CO_VARKEYWORDS, bind_arguments
from tracer.frontend.branches import RETURN, AlwaysRaises, Branching, EveryPathRaises, RestartLoop, too_deep
from tracer.frontend.builder import GraphBuilder, NeedsPython, is_number, is_traced
from tracer.frontend.complex_arrays import ComplexArray, complex_result, is_numpy_complex, numpy_complex, of_param
from tracer.frontend.complexes import ConjugateMethod, TracedComplex
from tracer.frontend.dtypes import numpy_scalar_dtype
from tracer.frontend.flow import flow_graph
from tracer.frontend.generators import SymbolicGenerator
from tracer.frontend.iterables import NOT_CONSTANT, string_method
from tracer.frontend.iteration import ListChanged
from tracer.frontend.made_arrays import MadeArray
from tracer.frontend.mixed_numbers import MixedNumber
from tracer.frontend.numpy_scalars import numpy_results
from tracer.frontend.objects import (
    NULL,
    ArrayMethod,
    BoundMethod,
    Cell,
    ExternalList,
    ExternalObject,
    MaybeNone,
    SymbolicFunction,
    TracedArray,
    TransformedFunction,
)
from tracer.frontend.opcodes.calls import CallOps
from tracer.frontend.opcodes.containers import ContainerOps
from tracer.frontend.opcodes.control import ControlFlowOps
from tracer.frontend.opcodes.exceptions import ExceptionOps, settle_uncaught, start_exception_state
from tracer.frontend.opcodes.numbers import NumberOps
from tracer.frontend.opcodes.stack import StackOps
from tracer.frontend.opcodes.strings import StringOps
from tracer.frontend.recursion import unrolled_arguments
from tracer.frontend.run_time_strings import JoinedString, RunTimeString, result_values
from tracer.frontend.sources import (
    ABSENT,
    ArgSource,
    AttrSource,
    BindingGuard,
    EachGuard,
    MissingAttrGuard,
    RootSource,
    Source,
    StructureGuard,
    ValueGuard,
)
from tracer.ir import COMPLEX, I64_MAX, I64_MIN, ArrayType, Function, Value, verify

_MISSING = object()
MAX_INSTRUCTIONS = 2_000_000   # a trace this long is almost certainly an endless trace-time loop
MAX_INLINE_DEPTH = 64
MAX_RECURSION_UNROLL = 48      # calls of one function inside itself that a recursion unrolls
CO_GENERATOR = 0x20
IMMUTABLE_CONSTANTS = (types.FunctionType, types.BuiltinFunctionType, types.ModuleType, type,
                       str, bytes, type(None), type(Ellipsis), range, types.MethodType, native.Dispatcher,
                       types.NotImplementedType, types.MethodDescriptorType)

_BYTECODE_CACHE: dict[types.CodeType, tuple[list, dict]] = {}


def instructions_of(code: types.CodeType) -> tuple[list, dict]:
    """The `bytecode` package's abstract instructions of `code`, and each label's position."""
    cached = _BYTECODE_CACHE.get(code)
    if cached is None:
        instrs = list(Bytecode.from_code(code))
        labels = {item: i for i, item in enumerate(instrs) if isinstance(item, Label)}
        cached = _BYTECODE_CACHE[code] = (instrs, labels)
    return cached


@dataclass
class Trace:
    """What one trace produced: the IR and everything the call depended on."""
    function: Function
    leaves: list[tuple[Source, Value]]      # each IR parameter and where to load it per call
    pins: list[ValueGuard]                  # int/bool inputs the trace used as constants
    identity_guards: list[ValueGuard]       # functions, None, ... read from inputs
    structure_guards: list[StructureGuard]
    missing_attr_guards: list[MissingAttrGuard]
    binding_guards: list[BindingGuard]
    nargs: int
    each_guards: list[EachGuard]            # about every item of a list gathered into an array
    scattered: list = field(default_factory=list)   # GatherSources written: the loader scatters them back
    break_point: object = None              # a prefix up to a graph break: its resume.BreakPoint
    result_shape: object = None             # instances returned: how to make them (instances.materialize)

    def guards(self) -> list:
        return [*self.structure_guards, *self.each_guards, *self.missing_attr_guards, *self.pins,
                *self.identity_guards, *self.binding_guards]


class Tracer:
    """State shared by every frame of one trace: the IR builder, the inputs and the guards."""

    def __init__(self, name: str):
        self.builder = GraphBuilder(name)
        self.leaves: dict[tuple, tuple[Source, Value]] = {}      # by Source.key
        self.structure_guards: dict[tuple, StructureGuard] = {}   # by Source.key
        self.binding_guards: dict[tuple, BindingGuard] = {}
        self.identity_guards: dict[tuple, ValueGuard] = {}        # by Source.key
        self.missing_attr_guards: dict[tuple, MissingAttrGuard] = {}
        self.each_guards: dict[tuple, EachGuard] = {}
        self.call_stack: list[types.CodeType] = []
        self.steps = 0
        self.unroll_loops = 0          # > 0: loops over ranges known at trace time unroll (for autodiff)
        self.arrays: dict[tuple, TracedArray] = {}        # array inputs, by Source.key (one object each)
        self.updated_arrays: dict[Value, TracedArray] = {}  # array params updated in place -> their array
        self.numpy_scalars: set = set()    # traced scalars NumPy made (np.float64, not float: numpy_scalars.made_by_numpy)
        self.python_scalars: set = set()   # float(), int(), bool() of traced scalars: Python's numbers again
        self.made_by_numpy: dict = {}      # traced scalar -> whether NumPy made it (numpy_scalars.made_by_numpy)
        self.uses_numpy = False        # NumPy semantics: a call whose ops fail runs the Python function
        self.forks = 0                 # traced branches forked so far (branches.MAX_FORKS)
        self.returns_none = False
        self.gather_lists = True       # loops over long lists may compile to loops (tracer.frontend.gathered)
        self.gathered_lists = False    # ... and one did
        self.gathered_sources: dict[Value, tuple] = {}   # a gathered array's param -> (GatherSource, length)
        self.result_dropped = False    # the call being traced is a statement: CALL, then POP_TOP
        self.call_out = False          # such calls may run in CPython from compiled code (callouts)
        self.catches = None            # where a failure a handler catches, or a raise only Python makes, was met
        start_exception_state(self)    # what raise statements raised (`raised`), and more (opcodes.exceptions)
        self.unrolled_for: list = []   # ListChanged of loops unrolled instead (branches._check_trace_length)
        self.frames: list = []         # the frames running, innermost last (ExceptionOps.handled_exception)
        # lists made in the trace: id -> (the list, where it was made: (code, instruction index));
        # a list made at a site in `held_sites` is held in an array from the start (trace_frame)
        self.list_sites: dict = {}
        self.held_sites: frozenset = frozenset()
        self.grown_sites: dict = {}     # ...and one whose length changes, as a DynList (site -> item type)
        self.written_gathers: dict[tuple, object] = {}   # GatherSource.key -> the GatherSource: written into

    @property
    def loc(self) -> SourceLoc | None:
        return self.builder.loc

    def error(self, message: str) -> UnsupportedError:
        return UnsupportedError(message, self.loc)

    # ------------------------------------------------------------------ inputs
    def wrap(self, obj, source: Source):
        """The symbolic value of an object read from a mutable place (argument, list, attribute)."""
        key = source.key
        if type(obj) in (float, int, bool):
            if key not in self.leaves:
                if type(obj) is int and not I64_MIN <= obj <= I64_MAX:
                    raise BigIntInput(f"{source} is an int beyond 64 bits; compiled code uses 64-bit ints", self.loc)
                param = self.builder.add_param(str(source), self.builder.kind(obj), obj)
                self.leaves[key] = (source, param)
            return self.leaves[key][1]
        if type(obj) in (list, tuple):
            self.structure_guards.setdefault(key, StructureGuard(source, type(obj), len(obj)))
            return ExternalList(self, obj, source)
        if type(obj) is array.array:
            return buffers.wrap(self, obj, source)
        if type(obj) is complex or is_numpy_complex(obj):    # its two parts, read per call
            self.structure_guards.setdefault(key, StructureGuard(source, type(obj)))
            real, imag = (self.wrap(getattr(obj, part), AttrSource(source, part)) for part in ("real", "imag"))
            return TracedComplex(real, imag) if type(obj) is complex else numpy_complex(self, real, imag)
        if (dtype := numpy_scalar_dtype(obj)) is not None:          # np.float64(2.0), np.uint8(7): strong
            if key not in self.leaves:
                self.leaves[key] = (source, self.builder.add_param(str(source), dtype, obj.item(), numpy=True))
                self.numpy_scalars.add(self.leaves[key][1])
                self.uses_numpy = True              # (a failed op: NumPy's inf and warning, from Python)
            return self.leaves[key][1]
        if arrays.is_ndarray(obj):
            if key not in self.arrays:
                param = self._array_param(obj, source)
                self.arrays[key] = TracedArray(self, param, param=param)
                if param.type.dtype in COMPLEX:        # seen as its two parts
                    self.arrays[key] = of_param(self, self.arrays[key])
            return self.arrays[key]
        if type(obj) in (dict, set, frozenset) and all(map(dicts.constant_key, obj)):   # keys guarded
            return dicts.input_container(self, obj, source)
        if type(obj) is str:               # a constant: equal strings on later calls reuse this trace
            self.identity_guards.setdefault(key, ValueGuard(source, obj))
            return obj
        if isinstance(obj, (int, float, complex, str)):
            raise self.error(f"{source} is a {type(obj).__name__}, which traced code does not support "
                             f"(numbers must be exactly float, int or bool)")
        if isinstance(obj, IMMUTABLE_CONSTANTS) or obj is None or numpy_api.is_numpy_constant(obj):
            # used by identity (np.exp, np.float64, a dtype, None): guarded where it was read from an
            # input; a root (a global's or a module's value) is guarded by its binding already
            if not isinstance(source, RootSource):
                self.identity_guards.setdefault(key, ValueGuard(source, obj))
            return obj
        if hasattr(obj, "__dict__") and type(obj).__module__ not in ("builtins", "numpy"):
            self.structure_guards.setdefault(key, StructureGuard(source, type(obj)))
            return ExternalObject(self, obj, source)
        raise self.error(f"{source} is a {type(obj).__name__}, which traced code does not support yet")

    def _array_param(self, array, source: Source) -> Value:
        """An array input: an IR parameter of ArrayType whose sizes are run-time values (a new
        size does not recompile; a new dtype or rank does)."""
        key = source.key
        if key not in self.leaves:
            dtype = arrays.readable_dtype(array)
            if dtype is None:
                raise self.error(f"{source} is an array of dtype {array.dtype!r}, not a builtin number dtype")
            t = ArrayType(dtype, arrays.param_shape(array))
            self.leaves[key] = (source, self.builder.add_param(str(source), t, array))
            self.uses_numpy = True
        return self.leaves[key][1]

    def constant(self, obj, label: str):
        """The symbolic value of an object bound to a global or closure cell (binding is guarded)."""
        if type(obj) in (float, int, bool) or isinstance(obj, IMMUTABLE_CONSTANTS) or obj is None:
            return obj
        if type(obj) is tuple and all(type(x) in (float, int, bool, tuple) for x in obj):
            items = tuple(self.constant(x, label) for x in obj)
            return obj if all(a is b for a, b in zip(items, obj)) else items   # keep its identity
        return self.wrap(obj, RootSource(obj, label))

    def guard_binding(self, namespace, key, expected, label):
        self.binding_guards.setdefault((id(namespace), key), BindingGuard(namespace, key, expected, label))

    def read_global(self, globals: dict, builtins: dict, name: str):
        if name in globals:
            value = globals[name]
            self.guard_binding(globals, name, value, f"globals()[{name!r}] is <{type(value).__name__}>")
            return self.constant(value, name)
        if name in builtins:
            value = builtins[name]
            self.guard_binding(globals, name, ABSENT, f"{name!r} not in globals()")
            self.guard_binding(builtins, name, value, f"builtins[{name!r}] is {value!r}")
            return self.constant(value, name)
        raise NameError(f"name '{name}' is not defined")

    def guard_function(self, fn):
        """An inlined function's code and defaults are constants: guard them (reassigning
        `f.__defaults__` or `f.__code__` recompiles)."""
        for attr in ("__code__", "__defaults__", "__kwdefaults__"):
            value = getattr(fn, attr)
            self.guard_binding(fn, attr, value, f"{fn.__qualname__}.{attr} is <{type(value).__name__}>")

    def closure_cell(self, cell, name: str) -> Cell:
        try:
            contents = cell.cell_contents
        except ValueError:
            return Cell(NULL)
        self.guard_binding(cell, None, contents, f"closure cell {name!r} is <{type(contents).__name__}>")
        return Cell(self.constant(contents, name))

    def instance_attribute(self, ext: ExternalObject, name: str):
        """`ext.name` for a user object (ExternalObject.getattr says the order)."""
        cls = type(ext.obj)
        try:
            raw = self.class_lookup(cls, name)
        except AttributeError:
            raw = _MISSING
        if isinstance(raw, property):
            if raw.fget is None:
                raise AttributeError(f"property {name!r} of {cls.__name__!r} object has no getter")
            return self.call(raw.fget, [ext], {})
        instance_dict = getattr(ext.obj, "__dict__", {})
        if name in instance_dict:
            return self.wrap(instance_dict[name], AttrSource(ext.source, name))
        if raw is _MISSING:
            raise AttributeError(f"'{cls.__name__}' object has no attribute '{name}'")
        if hasattr(ext.obj, "__dict__"):   # an instance attribute set later would shadow it
            self.missing_attr_guards.setdefault((ext.source.key, name), MissingAttrGuard(ext.source, name))
        if isinstance(raw, types.FunctionType):
            return BoundMethod(raw, ext)
        if isinstance(raw, staticmethod):
            return raw.__func__
        if isinstance(raw, classmethod):
            return BoundMethod(raw.__func__, cls)
        if type(raw) in (float, int, bool) or isinstance(raw, IMMUTABLE_CONSTANTS):
            return raw   # a class attribute: the class dict binding is guarded
        raise self.error(f"attribute {name!r} of class {cls.__name__} is not supported")

    def held_in_array(self, ext: ExternalList):
        """The ListView holding input list `ext` once the trace has written into it (its items are
        then read from that array: tracer.frontend.gathered), else None."""
        return gathered.held_in_array(self, ext) if self.written_gathers else None

    def class_lookup(self, cls: type, name: str):
        """`name` found on a class (through its MRO), guarded: redefining it recompiles."""
        for klass in cls.__mro__:
            if name in klass.__dict__:
                raw = klass.__dict__[name]
                self.guard_binding(klass.__dict__, name, raw, f"{klass.__name__}.{name} is <{type(raw).__name__}>")
                return raw
        raise AttributeError(f"type object '{cls.__name__}' has no attribute '{name}'")

    # ------------------------------------------------------------------ calls
    def call(self, fn, args: list, kwargs: dict):
        # whether this call's result is dropped (read once: calls made inside it use theirs)
        dropped, self.result_dropped = self.result_dropped, False
        if dropped and self.call_out and callouts.logs(fn):   # logging: made in CPython from compiled code
            return callouts.call_out(self, callouts.logging_callee(fn), args, kwargs)
        if isinstance(fn, BoundMethod):
            return self.call(fn.function, [fn.self_obj, *args], kwargs)
        if isinstance(fn, native.Dispatcher):       # another @trace'd function: inline its Python
            transform = getattr(fn, "transform", None)
            if transform is not None:              # grad(f) and friends: differentiate while tracing
                return transform.trace_call(self, list(args), kwargs)
            return self.call(fn.py_func, args, kwargs)
        if isinstance(fn, TransformedFunction):
            return fn.transform.trace_call(self, list(args), kwargs)
        if isinstance(fn, SymbolicFunction):
            return self.inline(fn.code, fn.globals, fn.globals.get("__builtins__", {}), fn.name,
                               args, kwargs, fn.defaults, fn.kwdefaults, dict(zip(fn.code.co_freevars, fn.closure)))
        if isinstance(fn, ArrayMethod):
            return numpy_api.call_array_method(self, fn, list(args), kwargs)
        if isinstance(fn, dynlists.DynListMethod):
            return dynlists.call_method(self, fn, list(args), kwargs)
        if isinstance(fn, ConjugateMethod) and not args and not kwargs:
            return fn.call(self)
        if isinstance(fn, dicts.DictMethod):
            return dicts.call_method(self, fn, list(args), kwargs)
        implementation = library.lookup(fn)    # builtins, math, and tracer's own grad()
        if implementation is None and "numpy" in sys.modules:
            implementation = numpy_api.lookup(fn)
            self.uses_numpy = self.uses_numpy or implementation is not None
        if implementation is not None:
            return implementation(self, *args, **kwargs)
        if isinstance(fn, types.FunctionType):
            cells = {name: self.closure_cell(c, name) for name, c in zip(fn.__code__.co_freevars, fn.__closure__ or ())}
            self.guard_function(fn)
            defaults = tuple(self.constant(d, f"{fn.__qualname__}.__defaults__[{i}]")
                             for i, d in enumerate(fn.__defaults__ or ()))
            kwdefaults = {k: self.constant(v, f"{fn.__qualname__}.__kwdefaults__[{k!r}]")
                          for k, v in (fn.__kwdefaults__ or {}).items()}
            return self.inline(fn.__code__, fn.__globals__, fn.__builtins__, fn.__qualname__, args, kwargs,
                               defaults, kwdefaults, cells)
        if isinstance(fn, types.MethodType):
            return self.call(fn.__func__, [self.constant(fn.__self__, "self"), *args], kwargs)
        if isinstance(fn, ExternalObject):
            return self.call(fn.getattr("__call__"), args, kwargs)
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) is list:
            return library.call_list_method(self, fn.__name__, fn.__self__, args, kwargs)
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) in (dict, set, frozenset, dicts.InputDict, dicts.InputSet):
            return dicts.trace_time_method(self, fn.__self__, fn.__name__, list(args), kwargs)
        if isinstance(fn, types.BuiltinMethodType) and type(fn.__self__) in (str, bytes, int, float, bool) \
                and (made := string_method(fn, args, kwargs)) is not NOT_CONSTANT:
            return made                      # a str (or number) method on constants: what Python gives
        if isinstance(fn, type) and issubclass(fn, BaseException) and all(is_number(a) or isinstance(a, str) for a in args):
            return fn(*args)
        deferred = callouts.exception_of(fn, args, kwargs)
        if deferred is not None:
            return deferred                # made and raised by CPython at the raise
        if self.call_out:              # run in CPython, from compiled code (tracer.frontend.callouts)
            typed = callouts.value_call(fn, args, kwargs)
            if typed is not None:
                return callouts.call_out(self, fn, args, kwargs, *typed)
            if dropped and callouts.may_call_out(fn):
                return callouts.call_out(self, fn, args, kwargs)
        raise self.error(f"calling {describe(fn)} is not supported")

    def inline(self, code, globals, builtins, name, args, kwargs, defaults, kwdefaults, cells):
        args, kwargs = unrolled_arguments(self, code, name, args, kwargs, cells, MAX_RECURSION_UNROLL)
        if len(self.call_stack) >= MAX_INLINE_DEPTH:
            raise self.error("calls nested too deeply to inline" if code not in self.call_stack else
                             f"recursion deeper than {MAX_INLINE_DEPTH} calls ({name}()) is not supported yet")
        local_values = bind_arguments(code, name, args, kwargs, defaults, kwdefaults)
        if isinstance(builtins, types.ModuleType):
            builtins = builtins.__dict__
        frame = SymbolicFrame(self, code, globals, builtins, local_values, cells)
        caller_loc = self.builder.loc
        self.call_stack.append(code)
        try:
            value = frame.run()
        except TracerError:
            self.builder.loc = caller_loc
            raise
        finally:
            self.call_stack.pop()
        # (an exception the callee raises keeps its line: the raise compiled for it points there)
        self.builder.loc = caller_loc
        if isinstance(value, AlwaysRaises):
            raise EveryPathRaises()
        return value

    def step(self):
        self.steps += 1
        if self.steps > MAX_INSTRUCTIONS:
            raise self.error(f"trace exceeded {MAX_INSTRUCTIONS} bytecode instructions (an endless loop?)")

    # ------------------------------------------------------------------ results
    def result_value(self, obj, top_level: bool = True) -> Value:
        """The IR value of what the traced function returns."""
        b = self.builder
        if is_traced(obj):
            return obj
        if isinstance(obj, (TracedArray, ComplexArray)):
            return obj.value if isinstance(obj, TracedArray) else complex_result(self, obj)
        if isinstance(obj, AlwaysRaises):
            return b.const(0.0)      # never returned: every path raised first
        if obj is None and top_level:
            self.returns_none = True
            return b.emit("tuple", ())
        if is_number(obj):
            return b.const(obj)          # an int past 64 bits: BigIntInput, the call runs Python
        if type(obj) in (str, bytes, set, frozenset) or obj is None:
            return b.emit("tuple", ())   # a constant (a set of constants), put back by instances.materialize
        if isinstance(obj, tuple):
            return b.emit("tuple", tuple(self.result_value(x, False) for x in obj))
        if type(obj) is list or isinstance(obj, MadeArray):     # made again by instances.materialize
            return b.emit("tuple", tuple(self.result_value(x, False) for x in obj))
        if isinstance(obj, ExternalList) and obj.built:
            return obj.array.value
        if isinstance(obj, (RunTimeString, JoinedString)):
            return b.emit("tuple", tuple(result_values(self, obj, dynlists.to_arrays)))
        if isinstance(obj, dicts.DynDict):
            return b.emit("tuple", (self.result_value(obj.keys, False), self.result_value(obj.values, False)))
        if isinstance(obj, dicts.DynSet):
            return self.result_value(obj.keys, False)
        if isinstance(obj, TracedComplex):                 # complex(real, imag) again (instances.materialize)
            return b.emit("tuple", tuple(b.value(x) for x in obj.fields()))
        if isinstance(obj, MixedNumber):                   # its tag, int and float (instances.materialize)
            return b.emit("tuple", tuple(b.value(x) for x in obj.fields()[1:]))
        if isinstance(obj, MaybeNone):                     # None where `present` is false
            return b.emit("tuple", (obj.present, self.result_value(obj.value, False)))
        if type(obj) is dict:
            return b.emit("tuple", tuple(self.result_value(v, False) for v in obj.values()))
        if isinstance(obj, dynlists.DynList):                 # made again by instances.materialize
            arrays_ = dynlists.to_arrays(self, obj) if obj.item is not None else []
            return b.emit("tuple", tuple(a.value for a in arrays_))
        if isinstance(obj, ExternalList) and isinstance(obj.obj, tuple):
            return b.emit("tuple", tuple(self.result_value(x, False) for x in obj.items()))
        if isinstance(obj, instances.TracedInstance):      # made again by instances.materialize
            return instances.result_value(self, obj, lambda x: self.result_value(x, False))
        raise self.error(f"returning {describe(obj)} is not supported (return numbers or tuples of numbers)")


def describe(obj) -> str:
    if isinstance(obj, Value):
        return f"a traced {obj.type} value"
    if isinstance(obj, (types.FunctionType, types.BuiltinFunctionType)):
        module = getattr(obj, "__module__", None)
        return f"{module + '.' if module and module != 'builtins' else ''}{obj.__qualname__}()"
    if isinstance(obj, type):
        return f"class {obj.__qualname__}"
    if isinstance(obj, (ExternalList, ExternalObject)):
        return repr(obj)
    return f"a {type(obj).__name__}"


class SymbolicFrame(StackOps, NumberOps, CallOps, ControlFlowOps, ExceptionOps, ContainerOps, StringOps, Branching,
                    resume.Breaking):
    """One Python frame being interpreted symbolically."""

    def __init__(self, tracer: Tracer, code, globals, builtins, local_values: dict, cells: dict):
        self.tracer = tracer
        self.builder: GraphBuilder = tracer.builder
        self.code = code
        self.globals = globals
        self.builtins = builtins
        self.locals: dict = dict(local_values)
        self.cells: dict[str, Cell] = dict(cells)
        self.stack: list = []
        self.instrs, self.labels = instructions_of(code)
        self.pc = 0
        self.kw_names: tuple = ()
        self.is_generator = bool(code.co_flags & CO_GENERATOR)
        self.yielded: list = []
        self.sink = None                         # SymbolicGenerator.run_into: what a yield does
        self.return_value = NULL
        self.lineno = code.co_firstlineno
        self.caller_loc = tracer.builder.loc if tracer.call_stack else None   # an inlined call's line
        # control flow (tracer.frontend.branches)
        self.graph = flow_graph(code, self.instrs, self.labels)
        self.stops: frozenset = frozenset()
        self.building: set[int] = set()          # headers of the loops being built
        self.active_headers: dict[int, int] = {}  # headers with a rollback checkpoint
        self.peel_counts: dict[int, int] = {}
        self.unrolled_headers: set[int] = set()  # while loops that could not be built as loops
        self.exception_table, self.no_loops = None, False   # (opcodes.exceptions)

    def run(self):
        """Run the frame to its return (a generator function returns a SymbolicGenerator)."""
        if self.is_generator:
            return SymbolicGenerator(self)
        self.execute()
        return self.return_value

    def execute(self):
        """Interpret instructions until the frame returns or (a generator) yields a value."""
        self.tracer.frames.append(self)
        try:
            outcome = self.run_until(frozenset())
        except RestartLoop as exc:               # (never a user's exception: not compiled as one)
            raise InternalError(f"internal error in the tracer (a loop at {exc.header} to restart was not "
                                f"being unrolled); please report it", self.builder.loc) from exc
        finally:
            self.leave_frame()
            self.tracer.frames.pop()
        if outcome is None:                      # a generator yielded
            return
        if not outcome.places:                   # every path raises (the raises are in the IR)
            self.return_value = AlwaysRaises()
            return
        self.return_value = outcome.states[RETURN].return_value

    def step_instruction(self):
        """Interpret the item at self.pc; a handler's Outcome when it ran a data-dependent branch."""
        instr = self.instrs[self.pc]
        self.pc += 1
        if not isinstance(instr, Instr):
            if isinstance(instr, TryBegin) and self.starts_exception_handler(instr.target):
                self.enter_try(instr.target)
            return None             # labels, TryEnd, SetLineno; comprehension cleanups (3.12+)
        if instr.lineno is not None:
            self.lineno = instr.lineno
        self.builder.loc = SourceLoc(self.code.co_filename, self.lineno, self.code.co_name, self.caller_loc)
        self.tracer.step()
        handler = getattr(self, "op_" + instr.name, None)
        if handler is None:
            raise self.tracer.error(unsupported_instruction(instr.name))
        here = self.pc - 1
        self.note_interruptible(here)
        breakable = instr.name in resume.BREAKABLE and self.may_break_here()
        try:
            result = self.call_or_break(handler, instr) if breakable else handler(instr)
        except Exception as exc:         # a raise statement's exception, caught here at trace time
            if self.catch(exc, here):
                return None
            raise
        if instr.name in LIST_MAKERS and self.stack and type(self.stack[-1]) in (list, dict, set):
            self.list_made((self.code, self.pc - 1))
        return result

    def jump(self, label):
        self.pc = self.labels[label]

    def push(self, *values):
        self.stack.extend(values)

    def pop(self):
        return self.stack.pop()

    def popn(self, n: int) -> list:
        if n == 0:
            return []
        values = self.stack[-n:]
        del self.stack[-n:]
        return values


# the instructions that may leave a new, complete list on the stack (Tracer.list_sites)
LIST_MAKERS = frozenset({"BUILD_LIST", "LIST_EXTEND", "BINARY_OP", "CALL", "CALL_FUNCTION_EX", "BINARY_SLICE",
                         "BUILD_MAP", "BUILD_CONST_KEY_MAP", "CALL_KW", "BUILD_SET"})
HELD_LIST_ROUNDS = 5


def trace_frame(code, args: tuple, globals: dict, builtins: dict, closure, name: str,
                unroll_loops: bool = False, call_out: bool = False) -> Trace:
    """Trace one call (`_trace_gathering`). Where that fails because a data-dependent branch
    or loop changes a list made in the trace (ListChanged), it traces again with the lists made
    where those were made held in arrays (Tracer.held_sites): a store into an array is an op
    like any other, on one path or in a loop."""
    held, grown, first = frozenset(), {}, None
    for _ in range(HELD_LIST_ROUNDS):
        try:
            return _trace_gathering(code, args, globals, builtins, closure, name, unroll_loops, call_out,
                                    (held, grown))
        except TracerError as exc:
            if isinstance(exc, BigIntInput) or (first is None and not isinstance(exc, ListChanged)):
                raise
            first = first or exc
            new_grown = {s: t for s, t in getattr(exc, "grown", {}).items() if grown.get(s, exc) != t}
            sites = getattr(exc, "sites", frozenset()) - held
            if not sites and not new_grown:
                if not isinstance(exc, ListChanged):    # what stops the list held or grown
                    raise
                raise first from (exc if exc is not first else None)
            held, grown = held | sites | set(new_grown), {**grown, **new_grown}
    raise first


def _trace_gathering(code, args: tuple, globals: dict, builtins: dict, closure, name: str,
                     unroll_loops: bool, call_out: bool, held: frozenset) -> Trace:
    """Trace one call: `args` are the frame's arguments as bound by CPython (positional order).
    With `unroll_loops`, loops over ranges known at trace time unroll (int bounds are pinned).
    With `call_out`, call statements the tracer cannot compile may run in CPython from the
    compiled code (tracer.frontend.callouts); without it they are unsupported.

    Loops over long lists compile to loops over arrays (tracer.frontend.gathered). Where that makes the
    trace fail (e.g. a comprehension's result is changed later: it is a read-only array), the
    call is traced again with every such loop unrolled, as it would have been without them (and
    that trace is kept if it has no graph break where the first one had one)."""
    tracer = Tracer(name)
    tracer.call_out = call_out
    tracer.held_sites, tracer.grown_sites = held
    first = None
    try:
        first = _trace_frame(tracer, code, args, globals, builtins, closure, name, unroll_loops)
        if first.break_point is None or not tracer.gathered_lists:
            return first
    except UnsupportedError as exc:
        if isinstance(exc, BigIntInput) or not tracer.gathered_lists or getattr(exc, "final", False) \
                or getattr(exc, "grown", None):
            raise
    tracer = Tracer(name)
    tracer.call_out = call_out
    tracer.held_sites, tracer.grown_sites = held
    tracer.gather_lists = False
    try:
        again = _trace_frame(tracer, code, args, globals, builtins, closure, name, unroll_loops)
    except UnsupportedError:
        if first is None:
            raise
        return first
    return first if first is not None and again.break_point is not None else again


def _trace_frame(tracer, code, args, globals, builtins, closure, name, unroll_loops) -> Trace:
    tracer.unroll_loops = int(unroll_loops)
    tracer.builder.max_ops = None if unroll_loops else tracer.builder.max_ops   # (a gradient: no bound)
    tracer.builder.loc = SourceLoc(code.co_filename, code.co_firstlineno, code.co_name)
    if code.co_flags & CO_VARKEYWORDS:
        raise tracer.error(f"{name}() takes **kwargs, which traced functions do not support yet")
    if code.co_flags & CO_GENERATOR:
        raise tracer.error(f"{name}() is a generator, which cannot be compiled")
    local_values = {}
    for i, arg in enumerate(args):
        arg_name = code.co_varnames[i]
        local_values[arg_name] = tracer.wrap(arg, ArgSource(i, arg_name))
    cells = {n: tracer.closure_cell(c, n) for n, c in zip(code.co_freevars, closure or ())}
    if isinstance(builtins, types.ModuleType):
        builtins = builtins.__dict__
    frame = SymbolicFrame(tracer, code, globals, builtins, local_values, cells)
    tracer.call_stack.append(code)   # recursion into the traced function itself is detected too
    point = None
    try:
        value = frame.run()
    except resume.GraphBreak as brk:   # the prefix: it returns the live traced numbers
        param_sources = {param: source for source, param in tracer.leaves.values()}
        point, outputs = resume.break_point(tracer, code, brk, param_sources)
        value = tuple(outputs)
    except EveryPathRaises:            # a call that always raises (compiled already)
        value = AlwaysRaises()
    except TracerError as exc:
        if not isinstance(exc, BigIntConstant):
            raise
        tracer.builder.raise_(NeedsPython(str(exc)))   # compiled: it runs the Python function
        value = AlwaysRaises()
    except Exception as exc:
        if isinstance(exc, RecursionError):
            raise too_deep(tracer, tracer.loc) from None
        if is_internal(exc):
            raise InternalError(f"internal error in the tracer ({type(exc).__name__}: {exc}); please report it",
                                tracer.loc) from exc
        # what CPython raises for these arguments (and every call that passes the guards): the
        # raise is compiled, after the ops before it, which may fail first at run time (in a
        # loop or branch they have no trace-time value), as a side of a branch does
        tracer.builder.raise_(exc)
        value = AlwaysRaises()
    result = tracer.result_value(value)
    if tracer.updated_arrays:      # argument arrays updated in place get their new contents
        pairs = [x for param, array in tracer.updated_arrays.items() for x in (param, array.value)]
        tracer.builder.emit("writeback", tuple(pairs))
    fn = tracer.builder.finish(result)
    fn.python_on_failure = settle_uncaught(tracer, fn)     # (tracer.uses_numpy or tracer.catches)
    calls = [v for v in fn.walk() if v.op == "python_call"]
    if tracer.catches and calls:     # (only raises made by CPython: traced again without them, tracer.api)
        error = callouts.RaisedAfterHeldWrites if all(map(callouts.is_raise, calls)) else UnsupportedError
        raise error("a call into CPython in a function with try/except (or a raise whose message Python makes): it "
                    "would run again when the Python function answers", tracer.catches)
    fn.returns_none, fn.numpy_results = tracer.returns_none, numpy_results(tracer, result)
    fn.loc = SourceLoc(code.co_filename, code.co_firstlineno, code.co_name)
    verify(fn)
    param_sources = {param: source for source, param in tracer.leaves.values()}
    leaves = [(param_sources[p], p) for p in fn.params]
    pins = [ValueGuard(param_sources[p], value) for p, value in tracer.builder.pinned.items()]
    return Trace(fn, leaves, pins, list(tracer.identity_guards.values()), list(tracer.structure_guards.values()),
                 list(tracer.missing_attr_guards.values()), list(tracer.binding_guards.values()), len(args),
                 list(tracer.each_guards.values()), list(tracer.written_gathers.values()), point,
                 instances.result_shape(value) if point is None else None)
