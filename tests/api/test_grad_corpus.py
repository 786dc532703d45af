"""Gradient tests: every function of `tests/support/grad_corpus.py`, differentiated by the tracer (tracer.gradients).

For each corpus entry and each of its points:
- grad (tuple argnums) against central finite differences of the plain Python function
  (h = 1e-6 * max(1, |x|), rel 1e-5 / abs 1e-6), and grad with an int argnum against the tuple form;
- value_and_grad's value against CPython's: bit for bit with fuse_fma=False (NaN matches NaN),
  within a relative 1e-12 with fusion on; its gradient against grad's;
- vjp: pullback(1.0) against grad with fusion on (closely) and against value_and_grad with
  fusion off (bit for bit: the split and the joint gradient round alike),
  the float arguments outside argnums against finite differences; for entries with int or bool
  arguments, vjp (which differentiates every argument) must raise TypeError;
- second derivatives d2f/dx0^2 (entries differentiating argument 0): grad(grad(f, 0), 0) against
  central finite differences of the compiled grad(f, 0) (rel 1e-4 / abs 1e-5);
- with JAX installed: jax.grad of the same function, re-bound to globals whose `math` is a
  jax.numpy shim, within a relative 1e-10.

Each compiled callable is made once per entry (the `compiled` cache below) and reused across
points; specializations are cached by the dispatcher.
"""
from __future__ import annotations

import math
import types

import pytest
from grad_corpus import GRAD_CASES
from oracle import central_difference, close, float_bits

from tracer import grad, trace, value_and_grad, vjp

FD_REL, FD_ABS = 1e-5, 1e-6
FD2_REL, FD2_ABS = 1e-4, 1e-5
FUSED_REL = 1e-12
SAME_REL, SAME_ABS = 1e-12, 1e-14      # two compiled forms of one gradient, fusion on
JAX_REL, JAX_ABS = 1e-10, 1e-13

IDS = [c.name for c in GRAD_CASES]


# ------------------------------------------------------------------------------ compiled once
_COMPILED: dict = {}


def compiled(case, kind: str):
    """One compiled transform of `case.fn` per kind, shared by all tests and points."""
    key = (case.name, kind)
    if key not in _COMPILED:
        fn, argnums = case.fn, case.argnums
        make = {
            "grad": lambda: grad(fn, argnums),
            "value_and_grad": lambda: value_and_grad(fn, argnums),
            "value_and_grad_exact": lambda: value_and_grad(fn, argnums, fuse_fma=False),
            "grad0": lambda: grad(fn, 0),
            "grad_grad0": lambda: grad(compiled(case, "grad0"), 0),
            "trace_exact": lambda: trace(fn, fuse_fma=False),
        }[kind]
        _COMPILED[key] = make()
    return _COMPILED[key]


def params(test: str, cases=GRAD_CASES):
    """pytest params for `cases`, with the xfail marks the corpus records for `test`."""
    out = []
    for c in cases:
        marks = [pytest.mark.xfail(strict=True, reason=c.xfail[test])] if test in c.xfail else []
        out.append(pytest.param(c, id=c.name, marks=marks))
    return out


# ------------------------------------------------------------------------------ helpers
def same_float(a, b) -> bool:
    """Bit for bit (NaN matches any NaN); both must be Python floats."""
    if type(a) is not float or type(b) is not float:
        return False
    return (math.isnan(a) and math.isnan(b)) or float_bits(a) == float_bits(b)


def show(x) -> str:
    if type(x) is float:
        return f"{x!r} ({float_bits(x)[::-1].hex()})"
    if type(x) is tuple:
        return "(" + ", ".join(show(v) for v in x) + ")"
    return repr(x)


def float_positions(case) -> list[int]:
    return [i for i in range(len(case.points[0])) if all(type(p[i]) is float for p in case.points)]


