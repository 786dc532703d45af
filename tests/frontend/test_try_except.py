"""try/except/finally in traced code (tracer.frontend.opcodes.exceptions), against CPython.

The compiled code is the try body's own path; an exception there ends the compiled call and the
Python function runs again from the start, where CPython's handler catches it. So every call
must give CPython's result and leave its arguments as CPython leaves them, and a call that raises
nothing must be answered by the compiled code alone (the IR interpreter on the optimized function
gives the same result without failing). What cannot be compiled that way (a call into CPython;
a loop inside a try body whose handler would catch an interrupt) runs as Python, and `explain`
says why. `with`, and raises caught at trace time: tests/frontend/test_with_statements.py.
"""
from __future__ import annotations

import copy
import inspect
import math

import numpy as np
import pytest

import tracer
from tracer.errors import OpFailure
from tracer.ir.ops import run


def log_sum(xs):
    total = 0.0
    for v in xs:
        try:
            total += math.log(v)
        except ValueError:
            continue
    return total


def newton_root(x0, steps):
    x = x0
    for _ in range(steps):
        try:
            x = x - (x * x * x - 2.0) / (3.0 * x * x)
        except ZeroDivisionError:
            break
    return x


def _ratio(a, b):
    try:
        r = a / b
    except (ZeroDivisionError, OverflowError) as err:
        r = float(len(str(err)))
    else:
        r = r * 2.0
    return r


def ratios(a, b):
    return _ratio(a, b) + _ratio(b, a)


def weighted(x, weights):
    try:
        w = weights["scale"]
    except KeyError:
        w = 1.0
    return x * w


def next_or_first(xs, i):
    try:
        nxt = xs[i + 1]
    except IndexError:
        nxt = xs[0]
    return nxt - xs[i]


def checked_sqrt(x):
    try:
        if x < 0.0:
            raise ValueError("negative input")
        y = math.sqrt(x)
    except ValueError:
        y = -1.0
    return y


def clauses(x, k):
    try:
        y = math.log(x) / k
    except ZeroDivisionError:
        y = 1.0
    except ValueError:
        y = 2.0
    return y


def roots_in_place(xs):
    for i in range(len(xs)):
        try:
            xs[i] = math.sqrt(xs[i])
        except ValueError:
            xs[i] = -1.0
    return 0


def solve_or_zero(a, b):
    try:
        return np.linalg.solve(a, b)
    except np.linalg.LinAlgError:
        return np.zeros_like(b)


def nested(x, y):
    try:
        try:
            z = x / y
        except ZeroDivisionError:
            z = math.sqrt(x)
    except ValueError:
        z = -2.0
    return z


def empty_finally(x):
    try:
        y = 1.0 / x
    finally:
        pass                               # (nothing to run: an exception goes on as it is)
    return y


def with_finally(x):
    try:
        y = 1.0 / x
    finally:
        z = 3.0
    return y + z


def bare_except(x):
    try:
        y = 1.0 / x
    except:                                # noqa: E722 (what is tested)
        y = 2.0
    return y


def catches_interrupts(x):
    try:
        y = 1.0 / x
    except (KeyboardInterrupt, ZeroDivisionError):
        y = 2.0
    return y


SINGULAR = np.array([[1.0, 2.0], [2.0, 4.0]])
REGULAR = np.array([[3.0, 1.0], [1.0, 2.0]])
VECTOR = np.array([9.0, 8.0])

