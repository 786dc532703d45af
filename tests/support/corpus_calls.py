"""Part of the differential-test corpus (`corpus.py` gathers the parts into `CASES`): calls, keyword arguments, closures and globals; tuples and lists.

Every function here is plain Python, registered with `@case(kind, ...)`, one kind per parameter
(the kinds are in `corpus_kinds.py`).
"""
from __future__ import annotations

import math

from corpus_kinds import Count, F, ListOf, Registry, TupleOf

CASES = Registry()
case = CASES.case


# ---------------------------------------------------------------- calls, kwargs, closures, globals
def _square(v):
    return v * v


def _norm2(a, b):
    return math.sqrt(_square(a) + _square(b))


def _scale(v, factor=2.0, *, offset=0.0):
    return v * factor + offset


@case(F, F)
def calls_helpers(x, y):
    return _norm2(x, y) - _square(x)


@case(F)
def keyword_and_default_arguments(x):
    return _scale(x), _scale(x, 3.0), _scale(x, offset=1.0), _scale(factor=-1.0, v=x, offset=x)


def _make_affine(a, b):
    def affine(x):
        return a * x + b
    return affine


affine_closure = _make_affine(1.5, -0.25)
case(F)(affine_closure)


@case(F, F)
def inner_function_and_lambda(x, y):
    def add_x(v):
        return v + x
    twice = lambda v: 2.0 * v
    return add_x(y) * twice(x)


GAIN = 1.5
OFFSET = 3
LIMITS = (0.25, 4)
USE_ABS = True


@case(F)
def globals_holding_numbers(x):
    lo, hi = LIMITS
    y = abs(x) if USE_ABS else x
    return GAIN * y + OFFSET, y * lo + hi


# ---------------------------------------------------------------- tuples and lists
@case(F, F)
def tuple_build_index_unpack(x, y):
    t = (x, y, x * y)
    a, b, c = t
    return t[0] - t[-1], (b, (c, a)), t[1:]


@case(ListOf(F, 3), Count(-4, 3))
def index_with_int_argument(xs, i):
    return xs[i] * 2.0                  # out of range: IndexError, as in Python


@case(TupleOf(F, 3), Count(-4, 3))
def index_tuple_with_int_argument(t, i):
    return t[i] + t[0]


@case(ListOf(F, 4))
def unpack_list_argument(xs):
    a, b, c, d = xs
    first, *rest = xs
    return a * d - b * c, first, len(rest), rest[-1]


@case(TupleOf(F, 3))
def iterate_tuple_argument(t):
    acc = 0.0
    for v in t:
        acc = acc * 0.5 + v
    return acc, t


@case(ListOf(F, 3))
def list_comprehension(xs):
    squares = [v * v for v in xs]
    shifted = [v + 1.0 for v in squares if True]
    return tuple(squares), sum(shifted)


@case(ListOf(F, 3), ListOf(F, 3))
def generator_dot(xs, ys):
    return sum(a * b for a, b in zip(xs, ys)), sum(xs[i] - ys[i] for i in range(len(xs)))


@case(ListOf(F, 3), ListOf(F, 3))
def mean_squared_error(preds, targets):
    return sum((p - t) ** 2 for p, t in zip(preds, targets)) / len(preds)


@case(ListOf(ListOf(F, 3), 2), ListOf(F, 3))
def matrix_vector(rows, v):
    return tuple(sum(a * b for a, b in zip(row, v)) for row in rows)


@case(F, F)
def build_and_modify_local_list(x, y):
    acc = []
    for i in range(3):
        acc.append(x * i + y)
    acc[1] = acc[1] * 2.0
    acc += [y]
    return tuple(acc), len(acc)


@case(ListOf(F, 3))
def enumerate_with_start(xs):
    return sum(i * v for i, v in enumerate(xs, 1)), sum(v for _, v in enumerate(reversed(xs)))
