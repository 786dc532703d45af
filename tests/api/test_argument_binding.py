"""Argument binding and argument types of a `@trace`d function (tracer.api, tracer.specialize,
tracer.frontend.loader): wrong arguments raise Python's TypeError, keywords and defaults bind as in
Python, decorator forms, and each new argument type compiles its own specialization.

The oracle is CPython: a compiled function returns what the Python function returns or raises
the same exception type with the same message.
"""
from __future__ import annotations

import math

import pytest
from like_python import assert_like_python

from tracer import native, trace
from tracer.errors import UnsupportedError

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


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


@pytest.mark.parametrize("bad", [{"a": 1.0}, {1.0}, None, b"ab"], ids=["dict", "set", "None", "bytes"])
def test_unsupported_argument_type_raises_type_error(bad):
    compiled = trace(add_one, fullgraph=True)
    assert compiled(1.0) == 2.0
    assert_type_error_like_python_or_naming_the_argument(compiled, add_one, (bad,), "x", bad)


def test_a_complex_argument_is_a_new_specialization():
    compiled = trace(add_one, fullgraph=True)
    assert compiled(1.0) == 2.0
    assert compiled(1 + 2j) == (2 + 2j) and type(compiled(0.5j)) is complex


def first_plus_one(a):
    return a[0] + 1.0


def shout(s):
    return s.upper() + "!"


def total_of_values(d):
    return sum(d.values())


@pytest.mark.parametrize("fn, arg, want", [(first_plus_one, "bytearray", 98.0)])
def test_an_argument_traced_code_does_not_take_runs_the_function_as_python(fn, arg, want):
    """What CPython does with the call is the answer (default mode); with fullgraph=True, a
    TypeError naming the argument."""
    arg = bytearray(b"ab") if arg == "bytearray" else arg
    assert trace(fn)(arg) == fn(arg) == want
    with pytest.raises(TypeError, match=f"argument '{fn.__code__.co_varnames[0]}'"):
        trace(fn, fullgraph=True)(arg)


def test_a_str_argument_is_a_constant_of_the_trace():
    """A string compiles as a constant, guarded by its value: an equal string (even another
    object) reuses the specialization, another string compiles another."""
    compiled = trace(shout, fullgraph=True)
    assert compiled("ab") == "AB!"
    assert compiled("".join(["a", "b"])) == "AB!"
    assert compiled("cd") == "CD!"
    assert len(compiled.specializations) == 2


def test_a_dict_argument_is_read_per_call():
    """A dict's keys are guarded, its values loaded on every call."""
    compiled = trace(total_of_values, fullgraph=True)
    assert compiled({"a": 1.5, "b": 2}) == 3.5
    assert compiled({"a": 2.5, "b": 2}) == 4.5
    assert len(compiled.specializations) == 1
    assert compiled({"b": 2, "a": 2.5}) == 4.5          # other keys (here: order): compiled again
    assert len(compiled.specializations) == 2


def bump(d):
    d["a"] += 1.0
    return d["a"]


def test_changing_a_dict_argument_is_reported_not_lost():
    d = {"a": 1.0}
    assert trace(bump)(d) == 2.0 and d == {"a": 2.0}
    with pytest.raises(UnsupportedError, match="dict from outside"):
        trace(bump, fullgraph=True)({"a": 1.0})


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


def test_too_many_specializations_warn_and_stay_correct(caplog):
    def powers(x, n):
        return sum(x ** i for i in range(n))
    compiled = trace(powers, max_specializations=3)
    with caplog.at_level("WARNING", logger="tracer.guards"):
        results = [compiled(1.5, n) for n in range(6)]
    assert results == [powers(1.5, n) for n in range(6)]
    assert len(compiled.specializations) == 3
    warned = [r for r in caplog.records if r.name == "tracer.guards" and r.levelname == "WARNING"]
    assert len(warned) == 1 and "more than 3 specializations" in warned[0].getMessage()


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


def neighbours(cells, x):
    out = []
    for (i, j) in cells:
        out.append(i * x + j)
    return out, (1, 2) in cells, len(cells | {(9, 9)}), sorted(cells.union({(0, 0)}))


def grows(cells):
    cells.add((5, 5))
    return len(cells)


def grows_in_place(cells):
    cells |= {(5, 5)}
    return len(cells)


def test_a_set_argument_is_a_constant_guarded_with_its_order():
    """A set (or frozenset) of constants is a constant of the trace: its items, in CPython's
    iteration order, are guarded; a set that changes it is refused (the call runs as Python)."""
    compiled = trace(neighbours, fullgraph=True)
    for cells in ({(1, 2), (3, 4)}, frozenset({(1, 2), (3, 4)}), {(3, 4)}, {(1, 2), (3, 4)}):
        assert compiled(cells, 10) == neighbours(cells, 10)
    assert compiled(frozenset({(1, 2), (3, 4)}), 2.5) == neighbours(frozenset({(1, 2), (3, 4)}), 2.5)
    assert len(compiled.specializations) == 4          # the set, the frozenset, the other set; a float x
    for fn in (grows, grows_in_place):
        with pytest.raises(UnsupportedError, match="from outside the traced function"):
            trace(fn, fullgraph=True)({(1, 2)})
        cells, plain = {(1, 2)}, {(1, 2)}
        assert trace(fn)(cells) == fn(plain) and cells == plain