def assert_gradients_close(case, args, got, expected, rel, abs_, what):
    assert type(got) is tuple and len(got) == len(expected), f"{case.name}{args}: {what}: got {got!r}"
    for a, g, e in zip(case.argnums, got, expected):
        assert type(g) is float, f"{case.name}{args}: {what}: d/d arg {a} is {type(g).__name__}"
        assert close(g, e, rel, abs_), (
            f"{case.name}{show(args)} d/d arg {a}: {what}\n  compiled {show(g)}\n  expected {show(e)}")


# ------------------------------------------------------------------------------ the corpus
def test_corpus_is_big_enough():
    assert len(GRAD_CASES) >= 45
    assert len(set(IDS)) == len(IDS), "corpus functions need distinct names"
    assert sum(c.jax for c in GRAD_CASES) >= 30, "at least 30 entries are compared with JAX"
    for c in GRAD_CASES:
        assert c.points, c.name
        for a in c.argnums:
            assert all(type(p[a]) is float for p in c.points), f"{c.name}: argnum {a} is not a float"


# ------------------------------------------------------------------------------ (a) finite differences
@pytest.mark.parametrize("case", params("fd"))
def test_grad_matches_finite_differences(case):
    g = compiled(case, "grad")
    for args in case.points:
        got = g(*args)
        expected = tuple(central_difference(case.fn, args, a) for a in case.argnums)
        assert_gradients_close(case, args, got, expected, FD_REL, FD_ABS, "grad vs central differences")


@pytest.mark.parametrize("case", params("int_argnum", [c for c in GRAD_CASES if 0 in c.argnums]))
def test_int_argnum_matches_tuple_argnums(case):
    g, g0 = compiled(case, "grad"), compiled(case, "grad0")
    k = case.argnums.index(0)
    for args in case.points:
        got, expected = g0(*args), g(*args)[k]
        assert type(got) is float, f"{case.name}{args}: grad(f, 0) returned {got!r}"
        assert close(got, expected, SAME_REL, SAME_ABS), (
            f"{case.name}{show(args)}: grad(f, 0) {show(got)} != grad(f, argnums)[{k}] {show(expected)}")


# ------------------------------------------------------------------------------ (b) values
@pytest.mark.parametrize("case", params("value_exact"))
def test_value_and_grad_value_is_exact_unfused(case):
    vg = compiled(case, "value_and_grad_exact")
    for args in case.points:
        value, gradient = vg(*args)
        expected = case.fn(*args)
        assert same_float(value, expected), (
            f"{case.name}{show(args)} value_and_grad(fuse_fma=False) value:\n"
            f"  compiled {show(value)}\n  CPython  {show(expected)}")
        assert type(gradient) is tuple and len(gradient) == len(case.argnums)


@pytest.mark.parametrize("case", params("value_fused"))
def test_value_and_grad_value_is_close_fused(case):
    vg, g = compiled(case, "value_and_grad"), compiled(case, "grad")
    for args in case.points:
        value, gradient = vg(*args)
        expected = case.fn(*args)
        assert type(value) is float and close(value, expected, FUSED_REL, 0.0), (
            f"{case.name}{show(args)} value_and_grad value:\n  compiled {show(value)}\n  CPython  {show(expected)}")
        assert_gradients_close(case, args, gradient, g(*args), SAME_REL, SAME_ABS, "value_and_grad vs grad")


