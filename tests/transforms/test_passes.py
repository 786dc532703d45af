"""Unit and property tests for the IR passes (tracer.transforms.passes). IR is built by hand."""
from __future__ import annotations

import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_builder import Builder

from tracer import ir
from tracer.errors import OpFailure, Status
from tracer.ir import BOOL, F64, I64, I64_MAX, I64_MIN, ops
from tracer.transforms.passes import (
    PIPELINE,
    count_fused,
    eliminate_common_subexpressions,
    eliminate_dead_code,
    fold_constants,
    fuse_multiply_add,
    optimize,
    simplify,
    stages,
)

EXACT_PASSES = [fold_constants, simplify, eliminate_common_subexpressions, eliminate_dead_code]


# ------------------------------------------------------------------------------------ building IR
def bits(x: float) -> bytes:
    return struct.pack("<d", x)


def run(fn, args):
    """("ok", value) or ("fail", status)."""
    try:
        return ("ok", ops.run(fn, args))
    except OpFailure as exc:
        return ("fail", exc.status)


def same(a, b) -> bool:
    """Equal as Python observes: floats by their bits (0.0 is not -0.0), any NaN equals any NaN.

    NaN bits are not compared: Python does not specify them, and `a + b` vs `b + a` (CSE) or
    `x * -1.0` vs `-x` (simplify) may pick a different NaN, as LLVM does too.
    """
    if isinstance(a, tuple) and isinstance(b, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return (math.isnan(a) and math.isnan(b)) or bits(a) == bits(b)
    return a == b


def ops_of(fn) -> list[str]:
    return [v.op for v in fn.body.values]


def const_values(fn) -> list:
    return [v.attrs["value"] for v in fn.body.values if v.op == "const"]


def snapshot(fn):
    """Everything a pass could mutate, by identity, to check the input is left alone."""
    return (ir.format_function(fn), [(v, v.op, v.args, dict(v.attrs), v.type) for v in fn.walk()],
            list(fn.body.values), list(fn.body.results), list(fn.params))


def checked(pass_, fn):
    before = snapshot(fn)
    out = ir.verify(pass_(fn))
    assert snapshot(fn) == before, "the pass mutated its input"
    assert out is not fn
    return out


# ------------------------------------------------------------------------------------ fold
def test_fold_arithmetic_and_comparisons():
    b = Builder()
    s = b.op("add", b.const(2), b.const(3))
    f = b.op("div", b.const(7), b.const(2))                        # i64 / i64 is f64
    c = b.op("lt", b.const(1.5), b.const(2.5))
    out = checked(fold_constants, b.function(s, f, c))
    assert ops.run(out, []) == (5, 3.5, True)
    assert ops_of(out) == ["const"] * 9 + ["tuple"]                 # operands are left for DCE
    assert ops_of(eliminate_dead_code(out)) == ["const"] * 3 + ["tuple"]


def test_fold_keeps_signed_zero_and_nan():
    b = Builder()
    z = b.op("mul", b.const(-1.0), b.const(0.0))                  # -0.0
    n = b.op("sub", b.const(math.inf), b.const(math.inf))         # nan
    out = checked(fold_constants, b.function(z, n))
    assert "mul" not in ops_of(out) and "sub" not in ops_of(out)
    zero, nan = ops.run(out, [])
    assert bits(zero) == bits(-0.0) and math.isnan(nan)


def test_fold_leaves_failing_ops():
    b = Builder()
    d = b.op("div", b.const(1.0), b.const(0.0))
    big = b.op("add", b.const(I64_MAX), b.const(1))
    out = checked(fold_constants, b.function(b.op("sqrt", b.const(-1.0)), d, big))
    assert {"sqrt", "div", "add"} <= set(ops_of(out))
    assert run(out, []) == ("fail", Status.FLOAT_DIVISION_BY_ZERO)   # the first failing op


def test_fold_huge_int_power_is_not_evaluated():
    b = Builder()
    out = checked(fold_constants, b.function(b.op("pow", b.const(3), b.const(10 ** 18))))   # would hang
    assert "pow" in ops_of(out)
    out = checked(fold_constants, b.function(b.op("pow", b.const(3), b.const(4))))
    assert const_values(out)[-1] == 81


def test_fold_getitem_of_tuple_even_when_not_constant():
    b = Builder(F64, I64)
    x, n = b.params
    t = b.op("tuple", x, n)
    g = b.op("getitem", t, index=1)
    out = checked(fold_constants, b.function(b.op("mul", g, g)))
    assert out.result.args == (out.params[1], out.params[1])
    assert "getitem" not in ops_of(out)


def test_fold_chains_in_one_pass():
    b = Builder(F64)
    (x,) = b.params
    c = b.op("mul", b.op("add", b.const(1.0), b.const(2.0)), b.const(4.0))
    out = checked(fold_constants, b.function(b.op("add", x, c)))
    assert out.result.args[1].op == "const" and out.result.args[1].attrs["value"] == 12.0


# ------------------------------------------------------------------------------------ simplify
@pytest.mark.parametrize("op, a, c", [("mul", "x", 1.0), ("mul", 1.0, "x"), ("div", "x", 1.0),
                                       ("sub", "x", 0.0), ("add", "x", -0.0), ("add", -0.0, "x")])
def test_simplify_f64_identities(op, a, c):
    b = Builder(F64)
    (x,) = b.params
    arg = lambda v: x if v == "x" else b.const(v)
    out = checked(simplify, b.function(b.op(op, arg(a), arg(c))))
    assert out.result is out.params[0]
    for value in (0.0, -0.0, 2.5, -math.inf, math.nan):
        assert same(ops.run(out, [value]), ops.run(b.function(b.values[-1]), [value]))


@pytest.mark.parametrize("op, a, c", [("add", "x", 0.0), ("add", 0.0, "x"), ("sub", "x", -0.0),
                                       ("mul", "x", 0.0), ("mul", "x", 2.0), ("div", "x", -1.0),
                                       ("div", 1.0, "x")])
def test_simplify_f64_non_identities_are_kept(op, a, c):
    b = Builder(F64)
    (x,) = b.params
    arg = lambda v: x if v == "x" else b.const(v)
    fn = b.function(b.op(op, arg(a), arg(c)))
    out = checked(simplify, fn)
    assert out.result.op == op
    for value in (-0.0, 0.0, 2.0):
        assert same(run(fn, [value]), run(out, [value]))


def test_simplify_f64_x_minus_x_is_kept():
    b = Builder(F64)
    (x,) = b.params
    out = checked(simplify, b.function(b.op("sub", x, x)))
    assert out.result.op == "sub"
    assert math.isnan(ops.run(out, [math.inf]))


def test_simplify_times_minus_one_is_neg():
    b = Builder(F64)
    (x,) = b.params
    out = checked(simplify, b.function(b.op("mul", b.const(-1.0), x)))
    assert out.result.op == "neg" and out.result.args == (out.params[0],)
    assert bits(ops.run(out, [0.0])) == bits(-0.0)


@pytest.mark.parametrize("op, a, c, expect", [("add", "x", 0, "x"), ("add", 0, "x", "x"), ("sub", "x", 0, "x"),
                                               ("mul", "x", 1, "x"), ("mul", 1, "x", "x"),
                                               ("mul", "x", 0, 0), ("mul", 0, "x", 0)])
def test_simplify_i64_identities(op, a, c, expect):
    b = Builder(I64)
    (x,) = b.params
    arg = lambda v: x if v == "x" else b.const(v)
    out = checked(simplify, b.function(b.op(op, arg(a), arg(c))))
    if expect == "x":
        assert out.result is out.params[0]
    else:
        assert out.result.op == "const" and out.result.attrs["value"] == 0 and out.result.type == I64


def test_simplify_i64_x_minus_x():
    b = Builder(I64)
    (x,) = b.params
    out = checked(simplify, b.function(b.op("sub", x, x)))
    assert out.result.op == "const" and const_values(out) == [0]


def test_simplify_double_negation_and_not():
    for t in (F64, I64):
        b = Builder(t)
        (x,) = b.params
        out = checked(simplify, b.function(b.op("neg", b.op("neg", x))))
        assert out.result is out.params[0]
    b = Builder(BOOL)
    (p,) = b.params
    out = checked(simplify, b.function(b.op("not", b.op("not", p))))
    assert out.result is out.params[0]


def test_simplify_i64_double_negation_of_int_min_still_falls_back():
    # the inner neg still fails (DCE keeps it); FALLBACK gives Python's exact -(-x) == x anyway
    b = Builder(I64)
    (x,) = b.params
    fn = b.function(b.op("neg", b.op("neg", x)))
    out = optimize(fn)
    assert run(out, [I64_MIN]) == run(fn, [I64_MIN]) == ("fail", Status.FALLBACK)
    assert run(out, [5]) == ("ok", 5)


def test_simplify_lossy_round_trip_is_kept():
    b = Builder(F64)
    (x,) = b.params
    out = checked(simplify, b.function(b.op("to_f64", b.op("to_i64", x))))
    assert ops_of(out) == ["to_i64", "to_f64"]


def test_simplify_does_not_confuse_int_and_float_constants():
    b = Builder(I64)
    (n,) = b.params
    d = b.op("div", n, b.const(1))            # i64 / 1 is an f64 result: not "x / 1.0 -> x"
    out = checked(simplify, b.function(d))
    assert out.result.op == "div"


# ------------------------------------------------------------------------------------ cse
def test_cse_merges_duplicates_and_commuted_operands():
    b = Builder(F64, F64)
    x, y = b.params
    s1, s2 = b.op("add", x, y), b.op("add", y, x)
    d1, d2 = b.op("sub", x, y), b.op("sub", y, x)                  # not commutative
    out = checked(eliminate_common_subexpressions, b.function(b.op("mul", s1, s2), d1, d2))
    assert ops_of(out).count("add") == 1 and ops_of(out).count("sub") == 2
    prod = out.result.args[0]
    assert prod.args[0] is prod.args[1]


def test_cse_constants_by_type_and_bits():
    b = Builder()
    values = [0.0, -0.0, 0.0, math.nan, math.nan, -math.nan, 1, True, 1.0, 1]
    out = checked(eliminate_common_subexpressions, b.function(*[b.const(v) for v in values]))
    kept = const_values(out)
    assert len(kept) == 7                                          # 0.0 -0.0 nan -nan 1 True 1.0
    assert same(ops.run(out, []), tuple(values))


def test_cse_attrs_and_failing_ops():
    b = Builder(F64, F64)
    x, y = b.params
    t = b.op("tuple", x, y)
    g0, g1, g0b = b.op("getitem", t, index=0), b.op("getitem", t, index=1), b.op("getitem", t, index=0)
    q1, q2 = b.op("div", x, y), b.op("div", x, y)                  # merging failing duplicates is fine
    out = checked(eliminate_common_subexpressions, b.function(g0, g1, g0b, q1, q2))
    assert ops_of(out).count("getitem") == 2 and ops_of(out).count("div") == 1
    assert run(out, [1.0, 0.0]) == ("fail", Status.FLOAT_DIVISION_BY_ZERO)


# ------------------------------------------------------------------------------------ dce
def test_dce_removes_dead_values():
    b = Builder(F64, F64)
    x, y = b.params
    b.op("add", x, y)
    b.op("mul", b.op("fabs", b.const(2.0)), y)
    b.op("div", x, b.const(2.0))                                   # cannot fail: dead
    b.op("floordiv", x, b.const(-1.0))
    out = checked(eliminate_dead_code, b.function(b.op("sub", x, y)))
    assert ops_of(out) == ["sub"]


def test_dce_keeps_dead_ops_that_may_fail():
    b = Builder(F64, F64, I64)
    x, y, n = b.params
    b.op("div", b.const(1.0), b.op("add", y, b.const(0.5)))       # ZeroDivisionError when y == -0.5
    b.op("sqrt", x)                                                # math domain error
    b.op("add", n, b.const(1))                                     # i64 overflow: FALLBACK
    b.op("div", x, b.const(0.0))                                   # always fails
    out = checked(eliminate_dead_code, b.function(x))
    assert ops_of(out) == ["const", "const", "add", "div", "sqrt", "const", "add", "const", "div"]
    assert run(out, [1.0, -0.5, 0]) == ("fail", Status.FLOAT_DIVISION_BY_ZERO)
    assert run(out, [-1.0, 1.0, 0]) == ("fail", Status.MATH_DOMAIN)
    assert run(out, [1.0, 1.0, I64_MAX]) == ("fail", Status.FALLBACK)


def test_dce_f64_arithmetic_cannot_fail():
    b = Builder(F64)
    (x,) = b.params
    for op in ("add", "sub", "mul"):
        b.op(op, x, b.const(1e308))
    b.op("abs", b.op("neg", x))
    out = checked(eliminate_dead_code, b.function(x))
    assert out.body.values == []


# ------------------------------------------------------------------------------------ fma
def fused(op, product_on_left):
    b = Builder(F64, F64, F64)
    a, c, d = b.params
    m = b.op("mul", a, c)
    v = b.op(op, m, d) if product_on_left else b.op(op, d, m)
    fn = b.function(v)
    return fn, checked(fuse_multiply_add, fn)


@pytest.mark.parametrize("op, left", [("add", True), ("add", False), ("sub", True), ("sub", False)])
def test_fma_patterns(op, left):
    fn, out = fused(op, left)
    assert out.result.op == "fma" and count_fused(out) == 1
    out = checked(eliminate_dead_code, out)
    assert "mul" not in ops_of(out) and op not in ops_of(out)
    for args in ([1.5, 2.0, 0.25], [-0.0, 3.0, 0.0], [0.0, 1.0, -0.0], [1e200, 1e200, 1.0]):
        assert same(run_with_unfused_fma(out, args), ops.run(fn, args))
    x = 1.0 + 2.0 ** -30                                           # x*x - 1 needs the extra bits
    assert run(out, [x, x, 1.0])[1] == pytest.approx(ops.run(fn, [x, x, 1.0]), rel=1e-9)


def test_fma_operand_order_and_negation():
    _, out = fused("sub", False)                                   # d - a*c -> fma(neg(a), c, d)
    a, c, d = out.params
    neg = out.result.args[0]
    assert neg.op == "neg" and neg.args == (a,) and out.result.args[1:] == (c, d)
    _, out = fused("sub", True)                                    # a*c - d -> fma(a, c, neg(d))
    assert out.result.args[:2] == (out.params[0], out.params[1])
    assert out.result.args[2].op == "neg"


def test_fma_negates_constants_directly():
    b = Builder(F64, F64)
    x, y = b.params
    out = checked(fuse_multiply_add, b.function(b.op("sub", b.op("mul", x, y), b.const(0.0))))
    assert out.result.args[2].op == "const" and bits(out.result.args[2].attrs["value"]) == bits(-0.0)


def test_fma_shared_product_not_fused():
    b = Builder(F64, F64, F64)
    x, y, z = b.params
    m = b.op("mul", x, y)
    out = checked(fuse_multiply_add, b.function(b.op("add", m, z), m))
    assert count_fused(out) == 0


def test_fma_only_on_f64():
    b = Builder(I64, I64, I64)
    x, y, z = b.params
    out = checked(fuse_multiply_add, b.function(b.op("add", b.op("mul", x, y), z)))
    assert count_fused(out) == 0


def test_fma_chain_horner():
    # ((c3*x + c2)*x + c1)*x + c0: three fused multiply-adds
    b = Builder(F64)
    (x,) = b.params
    acc = b.const(0.5)
    for c in (0.25, -1.5, 3.0):
        acc = b.op("add", b.op("mul", acc, x), b.const(c))
    fn = b.function(acc)
    out = optimize(fn)
    assert count_fused(out) == 3 and ops_of(out).count("mul") == 0
    for value in (0.1, -2.0, 7.5):
        assert ops.run(out, [value]) == pytest.approx(ops.run(fn, [value]), rel=1e-14)
        assert same(run_with_unfused_fma(out, [value]), ops.run(fn, [value]))


# ------------------------------------------------------------------------------------ pipeline
def test_optimize_end_to_end():
    b = Builder(F64, F64, F64)
    x, y, z = b.params
    one = b.op("sub", b.const(3.0), b.const(2.0))                  # folds to 1.0
    xy = b.op("mul", b.op("mul", x, one), y)                       # x*1.0 -> x
    again = b.op("mul", x, y)                                      # same as xy after simplify: CSE
    s = b.op("add", xy, z)
    b.op("fabs", y)                                                # dead, cannot fail: removed
    fn = b.function(b.op("add", s, b.op("sub", again, again)))
    out = checked(optimize, fn)
    plain = checked(lambda f: optimize(f, fuse_fma=False), fn)
    assert ops_of(plain) == ["mul", "add", "sub", "add"]
    assert count_fused(out) == 0                                   # the product is shared
    for args in ([1.0, 2.0, 3.0], [math.inf, 1.0, 0.0]):
        assert same(ops.run(plain, args), ops.run(fn, args))


def test_stages_names_and_verify():
    b = Builder(F64, F64, F64)
    x, y, z = b.params
    fn = b.function(b.op("add", b.op("mul", x, y), z))
    result = stages(fn)
    assert result[0] == ("input", fn)
    assert [name for name, _ in result[-3:]] == ["fma", "cse", "dce"]
    assert any(name.startswith("fold") for name, _ in result)
    for _, stage in result:
        ir.verify(stage)
    assert result[-1][1].result.op == "fma"
    assert [name for name, _ in stages(fn, fuse_fma=False)][-1].startswith("dce")
    assert "fma" in PIPELINE


def test_printer_after_passes():
    b = Builder(F64)
    (x,) = b.params
    out = optimize(b.function(b.op("add", b.op("mul", x, x), b.const(1.0))))
    text = str(out)
    assert "fma" in text and "func f(p0: f64) -> f64" in text


# ------------------------------------------------------------------------------------ properties
F64_CONSTS = st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 0.5, -2.5, math.inf, -math.inf, math.nan,
                              1e308, 5e-324, 1e-300]) | st.floats(allow_nan=True, allow_infinity=True)
