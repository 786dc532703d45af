"""Lists returned by traced code: made again as new Python lists with CPython's items
(tracer.frontend.instances.result_shape / materialize), whether built as a display, by appends,
by a comprehension held in an array, or inside tuples and other lists."""
import pytest

from tracer import trace


def display(x):
    return [x, x * 2, 3]


def appended(n):
    out = []
    for i in range(n):
        out.append(i * 0.5)
    return out


def comprehension(xs):
    return [v * 2 for v in xs]


def nested(x, n):
    rows = [[x * i + j for j in range(3)] for i in range(n)]
    return n, rows, (x, [x + 1])


def filled(n):
    out = [0.0] * n
    for i in range(n):
        out[i] = i * 1.5
    return out


def branch(x):
    r = [x, 1.0]
    if x > 0:
        r[1] = x * 3
    return r


def twice(x):
    a = [x]
    return a, a


def long_comprehension(n):
    return [i * i for i in range(n)]


@pytest.mark.parametrize("fn, args", [
    (display, (2.5,)), (appended, (5,)), (comprehension, ([1.0, 2.0, 4.0],)), (nested, (0.5, 3)),
    (filled, (4,)), (branch, (2.0,)), (branch, (-3.0,)), (long_comprehension, (50,)),
    (comprehension, ([float(i) for i in range(300)],)),
])
def test_a_returned_list_is_cpythons(fn, args):
    compiled = trace(fn, fullgraph=True)
    for _ in range(2):                      # the first call and the compiled one
        got, expected = compiled(*args), fn(*args)
        assert got == expected
        assert type(got) is type(expected)
        assert [type(v) for v in _leaves(got)] == [type(v) for v in _leaves(expected)]


def test_the_same_list_twice_is_one_list():
    a, b = trace(twice, fullgraph=True)(1.0)
    assert a == [1.0] and a is b
    a.append(2.0)
    c, _ = trace(twice, fullgraph=True)(1.0)
    assert c == [1.0]                       # each call makes its own


def _leaves(x):
    if isinstance(x, (list, tuple)):
        return [leaf for item in x for leaf in _leaves(item)]
    return [x]
