"""Builtins written in Python, for the tracer to inline like user code: `max`/`min` with `key=`,
`sorted`, `all` and `any` of traced values (tracer.frontend.library calls them through `Tracer.call`).

Written this way, they get everything the tracer does for user code: a loop over a range with
traced bounds compiles to a loop, a comparison of traced keys becomes a data-dependent branch
whose sides merge (`best = item` on one path only), tuples of keys compare as CPython compares
them. Each follows CPython's definition: `max` keeps the first of equal keys, `sorted` is
stable (also with `reverse=True`), each key is computed once per item, in order.
"""
from __future__ import annotations

import heapq

from tracer.frontend.builder import NeedsPython


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


def reduced(function, items, value):
    """functools.reduce(function, items, value)."""
    for item in items:
        value = function(value, item)
    return value


def reduced_from_first(function, items):
    """functools.reduce(function, items) of a sequence: its first item starts."""
    if len(items) == 0:
        raise TypeError("reduce() of empty iterable with no initial value")
    value = items[0]
    for i in range(1, len(items)):
        value = function(value, items[i])
    return value


def any_of(iterable):
    """any(iterable): stops at the first true item."""
    for item in iterable:
        if item:
            return True
    return False


# ------------------------------------------------------------------ lists of run-time length
# (tracer.frontend.dynlists): `new_list()` makes one; a loop over `range(len(xs))` or over the
# list compiles to a loop whose length the list gives at run time.
def new_list():
    """An empty list that compiled code holds as a list of run-time length."""
    return []


def typed_as(lst, item):
    """Nothing in Python; in the trace, `lst` (a new list) is to hold items like `item`, before
    any is appended (a loop may read it first)."""


def copied_list(items):
    """list(items), lst.copy(), lst[:]."""
    out = new_list()
    for i in range(len(items)):
        out.append(items[i])
    return out


def extend_list(lst, items):
    """lst.extend(items) (items read to the end first when they are the list itself)."""
    n = len(items)
    for i in range(n):
        lst.append(items[i])


def extend_from_iterable(lst, items):
    for item in items:
        lst.append(item)


def clear_list(lst):
    while len(lst) > 0:
        lst.pop()


