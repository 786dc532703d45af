"""Int bit operators (& | ^ ~ << >>, in place too, with bools where Python allows them),
pow(a, e, m) and int.bit_length / float.is_integer in traced code, against CPython: the same value
of the same type, or the same exception and message. Results past 64 bits (1 << 63) are Python's
exact big ints (the call falls back); shifts by 64 or more are never LLVM poison.

Each function is compiled once (fullgraph=True: no graph break) and called with every case; the
ops themselves are also checked compiled against their evaluators (no fallback hides there).
"""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_calls import check
from like_python import assert_like_python

from tracer import ir, trace

I64_MIN, I64_MAX = ir.I64_MIN, ir.I64_MAX
EDGES = [0, 1, -1, 2, -2, 5, -5, 0x5555, 2 ** 31, 2 ** 32 - 1, 2 ** 62, -2 ** 62, I64_MAX, I64_MIN, I64_MIN + 1]
COUNTS = [0, 1, 2, 31, 32, 62, 63, 64, 65, 100, 2 ** 40, I64_MAX, -1, -64, I64_MIN]


def compiled(fn):
    return trace(fn, fuse_fma=False, fullgraph=True)


def like_python_for_all(fn, cases):
    f = compiled(fn)
    for args in cases:
        assert_like_python(f, *args)


# ----------------------------------------------------------------------------- & | ^ ~
def bits(a, b):
    return a & b, a | b, a ^ b, ~a, ~b


def bits_with_constants(a):
    return a & 0xFF, 0xF0 | a, a ^ -1, a & True, False | a


def in_place(a, b):
    x = a
    x &= b
    y = a
    y |= b
    z = a
    z ^= b
    return x, y, z


def test_bit_operators_like_python():
    like_python_for_all(bits, [(a, b) for a in EDGES for b in EDGES])
    like_python_for_all(in_place, [(a, b) for a in EDGES[:8] for b in EDGES])
    like_python_for_all(bits_with_constants, [(a,) for a in EDGES])


def test_bit_operators_of_bools_are_bools():
    cases = [(a, b) for a in (False, True) for b in (False, True)]
    like_python_for_all(bits, cases)           # & | ^ of bools: bools; ~True is the int -2
    like_python_for_all(in_place, cases)
    like_python_for_all(bits_with_constants, [(False,), (True,)])


def test_bools_mix_with_ints():
    like_python_for_all(bits, [(True, 6), (7, False), (True, -1)])
    like_python_for_all(shifts, [(True, 3), (5, True), (True, 63), (True, True)])


def float_bits(x, n):
    return x & n


def float_shift(n, x):
    return n << x


def float_invert(x):
    return ~x


@pytest.mark.parametrize("fn, args", [(float_bits, (1.5, 3)), (float_bits, (True, 2.0)), (float_shift, (1, 2.0)),
                                      (float_invert, (1.5,))], ids=["float&int", "bool&float", "int<<float", "~float"])
def test_floats_raise_pythons_type_error(fn, args):
    got = assert_like_python(compiled(fn), *args)
    assert got[0] == "raise" and got[1] is TypeError


# ----------------------------------------------------------------------------- << >>
def shifts(a, n):
    return a << n, a >> n


def right_shift(a, n):
    return a >> n


def left_shift(a, n):
    return a << n


def shift_by_constants(a):
    return a << 3, a >> 3, a >> 64, a >> 200, a << 0


def in_place_shifts(a, n):
    x = a
    x <<= n
    y = a
    y >>= n
    return x, y


def test_right_shift_floors_and_saturates_like_python():
    like_python_for_all(right_shift, [(a, n) for a in EDGES for n in COUNTS])


def test_left_shift_past_64_bits_gives_the_exact_big_int():
    f = compiled(left_shift)
    for a in [0, 1, -1, 3, -3, 2 ** 31, I64_MAX, I64_MIN, 2 ** 62, -2 ** 62]:
        for n in [0, 1, 31, 32, 61, 62, 63, 64, 65, 100, -1, -100]:
            got = assert_like_python(f, a, n)
            if n >= 0:
                assert got == ("return", a << n)     # 1 << 63 is 2**63, not -2**63: never wrapped


def test_shift_results_and_errors():
    like_python_for_all(shifts, [(a, n) for a in [0, 1, -7, 12345, I64_MIN] for n in [0, 5, 63, 64, -1, I64_MIN]])
    like_python_for_all(in_place_shifts, [(5, 2), (-5, 70), (1, 63), (3, -2)])
    like_python_for_all(shift_by_constants, [(a,) for a in EDGES])


def negative_constant_count(a):
    return a << -1


