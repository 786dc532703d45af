"""A corpus of plain-Python programs in the style of classic numeric Python, for
`tests/api/test_python_program_corpus.py` and `examples/python_corpus_report.py`.

`PROGRAMS` lists `(name, fn, make_args)`: `fn` is a plain Python function written without this
compiler in mind, `make_args()` a fresh tuple of deterministic example arguments (numbers, strings,
lists, dicts, sets, `array.array`), and `name` the function's name or, for a second set of
arguments (often one that makes the program raise), a name of its own. The programs use what such
code uses, whether or not the tracer compiles it yet; they are in `py_programs_a.py` (numeric
classics, vectors, quadrature, ODEs), `py_programs_b.py` (`array.array` linear algebra and FFT,
random-number generators in Python, k-means, statistics), `py_programs_c.py` (recursion, dynamic
programming, itertools, number theory) `py_programs_d.py` (data structures, interpreters,
generators, context managers, exceptions) and `py_programs_e.py` (dicts, strings, sorting, small
loops over lists of numbers).
"""
from __future__ import annotations

import py_programs_a
import py_programs_b
import py_programs_c
import py_programs_d
import py_programs_e

PROGRAMS = (py_programs_a.PROGRAMS + py_programs_b.PROGRAMS + py_programs_c.PROGRAMS + py_programs_d.PROGRAMS
            + py_programs_e.PROGRAMS)

_names = [name for name, _, _ in PROGRAMS]
assert len(set(_names)) == len(_names), "two programs share a name"
