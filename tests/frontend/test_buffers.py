"""`array.array` arguments (tracer.frontend.buffers): read and written in place as CPython does,
for every typecode traced code takes, against CPython on the same arguments: the result (or the
exception, type and message) and the arrays' contents afterwards. Each function is compiled whole
(`fullgraph=True`) and called twice (the compiling call, then the dispatcher's)."""
from __future__ import annotations

import copy
from array import array

import pytest
from like_python import bits, outcome

import tracer
from tracer import UnsupportedError, trace


def contents(args):
    return [(a.typecode, bits(a.tolist())) if type(a) is array else bits(a) for a in args]


def check(fn, *args):
    """`fn` compiled whole gives CPython's outcome, and leaves the arguments as CPython does."""
    compiled = trace(fn, fuse_fma=False, fullgraph=True)
    for _ in range(2):
        plain, traced = copy.deepcopy(args), copy.deepcopy(args)
        expected = outcome(fn, *plain)
        got = outcome(compiled, *traced)
        if got[0] == "raise" and issubclass(got[1], UnsupportedError):
            pytest.fail(f"{fn.__name__}: the tracer cannot compile it: {got[2]}")
        assert (got[0], bits(got[1]) if got[0] == "return" else got[1:]) == \
               (expected[0], bits(expected[1]) if expected[0] == "return" else expected[1:])
        assert contents(traced) == contents(plain)


def total(a):
    s = 0.0
    for v in a:
        s += v
    return s


def scale_in_place(a, f):
    for i in range(len(a)):
        a[i] *= f
    return a[0], len(a)


def ends_and_methods(a, x):
    return a[0] + a[-1], a.count(x), a.index(x), a.tolist()[:3], a.typecode, a.itemsize


def running_sums(a):
    for i in range(1, len(a)):
        a[i] += a[i - 1]
    a.reverse()
    return a[0]


def dot(x, y):
    return sum(u * v for u, v in zip(x, y))


def argmax(a):
    return max(range(len(a)), key=a.__getitem__), max(a), min(a), sorted(a)[:2]


def gather_scatter(data, index, out):
    for k, i in enumerate(index):
        out[i] += data[k]
    return len(out)


def store_at(a, i, v):
    a[i] = v
    return a[i]


def swap_rows(a, n, i, j):
    for k in range(n):
        a[i * n + k], a[j * n + k] = a[j * n + k], a[i * n + k]


FLOATS = [0.5 * k - 3.0 for k in range(20)]
INTS = [(-1) ** k * k for k in range(20)]


@pytest.mark.parametrize("typecode", ["d", "f"])
def test_float_arrays(typecode):
    check(total, array(typecode, FLOATS))
    check(total, array(typecode))
    check(scale_in_place, array(typecode, FLOATS), 1.1)
    check(scale_in_place, array(typecode, FLOATS), 1e300)            # float32: rounds to inf
    check(scale_in_place, array(typecode, FLOATS[:3]), 3)             # short: unrolled
    check(ends_and_methods, array(typecode, FLOATS * 2), 2.0)
    check(ends_and_methods, array(typecode, FLOATS), 99.0)            # ValueError: not in array
    check(running_sums, array(typecode, FLOATS))
    check(argmax, array(typecode, FLOATS))
    check(dot, array(typecode, FLOATS), array("d", FLOATS[::-1]))


@pytest.mark.parametrize("typecode", ["b", "B", "h", "H", "i", "I", "l", "q"])
def test_int_arrays(typecode):
    values = [abs(v) for v in INTS] if typecode.isupper() else INTS
    check(total, array(typecode, values))
    check(scale_in_place, array(typecode, values), 3)
    check(scale_in_place, array(typecode, values), 20)                # 'b': OverflowError part way
    check(scale_in_place, array(typecode, values), -1)                # unsigned: OverflowError at once
    check(scale_in_place, array(typecode, values), 2.0)               # TypeError: a float into an int array
    check(ends_and_methods, array(typecode, values * 2), 4)
    check(running_sums, array(typecode, values))
    check(argmax, array(typecode, values))


def test_indices_and_errors():
    a = array("d", FLOATS)
    for i in (0, 5, -1, -20, 20, -21):
        check(store_at, a, i, 7.5)
    check(store_at, array("l", INTS), 3, True)
    check(store_at, array("d", FLOATS), 3, 4)                          # an int into a float array: 4.0
    check(lambda a, i: a[i], a, 3)
    check(lambda a, i: a[i], a, 25)                                   # IndexError: array index out of range


def test_sparse_scatter_and_swaps():
    data = array("d", [float(k) for k in range(30)])
    index = array("i", [(7 * k) % 11 for k in range(30)])
    check(gather_scatter, data, index, array("d", [0.0] * 11))
    check(gather_scatter, data, array("i", [0, 50] * 15), array("d", [0.0] * 11))   # IndexError at k = 1
    check(swap_rows, array("d", [float(k) for k in range(25)]), 5, 1, 3)


def test_same_array_twice_runs_as_cpython():
    check(gather_scatter, array("d", [1.0] * 12), array("i", [1] * 12), array("d", [1.0] * 12))
    a = array("d", [1.0] * 12)
    plain, traced = copy.deepcopy(a), copy.deepcopy(a)
    compiled = trace(gather_scatter, fuse_fma=False)
    compiled(plain, array("i", list(range(12))), plain)
    gather_scatter(traced, array("i", list(range(12))), traced)
    assert plain == traced


def test_new_length_or_typecode_compiles_again():
    compiled = trace(total, fullgraph=True)
    assert compiled(array("d", [1.0, 2.0])) == 3.0
    assert compiled(array("d", FLOATS)) == sum(FLOATS)
    assert compiled(array("i", [1, 2, 3])) == 6.0
    assert compiled(array("d", [1.0, 2.0])) == 3.0


def concatenate(a, b):
    return a + b


def sliced(a):
    return a[1:3]


def appended(a):
    a.append(1.0)


def test_what_changes_an_array_runs_as_python():
    for fn, args in ((concatenate, (array("d", [1.0]), array("d", [2.0]))), (sliced, (array("d", FLOATS),)),
                     (appended, (array("d", FLOATS),))):
        with pytest.raises(UnsupportedError, match="array"):
            trace(fn, fullgraph=True)(*copy.deepcopy(args))
        plain, traced = copy.deepcopy(args), copy.deepcopy(args)
        assert outcome(trace(fn), *traced) == outcome(fn, *plain)
        assert traced == plain
    with pytest.raises(TypeError, match="can only append array"):
        trace(concatenate)(array("d", [1.0]), 2.0)


def test_unsupported_typecode_is_named():
    with pytest.raises(UnsupportedError, match="array\\('u'\\)"):
        trace(lambda a: len(a), fullgraph=True)(array("u", "abc"))
    assert tracer.explain(total, array("Q", [1, 2])).compiled is False


class Grid:
    def __init__(self, n):
        self.n = n
        self.cells = array("d", [float(k % 7) for k in range(n)])


def relax(g, sweeps):
    c = g.cells
    for _ in range(sweeps):
        for i in range(1, g.n - 1):
            c[i] = 0.5 * (c[i - 1] + c[i + 1])
    return sum(g.cells)


def test_an_array_an_object_holds():
    compiled = trace(relax, fuse_fma=False, fullgraph=True)
    for _ in range(2):
        plain, traced = Grid(30), Grid(30)
        assert bits(compiled(traced, 5)) == bits(relax(plain, 5))
        assert traced.cells == plain.cells
