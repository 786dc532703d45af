"""`with` statements, `finally`, and raise statements caught at trace time
(tracer.frontend.opcodes.exceptions), against CPython.

Each program is called twice per argument tuple through `@trace` and compared with CPython: the
result (with the counts of enters and exits its context managers kept) or the exception. A raise that the traced path meets is caught by its
handler at trace time, so the compiled code answers such calls without failing (checked with
the IR interpreter). A loop inside a try body whose handler would catch an interrupt cannot
compile (Ctrl-C would skip the handler): it runs as Python and says why.
"""
from __future__ import annotations

import copy
import inspect

import pytest

import tracer
from tracer.errors import OpFailure
from tracer.ir.ops import run


class Counting:
    """A context manager that counts, and swallows the exception types it is given."""

    def __init__(self, swallow=()):
        self.entered = 0
        self.exited = 0
        self.swallow = swallow
        self.seen = []

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self.exited += 1
        if exc_type is not None:
            self.seen.append(exc_type.__name__)
        return exc_type is not None and issubclass(exc_type, self.swallow)

    def __eq__(self, other):
        return type(other) is Counting and vars(self) == vars(other)


class Scaled:
    """`with Scaled(k) as s:` gives `s`, whose factor is k while the block runs."""

    def __init__(self, k):
        self.k = k
        self.active = False

    def __enter__(self):
        self.active = True
        return self.k

    def __exit__(self, *exc):
        self.active = False


def reciprocals(values):
    guard = Counting(swallow=ZeroDivisionError)
    out = []
    for v in values:
        with guard:
            out.append(1.0 / v)
            continue
        out.append(-1.0)
    return out, guard.entered, guard.exited, len(guard.seen)


def nested_managers(x):
    log = Counting()
    with Scaled(2.0) as a, Scaled(3.0) as b:
        y = x * a + b
    with log:
        z = y * y
    return y, z, log.entered, log.exited


def early_return(x):
    log = Counting()
    with log:
        if x > 0.0:
            return x * 2.0, log.exited
        y = -x
    return y + 1.0, log.exited


def not_swallowed(x, swallow):
    log = Counting(swallow)
    with log:
        raise ValueError("bad input")
    return x, log.seen


def parse_mode(name):
    if name == "linear":
        return 1
    if name == "quadratic":
        return 2
    raise ValueError(f"unknown mode {name!r}")


def apply_mode(x, name="cubic"):
    try:
        mode = parse_mode(name)
    except ValueError as e:
        mode = len(str(e)) % 3
    else:
        mode += 10
    finally:
        x = x + 0.5
    return x ** mode


def reraised(x):
    try:
        try:
            raise KeyError("inner")
        except KeyError:
            x = x + 1.0
            raise
    except LookupError as e:
        return x, type(e).__name__, e.args


def chained(x):
    try:
        try:
            raise ZeroDivisionError("first")
        except ZeroDivisionError as e:
            raise ValueError("second") from e
    except ValueError as e:
        return x * 3.0, type(e.__cause__).__name__, str(e)


def counted_division(a, b):
    log = Counting()
    try:
        return a / b, log.exited
    finally:
        log.exited += 1


def catch_everything(x):
    try:
        y = 1.0 / x
    except BaseException:
        y = 0.0
    return y


def short_loop_inside(x):
    log = Counting()
    with log:
        total = 0.0
        for k in range(4):              # a constant range: it unrolls, nothing polls
            total += x ** k
    return total, log.exited


def retries(x):
    attempts = 0
    for scale in (1e300, 1e10, 1.0):
        try:
            if scale > 1e100:
                raise OverflowError("too large")
            attempts += 1
            y = x * scale
            break
        except OverflowError:
            continue
    return y, attempts


PROGRAMS = [
    (reciprocals, [([4.0, 2.5, -1.0],), ([4.0, 0.0, 2.5, 0.0],)]),
    (nested_managers, [(1.5,), (-2.0,)]),
    (early_return, [(2.0,), (-3.0,)]),
    (not_swallowed, [(1.0, ()), (1.0, ValueError), (1.0, (KeyError, ValueError))]),
    (apply_mode, [(1.5,), (2.0, "linear"), (0.0, "quadratic")]),
    (reraised, [(1.0,)]),
    (chained, [(2.0,)]),
    (counted_division, [(3.0, 4.0), (3.0, 0.0)]),
    (catch_everything, [(4.0,), (0.0,)]),
    (short_loop_inside, [(2.0,)]),
    (retries, [(2.0,), (3.5,)]),
]


def finally_overrides_return(x):
    try:
        return x + 1.0
    finally:
        return x * 2.0  # noqa: B012 (what is tested)


def finally_in_a_loop(xs):
    out = []
    n = 0
    for x in xs:
        try:
            if x < 0:
                continue
            out.append(x * 0.5)
        finally:
            n += 1
    return out, n


