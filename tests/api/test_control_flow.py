"""Data-dependent control flow: every function of `tests/support/cf_corpus.py`, compiled, against CPython.

For each corpus function, on every argument tuple listed with it:
- fusion off (`trace(fn, fuse_fma=False)`): the compiled call returns what CPython returns, bit for
  bit (same Python types, tuples elementwise, floats by their bytes, any NaN matching any NaN), or
  raises the same exception type with the same message. All the argument tuples go through one
  compiled object, twice (in order, then reversed), so that calls after the first are answered by
  the specialization cache, and calls with other argument types by other specializations;
- fusion on (`trace(fn)`): the same, except that floats may differ by a relative 1e-12 (or the
  entry's `fused_rel`);
- floats alone never select a specialization: a function called only with floats compiles once;
- for the differentiable entries: `grad(fn, argnums)` against central finite differences of the
  plain function at the entry's points, `value_and_grad(..., fuse_fma=False)`'s value against
  CPython bit for bit, and, on every listed argument tuple, `grad` raises exactly what CPython
  raises (and returns floats where CPython returns).

Then a few direct tests: `UnboundLocalError` with CPython's message, and functions whose variable is
an int on one path and a float on another (CPython's exact answer, or a `TracerError`: never a
wrong answer).
"""
from __future__ import annotations

import math

import pytest
from cf_corpus import CASES
from oracle import central_difference, close, close_value, outcome, same_outcome, same_value, show, show_outcome

from tracer import grad, native, trace, value_and_grad
from tracer.errors import TracerError

FD_REL, FD_ABS = 1e-5, 1e-7

IDS = [c.name for c in CASES]
DIFF_CASES = [c for c in CASES if c.differentiable]
DIFF_IDS = [c.name for c in DIFF_CASES]

# one compiled callable per function and mode, shared by every argument tuple
EXACT = {c.name: trace(c.fn, fuse_fma=False) for c in CASES}
FUSED = {c.name: trace(c.fn) for c in CASES}


# ------------------------------------------------------------------------------ outcomes
def mismatches(name, compiled, fn, arg_tuples, what, values=same_value, **kw) -> list[str]:
    out = []
    for args in arg_tuples:
        expected = outcome(fn, args)
        got = outcome(compiled, args)
        assert not native.installed(), "the PEP 523 hook was left installed after a call"
        if not same_outcome(got, expected, values, **kw):
            out.append(f"{name}{show(tuple(args))} {what}:\n"
                       f"    CPython  {show_outcome(expected)}\n    compiled {show_outcome(got)}")
    return out


def report(problems: list[str]) -> str:
    head = f"{len(problems)} mismatch(es)"
    return head + ":\n  " + "\n  ".join(problems[:12]) + ("\n  ..." if len(problems) > 12 else "")


# ------------------------------------------------------------------------------ the corpus
def test_corpus_is_big_enough():
    assert len(CASES) >= 45
    assert len(set(IDS)) == len(IDS), "corpus functions need distinct names"
    assert len(DIFF_CASES) >= 20
    for c in CASES:
        assert c.args, c.name
        if c.differentiable:
            assert c.argnums and c.points, c.name
            for p in c.points:
                assert all(type(p[a]) is float for a in c.argnums), f"{c.name}: argnums must be floats at {p}"


# ------------------------------------------------------------------------------ values and errors
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_exact_matches_cpython(case):
    """fuse_fma=False: bit for bit, or the same exception; one compiled object for all the calls."""
    compiled = EXACT[case.name]
    problems = mismatches(case.name, compiled, case.fn, case.args, "with fuse_fma=False")
    # again, the other way round: every call now goes through an existing specialization
    problems += mismatches(case.name, compiled, case.fn, case.args[::-1], "with fuse_fma=False (second pass)")
    assert not problems, report(problems)
    assert compiled.specializations, f"{case.name}: no specialization was ever compiled"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fused_matches_cpython_within_tolerance(case):
    compiled = FUSED[case.name]
    problems = mismatches(case.name, compiled, case.fn, case.args, f"with fusion (rel {case.fused_rel})",
                          close_value, rel_tol=case.fused_rel)
    assert not problems, report(problems)


FLOAT_ONLY = [c for c in CASES if all(type(a) is float for args in c.args for a in args)]


