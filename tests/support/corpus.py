"""The differential-test corpus: ordinary Python numeric functions, each with its argument kinds.

Every function here is plain Python; `tests/api/test_corpus.py` compiles each one with `trace` and
checks it against CPython (calling the function itself) on generated arguments, and
`tests/api/test_grad_of_corpus.py` differentiates the ones with float arguments. A function is
registered with `@case(kind, ...)`, one kind per parameter; the kinds (`corpus_kinds.py`: F, I,
I64, B, NUM, SMALL_NUM, Count, ListOf, TupleOf, ObjectOf) say what to generate, for bit-for-bit
comparison (`exact`) and for the FMA-on comparison (`fused`).

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
