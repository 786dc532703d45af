"""The kinds of the differential-test corpus (`corpus.py`): what to generate for each parameter of a
corpus function, and the registry each part of the corpus fills.

    F               a float, edge values included (0.0, -0.0, tiny, huge, inf, -inf, nan)
    I               an int: small, near the 64-bit limits, and a few past them
    I64             an int within 64 bits (items of lists: a list holding a bigger int is a TracerError)
    B               a bool
    NUM             a float, an int or a bool (mixed-type arithmetic)
    SMALL_NUM       a float, an int in [-5, 40] or a bool (exponents)
    Count(lo, hi)   a small int the trace depends on (`range(n)`, an index, an `if`)
    ListOf(kind, n) / TupleOf(kind, n)   a list / tuple of trace-time length n
    ObjectOf(make, *kinds)               a user object built by `make` from generated values

Kinds give two strategies: `exact` (every edge value; results must match CPython bit for bit)
and `fused` (floats of moderate size plus inf/-inf/nan, for the FMA-on comparison, where
overflow in a product would let one fused rounding legitimately differ by more than a tolerance).
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from hypothesis import strategies as st

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


# ------------------------------------------------------------------------------------ the kinds
EDGE_FLOATS = [
    0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, 3.0, -7.0, 0.1, 2.5, -2.5, 1e-3,
    5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300,
    1.7976931348623157e308, -1.7976931348623157e308, 1e300, 1e16, 2.0 ** 53, 2.0 ** 63, -2.0 ** 63,
    709.0, 710.0, -745.0, math.pi, math.e,
    math.inf, -math.inf, math.nan,
]
FUSED_EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 0.1, math.pi, math.inf, -math.inf, math.nan]
EDGE_INTS = [
    0, 1, -1, 2, -2, 3, 7, -7, 10, 2 ** 31, 2 ** 32 + 1, -2 ** 40, 2 ** 53, 2 ** 53 + 1, -2 ** 53 - 1,
    2 ** 62, I64_MAX, I64_MIN, I64_MAX - 1, I64_MIN + 1, 3037000499, 3037000500, 2 ** 63, I64_MIN - 1, 10 ** 20,
]


class Kind:
    def strategy(self, fused: bool) -> st.SearchStrategy:
        raise NotImplementedError

    def edges(self, fused: bool) -> list:
        """A few hand-picked values, for the exhaustive edge grid."""
        raise NotImplementedError


class _Float(Kind):
    def strategy(self, fused):
        if fused:
            return st.one_of(st.sampled_from(FUSED_EDGE_FLOATS), st.floats(-100.0, 100.0))
        return st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(allow_nan=True, allow_infinity=True))

    def edges(self, fused):
        return FUSED_EDGE_FLOATS if fused else EDGE_FLOATS

    def __repr__(self):
        return "F"


class _Int(Kind):
    def __init__(self, past_64_bits: bool = True):
        self.edge_ints = EDGE_INTS if past_64_bits else [n for n in EDGE_INTS if I64_MIN <= n <= I64_MAX]

    def strategy(self, fused):
        return st.one_of(st.sampled_from(self.edge_ints), st.integers(-100, 100), st.integers(I64_MIN, I64_MAX))

    def edges(self, fused):
        return self.edge_ints

    def __repr__(self):
        return "I" if len(self.edge_ints) == len(EDGE_INTS) else "I64"


class _Bool(Kind):
    def strategy(self, fused):
        return st.booleans()

    def edges(self, fused):
        return [False, True]

    def __repr__(self):
        return "B"


class _Number(Kind):
    def strategy(self, fused):
        return st.one_of(F.strategy(fused), I.strategy(fused), B.strategy(fused))

    def edges(self, fused):
        return [*F.edges(fused)[::3], *I.edges(fused)[::4], False, True]

    def __repr__(self):
        return "NUM"


class _SmallNumber(Kind):
    """A float, a small int or a bool: for exponents, where a huge int ** huge int never ends."""

    def strategy(self, fused):
        return st.one_of(F.strategy(fused), st.integers(-5, 40), B.strategy(fused))

    def edges(self, fused):
        return [*F.edges(fused)[::3], -5, -1, 0, 1, 2, 3, 40, False, True]

    def __repr__(self):
        return "SMALL_NUM"


F, I, I64, B, NUM, SMALL_NUM = _Float(), _Int(), _Int(past_64_bits=False), _Bool(), _Number(), _SmallNumber()


@dataclass(frozen=True)
class Count(Kind):
    """A small int the trace depends on (each value compiles its own specialization)."""
    lo: int
    hi: int

    def strategy(self, fused):
        return st.integers(self.lo, self.hi)

    def edges(self, fused):
        return list(range(self.lo, self.hi + 1))


@dataclass(frozen=True)
class ListOf(Kind):
    item: Kind
    n: int

    def strategy(self, fused):
        return st.lists(self.item.strategy(fused), min_size=self.n, max_size=self.n)

    def edges(self, fused):
        e = self.item.edges(fused)
        return [[e[(i + j) % len(e)] for j in range(self.n)] for i in range(len(e))]


@dataclass(frozen=True)
class TupleOf(Kind):
    item: Kind
    n: int

    def strategy(self, fused):
        return st.tuples(*[self.item.strategy(fused)] * self.n)

    def edges(self, fused):
        return [tuple(x) for x in ListOf(self.item, self.n).edges(fused)]


@dataclass(frozen=True)
class ObjectOf(Kind):
    """A user object `make(*values)` with one value drawn per kind."""
    make: object
    kinds: tuple

    def strategy(self, fused):
        return st.tuples(*(k.strategy(fused) for k in self.kinds)).map(lambda vs: self.make(*vs))

    def edges(self, fused):
        grids = [k.edges(fused) for k in self.kinds]
        return [self.make(*(g[(i * (j + 1)) % len(g)] for j, g in enumerate(grids)))
                for i in range(max(map(len, grids)))]


# ------------------------------------------------------------------------------------ registry
@dataclass(frozen=True)
class Case:
    fn: object
    kinds: tuple

    @property
    def name(self) -> str:
        return self.fn.__name__


class Registry(list):
    """The cases of one part of the corpus, in the order they are defined: `CASES = Registry()`,
    then `@CASES.case(kind, ...)` on each function."""

    def case(self, *kinds):
        def register(fn):
            self.append(Case(fn, kinds))
            return fn
        return register
