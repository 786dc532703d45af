"""The derivative rules of the op table (the `vjp=` rules of tracer.ir.scalar_ops, declared through
tracer.ir.registry), applied by tracer.transforms.autodiff: every op's first and second derivative
against central finite differences, through `grad` on Python code and op by op on hand-built IR run
by the IR interpreter (tracer.ir.ops.run); every f64 op has a rule, and every rule is checked.

The choices at non-differentiable points (abs'(0) = 0, sqrt'(0) = inf, ...) are the documented
ones of tracer.ir.scalar_ops (PyTorch's and JAX's).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import pytest
from gradient_checks import (
    CASES,
    EXAMPLES,
    FIRST,
    FREE,
    FUSE,
    OFF_HALF,
    POSITIVE,
    POW_ARGS,
    SECOND,
    apart,
    args,
    arity,
    assert_close,
    bits,
    central_difference,
    gradient_of,
    hessian_rows_of,
    interval,
    off_integer,
    one,
    quotient_pair,
    signed,
)
from hypothesis import given, settings
from hypothesis import strategies as st
from ir_builder import Builder

from tracer import ir, trace, vjp
from tracer.ir import F64, ops
from tracer.transforms.autodiff import grad_function
from tracer.transforms.passes import optimize


@FUSE
@pytest.mark.parametrize("name", CASES)
def test_first_derivative_matches_finite_differences(name, fuse_fma):
    case, gradient = CASES[name], gradient_of(name, fuse_fma)

    @EXAMPLES
    @given(case.args)
    def check(xs):
        grads = gradient(*xs)
        assert len(grads) == len(xs)
        scale = abs(case.fn(*xs))
        for i, g in enumerate(grads):
            fd = central_difference(case.fn, xs, i, FIRST["h"])
            assert_close(g, fd, rel=FIRST["rel"], abs_=FIRST["abs_"], scale=scale,
                         what=f"d {name} / d arg{i} at {xs}")
    check()
    assert len(gradient.specializations) == 1       # one compiled gradient served every example


@FUSE
@pytest.mark.parametrize("name", CASES)
def test_second_derivative_matches_finite_differences(name, fuse_fma):
    """grad(grad(f, i), j) against central differences of the compiled first derivative."""
    case, gradient, rows = CASES[name], gradient_of(name, fuse_fma), hessian_rows_of(name, fuse_fma)

    @EXAMPLES
    @given(case.args)
    def check(xs):
        hessian = [row(*xs) for row in rows]
        scale = max(abs(g) for g in gradient(*xs))
        for j in range(len(xs)):
            column = central_difference(gradient, xs, j, SECOND["h"])
            for i in range(len(xs)):
                assert_close(hessian[i][j], column[i], rel=SECOND["rel"], abs_=SECOND["abs_"], scale=scale,
                             what=f"d2 {name} / d arg{i} d arg{j} at {xs}")
    check()


def test_rounding_gives_an_exact_zero_gradient():
    for name in ["floor", "ceil", "trunc", "round", "floordiv"]:
        fn = CASES[name].fn
        grads = gradient_of(name, True)(*[2.3] * arity(fn))
        assert all(g == 0.0 for g in grads), (name, grads)


# --------------------------------------------------------------- the same, op by op on the IR
# Every op with a derivative rule, built by hand and run by the IR interpreter (`ops.run`): this
# reaches the ops Python code never produces directly (fdiv, ieee_pow and ieee_log, which autodiff
# itself emits, fma from the fusion pass, select, floor ...), with no compiling.
def _f64_arity(op) -> int | None:
    """The number of operands with which `op`'s type rule takes all-f64 operands to an f64."""
    for n in (1, 2, 3):
        try:
            if op.result_type((F64,) * n, {}) == F64:
                return n
        except Exception:       # no overload, or a structural op that needs attrs
            pass
    return None


STRUCTURAL = {"param", "const", "tuple", "getitem"}
OPS_F64_ARITY = {name: (F64,) * n for name, op in ops.OPS.items()
                 if name not in STRUCTURAL and (n := _f64_arity(op)) is not None}


# ops on arrays only: their rules are checked in tests/frontend/test_array_ops.py
ARRAY_ONLY_OPS = {"load", "index", "broadcast_in_dim", "transpose", "reduce", "argreduce", "matmul", "full",
                  "iota", "pack", "copy", "reshape", "store", "writeback", "slice",
                  "scan",   # scan: tests/frontend/test_numpy_more.py checks its rule against finite differences
                  "sort", "permute",   # tests/frontend/test_numpy_sort.py checks theirs
                  "mask_select", "mask_update",   # tests/frontend/test_numpy_masks.py checks theirs
                  "index_select", "index_update", "index_add",   # tests/frontend/test_numpy_take.py checks theirs
                  # np.linalg: tests/transforms/test_linalg_gradients.py checks theirs
                  "linalg_solve", "linalg_inv", "linalg_det", "linalg_slogdet", "linalg_cholesky", "linalg_eigh",
                  "linalg_eigvalsh", "linalg_qr", "linalg_svd"}


