"""Lists whose length changes in a data-dependent branch or loop (tracer.frontend.dynlists): made
as lists of run-time length, compiled whole (fullgraph=True), checked against CPython: results,
the exceptions and their messages, and the lists returned (new Python lists, items of CPython's
types)."""
import math

import pytest

from tests.support.oracle import outcome, same_outcome
from tracer import trace


def evens_doubled(n):
    out = []
    i = 0
    while i < n:
        if i % 3 != 0:
            out.append(i * 2)
        i += 1
    return out, len(out)


def bracket_stack(xs):
    stack = []
    total = 0.0
    for x in xs:
        if x > 0:
            stack.append(x)
        elif stack:
            total += stack.pop()
    return total, stack


def growing_primes(count):
    primes = [2]
    candidate = 3
    while len(primes) < count:
        for p in primes:                 # the list grows while it is iterated
            if p * p > candidate:
                primes.append(candidate)
                break
            if candidate % p == 0:
                break
        candidate += 2
    return primes[-1], sum(primes), primes[::10], primes[-3:], primes[5:1:-2]


def reservoir(n, k):
    res = []
    for i in range(n):
        z = math.sin(i * 0.7)
        if i < k:
            res.append(z)
        else:
            j = (i * 7919) % (i + 1)
            if j < k:
                res[j] = z
    return sorted(res), max(res), min(res), res[-1], 0.5 in res, res[0] in res, sum(res)


def records(xs):
    st = []
    for x in xs:
        if x % 2 == 0:
            st.append((x, x * 0.5))
        elif st:
            a, b = st.pop()
            st.insert(0, (a + 1, b))
    return st, list(reversed(st)), len(st)


def monotonic_window_max(xs, window):
    """The moving maximum with a deque kept in a list: read before the first append."""
    dq = []
    maxima = []
    for i in range(len(xs)):
        while dq and xs[dq[-1]] <= xs[i]:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - window:
            del dq[0]
        if i >= window - 1:
            maxima.append(xs[dq[0]])
    return maxima


def methods(n):
    xs = []
    for i in range(n):
        if i % 2:
            xs.append(i)
        else:
            xs.insert(0, -i)
    ys = xs.copy()
    ys.reverse()
    xs.sort()
    xs.extend(ys)
    found = xs.index(ys[0]) if ys else -1
    xs.remove(xs[-1])
    return xs, ys, found, xs.count(1), sorted(xs, reverse=True), sorted(ys, key=abs)


def out_of_range(n, k):
    s = []
    for i in range(n):
        if i % 2:
            s.append(i)
    return s[k]


def pop_empty(n):
    s = []
    for i in range(n):
        if i > 2:
            s.append(i)
    return s.pop()


def set_out_of_range(n):
    s = []
    for i in range(n):
        if i % 3 == 0:
            s.append(float(i))
    s[n] = 1.0
    return s


def index_missing(n):
    s = []
    for i in range(n):
        if i % 2:
            s.append(i)
    return s.index(2)


def float_index(n):
    s = []
    for i in range(n):
        if i % 2:
            s.append(i)
    return s[1.0]


def empty_returned(n):
    s = []
    while n > 100:
        s.append(n)
        n -= 1
    return s


CASES = [
    (evens_doubled, (10,)), (evens_doubled, (0,)), (evens_doubled, (1000,)),
    (bracket_stack, ([1.0, 2.0, -1.0, 3.0, -2.0, -5.0, -3.0, 4.0] * 3,)),
    (bracket_stack, ([-1.0, 2.5],)),
    (growing_primes, (60,)), (growing_primes, (3,)),
    (reservoir, (200, 5)), (reservoir, (3, 5)),
    (records, (list(range(30)),)), (records, ([1, 3],)),
    (monotonic_window_max, ([1.0, 4.0, 2.0, 8.0, 5.0, 7.0, 3.0, 9.0, 6.0, 2.0, 4.0, 8.0], 4)),
    (monotonic_window_max, ([3.0, 2.0, 1.0] * 30, 5)),
    (methods, (9,)), (methods, (2,)),
    (out_of_range, (10, 4)), (out_of_range, (10, -5)), (out_of_range, (10, 5)), (out_of_range, (10, -6)),
    (pop_empty, (10,)), (pop_empty, (3,)),
    (set_out_of_range, (7,)),
    (index_missing, (9,)), (index_missing, (9,)),
    (float_index, (4,)),
    (empty_returned, (5,)), (empty_returned, (103,)),
]