def test_a_negative_constant_count_raises_valueerror():
    got = assert_like_python(compiled(negative_constant_count), 5)
    assert got == ("raise", ValueError, "negative shift count")


@settings(max_examples=300, deadline=None)
@given(st.integers(I64_MIN, I64_MAX), st.integers(-3, 130))
def test_shifts_match_python(a, n):
    assert_like_python(_SHIFTS, a, n)


_SHIFTS = compiled(shifts)


@settings(max_examples=300, deadline=None)
@given(st.integers(I64_MIN, I64_MAX), st.integers(I64_MIN, I64_MAX))
def test_bit_operators_match_python(a, b):
    assert_like_python(_BITS, a, b)


_BITS = compiled(bits)


# ----------------------------------------------------------------------------- pow(a, e, m)
def modular_power(a, e, m):
    return pow(a, e, m)


POW_CASES = [(2, 10, 1000), (3, -1, 7), (2, -1, 4), (5, 3, 0), (-7, 5, -13), (-7, 5, 13), (7, -3, -13),
             (2 ** 62, 2 ** 62, I64_MAX), (I64_MIN, -1, I64_MIN + 1), (0, -1, 1), (0, 0, 5), (4, 0, 1),
             (3, -5, I64_MIN), (I64_MAX, I64_MAX, I64_MIN), (123456789, 987654321, 2 ** 61 - 1),
             (10, -2, 2 ** 40 + 15), (6, -1, 9), (True, 5, 3), (5, True, 3), (2, 64, 2 ** 63 - 25)]


def test_pow_with_a_modulus_like_python():
    like_python_for_all(modular_power, POW_CASES)


def float_modular_power(a, e, m):
    return pow(a, e, m)


def test_pow_with_a_modulus_of_floats_raises_type_error():
    got = assert_like_python(compiled(float_modular_power), 2.0, 3, 5)
    assert got[0] == "raise" and got[1] is TypeError


@settings(max_examples=200, deadline=None)
@given(st.integers(I64_MIN, I64_MAX), st.integers(-2 ** 20, I64_MAX), st.integers(I64_MIN, I64_MAX))
def test_pow_with_a_modulus_matches_python(a, e, m):
    assert_like_python(_POW, a, e, m)


_POW = compiled(modular_power)


# ----------------------------------------------------------------------------- the ops compiled
@pytest.mark.parametrize("op", ["bit_and", "bit_or", "bit_xor", "lshift", "rshift", "gcd", "comb", "perm"])
def test_binary_int_ops_compiled_equal_their_evaluators(op):
    values = EDGES + [3, 10, 20, 21, 60, 68]
    for a in values:
        for b in (COUNTS if op.endswith("shift") else values):
            check(op, (ir.I64, ir.I64), (a, b))


@pytest.mark.parametrize("op", ["bit_and", "bit_or", "bit_xor"])
def test_bool_bit_ops_compiled_equal_their_evaluators(op):
    for a in (False, True):
        for b in (False, True):
            check(op, (ir.BOOL, ir.BOOL), (a, b))


@pytest.mark.parametrize("op", ["invert", "bit_length", "isqrt", "factorial"])
def test_unary_int_ops_compiled_equal_their_evaluators(op):
    for a in EDGES + [3, 4, 15, 16, 17, 20, 21, 3037000499 ** 2, 3037000499 ** 2 - 1, 10 ** 18 - 1]:
        check(op, (ir.I64,), (a,))


def test_powmod_compiled_equals_its_evaluator():
    for a, e, m in POW_CASES:
        check("powmod", (ir.I64, ir.I64, ir.I64), (int(a), int(e), int(m)))


# ----------------------------------------------------------------------------- methods
def bit_length_and_is_integer(n, x):
    return int.bit_length(n), float.is_integer(x), n.bit_length(), x.is_integer(), (n > 0).bit_length()


def test_bit_length_and_is_integer_like_python():
    like_python_for_all(bit_length_and_is_integer,
                        [(n, x) for n in EDGES for x in (0.0, -0.0, 1.5, -2.0, 1e300, float("inf"), float("nan"))])


# ----------------------------------------------------------------------------- in loops
def popcount(n):
    c = 0
    for i in range(64):
        c += (n >> i) & 1
    return c


def shifts_in_a_loop(n, k):
    s = 0
    for i in range(k):            # a compiled loop (k is a run-time bound): the count check is inside it
        s ^= (n << (i % 8)) | i
    return s


def test_bit_operators_in_loops_like_python():
    like_python_for_all(popcount, [(n,) for n in EDGES])
    like_python_for_all(shifts_in_a_loop, [(3, 10), (1, 0), (2 ** 60, 5), (-7, 3), (I64_MAX, 2)])