@dataclass(frozen=True)
class IRCase:
    args: st.SearchStrategy
    build: Callable | None = None    # (builder, *params) -> result; default: the op on the params


def _select_min(b, x, y):
    return b.op("select", b.op("lt", x, y), x, y)


IR_CASES = {
    "add": IRCase(args(FREE, FREE)),
    "sub": IRCase(args(FREE, FREE)),
    "mul": IRCase(args(FREE, FREE)),
    "div": IRCase(args(FREE, signed(0.5, 10.0))),
    "fdiv": IRCase(args(FREE, signed(0.5, 10.0))),
    "floordiv": IRCase(quotient_pair()),
    "mod": IRCase(quotient_pair()),
    "pow": IRCase(POW_ARGS),
    "ieee_pow": IRCase(POW_ARGS),
    "math_pow": IRCase(POW_ARGS),
    "np_pow": IRCase(POW_ARGS),
    "neg": IRCase(one(FREE)),
    "abs": IRCase(one(signed(0.1, 10.0))),
    "fabs": IRCase(one(signed(0.1, 10.0))),
    "min": IRCase(apart()),
    "max": IRCase(apart()),
    "maximum": IRCase(apart()),
    "minimum": IRCase(apart()),
    "fma": IRCase(args(FREE, FREE, FREE)),
    "select": IRCase(apart(), _select_min),
    "sqrt": IRCase(one(POSITIVE)),
    "exp": IRCase(one(interval(-5.0, 5.0))),
    "np_exp": IRCase(one(interval(-5.0, 5.0))),
    "np_tanh": IRCase(one(interval(-3.0, 3.0))),
    "np_log": IRCase(one(interval(0.1, 5.0))),
    "log": IRCase(one(POSITIVE)),
    "ieee_log": IRCase(one(POSITIVE)),
    "log2": IRCase(one(POSITIVE)),
    "log10": IRCase(one(POSITIVE)),
    "log1p": IRCase(one(interval(-0.9, 10.0))),
    "expm1": IRCase(one(interval(-5.0, 5.0))),
    "sin": IRCase(one(FREE)),
    "cos": IRCase(one(FREE)),
    "tan": IRCase(one(interval(-1.2, 1.2))),
    "asin": IRCase(one(interval(-0.9, 0.9))),
    "acos": IRCase(one(interval(-0.9, 0.9))),
    "atan": IRCase(one(FREE)),
    "sinh": IRCase(one(interval(-5.0, 5.0))),
    "cosh": IRCase(one(interval(-5.0, 5.0))),
    "tanh": IRCase(one(interval(-3.0, 3.0))),
    "atan2": IRCase(args(signed(0.1, 10.0), FREE)),
    "copysign": IRCase(args(signed(0.1, 10.0), signed(0.1, 10.0))),
    "fmod": IRCase(quotient_pair()),
    "hypot": IRCase(args(signed(0.1, 10.0), FREE)),
    "c_hypot": IRCase(args(signed(0.1, 10.0), FREE)),
    "floor": IRCase(one(off_integer())),
    "ceil": IRCase(one(off_integer())),
    "trunc": IRCase(one(off_integer())),
    "round_even": IRCase(one(OFF_HALF)),
    "erf": IRCase(one(interval(-3.0, 3.0))),
    "erfc": IRCase(one(interval(-3.0, 3.0))),
    "cbrt": IRCase(one(signed(0.1, 10.0))),
    "exp2": IRCase(one(interval(-5.0, 5.0))),
    "remainder": IRCase(args(interval(0.1, 0.4), interval(1.0, 2.0))),
    "nextafter": IRCase(args(FREE, FREE)),
    "numpy_scalar_check": IRCase(args(FREE, FREE, FREE)),
    "gamma": IRCase(one(st.one_of(interval(0.1, 6.0), off_integer().filter(lambda x: -4.0 < x < 0.0)))),
    "lgamma": IRCase(one(st.one_of(interval(0.1, 20.0), off_integer().filter(lambda x: -4.0 < x < 0.0)))),
    "frexp_mantissa": IRCase(one(st.one_of(interval(0.55, 0.95), interval(1.1, 1.9), interval(-7.9, -4.1)))),
}

# ops with a rule that IR_CASES cannot build (an i64 operand), checked by a test of their own
CHECKED_ELSEWHERE = {"ldexp": "test_ldexp_scales_its_gradient", "round_digits": "test_rounding_to_digits_has_no_slope"}
# f64 ops that are not differentiable, and why
NO_RULE = {"fsum": "math.fsum takes any number of operands, so no one-rule-per-operand vjp (NOT_DIFFERENTIABLE)"}


def ir_function(name: str) -> ir.Function:
    """The op applied to f64 parameters (select: `x if x < y else y`)."""
    case = IR_CASES[name]
    n = 2 if name == "select" else len(OPS_F64_ARITY[name])
    b = Builder(*[F64] * n, name=name)
    build = case.build or (lambda builder, *ps: builder.op(name, *ps))
    return b.function(build(b, *b.params))