# ------------------------------------------------------------------------------ (c) vjp
@pytest.mark.parametrize("case", params("vjp"))
def test_vjp_pullback_matches_grad(case):
    if case.has_int_args:
        for args in case.points:
            with pytest.raises(TypeError, match="only float arguments .*can be differentiated"):
                vjp(case.fn, *args)
        return
    g, vg_exact = compiled(case, "grad"), compiled(case, "value_and_grad_exact")
    for args in case.points:
        value, pullback = vjp(case.fn, *args)
        expected_value = case.fn(*args)
        assert type(value) is float and close(value, expected_value, FUSED_REL, 0.0), (
            f"{case.name}{show(args)} vjp value {show(value)}, CPython {show(expected_value)}")
        cotangents = pullback(1.0)
        assert type(cotangents) is tuple and len(cotangents) == len(args)
        assert_gradients_close(case, args, tuple(cotangents[a] for a in case.argnums), g(*args),
                               SAME_REL, SAME_ABS, "vjp pullback(1.0) vs grad")
        for i in range(len(args)):              # the arguments grad was not asked about
            if i not in case.argnums:
                fd = central_difference(case.fn, args, i)
                assert close(cotangents[i], fd, FD_REL, FD_ABS), (
                    f"{case.name}{show(args)} vjp d/d arg {i}: {show(cotangents[i])}, differences {show(fd)}")

        # unfused: the split (forward/backward) gradient rounds exactly like the joint one
        value, pullback = vjp(compiled(case, "trace_exact"), *args)
        assert same_float(value, expected_value), (
            f"{case.name}{show(args)} vjp(fuse_fma=False) value {show(value)}, CPython {show(expected_value)}")
        cotangents, (_, expected) = pullback(1.0), vg_exact(*args)
        for a, e in zip(case.argnums, expected):
            assert same_float(cotangents[a], e), (
                f"{case.name}{show(args)} d/d arg {a}, fuse_fma=False: vjp {show(cotangents[a])}, "
                f"value_and_grad {show(e)}")


# ------------------------------------------------------------------------------ (d) second derivatives
@pytest.mark.parametrize("case", params("second", [c for c in GRAD_CASES if 0 in c.argnums]))
def test_second_derivative_matches_finite_differences(case):
    g0, gg0 = compiled(case, "grad0"), compiled(case, "grad_grad0")
    for args in case.points:
        got = gg0(*args)
        expected = central_difference(g0, args, 0)
        assert type(got) is float and close(got, expected, FD2_REL, FD2_ABS), (
            f"{case.name}{show(args)} d2/d arg0^2:\n  grad(grad(f)) {show(got)}\n  differences   {show(expected)}")


# ------------------------------------------------------------------------------ (e) JAX
_TWINS: dict = {}


def jax_twin(fn):
    """`fn` re-bound to a copy of its module's globals where `math` is a jax.numpy shim, and every
    module-level function (the helpers it calls) is re-bound the same way."""
    if fn in _TWINS:
        return _TWINS[fn]
    import jax.numpy as jnp
    shim = types.SimpleNamespace(
        sin=jnp.sin, cos=jnp.cos, tan=jnp.tan, asin=jnp.arcsin, acos=jnp.arccos, atan=jnp.arctan,
        sinh=jnp.sinh, cosh=jnp.cosh, tanh=jnp.tanh, exp=jnp.exp, expm1=jnp.expm1, log=jnp.log,
        log1p=jnp.log1p, log2=jnp.log2, log10=jnp.log10, sqrt=jnp.sqrt, atan2=jnp.arctan2,
        hypot=jnp.hypot, pow=jnp.power, fabs=jnp.abs, pi=math.pi, e=math.e)
    module_globals = fn.__globals__
    twin_globals = dict(module_globals, math=shim)

    def rebind(f):
        return types.FunctionType(f.__code__, twin_globals, f.__name__, f.__defaults__, f.__closure__)
    for name, value in module_globals.items():
        if isinstance(value, types.FunctionType) and value.__globals__ is module_globals:
            twin_globals[name] = rebind(value)
    _TWINS[fn] = rebind(fn)
    return _TWINS[fn]


@pytest.fixture(scope="module")
def jax():
    jax = pytest.importorskip("jax", reason="JAX is not installed: no comparison with jax.grad")
    jax.config.update("jax_enable_x64", True)
    return jax


@pytest.mark.parametrize("case", params("jax", [c for c in GRAD_CASES if c.jax]))
def test_grad_matches_jax(case, jax):
    g = compiled(case, "grad")
    jax_grad = jax.grad(jax_twin(case.fn), argnums=case.argnums)
    for args in case.points:
        expected = tuple(float(v) for v in jax_grad(*args))
        assert_gradients_close(case, args, g(*args), expected, JAX_REL, JAX_ABS, "grad vs jax.grad")
