"""Lists built inside `@trace` (tracer.frontend.opcodes.containers, tracer.frontend.objects): their
methods, in-place `+=` and `*=`, iterating a list that changes, closures made in comprehensions,
and starred unpacking.

Each test compares the traced function with CPython on the same inputs: the same value of the
same type, or the same exception type and message. Where the tracer does not support something
it must say so (`UnsupportedError`), never answer differently. Numbers in comments refer to the
review findings these tests pin down.
"""
from __future__ import annotations

import pytest
from like_python import same, unsupported

from tracer import DataDependentControlFlow, trace


# -------------------------------------------------------------- 4: methods of lists built in the trace
def list_index_count(n):
    lst = [1, 2, n, 2]
    return lst.index(n), lst.count(2), lst.index(2, 2), lst.index(2, -3, 10), lst.count(n)


def list_index_missing(n):
    return [1, 2].index(n)


def list_index_bad_bound(n):
    return [1, 2].index(n, 1.0)


def list_remove(n):
    lst = [1, n, 3, n]
    lst.remove(n)
    return lst[0], lst[1], lst[2], len(lst)


def list_remove_missing(n):
    lst = [1, 3]
    lst.remove(n)
    return len(lst)


def list_float_index(x):
    lst = [1.0, 2.0, x]
    return lst.index(x)


def list_mutators(x, n):
    lst = [x, 2.0]
    lst.append(x * 2.0)
    lst.insert(n, 5.0)
    lst.extend([7.0, x])
    lst.extend((8.0,))
    popped = lst.pop()
    first = lst.pop(0)
    lst.reverse()
    copy = lst.copy()
    copy.append(1.0)
    last = lst.pop(n)
    total = sum(lst)
    lst.clear()
    return popped, first, last, total, len(lst), len(copy)


def list_extend_input(xs, x):
    lst = [x]
    lst.extend(xs)
    return sum(lst), len(lst)


def list_pop_errors(n):
    lst = [1.0]
    lst.pop()
    return lst.pop(n)


def list_pop_float(x):
    return [1.0, 2.0].pop(x)


def list_sort_traced(x):
    lst = [x, 1.0]
    lst.sort()
    return lst[0]


def list_sort_constants(x):
    lst = [3, 1, 2]
    lst.sort(reverse=True)
    return lst[0] * x


def list_arity(x):
    lst = [x]
    lst.append()
    return x


def list_keyword(x):
    lst = [x]
    lst.append(x=x)
    return x


def list_unknown_method(x):
    lst = [x]
    return lst.__sizeof__()


def test_local_list_methods():   # 4
    same(list_index_count, 2)
    same(list_index_count, 7)
    same(list_index_missing, 5)
    same(list_index_bad_bound, 1)
    same(list_remove, 2)
    same(list_remove_missing, 5)
    same(list_mutators, 1.5, 1)
    same(list_mutators, 1.5, -2)
    same(list_extend_input, [1.0, 2.0], 3.0)
    same(list_pop_errors, 0)
    same(list_pop_errors, 3)
    same(list_pop_float, 1.0)
    same(list_sort_constants, 2.0)
    same(list_arity, 1.0)
    same(list_keyword, 1.0)
    with pytest.raises(DataDependentControlFlow):
        trace(list_float_index, fullgraph=True)(2.0)
    same(list_sort_traced, 2.0)
    same(list_sort_traced, 0.5)
    unsupported(list_unknown_method, 2.0, match="__sizeof__")


# ------------------------------------------------------------------------- 5: in-place += and *=
def inplace_add_alias(x):
    a = [x]
    b = a
    b += [1.0]
    b += (2.0,)
    return len(a), a[2]


def inplace_mul_alias(x, n):
    a = [x, 1.0]
    b = a
    b *= n
    return len(a), sum(a)


def inplace_add_number(x):
    a = [x]
    a += x
    return len(a)


def inplace_mul_float(x):
    a = [x]
    a *= 2.0
    return len(a)


def inplace_on_input(xs, x):
    b = xs
    b += [x]
    return x


def inplace_on_input_tuple(t, x):
    b = t
    b += (x,)
    return len(b), len(t), b[-1]


def inplace_errors(xs, t, x, k):
    if k == 0:
        xs -= 1
    elif k == 1:
        t += [x]
    elif k == 2:
        t *= x
    elif k == 3:
        t -= t
    elif k == 4:
        s = "a"
        s -= 1
    elif k == 5:
        n = 3
        n |= "a"
    return x


