"""Lists made in the trace that a data-dependent branch or loop changes: the call is traced
again with the lists made there held in arrays (tracer.frontend.interpreter.trace_frame), so
their item assignments are stores, on one path or in a compiled loop. Checked against CPython."""
import pytest

from tracer import trace


def pair_set_on_one_path(x):
    r = [x, 1.0]
    if x > 0:
        r[1] = x * 3
    return r


def coin_change(coins, amount):
    ways = [1] + [0] * amount
    for c in coins:
        for v in range(c, amount + 1):
            ways[v] += ways[v - c]
    last = [0] * (amount + 1)
    fewest = [amount + 1] * (amount + 1)
    fewest[0] = 0
    for v in range(1, amount + 1):
        for c in coins:
            if c <= v and fewest[v - c] + 1 < fewest[v]:
                fewest[v] = fewest[v - c] + 1
                last[v] = c
    return ways[amount], fewest[amount], last


def flags_in_a_loop(xs, limit):
    over = [False] * len(xs)
    count = 0
    for i in range(len(xs)):
        if xs[i] > limit:
            over[i] = True
            count += 1
    return over, count


def made_in_a_callee(x):
    def fresh(n):
        return [0.0] * n
    acc = fresh(3)
    k = 0
    while x > 1.0:
        x = x / 2.0
        acc[k % 3] = acc[k % 3] + x
        k += 1
    return acc


def histogram(xs, nbins):
    counts = [0] * nbins                  # written at an index computed from the data
    for x in xs:
        k = int(x * nbins)
        if k >= nbins:
            k = nbins - 1
        counts[k] += 1
    return counts


def escape_counts(n, m):
    escape = [0] * (m + 1)                # written at a loop's counter where it breaks
    inside = 0
    for i in range(n):
        c, z = 0.3 * i, 0.0
        for j in range(m):
            z = z * z + c
            if abs(z) > 2.0:
                escape[j] += 1
                break
        else:
            inside += 1
    return inside, escape


@pytest.mark.parametrize("fn, args", [
    (histogram, ([0.1, 0.5, 0.99, 0.3, 0.31, 1.0] * 3, 4)), (histogram, ([], 3)), (escape_counts, (12, 10)),
    (pair_set_on_one_path, (2.0,)), (pair_set_on_one_path, (-2.0,)), (coin_change, ([1, 2, 5], 11)),
    (coin_change, ([3, 7], 20)), (flags_in_a_loop, ([1.0, 2.0, 5.0, 1.0], 4.0)),
    (flags_in_a_loop, ([1.0, 2.0], 4.0)), (made_in_a_callee, (100.0,)), (made_in_a_callee, (0.5,)),
])
def test_as_cpython(fn, args):
    compiled = trace(fn, fullgraph=True)
    for _ in range(2):
        assert compiled(*args) == fn(*args)


def test_a_list_of_a_float_and_an_int_is_a_list_of_mixed_items():
    def mixed(xs):
        best = [xs[0], 0]          # a float and an int: an array would make the int a float
        for i in range(len(xs)):
            if xs[i] > best[0]:
                best[0] = xs[i]
                best[1] = i
        return best
    compiled = trace(mixed, fullgraph=True)
    for xs in ([1.0, 5.0, 2.0], [7.0, 5.0, 2.0], [-1.0, -0.5, 3.0]):
        assert repr(compiled(xs)) == repr(mixed(xs))


def aliased_through_a_call(x):
    def pick(a, b):
        return a
    a = [0.0, 1.0]
    y = pick(a, a)
    if x > 0:
        y[0] = x
    return a, y


def rows_changed_through_a_name(x):
    rows = [[0.0] * 3 for _ in range(2)]
    if x > 0:
        rows[1][2] = x
    r = rows[1]
    if x > 1:
        r[0] = 5.0
    return rows


@pytest.mark.parametrize("fn", [aliased_through_a_call, rows_changed_through_a_name])
@pytest.mark.parametrize("x", [2.0, 0.5, -1.0])
def test_every_name_of_a_held_list_sees_its_changes(fn, x):
    """A list is held in an array only where it is made (nothing else refers to it yet), so
    every name and every list holding it reads the same array."""
    compiled = trace(fn, fullgraph=True)
    assert compiled(x) == fn(x)


def mode_and_zeros(xs, nbins, missing):
    counts = [0] * nbins
    for x in xs:
        counts[min(int(x * nbins), nbins - 1)] += 1
    return counts.index(max(counts)), counts.count(0), counts.index(missing)


@pytest.mark.parametrize("args", [([0.1, 0.5, 0.55, 0.3, 0.56] * 3, 10, 0), ([0.1, 0.5] * 3, 10, 99)])
def test_index_and_count_of_a_held_list(args):
    compiled = trace(mode_and_zeros, fullgraph=True)
    for _ in range(2):
        try:
            expected = mode_and_zeros(*args)
        except ValueError as exc:
            with pytest.raises(ValueError, match=str(exc)):
                compiled(*args)
        else:
            assert compiled(*args) == expected


def sift_pairs(values):
    heap = []
    for i, v in enumerate(values):             # a binary heap of (priority, index) pairs
        heap.append((v, i))
        k = len(heap) - 1
        while k > 0 and heap[(k - 1) // 2] > heap[k]:
            heap[(k - 1) // 2], heap[k] = heap[k], heap[(k - 1) // 2]
            k = (k - 1) // 2
    return heap


@pytest.mark.parametrize("values", [[5.5, 1.25, 9.0, 3.5, 1.25, 0.5], [1.0], []])
def test_a_list_of_tuples_changed_in_a_loop(values):
    compiled = trace(sift_pairs, fullgraph=True)
    for _ in range(2):
        assert compiled(values) == sift_pairs(values)


def follow_links(xs, start):
    """A short list of None or ints, and of pairs, indexed by a value a data-dependent loop made."""
    links = [None, 0, 1, None, 3, 4]
    names = [(1.5, 2), (2.5, 3), (0.5, 1), (4.0, 0), (3.0, 5), (1.0, 4)]
    i = start
    total = 0.0
    steps = 0
    while i is not None:
        w, k = names[i]
        total += w * xs[k]
        steps += 1
        i = links[i]
    return total, steps, names[-start]


def chain_back(seq):
    """The path back along links a loop made: the reversed list is made where the loop ends."""
    tails_at, parent = [], [None] * len(seq)
    for i, x in enumerate(seq):
        parent[i] = tails_at[-1] if tails_at and x > 3 else None
        if x > 2:
            tails_at.append(i)
    out = []
    i = len(seq) - 1
    while i is not None:
        out.append(seq[i])
        i = parent[i]
    return out[::-1]


@pytest.mark.parametrize("start", [5, 2, 0, 3, -1, 6])
def test_a_short_list_at_a_run_time_index(start):
    xs = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    compiled = trace(follow_links, fullgraph=True)
    for _ in range(2):
        try:
            expected = follow_links(xs, start)
        except IndexError as exc:
            with pytest.raises(IndexError, match=str(exc)):
                compiled(xs, start)
        else:
            assert compiled(xs, start) == expected


@pytest.mark.parametrize("seq", [[3, 1, 4, 1, 5], [1, 2, 3, 4, 5, 6, 7], [9, 8, 7], [5], [3, 3, 3, 4, 1, 9]])
def test_a_list_made_after_a_loop_that_only_returns_after_it(seq):
    """(The list is made after the while loop ends: the loop's failing test is its exit.)"""
    assert trace(chain_back, fullgraph=True)(seq) == chain_back(seq)