I64_CONSTS = st.sampled_from([0, 1, -1, 2, -3, 7, I64_MAX, I64_MIN, 2 ** 53 + 1]) | st.integers(I64_MIN, I64_MAX)
CONSTS = {F64: F64_CONSTS, I64: I64_CONSTS, BOOL: st.booleans()}

SIGNATURES = (  # (op, operand types); i64 pow is left out: 3 ** (2**62) would run forever in ops.run
    [(op, (F64, F64)) for op in ("add", "sub", "mul", "div", "floordiv", "mod", "pow", "min", "max",
                                 "atan2", "copysign", "fmod", "math_pow", "add", "mul", "sub")]
    + [(op, (I64, I64)) for op in ("add", "sub", "mul", "div", "floordiv", "mod", "min", "max", "add", "mul")]
    + [(op, (F64,)) for op in ("neg", "abs", "sqrt", "exp", "log", "sin", "fabs", "floor", "round_even",
                               "to_i64", "to_bool", "isnan", "neg")]
    + [(op, (I64,)) for op in ("neg", "abs", "to_f64", "to_bool", "neg")]
    + [(op, (t, t)) for op in ("lt", "eq", "ne") for t in (F64, I64, BOOL)]
    + [("not", (BOOL,)), ("to_f64", (BOOL,)), ("to_i64", (BOOL,)), ("tuple", None), ("dup", None)]
    + [("muladd", None)] * 4
)


