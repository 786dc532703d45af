"""Builtins and modules over iterables: set(), map, filter, itertools, bisect; string builtins of
constants (ord, chr, bin...); float's and int's arithmetic slots called as functions
(`float.__add__`); functools.cache and lru_cache applied in traced code; heapq; and the hooks
the helpers of tracer.frontend.pybuiltins use to make lists of
run-time length.

Like tracer.frontend.library (which merges FUNCTIONS into its table), each entry takes the tracer
and the call's arguments. itertools' combinatoric iterators never look at the items, so they run
at trace time on the items of sequences the trace knows the length of (an input list's items
are loaded per call); what computes with the items (`accumulate`, `filter`, `map`, `bisect`)
runs a Python helper that the tracer inlines, whose loops and branches compile.
"""
from __future__ import annotations

import array
import bisect
import builtins
import collections.abc
import functools
import heapq
import itertools
import operator

from tracer.frontend import dicts, dynlists, gathered, made_arrays, pybuiltins, run_time_strings
from tracer.frontend.builder import is_traced
from tracer.frontend.generators import SymbolicGenerator
from tracer.frontend.mixed_numbers import MixedNumber
from tracer.frontend.objects import ExternalList, ExternalObject, TransformedFunction
from tracer.frontend.opcodes.containers import materialize
from tracer.ir import BOOL, F64, I64

FUNCTIONS: dict = {}


def implements(*functions):
    def register(impl):
        for f in functions:
            FUNCTIONS[f] = impl
        return impl
    return register


def _items(tracer, iterable) -> list:
    return materialize(tracer, iterable)


def _call(tracer, helper, *args):
    return tracer.call(helper, list(args), {})


# ------------------------------------------------------------------------------------ set()
@implements(builtins.set)
def _set(tracer, iterable=()):
    """set(): a Python set of constants, else a set of run-time size (tracer.frontend.dicts)."""
    if isinstance(iterable, (dynlists.DynList, dicts.DynDict, dicts.DynSet)):
        keys = iterable if isinstance(iterable, dynlists.DynList) else iterable.keys
        return dicts.DynSet(_call(tracer, pybuiltins.set_of_items, keys))
    items = _items(tracer, iterable)
    if not any(dicts.symbolic(x) for x in items):
        return set(items)
    made = dicts.set_made_from(tracer, items)
    if made is None:
        raise tracer.error("a set of these items is not supported (numbers, or tuples of numbers, of one type)")
    return made


# ------------------------------------------------------------------------------------ map, filter
@implements(builtins.map)
def _map(tracer, fn, *iterables):
    if not iterables:
        raise TypeError("map() must have at least two arguments.")
    if len(iterables) == 1:
        lazy = isinstance(iterables[0], SymbolicGenerator)        # (it may never end)
        return _call(tracer, pybuiltins.mapped_lazily if lazy else pybuiltins.mapped, fn, iterables[0])
    return _call(tracer, pybuiltins.mapped_zip, fn, list(iterables))


@implements(builtins.filter)
def _filter(tracer, fn, iterable):
    lazy = isinstance(iterable, SymbolicGenerator)                # (it may never end)
    return _call(tracer, pybuiltins.filtered_lazily if lazy else pybuiltins.filtered, fn, iterable)


# ------------------------------------------------------------------------------------ itertools
def _combinatoric(real):
    def impl(tracer, *args, **kwargs):
        return real(*[_items(tracer, a) if not isinstance(a, int) else a for a in args], **kwargs)
    return impl


for _f in (itertools.permutations, itertools.combinations, itertools.combinations_with_replacement,
           itertools.product, itertools.chain, itertools.cycle, itertools.zip_longest, itertools.pairwise):
    FUNCTIONS[_f] = _combinatoric(_f)


@implements(itertools.islice)
def _islice(tracer, iterable, *bounds):
    if any(not (b is None or isinstance(b, int)) for b in bounds):
        raise tracer.error("itertools.islice() with bounds known only at run time is not supported")
    source = iterable if hasattr(iterable, "__next__") else iter(_items(tracer, iterable))
    return itertools.islice(source, *bounds)


@implements(itertools.accumulate)
def _accumulate(tracer, iterable, func=None, *, initial=None):
    return iter(_call(tracer, pybuiltins.accumulated, _items(tracer, iterable), func, initial))


# ------------------------------------------------------------------------------------ bisect
def _bisection(right: bool):
    def impl(tracer, a, x, lo=0, hi=None, *, key=None):
        return _call(tracer, pybuiltins.bisected, a, x, lo, hi, key, right)
    return impl


FUNCTIONS[bisect.bisect_left] = _bisection(False)
FUNCTIONS[bisect.bisect_right] = FUNCTIONS[bisect.bisect] = _bisection(True)


