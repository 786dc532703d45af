"""Items of a list whose items differ in type (ints and floats), read at an index known only at run
time (tracer.frontend.mixed_numbers): compiled, and the same as CPython, types included (an int
stays an int, inf stays a float). Where an item is not a number, or the program does what such an
item does not support, the call runs as Python, with CPython's result."""
from __future__ import annotations

import math

import pytest

import tracer
from tracer import trace


def fewest_coins(coins, amount):
    inf = float("inf")
    fewest = [0] + [inf] * amount
    for v in range(1, amount + 1):
        for c in coins:
            if c <= v and fewest[v - c] + 1 < fewest[v]:
                fewest[v] = fewest[v - c] + 1
    return fewest, int(fewest[amount]) if fewest[amount] < inf else -1


def mixed_arithmetic(xs, k):
    vals = [1, 2.5, True, -3, 0.0, 2 ** 53 + 1, float(2 ** 53)]
    for x in xs:
        i = int(x) % len(vals)
        j = (i + k) % len(vals)
        if x > 0:                                     # a data-dependent change: the list is Mixed
            vals[i] = vals[i] * 2 - vals[j] + 1
        vals[j] = vals[j] + vals[i]
    n = len(vals)
    summary = [(vals[i] < vals[(i + 1) % n], vals[i] == vals[(i + k) % n], float(vals[i]), bool(vals[i]))
               for i in range(n)]
    return vals, summary, int(vals[0]) + int(vals[1]) + int(vals[2])


def big_ints(xs):
    vals = [0, 1]
    for x in xs:
        if x > 0:
            vals.append(2 ** 62)
        else:
            vals.append(1.5)
    total = 0                                    # an int, then an int or a float (carried by the loop)
    for k in range(len(vals)):
        total = total + vals[k] * 2              # past 64 bits: Python's int
    return total, [int(total), float(total) > 1e18, total < 3, vals[len(vals) - 1]]


def to_int_of_inf(xs):
    vals = [1, float("inf")]
    for x in xs:
        if x > 0:
            vals.append(len(vals))
    return [int(vals[k]) for k in range(len(vals) - 1, -1, -1)]


def divides(xs):
    vals = [4, 0.5]
    for x in xs:
        if x > 0:
            vals.append(3)
    return [vals[k] / 2 for k in range(len(vals))]


def holds_none(xs):
    vals = [1, 2.5]
    for x in xs:
        vals.append(None if x > 10 else x)
    return [vals[k] + 1 for k in range(2)] if xs else []


def same(got, want):
    assert repr(got) == repr(want)          # (1 and 1.0, True and 1 differ in repr)


def test_fewest_coins_compiles_as_cpython():
    traced = trace(fewest_coins)
    for coins, amount in (([1, 2, 5], 11), ([3, 7], 5), ([2], 3), ([4, 9], 30)):
        same(traced(coins, amount), fewest_coins(coins, amount))
    assert tracer.explain(fewest_coins, [1, 2, 5], 11).compiled


@pytest.mark.parametrize("xs,k", [([0.5, 1.5, 2.5, -3.5, 4.0, 5.5], 1), ([6.5, -1.0, 3.25, 2.0], 3),
                                  ([1.0] * 5, 2), ([], 1)])
def test_arithmetic_comparisons_and_conversions(xs, k):
    traced = trace(mixed_arithmetic)
    same(traced(list(xs), k), mixed_arithmetic(list(xs), k))


def test_an_int_past_64_bits_is_pythons():
    traced = trace(big_ints)
    for xs in ([1.0, -1.0, 2.0], [1.0] * 4, [-1.0, -2.0], [-1.0], []):
        assert repr(traced(xs)) == repr(big_ints(xs))         # (returned: an int, or a float)
    assert tracer.explain(big_ints, [1.0, -1.0]).compiled


def test_int_of_inf_raises_overflow_error():
    traced = trace(to_int_of_inf)
    with pytest.raises(OverflowError) as got:
        traced([1.0, 2.0])
    with pytest.raises(OverflowError) as want:
        to_int_of_inf([1.0, 2.0])
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("fn,args", [(divides, ([1.0, -2.0, 3.0],)), (holds_none, ([1.0, 20.0],)),
                                     (holds_none, ([1.0, 2.0],))])
def test_what_a_mixed_number_does_not_do_runs_as_python(fn, args):
    traced = trace(fn)
    assert repr(traced(*args)) == repr(fn(*args))
    assert repr(traced(*args)) == repr(fn(*args))


def test_math_functions_of_one_are_refused_not_guessed():
    def floor_all(xs):
        vals = [1, 2.5]
        for x in xs:
            if x > 0:
                vals.append(7)
        return [math.floor(vals[k]) for k in range(len(vals))]
    traced = trace(floor_all)
    assert repr(traced([1.0, -1.0])) == repr(floor_all([1.0, -1.0]))


USES = {
    "abs": lambda m: abs(m), "neg": lambda m: -m, "div": lambda m: m / 2, "floordiv": lambda m: m // 2,
    "fstring": lambda m: f"{m}", "isinstance": lambda m: isinstance(m, int), "type": lambda m: type(m) is int,
    "index": lambda m: [1, 2, 3][int(m) % 3], "truth": lambda m: (bool(m), not m, m and 5),
    "compare": lambda m: (m < 2, m > 2.5, m == 7), "in a tuple": lambda m: (m, m + 1),
    "int of a large float": lambda m: int(m * 1e300), "sum": lambda m: sum([m, 1, 2.5]), "dict key": lambda m: {m: 1},
}


def using(use):
    def fn(xs):
        vals = [1, 2.5, True, -3]
        for x in xs:
            if x > 0:
                vals.append(7)
            else:
                vals.append(0.5)
        return use(vals[len(vals) - 1 - len(xs) % 3])
    return fn


@pytest.mark.parametrize("name", list(USES))
def test_every_use_compiles_as_cpython_or_runs_as_python(name):
    fn = using(USES[name])
    traced = trace(fn)
    for xs in ([1.0, -1.0], [-1.0, 2.0, 3.0], [1.0], [-1.0] * 4):
        assert repr(traced(xs)) == repr(fn(xs)), xs