@st.composite
def programs(draw):
    """A random straight-line function over f64/i64/bool params and constants, and its arguments."""
    types = draw(st.lists(st.sampled_from([F64, F64, I64, BOOL]), min_size=1, max_size=3))
    b = Builder(*types)
    pool = list(b.params)

    def operand(t):
        choices = [v for v in pool if v.type == t]
        if choices and draw(st.integers(0, 3)):      # mostly recent values: long live chains
            return choices[-1 - draw(st.integers(0, len(choices) - 1)) // 2]
        return b.const(draw(CONSTS[t]))

    for _ in range(draw(st.integers(1, 14))):
        op, arg_types = draw(st.sampled_from(SIGNATURES))
        computed = [v for v in b.values if v.op not in ("const", "tuple")]
        if op == "dup" and computed:                 # a repeat (maybe commuted) for CSE to find
            v = draw(st.sampled_from(computed))
            args = v.args[::-1] if ops.OPS[v.op].commutative and draw(st.booleans()) else v.args
            pool.append(b.op(v.op, *args, **v.attrs))
        elif op == "muladd":                         # a product feeding an add or sub, for FMA
            m = b.op("mul", operand(F64), operand(F64))
            c = operand(F64)
            pool.append(b.op(draw(st.sampled_from(["add", "sub"])), *draw(st.permutations([m, c]))))
        elif op == "tuple":                          # a tuple and one element of it
            t = b.op("tuple", operand(F64), operand(draw(st.sampled_from([F64, I64]))))
            pool.append(b.op("getitem", t, index=draw(st.integers(0, 1))))
        elif op != "dup":
            pool.append(b.op(op, *[operand(t) for t in arg_types]))
    candidates = [v for v in pool if v.op != "param"] or pool
    results = [candidates[-1]] + draw(st.lists(st.sampled_from(candidates), max_size=2))
    fn = b.function(*results)
    args = [draw(CONSTS[t]) for t in types]
    return fn, args


def run_with_unfused_fma(fn, args):
    """ops.run, but fma(a, b, c) computed as a*b + c with two roundings, like the unfused code."""
    env = dict(zip(fn.params, args))
    for v in fn.walk():
        xs = [env[a] for a in v.args]
        env[v] = xs[0] * xs[1] + xs[2] if v.op == "fma" else ops.evaluate(v, xs)
    return env[fn.result]


def run_unfused(fn, args):
    try:
        return ("ok", run_with_unfused_fma(fn, args))
    except OpFailure as exc:
        return ("fail", exc.status)


def same_outcome(a, b) -> bool:
    return a[0] == b[0] and (same(a[1], b[1]) if a[0] == "ok" else a[1] == b[1])


@settings(max_examples=600, deadline=None)
@given(programs())
def test_optimize_preserves_semantics_bit_for_bit(case):
    fn, args = case
    expected = run(fn, args)
    for pass_ in EXACT_PASSES:
        assert same_outcome(run(checked(pass_, fn), args), expected), pass_.__name__
    for name, stage in stages(fn, fuse_fma=False):                # every stage verifies and agrees
        assert same_outcome(run(ir.verify(stage), args), expected), (name, str(fn), str(stage), args)
    out = checked(lambda f: optimize(f, fuse_fma=False), fn)
    assert len(out.body.values) <= len(fn.body.values) + 1


@settings(max_examples=400, deadline=None)
@given(programs())
def test_fused_program_is_the_same_computation(case):
    # with fma evaluated as a*b + c (two roundings) the fused program gives the original bits:
    # fusion changed where the products are added, nothing else
    fn, args = case
    out = checked(optimize, fn)
    assert same_outcome(run_unfused(out, args), run(fn, args)), (str(fn), str(out), args)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e3, 1e3), min_size=4, max_size=4), st.floats(-10, 10))
def test_fused_polynomial_within_tolerance(coefficients, x):
    # with a real fma (one rounding) results are close to CPython's
    b = Builder(F64)
    (p,) = b.params
    acc = b.const(coefficients[0])
    scale = abs(coefficients[0])
    for c in coefficients[1:]:
        acc = b.op("add", b.op("mul", acc, p), b.const(c))
        scale = scale * abs(x) + abs(c)
    fn = b.function(acc)
    out = optimize(fn)
    assert abs(ops.run(out, [x]) - ops.run(fn, [x])) <= 8 * 2.0 ** -52 * scale
