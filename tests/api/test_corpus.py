"""Differential tests of `trace` (tracer.api): every corpus function, compiled, against CPython running the same function.

For each function in `tests/support/corpus.py` (argument kinds included) and generated arguments:
- fusion off (`trace(fn, fuse_fma=False)`): the compiled call returns what CPython returns, bit
  for bit (same Python types, nested tuples included; floats by their bytes, any NaN matching any
  NaN), or raises the same exception type with the same message;
- fusion on (`trace(fn)`): the same, except that floats may differ by a relative 1e-12.
  One fused rounding can move a result further than that where the computation is ill-conditioned
  (`x*x - y*y` with x == y is 0.0 unfused and the product's rounding error fused); such inputs are
  detected by re-running CPython with every float input moved by one ulp: when that alone moves
  CPython's answer by more than 1e-13, the fused result need only match the type (or exception
  type) of one of those answers.

Each function is compiled once per mode for the whole module (specializations are cached), then
checked on hypothesis examples and on a deterministic grid of edge values.

Environment: TRACER_EXAMPLES (hypothesis examples per function, default 40), TRACER_RANDOM=1 to
draw fresh random examples instead of the derandomized, reproducible default.
"""
from __future__ import annotations

import copy
import itertools
import math
import os
import random

import pytest
from corpus import CASES
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from oracle import close_value, outcome, same_outcome, show, show_outcome

from tracer import native, trace

EXAMPLES = int(os.environ.get("TRACER_EXAMPLES", "40"))
SETTINGS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=os.environ.get("TRACER_RANDOM") != "1",
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much],
    print_blob=True,
)
EDGE_GRID_LIMIT = 1000       # combinations of edge values per function and mode
FUSED_REL_TOL = 1e-12
CONDITIONING_REL_TOL = 1e-13
ILL_CONDITIONED: list[str] = []   # fused checks that fell back to comparing types only

# one compiled callable per function and mode, for the whole module
EXACT = {c.name: trace(c.fn, fuse_fma=False) for c in CASES}
FUSED = {c.name: trace(c.fn) for c in CASES}
IDS = [c.name for c in CASES]


def test_corpus_is_big_enough():
    assert len(CASES) >= 60
    assert len(set(IDS)) == len(IDS), "corpus functions need distinct names"


# ------------------------------------------------------------------------------ outcomes
def same_shape(a, b) -> bool:
    """Same Python types all the way down (values ignored)."""
    if type(a) is not type(b):
        return False
    if type(a) in (tuple, list):
        return len(a) == len(b) and all(same_shape(x, y) for x, y in zip(a, b))
    return True


# ------------------------------------------------------------------------------ the checks
def check_exact(case, args):
    expected = outcome(case.fn, args)
    got = outcome(EXACT[case.name], args)
    assert same_outcome(got, expected), (
        f"{case.name}{show(tuple(args))} with fuse_fma=False:\n"
        f"  CPython  {show_outcome(expected)}\n  compiled {show_outcome(got)}")
    assert not native.installed(), "the PEP 523 hook was left installed after a call"


def perturbed(x, directions):
    """`x` with every nonzero finite float moved one ulp (up or down, by `directions`)."""
    if type(x) is float:
        if x == 0.0 or not math.isfinite(x):
            return x
        return math.nextafter(x, math.inf if next(directions) > 0 else -math.inf)
    if type(x) is list:
        return [perturbed(v, directions) for v in x]
    if type(x) is tuple:
        return tuple(perturbed(v, directions) for v in x)
    if hasattr(x, "__dict__") and not isinstance(x, type):
        new = copy.copy(x)
        new.__dict__ = {k: perturbed(v, directions) for k, v in vars(x).items()}
        return new
    return x


def neighbours(args):
    patterns = [(1,), (-1,), (1, -1), (-1, 1), (1, 1, -1), (-1, 1, 1)]
    rng = random.Random(repr(args))
    patterns += [tuple(rng.choice((1, -1)) for _ in range(7)) for _ in range(2)]
    return [perturbed(list(args), itertools.cycle(p)) for p in patterns]


def check_fused(case, args):
    expected = outcome(case.fn, args)
    got = outcome(FUSED[case.name], args)
    assert not native.installed(), "the PEP 523 hook was left installed after a call"
    if same_outcome(got, expected, close_value, rel_tol=FUSED_REL_TOL):
        return
    nearby = [outcome(case.fn, p) for p in neighbours(args)]
    ill_conditioned = not all(same_outcome(o, expected, close_value, rel_tol=CONDITIONING_REL_TOL) for o in nearby)
    message = (f"{case.name}{show(tuple(args))} with fuse_fma=True:\n"
               f"  CPython  {show_outcome(expected)}\n  compiled {show_outcome(got)}")
    assert ill_conditioned, message + "\n  (CPython's answer is stable under 1-ulp input changes)"
    ILL_CONDITIONED.append(message)   # the fused result is only checked for its type
    candidates = [expected, *nearby]
    if got[0] == "raise":
        assert any(o[0] == "raise" and o[1] is got[1] for o in candidates), message
    else:
        assert any(o[0] == "return" and same_shape(o[1], got[1]) for o in candidates), message


def arguments(case, fused: bool):
    return st.tuples(*(k.strategy(fused) for k in case.kinds))


def edge_grid(case, fused: bool) -> list[tuple]:
    grid = list(itertools.product(*(k.edges(fused) for k in case.kinds)))
    if len(grid) > EDGE_GRID_LIMIT:
        grid = random.Random(case.name).sample(grid, EDGE_GRID_LIMIT)
    return grid


# ------------------------------------------------------------------------------ the tests
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_exact_matches_cpython(case):
    @SETTINGS
    @given(arguments(case, fused=False))
    def run(args):
        check_exact(case, args)
    run()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_exact_matches_cpython_on_edge_grid(case):
    for args in edge_grid(case, fused=False):
        check_exact(case, args)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fused_matches_cpython_within_tolerance(case):
    @SETTINGS
    @given(arguments(case, fused=True))
    def run(args):
        check_fused(case, args)
    run()


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_fused_matches_cpython_on_edge_grid(case):
    for args in edge_grid(case, fused=True):
        check_fused(case, args)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_function_was_compiled(case):
    """The checks above ran compiled code, not only Python fallbacks."""
    for table in (EXACT, FUSED):
        compiled = table[case.name]
        if not compiled.specializations:
            for args in edge_grid(case, fused=table is FUSED)[:50]:
                outcome(compiled, args)
        assert compiled.specializations, f"{case.name}: no specialization was ever compiled"
