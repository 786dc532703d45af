"""The registry of the control-flow corpus (`cf_corpus.py`): a `CFCase` is one function with the
argument tuples that take its branches, and, for the differentiable ones, the points of its
gradient check.
"""
from __future__ import annotations

from dataclasses import dataclass


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class CFCase:
    fn: object
    args: tuple
    argnums: tuple | None = None
    points: tuple = ()
    fused_rel: float = 1e-12

    @property
    def name(self) -> str:
        return self.fn.__name__

    @property
    def differentiable(self) -> bool:
        return self.argnums is not None


class Registry(list):
    """The cases of one part of the corpus, in the order they are defined: `CASES = Registry()`,
    then `@CASES.cf_case(args, argnums=None, points=(), fused_rel=1e-12)` on each function."""

    def cf_case(self, args, argnums=None, points=(), fused_rel=1e-12):
        if isinstance(argnums, int):
            argnums = (argnums,)

        def register(fn):
            self.append(CFCase(fn, tuple(tuple(a) for a in args), argnums,
                               tuple(tuple(p) for p in points), fused_rel))
            return fn
        return register
