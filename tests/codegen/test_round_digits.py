"""round(x, n) of a float in compiled code (op round_digits, codegen.cpython_math): CPython's
correctly rounded result, bit for bit, including halfway cases decided by the exact binary value
(round(2.675, 2) == 2.67), signed zeros, and the falls back to Python outside its range."""
import math
import random
import struct

import pytest

from tracer import trace
from tracer.ir.ops import OPS


def rounded(x, n):
    return round(x, n)


def same(a, b):
    return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1.0, a) == math.copysign(1.0, b))


EDGES = [(2.675, 2), (0.125, 2), (0.375, 2), (-0.001, 2), (-0.0, 3), (0.5, 0), (1.5, 0), (-2.5, 0), (0.285, 2),
         (1.0005, 3), (123456.789, 10), (1e6, 10), (1e300, 3), (5e-324, 5), (2.0 ** 52 + 1, 4), (math.inf, 1),
         (-math.inf, 2), (math.nan, 2), (0.1 + 0.2, 16), (1 / 3, 22), (7.0, -1), (1234.5, -2), (1.5, 30)]


@pytest.mark.parametrize("x, n", EDGES)
def test_edges_are_cpythons(x, n):
    assert same(trace(rounded, fullgraph=True)(x, n), round(x, n))


def test_random_values_are_cpythons():
    compiled = trace(rounded, fullgraph=True)
    rng = random.Random(2026)
    for i in range(20000):
        n = rng.randint(0, 22)
        if i % 3 == 0:      # decimals with a 5 after them: the halfway cases
            x = round(rng.uniform(-1e3, 1e3), rng.randint(0, 8)) + 5 * 10.0 ** -rng.randint(1, 9)
        elif i % 3 == 1:
            x = rng.uniform(-10, 10) * 10.0 ** rng.randint(-10, 10)
        else:
            x = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        assert same(compiled(x, n), round(x, n)), (x, n)


def test_the_evaluator_is_the_compiled_op():
    """Where the op computes (not FALLBACK), its evaluator gives Python's round."""
    evaluate = OPS["round_digits"].evaluate
    assert evaluate(2.675, 2) == 2.67 and same(evaluate(-0.001, 2), -0.0)


def test_in_a_compiled_loop():
    def table(n):
        out = []
        for i in range(n):
            out.append(round(i / 7.0, 3))
        return out
    assert trace(table, fullgraph=True)(40) == table(40)


def test_ints_keep_their_value():
    def f(k):
        return round(k * 3, 2)
    got = trace(f, fullgraph=True)(5)
    assert got == 15 and type(got) is int
