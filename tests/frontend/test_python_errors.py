"""Targeted semantics tests for `@trace`: errors, guards, specializations, argument binding.

The oracle is CPython: a compiled function returns what the Python function returns or raises
the same exception type with the same message. What the tracer cannot compile is a
`TracerError` naming the user's file:line and quoting the source line.
"""
from __future__ import annotations

import math
import struct
import warnings

import pytest

import tracer
from tracer import DataDependentControlFlow, TracerError, UnsupportedError, trace
from tracer import native

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


def line_of(marker: str) -> int:
    """The line number of the line in this file that contains `marker`."""
    with open(__file__) as f:
        lines = [i for i, text in enumerate(f, 1) if f"# {marker}" in text]
    assert len(lines) == 1, f"marker {marker!r} found on lines {lines}"
    return lines[0]


def python_outcome(fn, *args, **kwargs):
    try:
        return ("return", fn(*args, **kwargs))
    except Exception as exc:
        return ("raise", type(exc), str(exc))


def bits(x):
    if type(x) is float:
        return ("float", "nan" if math.isnan(x) else struct.pack("<d", x))
    if type(x) is tuple:
        return tuple(bits(v) for v in x)
    return (type(x), x)


def assert_like_python(compiled, *args, **kwargs):
    """`compiled(*args, **kwargs)` returns/raises exactly what the Python function does."""
    expected = python_outcome(compiled.py_func, *args, **kwargs)
    got = python_outcome(compiled, *args, **kwargs)
    if expected[0] == "return":
        assert got[0] == "return" and bits(got[1]) == bits(expected[1]), (args, kwargs, got, expected)
    else:
        assert got == expected, (args, kwargs, got, expected)
    assert not native.installed()
    return got


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
def uses_dict(x):
    d = {"x": x, "y": 2.0}   # MARK-DICT
    return d["x"]


def uses_fstring(x):
    label = f"x is {x}"   # MARK-FSTRING
    return len(label) + x


def uses_try(x):
    try:   # MARK-TRY
        y = 1.0 / x
    except ZeroDivisionError:
        y = -1.0
    return y


def uses_print(x):
    print(x)   # MARK-PRINT
    return x


def _helper_with_set(v):
    return len({v, 1.0}) * v   # MARK-SET-IN-HELPER


def calls_helper_with_set(x):
    return _helper_with_set(x) + 1.0


@pytest.mark.parametrize("fn, marker", [(uses_dict, "MARK-DICT"), (uses_fstring, "MARK-FSTRING"),
                                        (uses_print, "MARK-PRINT"),
                                        (calls_helper_with_set, "MARK-SET-IN-HELPER")],
                         ids=["dict", "fstring", "print", "set-in-inlined-helper"])
def test_unsupported_construct_is_a_tracer_error_naming_the_line(fn, marker):
    compiled = trace(fn)
    with pytest.raises(TracerError) as error:
        compiled(1.5)
    assert_names_line(error.value, marker)
    assert isinstance(error.value, UnsupportedError)
    assert not native.installed()
    with pytest.raises(TracerError):   # and again: a failed compile leaves nothing half-made
        compiled(2.5)
    assert not native.installed()


def test_try_statement_is_a_tracer_error_naming_the_line():
    compiled = trace(uses_try)
    with pytest.raises(TracerError) as error:
        compiled(2.0)
    assert_names_line(error.value, "MARK-TRY")


def test_try_statement_never_gives_a_wrong_answer():
    compiled = trace(uses_try, fuse_fma=False)
    for x in (2.0, 0.0):
        outcome = python_outcome(compiled, x)
        assert outcome == ("return", uses_try(x)) or (outcome[0] == "raise" and issubclass(outcome[1], TracerError))


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
    compiled = trace(range_of_float_expression)
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
    compiled = trace(factorial_times)
    assert factorial_times(2.0, 4) == 48.0
    with pytest.raises(TracerError) as error:
        compiled(2.0, 4)
    assert "recursive" in str(error.value)
    assert "factorial_times" in str(error.value)
    assert_names_line(error.value, "MARK-RECURSION")
    assert not native.installed()


# ============================================================================ argument binding
def two_args(x, y):
    return x - y


def with_defaults(x, y=2.0, *, z=0.5, w=3):
    return x * y + z * w


