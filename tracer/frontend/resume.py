"""Graph breaks at a call: the code before it compiled, the call in CPython, the rest resumed.

When a call in the function's own body (not in a branch or loop on traced values) cannot be
compiled (`round` of something unknown, a dict inside the callee, a library the tracer does not
know), the trace stops *before* that call instruction (`GraphBreak`, raised by the frame) and the
function compiles in three parts, like TorchDynamo's:

1. the *prefix*: the trace up to the call, returning the live traced numbers (`BreakPoint.outputs`);
2. the call itself, made by CPython on the live values (`BreakPoint.resume`, in tracer.specialize);
3. the *continuation*: a new code object (`resume_code`) that takes the live locals and stack
   as arguments (constants are in its code), pushes the stack back, and jumps to the
   instruction after the call, a copy of the rest of the function. It is an ordinary Python function, traced (and broken again) like
   any other, and run by CPython where it cannot be compiled.

Live values are rebuilt from a template: traced numbers and arrays made inside the function
come from the prefix's result, argument objects (arrays, lists, objects) are passed through as
themselves, constants as they are. A live value of another kind (a view of an array, a symbolic
iterator) makes the call run as Python instead (UnsupportedError).
"""
from __future__ import annotations

import types
from dataclasses import dataclass

from bytecode import Bytecode, CellVar, Instr, Label

from tracer.errors import BigIntInput, UnsupportedError
from tracer.frontend.builder import TraceTooLarge, is_traced
from tracer.frontend.instances import TracedInstance
from tracer.frontend.iteration import ListChanged
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.frontend.objects import NULL, BoundMethod, ExternalList, ExternalObject, TracedArray
from tracer.frontend.opcodes.calls import pop_call
from tracer.frontend.sources import ArgSource, RootSource
from tracer.ir import BOOL, F64, I64

BREAKABLE = ("CALL", "CALL_KW")            # the instructions a break may stop before
VIEW_OPS = ("param", "slice", "transpose", "broadcast_in_dim", "index", "reshape")   # may share memory
CONSTANT_TYPES = (int, float, bool, complex, str, bytes, type(None), type, types.FunctionType,
                  types.BuiltinFunctionType, types.ModuleType, types.MethodType)


class GraphBreak(Exception):
    """Raised by the root frame at a call it cannot compile: the frame's state just before it.
    Not an UnsupportedError, so that nothing between the frame and trace_frame handles it."""

    def __init__(self, reason: UnsupportedError, loc, pc: int, stack: list, local_values: dict, kw_names: tuple):
        super().__init__(str(reason))
        self.reason, self.loc, self.pc = reason, loc, pc
        self.stack, self.locals, self.kw_names = stack, local_values, kw_names


@dataclass
class BreakPoint:
    """What a compiled prefix hands to CPython: how to rebuild the stack and locals from the
    prefix's outputs, the call to make, and the continuation's code."""
    reason: UnsupportedError
    loc: object                   # the call's line (a SourceLoc) in the traced function
    stack: tuple                  # templates, bottom to top, before the call
    locals: tuple                 # (name, template) of the bound locals
    kw_names: tuple
    instr: object                 # the call instruction
    code: types.CodeType          # the continuation: takes the locals, then the stack after the call
    numpy_outputs: tuple          # per output, the NumPy scalar type name it had, or None

    def rebuild(self, outputs: tuple, args: tuple) -> tuple[list, list]:
        """(stack, local values) for a call of the prefix with `args` that returned `outputs`."""
        outputs = tuple(_as_numpy(x, kind) for x, kind in zip(outputs, self.numpy_outputs))
        made: dict = {}
        stack = [_build(t, outputs, args, made) for t in self.stack]
        return stack, [_build(t, outputs, args, made) for _, t in self.locals]

    def resume_arguments(self, local_values: list, stack: list) -> list:
        """The continuation's arguments: the locals and stack items it does not hold as
        constants, then the call's result (on top of `stack`, the stack after the call)."""
        below = self.stack[:len(stack) - 1]
        return ([x for (_, t), x in zip(self.locals, local_values) if t[0] != "const"]
                + [x for t, x in zip(below, stack) if t[0] not in ("const", "null")] + [stack[-1]])

    def call(self, stack: list):
        """Make the call CPython would make at the break on this stack (as CallOps reads it);
        the stack after it."""
        kw_names = stack.pop() if self.instr.name == "CALL_KW" else self.kw_names
        fn, args, kwargs = pop_call(stack, self.instr.arg, kw_names)
        stack.append(fn(*args, **kwargs))
        return stack


