"""`array.array` arguments the native entry reads itself (tracer.ir.ListArg with a typecode,
codegen/entry_lists.py, tracer/csrc/gather.c): no Python runs between the call and the kernel.
CPython is the oracle: results, the arrays after the call (the same objects, written in place),
exceptions, arguments of other kinds, and the arrays' exports released on every way out (an
array can be resized after any call)."""
from __future__ import annotations

import copy
import threading
from array import array

import pytest
from like_python import bits, outcome

from tracer import trace


def fast_paths(traced) -> list[bool]:
    return [spec.fast for spec in traced.specializations]


def contents(args):
    return [(a.typecode, bits(a.tolist())) if type(a) is array else bits(a) for a in args]


def check(compiled, fn, *args):
    """`compiled` gives CPython's outcome for `args` and leaves them as CPython does."""
    plain, traced = copy.deepcopy(args), copy.deepcopy(args)
    expected, got = outcome(fn, *plain), outcome(compiled, *traced)
    assert (got[0], bits(got[1]) if got[0] == "return" else got[1:]) == \
           (expected[0], bits(expected[1]) if expected[0] == "return" else expected[1:])
    assert contents(traced) == contents(plain)
    return traced


def total(a):
    s = 0.0
    for v in a:
        s += v
    return s


def ends(a):
    return a[0] + a[-1], a[1]


def running_sums(a):
    for i in range(1, len(a)):
        a[i] += a[i - 1]
    return a[len(a) - 1]


def axpy(alpha, x, y):
    for i in range(len(x)):
        y[i] += alpha * x[i]


def doubled(a):
    out = [0.0] * len(a)
    for i in range(len(a)):
        out[i] = 2.0 * a[i]
    return out, len(out)


def scale_ints(a, k):
    for i in range(len(a)):
        a[i] *= k


def divide_by_next(a):
    for i in range(len(a) - 1):
        a[i] = a[i] / a[i + 1]


FLOATS = [0.25 * k - 2.0 for k in range(24)]


@pytest.mark.parametrize("typecode", ["d", "f"])
def test_float_arrays_are_read_and_written_by_the_entry(typecode):
    for fn, args in ((total, (array(typecode, FLOATS),)), (ends, (array(typecode, FLOATS),)),
                     (running_sums, (array(typecode, FLOATS),)), (axpy, (0.5, array(typecode, FLOATS), array("d", FLOATS[::-1])))):
        compiled = trace(fn, fuse_fma=False, fullgraph=True)
        for _ in range(3):
            check(compiled, fn, *args)
        assert fast_paths(compiled) == [True], fn.__name__


@pytest.mark.parametrize("typecode", ["b", "B", "h", "H", "i", "I", "l", "q"])
def test_int_arrays_are_read_and_written_by_the_entry(typecode):
    values = [k % 50 for k in range(30)] if typecode.isupper() else [(-1) ** k * (k % 50) for k in range(30)]
    compiled = trace(scale_ints, fullgraph=True)
    for k in (3, 2, 1000, -1):           # past the typecode's range: CPython's OverflowError, the array as it left it
        check(compiled, scale_ints, array(typecode, values), k)
    assert all(fast_paths(compiled))
    sums = trace(running_sums, fullgraph=True)
    check(sums, running_sums, array(typecode, values))
    check(sums, running_sums, array(typecode, values))
    assert fast_paths(sums) == [True]


def test_an_array_read_in_place_sees_changes_between_calls():
    f = trace(total, fullgraph=True)
    a = array("d", FLOATS)
    assert f(a) == total(a)
    a[3] = 1e6
    assert f(a) == total(a)
    a.append(1.0)                         # the export was released: the array can grow
    a.pop()
    assert f(a) == total(a) and fast_paths(f) == [True]


def test_other_kinds_of_arguments_miss_and_compile_again():
    f = trace(total)
    a = array("d", FLOATS)
    assert f(a) == total(a)

    class Doubles(array):
        def __iter__(self):
            return iter([1.0, 2.0])
    for other in (array("d", FLOATS[:5]), array("f", FLOATS), FLOATS, Doubles("d", FLOATS), array("d", FLOATS)):
        assert outcome(f, other) == outcome(total, other)
    assert f(array("d", [])) == 0.0


def test_failures_and_guard_misses_release_the_arrays():
    f = trace(divide_by_next, fullgraph=True)
    check(f, divide_by_next, array("d", [1.0, 2.0, 4.0, 8.0]))
    a = check(f, divide_by_next, array("d", [1.0, 2.0, 0.0, 8.0]))[0]        # ZeroDivisionError part way
    a.append(1.0)
    g = trace(total, fullgraph=True)
    b = array("d", FLOATS)
    g(b)
    g(array("d", FLOATS[:3]))
    c = array("f", FLOATS)
    g(c)
    for x in (b, c):
        x.extend([1.0, 2.0])
        assert g(x) == total(x)


def test_the_same_array_twice_runs_as_cpython():
    f = trace(axpy, fuse_fma=False)
    x, y = array("d", FLOATS), array("d", FLOATS[::-1])
    f(2.0, x, y)
    check(f, axpy, 2.0, x, y)
    same = array("d", FLOATS)
    plain = array("d", FLOATS)
    f(0.5, same, same)
    axpy(0.5, plain, plain)
    assert same == plain


def test_a_list_made_from_an_array_is_returned_as_a_list():
    f = trace(doubled, fullgraph=True)
    for _ in range(2):
        got = check(f, doubled, array("d", FLOATS))
        assert type(got[0]) is array
    result = f(array("d", FLOATS))
    assert type(result[0]) is list and result == doubled(array("d", FLOATS))
    assert fast_paths(f) == [True]


def test_arrays_read_by_threads_at_once():
    f = trace(total, fullgraph=True)
    a = array("d", [0.5] * 200_000)
    assert f(a) == total(a)
    results = []

    def work():
        results.extend(f(a) for _ in range(20))
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [total(a)] * 80
    a.append(1.0)


def sum_rows(rows):
    s = 0.0
    for r in rows:
        for v in r:
            s += v
    return s


def scale_rows(rows, k):
    for r in rows:
        for i in range(len(r)):
            r[i] *= k
    return rows[0][0]


def first_of_pair(t):
    a, b = t
    return a[0] + b[1], len(a)


def test_arrays_inside_lists_and_tuples():
    rows = [array("d", [1.0, 2.0, 3.0]), array("f", [4.0, 5.0, 6.5])]
    for fn, args in ((sum_rows, (rows,)), (scale_rows, (rows, 1.5)),
                     (first_of_pair, ((array("d", [1.0, 2.0, 3.0]), array("i", [4, 5, 6])),))):
        compiled = trace(fn, fuse_fma=False, fullgraph=True)
        for _ in range(2):
            check(compiled, fn, *args)
        assert fast_paths(compiled) == [True], fn.__name__
    f = trace(scale_rows, fullgraph=True)
    f([array("d", [1.0, 2.0]), array("d", [3.0, 4.0])], 2.0)
    shared, plain = array("d", [1.0, 2.0]), array("d", [1.0, 2.0])
    f([shared, shared], 2.0)                # one array twice: CPython scales it twice
    scale_rows([plain, plain], 2.0)
    assert shared == plain == array("d", [4.0, 8.0])
