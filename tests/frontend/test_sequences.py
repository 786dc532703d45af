"""Sequences inside `@trace` (tracer.frontend.interpreter, tracer.frontend.opcodes.containers): `==`,
`!=` and ordering of tuples and lists, identity (`is`), tuples that stay tuples under slicing and
concatenation, and membership (`in`).

Each test compares the traced function with CPython on the same inputs: the same value of the
same type, or the same exception type and message. Where the tracer does not support something
it must say so (`UnsupportedError`), never answer differently. Numbers in comments refer to the
review findings these tests pin down.
"""
from __future__ import annotations

import math

import pytest
from like_python import same, unsupported


# ----------------------------------------------------------------------- 2: == and != on sequences
def tuple_eq_traced(x, y):
    return (x, 1) == (y, 1)


def tuple_ne_traced(x, y):
    return (x, 1) != (y, 1)


def list_eq_args(a, b):
    return a == b


def list_ne_args(a, b):
    return a != b


def nested_eq(xs, x):
    return [[x, 1.0], (x,)] == [[xs[0], 1.0], (x,)]


def identity_inside_sequences(x):
    return [x] == [x], (x,) != (x,), x == x     # items: identity first; top level: a NaN is unequal


def mixed_kinds(x):
    return [x] == (x,), [x] != (x,), (x,) == x, [x] == None, x == None, x != "a", [x] == 2.0   # noqa: E711


def different_lengths(xs, ys):
    return xs == ys, xs != ys


def constants_compare(x):
    return x if ("a", 1) == ("a", 1.0) and [1, 2] < [1, 3] and "ab" < "b" else -x


def equal_after_arith(x, y):
    return [x + 1.0, y] == [y + 1.0, x]


@pytest.mark.parametrize("fn, args", [
    (tuple_eq_traced, (1.0, 1.0)), (tuple_eq_traced, (1.0, 2.0)), (tuple_eq_traced, (float("nan"), float("nan"))),   # two NaN objects: unequal
    (tuple_ne_traced, (1.0, 1.0)), (tuple_ne_traced, (1.0, 2.0)),
    (list_eq_args, ([1.0], [1.0])), (list_eq_args, ([1.0], [2.0])), (list_eq_args, ([1.0, 2], [1.0, 2.0])),
    (list_eq_args, ((1.0, 2.0), (1.0, 2.0))), (list_eq_args, ([1.0], (1.0,))),
    (list_ne_args, ([1.0], [1.0])), (list_ne_args, ([1.0], [3.0])), (list_ne_args, ([1.0], (1.0,))),
    (list_eq_args, ([[1.0, 2.0], [3]], [[1.0, 2.0], [3]])), (list_eq_args, ([[1.0, 2.0]], [[1.0, 2.5]])),
    (list_eq_args, ([True, 2], [1, 2.0])),
    (nested_eq, ([1.0], 1.0)), (nested_eq, ([1.0], 2.0)),
    (identity_inside_sequences, (1.0,)), (identity_inside_sequences, (math.nan,)),
    (mixed_kinds, (1.0,)), (mixed_kinds, (2.0,)),
    (different_lengths, ([1.0], [1.0, 2.0])), (different_lengths, ((1.0, 2.0), (1.0,))),
    (constants_compare, (1.0,)),
    (equal_after_arith, (1.0, 2.0)), (equal_after_arith, (1.0, 1.0)),
])
def test_sequence_equality_is_elementwise(fn, args):   # 2
    same(fn, *args)


def ordering_of_traced_sequences(x, y):
    return [x] < [y]


def ordering_list_tuple(x):
    return [x] < (x,)


def ordering_with_none(x):
    return x < None


def ordering_of_input_constants(xs):
    return [None] == xs


class Opaque:
    def __init__(self):
        self.v = 1.0

    def __eq__(self, other):
        return True

    __hash__ = object.__hash__


def compare_objects(a, b):
    return a == b


def object_in_list(a, x):
    return [a, x] == [a, x]


def test_sequence_ordering_and_object_comparisons():   # 2
    same(ordering_of_traced_sequences, 1.0, 2.0)         # lexicographic, item by item
    same(ordering_of_traced_sequences, 2.0, 1.0)
    same(ordering_of_traced_sequences, 1.0, float("nan"))
    same(ordering_list_tuple, 1.0)                      # TypeError: '<' between list and tuple
    same(ordering_with_none, 1.0)                       # TypeError: '<' between float and NoneType
    same(ordering_of_input_constants, [None])
    unsupported(compare_objects, Opaque(), Opaque(), match="comparing")
    unsupported(object_in_list, Opaque(), 1.0, match="comparing")


# ------------------------------------------------------------------------------------ 3: is
def is_same(a, b):
    return a is b


def is_not_same(a, b):
    return a is not b


def is_none(x, xs, o):
    return x is None, xs is None, o is None, x is not None, None is xs


def local_identity(x):
    a = [x]
    b = a
    c = [x]
    return a is b, a is c, a is not c


def bool_identity(b, c):
    return b is True, b is not False, b is c, (b < c) is False