@pytest.mark.parametrize("fn, args", CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_like_cpython(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)


def test_compiled_as_a_list_of_run_time_length():
    from tracer.api import trace as api_trace
    t = api_trace(fullgraph=True)(evens_doubled)
    t(10)
    text = "\n".join(str(s.trace.function) if hasattr(s, "trace") else "" for s in t.specializations)
    assert "list_append" in text or "list[" in text


def test_returned_list_is_new_each_call():
    t = trace(fullgraph=True)(evens_doubled)
    a, _ = t(10)
    b, _ = t(10)
    assert a == b and a is not b
    a.append(99)
    assert t(10)[0] == evens_doubled(10)[0]


# ------------------------------------------------------------------------------------------ dicts
def histogram(xs):
    counts = {}
    for x in xs:
        counts[x] = counts.get(x, 0) + 1
    return counts, len(counts), sorted(counts.items())


def constant_keys(x):
    d = {"a": x, "b": 2 * x}
    d["c"] = d["a"] + d["b"]
    return d, d["c"], "a" in d, len(d)


def lattice_visits(n):
    visits = {}
    x = y = 0
    for i in range(n):
        x += (i * 7) % 3 - 1
        y += (i * 5) % 3 - 1
        visits[x, y] = visits.get((x, y), 0) + 1
    cell = max(visits, key=lambda c: (visits[c], c))
    return cell, visits[cell], len(visits), (0, 0) in visits, sorted(visits)[:3]


def factorize(n):
    factors = {}
    d = 2
    while d * d <= n:
        q, r = divmod(n, d)
        while r == 0:
            factors[d] = factors.get(d, 0) + 1
            n = q
            q, r = divmod(n, d)
        d += 1 if d == 2 else 2
    if n > 1:
        factors[n] = factors.get(n, 0) + 1
    return factors, max(factors), sum(factors.values())


def dict_methods(xs):
    d = {}
    for i, x in enumerate(xs):
        if x > 0:
            d[i] = x
    first = d.pop(0, -1.0)
    d.setdefault(100, 0.5)
    total = 0.0
    for k in d:
        total += d[k] * k
    del d[100]
    return d, first, total, list(d.keys()), list(d.values())


def missing_key(xs, k):
    d = {}
    for x in xs:
        if x > 1:
            d[x] = x * 2
    return d[k]


def comprehension_with_traced_keys(xs):
    return {x % 5: x for x in xs}


DICT_CASES = [
    (histogram, ([1, 2, 3, 2, 1, 5, 2] * 4,)), (histogram, ([],)), (histogram, ([0.5, -0.0, 0.0, 0.5],)),
    (constant_keys, (1.5,)),
    (lattice_visits, (100,)), (lattice_visits, (0,)),
    (factorize, (360,)), (factorize, (600851475143,)), (factorize, (97,)),
    (dict_methods, ([1.0, -2.0, 3.0, 4.0, -1.0],)), (dict_methods, ([-1.0, 2.0],)),
    (missing_key, ([1, 2, 3], 3)), (missing_key, ([1, 2, 3], 1)),
    (comprehension_with_traced_keys, (list(range(12)),)),
]


@pytest.mark.parametrize("fn, args", DICT_CASES, ids=lambda x: getattr(x, "__name__", ""))
def test_dicts_like_cpython(fn, args):
    test_like_cpython(fn, args)


def churn(n, modulus):
    """Thousands of keys: the hash index grows, goes stale on deletions and is rebuilt."""
    d = {}
    for i in range(n):
        k = (i * 7919) % modulus
        if k % 5 == 0 and k in d:
            del d[k]
        else:
            d[k] = d.get(k, 0) + i
    s = set()
    for i in range(n):
        s.add((i * 31) % modulus - 0.0)
    return len(d), sum(d.values()), sorted(d)[:5], len(s), 0.0 in s, min(s)


@pytest.mark.parametrize("n, modulus", [(20000, 3001), (500, 7), (3, 2)])
def test_large_dicts_and_sets_like_cpython(n, modulus):
    test_like_cpython(churn, (n, modulus))


def slice_assigned(n, start, stop, count):
    """Slice assignments into a list of run-time length, at bounds known only at run time (a
    count other than the slice's changes the length: the Python function runs)."""
    xs = []
    for i in range(n):
        xs.append(i * i)
    xs[start:stop] = xs[:count]
    ys = list(xs)
    ys[:2] = [7, 8]
    ys[-stop:] = ys[-stop:]
    return xs, ys


def slice_reversed(n, start, stop):
    xs = []
    for i in range(n):
        xs.append(i * i)
    xs[start:stop] = xs[stop:start:-1]
    return xs


def rotated_by_insert(n, k):
    xs = []
    for i in range(n):
        xs.append(i)
    for _ in range(k):
        j = xs[0] % len(xs)
        xs.insert(j, xs.pop(0))            # (an index known only at run time)
    return xs


@pytest.mark.parametrize("fn, args", [
    (slice_reversed, (10, 2, 6)), (slice_reversed, (10, -4, -1)), (slice_reversed, (10, 0, 20)),
    (slice_reversed, (10, 7, 3)), (slice_reversed, (2, 0, 1)), (slice_reversed, (0, 0, 0)),
    (slice_assigned, (10, 2, 6, 4)), (slice_assigned, (10, 2, 6, 3)), (slice_assigned, (10, -3, 20, 3)),
    (slice_assigned, (3, 5, 6, 0)),
])
def test_slice_assignment_like_cpython(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)


@pytest.mark.parametrize("args", [(7, 5), (12, 30), (1, 3)])
def test_insert_and_pop_at_run_time_indices(args):
    expected = outcome(rotated_by_insert, args)
    got = outcome(trace(fullgraph=True)(rotated_by_insert), args)
    assert same_outcome(got, expected), (got, expected)


def split_at_threshold(xs, k):
    i = 0
    while i < len(xs) and xs[i] < k:       # (i known only at run time)
        i += 1
    return xs[i:], sum(xs[:i]), xs[-1:i:-1]


def doubled_tail(xs, k):
    out = [x * 2.0 for x in xs]
    i = 0
    while i < len(out) and out[i] < k:
        i += 1
    rest = out[i:-1]
    return rest, len(rest)


def trail_after_none(xs):
    parent = [None] * len(xs)
    for i in range(1, len(xs)):
        parent[i] = i - 1 if xs[i] > xs[i - 1] else None
    chain = []
    i = len(xs) - 1
    while i is not None:                   # (the loop's exit: only a return follows)
        chain.append(xs[i])
        i = parent[i]
    return chain[::-1]


@pytest.mark.parametrize("fn, args", [
    (split_at_threshold, ([1.0, 2.0, 5.0, 7.0], 4.0)), (split_at_threshold, ([1.0, 2.0], 9.0)),
    (split_at_threshold, ([5.0, 1.0], 0.0)), (doubled_tail, ([1.0, 2.0, 5.0, 7.0, 8.0], 4.0)),
    (doubled_tail, ([1.0], 0.0)), (trail_after_none, ([3.0, 1.0, 2.0, 4.0, 6.0],)),
    (trail_after_none, ([5.0, 4.0, 3.0],)),
])
def test_slices_with_bounds_known_only_at_run_time(fn, args):
    expected = outcome(fn, args)
    got = outcome(trace(fullgraph=True)(fn), args)
    assert same_outcome(got, expected), (got, expected)
