"""The control-flow corpus: plain Python functions that branch and loop on the values they compute.

Every function here is ordinary Python that CPython runs as it is; `tests/api/test_control_flow.py`
compiles each one with `trace` and checks it against CPython on every argument tuple listed with it
(and, for the differentiable ones, `grad` against central finite differences). The functions are
written the way people write them: `if`/`elif`/`else` on floats, conditional expressions,
`and`/`or`/`not` (short-circuit included), early `return` from nested `if`s and from inside loops,
`while` loops that run to a tolerance, `for` over `range` with bounds and steps computed at run
time, `break`/`continue`, `for ... else` / `while ... else`, `raise ValueError(...)`, `assert`,
and variables assigned on only some paths (`UnboundLocalError` on the others).

A function is registered with `@cf_case(args, argnums=None, points=(), fused_rel=1e-12)`
(`cf_case.py`):

    args       argument tuples (floats and ints) that, together, take every branch: each side of
               every comparison, the boundaries where a comparison is equal, 0.0 and -0.0,
               negatives, nan and +-inf where they mean something, and the paths that raise
    argnums    None when the function is not differentiable in a way finite differences can check
               (int results, comparisons only, bisection, ...); else the positions of the float
               arguments to differentiate (a tuple)
    points     argument tuples for the gradient check, away from kinks and singularities
    fused_rel  relative tolerance for the FMA-on comparison (default 1e-12)

Each function's result type is the same on every path for the argument types listed (an int on
one path and a float on another is tested separately in `test_control_flow.py`), and every loop
has a bounded trip count for its arguments.

The functions live in one module per family, gathered here into `CASES` in a fixed order:
`cf_branches.py` (if/elif/else, ReLU and friends, and/or/not, early returns), `cf_loops.py`
(while loops to a tolerance, for over range(), long loops) and `cf_errors.py` (raise and
assert, variables bound on only some paths).
"""
from __future__ import annotations

import cf_branches
import cf_errors
import cf_loops
from cf_case import CFCase

CASES: list[CFCase] = [*cf_branches.CASES, *cf_loops.CASES, *cf_errors.CASES]
