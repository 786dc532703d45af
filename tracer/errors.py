"""Errors shared by the front end and the back end.

`Status` is the small integer a compiled function returns: 0 for success, or which Python
exception to raise. The exception type and message for each status are not typed in by hand:
they are read off the running interpreter by evaluating a tiny Python expression that fails the
same way (messages differ between CPython versions, e.g. ``float modulo`` vs ``float modulo by
zero``), so compiled code always raises exactly what CPython raises.
"""
from __future__ import annotations

import enum
import linecache
import math
from dataclasses import dataclass, field


class Status(enum.IntEnum):
    OK = 0
    FALLBACK = 1                      # the exact result needs Python (int past 64 bits, complex)
    FLOAT_DIVISION_BY_ZERO = 2        # 1.0 / 0.0
    FLOAT_FLOOR_DIVISION_BY_ZERO = 3  # 1.0 // 0.0
    FLOAT_MODULO_BY_ZERO = 4          # 1.0 % 0.0
    INT_DIVISION_BY_ZERO = 5          # 1 / 0
    INT_FLOOR_DIVISION_BY_ZERO = 6    # 1 // 0
    INT_MODULO_BY_ZERO = 7            # 1 % 0
    ZERO_TO_NEGATIVE_POWER = 8        # 0.0 ** -1.0
    POW_OVERFLOW = 9                  # 10.0 ** 400.0
    MATH_DOMAIN = 10                  # math.sqrt(-1.0)
    MATH_RANGE = 11                   # math.exp(1000.0)
    FLOAT_INFINITY_TO_INT = 12        # int(inf)
    FLOAT_NAN_TO_INT = 13             # int(nan)
    RAISE = 14                        # a `raise` in traced code (its site's code is RAISE_BASE + i)
    NO_MEMORY = 15                    # malloc failed (a gradient's tape of loop iterations)
    SHAPE_MISMATCH = 16               # run-time array sizes NumPy rejects (its ValueError or IndexError:
                                      # the Python function raises it; exports report it as a shape error)
    PYTHON_ERROR = 17                 # a Python exception is already set (a signal handler raised it while
                                      # a loop ran: KeyboardInterrupt on Ctrl-C); no re-run of the function
    CALLED_OUT_FALLBACK = 18          # FALLBACK after the kernel called into Python (a print): the
                                      # function cannot run again from the start, so an OverflowError


RAISE_BASE = 64     # status RAISE_BASE + i: the i-th `raise` op of the function (walk order)


_PROBES = {
    Status.FLOAT_DIVISION_BY_ZERO: lambda z: 1.0 / z,
    Status.FLOAT_FLOOR_DIVISION_BY_ZERO: lambda z: 1.0 // z,
    Status.FLOAT_MODULO_BY_ZERO: lambda z: 1.0 % z,
    Status.INT_DIVISION_BY_ZERO: lambda z: 1 / int(z),
    Status.INT_FLOOR_DIVISION_BY_ZERO: lambda z: 1 // int(z),
    Status.INT_MODULO_BY_ZERO: lambda z: 1 % int(z),
    Status.ZERO_TO_NEGATIVE_POWER: lambda z: z ** -1.0,
    Status.POW_OVERFLOW: lambda z: 10.0 ** (400.0 + z),
    Status.MATH_DOMAIN: lambda z: math.sqrt(z - 1.0),
    Status.MATH_RANGE: lambda z: math.exp(1000.0 + z),
    Status.FLOAT_INFINITY_TO_INT: lambda z: int(math.inf + z),
    Status.FLOAT_NAN_TO_INT: lambda z: int(math.nan + z),
    Status.NO_MEMORY: lambda z: _raise(MemoryError()),
    Status.CALLED_OUT_FALLBACK: lambda z: _raise(OverflowError(
        "an int grew past 64 bits in compiled code after it called into Python (print...), so Python cannot "
        "compute the exact result from the start: run this function without @trace for such ints")),
}


def _raise(exc: BaseException):
    raise exc


