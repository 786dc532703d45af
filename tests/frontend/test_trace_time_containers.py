"""collections.deque, Counter, defaultdict and OrderedDict made in traced code from constants
(tracer.frontend.trace_time): made and used at trace time, against CPython. What cannot be done
at trace time (a value or key known only at run time, a change on one path of a data-dependent
branch) is refused with a clear reason and the call runs as Python."""
from __future__ import annotations

import collections

import pytest
from like_python import same

import tracer
from tracer import UnsupportedError, trace


def bfs(rows):
    h, w = len(rows), len(rows[0])
    queue = collections.deque([(0, 0)])
    seen = {(0, 0): 0}
    while queue:
        r, c = queue.popleft()
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and rows[nr][nc] == "." and (nr, nc) not in seen:
                seen[nr, nc] = seen[r, c] + 1
                queue.append((nr, nc))
    return max(seen.values()), len(seen)


def word_counts(text, scale):
    freq = collections.Counter(text.split())
    freq["extra"] += 2
    return freq.most_common(2), freq["the"] * scale, freq["missing"]


def grouped(words, x):
    groups = collections.defaultdict(list)
    for word in words:
        groups[len(word)].append(word)
    order = collections.OrderedDict(sorted(groups.items()))
    order.move_to_end(min(order))
    return list(order.items()), x * len(order)


def rotations(n):
    d = collections.deque(range(5), maxlen=4)
    d.rotate(2)
    for _ in range(n):                   # changed in a loop with a traced bound: it unrolls
        d.append(d.popleft())
    return list(d)


@pytest.mark.parametrize("fn, args", [
    (bfs, (["..#.", "...#", "#...", "..#."],)), (bfs, ([".#", "#."],)),
    (word_counts, ("the cat and the dog and the end", 1.5)), (grouped, (["ab", "c", "de", "fgh", "i"], 2.0)),
    (rotations, (3,)), (rotations, (20,)),
])
def test_computed_at_trace_time_as_cpython(fn, args):
    for _ in range(2):
        same(fn, *args)


def counted_on_one_path(x):
    c = collections.Counter("abca")
    if x > 0:
        c["z"] += 1
    return len(c)


def counted_by_run_time_key(x):
    c = collections.Counter()
    c[x] += 1
    return c[x]


def appended_run_time_value(x):
    q = collections.deque()
    q.append(x)
    return q[0]


@pytest.mark.parametrize("fn, arg, reason", [
    (counted_on_one_path, 1.0, "changed inside a data-dependent branch"),
    (counted_by_run_time_key, 2.0, "a key known only at run time in a Counter"),
    (appended_run_time_value, 2.0, "calling deque.append\\(\\) with values known only at run time"),
])
def test_what_needs_run_time_values_runs_as_python(fn, arg, reason):
    with pytest.raises(UnsupportedError, match=reason):
        trace(fn, fullgraph=True)(arg)
    assert trace(fn)(arg) == fn(arg)
    assert not tracer.explain(fn, arg).compiled
