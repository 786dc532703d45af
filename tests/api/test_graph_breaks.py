"""What the tracer cannot compile never stops a call: it runs in CPython, once, in order.

Two ways (tracer.frontend.callouts, tracer.api): a call statement such as `print(i)` is made in
CPython from the compiled code (the loop around it stays native); anything else makes the call
run as Python, recorded as a PythonRun. With `fullgraph=True` both raise UnsupportedError naming
the construct and the user's file:line. The oracle is CPython: result, exception, stdout,
warnings.
"""
import contextlib
import io
import math
import time
import warnings

import numpy as np
import pytest

import tracer
from tracer import UnsupportedError, grad, trace
from tracer.specialize import Specialization


def outcome(fn, *args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = "returned", repr(fn(*args))
        except Exception as e:
            result = type(e).__name__, str(e)
    return result, out.getvalue(), [str(w.message) for w in caught]


def kinds(compiled) -> list[str]:
    return [type(s).__name__ for s in compiled.specializations]


def report(i, s):
    print("step", i, f"{s:8.3f}|{i:>5d}|{s!r}|{i!s}")


def inlined_callee_prints(n):
    s = 0.0
    for i in range(n):
        s += 1.5
        if i % 3 == 0:
            report(i, s)
    return s


def two_in_a_row(x):
    print("a", x)
    print("b", x * 2, sep="-", end="!\n")
    return x + 1


def before_and_after_a_loop(x, n):
    print("start", x)
    for _ in range(n):
        x = x * 1.01
    print("end", x)
    return x


def every_third_iteration(n):
    s = 0.0
    for i in range(n):
        s += i * 0.5
        if i % 3 == 0:
            print(i, f"s={s:.2f}")
    return s


def raises_in_the_call(n):
    total = 0.0
    for i in range(n):
        total += i
        print(i, sep=5)      # TypeError from print, after one iteration's work
    return total


def while_condition_after_the_call(x):
    k = 0
    while x > 1.0:
        x = x / 2
        k += 1
        print("halved", k, x, end=";")
    return k


def int_accumulator(n):
    s = 0
    for i in range(n):
        s += i * i
        if i % 2 == 0:
            print(s)
    return s


def constants_and_flags(x):
    print(x > 0, not x, None, (1, "a"), 2.5, f"{x:+.1e}")
    return x


def warns(x):
    warnings.warn("careful", stacklevel=1)
    return x * 2


def array_elements(x):
    s = 0.0
    for i in range(x.shape[0]):
        s += x[i]
        print(i, x[i], s)
    return s


def clocked(x):
    return time.perf_counter() * 0.0 + x


def global_inside(x):
    global LAST
    LAST = x
    return x * 2


CASES = [
    (inlined_callee_prints, (7,), "Specialization"),
    (two_in_a_row, (3.0,), "Specialization"),
    (before_and_after_a_loop, (2.0, 5), "Specialization"),
    (every_third_iteration, (10,), "Specialization"),
    (raises_in_the_call, (3,), "Specialization"),
    (while_condition_after_the_call, (20.0,), "Specialization"),
    (int_accumulator, (5,), "Specialization"),
    (constants_and_flags, (2.0,), "Specialization"),
    (constants_and_flags, (-0.0,), "Specialization"),
    (warns, (1.0,), "Specialization"),
    (array_elements, (np.array([1.0, 2.5, -0.0]),), None),
    (clocked, (1.23456,), "Specialization"),
    (clocked, (float("inf"),), "Specialization"),
    (global_inside, (3.0,), "PythonRun"),
]


@pytest.mark.parametrize("fn, args, kind", CASES, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CASES)])
def test_output_and_result_as_cpython(fn, args, kind):
    compiled = trace(fn, fuse_fma=False)
    want = outcome(fn, *args)
    assert outcome(compiled, *args) == want       # the first call: traced, compiled, run once
    assert outcome(compiled, *args) == want       # the compiled (or recorded) path
    if kind is not None:
        assert kinds(compiled) == [kind]


