"""`cmath` in traced code (tracer.frontend.cmath_functions) against CPython, bit for bit: each
function compiled once and called on a grid of parts (zeros of both signs, subnormals, huge parts,
the thresholds of the C code's branches, infinities, NaNs), random values of every magnitude and
values near the unit circle (where log uses log1p); exceptions by type and message, real (float
and int) arguments, trace-time constants, and the functions refused on traced values.
"""
from __future__ import annotations

import cmath
import itertools
import math
import random
import sys

import pytest
from oracle import outcome, same_outcome, show

import tracer

BIG = sys.float_info.max
LOG_LARGE, SQRT_LARGE = math.log(BIG / 4.0), math.sqrt(BIG / 4.0)      # the C code's thresholds
PARTS = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 5e-324, -1e-310, 2.2250738585072014e-308, 1e-200, -1e-160,
         3e300, -BIG, BIG / 3.0, SQRT_LARGE, -math.nextafter(SQRT_LARGE, math.inf), LOG_LARGE,
         -math.nextafter(LOG_LARGE, math.inf), 709.5, -710.5, 711.0, 720.0, 1e6, 0.71, 0.9999999, 1.0000001,
         1.73, math.pi / 2, math.inf, -math.inf, math.nan]
GRID = [complex(x, y) for x, y in itertools.product(PARTS, PARTS)]