# ------------------------------------------------------------------------------------ constants
def _of_constants(real):
    """A builtin computed at trace time on constants (what it makes, a string, compiled code
    cannot make from a traced number)."""
    def impl(tracer, *args, **kwargs):
        b = tracer.builder           # (an int it depends on only, like a shift given as an int argument, is pinned)
        args = [b.concretize(a, f"the argument of {real.__name__}()") if is_traced(a) and a.type != F64
                and b.must_be_concrete(a) else a for a in args]
        if any(dicts.symbolic(a.args if isinstance(a, BaseException) else a) for a in [*args, *kwargs.values()]):
            raise tracer.error(f"{real.__name__}() of a number known only at run time is not supported (it makes a "
                               f"string)")
        return real(*args, **kwargs)
    return impl


# ------------------------------------------------------------------------------------ array.array
@implements(array.array)
def _array(tracer, typecode, initializer=None):
    if isinstance(initializer, str):
        raise TypeError(f"cannot use a str to initialize an array with typecode '{typecode}'")
    if initializer is None or isinstance(initializer, (bytes, bytearray)):
        return made_arrays.make(tracer, typecode, initializer)
    return made_arrays.make(tracer, typecode, materialize(tracer, initializer))


@implements(made_arrays.extend)
def _extend_array(tracer, a, iterable):
    return made_arrays.extend(tracer, a, iterable, materialize(tracer, iterable))


FUNCTIONS.update(made_arrays.FUNCTIONS)


@implements(builtins.isinstance)
def _isinstance(tracer, obj, classinfo):
    if is_traced(obj):
        python_type = {F64: float, I64: int, BOOL: bool}[obj.type]
        return issubclass(python_type, classinfo)
    if isinstance(obj, (ExternalList, ExternalObject)):
        return isinstance(obj.obj, classinfo)
    if isinstance(obj, MixedNumber):         # (an int or a float: which, only the run time knows)
        raise tracer.error("isinstance() of a number whose type (int or float) is known only at run time is not "
                           "supported")
    return isinstance(obj, classinfo)


@implements(builtins.issubclass)
def _issubclass(tracer, cls, classinfo):
    return issubclass(cls, classinfo)    # (classes are constants: anything else is CPython's TypeError)


for _f in (builtins.bytes, builtins.ord, builtins.chr, builtins.bin, builtins.hex, builtins.oct, builtins.repr, builtins.ascii, builtins.str,
           builtins.format):
    FUNCTIONS[_f] = _of_constants(_f)


NOT_CONSTANT = object()


def string_method(fn, args: list, kwargs: dict):
    """A str method called on constants (a generator of constants is listed first: `"".join(c
    for c in s)`): what Python gives; NOT_CONSTANT where an argument is traced."""
    args = [list(a) if isinstance(a, (SymbolicGenerator, collections.abc.Iterator)) else a for a in args]
    if fn.__name__ == "join" and type(fn.__self__) is str and len(args) == 1 and not kwargs \
            and (joined := run_time_strings.join(fn.__self__, args[0])) is not None:
        return joined                    # with strings chosen at run time: made when returned
    if not all(map(_constant_argument, [*args, *kwargs.values()])):
        return NOT_CONSTANT
    return fn(*args, **kwargs)


def _constant_argument(x) -> bool:
    if type(x) in (list, tuple):
        return all(map(_constant_argument, x))
    return x is None or type(x) in (str, bytes, int, float, bool)


# ------------------------------------------------------------------------------------ float.__add__
def _slot(cls, helper):
    def impl(tracer, a, b):
        kinds = {type(x) if not is_traced(x) else {F64: float, I64: int, BOOL: bool}.get(x.type) for x in (a, b)}
        if kinds != {cls}:
            raise tracer.error(f"{cls.__name__}.__{helper.__name__[3:]}__() of these operands is not supported")
        return _call(tracer, helper, a, b)
    return impl


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod"):
    for _cls in (float, int):
        FUNCTIONS[getattr(_cls, f"__{_name}__")] = _slot(_cls, getattr(pybuiltins, f"op_{_name}"))


# the `operator` module's functions: the operators themselves, inlined (functools.reduce(operator.add, ...))
def _operator(helper):
    return lambda tracer, *args: _call(tracer, helper, *args)


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "lshift", "rshift", "lt", "le", "eq",
              "ne", "ge", "gt", "neg", "abs", "xor"):
    FUNCTIONS[getattr(operator, _name)] = _operator(getattr(pybuiltins, f"op_{_name}"))
FUNCTIONS[operator.and_] = _operator(pybuiltins.op_and)
FUNCTIONS[operator.or_] = _operator(pybuiltins.op_or)