def reverse_list(lst):
    """lst.reverse() in place (a loop over a range: it compiles to a loop for a long list)."""
    n = len(lst)
    for i in range(n // 2):
        lst[i], lst[n - 1 - i] = lst[n - 1 - i], lst[i]


def reversed_list(items):
    """reversed(items), as a new list."""
    out = new_list()
    for i in range(len(items) - 1, -1, -1):
        out.append(items[i])
    return out


def sliced_list(items, start, stop, step):
    """items[start:stop:step] with CPython's rules for the bounds (slice.indices)."""
    n = len(items)
    if step is None:
        step = 1
    if step == 0:
        raise ValueError("slice step cannot be zero")
    low, high = (0, n) if step > 0 else (-1, n - 1)
    if start is None:
        start = low if step > 0 else high
    elif start < 0:
        start = max(start + n, low)
    else:
        start = min(start, high)
    if stop is None:
        stop = high if step > 0 else low
    elif stop < 0:
        stop = max(stop + n, low)
    else:
        stop = min(stop, high)
    out = new_list()
    for i in range(start, stop, step):
        out.append(items[i])
    return out


def assign_slice(items, start, stop, values):
    """items[start:stop] = values (no step): as many values as the slice has items, written in
    place (the values listed first: they may be the list's own); another count changes the
    list's length, which the Python function does."""
    new = sliced_list(values, None, None, None)
    low = 0 if start is None else len(sliced_list(items, None, start, None))
    count = len(sliced_list(items, start, stop, None))
    if len(new) != count:
        raise NeedsPython("a slice assignment that changes the list's length")
    for i in range(count):
        items[low + i] = new[i]


def position_of(items, value):
    """The first index whose item equals `value`, or -1 (a NaN, which CPython finds by identity,
    is left to Python)."""
    if value != value:
        raise NeedsPython("looking for a NaN in a list: Python compares by identity first")
    return find_in(items, value)


def find_in(items, value):
    """Nothing in Python; in the trace, the first index of `value` in a list of run-time length
    (one `list_find` op: a hash index), else `scan_for`."""


def scan_for(items, value):
    found = -1
    for i in range(len(items)):
        if items[i] == value:
            found = i
            break
    return found


def list_contains(items, value):
    return position_of(items, value) >= 0


def list_index(items, value):
    i = position_of(items, value)
    if i < 0:
        raise NeedsPython("list.index() of a value not in the list: Python raises its ValueError")
    return i


def list_remove(items, value):
    i = position_of(items, value)
    if i < 0:
        raise NeedsPython("list.remove() of a value not in the list: Python raises its ValueError")
    del items[i]


def list_count(items, value):
    if value != value:
        raise NeedsPython("counting NaNs in a list: Python compares by identity first")
    n = 0
    for i in range(len(items)):
        if items[i] == value:
            n += 1
    return n


def sum_step(state, item):
    """Nothing in Python; in the trace, CPython's sum() one item further (library.SumState)."""


def sum_list(items, state):
    """The running sum `state` (a SumState) of the items, in a compiled loop."""
    for i in range(len(items)):
        state = sum_step(state, items[i])
    return state


def sorted_list(items, key, reverse):
    """sorted(items, key=key, reverse=reverse) of any number of items: a stable insertion sort
    into a list of run-time length. A NaN key (whose order depends on CPython's algorithm) is
    left to Python."""
    keys = new_list()
    out = new_list()
    for item in items:
        k = item if key is None else key(item)
        typed_as(keys, k)
        typed_as(out, item)
        if k != k:
            raise NeedsPython("sorting NaNs: their order depends on CPython's algorithm")
        i = len(out)
        while i > 0 and (keys[i - 1] < k if reverse else k < keys[i - 1]):
            i -= 1
        keys.insert(i, k)
        out.insert(i, item)
    return out


def sort_list(lst, key=None, reverse=False):
    """lst.sort(): sorted into a new list, copied back."""
    out = sorted_list(lst, key, reverse)
    for i in range(len(out)):
        lst[i] = out[i]


# ------------------------------------------------------------------ dicts of run-time size
# (tracer.frontend.dicts): a list of keys and a list of values, in insertion order
def dict_get(keys, values, key, default):
    typed_as(values, default)
    i = position_of(keys, key)
    return values[i] if i >= 0 else default


def dict_getitem(keys, values, key):
    i = position_of(keys, key)
    if i < 0:
        raise NeedsPython("a missing key: Python raises its KeyError")
    return values[i]


def dict_set(keys, values, key, value):
    typed_as(keys, key)
    typed_as(values, value)
    i = position_of(keys, key)
    if i >= 0:
        values[i] = value
    else:
        keys.append(key)
        values.append(value)


def dict_setdefault(keys, values, key, default):
    typed_as(keys, key)
    typed_as(values, default)
    i = position_of(keys, key)
    if i < 0:
        keys.append(key)
        values.append(default)
        return default
    return values[i]


def dict_delitem(keys, values, key):
    i = position_of(keys, key)
    if i < 0:
        raise NeedsPython("a missing key: Python raises its KeyError")
    del keys[i]
    del values[i]


def dict_pop(keys, values, key, has_default, default):
    i = position_of(keys, key)
    if i < 0:
        if not has_default:
            raise NeedsPython("a missing key: Python raises its KeyError")
        return default
    value = values[i]
    del keys[i]
    del values[i]
    return value


def zipped_lists(keys, values):
    """d.items(), as a new list of (key, value) pairs."""
    out = new_list()
    for i in range(len(keys)):
        out.append((keys[i], values[i]))
    return out


# ------------------------------------------------------------------ sets of run-time size
def set_add(items, x):
    typed_as(items, x)
    if position_of(items, x) < 0:
        items.append(x)


def set_discard(items, x, must_be_there):
    i = position_of(items, x)
    if i >= 0:
        del items[i]
    elif must_be_there:
        raise NeedsPython("set.remove() of an item not in the set: Python raises its KeyError")


def set_of_items(items):
    """The distinct items, in the order they come (set(items) as a DynSet's list)."""
    out = new_list()
    for i in range(len(items)):
        set_add(out, items[i])
    return out


# ------------------------------------------------------------------ map, filter, accumulate, bisect
def mapped(fn, items):
    """map(fn, items), as a list."""
    return [fn(x) for x in items]


def mapped_zip(fn, iterables):
    return [fn(*xs) for xs in zip(*iterables)]


def mapped_lazily(fn, items):
    """map(fn, generator): a generator (the items may never end)."""
    for x in items:
        yield fn(x)


def filtered_lazily(fn, items):
    """filter(fn, generator): a generator (the items may never end)."""
    for x in items:
        if x if fn is None else fn(x):
            yield x


def filtered(fn, items):
    """filter(fn, items), as a list (fn None: the true items)."""
    return [x for x in items if (x if fn is None else fn(x))]


def accumulated(items, fn, initial):
    """itertools.accumulate(items, fn, initial=initial), as a list."""
    out = []
    total = initial
    for x in items:
        if total is None:
            total = x
        else:
            total = total + x if fn is None else fn(total, x)
        out.append(total)
    return out if initial is None else [initial] + out


def bisected(a, x, lo, hi, key, right):
    """bisect.bisect_left (right=False) and bisect_right: CPython's binary search."""
    if lo < 0:
        raise ValueError("lo must be non-negative")
    if hi is None:
        hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        k = a[mid] if key is None else key(a[mid])
        if (x < k) if right else (k < x):
            if right:
                hi = mid
            else:
                lo = mid + 1
        else:
            if right:
                lo = mid + 1
            else:
                hi = mid
    return lo


# ------------------------------------------------------------------ float.__add__ and friends
def op_add(a, b):
    return a + b


def op_sub(a, b):
    return a - b


def op_mul(a, b):
    return a * b


def op_truediv(a, b):
    return a / b


def op_floordiv(a, b):
    return a // b


def op_mod(a, b):
    return a % b


def op_pow(a, b):
    return a ** b


def op_and(a, b):
    return a & b


def op_or(a, b):
    return a | b


def op_xor(a, b):
    return a ^ b


def op_lshift(a, b):
    return a << b


def op_rshift(a, b):
    return a >> b


def op_lt(a, b):
    return a < b


def op_le(a, b):
    return a <= b


def op_eq(a, b):
    return a == b


def op_ne(a, b):
    return a != b


def op_ge(a, b):
    return a >= b


def op_gt(a, b):
    return a > b


def op_neg(a):
    return -a


def op_abs(a):
    return abs(a)


# ------------------------------------------------------------------ heapq (its own sift functions)
def heap_push(heap, item):
    heap.append(item)
    heapq._siftdown(heap, 0, len(heap) - 1)


def heap_pop(heap):
    if not heap:
        raise IndexError("index out of range")
    last = heap.pop()
    if heap:
        top = heap[0]
        heap[0] = last
        heapq._siftup(heap, 0)
        return top
    return last


def heap_replace(heap, item):
    if not heap:
        raise IndexError("index out of range")
    top = heap[0]
    heap[0] = item
    heapq._siftup(heap, 0)
    return top


def heap_push_pop(heap, item):
    if heap and heap[0] < item:
        item, heap[0] = heap[0], item
        heapq._siftup(heap, 0)
    return item


def heapified(heap):
    for i in reversed(range(len(heap) // 2)):
        heapq._siftup(heap, i)
