"""Calls out of compiled code into CPython: a `print(i)` in a loop keeps the loop compiled.

A call the tracer cannot compile whose result is dropped (a call statement: `CALL` then
`POP_TOP`) to a function that cannot change what the compiled code depends on becomes one
`python_call` op: at run time the compiled code boxes the traced numbers the call needs and calls
a `CallOut`, which rebuilds the call's arguments (constants, those numbers, f-strings made of
them) and makes the call in CPython, once, where CPython would make it. An exception it raises
propagates from there, as CPython's would.

Calls whose result is used are made that way too where the result's type is known in advance
(`value_call`: `round(x, n)`, `time.perf_counter()`, `random.random()`): the compiled code
unboxes it.

Which call statements: builtin functions of modules (`print`, `warnings.warn`, `time.sleep`...), except the
few that reach into frames, globals or objects (`exec`, `setattr`...), and logging calls
(`logging.info(...)`, `log.info(...)` on a logger bound to a global); their arguments are
constants, numbers (traced or not) and f-strings of them. Anything else stays unsupported: the
call then runs as Python (tracer.api).

F-strings (`FORMAT_VALUE`/`BUILD_STRING`; `FORMAT_SIMPLE`, `FORMAT_WITH_SPEC`, `CONVERT_VALUE` on
3.13) of values known at trace time are strings then; with traced numbers in them they are a
`TracedString`, formatted when the call is made.
"""
from __future__ import annotations

import types

from tracer.errors import UnsupportedError
from tracer.frontend.builder import is_traced
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.ir import BOOL, F64, I64

# builtins that read or change frames, namespaces or objects: never called out
NOT_CALLED_OUT = frozenset(("exec", "eval", "compile", "setattr", "delattr", "globals", "locals", "vars",
                            "breakpoint", "__import__", "__build_class__", "open", "input"))
CONSTANT_TYPES = (str, int, float, bool, complex, bytes, type(None), type)
CONVERSIONS = {0: None, 1: str, 2: repr, 3: ascii}


class TracedString:
    """An f-string with traced numbers in it: its pieces, each a str or (value, conversion, spec).
    It can only be passed to a call made in CPython: any other use (len, +, ==, str...) is an
    UnsupportedError, never a TypeError compiled as the user's."""

    def __init__(self, tracer, parts: tuple):
        self.tracer, self.parts = tracer, parts
        self.loc = tracer.loc            # where it is made: what an error about it names

    def __repr__(self):
        return f"<f-string of {sum(1 for p in self.parts if not isinstance(p, str))} traced value(s)>"


def _refuse(self, *args):
    raise UnsupportedError("an f-string of traced numbers can only be passed to print() (or a call like it) yet",
                           self.loc)


for _name in ("__len__", "__iter__", "__getitem__", "__contains__", "__add__", "__radd__", "__mul__", "__rmul__",
              "__mod__", "__rmod__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__hash__",
              "__bool__", "__str__", "__format__", "__int__", "__float__", "__index__", "__getattr__"):
    setattr(TracedString, _name, _refuse)


def format_value(tracer, value, conversion: int, spec):
    """f"{value!conversion:spec}": a str, or a TracedString where value is traced."""
    if isinstance(spec, TracedString):
        raise tracer.error("an f-string format spec that depends on a traced value is not supported")
    if not is_traced(value):
        if isinstance(value, TracedString) and not conversion:
            if not spec:
                return value
            if len(value.parts) == 1 and not isinstance(value.parts[0], str) and not value.parts[0][2]:
                traced, converted, _ = value.parts[0]        # 3.13: CONVERT_VALUE, then the spec
                return TracedString(tracer, ((traced, converted, spec),))
        if not isinstance(value, CONSTANT_TYPES):
            raise tracer.error(f"an f-string of a {type(value).__name__} is not supported")
        convert = CONVERSIONS[conversion]
        return format(convert(value) if convert else value, spec or "")
    if value.type not in (F64, I64, BOOL):
        raise tracer.error(f"an f-string of a {value.type} value is not supported")
    return TracedString(tracer, ((value, conversion, spec or ""),))