def break_inside_with(xs):
    guard = Counting()
    total = 0.0
    for x in xs:
        with guard:
            if x > 5:
                break
            total += x
    return total, guard.exited


def through_a_middle_frame(x):
    def inner(v):
        if v > 1.0:
            raise KeyError("big")
        return v

    def middle(v):
        try:
            return inner(v) + 1.0
        except IndexError:
            return -1.0
    try:
        return middle(x)
    except KeyError as e:
        return 100.0 + len(e.args)


def raised_while_handling(x):
    try:
        try:
            raise ValueError("a")
        except ValueError:
            raise TypeError("b")  # noqa: B904 (the implicit context is what is tested)
    except TypeError as e:
        return str(e), x, type(e.__context__).__name__, e.__suppress_context__


def messages_of_caught_errors(xs):
    notes = []
    for i, x in enumerate(xs):
        try:
            if x == 0.0:
                raise ZeroDivisionError("zero at %d" % i)  # noqa: UP031 (%-formatting is what is tested)
            notes.append(1.0 / x)
        except ZeroDivisionError as e:
            notes.append(str(e))
    return notes


PROGRAMS += [
    (finally_overrides_return, [(1.0,)]),
    (finally_in_a_loop, [([1.0, -1.0, 4.0] * 8,), ([],)]),
    (break_inside_with, [([1.0, 2.0, 7.0, 3.0],), ([1.0] * 30,), ([9.0] * 20,)]),
    (through_a_middle_frame, [(0.5,), (3.0,)]),
    (raised_while_handling, [(1.0,)]),
    (messages_of_caught_errors, [([1.0, 0.0, 2.0],), ([1.0, 2.0] * 10,)]),
]


def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as exc:      # (the oracle's exception is compared)
        return None, exc


@pytest.mark.parametrize("fn, calls", PROGRAMS, ids=[fn.__name__ for fn, _ in PROGRAMS])
def test_with_and_finally_answer_as_cpython(fn, calls):
    traced = tracer.trace(fn)
    for args in calls + calls:             # each twice: the second call meets compiled code
        plain, compiled = copy.deepcopy(args), copy.deepcopy(args)
        expected, expected_exc = outcome(fn, plain)
        got, got_exc = outcome(traced, compiled)
        assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc))
        assert type(got) is type(expected) and got == expected, (got, expected)
        assert compiled == plain
    explanation = tracer.explain(fn, *copy.deepcopy(calls[0]))
    assert explanation.compiled, str(explanation)


@pytest.mark.parametrize("fn, args", [(apply_mode, (1.5,)), (reraised, (1.0,)), (chained, (2.0,)),
                                      (retries, (2.0,)), (reciprocals, ([4.0, 2.5],))])
def test_a_raise_met_at_trace_time_is_caught_by_compiled_code(fn, args):
    traced = tracer.trace(fn, fullgraph=True)
    assert traced(*args) == fn(*args)
    (spec,) = traced.specializations
    bound = inspect.signature(fn).bind(*args)
    bound.apply_defaults()
    leaves = []
    for value in bound.arguments.values():
        leaves += value if isinstance(value, list) else [value]
    numbers = [x for x in leaves if isinstance(x, float)]
    try:
        value = run(spec.optimized, numbers[:len(spec.optimized.params)])
    except OpFailure as exc:
        raise AssertionError(f"the compiled call fails ({exc}): its result came from Python") from None
    assert value is not None


def loop_inside(x, n):
    log = Counting()
    with log:
        total = 0.0
        for k in range(n):
            total += x ** k
    return total, log.exited


def test_a_loop_inside_a_with_runs_as_python_and_says_why():
    assert tracer.trace(loop_inside)(2.0, 5) == loop_inside(2.0, 5)
    explanation = str(tracer.explain(loop_inside, 2.0, 5))
    assert "runs as Python" in explanation and "would catch an interrupt" in explanation, explanation
    with pytest.raises(tracer.UnsupportedError, match="Ctrl-C"):
        tracer.trace(loop_inside, fullgraph=True)(2.0, 5)


def skip_negatives(xs):
    total = 0.0
    for x in xs:                         # (a long list: a compiled loop)
        try:
            if x < 0.0:
                raise ValueError("negative")
            total += x
        except ValueError:
            total -= 1.0
    return total


def stop_at_negative(xs):
    total = 0.0
    try:
        for x in xs:
            if x < 0.0:
                raise ValueError("negative")
            total += x
    except ValueError:
        total = -total
    return total


@pytest.mark.parametrize("fn", [skip_negatives, stop_at_negative])
def test_a_raise_on_a_data_dependent_path_is_handled_by_compiled_code(fn):
    traced = tracer.trace(fn, fullgraph=True)
    for xs in ([1.0, -2.0, 3.0] * 10, [1.0, 2.0] * 20, [-1.0] * 20, []):
        assert traced(xs) == fn(xs)
    (spec, *_) = traced.specializations
    assert not [v for v in spec.optimized.walk() if v.op == "raise"]      # no failure: the handler is compiled
