"""Builtins written in Python, for the tracer to inline like user code: `max`/`min` with `key=`,
`sorted`, `all` and `any` of traced values (tracer.frontend.library calls them through `Tracer.call`).

Written this way, they get everything the tracer does for user code: a loop over a range with
traced bounds compiles to a loop, a comparison of traced keys becomes a data-dependent branch
whose sides merge (`best = item` on one path only), tuples of keys compare as CPython compares
them. Each follows CPython's definition: `max` keeps the first of equal keys, `sorted` is
stable (also with `reverse=True`), each key is computed once per item, in order.
"""
from __future__ import annotations


def _message(fn) -> str:
    try:
        fn([])
    except ValueError as exc:       # (the wording differs between Python versions)
        return str(exc)
    raise AssertionError


MAX_EMPTY, MIN_EMPTY = _message(max), _message(min)


def greater(a, b):
    return a > b


def less(a, b):
    return a < b


def best_by_key(items, key, has_default, default, better, empty):
    """max (better=greater) or min (better=less) of a sequence by key: the first best item."""
    if len(items) == 0:
        if not has_default:
            raise ValueError(empty)
        return default
    best = items[0]
    best_key = key(best)
    for i in range(1, len(items)):
        item = items[i]
        k = key(item)
        if better(k, best_key):
            best = item
            best_key = k
    return best


def best_of_range(start, stop, step, key, has_default, default, better, empty):
    """The same over range(start, stop, step) with traced bounds: a compiled loop."""
    if (step > 0 and start >= stop) or (step < 0 and start <= stop):
        if not has_default:
            raise ValueError(empty)
        return default
    best = start
    best_key = key(start)
    for item in range(start + step, stop, step):
        k = key(item)
        if better(k, best_key):
            best = item
            best_key = k
    return best


def sorted_items(items, key, reverse):
    """sorted(items, key=key, reverse=reverse) of a short sequence, by a stable exchange sort
    whose every step is a comparison and a selection (no list is changed on one path only)."""
    pairs = []
    for item in items:
        pairs.append((item if key is None else key(item), item))
    for end in range(len(pairs) - 1, 0, -1):
        for j in range(end):
            a = pairs[j]
            b = pairs[j + 1]
            swap = a[0] < b[0] if reverse else b[0] < a[0]
            pairs[j], pairs[j + 1] = (b, a) if swap else (a, b)
    return [pair[1] for pair in pairs]


def all_of(iterable):
    """all(iterable): stops at the first false item, as CPython does (later items are not made)."""
    for item in iterable:
        if not item:
            return False
    return True


def any_of(iterable):
    """any(iterable): stops at the first true item."""
    for item in iterable:
        if item:
            return True
    return False