def _probe(status: Status) -> tuple[type[BaseException], str]:
    try:
        _PROBES[status](0.0)
    except Exception as exc:  # the probe exists to fail
        return type(exc), str(exc)
    raise AssertionError(f"probe for {status.name} did not fail")


# status -> (exception class, message), as this interpreter raises them
STATUS_EXCEPTIONS: dict[Status, tuple[type[BaseException], str]] = {s: _probe(s) for s in _PROBES}


def exception_for(status: int) -> BaseException:
    """The exception CPython would raise for a failing status."""
    exc_type, message = STATUS_EXCEPTIONS[Status(status)]
    return exc_type(message)


class OpFailure(Exception):
    """Raised by an op's Python evaluator where the compiled op returns a failing status."""

    def __init__(self, status: Status):
        super().__init__(status.name)
        self.status = status


@dataclass(frozen=True)
class SourceLoc:
    """Where in the user's code an IR value (or an error) comes from: a line, the name of its
    function, and for the line of an inlined call's callee, the caller's line it was reached
    from (so that a compiled error's traceback reads as CPython's: caller, then callee)."""
    filename: str
    lineno: int
    function: str = field(default="", compare=False)
    caller: SourceLoc | None = field(default=None, compare=False, repr=False)

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}"

    @property
    def source_line(self) -> str:
        return linecache.getline(self.filename, self.lineno).strip()


class TracerError(Exception):
    """Something the tracer cannot compile. Names the user's file and line and quotes it."""

    def __init__(self, message: str, loc: SourceLoc | None = None):
        self.message = message
        self.loc = loc
        text = message
        if loc is not None:
            text = f"{loc}: {message}"
            if loc.source_line:
                text += f"\n    {loc.source_line}"
        super().__init__(text)


class UnsupportedError(TracerError):
    """A Python construct the tracer does not handle (yet)."""


class InternalError(TracerError):
    """A bug in the tracer itself (not an exception the user's code raises)."""


def is_internal(exc: BaseException) -> bool:
    """Whether an exception met while tracing is the tracer's own bug rather than what the
    user's code raises (which is compiled as a `raise`): a KeyError, AssertionError or
    AttributeError that a line of the tracer or codegen raised without a `raise` statement (a
    failed lookup, not the user's `assert` or a missing attribute the tracer reports)."""
    import os
    import traceback
    if not isinstance(exc, (KeyError, AssertionError, AttributeError)):
        return False
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return False
    last = frames[-1]
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ours = any(last.filename.startswith(os.path.join(package, name) + os.sep) for name in ("tracer", "codegen"))
    on_purpose = (last.line or "").lstrip().startswith("raise ")
    return ours and not on_purpose


class BigIntInput(UnsupportedError):
    """An input int past 64 bits: the call runs the original Python function, which is exact."""


class BigIntConstant(BigIntInput):
    """An int past 64 bits computed at trace time meets compiled code: where it is met, the
    compiled function runs the Python function instead (every call that gets there)."""


class DataDependentControlFlow(UnsupportedError):
    """A branch or loop condition that depends on a traced (runtime) value."""


class NeedsConcreteValue(UnsupportedError):
    """A value computed in a traced branch or loop was needed at trace time (an index, a range)."""


# the bytecode instructions traced code refuses, as users know them
UNSUPPORTED_NAMES = {
    "BUILD_MAP": "a dict display", "BUILD_SET": "a set display", "FORMAT_VALUE": "an f-string",
    "BUILD_STRING": "an f-string", "STORE_ATTR": "assigning an attribute", "STORE_GLOBAL": "assigning a global",
    "IMPORT_NAME": "an import", "SETUP_WITH": "a with statement", "BEFORE_WITH": "a with statement",
    "PUSH_EXC_INFO": "try/except", "CHECK_EXC_MATCH": "try/except",
    "BUILD_CONST_KEY_MAP": "a dict display",
    "DICT_MERGE": "**kwargs in a call", "GET_AWAITABLE": "await",
}


def unsupported_instruction(name: str) -> str:
    what = UNSUPPORTED_NAMES.get(name)
    return f"{what} ({name}) is not supported" if what else f"the bytecode instruction {name} is not supported"
