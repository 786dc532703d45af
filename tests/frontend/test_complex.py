"""Python's complex numbers in traced code (tracer.frontend.complexes) against CPython: every
operator on edge values (zeros of both signs, infinities, NaNs, tiny and huge parts), results
compared by repr (so the sign of a zero and a NaN's place count; FMA fusion off, as CPython
rounds a*b + c twice) and exceptions by type and message, complex arguments and results, and loops that carry a complex (a Mandelbrot escape
count).
"""
from __future__ import annotations

import itertools
import math

import pytest
from oracle import outcome

import tracer

EDGES = [0j, complex(-0.0, 0.0), complex(0.0, -0.0), 1 + 0j, 1j, 1.5 - 2j, -0.25 + 3j, complex(1e-310, 2.0),
         complex(1e308, 1e308), complex(3.0, 1e-300), complex(math.inf, 1.0), complex(0.0, -math.inf),
         complex(math.nan, 0.0), complex(2.0, math.nan)]


def same(got, expected) -> bool:
    return got[0] == expected[0] and (got[1:] == expected[1:] if got[0] == "raise" else
                                      repr(got[1]) == repr(expected[1]))


def check(fn, *args):
    traced = tracer.trace(fn, fullgraph=True, fuse_fma=False)     # (CPython rounds a*b + c twice)
    expected = outcome(fn, args)
    assert same(outcome(traced, args), expected), (fn.__name__, args, outcome(traced, args), expected)


OPERATORS = {
    "add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b, "div": lambda a, b: a / b,
    "eq": lambda a, b: (a == b, a != b), "mixed": lambda a, b: (2.0 * a, a + 1, 3 - b, a / 2.0, 1.5 == a),
}


@pytest.mark.parametrize("fn", list(OPERATORS.values()), ids=list(OPERATORS))
def test_operators_on_edge_values(fn):
    for a, b in itertools.product(EDGES, EDGES):
        check(fn, a, b)


UNARY = {
    "neg": lambda a: -a, "abs": lambda a: abs(a), "parts": lambda a: (a.real, a.imag, a.conjugate()),
    "bool": lambda a: bool(a), "square": lambda a: a ** 2, "cube": lambda a: a ** 3, "inverse": lambda a: a ** -1,
    "power_7": lambda a: a ** 7, "power_minus_4": lambda a: a ** -4, "power_float_2": lambda a: a ** 2.0,
    "rebuild": lambda a: complex(a.imag, a.real), "complex_of_complex": lambda a: complex(a, a),
}


@pytest.mark.parametrize("fn", list(UNARY.values()), ids=list(UNARY))
def test_unary_and_powers_on_edge_values(fn):
    for a in EDGES:
        check(fn, a)


def mandelbrot_escape(c, limit):
    z = 0j
    for n in range(limit):
        z = z * z + c
        if abs(z) > 2.0:
            return n
    return limit


def mandelbrot_area(n):
    inside = 0
    for i in range(n):
        for j in range(n):
            c = complex(-2.0 + 2.5 * i / n, -1.25 + 2.5 * j / n)
            if mandelbrot_escape(c, 40) == 40:
                inside += 1
    return inside


def roots_of_unity_sum(n):
    w = complex(math.cos(2 * math.pi / n), math.sin(2 * math.pi / n))
    total, p = 0j, 1 + 0j
    for _ in range(n):
        total += p
        p *= w
    return total


def test_programs_that_carry_complex_numbers():
    for c in (0.3 + 0.5j, -0.75 + 0.1j, 2 + 2j, 0j):
        check(mandelbrot_escape, c, 100)
    check(mandelbrot_area, 24)
    check(roots_of_unity_sum, 12)


def test_errors_are_cpythons():
    check(lambda a: a / 0j, 1 + 1j)
    check(lambda a: a ** -2, 0j)
    check(lambda a: (a + 1e200) ** 2, 1j)                  # an infinite part: OverflowError
    check(lambda a, b: a < b, 1j, 2j)
    with pytest.raises(tracer.UnsupportedError, match="not an integer"):
        tracer.trace(lambda a: a ** 0.5, fullgraph=True)(2j)
