"""IR -> IR optimization passes, and the pipeline that runs them.

Each pass takes a `Function` and returns a new one that `ir.verify` accepts; none mutates its input.

    fold_constants                   ops on constants -> constants; (a, b)[1] -> b
    simplify                         exact algebraic identities (x * 1.0 -> x; never x + 0.0 -> x)
    eliminate_common_subexpressions  one value per (op, operands, attrs)
    eliminate_dead_code              drop unused values, but keep ops that may fail
    fuse_elementwise                 chains of elementwise array ops -> one `map` (one loop)
    fuse_multiply_add                a*b + c -> fma(a, b, c) on f64 (changes last bits; optional)
    merge_numpy_checks               one NumPy scalar check per chain of + - * (not one per op)
    update_in_place                  writeback(W, map(..., W, ...)) -> the map writes into W

`optimize` runs the first four to a fixpoint, then loop fusion (when there are array ops), then
FMA fusion (inside maps too), then CSE and DCE again (fusion can make equal values, e.g. the
same `neg` for two fused subtractions), then the merge of NumPy scalar checks; `stages` gives the IR after each stage, for
`python -m tracer dump`.
"""
from __future__ import annotations

from tracer import ir
from tracer.transforms.passes.cse import eliminate_common_subexpressions
from tracer.transforms.passes.dce import eliminate_dead_code
from tracer.transforms.passes.fma import count_fused, fuse_multiply_add
from tracer.transforms.passes.fold import fold_constants
from tracer.transforms.passes.fuse import count_maps, fuse_elementwise
from tracer.transforms.passes.inplace import count_in_place, update_in_place
from tracer.transforms.passes.numpy_checks import merge_numpy_checks
from tracer.transforms.passes.simplify import simplify

__all__ = ["optimize", "stages", "PIPELINE", "fold_constants", "simplify", "eliminate_common_subexpressions",
           "eliminate_dead_code", "fuse_elementwise", "fuse_multiply_add", "update_in_place", "count_fused",
           "count_maps", "count_in_place", "merge_numpy_checks"]

# the passes repeated until nothing changes: each can expose work for another (a fold makes x * 1.0,
# a simplification makes two values equal, CSE makes a value dead)
CLEANUP = [("fold", fold_constants), ("simplify", simplify),
           ("cse", eliminate_common_subexpressions), ("dce", eliminate_dead_code)]
MAX_ROUNDS = 10          # every round shrinks the IR or stops; the bound is a safety net

PIPELINE = ("fold, simplify, cse, dce, repeated until the IR stops changing (at most "
            f"{MAX_ROUNDS} rounds); then loop fusion (of elementwise array ops); then fma fusion (unless "
            "fuse_fma=False); then cse and dce; then one NumPy scalar check per chain; then in-place updates of "
            "argument arrays")


def stages(fn: ir.Function, fuse_fma: bool = True) -> list[tuple[str, ir.Function]]:
    """The IR after each stage, starting with ("input", fn): [(stage name, Function), ...]."""
    out = [("input", fn)]
    for round_ in range(1, MAX_ROUNDS + 1):
        before = _fingerprint(fn)
        for name, run in CLEANUP:
            fn = run(fn)
            out.append((f"{name} (round {round_})", fn))
        if _fingerprint(fn) == before:
            break
    fused = fuse_elementwise(fn)
    if count_maps(fused):
        fn = fused
        out.append(("fuse loops", fn))
    if fuse_fma:
        fn = fuse_multiply_add(fn)
        out.append(("fma", fn))
    if fuse_fma or count_maps(fn):
        fn = eliminate_common_subexpressions(fn)
        out.append(("cse", fn))
        fn = eliminate_dead_code(fn)
        out.append(("dce", fn))
    if any(v.op == "numpy_scalar_check" for v in fn.walk()):
        fn = merge_numpy_checks(fn)
        out.append(("numpy checks", fn))
    in_place = update_in_place(fn)
    if count_in_place(in_place):
        fn = in_place
        out.append(("in place", fn))
    return out


def optimize(fn: ir.Function, fuse_fma: bool = True) -> ir.Function:
    """The optimized copy of `fn` (the input is not changed)."""
    return stages(fn, fuse_fma)[-1][1]


def _fingerprint(fn: ir.Function) -> str:
    # the printed table names values by position, so it is equal exactly when the IR is the same
    return ir.format_function(fn, show_source=False)