@pytest.mark.parametrize("call", [
    lambda f: f(1.0),
    lambda f: f(1.0, 2.0, 3.0),
    lambda f: f(),
    lambda f: f(1.0, z=2.0),
    lambda f: f(1.0, x=2.0),
    lambda f: f(1.0, 2.0, y=3.0),
    lambda f: f(y=1.0),
], ids=["too-few", "too-many", "none", "unexpected-keyword", "multiple-values", "duplicate-y", "missing-x"])
@pytest.mark.parametrize("compiled_first", [False, True], ids=["fresh", "after-compiling"])
def test_wrong_arguments_raise_pythons_type_error(call, compiled_first):
    compiled = trace(two_args)
    if compiled_first:
        assert compiled(3.0, 1.0) == 2.0
    with pytest.raises(TypeError) as expected:
        call(two_args)
    with pytest.raises(TypeError) as got:
        call(compiled)
    assert type(got.value) is TypeError
    assert str(got.value) == str(expected.value)
    assert not native.installed()


def test_wrong_arguments_to_keyword_only_parameters():
    compiled = trace(with_defaults)
    compiled(1.0)
    for call in (lambda f: f(1.0, 2.0, 3.0), lambda f: f(1.0, q=1.0), lambda f: f(1.0, z=1.0, z2=2.0)):
        with pytest.raises(TypeError) as expected:
            call(with_defaults)
        with pytest.raises(TypeError) as got:
            call(compiled)
        assert str(got.value) == str(expected.value)


KEYWORD_CALLS = [((1.5,), {}), ((1.5, 3.0), {}), ((), {"x": 1.5}), ((), {"y": -1.0, "x": 4.0}),
                 ((1.5,), {"z": 2.0}), ((1.5,), {"w": 7}), ((1.5, 0.25), {"w": -2, "z": 0.125}),
                 ((1.5,), {"w": 2.5}), ((2,), {"y": 3, "z": 1, "w": 4}), ((True,), {"y": False})]


def test_keyword_arguments_and_defaults():
    compiled = trace(with_defaults, fuse_fma=False)
    for _ in range(3):
        for args, kwargs in KEYWORD_CALLS:
            assert_like_python(compiled, *args, **kwargs)
    assert compiled.specializations


def positional_defaults(x, y=2.0, z=0.5):
    return x * y + z


def test_calls_with_defaults_reuse_their_specialization():
    compiled = trace(positional_defaults, fuse_fma=False)
    calls = [((1.5,), {}), ((1.5, 3.0), {}), ((1.5, 3.0, 1.0), {}), ((), {"x": 1.5}), ((1.5,), {"z": 2.0}),
             ((), {"z": 1.0, "y": 2.0, "x": 3.0})]
    for args, kwargs in calls:
        assert_like_python(compiled, *args, **kwargs)
    assert len(compiled.specializations) == 1      # every call binds to (float, float, float)
    for args, kwargs in calls * 2:
        assert_like_python(compiled, *args, **kwargs)
    assert len(compiled.specializations) == 1


def test_calls_with_keyword_only_defaults_reuse_their_specialization():
    compiled = trace(with_defaults, fuse_fma=False)
    assert compiled(1.5) == 4.5
    assert compiled(1.5, 3.0) == 6.0
    assert compiled(1.5, 3.0) == 6.0
    assert len(compiled.specializations) == 1      # (float, float, float, int) each time


def test_decorator_forms():
    @trace
    def plain(x, y):
        return x * y + 1.0

    @trace(fuse_fma=False)
    def unfused(x, y):
        return x * y + 1.0

    assert plain(2.0, 3.0) == 7.0 and unfused(2.0, 3.0) == 7.0
    assert plain.py_func(2.0, 3.0) == 7.0 and unfused.py_func.__name__ == "unfused"
    assert unfused.fuse_fma is False and plain.fuse_fma is True
    assert len(plain.specializations) == 1 and len(unfused.specializations) == 1
    x, y = 0.1, 10.0 / 3.0
    assert unfused(x, y) == x * y + 1.0
    assert abs(plain(x, y) - (x * y + 1.0)) <= 1e-15


