"""max/min with key= and default=, sorted(), list.sort(), all() and any() of traced values
(tracer.frontend.pybuiltins, inlined), and the ordering of tuples and lists holding traced
values, against CPython."""
import itertools

import pytest

from tracer import trace


def keyed_extremes(xs):
    return max(xs, key=abs), min(xs, key=lambda v: (v * v, -v)), max(xs[0], xs[1], key=lambda v: -v)


def argmax_over_a_traced_range(n, a):
    return max(range(1, n), key=lambda i: (i * a) % 7), min(range(n, 0, -2), key=lambda i: abs(i - 4.5))


def in_a_loop(n):
    total = 0
    for k in range(2, n):
        total += max(range(k, n), key=lambda i: (i * 37) % 11)
    return total


def with_default(n):
    return min(range(n), key=lambda i: abs(i - 3.5), default=-1)


def sorts(xs):
    ys = list(xs)
    ys.sort(key=lambda v: (v > 0, -v))
    return sorted(xs), sorted(xs, reverse=True), sorted(xs, key=lambda v: -abs(v)), ys


def ranking(xs):
    return sorted(range(len(xs)), key=lambda k: -xs[k])[:2], sorted(zip(xs, range(len(xs))), reverse=True)


@pytest.mark.parametrize("fn, args", [
    (keyed_extremes, ([3.0, -5.0, 2.0, 5.0],)), (keyed_extremes, ([0.0, -0.0, 1.5],)),
    (argmax_over_a_traced_range, (20, 3)), (argmax_over_a_traced_range, (9, 5)), (in_a_loop, (30,)),
    (with_default, (8,)), (with_default, (0,)), (sorts, ([3.0, -5.0, 2.0, 5.0, -3.0, 2.0],)),
    (ranking, ([1.0, 4.0, 2.0, 4.0, 0.5],)), (sorts, ([1, 3, 2],)),
])
def test_as_cpython(fn, args):
    compiled = trace(fn, fullgraph=True)
    for _ in range(2):
        assert compiled(*args) == fn(*args)


def test_an_empty_range_raises_cpythons_error():
    compiled = trace(argmax_over_a_traced_range, fullgraph=True)
    compiled(20, 3)
    with pytest.raises(ValueError) as got:
        compiled(1, 3)
    with pytest.raises(ValueError) as expected:
        argmax_over_a_traced_range(1, 3)
    assert str(got.value) == str(expected.value)


def test_tuples_and_lists_order_as_in_cpython():
    def compare(a, b, c, d):
        return (a, b) < (c, d), (a, b) >= (c, d), [a, 1] <= [c, 1], (a, (b, 1)) > (c, (d, 0)), (a,) < (c, d)
    compiled = trace(compare, fullgraph=True)
    values = [0, 1, 2, 1.5, "nan"]
    for combo in itertools.product(values, repeat=4):
        args = [float(v) if v == "nan" else v for v in combo]      # a NaN object of its own each
        assert compiled(*args) == compare(*args), args


def all_and_any(xs, n, d):
    return (all(x > 0 for x in xs), any(x > 2 for x in xs), all([]), any(xs),
            all(n % k for k in range(2, 6)), any(1.0 / (d - k) > 1 for k in range(3)))


@pytest.mark.parametrize("args", [([1.0, 2.0, 3.0], 7, 5.0), ([1.0, -2.0, 0.0], 8, 0.5), ([0.0], 9, 1.5),
                                  ([3.0], 9, 1.0)])
def test_all_and_any_stop_where_cpython_stops(args):
    """any() stops at its first true item: 1.0 / (d - k) is not computed past it (d = 1.5, k = 1
    is true first; d = 1.0 divides by zero at k = 1, as in CPython)."""
    compiled = trace(all_and_any, fullgraph=True)
    try:
        expected = all_and_any(*args)
    except ZeroDivisionError:
        with pytest.raises(ZeroDivisionError):
            compiled(*args)
        return
    assert compiled(*args) == expected


def next_items(x, n):
    it = iter([x, x * 2, x * 3])
    a = next(it)
    pairs = zip([1, 2], [x, x])

    def halves():
        k = 1
        while True:
            yield k * 0.5
            k += 1
    gen = halves()
    return a + next(it), next(it), next(it, -1.0), next(pairs), next(gen) + next(gen) * n


def callables(x):
    def inner(y):
        return y
    return callable(x), callable(inner), callable(abs), callable([x]), callable(lambda: x)


@pytest.mark.parametrize("fn, args", [(next_items, (1.5, 3)), (callables, (2.0,))])
def test_next_and_callable_as_cpython(fn, args):
    assert trace(fn, fullgraph=True)(*args) == fn(*args)


def test_next_of_a_number_is_cpythons_error():
    with pytest.raises(TypeError, match="'float' object is not an iterator"):
        trace(lambda x: next(x), fullgraph=True)(1.0)