def build_string(tracer, pieces: list):
    """"".join(pieces) for BUILD_STRING: a str, or a TracedString if a piece is one."""
    if not any(isinstance(p, TracedString) for p in pieces):
        if not all(isinstance(p, str) for p in pieces):
            raise tracer.error("joining these values into a string is not supported")
        return "".join(pieces)
    parts: list = []
    for p in pieces:
        parts.extend(p.parts if isinstance(p, TracedString) else (p,))
    return TracedString(tracer, tuple(parts))


def may_call_out(fn) -> bool:
    """Whether a dropped call of `fn` may run in CPython from compiled code."""
    if not isinstance(fn, types.BuiltinFunctionType):
        return False
    owner = fn.__self__
    return (owner is None or isinstance(owner, types.ModuleType)) and fn.__name__ not in NOT_CALLED_OUT


LOGGING_CALLS = frozenset(("debug", "info", "warning", "warn", "error", "exception", "critical", "log"))


def logs(fn) -> bool:
    """Whether fn is a logging call: `logging.info` and friends, or a method such as `info` of
    a logger bound to a global (guarded, so the same logger on every call)."""
    from tracer.frontend.objects import BoundMethod, ExternalObject
    from tracer.frontend.sources import RootSource
    if isinstance(fn, BoundMethod):
        owner = fn.self_obj
        if not (isinstance(owner, ExternalObject) and isinstance(owner.source, RootSource)):
            return False
        fn = fn.function
    return (isinstance(fn, types.FunctionType) and fn.__module__ == "logging"
            and fn.__name__ in LOGGING_CALLS)


def logging_callee(fn):
    """What a logging call calls in CPython: the function, or the logger's bound method."""
    if isinstance(fn, types.FunctionType):
        return fn
    return getattr(fn.self_obj.obj, fn.function.__name__)


def value_call(fn, args: list, kwargs: dict):
    """(result type, harmless) of a call compiled code may make in CPython and use the result of:
    builtins whose result type follows from their arguments' (round(x, n), the clocks,
    random.random()); None for any other. Harmless: making it again changes nothing observable."""
    import random
    import time
    if kwargs:
        return None
    if fn is round and len(args) == 2 and is_traced(args[0]) and args[0].type in (F64, I64):
        ndigits = args[1]
        if type(ndigits) is int or (is_traced(ndigits) and ndigits.type == I64):
            return args[0].type, True
    if not args and fn in (time.time, time.perf_counter, time.monotonic, time.process_time):
        return F64, True
    if not args and fn in (time.time_ns, time.perf_counter_ns, time.monotonic_ns, time.process_time_ns):
        return I64, True
    if not args and fn == random.random:        # (a bound method: equal, not identical, each time)
        return F64, False
    return None


class DeferredException:
    """`cls(*args)` with traced numbers or f-strings of them among `args`: made, and raised, by
    CPython when compiled code gets to the `raise` (`raise_now`)."""

    def __init__(self, cls: type, args: list):
        self.cls, self.args = cls, args

    def raise_now(self, tracer) -> BaseException:
        """Emit the call that raises it; what the trace raises from here (compiled code never
        gets past the call). Where compiled code makes no calls into CPython (fullgraph=True, a
        try statement whose handler of the user's may catch it) or holds the function's writes
        in copies (lists held in arrays, arrays written in place), the raise makes the call run
        the Python function instead, which raises it (every failure does so then:
        ir.Function.python_on_failure)."""
        uncaught = tracer.call_out_outside_try and not tracer.builder.caught_by_python(None)
        if not (tracer.call_out or uncaught) or tracer.written_gathers or tracer.updated_arrays:
            # (compiled code holding writes in copies it writes back only when it returns: a
            # raise made by CPython from compiled code would leave them unwritten)
            tracer.catches = tracer.catches or tracer.loc
            return self.cls.__new__(self.cls, MessageMadeAtRunTime())
        # harmless: it never returns, so no failure after it can make Python run the function again
        call_out(tracer, _raise_new, [self.cls, *self.args], {}, harmless=True, label=f"raise {self.cls.__name__}(...)")
        return RuntimeError(f"{self.cls.__name__} was raised by CPython")