def test_a_print_in_a_loop_keeps_the_loop_compiled():
    compiled = trace(every_third_iteration)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        compiled(30)
    (spec,) = compiled.specializations
    assert isinstance(spec, Specialization)
    ops = [v.op for v in spec.optimized.walk()]
    assert "loop" in ops and ops.count("python_call") == 1
    assert out.getvalue().count("\n") == 10


def test_fullgraph_raises_where_the_construct_is():
    for fn, line in ((every_third_iteration, 'print(i, f"s={s:.2f}")'), (clocked, "return time.perf_counter() * 0.0 + x")):
        with pytest.raises(UnsupportedError) as info:
            trace(fn, fullgraph=True)(*{every_third_iteration: (10,), clocked: (1.5,)}[fn])
        assert f"{__file__}:" in str(info.value) and line in str(info.value)


def test_an_int_past_64_bits_after_a_call_out_is_a_clear_error():
    def powers(n, base):
        s = 1
        for i in range(n):
            s = s * base
            print(i)
        return s
    compiled = trace(powers)
    assert outcome(compiled, 2, 3) == outcome(powers, 2, 3)
    # before the first print an overflow still runs the function as Python: exact
    assert outcome(trace(powers), 1, 2**70) == outcome(powers, 1, 2**70)
    result, printed, _ = outcome(compiled, 3, 2**40)
    assert result[0] == "OverflowError" and "past 64 bits" in result[1] and printed == "0\n"


def test_no_call_out_where_python_might_run_the_function_again():
    # an array index NumPy could refuse reruns the function: the print would run twice
    compiled = trace(array_elements)
    want = outcome(array_elements, np.arange(3.0))
    assert outcome(compiled, np.arange(3.0)) == want
    assert kinds(compiled) == ["PythonRun"]
    assert "twice" in compiled.specializations[0].reason.message


def test_python_runs_are_recorded_once_per_argument_kinds():
    compiled = trace(global_inside)
    assert compiled(1.0) == 2.0 and compiled(2.0) == 4.0
    assert kinds(compiled) == ["PythonRun"]
    assert compiled(3) == 6
    assert kinds(compiled) == ["PythonRun", "PythonRun"]
    assert "global" in repr(compiled.specializations[0])


def test_keyword_only_arguments_run_as_python():
    def f(x, *rest, scale=2.0):
        return {"v": x * scale + len(rest)}["v"]
    compiled = trace(f)
    assert compiled(1.0, 5, 6, scale=3.0) == f(1.0, 5, 6, scale=3.0)
    assert compiled(1.0, scale=4.0) == 4.0


def test_gradients_refuse_a_call_into_python():
    def loss(x):
        print(x)
        return x * x
    with pytest.raises(UnsupportedError, match="test_graph_breaks.py"):
        grad(loss)(3.0)


def test_grad_of_a_function_that_runs_as_python_raises():
    with pytest.raises(UnsupportedError, match="perf_counter"):
        grad(clocked)(1.5)


def test_explain():
    e = tracer.explain(every_third_iteration, 10)
    assert e.compiled and len(e.python_calls) == 1 and e.python_calls[0].in_loop
    assert e.python_calls[0].loc.lineno == every_third_iteration.__code__.co_firstlineno + 5
    text = str(e)
    assert "compiled" in text and "print(...), inside a loop" in text and "guards:" in text
    e = tracer.explain(global_inside, 1.5)
    assert not e.compiled and "global" in str(e) and "runs as Python" in str(e)
    e = tracer.explain(trace(clocked, fullgraph=True), 1.5)
    assert not e.compiled and "fullgraph=True" in str(e)
    e = tracer.explain(lambda a: np.sum(a * 2.0), np.ones(3))
    assert e.compiled and not e.breaks and "native code" in str(e)


def test_explain_runs_nothing():
    def loud(x):
        print("ran")
        return x
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        tracer.explain(loud, 1.0)
    assert out.getvalue() == ""


def test_export_refuses_a_call_into_python(tmp_path):
    from tracer.aot.export import ExportError
    with pytest.raises((ExportError, UnsupportedError), match="print"):
        tracer.export(two_in_a_row, 1.0, out_dir=str(tmp_path))