# each program: argument tuples, the first of which raises nothing in the try bodies
COMPILED = [
    (log_sum, [([1.0, 2.0, 3.0],), ([1.0, -2.0, 3.0],), ([0.0, 5.0, 4.0],)]),
    (newton_root, [(1.0, 20), (0.0, 5), (-1.5, 30)]),
    (ratios, [(3.0, 4.0), (0.0, 2.0), (1e308, 1e-308)]),
    (weighted, [(2.0, {"scale": 3.0}), (2.0, {"shift": 3.0})]),
    (next_or_first, [([1.0, 4.0, 9.0], 1), ([1.0, 4.0, 9.0], 2), ([1.0, 4.0, 9.0], -1)]),
    (checked_sqrt, [(4.0,), (-4.0,), (0.0,)]),
    (clauses, [(2.0, 3.0), (2.0, 0.0), (-2.0, 3.0), (0.0, 1.0)]),
    (roots_in_place, [([4.0, 9.0, 16.0],), ([4.0, 9.0, -1.0, 16.0],)]),
    (solve_or_zero, [(REGULAR, VECTOR), (SINGULAR, VECTOR)]),
    (nested, [(4.0, 2.0), (4.0, 0.0), (-4.0, 0.0)]),
    (empty_finally, [(4.0,), (0.0,)]),
    (with_finally, [(2.0,), (0.0,)]),
    (bare_except, [(2.0,), (0.0,)]),
    (catches_interrupts, [(2.0,), (0.0,)]),
]


def outcome(fn, args):
    try:
        return fn(*args), None
    except Exception as exc:      # (the oracle's exception is compared)
        return None, exc


def same(got, expected):
    if isinstance(expected, np.ndarray):
        assert isinstance(got, np.ndarray) and got.dtype == expected.dtype
        np.testing.assert_array_equal(got, expected)
    else:
        assert type(got) is type(expected) and got == expected, (got, expected)


@pytest.mark.parametrize("fn, calls", COMPILED, ids=[fn.__name__ for fn, _ in COMPILED])
def test_try_except_compiles_and_answers_as_cpython(fn, calls):
    traced = tracer.trace(fn)
    for args in calls + calls:             # each twice: the second call meets compiled code
        plain, compiled = copy.deepcopy(args), copy.deepcopy(args)
        expected, expected_exc = outcome(fn, plain)
        got, got_exc = outcome(traced, compiled)
        assert (type(got_exc), str(got_exc)) == (type(expected_exc), str(expected_exc))
        same(got, expected)
        for a, e in zip(compiled, plain):    # arguments left as CPython leaves them
            assert a == e if not isinstance(a, np.ndarray) else np.array_equal(a, e)
    explanation = tracer.explain(fn, *copy.deepcopy(calls[0]))
    assert explanation.compiled, str(explanation)


@pytest.mark.parametrize("fn, args", [(checked_sqrt, (4.0,)), (clauses, (2.0, 3.0)), (ratios, (3.0, 4.0)),
                                      (newton_root, (1.0, 20)), (nested, (4.0, 2.0))])
def test_a_call_that_raises_nothing_is_answered_by_compiled_code(fn, args):
    traced = tracer.trace(fn, fullgraph=True)
    assert traced(*args) == fn(*args)
    (spec,) = traced.specializations
    by_name = dict(zip(inspect.signature(fn).parameters, args))
    try:
        value = run(spec.optimized, [by_name[p.name] for p in spec.optimized.params])
    except OpFailure as exc:
        raise AssertionError(f"the compiled call fails ({exc}): its result came from Python") from None
    assert value == fn(*args)


def prints_then_catches(x):
    print("dividing", x)
    try:
        y = 1.0 / x
    except ZeroDivisionError:
        y = 2.0
    return y


def sums_then_cleans_up(x, n):
    total = 0.0
    try:
        for i in range(n):               # (n known only at run time: a loop Ctrl-C could stop)
            total += x / (i + 1)
    finally:
        total = -total
    return total


@pytest.mark.parametrize("fn, args, reason", [
    (prints_then_catches, (2.0,), "a call into CPython in a function with try/except"),
    (sums_then_cleans_up, (2.0, 10),
     "a loop or an array operation inside a try body whose handler would catch an interrupt"),
])
def test_what_cannot_compile_runs_as_python_and_says_why(fn, args, reason, capsys):
    traced = tracer.trace(fn)
    for x in (2.0, 0.0):
        call = (x, *args[1:])
        (got, got_exc), (expected, expected_exc) = outcome(traced, call), outcome(fn, call)
        assert got == expected and type(got_exc) is type(expected_exc)
    explanation = str(tracer.explain(fn, *args))
    assert "runs as Python" in explanation and reason in explanation, explanation
    with pytest.raises(tracer.UnsupportedError, match="try"):
        tracer.trace(fn, fullgraph=True)(*args)