class RaisedAfterHeldWrites(UnsupportedError):
    """A raise made by CPython from compiled code that may come after writes the compiled code
    holds in copies (lists held in arrays, arrays written in place): traced again without calls
    into CPython, the raise runs the Python function instead (tracer.api)."""


class MessageMadeAtRunTime(str):
    """The argument of an exception whose message only the Python function makes (not a str:
    codegen.raises.native_exception leaves such an exception to the Python function)."""


def _raise_new(cls, *args):
    raise cls(*args)


def is_raise(v) -> bool:
    """Whether IR value `v` is a `python_call` that raises an exception CPython makes (raise_now)."""
    return v.op == "python_call" and getattr(v.attrs["callee"], "fn", None) is _raise_new


def exception_of(fn, args: list, kwargs: dict):
    """A DeferredException for `fn(*args)`, an exception class called with traced numbers or
    f-strings of them (constants too); None for anything else."""
    if not (isinstance(fn, type) and issubclass(fn, BaseException)) or kwargs:
        return None
    if not all(isinstance(a, (TracedString, *CONSTANT_TYPES)) or is_traced(a) and a.type in (F64, I64, BOOL)
               for a in args):
        return None
    return DeferredException(fn, list(args))


def call_out(tracer, fn, args: list, kwargs: dict, result=None, harmless: bool = False, label: str | None = None):
    """Emit the `python_call` of fn(*args, **kwargs): a call statement (None), or with `result` (a
    number type) a call whose result compiled code uses (that traced number). UnsupportedError
    where an argument is not a constant, a number or an f-string of them."""
    values: list = []
    numpy_kinds = {F64: "float64", I64: "int64", BOOL: "bool_"}

    def template(x):
        if isinstance(x, TracedString):
            return ("string", tuple(p if isinstance(p, str) else (slot(p[0]), p[1], p[2]) for p in x.parts))
        if is_traced(x):
            return ("value", slot(x))
        if isinstance(x, CONSTANT_TYPES) or (type(x) is tuple and all(type(i) in CONSTANT_TYPES for i in x)):
            return ("const", x)
        raise tracer.error(f"calling {fn.__name__}() with a {type(x).__name__} argument from compiled code "
                           f"is not supported")

    def slot(v):
        if v.type not in numpy_kinds:
            raise tracer.error(f"calling {fn.__name__}() with a {v.type} value from compiled code is not supported")
        values.append(v)
        return len(values) - 1, numpy_kinds[v.type] if made_by_numpy(tracer, v) else None

    callee = CallOut(fn, tuple(template(a) for a in args), {k: template(a) for k, a in kwargs.items()}, label)
    if result is None:
        tracer.builder.emit("python_call", tuple(values), callee=callee, **({"harmless": True} if harmless else {}))
        return None
    return tracer.builder.emit("python_call", tuple(values), callee=callee, result=result, harmless=harmless)


class CallOut:
    """What a `python_call` op calls with the boxed numbers: `fn` with the call's own arguments."""

    def __init__(self, fn, args: tuple, kwargs: dict, label: str | None = None):
        self.fn, self.args, self.kwargs, self.label = fn, args, kwargs, label

    def __call__(self, *values):
        fill = _Filler(values)
        return self.fn(*(fill(t) for t in self.args), **{k: fill(t) for k, t in self.kwargs.items()})

    def __repr__(self):
        return self.label or f"{getattr(self.fn, '__qualname__', self.fn)}(...)"


class _Filler:
    def __init__(self, values: tuple):
        self.values = values

    def __call__(self, t):
        kind, what = t
        if kind == "const":
            return what
        if kind == "value":
            return self.value(what)
        return "".join(p if isinstance(p, str) else self.formatted(*p) for p in what)

    def value(self, slot):
        index, numpy_kind = slot
        x = self.values[index]
        if numpy_kind is not None:       # NumPy made it: np.float64, np.int64, np.bool_ as in CPython
            import numpy
            x = getattr(numpy, numpy_kind)(x)
        return x

    def formatted(self, slot, conversion: int, spec: str) -> str:
        x = self.value(slot)
        convert = CONVERSIONS[conversion]
        return format(convert(x) if convert else x, spec)