class Breaking:
    """The SymbolicFrame's side of a graph break (a mixin, like the opcode families)."""

    def may_break_here(self) -> bool:
        """Whether a call here that cannot be compiled may be a graph break (tracer.frontend.resume):
        in the traced function's own body, outside branches and loops on traced values."""
        t = self.tracer
        return (t.call_out and len(t.call_stack) == 1 and t.call_stack[0] is self.code and not self.building
                and not self.builder.enclosing and not self.is_generator)

    def call_or_break(self, handler, instr):
        """Run the call's handler; if it cannot be compiled, undo what it emitted and raise
        GraphBreak with the frame's state before it."""
        block = self.builder.block
        emitted, updated = len(block.values), dict(self.tracer.updated_arrays)
        stack, local_values, kw_names, loc = list(self.stack), dict(self.locals), self.kw_names, self.builder.loc
        for name in self.code.co_cellvars:       # the function's own closure variables, as locals
            if name in self.cells:
                local_values[name] = self.cells[name].contents
        try:
            return handler(instr)
        except UnsupportedError as exc:
            if isinstance(exc, (BigIntInput, TraceTooLarge)) or retraced(self.tracer, exc):
                raise
            del block.values[emitted:]
            self.tracer.updated_arrays.clear()
            self.tracer.updated_arrays.update(updated)
            raise GraphBreak(exc, loc, self.pc - 1, stack, local_values, kw_names) from exc


def retraced(tracer, exc: UnsupportedError) -> bool:
    """Whether `exc` is a ListChanged that tracing the call again can avoid (trace_frame does, with
    the lists made where it names held in arrays or grown as lists of run-time length): so the
    callee compiles instead of a break that leaves the rest of the function to CPython."""
    if not isinstance(exc, ListChanged):
        return False
    grown = tracer.grown_sites
    return bool(getattr(exc, "sites", frozenset()) - tracer.held_sites
                or any(grown.get(site, exc) != t for site, t in getattr(exc, "grown", {}).items()))


def break_point(tracer, code, brk: GraphBreak, param_sources: dict) -> tuple[BreakPoint, list]:
    """The BreakPoint of `brk` and the traced values the prefix returns (its outputs)."""
    outputs: list = []
    positions: dict = {}
    building: set = set()           # the instances whose templates are being made (a cycle: refused)

    def output(v) -> tuple:
        if v not in positions:
            positions[v] = len(outputs)
            outputs.append(v)
        return ("out", positions[v])

    def template(x):
        if x is NULL:
            return ("null",)
        if isinstance(x, TracedArray):
            source = param_sources.get(x.param) if x.base is None else None
            if isinstance(source, ArgSource):
                return ("arg", source.index)
            if x.base is None and x.param is None and x.value.op not in VIEW_OPS:
                return output(x.value)          # a new array: the prefix returns it
            raise tracer.error("a graph break with a view of an array live across it is not supported yet")
        if isinstance(x, (ExternalList, ExternalObject)):
            if isinstance(x.source, ArgSource):
                return ("arg", x.source.index)
            if isinstance(x.source, RootSource):
                return ("const", x.obj)
        if is_traced(x):
            if x.type not in (F64, I64, BOOL):
                raise tracer.error(f"a graph break with a live {x.type} value is not supported yet")
            return output(x)
        if isinstance(x, TracedInstance):         # made again: object.__new__ and its attributes
            if x.frozen or id(x) in building:
                raise tracer.error(f"a graph break with a live {x.cls.__name__} object merged from several paths "
                                   f"(or holding itself) is not supported")
            building.add(id(x))
            fields = tuple((name, template(v)) for name, v in x.attrs.items())
            building.discard(id(x))
            return ("instance", id(x), x.cls, fields)
        if isinstance(x, BoundMethod) and isinstance(x.function, types.FunctionType):
            return ("method", x.function, template(x.self_obj))    # obj.method, made again
        if isinstance(x, types.BuiltinMethodType) and type(x.__self__) in (list, tuple):
            return ("builtin method", x.__name__, template(x.__self__))    # xs.extend of the list made again
        if type(x) in (tuple, list):
            return (type(x).__name__, id(x), tuple(template(i) for i in x))
        if isinstance(x, CONSTANT_TYPES) or _numpy_constant(x):
            return ("const", x)
        raise tracer.error(f"a graph break with a live {type(x).__name__} is not supported")

    stack = tuple(template(x) for x in brk.stack)
    local_values = tuple((name, template(x)) for name, x in brk.locals.items() if x is not NULL)
    instr = list(Bytecode.from_code(code))[brk.pc]
    consumed = instr.arg + 2 + (1 if instr.name == "CALL_KW" else 0)
    resumed = resume_code(code, brk.pc, local_values, stack[:len(stack) - consumed])
    numpy_kinds = {F64: "float64", I64: "int64", BOOL: "bool_"}
    numpy_outputs = tuple(numpy_kinds.get(v.type) if made_by_numpy(tracer, v) else None for v in outputs)
    return BreakPoint(brk.reason, brk.loc, stack, local_values, brk.kw_names, instr, resumed, numpy_outputs), outputs