def _random_values(n: int, seed: int) -> list:
    rng = random.Random(seed)
    values = []
    for _ in range(n):
        scale = 2.0 ** rng.choice((rng.randint(-1074, 1023), rng.randint(-30, 30), 0))
        z = complex(rng.uniform(-2, 2) * scale, rng.uniform(-2, 2) * scale * 2.0 ** rng.choice((0, 0, -30, 20)))
        values.append(z)
    for _ in range(n // 2):            # |z| near 1, where c_log takes log1p
        t, r = rng.uniform(-4, 4), 1.0 + rng.choice((0.0, 1e-9, -1e-12, 0.2, -0.25)) * rng.random()
        values.append(complex(r * math.cos(t), r * math.sin(t)))
    return values


RANDOM = _random_values(600, 7)
COMPLEX_INPUTS = GRID + RANDOM
REALS = [0.0, -0.0, 1.0, -1.0, 2.0, -3.5, 0.7, 1e-320, -1e300, 709.9, -711.0, 1e10, math.inf, -math.inf, math.nan]

UNARY = ["exp", "log", "log10", "sqrt", "sin", "cos", "tan", "sinh", "cosh", "tanh", "atan", "atanh", "phase",
         "polar", "isfinite", "isinf", "isnan"]


def compare(fn, argument_lists):
    """fn compiled once (FMA fusion off: CPython rounds a*b + c twice) against CPython."""
    traced = tracer.trace(fn, fullgraph=True, fuse_fma=False)
    wrong = []
    for args in argument_lists:
        got, expected = outcome(traced, args), outcome(fn, args)
        if not same_outcome(got, expected):
            wrong.append((args, show(got[1]) if got[0] == "return" else got, show(expected[1]) if expected[0] ==
                          "return" else expected))
    assert not wrong, f"{len(wrong)} of {len(argument_lists)} differ, e.g. {wrong[:4]}"


def test_hypot_is_the_c_librarys():
    """abs(complex), np.hypot and np.abs of complex arrays call the C library's hypot (math.hypot's
    own algorithm differs in the last bit of about 1 result in 300)."""
    import numpy as np
    rng = random.Random(5)
    xs = [rng.uniform(0.5, 2.0) * 2.0 ** rng.randint(-1074, 1023) * rng.choice((1, -1)) for _ in range(3000)]
    ys = [x * rng.random() * 2.0 ** rng.choice((0, 0, -1, -27, -54, 3)) for x in xs]
    traced = tracer.trace(fullgraph=True, fuse_fma=False)(lambda x, y: abs(complex(x, y)))
    assert [traced(x, y) for x, y in zip(xs, ys)] == [abs(complex(x, y)) for x, y in zip(xs, ys)]
    assert traced(math.nan, -math.inf) == math.inf and math.isnan(traced(math.nan, 1.0))
    with pytest.raises(OverflowError, match="absolute value too large"):
        traced(1.5e308, 1.5e308)
    x, y = np.array(xs), np.array(ys)
    np.testing.assert_array_equal(tracer.trace(lambda x, y: np.hypot(x, y))(x, y), np.hypot(x, y))
    z = x + 1j * y
    np.testing.assert_array_equal(tracer.trace(lambda z: np.abs(z))(z), np.abs(z))


@pytest.mark.parametrize("name", UNARY)
def test_functions_of_a_complex_number(name):
    function = getattr(cmath, name)
    compare(lambda z: function(z), [(z,) for z in COMPLEX_INPUTS])


@pytest.mark.parametrize("name", UNARY)
def test_functions_of_a_float_and_an_int(name):
    function = getattr(cmath, name)
    compare(lambda x: function(x), [(x,) for x in REALS])
    compare(lambda n: function(n), [(n,) for n in (0, 1, -1, 7, -1000, 2 ** 62)])


def test_functions_of_a_complex_made_in_the_trace():
    compare(lambda x, y: (cmath.sqrt(complex(x, y)), cmath.exp(x * 1j), cmath.log(complex(x, 0.0) - 1)),
            [(x, y) for x, y in itertools.product(REALS, REALS)])
    compare(lambda x: (cmath.sqrt(complex(x, -0.0)), cmath.exp(complex(0.0, x)), cmath.atanh(complex(1.0, x)),
                       cmath.tan(complex(x, math.inf)), cmath.cosh(complex(math.inf, x)), cmath.log(complex(-0.0, x))),
            [(x,) for x in REALS])


def test_numpy_scalar_arguments_give_python_numbers():
    np = pytest.importorskip("numpy")
    compare(lambda x: (cmath.phase(x), cmath.polar(x), cmath.isnan(x), cmath.isclose(x, 1), cmath.sqrt(x)),
            [(np.float64(x),) for x in REALS] + [(np.float32(-2.5),), (np.int64(-3),)])


def test_log_to_a_base():
    bases = [2, 10.0, 1, 0.5j, 1 + 0j, complex(-0.0, 0.0), 0j, complex(1e-310, 0.0), complex(math.inf, 1.0),
             complex(math.nan, 0.0), complex(0.71, 0.71), 3 - 4j]
    values = [0j, 1 + 0j, -1 + 0j, 2.5 - 1j, complex(1e300, -1e300), complex(0.0, math.inf), complex(math.nan, 1.0)]
    compare(lambda z, base: cmath.log(z, base), [(complex(z), complex(b)) for z in values for b in bases])
    compare(lambda x: cmath.log(x, 2), [(x,) for x in REALS])


def test_rect():
    compare(lambda r, phi: cmath.rect(r, phi), [(r, phi) for r, phi in itertools.product(PARTS, PARTS)])
    compare(lambda r: cmath.rect(r, 0), [(r,) for r in REALS])


def test_isclose():
    pairs = [(a, b) for a in GRID[::7] for b in (0j, 1 + 1e-10j, 1 + 0j, complex(math.inf, 0.0), -a, a + 1e-12, a)]
    compare(lambda a, b: (cmath.isclose(a, b), cmath.isclose(a, b, rel_tol=1e-3), cmath.isclose(a, b, abs_tol=0.5)),
            pairs)
    compare(lambda a, b, t: cmath.isclose(a, b, rel_tol=t), [(1j, 1.0001j, t) for t in (0.0, 1e-3, -1.0, math.nan)])
    compare(lambda a, b, t: cmath.isclose(a, b, abs_tol=t), [(1j, 1.0001j, t) for t in (0.0, 1e-3, -1.0, math.inf)])


def test_constant_arguments_call_cmath_itself():
    compare(lambda x: (cmath.sqrt(-1), cmath.exp(1j * cmath.pi), cmath.polar(3 + 4j), x), [(1.0,)])
    compare(lambda x: cmath.log(0) + x, [(1.0,)])
    compare(lambda x: cmath.asin(0.5 + 2j) + cmath.acosh(3) + x, [(1.0,)])
    compare(lambda x: (cmath.pi, cmath.e, cmath.tau, cmath.inf, cmath.nan, cmath.infj, cmath.nanj, x), [(1.0,)])


def test_type_errors_are_cpythons():
    compare(lambda z: cmath.rect(z, 1.0), [(1j,)])
    compare(lambda z: cmath.sqrt(z, 2), [(1j,)])
    compare(lambda z: cmath.log(z, base=2), [(1j,)])
    compare(lambda z: cmath.isclose(z, 1j, tol=2), [(1j,)])
    compare(lambda z: cmath.phase("z"), [(1j,)])


@pytest.mark.parametrize("name", ["asin", "acos", "asinh", "acosh"])
def test_functions_refused_on_traced_values(name):
    function = getattr(cmath, name)
    with pytest.raises(tracer.UnsupportedError, match="not supported yet"):
        tracer.trace(lambda z: function(z), fullgraph=True)(0.5j)