def test_print_keywords():
    def f(x):
        y = math.sqrt(x)
        print(y, file=None, flush=True)
        return y
    assert outcome(trace(f), 4.0) == outcome(f, 4.0)


def rounds_in_a_while_condition(x):
    k = 0
    while round(x, 3) != round(math.sqrt(2.0), 3):
        x = 0.5 * (x + 2.0 / x)
        k += 1
    return k, x


def rounds_ints(x, n):
    return round(x, n)


def timed_loop(n):
    t0 = time.perf_counter()
    s = 0.0
    for i in range(n):
        s += math.sin(i)
    return s, time.perf_counter() - t0 >= 0.0, time.perf_counter_ns() > 0


@pytest.mark.parametrize("fn, args", [
    (rounds_ints, (123456, -2)),
    (rounds_ints, (2**62 + 1, -1)),          # past 64 bits: Python answers
    (timed_loop, (50,)),
])
def test_calls_whose_result_is_used(fn, args):
    compiled = trace(fn, fuse_fma=False)
    want = outcome(fn, *args)
    assert outcome(compiled, *args) == want
    assert outcome(compiled, *args) == want
    assert kinds(compiled) == ["Specialization"]
    assert any(v.op == "python_call" for v in compiled.specializations[0].optimized.walk())


@pytest.mark.parametrize("fn, args", [
    (rounds_in_a_while_condition, (5.0,)), (rounds_ints, (1.5, 0)), (rounds_ints, (2.675, 2)),
    (rounds_ints, (float("nan"), 1)),
])
def test_round_of_a_float_to_digits_is_compiled(fn, args):
    """round(x, n) of a float is an op of its own (round_digits), not a call into CPython."""
    compiled = trace(fn, fuse_fma=False, fullgraph=True)
    want = outcome(fn, *args)
    assert outcome(compiled, *args) == want
    assert not any(v.op == "python_call" for v in compiled.specializations[0].optimized.walk())


def test_random_numbers_drawn_from_compiled_code_follow_the_generator():
    import random

    def noise(n):
        s = 0.0
        for _ in range(n):
            s += random.random()
        return s
    compiled = trace(noise)
    random.seed(3)
    want = noise(5)
    for _ in range(2):
        random.seed(3)
        assert compiled(5) == want
    assert kinds(compiled) == ["Specialization"]


LOG = __import__("logging").getLogger("tests.graph_breaks")


def logs_progress(n):
    s = 0.0
    for i in range(n):
        s += i * 0.5
        if i % 2 == 0:
            LOG.info("step %d: s=%.2f", i, s)
            LOG.debug(f"s is {s}")
    return s


def test_logging_calls_are_made_from_compiled_code(caplog):
    import logging
    caplog.set_level(logging.DEBUG, logger="tests.graph_breaks")
    want = logs_progress(5)
    expected = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "tests.graph_breaks"]
    caplog.clear()
    compiled = trace(logs_progress)
    assert compiled(5) == want
    got = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "tests.graph_breaks"]
    assert got == expected and len(got) == 6
    assert kinds(compiled) == ["Specialization"]


def test_a_generator_consumed_across_calls_into_python():
    def squares(n):
        g = (i * i for i in range(n))
        s = 0
        for v in g:
            print(v)
            s += v
        return s
    assert outcome(trace(squares), 4) == outcome(squares, 4)


# ---------------------------------------------------------------- graph breaks at a call
CALLS: list = []


def opaque(x, scale=1.0):
    """A callee the tracer cannot compile (it imports), with a side effect CPython makes once."""
    import math
    CALLS.append(x)
    return math.fabs(x) * scale


def break_then_loop(x, n):
    a = x * 2.0
    b = opaque(a)
    s = 0.0
    for i in range(n):
        s += b * i
    return s + a


