"""Gradients (tracer.gradients) of the differential corpus (`tests/support/corpus.py`), against finite differences.

For every corpus function with float arguments, at seeded random points where CPython computes a
finite float result:
- a float result: `grad` with respect to every float argument matches central differences,
  `value_and_grad`'s value is CPython's value bit for bit (fusion off), `vjp`'s pullback(1.0)
  matches `grad`, and `grad(grad(f))` matches central differences of the compiled `grad(f)`;
- a tuple result: `vjp`'s pullback of a random cotangent matches central differences of
  sum(ct_i * result_i) over the float entries.
Points where the function is not smooth (a floor, a `%`, a `min` switching sides) show up as finite
differences that change with the step size; those points are skipped, not compared.
Functions returning ints or bools have no gradient; `grad` of them must raise `TypeError`.
"""
from __future__ import annotations

import math
import random

import pytest
from corpus import CASES, I64, NUM, SMALL_NUM, B, Count, F, I, ListOf, ObjectOf, TupleOf

from tracer import grad, value_and_grad, vjp

POINTS = 6            # random points tried per function
REL, ABS = 2e-5, 1e-6
SECOND_REL, SECOND_ABS = 2e-4, 1e-5


def _value(kind, rng: random.Random):
    if kind in (F, NUM):
        return rng.choice([-1, 1]) * rng.uniform(0.3, 2.5)
    if kind in (I, I64, SMALL_NUM):
        return rng.randint(2, 4)
    if kind is B:
        return True
    if isinstance(kind, Count):
        return rng.randint(kind.lo, kind.hi)
    if isinstance(kind, ListOf):
        return [_value(kind.item, rng) for _ in range(kind.n)]
    if isinstance(kind, TupleOf):
        return tuple(_value(kind.item, rng) for _ in range(kind.n))
    if isinstance(kind, ObjectOf):
        return kind.make(*(_value(k, rng) for k in kind.kinds))
    raise AssertionError(kind)


def _float_leaves(x) -> list[float] | None:
    """The floats of a result (None if it holds no float)."""
    if type(x) is float:
        return [x]
    if type(x) is tuple:
        leaves = [leaf for item in x for leaf in (_float_leaves(item) or [])]
        return leaves or None
    return None


def _call(fn, args):
    try:
        return fn(*args)
    except (ArithmeticError, ValueError):
        return None


def _central(f, args, i, h):
    up, down = list(args), list(args)
    up[i] += h
    down[i] -= h
    a, b = _call(f, up), _call(f, down)
    if a is None or b is None:
        return None
    return (a - b) / (2 * h)


def _stable_derivative(f, args, i):
    """d f / d args[i] by central differences, or None where f is not smooth near args."""
    h = 1e-6 * max(1.0, abs(args[i]))
    d1, d2 = _central(f, args, i, h), _central(f, args, i, h / 4)
    if d1 is None or d2 is None or not (math.isfinite(d1) and math.isfinite(d2)):
        return None
    if abs(d1 - d2) > 1e-4 * max(1.0, abs(d1)):
        return None
    return d2


def _close(a, b, rel, abs_):
    return abs(a - b) <= max(abs_, rel * max(abs(a), abs(b)))


def _points(case, rng):
    """Argument tuples where CPython gives a finite float result (or tuple holding floats)."""
    for _ in range(POINTS * 5):
        args = tuple(_value(k, rng) for k in case.kinds)
        out = _call(case.fn, args)
        leaves = _float_leaves(out)
        if leaves is not None and all(math.isfinite(x) for x in leaves):
            yield args, out


FLOAT_CASES = [c for c in CASES if any(k in (F, NUM) for k in c.kinds)]
CHECKED: dict[str, str] = {}


@pytest.mark.parametrize("case", FLOAT_CASES, ids=[c.name for c in FLOAT_CASES])
def test_gradient_of_corpus_function(case):
    rng = random.Random(case.name)
    argnums = tuple(i for i, k in enumerate(case.kinds) if k in (F, NUM))
    sample_out = next((out for _, out in _points(case, rng)), None)
    if sample_out is None:                     # an int or bool result: no gradient
        args = next(a for a in (tuple(_value(k, rng) for k in case.kinds) for _ in range(50))
                    if _call(case.fn, a) is not None)
        with pytest.raises(TypeError, match="return a float"):
            grad(case.fn, argnums)(*args)
        CHECKED[case.name] = "not a float result: grad raises TypeError"
        return
    if type(sample_out) is float:
        _check_scalar(case, argnums, rng)
    else:
        _check_tuple(case, argnums, rng)


def _check_scalar(case, argnums, rng):
    g = grad(case.fn, argnums)
    vg = value_and_grad(case.fn, argnums, fuse_fma=False)
    all_float = len(argnums) == len(case.kinds)
    compared = 0
    for args, out in list(_points(case, rng))[:POINTS]:
        grads = g(*args)
        value, grads_unfused = vg(*args)
        assert value == out or (math.isnan(value) and math.isnan(out)), (args, value, out)
        for i, gi, gu in zip(argnums, grads, grads_unfused):
            assert _close(gi, gu, 1e-9, 1e-12), (args, i, gi, gu)
            fd = _stable_derivative(case.fn, list(args), i)
            if fd is not None:
                assert _close(gi, fd, REL, ABS), (case.name, args, i, gi, fd)
                compared += 1
        if all_float:
            _, pullback = vjp(case.fn, *args)
            assert all(_close(a, b, 1e-9, 1e-12) for a, b in zip(pullback(1.0), grads)), (args, grads)
        # second derivative along the first float argument
        i = argnums[0]
        first = grad(case.fn, i)
        gg = grad(first, i)
        second = gg(*args)
        fd2 = _stable_derivative(lambda *a: first(*a), list(args), i)
        if fd2 is not None and math.isfinite(second):
            assert _close(second, fd2, SECOND_REL, SECOND_ABS), (case.name, args, second, fd2)
    CHECKED[case.name] = f"scalar, {compared} partials compared"


def _check_tuple(case, argnums, rng):
    if len(argnums) != len(case.kinds):        # vjp differentiates every argument
        with pytest.raises(TypeError):
            vjp(case.fn, *next(_points(case, rng))[0])
        CHECKED[case.name] = "tuple with int arguments: vjp raises TypeError"
        return
    with pytest.raises(TypeError):             # grad needs a float output
        grad(case.fn, argnums)(*next(_points(case, rng))[0])
    compared = 0
    for args, out in list(_points(case, rng))[:POINTS]:
        ct = _cotangent_like(out, rng)
        value, pullback = vjp(case.fn, *args)
        grads = pullback(ct)

        def weighted(*a):
            r = case.fn(*a)
            return sum(c * x for c, x in zip(_float_leaves(ct), _float_leaves(r)))
        for i, gi in enumerate(grads):
            fd = _stable_derivative(weighted, list(args), i)
            if fd is not None:
                assert _close(gi, fd, REL, ABS), (case.name, args, ct, i, gi, fd)
                compared += 1
    CHECKED[case.name] = f"tuple, {compared} partials compared"


def _cotangent_like(out, rng):
    if type(out) is tuple:
        return tuple(_cotangent_like(x, rng) for x in out)
    return rng.uniform(-1.5, 1.5) if type(out) is float else out


def test_enough_of_the_corpus_was_differentiated():
    """Run last (pytest keeps file order): most float functions really were compared."""
    if len(CHECKED) < len(FLOAT_CASES) // 2:
        pytest.skip("run with the whole file to count")
    assert len(CHECKED) >= 40, CHECKED