def test_changed_defaults_are_seen():
    def scaled(x, factor=2.0):
        return x * factor
    compiled = trace(scaled)
    assert compiled(1.0) == 2.0
    scaled.__defaults__ = (5.0,)
    assert compiled(1.0) == scaled(1.0) == 5.0


# ============================================================================ argument types
def add_one(x):
    return x + 1.0


def twice(x):
    return x * 2.0


def product(x, y):
    return x * y


def negate(x):
    return -x


def absolute(x):
    return abs(x)


def root(x):
    return math.sqrt(x)


def less(x):
    return x < 1.0


def assert_type_error_like_python_or_naming_the_argument(compiled, fn, args, name, bad):
    """A TypeError: CPython's own for this call, or the tracer's, naming the argument and its type."""
    with pytest.raises(TypeError) as error:
        compiled(*args)
    assert type(error.value) is TypeError
    try:
        fn(*args)
        python_message = None
    except TypeError as exc:
        python_message = str(exc)
    message = str(error.value)
    assert message == python_message or (f"argument '{name}'" in message and type(bad).__name__ in message), message
    assert not native.installed()


@pytest.mark.parametrize("fn, args, name", [
    (add_one, ("ab",), "x"), (twice, ("ab",), "x"), (product, (2.0, "ab"), "y"), (product, ("ab", 2.5), "x"),
    (negate, ("ab",), "x"), (absolute, ("ab",), "x"), (root, ("ab",), "x"), (less, ("ab",), "x"),
], ids=["add", "mul-constant", "mul-traced-float", "mul-traced-float-2", "neg", "abs", "sqrt", "compare"])
def test_str_argument_raises_type_error(fn, args, name):
    compiled = trace(fn)
    compiled(*[1.5 if type(a) is str else a for a in args])   # a float specialization exists
    assert_type_error_like_python_or_naming_the_argument(compiled, fn, args, name, "ab")
    fresh = trace(fn)                                          # and before anything was compiled
    assert_type_error_like_python_or_naming_the_argument(fresh, fn, args, name, "ab")


@pytest.mark.parametrize("bad", [1 + 2j, {"a": 1.0}, {1.0}, None, b"ab"], ids=["complex", "dict", "set", "None", "bytes"])
def test_unsupported_argument_type_raises_type_error(bad):
    compiled = trace(add_one)
    assert compiled(1.0) == 2.0
    assert_type_error_like_python_or_naming_the_argument(compiled, add_one, (bad,), "x", bad)


LABEL = "ab"


def repeat_global_str(x):
    return LABEL * x


def repeat_tuple(x):
    return (1.0, 2.0) * x


def abs_of_global_str(x):
    return abs(LABEL) + x


@pytest.mark.parametrize("fn", [repeat_global_str, repeat_tuple, abs_of_global_str])
def test_type_errors_from_non_numbers_are_pythons(fn):
    """A sequence times a traced float, or abs() of a str, is CPython's TypeError (whatever the value)."""
    compiled = trace(fn)
    with pytest.raises(TypeError) as expected:
        fn(2.0)
    with pytest.raises(TypeError) as got:
        compiled(2.0)
    assert type(got.value) is TypeError and str(got.value) == str(expected.value)
    assert not native.installed()


def test_new_argument_types_compile_new_specializations():
    compiled = trace(add_one)
    results = [compiled(1.5), compiled(2), compiled(True), compiled(2.5), compiled(7), compiled(False)]
    assert results == [2.5, 3.0, 2.0, 3.5, 8.0, 1.0]
    assert [type(r) for r in results] == [float] * 6
    assert len(compiled.specializations) == 3

    def mixed(a, b):
        return a * b
    compiled = trace(mixed)
    assert compiled(2, 3) == 6 and type(compiled(2, 3)) is int
    assert compiled(2, 3.0) == 6.0 and type(compiled(2, 3.0)) is float
    assert compiled(True, True) == 1 and type(compiled(True, True)) is int
    assert len(compiled.specializations) == 3


def test_list_length_change_compiles_a_new_specialization():
    def total(xs):
        return sum(xs)
    compiled = trace(total, fuse_fma=False)
    assert compiled([1.0, 2.0]) == 3.0
    assert compiled([1.0, 2.0, 4.0]) == 7.0
    assert compiled([0.5, 0.25]) == 0.75
    assert len(compiled.specializations) == 2
    assert compiled([1, 2]) == 3 and type(compiled([1, 2])) is int