def loop_then_break(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
    print("sum", s)
    return opaque(s, scale=0.5) + s


def two_breaks(x):
    a = opaque(x)
    b = opaque(a + 1.0, scale=2.0)
    return a + b


def break_first(x):
    a = opaque(3.0)
    return a * x


def break_that_raises(x):
    print("before", x)
    a = opaque(x, scale=math.sqrt(-1.0) if x < 0 else 1.0)
    return a


def overflow_after_break(n, big):
    a = opaque(float(n))
    return big * big + int(a)


def overflow_before_break(n, big):
    b = big * big
    a = opaque(float(n))
    return b + int(a)


def writes_then_breaks(x):
    x[0] = 5.0
    y = opaque(float(x[0] + x[1]))
    x[1] = y
    return float(np.sum(x))


def array_made_inside_live_across(x):
    y = x * 2.0
    s = opaque(float(y.sum()))
    y[0] = s
    return y, s


def string_result(x):
    y = x * 3.0
    s = str(y)
    return len(s) + y


BREAKS = [
    (break_then_loop, (1.5, 10)),
    (loop_then_break, (2.0, 4)),
    (two_breaks, (1.0,)),
    (break_first, (2.0,)),
    (break_that_raises, (1.0,)),
    (break_that_raises, (-1.0,)),
    (overflow_after_break, (3, 2**40)),
    (overflow_after_break, (3, 2)),
    (overflow_before_break, (3, 2**40)),
    (writes_then_breaks, (np.array([1.0, 2.0, 3.0]),)),
    (string_result, (1.5,)),
    (array_made_inside_live_across, (np.arange(3.0),)),
]


@pytest.mark.parametrize("fn, args", BREAKS, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(BREAKS)])
def test_graph_breaks_at_a_call(fn, args):
    import copy
    compiled = trace(fn, fuse_fma=False)
    for _ in range(2):       # the first call compiles the prefix, the second runs it
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        CALLS.clear()
        want = outcome(fn, *theirs)
        want_calls = list(CALLS)
        CALLS.clear()
        assert outcome(compiled, *mine) == want
        assert CALLS == want_calls                  # the callee ran once, with CPython's arguments
        for a, b in zip(mine, theirs):
            if isinstance(a, np.ndarray):
                np.testing.assert_array_equal(a, b)


def test_a_graph_break_compiles_the_code_around_it():
    compiled = trace(break_then_loop)
    compiled(1.5, 10)
    (run,) = compiled.specializations
    assert type(run).__name__ == "BreakRun" and run.point.loc.lineno == break_then_loop.__code__.co_firstlineno + 2
    continuation = run.resume.specializations
    assert [type(s).__name__ for s in continuation] == ["Specialization"]
    assert "loop" in {v.op for v in continuation[0].optimized.walk()}
    e = tracer.explain(break_then_loop, 1.5, 10)
    assert e.compiled and "graph break" in str(e) and "b = opaque(a)" in str(e)


def test_fullgraph_raises_at_the_call_that_would_break():
    with pytest.raises(UnsupportedError, match="an import"):
        trace(break_then_loop, fullgraph=True)(1.5, 10)


class Scaled:
    k = 3.0

    def method(self, x):
        import math  # (not compiled: the call breaks)
        return math.fabs(x) * self.k


SCALED = Scaled()


def add(a, b):
    return a + b


def under_an_operand(x):
    return x + opaque(x)


def as_an_argument(x):
    return add(x, opaque(x, scale=2.0))


def inside_a_math_call(x):
    return math.sqrt(opaque(x * x))


def a_method_of_a_global_object(x):
    return SCALED.method(x) + 1.0


def tuple_live_across(x, y):
    t = (x, y)
    z = opaque(x)
    return t[0] + t[1] + z


def list_argument_written_after(xs):
    s = 0.0
    for v in xs:
        s += v
    z = opaque(s)
    xs[0] = z
    return z


def as_a_statement(x):
    opaque(x)
    return x * 2.0


STACK_SHAPES = [
    (under_an_operand, (2.0,)),
    (as_an_argument, (2.0,)),
    (inside_a_math_call, (3.0,)),
    (a_method_of_a_global_object, (2.0,)),
    (tuple_live_across, (1.0, 2.0)),
    (list_argument_written_after, ([1.0, 2.0, 3.0],)),
    (as_a_statement, (1.5,)),
]