def inplace_on_tuple_and_numbers(t, x):
    u = t
    u *= 2
    n = 2
    n *= t
    s = "ab"
    s += "c"
    s *= 2
    return len(u), len(n), len(t), len(s)


def test_inplace_operators_on_lists():   # 5
    for k in range(6):
        same(inplace_errors, [1.0], (1.0,), 2.0, k)
    same(inplace_on_tuple_and_numbers, (1.0, 2.0), 1.0)
    same(inplace_add_alias, 1.0)
    same(inplace_mul_alias, 1.0, 3)
    same(inplace_mul_alias, 1.0, 0)
    same(inplace_add_number, 1.0)
    same(inplace_mul_float, 1.0)
    same(inplace_on_input_tuple, (1.0,), 2.0)
    xs = [1.0]
    unsupported(inplace_on_input, xs, 2.0, match="mutating a list passed in")
    assert xs == [1.0]


# ---------------------------------------------------------------------- 6: iterating a live list
def grow_while_iterating(x):
    lst = [x]
    for v in lst:
        if len(lst) < 3:
            lst.append(v + 1.0)
    return sum(lst)


def shrink_while_iterating(x):
    lst = [x, 2.0, 3.0, 4.0]
    seen = 0
    for _ in lst:
        lst.pop()
        seen += 1
    return seen, len(lst)


def partly_consumed_iterator(xs):
    it = iter(zip(xs, xs))
    for a, _ in it:   # noqa: B007  (a is read after the loop)
        break
    rest = [b for b, _ in it]
    return a, len(rest)


def iterate_traced(x):
    for v in x:
        return v
    return 0.0


def test_iteration_of_local_lists_is_live():   # 6
    same(grow_while_iterating, 1.0)
    same(shrink_while_iterating, 1.0)
    same(partly_consumed_iterator, [1.0, 2.0, 3.0])
    same(iterate_traced, 1.0)                   # TypeError: 'float' object is not iterable


# ----------------------------------------------------------- 8: closures made in comprehensions
def comprehension_closures(x):
    a = [lambda: x * i for i in range(2)]
    b = [lambda: x + i for i in range(5, 7)]
    return a[0]() + a[1]() + b[0]() + b[1]()


def comprehension_shadows_cell(x):
    i = 10.0
    g = lambda: i * x
    a = [lambda: x * i for i in range(3)]
    return g() + a[2]() + i


def comprehension_in_loop(x):
    out = []
    for k in range(3):
        out += [lambda: x * i + k for i in range(2)]
    return sum(f() for f in out)


def nested_comprehension_closures(x):
    fs = [[lambda: x * i * j for j in range(2)] for i in range(3)]
    return fs[2][1]() + fs[1][0]()


def comprehension_before_cell_assigned(x):
    fs = [lambda: i for i in range(2)]
    i = 7
    h = lambda: i
    return fs[0]() + fs[1]() + h() + x


@pytest.mark.parametrize("fn", [comprehension_closures, comprehension_shadows_cell, comprehension_in_loop,
                                nested_comprehension_closures, comprehension_before_cell_assigned])
def test_comprehension_cells(fn):   # 8
    same(fn, 1.5)


# ------------------------------------------------------------------------- 9: starred unpacking
def unpack_ex(xs):
    a, *b, c = xs
    return a + c, len(b)


def unpack_ex_front(xs):
    *a, b, c, d = xs
    return len(a) + b


def test_unpack_ex_too_short():   # 9
    same(unpack_ex, [1.0])
    same(unpack_ex, [])
    same(unpack_ex, [1.0, 2.0])
    same(unpack_ex, (1.0, 2.0, 3.0, 4.0))
    same(unpack_ex_front, [1.0, 2.0])
    same(unpack_ex_front, [1.0, 2.0, 3.0])


# ------------------------------------------------------------------------- del lst[i]
def delete_items(x, n):
    lst = [x, x * 2, x * 3, 4.0, 5.0]
    del lst[1]
    del lst[-1]
    del lst[n:]
    return lst, len(lst)


def delete_out_of_range(x):
    lst = [x]
    del lst[3]


def test_del_of_list_items_is_cpythons():
    same(delete_items, 1.5, 2)
    with pytest.raises(IndexError, match="list assignment index out of range"):
        trace(delete_out_of_range, fullgraph=True)(1.0)