def test_an_int_range_bound_compiles_to_a_loop_without_recompiling():
    def powers(x, n):
        acc = 1.0
        for _ in range(n):
            acc *= x
        return acc
    compiled = trace(powers, fuse_fma=False)
    assert [compiled(1.5, n) for n in range(-1, 5)] == [powers(1.5, n) for n in range(-1, 5)]
    assert len(compiled.specializations) == 1
    assert compiled(2.0, 3) == 8.0
    assert any(v.op == "loop" for v in compiled.specializations[0].optimized.walk())


def test_too_many_specializations_warn_and_stay_correct():
    def powers(x, n):
        return sum(x ** i for i in range(n))
    compiled = trace(powers, max_specializations=3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = [compiled(1.5, n) for n in range(6)]
    assert results == [powers(1.5, n) for n in range(6)]
    assert len(compiled.specializations) == 3
    assert any(issubclass(w.category, RuntimeWarning) for w in caught)


# ============================================================================ big ints
def mul(x, y):
    return x * y


def int_ops(a, b):
    return a + b, a - b, a * b, -a, abs(a), a // b, a % b, a ** 2


def back_in_range(x, y):
    return (x * y) // y - x + 1


@pytest.mark.parametrize("fn, small, big", [
    (mul, (3, 4), (2 ** 40, 2 ** 40)),
    (mul, (3, 4), (I64_MIN, -1)),
    (mul, (3, 4), (I64_MAX, I64_MAX)),
    (int_ops, (5, 3), (I64_MAX, 1)),
    (int_ops, (5, 3), (I64_MIN, -1)),
    (int_ops, (5, 3), (I64_MIN, I64_MIN)),
    (back_in_range, (5, 3), (2 ** 40, 2 ** 40)),
    (mul, (3, 4), (2 ** 70, 3)),            # an argument past 64 bits
    (int_ops, (5, 3), (-2 ** 64, 2 ** 65)),
], ids=["2**40*2**40", "min*-1", "max*max", "max+1", "min-neg", "min-min", "back-in-range", "big-arg", "big-args"])
def test_int_overflow_gives_the_exact_python_result(fn, small, big):
    compiled = trace(fn)
    assert_like_python(compiled, *small)
    got = assert_like_python(compiled, *big)
    assert got[0] == "return"
    assert_like_python(compiled, *small)    # the compiled path still works afterwards


def test_int_past_64_bits_inside_a_list_argument_gives_the_python_result():
    def total(ns):
        return sum(ns)
    compiled = trace(total)
    assert compiled([1, 2, 3]) == 6
    assert_like_python(compiled, [1, 2, 2 ** 64])


def test_int_times_int_past_64_bits():
    compiled = trace(mul)
    assert compiled(3, 4) == 12
    result = compiled(2 ** 40, 2 ** 40)
    assert result == 2 ** 80 and type(result) is int


def test_int_float_comparison_is_exact():
    """Python compares ints and floats exactly, not by converting the int to a float."""
    def compare(n, x):
        return n < x, n <= x, n == x, n != x, n > x, n >= x, x < n, x == n
    compiled = trace(compare)
    for n, x in [(2 ** 53 + 1, 2.0 ** 53), (I64_MAX, 2.0 ** 63), (I64_MIN, -2.0 ** 63), (I64_MIN + 1, -2.0 ** 63),
                 (-2 ** 53 - 1, -2.0 ** 53), (3, 3.0), (3, 2.5), (3, math.nan), (1, math.inf), (0, -0.0),
                 (2 ** 60 + 1, float(2 ** 60)), (-(2 ** 62) - 1, -float(2 ** 62))]:
        assert_like_python(compiled, n, x)


# ============================================================================ no stale constants
SCALE = 2.0
OFFSETS = [1.0, 2.0]
BIAS_T = (0.5, 1)


def uses_global(x):
    return SCALE * x


def uses_global_list(x):
    return OFFSETS[0] * x + OFFSETS[-1]


def uses_global_tuple(x):
    a, b = BIAS_T
    return a * x + b


def _global_helper(v):
    return v + 1.0


def uses_global_function(x):
    return _global_helper(x) * 2.0


def test_changing_a_global_number_changes_the_result():
    global SCALE
    compiled = trace(uses_global)
    old = SCALE
    try:
        assert compiled(3.0) == 6.0
        SCALE = 5.0
        assert compiled(3.0) == 15.0
        SCALE = 4            # an int now: 4 * 3.0
        assert compiled(3.0) == 12.0 and type(compiled(3.0)) is float
        SCALE = 2.0
        assert compiled(3.0) == 6.0
    finally:
        SCALE = old
    assert not native.installed()


def test_changing_a_global_list_or_tuple_changes_the_result():
    global OFFSETS, BIAS_T
    compiled_list = trace(uses_global_list)
    compiled_tuple = trace(uses_global_tuple)
    old_list, old_tuple = OFFSETS, BIAS_T
    try:
        assert compiled_list(3.0) == 5.0
        OFFSETS[0] = -1.0                # mutated in place
        assert compiled_list(3.0) == -1.0
        OFFSETS.append(10.0)             # a new length
        assert compiled_list(3.0) == 7.0
        OFFSETS = [0.0, 0.5]             # rebound
        assert compiled_list(3.0) == 0.5
        assert compiled_tuple(2.0) == 2.0
        BIAS_T = (2.0, -1)
        assert compiled_tuple(2.0) == 3.0
    finally:
        OFFSETS, BIAS_T = old_list, old_tuple


def test_rebinding_a_global_function_is_seen():
    global _global_helper
    compiled = trace(uses_global_function)
    old = _global_helper
    try:
        assert compiled(1.0) == 4.0
        _global_helper = lambda v: v * 10.0   # noqa: E731
        assert compiled(1.0) == 20.0
    finally:
        _global_helper = old
    assert compiled(1.0) == 4.0


def test_changing_a_closure_variable_changes_the_result():
    gain = 2.0

    def scaled(x):
        return gain * x
    compiled = trace(scaled)
    assert compiled(3.0) == 6.0
    gain = -1.0
    assert compiled(3.0) == -3.0


def test_mutating_a_list_argument_is_seen():
    def weighted(ws, x):
        return ws[0] * x + ws[1]
    compiled = trace(weighted, fuse_fma=False)
    ws = [2.0, 1.0]
    assert compiled(ws, 3.0) == 7.0
    ws[0] = -2.0
    assert compiled(ws, 3.0) == -5.0
    ws[1] = 4                       # an int now: a new specialization, still right
    assert compiled(ws, 3.0) == -2.0
    ws[1] = 0.5
    assert compiled(ws, 3.0) == -5.5


class Neuron:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, xs):
        return max(0.0, sum(wi * xi for wi, xi in zip(self.w, xs)) + self.b)


