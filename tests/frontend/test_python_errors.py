"""Errors inside `@trace`, as CPython gives them: runtime errors, unsupported code, data-dependent control
flow, recursion (tracer.frontend.interpreter, tracer.frontend.library, tracer.frontend.branches).

The oracle is CPython: a compiled function raises the same exception type with the same message as
the Python function. What the tracer cannot compile is a `TracerError` (tracer.errors) naming the
user's file:line and quoting the source line.
"""
from __future__ import annotations

import math
from array import array

import numpy as np
import pytest
from like_python import assert_like_python
from like_python import outcome as python_outcome

from tracer import DataDependentControlFlow, TracerError, UnsupportedError, native, trace

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


def line_of(marker: str) -> int:
    """The line number of the line in this file that contains `marker`."""
    with open(__file__) as f:
        lines = [i for i, text in enumerate(f, 1) if f"# {marker}" in text]
    assert len(lines) == 1, f"marker {marker!r} found on lines {lines}"
    return lines[0]


def assert_names_line(exc: TracerError, marker: str):
    """The error names this file and the marked line, and quotes that line."""
    lineno = line_of(marker)
    text = str(exc)
    assert f"{__file__}:{lineno}" in text, text
    with open(__file__) as f:
        source_line = f.readlines()[lineno - 1].strip()
    assert source_line in text, text
    assert exc.loc is not None and exc.loc.lineno == lineno and exc.loc.filename == __file__


# ============================================================================ runtime errors
def div(x, y):
    return x / y


def floordiv(x, y):
    return x // y


def mod(x, y):
    return x % y


def pow_(x, y):
    return x ** y


def sqrt(x):
    return math.sqrt(x)


def log(x):
    return math.log(x)


def log_base(x, b):
    return math.log(x, b)


def acos(x):
    return math.acos(x)


def math_pow(x, y):
    return math.pow(x, y)


def fmod(x, y):
    return math.fmod(x, y)


def exp(x):
    return math.exp(x)


def cosh(x):
    return math.cosh(x)


def to_int(x):
    return int(x)


def floor(x):
    return math.floor(x)


def round_(x):
    return round(x)


def index(xs, i):
    return xs[i]


ERROR_CASES = [
    # (function, arguments that compile, arguments that fail, CPython's exception type)
    (div, (1.0, 2.0), (1.0, 0.0), ZeroDivisionError),
    (div, (1.0, 2.0), (0.0, -0.0), ZeroDivisionError),
    (floordiv, (1.0, 2.0), (1.0, 0.0), ZeroDivisionError),
    (mod, (1.0, 2.0), (1.0, 0.0), ZeroDivisionError),
    (div, (1, 2), (1, 0), ZeroDivisionError),
    (floordiv, (1, 2), (1, 0), ZeroDivisionError),
    (mod, (1, 2), (1, 0), ZeroDivisionError),
    (div, (1, 2.0), (1, 0.0), ZeroDivisionError),
    (pow_, (2.0, 3.0), (0.0, -1.0), ZeroDivisionError),
    (pow_, (2, 3), (0, -1), ZeroDivisionError),
    (pow_, (2.0, 3.0), (10.0, 400.0), OverflowError),
    (sqrt, (4.0,), (-1.0,), ValueError),
    (sqrt, (4,), (-1,), ValueError),
    (log, (1.0,), (0.0,), ValueError),
    (log, (1.0,), (-math.inf,), ValueError),
    (log_base, (8.0, 2.0), (8.0, 1.0), ZeroDivisionError),
    (log_base, (8.0, 2.0), (-8.0, 2.0), ValueError),
    (acos, (0.5,), (2.0,), ValueError),
    (math_pow, (2.0, 3.0), (-1.0, 0.5), ValueError),
    (math_pow, (2.0, 3.0), (0.0, -1.0), ValueError),
    (math_pow, (2.0, 3.0), (10.0, 400.0), OverflowError),
    (fmod, (5.0, 3.0), (math.inf, 1.0), ValueError),
    (fmod, (5.0, 3.0), (1.0, 0.0), ValueError),
    (exp, (1.0,), (1000.0,), OverflowError),
    (cosh, (1.0,), (-1000.0,), OverflowError),
    (to_int, (1.5,), (math.inf,), OverflowError),
    (to_int, (1.5,), (math.nan,), ValueError),
    (floor, (1.5,), (-math.inf,), OverflowError),
    (floor, (1.5,), (math.nan,), ValueError),
    (round_, (1.5,), (math.inf,), OverflowError),
    (round_, (1.5,), (math.nan,), ValueError),
    (index, ([1.0, 2.0], 1), ([1.0, 2.0], 2), IndexError),
    (index, ((1.0, 2.0), 1), ((1.0, 2.0), -3), IndexError),
]