def test_identity():   # 3
    for args in [(True, False), (False, False), (True, True)]:
        same(bool_identity, *args)
    shared = [1.0]
    unsupported(is_same, shared, shared, match="'is' between")
    unsupported(is_same, [1.0], [1.0], match="'is' between")
    unsupported(is_not_same, Opaque(), Opaque(), match="'is' between")
    unsupported(is_same, 1.0, 1.0, match="'is' between a traced float")
    unsupported(is_same, 1, [1.0], match="'is' between a traced int")
    same(is_none, 1.0, [1.0], Opaque())
    same(local_identity, 1.0)


# ------------------------------------------------------------------- 10: tuples stay tuples
def tuple_slice_repeat(t):
    return isinstance(t[1:], tuple), isinstance(t * 2, tuple), isinstance(2 * t, tuple), isinstance(t[::2], tuple)


def tuple_slice_concat(t):
    return t[1:] + (5.0,)


def list_slice_is_list(xs):
    return isinstance(xs[1:], list), isinstance(xs * 2, list), len(xs[::-1] + [1.0])


def concat(a, b):
    return len(a + b)


def local_tuple_ops(x):
    t = (x, 2.0)
    u = t[1:] + t * 2
    return u


def concat_with_number(xs, x):
    return xs + x


def number_plus_list(x, xs):
    return x + xs


def sequence_minus(xs, ys):
    return xs - ys


def str_ops(x):
    return x if "ab" + "c" == "abc" and "ab"[1:] == "b" and "a" * 2 == "aa" else -x


def test_tuples_and_concatenation():   # 10
    same(tuple_slice_repeat, (1.0, 2.0))
    same(tuple_slice_concat, (1.0, 2.0))
    same(list_slice_is_list, [1.0, 2.0, 3.0])
    same(concat, [1.0], (2.0,))          # TypeError: can only concatenate list (not "tuple") to list
    same(concat, (1.0,), [2.0])
    same(concat, (1.0,), (2.0, 3.0))
    same(concat, [1.0], [2.0, 3.0])
    same(local_tuple_ops, 1.0)
    same(concat_with_number, [1.0], 2.0)
    same(concat_with_number, (1.0,), 2)
    same(number_plus_list, 2.0, [1.0])
    same(sequence_minus, [1.0], [2.0])
    same(str_ops, 1.0)


# ------------------------------------------------------------------------------- 19: membership
def str_contains(x):
    return x if "ab" in "abc" and "z" not in "abc" and 2 in range(3) else -x


def traced_in_tuple(x):
    return x in (1.0, 2.0), x not in [1.0, 2.0], x in [x], (x, 1.0) in [(2.0, 1.0), (x, 1.0)]


def traced_in_input(xs, n):
    return n in xs, n not in xs, n in range(5)


def traced_in_str(x):
    return x in "abc"


def in_iterator(xs, n):
    it = iter(xs)
    found = n in it
    return found, len(list(it))


def int_in_ranges(n, b):
    return (n in range(10), n in range(2, 10, 3), n in range(10, -10, -4), n not in range(0),
            b in range(1, 3), n in range(-5, 5), b in range(0, 10, 2), n in range(2**40, 2**41, 7))


def float_in_range(x):
    return x in range(3)


def iterate_range_lazily(x):
    for i in range(10 ** 12):
        if i == 3:
            return x * i
    return x


def iterate_none(x):
    for v in None:
        return v
    return x


def in_traced_number(x):
    return 1.0 in x


def test_membership():   # 19
    same(in_traced_number, 2.0)
    for n in [-6, -5, -2, 0, 1, 2, 3, 5, 8, 9, 10, 11, 2**40 + 7, 2**40 + 8]:
        same(int_in_ranges, n, n % 2 == 0)
    same(float_in_range, 1.0)
    same(float_in_range, 1.5)
    same(iterate_range_lazily, 2.0)
    same(iterate_none, 2.0)
    same(str_contains, 1.0)
    same(traced_in_tuple, 1.0)
    same(traced_in_tuple, 3.0)
    same(traced_in_tuple, math.nan)
    same(traced_in_input, [1, 2, 3], 2)
    same(traced_in_input, [1, 2, 3], 7)
    same(traced_in_str, 1.0)                  # TypeError: 'in <string>' requires string as left operand
    same(in_iterator, [1, 2, 3], 2)
    same(in_iterator, [1, 2, 3], 9)


# ------------------------------------------------------- a tuple argument a loop replaces with its own
def euler_steps(state, dt, steps):
    s = state
    for _ in range(steps):
        x, v = s
        s = (x + dt * v, v - dt * x)
    return s, s[0] * s[1]


def test_a_tuple_argument_merges_with_the_tuples_a_loop_makes():
    for args in (((1.0, 0.0), 0.1, 50), ((0.5, 2.0), 0.01, 0), ((1.0, 0.0), 0.1, 3), ((1.0, 2.0, 3.0), 0.1, 2)):
        same(euler_steps, *args)          # (the last: CPython's ValueError, the tuple does not unpack)