@pytest.mark.parametrize("case", FLOAT_ONLY, ids=[c.name for c in FLOAT_ONLY])
def test_float_arguments_share_one_specialization(case):
    """A branch on a float is compiled as a branch: float values never select a specialization."""
    compiled = trace(case.fn, fuse_fma=False)
    for args in case.args:
        try:
            compiled(*args)
        except TracerError:
            raise
        except Exception:   # CPython's own exceptions are checked by test_exact_matches_cpython
            pass
    specs = compiled.specializations
    assert len(specs) == 1, f"{case.name}: {len(specs)} specializations for float arguments: {specs}"


# ------------------------------------------------------------------------------ gradients
_GRADS: dict = {}

def compiled_grad(case):
    if case.name not in _GRADS:
        _GRADS[case.name] = grad(case.fn, case.argnums)
    return _GRADS[case.name]


@pytest.mark.parametrize("case", DIFF_CASES, ids=DIFF_IDS)
def test_grad_matches_finite_differences(case):
    g = compiled_grad(case)
    problems = []
    for args in case.points:
        got = g(*args)
        expected = tuple(central_difference(case.fn, args, a) for a in case.argnums)
        if type(got) is not tuple or len(got) != len(expected):
            problems.append(f"{case.name}{show(args)}: grad returned {got!r}")
            continue
        for a, gv, ev in zip(case.argnums, got, expected):
            if type(gv) is not float or not close(gv, ev, FD_REL, FD_ABS):
                problems.append(f"{case.name}{show(args)} d/d arg {a}:\n"
                                f"    grad        {show(gv)}\n    differences {show(ev)}")
    assert not problems, report(problems)


@pytest.mark.parametrize("case", DIFF_CASES, ids=DIFF_IDS)
def test_value_and_grad_value_is_exact_unfused(case):
    vg = value_and_grad(case.fn, case.argnums, fuse_fma=False)
    problems = []
    for args in case.points:
        expected = case.fn(*args)
        value, gradient = vg(*args)
        if not same_value(value, expected):
            problems.append(f"{case.name}{show(args)} value_and_grad value:\n"
                            f"    CPython  {show(expected)}\n    compiled {show(value)}")
        if type(gradient) is not tuple or len(gradient) != len(case.argnums):
            problems.append(f"{case.name}{show(args)} value_and_grad gradient {gradient!r}")
    assert not problems, report(problems)


@pytest.mark.parametrize("case", DIFF_CASES, ids=DIFF_IDS)
def test_grad_raises_what_cpython_raises(case):
    """On every listed argument tuple (nan, inf, the raising paths): CPython raises -> grad raises the
    same; CPython returns -> grad returns a tuple of floats."""
    g = compiled_grad(case)
    problems = []
    for args in case.args:
        if not all(type(args[a]) is float for a in case.argnums):
            continue
        expected = outcome(case.fn, args)
        got = outcome(g, args)
        if expected[0] == "raise":
            ok = same_outcome(got, expected)
        else:
            ok = (got[0] == "return" and type(got[1]) is tuple and len(got[1]) == len(case.argnums)
                  and all(type(v) is float for v in got[1]))
        if not ok:
            problems.append(f"{case.name}{show(args)} grad:\n"
                            f"    CPython  {show_outcome(expected)}\n    grad     {show_outcome(got)}")
    assert not problems, report(problems)


# ------------------------------------------------------------------------------ direct tests
def pick_positive(x):
    if x > 0.0:
        y = x * 2.0
    return y


def carry_over(x):
    for k in range(4):
        if x * k > 1.0:
            out = prev * 2.0   # noqa: F821  (bound by the previous iteration; pyflakes cannot tell)
        prev = x * k       # noqa: F841  (read by the next iteration)
    return out


def test_unbound_local_error_has_cpythons_message():
    compiled = trace(pick_positive, fuse_fma=False)
    assert compiled(1.5) == 3.0
    with pytest.raises(UnboundLocalError) as caught:
        pick_positive(-1.0)
    expected_message = str(caught.value)
    assert "'y'" in expected_message
    for x in (-1.0, 0.0, -0.0, math.nan):
        with pytest.raises(UnboundLocalError) as got:
            compiled(x)
        assert type(got.value) is UnboundLocalError
        assert str(got.value) == expected_message
    assert compiled(2.5) == 5.0                     # and the bound path still works afterwards


def test_unbound_local_error_across_loop_iterations():
    compiled = trace(carry_over, fuse_fma=False)
    problems = mismatches("carry_over", compiled, carry_over,
                          [(0.5,), (2.0,), (-1.0,), (0.0,), (1.0,), (math.nan,), (math.inf,), (0.4,)],
                          "with fuse_fma=False")
    assert not problems, report(problems)