def _reduce(tracer, function, iterable, *initial):
    """functools.reduce: a loop of calls, inlined (from the first item of a sequence, or of the
    list of a generator)."""
    if len(initial) > 1:
        raise TypeError(f"reduce expected at most 3 arguments, got {2 + len(initial)}")
    if initial:
        return _call(tracer, pybuiltins.reduced, function, iterable, initial[0])
    items = iterable if hasattr(iterable, "__len__") else tracer.call(list, [iterable], {})
    return _call(tracer, pybuiltins.reduced_from_first, function, items)


FUNCTIONS[functools.reduce] = _reduce


class Memoized:
    """functools.cache / lru_cache of a function, applied in traced code: a call on arguments
    known at trace time gives the result of the first call on equal arguments (CPython runs the
    function once per distinct arguments: its side effects too). Traced arguments are refused,
    and so are more distinct arguments than `maxsize` (CPython would evict and run it again)."""

    def __init__(self, fn, maxsize=None):
        self.fn, self.maxsize, self.results = fn, maxsize, {}

    def trace_call(self, tracer, args: list, kwargs: dict):
        if not all(map(_constant_argument, [*args, *kwargs.values()])):
            raise tracer.error("calling a functools.cache function with arguments known only at run time is not "
                               "supported")
        key = (tuple(args), tuple(sorted(kwargs.items())))
        if key not in self.results:
            if self.maxsize is not None and len(self.results) >= self.maxsize:
                raise tracer.error(f"a functools.lru_cache(maxsize={self.maxsize}) function called with more "
                                   f"distinct arguments than it keeps is not supported")
            self.results[key] = tracer.call(self.fn, args, kwargs)
        return self.results[key]


class MemoizeWith:
    """The decorator `functools.lru_cache(maxsize=...)` gives."""

    def __init__(self, maxsize):
        self.maxsize = maxsize

    def trace_call(self, tracer, args: list, kwargs: dict):
        (fn,) = args
        return fn if self.maxsize == 0 else TransformedFunction(Memoized(fn, self.maxsize))   # (0: no cache)


def _memoized(tracer, fn):
    return TransformedFunction(Memoized(fn))


def _lru_cache(tracer, maxsize=128, typed=False):
    if is_traced(maxsize):                # an int argument: pinned
        maxsize = tracer.builder.concretize(maxsize, "the maxsize of functools.lru_cache()")
    if maxsize is not None and type(maxsize) is not int:          # @lru_cache without arguments
        return TransformedFunction(Memoized(maxsize, 128))
    if typed:
        raise tracer.error("functools.lru_cache(typed=True) is not supported")
    return TransformedFunction(MemoizeWith(None if maxsize is None else max(maxsize, 0)))


def _heap(real, helper):
    """heapq.<real> as CPython's does it, with heapq's own sift functions (inlined)."""
    def impl(tracer, heap, *args):
        if type(heap) is not list and not isinstance(heap, (dynlists.DynList, gathered.ListView)):
            if isinstance(heap, (tuple, str, int, float, bool)) or is_traced(heap):
                argument = "argument" if real is heapq.heapify else "argument 1"
                raise TypeError(f"{real.__name__}() {argument} must be list, not {type(heap).__name__ if not is_traced(heap) else 'float'}")
            raise tracer.error(f"heapq.{real.__name__}() of {heap!r} is not supported (of a list made in the function, it is)")
        return _call(tracer, helper, heap, *args)
    return impl


for _f, _helper in ((heapq.heappush, pybuiltins.heap_push), (heapq.heappop, pybuiltins.heap_pop),
                    (heapq.heapreplace, pybuiltins.heap_replace), (heapq.heappushpop, pybuiltins.heap_push_pop),
                    (heapq.heapify, pybuiltins.heapified)):
    FUNCTIONS[_f] = _heap(_f, _helper)

FUNCTIONS[functools.cache] = _memoized
FUNCTIONS[functools.lru_cache] = _lru_cache


# ------------------------------------------------------------------------------------ helpers' hooks
@implements(pybuiltins.new_list)
def _new_list(tracer):
    return dynlists.new(tracer)


@implements(pybuiltins.find_in)
def _find_in(tracer, items, value):
    if not isinstance(items, dynlists.DynList):
        return _call(tracer, pybuiltins.scan_for, items, value)
    return dynlists.find(tracer, items, value)


@implements(pybuiltins.typed_as)
def _typed_as(tracer, lst, item):
    if isinstance(lst, dynlists.DynList) and lst.item is None:
        t = dynlists.item_type(tracer.builder, item)
        if t is not None:
            dynlists.set_type(lst, t)
