"""Containers of the standard library made in traced code from constants: `collections.deque`,
`Counter`, `defaultdict` and `OrderedDict`.

Like a dict display with constant keys, such a container is a real Python object of the trace:
made by CPython when the call is traced, its methods run by CPython on the constants they are
given (`queue.popleft()`, `freq.most_common(3)`, `groups[k].append(x)`), so that what the function
computes from constants (a breadth-first search over a maze given as strings, word counts) is
computed once, at trace time. A method given a value known only at run time, or a key known only
at run time, is refused (UnsupportedError). A change inside a data-dependent branch or loop is
seen as a list's change is (`states.mutable_snapshot`): the loop unrolls, or the trace says why.
Objects of these classes from outside the function are user objects, never these.
"""
from __future__ import annotations

import collections

CLASSES = (collections.deque, collections.Counter, collections.OrderedDict, collections.defaultdict)
FACTORIES = (list, int, float, str, tuple, set, dict, collections.Counter, collections.deque)


def is_constant(x) -> bool:
    """Whether `x` is known at trace time all the way down (numbers, strings, None, and lists,
    tuples, sets and dicts of them, and these containers)."""
    stack, seen = [x], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if v is None or type(v) in (str, bytes, int, float, bool, complex, range) or any(v is f for f in FACTORIES):
            continue
        if type(v) in (list, tuple, set, frozenset) or isinstance(v, CLASSES):
            stack.extend(v.items() if isinstance(v, dict) else v)
        elif type(v) is dict:
            stack.extend(v.items())
        else:
            return False
    return True


def _arguments_constant(tracer, what: str, args, kwargs) -> None:
    if not all(map(is_constant, [*args, *kwargs.values()])):
        raise tracer.error(f"{what} with values known only at run time is not supported (it is made at trace "
                           f"time, from constants)")


def make(cls):
    """The implementation of calling class `cls` in traced code."""
    def impl(tracer, *args, **kwargs):
        _arguments_constant(tracer, f"calling {cls.__name__}()", args, kwargs)
        return cls(*args, **kwargs)
    return impl


FUNCTIONS = {cls: make(cls) for cls in CLASSES}


def owns(fn) -> bool:
    """Whether `fn` is a method bound to one of these containers (made in the trace)."""
    return isinstance(getattr(fn, "__self__", None), CLASSES)


def method(fn):
    """The implementation of calling method `fn` of such a container: CPython runs it."""
    def impl(tracer, *args, **kwargs):
        _arguments_constant(tracer, f"calling {type(fn.__self__).__name__}.{fn.__name__}()", args, kwargs)
        return fn(*args, **kwargs)
    return impl


def check_key(tracer, container, key) -> None:
    """A key of such a container must be known at trace time."""
    if isinstance(container, CLASSES) and not is_constant(key):
        raise tracer.error(f"a key known only at run time in a {type(container).__name__} is not supported (it is "
                           f"made at trace time, from constants)")


def snapshot_contents(x):
    """What states.mutable_snapshot keeps of such a container (its items), or None."""
    if not isinstance(x, CLASSES):
        return None
    return list(x.items()) if isinstance(x, dict) else list(x)


def restore(x, contents) -> None:
    if isinstance(x, dict):
        dict.clear(x)
        dict.update(x, contents)
    else:
        x.clear()
        x.extend(contents)