class Gain:
    factor = 2.0

    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x * self.factor


def test_mutating_an_objects_weights_is_seen():
    def forward(neuron, x0, x1):
        return neuron([x0, x1])
    compiled = trace(forward, fuse_fma=False)
    n = Neuron([1.0, 2.0], 0.5)
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 3.5
    n.w[0] = -4.0
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 0.0
    n.b = 10.0
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 8.0
    n.w = [0.5, 0.5]                # a new list object
    assert compiled(n, 1.0, 3.0) == forward(n, 1.0, 3.0) == 12.0
    other = Neuron([1.0, 1.0], -100.0)
    assert compiled(other, 1.0, 3.0) == 0.0
    assert len(compiled.specializations) == 1


STEPS = 3
USE_ABS = False


def uses_global_control(x):
    y = abs(x) if USE_ABS else x
    for _ in range(STEPS):
        y = y * 0.5 + 1.0
    return y


def test_changing_globals_that_decide_control_flow_is_seen():
    global STEPS, USE_ABS
    compiled = trace(uses_global_control, fuse_fma=False)
    try:
        for steps, use_abs in [(3, False), (5, False), (5, True), (0, True), (3, False)]:
            STEPS, USE_ABS = steps, use_abs
            assert_like_python(compiled, -3.0)
            assert_like_python(compiled, 2.5)
    finally:
        STEPS, USE_ABS = 3, False


class Iterations:
    def __init__(self, steps, damped, rate):
        self.steps = steps
        self.damped = damped
        self.rate = rate

    def run(self, x):
        for _ in range(self.steps):
            x = x - self.rate * x
        return x * 0.5 if self.damped else x