def interpreted(fn: ir.Function, fuse_fma: bool):
    """`fn` after the passes, as a Python callable through the IR interpreter."""
    optimized = ir.verify(optimize(fn, fuse_fma))
    return lambda *xs: ops.run(optimized, list(xs))


@FUSE
@pytest.mark.parametrize("name", IR_CASES)
def test_op_rule_first_and_second_order_on_ir(name, fuse_fma):
    fn = ir_function(name)
    n = len(fn.params)
    forward = interpreted(fn, fuse_fma)
    first = interpreted(grad_function(fn, list(range(n)), as_tuple=True), fuse_fma)
    rows = [interpreted(grad_function(grad_function(fn, [i]), list(range(n)), as_tuple=True), fuse_fma)
            for i in range(n)]

    @EXAMPLES
    @given(IR_CASES[name].args)
    def check(xs):
        grads = first(*xs)
        for i in range(n):
            fd = central_difference(forward, xs, i, FIRST["h"])
            assert_close(grads[i], fd, rel=FIRST["rel"], abs_=FIRST["abs_"], scale=abs(forward(*xs)),
                         what=f"d {name} / d arg{i} at {xs}")
        scale = max(abs(g) for g in grads)
        for j in range(n):
            column = central_difference(first, xs, j, SECOND["h"])
            for i in range(n):
                assert_close(rows[i](*xs)[j], column[i], rel=SECOND["rel"], abs_=SECOND["abs_"],
                             scale=scale, what=f"d2 {name} / d arg{i} d arg{j} at {xs}")
    check()


# ================================================================================ 2. rule coverage
def test_every_f64_op_has_a_derivative_rule():
    """An op that maps f64 operands to an f64 is differentiable in principle, so it needs a
    `vjp` entry (one rule per operand; None for a piecewise-constant operand). A new op without
    one fails here rather than at the first grad() that meets it."""
    assert {"add", "sin", "fma", "floor", "hypot"} <= set(OPS_F64_ARITY)      # the probe works
    missing = [name for name in OPS_F64_ARITY if ops.OPS[name].vjp is None and name not in NO_RULE]
    assert not missing, f"ops without a vjp rule: {missing}"
    wrong_arity = [name for name, types in OPS_F64_ARITY.items()
                   if name not in NO_RULE and len(ops.OPS[name].vjp) != len(types)]
    assert not wrong_arity, f"ops whose vjp has not one rule per operand: {wrong_arity}"


def test_every_op_with_a_rule_is_checked_against_finite_differences():
    """... and the rule is checked: every op with a vjp has an entry in IR_CASES above."""
    with_rules = {name for name, op in ops.OPS.items() if op.vjp is not None and name not in ARRAY_ONLY_OPS}
    assert with_rules - set(IR_CASES) - set(CHECKED_ELSEWHERE) == set(), "add these ops to IR_CASES"
    assert set(OPS_F64_ARITY) - set(NO_RULE) <= set(IR_CASES)


def test_ldexp_scales_its_gradient():
    """d/dx ldexp(x, e) = 2**e, against central differences."""
    import math

    from tracer import grad

    def scaled(x, e):
        return math.ldexp(x, e) * x
    for x, e in [(1.7, 3), (-0.3, -2), (5.0, 0), (1e-3, 40)]:
        want = central_difference(scaled, (x, e), 0, 1e-6)
        assert_close(grad(scaled)(x, e), want, rel=FIRST["rel"], abs_=FIRST["abs_"], what=f"ldexp at {x}, {e}")


def test_rounding_to_digits_has_no_slope():
    """round(x, n) is piecewise constant: its gradient is 0 (the product rule's other part stays)."""
    from tracer import grad

    def rounded(x):
        return round(x, 2) * x
    for x in (1.234, -0.5, 3.0):
        assert grad(rounded)(x) == round(x, 2)


@pytest.mark.parametrize("name", CASES)
def test_vjp_pullback_matches_grad(name):
    """The split forward/backward (vjp_functions) computes the joint function's gradient: with
    fusion off the passes are exact, so they agree bit for bit."""
    case, gradient = CASES[name], gradient_of(name, False)
    unfused = trace(case.fn, fuse_fma=False)          # vjp takes fuse_fma from the function

    @settings(max_examples=10, deadline=None)
    @given(case.args, interval(-3.0, 3.0))
    def check(xs, ct):
        value, pullback = vjp(unfused, *xs)
        assert bits(value) == bits(case.fn(*xs))
        expected = gradient(*xs)
        assert [bits(g) for g in pullback(1.0)] == [bits(g) for g in expected]
        for g, e in zip(pullback(ct), expected):       # linear in the cotangent
            assert_close(g, ct * e, rel=1e-12, abs_=1e-10, scale=max(abs(x) for x in expected))
    check()