def resume_code(code: types.CodeType, pc: int, local_values: tuple, below: tuple) -> types.CodeType:
    """A copy of `code` that goes on after the instruction at `pc`: its arguments are the locals
    whose template is not a constant, then the stack items `below` the call's that are not
    constants or NULL, then the call's result; its prologue binds the constant locals, pushes
    the stack back and jumps there."""
    original = Bytecode.from_code(code)
    instrs = list(original)
    after = Label()
    body = instrs[:pc + 1] + [after] + instrs[pc + 1:]
    start = next(i for i, x in enumerate(body) if isinstance(x, Instr) and x.name == "RESUME")
    line = body[pc].lineno
    taken = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)

    def fresh(name: str) -> str:        # a continuation's continuation has these names already
        while name in taken:
            name += "_"
        taken.add(name)
        return name
    prologue, params = [], []
    for name, t in local_values:
        if t[0] == "const":
            store = Instr("STORE_DEREF", CellVar(name), lineno=line) if name in code.co_cellvars else \
                Instr("STORE_FAST", name, lineno=line)
            prologue += [Instr("LOAD_CONST", t[1], lineno=line), store]
        else:
            params.append(name)
    for i, t in enumerate(below):
        if t[0] == "null":
            prologue.append(Instr("PUSH_NULL", lineno=line))
        elif t[0] == "const":
            prologue.append(Instr("LOAD_CONST", t[1], lineno=line))
        else:
            params.append(fresh(f"__stack{i}"))
            prologue.append(Instr("LOAD_FAST", params[-1], lineno=line))
    params.append(fresh("__result"))
    prologue += [Instr("LOAD_FAST", params[-1], lineno=line), Instr("JUMP_FORWARD", after, lineno=line)]
    resumed = Bytecode(body[:start + 1] + prologue + body[start + 1:])
    for attr in ("name", "qualname", "filename", "first_lineno", "freevars", "cellvars", "docstring"):
        if hasattr(original, attr):
            setattr(resumed, attr, getattr(original, attr))
    resumed.argnames = params
    resumed.argcount = len(params)
    resumed.posonlyargcount = resumed.kwonlyargcount = 0
    resumed.flags = original.flags & ~(0x04 | 0x08)          # no *args, **kwargs
    return resumed.to_code()


def _build(t, outputs: tuple, args: tuple, made: dict):
    kind = t[0]
    if kind == "null":
        return NULL
    if kind == "out":
        return outputs[t[1]]
    if kind == "arg":
        return args[t[1]]
    if kind == "const":
        return t[1]
    if kind == "method":
        return types.MethodType(t[1], _build(t[2], outputs, args, made))
    if kind == "builtin method":
        return getattr(_build(t[2], outputs, args, made), t[1])
    if kind == "instance":
        if t[1] not in made:
            made[t[1]] = obj = object.__new__(t[2])
            for name, field in t[3]:
                object.__setattr__(obj, name, _build(field, outputs, args, made))
        return made[t[1]]
    if t[1] not in made:                     # one tuple or list, however many names hold it
        items = [_build(i, outputs, args, made) for i in t[2]]
        made[t[1]] = tuple(items) if kind == "tuple" else items
    return made[t[1]]


def _as_numpy(x, kind):
    if kind is None:
        return x
    import numpy
    return getattr(numpy, kind)(x)


def _numpy_constant(x) -> bool:
    module = type(x).__module__
    return module == "numpy" and (callable(x) or isinstance(x, type))