# a variable that is an int on one path and a float on another
def int_or_float(x):
    if x > 0.0:
        r = 1
    else:
        r = 0.5
    return r


def int_or_float_arithmetic(x):
    r = 1 if x > 0.0 else 0.5
    return r * 3 + 1


def int_or_float_loop(x):
    acc = 0
    for _ in range(int(x)):
        acc += 0.5
    return acc


def int_or_float_while(x):
    n = 0
    while x > 1.0:
        x /= 2.0
        n += 0.25
    return n


def relu_of_int(x):
    return x if x > 0 else 0.0


def int_result_or_float_branch(x, n):
    if x < 0.0:
        return n // 2
    return x / n


TYPE_BY_PATH = [
    (int_or_float, [(1.0,), (-1.0,), (0.0,), (math.nan,), (2.0,)]),
    (int_or_float_arithmetic, [(1.0,), (-1.0,), (math.nan,), (3.0,)]),
    (int_or_float_loop, [(0.5,), (3.5,), (-1.0,), (2.0,), (0.0,)]),
    (int_or_float_while, [(0.5,), (9.0,), (math.nan,), (1.0,)]),
    (relu_of_int, [(3,), (-2,), (0,), (7,)]),
    (int_result_or_float_branch, [(-1.0, 7), (1.0, 7), (-3.0, 4), (2.0, 0), (-2.0, 0)]),
]


@pytest.mark.parametrize("fn, arg_tuples", TYPE_BY_PATH, ids=[f.__name__ for f, _ in TYPE_BY_PATH])
@pytest.mark.parametrize("fuse_fma", [False, True], ids=["unfused", "fused"])
def test_type_depending_on_path_is_exact_or_a_tracer_error(fn, arg_tuples, fuse_fma):
    """CPython's exact answer (type included) or a TracerError, call by call; never a wrong answer."""
    compiled = trace(fn, fuse_fma=fuse_fma)
    problems = []
    for args in [*arg_tuples, *arg_tuples[::-1]]:
        expected = outcome(fn, args)
        got = outcome(compiled, args)
        assert not native.installed(), "the PEP 523 hook was left installed after a call"
        if got[0] == "raise" and issubclass(got[1], TracerError):
            continue
        if not same_outcome(got, expected):
            problems.append(f"{fn.__name__}{show(tuple(args))}:\n"
                            f"    CPython  {show_outcome(expected)}\n    compiled {show_outcome(got)}")
    assert not problems, report(problems)


# ------------------------------------------------------------------------------ loops stay loops
def while_known_at_trace_time(x):
    i = 0
    s = 0.0
    while i < 10000:              # the test is decided at trace time on every iteration
        s = s + x * i
        i += 1
    return s, i


def while_counting_down(x):
    n = 100
    while n > 0:
        x = x * 0.99 + 0.01
        n -= 1
    return x


def list_from_a_long_range(x):
    values = [float(i) * x for i in range(40)]   # appends: this loop unrolls
    return sum(values)


def while_indexing_a_list(x):
    table = [1.0, 2.0, 3.0] * 10
    i, t = 0, 0.0
    while i < len(table):          # the body needs i at trace time: this loop unrolls
        t += table[i] * x
        i += 1
    return t


@pytest.mark.parametrize("fn, max_values", [(while_known_at_trace_time, 40), (while_counting_down, 40),
                                            (list_from_a_long_range, 1000), (while_indexing_a_list, 1000)])
def test_long_loops_known_at_trace_time(fn, max_values):
    """A while loop whose test is known at trace time unrolls only up to branches.UNROLL_LIMIT
    iterations; then it is rebuilt as a loop op (10,000 iterations: a few dozen IR values, not
    30,000). Loops whose bodies need the counter at trace time, or change a list, unroll."""
    compiled = trace(fn, fuse_fma=False)
    for x in (0.5, -1.25, 3.0):
        assert same_value(compiled(x), fn(x))
    (spec,) = compiled.specializations
    assert sum(1 for _ in spec.trace.function.walk()) < max_values


def test_gradient_of_a_while_loop_known_at_trace_time():
    g = grad(while_counting_down)
    for x in (0.5, 2.0):
        assert close(g(x), central_difference(while_counting_down, (x,), 0), FD_REL, FD_ABS)
