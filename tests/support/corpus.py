"""The differential-test corpus: ordinary Python numeric functions, each with its argument kinds.

Every function here is plain Python; `tests/api/test_corpus.py` compiles each one with `trace` and
checks it against CPython (calling the function itself) on generated arguments, and
`tests/api/test_grad_of_corpus.py` differentiates the ones with float arguments. A function is
registered with `@case(kind, ...)`, one kind per parameter; the kinds (`corpus_kinds.py`) say what
to generate:

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

The functions live in one module per family, gathered here into `CASES` in a fixed order:
`corpus_numbers.py` (operators on floats; ints, bools, mixing), `corpus_math.py` (`math`,
builtins), `corpus_calls.py` (calls, kwargs, closures, globals; tuples and lists) and
`corpus_objects.py` (user objects; a few more mixed programs).
"""
from __future__ import annotations

import corpus_calls
import corpus_math
import corpus_numbers
import corpus_objects
from corpus_kinds import I64, NUM, SMALL_NUM, B, Case, Count, F, I, Kind, ListOf, ObjectOf, Registry, TupleOf

CASES: list[Case] = [*corpus_numbers.CASES, *corpus_math.CASES, *corpus_calls.CASES, *corpus_objects.CASES]

__all__ = ["B", "CASES", "F", "I", "I64", "NUM", "SMALL_NUM", "Case", "Count", "Kind", "ListOf", "ObjectOf",
           "Registry", "TupleOf"]
