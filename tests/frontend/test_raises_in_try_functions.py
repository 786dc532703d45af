"""Exceptions in functions with a try statement, raised by compiled code itself where no handler
of the user's catches them (tracer.frontend.opcodes.exceptions, codegen.raises), against CPython.

A `raise` (or an op that fails) outside every try body is what CPython raises out of the call: the
entry raises it, with its exact type, message, context, cause and traceback lines, instead of
running the Python function again. A lookup or value error met at trace time inside a try body
whose except clause names its class is caught there, as a raise statement's is. What a handler
may still catch at run time, or whose message only Python makes, still runs the Python function.
"""
from __future__ import annotations

import traceback

import pytest

import tracer
from tracer.dump import capture_trace
from tracer.errors import NeedsConcreteValue


def underflow(x, n):
    stack = [x]
    for _ in range(n):
        try:
            b = stack.pop()
            a = stack.pop()
        except IndexError:
            raise RuntimeError(f"stack underflow after {len(stack)}") from None
        stack.append(a + b)
    return stack[0]


def divides(a, b, mode):
    try:
        kind = {"floor": 1, "mod": 2}[mode]
    except KeyError:
        kind = 0
    if kind == 0:
        raise ValueError(f"unknown mode {mode!r}")
    return a // b if kind == 1 else a % b


def deferred_outside(x, limit):
    total = 0.0
    for v in (x, 2.0 * x):
        try:
            total += v
        except KeyError:
            total = -1.0
    if total > limit:
        raise OverflowError(f"total {total} over {limit}")
    return total


def message_in_handler(x):
    try:
        if x <= 0:
            raise ValueError(f"bad {x}")
        r = float(x)
    except ValueError as e:
        r = float(len(str(e)))
    return r


def keyed(x, key):
    table = {"a": 1.0, "b": 2.0}
    try:
        scale = table[key]
    except KeyError as e:
        raise LookupError("no scale") from e
    return x * scale


def fails_in_handler(a, b, key):
    try:
        x = {"a": 1.0}[key]
    except KeyError:
        return a / b            # a failure in the handler: CPython chains the KeyError
    return x


def run_machine(code):
    stack = []
    pc = 0
    try:
        pass
    except IndexError:
        pass
    while pc < len(code):
        op, arg = code[pc]
        pc += 1
        if op == "push":
            stack.append(arg)
        elif op == "jz":
            if stack.pop() == 0:
                pc = arg
    return len(stack), pc


def machine(code):
    n, pc = run_machine(code)
    return n, pc


def describe(exc: BaseException) -> tuple:
    """What a user can see of an exception: type, args, cause, context (two deep) and lines."""
    context = exc.__context__
    inner = context.__context__ if context is not None else None
    lines = [(f.name, f.lineno, f.line) for f in traceback.extract_tb(exc.__traceback__)][1:]
    return (type(exc), exc.args, repr(exc.__cause__), exc.__suppress_context__,
            type(context), getattr(context, "args", None), type(inner), getattr(inner, "args", None), lines)


def outcome(fn, args, handling: bool):
    try:
        if handling:               # called from an except clause: CPython chains what it handles
            try:
                raise KeyError("outer")
            except KeyError:
                return fn(*args), None
        return fn(*args), None
    except Exception as exc:       # (compared with CPython's)
        return None, describe(exc)


CASES = [
    (underflow, [(1.0, 0), (1.0, 1), (2.0, 3)]),
    (divides, [(7, 2, "floor"), (7, 0, "floor"), (7, 0, "mod"), (7, 3, "pow")]),
    (deferred_outside, [(1.0, 10.0), (1.0, 2.5)]),
    (message_in_handler, [(3, ), (-5, ), (0, )]),
    (keyed, [(2.0, "a"), (2.0, "z")]),
    (fails_in_handler, [(1.0, 2.0, "z"), (1.0, 0.0, "z"), (1.0, 0.0, "a")]),
]


@pytest.mark.parametrize("fn, calls", CASES, ids=[fn.__name__ for fn, _ in CASES])
@pytest.mark.parametrize("handling", [False, True], ids=["plain", "in_handler"])
def test_raises_answer_as_cpython(fn, calls, handling):
    traced = tracer.trace(fn)
    for args in calls + calls:         # each twice: the second call meets compiled code
        assert outcome(traced, args, handling) == outcome(fn, args, handling), (fn.__name__, args)


def raise_ops(fn, args):
    return [v for v in capture_trace(fn, args).function.walk() if v.op == "raise"]


def test_raise_outside_try_is_raised_by_compiled_code():
    trace = capture_trace(divides, (7, 3, "pow"))
    ops = [v for v in trace.function.walk() if v.op == "raise"]
    assert [type(v.attrs["exception"]) for v in ops] == [ValueError]
    assert ops[0].attrs.get("uncaught") and not trace.function.python_on_failure


def test_lookup_error_caught_at_trace_time():
    # the IndexError of the pop is caught where it is met: the raise compiled is the handler's
    ops = raise_ops(underflow, (1.0, 1))
    assert [type(v.attrs["exception"]) for v in ops] == [RuntimeError]
    exc = ops[0].attrs["exception"]
    assert exc.__suppress_context__ and type(exc.__context__) is IndexError and ops[0].attrs.get("uncaught")


def test_failure_a_handler_may_catch_runs_python():
    # a raise whose message only Python makes, under a branch known at run time, inside a try
    # body: never caught at trace time (the handler reads its message)
    trace = capture_trace(message_in_handler, (-5,))
    assert trace.function.python_on_failure
    assert not any(v.attrs.get("uncaught") for v in trace.function.walk() if v.op == "raise")


def test_run_time_message_outside_try_is_called_out():
    text = str(tracer.explain(deferred_outside, 1.0, 2.5))
    assert "calls into CPython (1)" in text and "raise OverflowError(...)" in text


def test_repeated_raises_keep_their_lines():
    traced = tracer.trace(divides)
    for _ in range(3):
        with pytest.raises(ValueError) as info:
            traced(7, 3, "pow")
        frames = traceback.extract_tb(info.value.__traceback__)
        assert (frames[-1].name, frames[-1].line) == ("divides", 'raise ValueError(f"unknown mode {mode!r}")')
        traceback.clear_frames(info.value.__traceback__)     # (as unittest does: the next raise is whole)


def test_loop_rolled_back_restores_lists():
    # the pop of the iteration rolled back to build the loop is undone: the loop never traces
    # a pop from the empty list (which would raise IndexError where CPython does not)
    code = [("push", 1), ("jz", 3), ("push", 5)]
    try:
        ops = raise_ops(machine, (code,))
    except NeedsConcreteValue:       # (the loop's `code[pc]`: a graph break under @trace)
        ops = []
    assert not any(isinstance(v.attrs["exception"], IndexError) for v in ops)
    traced = tracer.trace(machine)
    for args in ([("push", 1), ("jz", 3), ("push", 5)], [("push", 0), ("jz", 3), ("push", 5)]):
        assert traced(list(args)) == machine(list(args)) == traced(list(args))