def test_changing_attributes_that_decide_control_flow_is_seen():
    def run(it, x):
        return it.run(x)
    compiled = trace(run, fuse_fma=False)
    it = Iterations(2, False, 0.25)
    assert_like_python(compiled, it, 4.0)
    it.steps = 4
    assert_like_python(compiled, it, 4.0)
    it.damped = True
    assert_like_python(compiled, it, 4.0)
    it.rate = 0.5
    assert_like_python(compiled, it, 4.0)
    n = len(compiled.specializations)
    assert_like_python(compiled, Iterations(4, True, 0.125), 4.0)   # same structure and decisions
    assert len(compiled.specializations) == n


def test_changing_a_closure_int_that_decides_a_loop_is_seen():
    n = 2

    def repeat(x):
        for _ in range(n):
            x = x * 3.0
        return x
    compiled = trace(repeat)
    assert compiled(1.0) == 9.0
    n = 3
    assert compiled(1.0) == 27.0


def test_list_of_ints_used_as_indices():
    def gather(xs, idx):
        return xs[idx[0]] - xs[idx[1]]
    compiled = trace(gather, fuse_fma=False)
    xs = [1.0, 2.0, 4.0]
    assert_like_python(compiled, xs, [0, 2])
    assert_like_python(compiled, xs, [2, 1])
    assert_like_python(compiled, xs, [1, 5])     # IndexError, like Python


@pytest.mark.parametrize("value", ["float-subclass", "int-enum"])
def test_number_subclass_argument_gives_the_python_result_or_names_its_type(value):
    import enum

    class MyFloat(float):
        pass

    class Level(enum.IntEnum):
        HIGH = 3

    arg = MyFloat(1.5) if value == "float-subclass" else Level.HIGH
    compiled = trace(twice)
    assert compiled(1.5) == 3.0
    try:
        got = ("return", compiled(arg))
    except TypeError as exc:
        got = ("raise", TypeError, str(exc))
    assert got == ("return", twice(arg)) or (got[0] == "raise" and type(arg).__name__ in got[2]), got


def test_changing_a_class_attribute_is_seen():
    def run(g, x):
        return g.apply(x)
    compiled = trace(run)
    g = Gain(1.5)
    assert compiled(g, 2.0) == 6.0
    try:
        Gain.factor = 3.0
        assert compiled(g, 2.0) == run(g, 2.0) == 9.0
    finally:
        Gain.factor = 2.0


def test_redefining_a_method_is_seen():
    class Model:
        def __init__(self, w):
            self.w = w

        def apply(self, x):
            return self.w * x

    def run(m, x):
        return m.apply(x)
    compiled = trace(run)
    m = Model(2.0)
    assert compiled(m, 3.0) == 6.0
    Model.apply = lambda self, x: self.w - x
    assert compiled(m, 3.0) == run(m, 3.0) == -1.0


# ============================================================================ the PEP 523 hook
def test_hook_is_not_left_installed():
    assert not native.installed()
    compiled = trace(div)
    compiled(1.0, 2.0)                         # compile
    assert not native.installed()
    compiled(3.0, 4.0)                         # native
    assert not native.installed()
    with pytest.raises(ZeroDivisionError):
        compiled(1.0, 0.0)
    assert not native.installed()
    with pytest.raises(TypeError):
        compiled(1.0)
    assert not native.installed()
    compiled(2 ** 70, 3)                       # big ints run the Python function
    assert not native.installed()
    with pytest.raises(TracerError):
        trace(uses_dict)(1.0)
    assert not native.installed()
    with pytest.raises(ZeroDivisionError):
        trace(div)(1.0, 0.0)                   # an error while compiling
    assert not native.installed()


def test_plain_python_is_untouched_after_tracing():
    compiled = trace(factorial_times)
    with pytest.raises(TracerError):
        compiled(2.0, 3)
    assert factorial_times(2.0, 5) == 240.0   # recursion still works in plain Python
    assert not native.installed()


def test_public_api():
    assert tracer.trace is trace
    assert issubclass(UnsupportedError, TracerError)
    assert issubclass(DataDependentControlFlow, UnsupportedError)
    compiled = trace(add_one)
    assert compiled.py_func is add_one
    with pytest.raises(TypeError):
        trace(42)