@pytest.mark.parametrize("fn, args", STACK_SHAPES, ids=[c[0].__name__ for c in STACK_SHAPES])
def test_graph_breaks_with_values_live_across_the_call(fn, args):
    import copy
    compiled = trace(fn)
    for _ in range(2):
        mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
        CALLS.clear()
        want = outcome(fn, *theirs), list(CALLS)
        CALLS.clear()
        assert (outcome(compiled, *mine), list(CALLS)) == want
        assert mine == theirs
    assert kinds(compiled) == ["BreakRun"]


def raises_with_values(x, n):
    s = 0.0
    for i in range(n):
        s += x * i
        if s > 100.0:
            raise ValueError(f"s grew too large: {s:.3f} at step {i}")
    if s < 0:
        raise ArithmeticError("negative sum", s, n)
    return s


@pytest.mark.parametrize("args", [(1.0, 5), (10.0, 10), (-1.0, 3)])
def test_exceptions_made_of_traced_values_are_raised_by_cpython(args):
    compiled = trace(raises_with_values)
    want = outcome(raises_with_values, *args)
    assert outcome(compiled, *args) == want
    assert outcome(compiled, *args) == want
    assert kinds(compiled) == ["Specialization"]


def test_tracebacks_through_a_call_into_python_name_the_users_lines():
    import traceback

    def loud(i):
        print(i, sep=5)

    def steps(n):
        for i in range(n):
            loud(i)
    for fn, args, last in ((steps, (2,), "print(i, sep=5)"),
                           (raises_with_values, (10.0, 10), 'raise ValueError(f"s grew too large')):
        compiled = trace(fn)
        for _ in range(2):
            with pytest.raises(Exception) as info:
                compiled(*args)
            frames = traceback.extract_tb(info.value.__traceback__)
            assert frames[-1].line.startswith(last)
            assert not any("/tracer/" in f.filename or "/codegen/" in f.filename for f in frames)


def captured_argument(n):
    label = str(n * 0.5)            # the break (a string of a float known at run time)
    get = lambda: n                 # (n is a cell variable of this function)
    return get() * 2, label


def captured_local(xs):
    scale = 2.5
    label = str(xs[0])              # the break
    return [xs[i] * scale for i in range(2)], label


def captured_traced_local(x):
    m = x * 2.0
    label = str(x)                  # the break
    return (lambda: m + x)(), label


@pytest.mark.parametrize("fn, args", [(captured_argument, (3,)), (captured_local, ([1.0, 2.0, 4.0],)),
                                      (captured_traced_local, (1.25,))])
def test_closure_variables_live_across_a_break(fn, args):
    """A variable an inner function or a comprehension captures (a cell) keeps its value in the
    continuation, whether a constant, an argument or a value the prefix computed."""
    compiled = trace(fn)
    assert compiled(*args) == fn(*args)
    assert compiled(*args) == fn(*args)
    assert "BreakRun" in kinds(compiled)


def break_inside_a_call(x):
    return sum(map(abs, [x, -x]))


def break_inside_a_tuple_and_a_call(x):
    return x + 1, sum(map(abs, [x, -x])), len(list(map(abs, [x])))


def break_inside_a_method_call(x):
    xs = [x]
    xs.extend(map(abs, [x, -x]))
    return xs


@pytest.mark.parametrize("fn", [break_inside_a_call, break_inside_a_tuple_and_a_call, break_inside_a_method_call])
def test_a_break_at_a_call_inside_another_calls_arguments(fn):
    """The continuation pushes back the pending call's callable and NULL in CPython's order
    (NULL first on 3.11 and 3.12, after the callable on 3.13: the wrong order crashed 3.13)."""
    compiled = trace(fn)
    for x in (2.0, -3.0):
        assert outcome(compiled, x) == outcome(fn, x)
        assert outcome(compiled, x) == outcome(fn, x)