@pytest.mark.parametrize("fuse_fma", [False, True])
@pytest.mark.parametrize("fn, good, bad, exc_type", ERROR_CASES,
                         ids=[f"{c[0].__name__}{c[2]}" for c in ERROR_CASES])
def test_runtime_error_is_cpythons(fn, good, bad, exc_type, fuse_fma):
    compiled = trace(fn, fuse_fma=fuse_fma)
    with pytest.raises(exc_type) as python_error:
        fn(*bad)
    expected_message = str(python_error.value)
    assert expected_message
    # the failing call compiles its own specialization, then again once compiled code exists
    for args in (bad, good, bad, bad):
        if args is good:
            assert_like_python(compiled, *args)
            continue
        with pytest.raises(exc_type) as compiled_error:
            compiled(*args)
        assert type(compiled_error.value) is exc_type
        assert str(compiled_error.value) == expected_message
        assert not native.installed()
    assert compiled.specializations


def test_error_messages_are_this_interpreters():
    """The messages differ between CPython versions (e.g. 'float modulo' on 3.11): compare literally."""
    cases = [(lambda: 1.0 / 0.0, div, (1.0, 0.0)), (lambda: 1.0 % 0.0, mod, (1.0, 0.0)),
             (lambda: 1 // 0, floordiv, (1, 0)), (lambda: math.sqrt(-1.0), sqrt, (-1.0,)),
             (lambda: math.exp(1000.0), exp, (1000.0,))]
    for python_expr, fn, args in cases:
        with pytest.raises(Exception) as expected:
            python_expr()
        compiled = trace(fn, fuse_fma=False)
        compiled(*[1.0 if type(a) is float else 1 for a in args])   # compile with harmless arguments
        with pytest.raises(type(expected.value)) as got:
            compiled(*args)
        assert str(got.value) == str(expected.value)


# ============================================================================ unsupported code
LAST = [0.0]


def uses_global(x):
    global LAST
    LAST = x   # MARK-GLOBAL
    return x


def uses_fstring(x):
    label = f"x is {x}"   # MARK-FSTRING
    return len(label) + x


def uses_try(x):
    y = -1.0
    try:
        for _ in range(int(x)):   # MARK-TRY (a loop inside try/finally: Ctrl-C would skip the finally)
            y = y + 1.0 / x
    finally:
        y = y + 1.0
    return y


def uses_print(x):
    print(x)   # MARK-PRINT
    return x


def _helper_with_import(v):
    import math  # MARK-IMPORT-IN-HELPER
    return math.sqrt(v)


def calls_helper_with_import(x):
    return _helper_with_import(x) + 1.0


@pytest.mark.parametrize("fn, marker", [(uses_global, "MARK-GLOBAL"), (uses_fstring, "MARK-FSTRING"),
                                        (uses_print, "MARK-PRINT"),
                                        (calls_helper_with_import, "MARK-IMPORT-IN-HELPER")],
                         ids=["global", "fstring", "print", "import-in-inlined-helper"])
def test_unsupported_construct_is_a_tracer_error_naming_the_line(fn, marker):
    compiled = trace(fn, fullgraph=True)
    with pytest.raises(TracerError) as error:
        compiled(1.5)
    assert_names_line(error.value, marker)
    assert isinstance(error.value, UnsupportedError)
    assert not native.installed()
    with pytest.raises(TracerError):   # and again: a failed compile leaves nothing half-made
        compiled(2.5)
    assert not native.installed()


def test_a_loop_inside_try_finally_is_a_tracer_error_naming_the_line():
    compiled = trace(uses_try, fullgraph=True)
    with pytest.raises(TracerError) as error:
        compiled(2.0)
    assert_names_line(error.value, "MARK-TRY")


def test_try_finally_never_gives_a_wrong_answer():
    compiled = trace(uses_try, fuse_fma=False)
    for x in (2.0, 0.0):
        outcome = python_outcome(compiled, x)
        assert outcome == python_outcome(uses_try, x) or (outcome[0] == "raise" and issubclass(outcome[1], TracerError))


def check_positive(x):
    if x > 0.0:
        raise ValueError("expected a value <= 0")
    raise ValueError("always")


def after_a_call_that_always_raises(x):
    check_positive(x)
    return x + undefined_name    # noqa: F821 (never reached: the call always raises)


def test_code_after_a_call_that_always_raises_is_never_traced():
    compiled = trace(after_a_call_that_always_raises, fullgraph=True)
    for x in (1.5, -2.0, 3.0):             # (the second call of each kind meets compiled code)
        assert_like_python(compiled, x)
    assert compiled.specializations


def raises_from_none(x):
    if x < 0.0:
        raise ValueError("negative") from None
    return x * 2.0


def raises_from_a_cause(x):
    if x > 1.0:
        raise KeyError("k") from ValueError("inner")
    return x


@pytest.mark.parametrize("fn", [raises_from_none, raises_from_a_cause])
def test_raise_from_keeps_the_cause(fn):
    compiled = trace(fn, fullgraph=True)
    for x in (0.5, -1.0, 2.0, -3.0, 4.0):
        outcomes = []
        for f in (compiled, fn):
            try:
                outcomes.append(("return", f(x)))
            except Exception as exc:     # (the exception, its cause and its context flag are compared)
                outcomes.append((type(exc), str(exc), type(exc.__cause__), exc.__suppress_context__))
        assert outcomes[0] == outcomes[1], (x, outcomes)


# ============================================================================ data-dependent control flow
def branch_on_float(x):
    if x > 0.0:   # MARK-IF-FLOAT
        return x
    return -x


def while_on_float(x):
    while x < 10.0:   # MARK-WHILE-FLOAT
        x = x * 2.0
    return x


def ternary_on_float(x, y):
    return x if x < y else y   # MARK-TERNARY-FLOAT


def and_on_float(x, y):
    return x > 0.0 and y > 0.0   # MARK-AND-FLOAT


def range_of_float_expression(x):
    return sum(range(int(x)))   # MARK-RANGE-FLOAT


@pytest.mark.parametrize("fn, calls", [
    (branch_on_float, [(1.0,), (-2.0,), (0.0,), (-0.0,), (math.nan,)]),
    (while_on_float, [(1.0,), (20.0,), (3.0,), (math.nan,), (10.0,)]),
    (ternary_on_float, [(1.0, 2.0), (2.0, 1.0), (math.nan, 1.0), (-0.0, 0.0)]),
    (and_on_float, [(1.0, 2.0), (-1.0, 2.0), (1.0, -2.0), (math.nan, 1.0)]),
], ids=["if", "while", "ternary", "and"])
def test_branch_on_traced_float_compiles_both_sides(fn, calls):
    compiled = trace(fn, fuse_fma=False)
    for args in calls:
        assert_like_python(compiled, *args)
    assert len(compiled.specializations) == 1


def test_a_range_of_a_float_expression_is_data_dependent_control_flow():
    # sum() of a range needs its numbers at trace time; they depend on a float
    compiled = trace(range_of_float_expression, fullgraph=True)
    with pytest.raises(DataDependentControlFlow) as error:
        compiled(3.5)
    assert "data-dependent control flow is not supported yet" in str(error.value)
    assert isinstance(error.value, TracerError)
    assert_names_line(error.value, "MARK-RANGE-FLOAT")
    assert not native.installed()


# ============================================================================ recursion
def factorial_times(x, n):
    return x if n <= 1 else n * factorial_times(x, n - 1)   # MARK-RECURSION


def test_recursion_is_a_clear_tracer_error():
    compiled = trace(factorial_times, fullgraph=True)
    assert factorial_times(2.0, 4) == 48.0
    with pytest.raises(TracerError) as error:
        compiled(2.0, 4)
    assert "recursive" in str(error.value)
    assert "factorial_times" in str(error.value)
    assert_names_line(error.value, "MARK-RECURSION")
    assert not native.installed()


# ============================================================================ raise with f-strings
class Insufficient(Exception):
    pass


def checked_ratio(a, b):
    if abs(a) < 1e-12:
        raise ZeroDivisionError(f"pivot {a:.3g} is too small (b = {b})")
    return b / a


def newton_sqrt2(x, tol, steps):
    for k in range(steps):
        nx = 0.5 * (x + 2.0 / x)
        if abs(nx - x) < tol:
            return nx, k
        x = nx
    raise ArithmeticError(f"no convergence after {steps} steps (last {x!r})")


def withdraw(balances, i, amount):
    balances[i] -= amount
    if balances[i] < 0:
        raise Insufficient(f"account {i} is short by {-balances[i]}")
    return balances[i]


@pytest.mark.parametrize("fn, calls", [
    (checked_ratio, [(2.0, 3.0), (0.0, 3.0), (1e-13, -1.0)]),
    (newton_sqrt2, [(1.0, 1e-12, 50), (1.0, 1e-12, 3), (1.0, 0.0, 10)]),
    (withdraw, [([10, 20, 30] * 4, 5, 15), ([10, 20, 30] * 4, 1, 25), ([10, 20, 30] * 4, 11, 31)]),
], ids=["ratio", "newton", "withdraw"])
def test_raise_with_an_f_string_compiles_whole(fn, calls):
    """fullgraph=True: the message is made by the Python function, which runs for that call
    (from the start, on the arguments as they were: nothing was written yet)."""
    import copy
    compiled = trace(fn, fullgraph=True)
    for args in calls + calls:
        plain, traced = copy.deepcopy(args), copy.deepcopy(args)
        assert python_outcome(compiled, *traced) == python_outcome(fn, *plain)
        assert traced == plain
    assert not native.installed()


def doubled_until_too_big(xs, limit):
    for i in range(len(xs)):
        if xs[i] > limit:
            raise ValueError(f"item {i} is {xs[i]}")
        xs[i] = xs[i] * 2.0
    return xs[0]


@pytest.mark.parametrize("make", [lambda: [1.0, 2.0, 3.0, 50.0] * 3, lambda: np.array([1.0, 2.0, 3.0, 50.0] * 3),
                                  lambda: array("d", [1.0, 2.0, 3.0, 50.0] * 3)], ids=["list", "ndarray", "array"])
@pytest.mark.parametrize("fullgraph", [False, True])
def test_a_raise_after_writes_leaves_them_written(make, fullgraph):
    """The compiled code holds the writes in a copy until it returns: the raise runs the Python
    function (which makes the writes and the message), in the default mode too."""
    compiled = trace(doubled_until_too_big, fullgraph=fullgraph)
    for limit in (10.0, 100.0, 10.0):
        plain, traced = make(), make()
        assert python_outcome(compiled, traced, limit) == python_outcome(doubled_until_too_big, plain, limit)
        assert list(traced) == list(plain)
    import tracer
    assert tracer.explain(compiled, make(), 10.0).compiled
