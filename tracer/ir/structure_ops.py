"""The structural ops: tuples, control flow (if, loop, raise, map; their regions are checked by
`tracer.ir.verify` and run by `tracer.ir.ops.run`), and the tapes autodiff saves a loop's
iterations on.
"""
from __future__ import annotations

from tracer.errors import OpFailure, Status
from tracer.ir.registry import define
from tracer.ir.types import BOOL, F64, I64, TapeType, TupleType, Type

define("tuple", "a tuple of its operands", lambda t, a: TupleType(tuple(t)), lambda *xs: tuple(xs))
define("getitem", "element attrs['index'] of a tuple (a constant index)",
        lambda t, a: t[0].elements[a["index"]], lambda t, index: t[index], attrs=("index",))


# control flow: the verifier checks these ops' regions and types (ir.REGION_CHECKS); `run`
# below gives their meaning
define("if", "run the then region if the condition holds, else the else region; their yields",
        None, None)
define("loop", "run the body on the carried values while it yields continue; the last carried values",
        None, None)
define("raise", "raise attrs['exception'] (a `raise` statement, or an error only one path meets)",
        None, None, [Status.RAISE], attrs=("exception",))
define("map", "new arrays: its region applied to every element of its array operands (one shape; its "
        "parameters are their elements), as one loop; one array per scalar the region yields (a tuple of "
        "them for several). With attrs['into'] = k, its first k operands are arrays it writes instead (the "
        "caller's out= buffers). Made by loop fusion (tracer.transforms.passes.fuse) and by tracer.vectorize",
        None, None, [Status.FALLBACK, Status.NO_MEMORY])
define("block_param", "a region parameter (a loop's carried value)", lambda t, a: None, None, attrs=("index",))


# the tape: what a loop's forward pass saves, one record per iteration, for its backward (made by
# autodiff). A tape is used linearly (each push consumes the tape it extends), so the compiled
# push grows one buffer in place; the evaluators use a Python list the same way.
def _tape_push_type(t, a):
    if not t or not isinstance(t[0], TapeType) or tuple(t[1:]) != t[0].elements:
        raise TypeError("tape_push takes a tape and one value per field of its records")
    return t[0]


def _tape_get_type(t, a):
    if len(t) != 2 or not isinstance(t[0], TapeType) or t[1] != I64:
        raise TypeError("tape_get takes a tape and an i64 index")
    return TupleType(t[0].elements)


def _on_tape(result: Type):
    def rule(t, a):
        if len(t) != 1 or not isinstance(t[0], TapeType):
            raise TypeError("takes one tape")
        return result
    return rule


def _tape_push(tape, *record):
    tape.append(record)
    return tape


define("tape_new", "an empty tape of records of attrs['fields'] (types)",
        lambda t, a: TapeType(tuple(a["fields"])), lambda fields: [], attrs=("fields",), effect=True)
define("tape_push", "the tape with one more record (the operands after the tape)", _tape_push_type,
        _tape_push, [Status.NO_MEMORY], effect=True)
define("tape_get", "record i of a tape (0 is the first pushed), as a tuple", _tape_get_type,
        lambda tape, i: tape[i])
define("tape_len", "the number of records on a tape",
        _on_tape(I64), len)
define("tape_free", "release a tape's memory (nothing reads it after)",
        _on_tape(TupleType(())), lambda tape: tape.clear() or (), effect=True)


# a call into CPython from compiled code (tracer.frontend.callouts): attrs['callee'] is called with
# the operands, boxed as Python numbers. A call statement's result is dropped (type ()); with
# attrs['result'] a number type, the call's result is that number (anything else: FALLBACK). An
# exception it raises propagates (PYTHON_ERROR: the exception is set, nothing runs again).
# attrs['harmless']: making the call again is unobservable (round, a clock), so Python may run the
# function again from the start after it.
NOTHING = TupleType(())


def _python_call_type(t, a):
    if any(x not in (F64, I64, BOOL) for x in t):
        raise TypeError("python_call takes f64, i64 and bool operands")
    result = a.get("result", NOTHING)
    if result not in (F64, I64, BOOL, NOTHING):
        raise TypeError("python_call gives an f64, an i64, a bool or nothing")
    return result


def _python_call(*args, callee, result=NOTHING, harmless=False):
    value = callee(*args)
    if result == NOTHING:
        return ()
    if type(value) is not {F64: float, I64: int, BOOL: bool}[result]:
        raise OpFailure(Status.FALLBACK)
    return value


define("python_call", "call attrs['callee'] in CPython with the operands as Python numbers (a print; or, with "
        "attrs['result'], round(x, n), a clock...)", _python_call_type, _python_call,
        [Status.PYTHON_ERROR, Status.FALLBACK], attrs=("callee",), effect=True)
