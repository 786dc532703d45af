"""What calls to Python's builtins and `math` functions mean inside a trace.

Each entry maps a real Python callable (the object itself, e.g. `math.sqrt`) to a function
`(tracer, *args, **kwargs) -> symbolic result`. On trace-time constants they simply call the real
function (exact Python semantics, errors included); on traced values they emit IR following
CPython's implementation (argument conversions, `sum`'s summation algorithm, `max`'s ordering).
"""
from __future__ import annotations

import builtins
import math
import sys

from tracer.frontend import (
    arrays,
    callouts,
    complex_arrays,
    complex_numpy,
    complexes,
    dicts,
    dynlists,
    gathered,
    instance_ops,
    numpy_bools,
    pybuiltins,
    run_time_strings,
    trace_time,
)
from tracer.frontend.builder import NeedsPython, is_traced
from tracer.frontend.cmath_functions import FUNCTIONS as CMATH
from tracer.frontend.dtypes import widen
from tracer.frontend.generators import SymbolicGenerator
from tracer.frontend.iterables import FUNCTIONS as ITERABLES
from tracer.frontend.iteration import ParallelRange, RangeIter, prange
from tracer.frontend.math_more import FUNCTIONS as MORE_MATH
from tracer.frontend.math_more import all_constant as _all_constant
from tracer.frontend.math_more import as_float as _as_float
from tracer.frontend.math_more import number as _number
from tracer.frontend.math_more import pow_mod
from tracer.frontend.numpy_scalars import made_by_numpy
from tracer.frontend.objects import (
    BoundMethod,
    ExternalList,
    ExternalObject,
    SymbolicFunction,
    SymbolicRange,
    TracedArray,
)
from tracer.frontend.opcodes.containers import is_symbolic, items_equal, materialize, pinned_already, type_name
from tracer.frontend.registered import TABLE, implements
from tracer.frontend.states import diverged_error, is_copyable_iterator
from tracer.ir import BOOL, F64, I64, INTEGERS, NARROW

_TABLE = TABLE          # (the functions of tracer.frontend.math_more are merged in below)


def lookup(fn):
    if trace_time.owns(fn):       # a method of a deque, Counter... made in the trace: run by CPython
        return trace_time.method(fn)
    try:
        return _TABLE.get(fn)
    except TypeError:   # unhashable callables are never library functions
        return None


# ---------------------------------------------------------------------------------- math
def _math_unary(name: str):
    real = getattr(math, name)

    def impl(tracer, x):
        if _all_constant([x]):
            return real(x)
        return tracer.builder.emit(name, (_as_float(tracer, x, f"math.{name}()"),))
    return impl


for _name in ["sqrt", "exp", "log2", "log10", "log1p", "expm1", "sin", "cos", "tan", "asin", "acos",
              "atan", "sinh", "cosh", "tanh", "fabs", "cbrt", "exp2", "erf", "erfc", "gamma", "lgamma"]:
    _TABLE[getattr(math, _name)] = _math_unary(_name)


def _math_binary(name: str, op: str):
    real = getattr(math, name)

    def impl(tracer, x, y):
        if _all_constant([x, y]):
            return real(x, y)
        b = tracer.builder
        return b.emit(op, (b.value(_as_float(tracer, x, name)), b.value(_as_float(tracer, y, name))))
    return impl


for _name, _op in [("atan2", "atan2"), ("copysign", "copysign"), ("fmod", "fmod"), ("pow", "math_pow"),
                   ("remainder", "remainder"), ("nextafter", "nextafter")]:
    _TABLE[getattr(math, _name)] = _math_binary(_name, _op)


def _angle(name: str, factor: float):
    """math.radians, math.degrees: CPython multiplies by pi/180 (180/pi), computed in double."""
    real = getattr(math, name)

    def impl(tracer, x):
        if _all_constant([x]):
            return real(x)
        b = tracer.builder
        return b.emit("mul", (b.value(_as_float(tracer, x, f"math.{name}()")), b.const(factor)))
    return impl


_TABLE[math.radians] = _angle("radians", math.pi / 180.0)
_TABLE[math.degrees] = _angle("degrees", 180.0 / math.pi)


@implements(builtins.divmod)
def _divmod(tracer, a, b):
    """divmod of ints: (a // b, a % b), CPython's floor division and remainder (and its error)."""
    if _all_constant([a, b]):
        return divmod(a, b)
    a, b = _number(tracer, a, "divmod()"), _number(tracer, b, "divmod()")
    kinds = [x.type if is_traced(x) else type(x) for x in (a, b)]
    if not all(k in (I64, int, bool, BOOL) for k in kinds):
        raise tracer.error("divmod() of floats is not supported yet (its ZeroDivisionError message is its own)")
    bld = tracer.builder
    return bld.binary("floordiv", a, b), bld.binary("mod", a, b)


@implements(math.hypot)
def _hypot(tracer, *args):
    if _all_constant(args):
        return math.hypot(*args)
    if len(args) == 1:                 # CPython's vector_norm of one coordinate: its magnitude
        return tracer.builder.emit("fabs", (tracer.builder.value(_as_float(tracer, args[0], "math.hypot()")),))
    if len(args) != 2:
        raise tracer.error("math.hypot() of traced values takes one or two arguments here")
    return _math_binary("hypot", "hypot")(tracer, *args)


@implements(math.log)
def _log(tracer, x, base=None):
    if _all_constant([x, base]):
        return math.log(x) if base is None else math.log(x, base)
    b = tracer.builder
    num = b.emit("log", (b.value(_as_float(tracer, x, "math.log()")),))
    if base is None:
        return num
    den = b.emit("log", (b.value(_as_float(tracer, base, "math.log()")),))
    return b.emit("div", (num, den))   # CPython divides the two logs: log(x, 1) is a ZeroDivisionError


def _rounding(name: str, op: str):
    real = getattr(math, name)

    def impl(tracer, x):
        if _all_constant([x]):
            return real(x)
        x = _number(tracer, x, f"math.{name}()")
        b = tracer.builder
        if x.type == F64:
            return b.emit("to_i64", (b.emit(op, (x,)),))
        return b.convert(x, I64)       # math.floor(int) is the int itself
    return impl


for _name in ["floor", "ceil", "trunc"]:
    _TABLE[getattr(math, _name)] = _rounding(_name, _name)


def _predicate(name: str):
    real = getattr(math, name)

    def impl(tracer, x):
        if _all_constant([x]):
            return real(x)
        x = _number(tracer, x, f"math.{name}()")
        if x.type != F64:
            return real(0.0)           # an int converted to float is finite and a number
        return tracer.builder.emit(name, (x,))
    return impl


for _name in ["isnan", "isinf", "isfinite"]:
    _TABLE[getattr(math, _name)] = _predicate(_name)


# ------------------------------------------------------------------------------ builtins
@implements(builtins.abs)
def _abs(tracer, x):
    if isinstance(x, (complex_arrays.ComplexArray, complex_arrays.NumpyComplex)):       # np.abs
        return complex_numpy.absolute(tracer, x)
    if isinstance(x, complexes.TracedComplex):
        return complexes.absolute(tracer, x)
    if isinstance(x, TracedArray) or is_traced(x) and x.type in NARROW:     # np.int8(-128) stays -128
        return arrays.unary(tracer, "abs", x)
    if not is_traced(x) and not isinstance(x, (ExternalList, ExternalObject)):
        return abs(x)                  # a trace-time constant: Python's own result (or TypeError)
    if numpy_bools.involved(tracer, "abs", x):
        return numpy_bools.unary(tracer, "abs", x)          # abs(np.True_) is np.True_
    return tracer.builder.absolute(_number(tracer, x, "abs()"))


@implements(builtins.float)
def _float(tracer, x=0.0):
    if isinstance(x, TracedArray):
        x = arrays.number_of(tracer, x, "float()")
    if _all_constant([x]):
        return float(x)
    return _python_number(tracer, tracer.builder.convert(_number(tracer, x, "float()"), F64))


def _python_number(tracer, v):
    """v as a Python number (float() of an np.float64 is a float): a value of its own, in
    tracer.python_scalars, where v is an array's element, a reduction or a NumPy result."""
    if not made_by_numpy(tracer, v):
        return v
    b = tracer.builder
    copy = b.emit("getitem", (b.emit("tuple", (v,)),), index=0)
    tracer.python_scalars.add(copy)
    return copy


@implements(builtins.int)
def _int(tracer, x=0, *base):
    if isinstance(x, TracedArray) and not base:
        x = arrays.number_of(tracer, x, "int()")
    if _all_constant([x, *base]):
        return int(x, *base)
    x = _number(tracer, x, "int()")
    if x.type == I64:
        return _python_number(tracer, x)
    return _python_number(tracer, tracer.builder.emit("to_i64", (x,)))


@implements(builtins.complex)
def _complex(tracer, real=0.0, imag=0.0):
    if _all_constant([real, imag]) and not isinstance(real, complexes.TracedComplex):
        return complexes.TracedComplex(complex(real, imag).real, complex(real, imag).imag)
    return complexes.make(tracer, real, imag)


@implements(builtins.bool)
def _bool(tracer, x=False):
    if isinstance(x, complexes.TracedComplex):
        return complexes.truth(tracer, x)
    if isinstance(x, TracedArray):
        x = arrays.number_of(tracer, x, "bool()")
    if _all_constant([x]):
        return bool(x)
    return _python_number(tracer, tracer.builder.truth(_number(tracer, x, "bool()")))


@implements(builtins.round)
def _round(tracer, x, ndigits=None):
    if _all_constant([x, ndigits]):
        return round(x, ndigits)
    if ndigits is not None and type(ndigits) is int and ndigits >= 0 and tracer.builder.kind(x) == I64:
        return x                      # an int to n >= 0 places: itself
    if ndigits is not None and tracer.builder.kind(_number(tracer, x, "round()")) == F64:
        b = tracer.builder
        return b.emit("round_digits", (b.value(x), b.value(b.convert(_number(tracer, ndigits, "round()"), I64))))
    if ndigits is not None:
        typed = callouts.value_call(round, [x, ndigits], {})
        if tracer.call_out and typed is not None:      # CPython's round, called from compiled code
            return callouts.call_out(tracer, round, [x, ndigits], {}, *typed)
        raise tracer.error("round(x, ndigits) of a traced value is not supported yet")
    x = _number(tracer, x, "round()")
    b = tracer.builder
    if x.type == F64:
        return b.emit("to_i64", (b.emit("round_even", (x,)),))
    return b.convert(x, I64)


@implements(builtins.pow)
def _pow(tracer, base, exp, mod=None):
    if mod is not None:
        return pow_mod(tracer, base, exp, mod)
    return tracer.builder.binary("pow", base, exp)


def _extremum(op: str, real):
    by_key = {"max": (pybuiltins.greater, pybuiltins.MAX_EMPTY), "min": (pybuiltins.less, pybuiltins.MIN_EMPTY)}[op]

    def impl(tracer, *args, **kwargs):
        if len(args) == 1 and isinstance(args[0], (dicts.DynDict, dicts.DynSet)):
            args = (args[0].keys,)
        if kwargs or (len(args) == 1 and isinstance(args[0], dynlists.DynList)):
            return _extremum_by_key(tracer, real, by_key, args, kwargs)
        items = args if len(args) != 1 else tracer_items(tracer, args[0])
        if not items:
            raise ValueError(f"{real.__name__}() arg is an empty sequence")
        if _all_constant(items):
            return real(items)
        b = tracer.builder
        kinds = {b.kind(_number(tracer, x, f"{real.__name__}()")) for x in items}
        if len(kinds) > 1:
            # max(0, x) returns the int 0 or the float x depending on x: no single static type
            raise tracer.error(f"{real.__name__}() of mixed {'/'.join(sorted(map(str, kinds)))} values has a "
                               f"value-dependent type; make the constants floats (e.g. 0.0)")
        result = items[0]
        for x in items[1:]:
            if kinds == {BOOL}:   # no bool max/min op: CPython's rule, b if b > a else a (a bool)
                result, x = b.value(result), b.value(x)
                result = b.emit("select", (b.emit("gt" if op == "max" else "lt", (x, result)), x, result))
            else:
                result = b.emit(op, (b.value(result), b.value(x)))
        return result
    return impl


def _extremum_by_key(tracer, real, by_key, args: tuple, kwargs: dict):
    """max/min with key= or default=: pybuiltins' loop, inlined (a range with traced bounds
    stays a range: the loop over it compiles)."""
    if set(kwargs) - {"key", "default"} or not args or (len(args) > 1 and "default" in kwargs):
        real(*args, **kwargs)             # CPython's TypeError
    key = kwargs.get("key")
    if key is None:
        key = _identity
    given = ["default" in kwargs, kwargs.get("default")]
    if len(args) == 1 and isinstance(args[0], SymbolicRange):
        return tracer.call(pybuiltins.best_of_range, [*args[0].args, key, *given, *by_key], {})
    items = list(args) if len(args) > 1 else args[0] if isinstance(args[0], dynlists.DynList) \
        else tracer_items(tracer, args[0])
    return tracer.call(pybuiltins.best_by_key, [items, key, *given, *by_key], {})


def _identity(x):
    return x


@implements(builtins.sorted)
def _sorted(tracer, iterable, *, key=None, reverse=False):
    iterable = iterable.keys if isinstance(iterable, (dicts.DynDict, dicts.DynSet)) else iterable
    if isinstance(iterable, dynlists.DynList):
        if is_symbolic(reverse):
            raise tracer.error("sorted() with a traced reverse= is not supported")
        return tracer.call(pybuiltins.sorted_list, [iterable, key, bool(reverse)], {})
    items = tracer_items(tracer, iterable)
    if not is_symbolic(items) and key is None and not is_symbolic(reverse):
        return sorted(items, reverse=reverse)
    if is_symbolic(reverse):
        raise tracer.error("sorted() with a traced reverse= is not supported")
    if len(items) > SORTED_LIMIT:        # an insertion sort whose loops compile; as many items out
        out = tracer.call(pybuiltins.sorted_list, [items, key, bool(reverse)], {})
        return [dynlists.item_at(tracer, out, i) for i in range(len(items))]
    return tracer.call(pybuiltins.sorted_items, [items, key, bool(reverse)], {})


@implements(builtins.all)
def _all(tracer, iterable):
    return tracer.call(pybuiltins.all_of, [iterable], {})


@implements(builtins.any)
def _any(tracer, iterable):
    return tracer.call(pybuiltins.any_of, [iterable], {})


SORTED_LIMIT = 48       # (an exchange sort: n * (n - 1) / 2 comparisons in the trace)


_TABLE[builtins.max] = _extremum("max", max)
_TABLE[builtins.min] = _extremum("min", min)
_TABLE.update({**MORE_MATH, **CMATH})   # gcd, comb, isqrt, fsum, dist, isclose, ulp...; cmath's exp, log, polar...
_TABLE.update(ITERABLES)      # set(), map, filter, itertools, bisect
_TABLE.update(trace_time.FUNCTIONS)   # collections.deque, Counter, defaultdict, OrderedDict
_TABLE[builtins.__build_class__] = instance_ops.build_class


def _python_result(impl):
    """A `math` function's implementation whose number is a Python one (math.sqrt(np.float64(2.0))
    is a float, not a NumPy scalar)."""
    def call(tracer, *args, **kwargs):
        result = impl(tracer, *args, **kwargs)
        return _python_number(tracer, result) if is_traced(result) else result
    return call


for _fn, _impl in list(_TABLE.items()):
    if getattr(_fn, "__module__", None) == "math":
        _TABLE[_fn] = _python_result(_impl)


def tracer_items(tracer, x) -> list:
    """The items of an iterable argument (an input list's items are loaded per call)."""
    return materialize(tracer, x)


@implements(builtins.sum)
def _sum(tracer, iterable, start=0):
    if isinstance(iterable, dicts.DynSet) and iterable.keys.item != I64:
        dicts.not_iterable(tracer, iterable)     # (a float sum depends on the order)
    iterable = iterable.keys if isinstance(iterable, (dicts.DynDict, dicts.DynSet)) else iterable
    if isinstance(iterable, SymbolicGenerator) and iterable.fresh():
        # sum(f(v) for v in xs): the generator runs once with the sum as its own variable, so
        # a loop in it compiles to a loop op that carries the sum
        _number(tracer, start, "sum()")
        state = iterable.run_into(SumState.starting(tracer, start), SumState.add)
        if isinstance(state, SumState):
            return state.finish(tracer)
        if state is not None:
            return state                   # every path raised (AlwaysRaises)
    if isinstance(iterable, dynlists.DynList):
        _number(tracer, start, "sum()")
        state = SumState.starting(tracer, start)
        if iterable.item == F64 and state.phase == "int":
            # CPython adds the first float to the int sum and goes on as floats: the same as
            # starting from float(start) (the phase cannot change inside the loop); an empty
            # list's sum is the int itself, which the Python function gives
            b = tracer.builder
            b.raise_if(b.compare("eq", dynlists.length(tracer, iterable), 0), NeedsPython("sum() of no floats"))
            state = SumState("float", b.convert(start, F64) if is_traced(start) else float(start))
        return tracer.call(pybuiltins.sum_list, [iterable, state], {}).finish(tracer)
    items = tracer_items(tracer, iterable)
    if _all_constant([start, *items]):
        return sum(items, start)
    state = SumState.starting(tracer, start)
    for item in items:
        state = state.add(tracer, item)
    return state.finish(tracer)


class SumState:
    """CPython's sum() one item at a time: exact int adds (phase "int"); the first float is
    added to that int sum, then the rest go through plain float adds (3.11) or Neumaier
    compensated summation (3.12+; phase "float", `compensation` c). A start that is neither
    exactly an int nor exactly a float (a bool) takes neither fast path: every item is added
    with plain `+` (phase "plain"). Loops carry it (branches.layout_of) as its three fields."""
    carried = True

    def __init__(self, phase: str, total, compensation=0.0):
        self.phase, self.total, self.compensation = phase, total, compensation

    def fields(self) -> tuple:
        return (self.phase, self.total, self.compensation)

    @classmethod
    def starting(cls, tracer, start) -> SumState:
        kind = tracer.builder.kind(start)
        return cls("plain" if kind == BOOL else "int" if kind == I64 else "float", start)

    def add(self, tracer, item) -> SumState:
        b = tracer.builder
        item = _number(tracer, item, "sum()")
        if self.phase != "float" or sys.version_info < (3, 12) or b.kind(item) != F64:
            total = b.binary("add", self.total, item)     # (ints are added without compensation)
            float_now = self.phase == "int" and b.kind(total) == F64
            return SumState("float" if float_now else self.phase, total, 0.0 if float_now else self.compensation)
        f, c = self.total, self.compensation
        if not any(is_traced(x) for x in (f, c, item)):
            t = f + item
            c += (f - t) + item if abs(f) >= abs(item) else (item - t) + f
            return SumState("float", t, c)
        f, c, item = b.value(f), b.value(c), b.value(item)
        t = b.emit("add", (f, item))
        big_f = b.emit("ge", (b.emit("fabs", (f,)), b.emit("fabs", (item,))))
        c = b.emit("add", (c, b.emit("select", (big_f, b.emit("add", (b.emit("sub", (f, t)), item)),
                                                 b.emit("add", (b.emit("sub", (item, t)), f))))))
        return SumState("float", t, c)

    def finish(self, tracer):
        if self.phase != "float" or sys.version_info < (3, 12):
            return self.total
        f, c = self.total, self.compensation
        if not is_traced(f) and not is_traced(c):
            return f + c if c != 0.0 and math.isfinite(c) else f
        b = tracer.builder
        f, c = b.value(f), b.value(c)
        # CPython adds the compensation only when it is nonzero and finite
        use_c = b.emit("select", (b.emit("ne", (c, b.const(0.0))), b.emit("isfinite", (c,)), b.const(False)))
        return b.emit("select", (use_c, b.emit("add", (f, c)), f))


@implements(builtins.len)
def _len(tracer, x):
    if isinstance(x, (ExternalList, gathered.ListView)):
        return len(x)
    if isinstance(x, run_time_strings.RunTimeString):
        return run_time_strings.length(tracer, x)
    if isinstance(x, dynlists.DynList):
        return dynlists.length(tracer, x)
    if isinstance(x, (dicts.DynDict, dicts.DynSet)):
        return dicts.length(tracer, x)
    if isinstance(x, TracedArray):
        return arrays.length(tracer, x)
    if isinstance(x, (ExternalObject, BoundMethod)):
        raise tracer.error(f"len() of {x!r} is not supported")
    if is_traced(x):
        raise TypeError(f"object of type '{'float' if x.type == F64 else 'int'}' has no len()")
    return len(x)


@implements(builtins.range)
def _range(tracer, *args):
    """A Python range when its numbers are constants; else a SymbolicRange (a `for` over it is
    a compiled loop: a new bound does not recompile)."""
    if not any(is_traced(a) for a in args):
        return range(*args)
    b = tracer.builder
    args = [widen(tracer, a) if is_traced(a) and a.type in INTEGERS else a for a in args]   # np.int32 (__index__)
    for a in args:
        if not (is_traced(a) and a.type in (I64, BOOL)) and type(a) not in (int, bool):
            raise TypeError(f"'{type_name(a)}' object cannot be interpreted as an integer")
    args = [b.convert(a, I64) if is_traced(a) else int(a) for a in args]
    if all(pinned_already(b, a) for a in args if is_traced(a)):       # (known already: no new guard)
        return range(*(b.concretize(a, "a range bound") if is_traced(a) else a for a in args))
    start, stop, step = (0, args[0], 1) if len(args) == 1 else (*args, 1) if len(args) == 2 else args
    if is_traced(step):
        b.raise_if(b.compare("eq", step, 0), ValueError("range() arg 3 must not be zero"))
    elif step == 0:
        raise ValueError("range() arg 3 must not be zero")
    return SymbolicRange(tracer, start, stop, step)


@implements(prange)
def _prange(tracer, *args):
    """range(...)'s numbers, as a ParallelRange: a `for` over it is a loop marked parallel."""
    r = _range(tracer, *args)
    return ParallelRange(tracer, *((r.start, r.stop, r.step) if isinstance(r, range) else r.args))


@implements(builtins.zip)
def _zip(tracer, *iterables, strict=False):
    compiled = None if strict else gathered.rows_of(tracer, iterables) or gathered.zip_of(tracer, iterables)
    if compiled is not None:
        return compiled                # long lists: one loop, one counter
    # lazy like CPython's: zip([1.0, 2.0], gen) never pulls gen's third value
    return zip(*(_iter(tracer, x, compiled=False) for x in iterables), strict=strict)


@implements(builtins.enumerate)
def _enumerate(tracer, iterable, start=0):
    start = tracer.builder.concretize(start, "enumerate()")
    compiled = gathered.rows_of(tracer, (iterable,), start) or gathered.enumerate_of(tracer, iterable, start)
    return compiled if compiled is not None else enumerate(_iter(tracer, iterable, compiled=False), start)


@implements(builtins.iter)
def _iter(tracer, iterable, *sentinel, compiled=True):
    dicts.not_iterable(tracer, iterable)
    iterable = iterable.keys if isinstance(iterable, dicts.DynDict) else iterable
    if sentinel:
        raise tracer.error("iter(callable, sentinel) is not supported")
    if is_traced(iterable):
        raise TypeError(f"'{type_name(iterable)}' object is not iterable")
    if not compiled and isinstance(iterable, (RangeIter, gathered.ListView)):
        return iter(materialize(tracer, iterable))      # (inside zip() of short and long lists)
    if isinstance(iterable, RangeIter):
        return iterable
    if isinstance(iterable, dynlists.DynList):
        return dynlists.iterate(tracer, iterable)
    if compiled and (it := gathered.iterator_of(tracer, iterable)) is not None:
        return it                      # a long list: a compiled loop
    if isinstance(iterable, (ExternalList, ExternalObject, BoundMethod, SymbolicFunction)):
        return iter(tracer_items(tracer, iterable))
    return iter(iterable)              # a list built in the trace is iterated live


@implements(builtins.next)
def _next(tracer, iterator, *default):
    """next() of an iterator the trace made (of a list, a range, a zip...) or of a generator it
    made: the next item, known at trace time or computed by the generator's frame."""
    if not (isinstance(iterator, SymbolicGenerator) or is_copyable_iterator(iterator)
            or type(iterator) in (zip, enumerate, map, filter)):
        if is_traced(iterator) or isinstance(iterator, (list, tuple, RangeIter)):
            raise TypeError(f"'{type_name(iterator)}' object is not an iterator")
        raise tracer.error(f"next() of {type_name(iterator)} is not supported")
    if (error := diverged_error(tracer.builder, iterator)) is not None:
        raise error
    try:
        return next(iterator)
    except StopIteration:
        if default:
            return default[0]
        raise


@implements(builtins.callable)
def _callable(tracer, obj):
    if is_traced(obj) or isinstance(obj, TracedArray):
        return False
    if isinstance(obj, (SymbolicFunction, BoundMethod)):
        return True
    if isinstance(obj, ExternalObject):
        return callable(obj.obj)
    if isinstance(obj, ExternalList) or type(obj) in (list, tuple):
        return False
    if is_symbolic(obj):
        raise tracer.error(f"callable() of {type_name(obj)} is not supported")
    return callable(obj)


@implements(builtins.reversed)
def _reversed(tracer, seq):
    seq = seq.keys if isinstance(seq, dicts.DynDict) else seq
    if isinstance(seq, dynlists.DynList):
        return tracer.call(pybuiltins.reversed_list, [seq], {})
    return iter(list(reversed(tracer_items(tracer, seq))))


@implements(pybuiltins.sum_step)
def _sum_step(tracer, state, item):
    return state.add(tracer, item)


@implements(builtins.list)
def _list(tracer, iterable=()):
    dicts.not_iterable(tracer, iterable)
    iterable = iterable.keys if isinstance(iterable, dicts.DynDict) else iterable
    if isinstance(iterable, dynlists.DynList):
        return tracer.call(pybuiltins.copied_list, [iterable], {})
    return tracer_items(tracer, iterable)


@implements(builtins.tuple)
def _tuple(tracer, iterable=()):
    return tuple(tracer_items(tracer, iterable))


# ---------------------------------------------------------------- methods of lists built in the trace
_LIST_ARITY = {"append": (1, 1), "pop": (0, 1), "insert": (2, 2), "reverse": (0, 0), "copy": (0, 0),
               "clear": (0, 0), "extend": (1, 1), "index": (1, 3), "count": (1, 1), "remove": (1, 1)}


def call_list_method(tracer, method_name: str, lst: list, args: list, kwargs: dict):
    """`lst.<method_name>(*args, **kwargs)` on a Python list built inside the trace (its items
    may be traced). Comparisons follow CPython's (identity first, then ==) and are concretized."""
    if method_name == "sort":
        return _list_sort(tracer, lst, args, kwargs)
    arity = _LIST_ARITY.get(method_name)
    if arity is None:
        raise tracer.error(f"list.{method_name}() is not supported")
    if kwargs or not arity[0] <= len(args) <= arity[1]:
        getattr([], method_name)(*[0] * len(args), **dict.fromkeys(kwargs, 0))   # CPython's TypeError
        raise tracer.error(f"this call of list.{method_name}() is not supported")
    if method_name == "append":
        lst.append(args[0])
    elif method_name == "extend":
        lst.extend(tracer_items(tracer, args[0]))
    elif method_name == "pop":
        return lst.pop(_list_index_argument(tracer, args[0], "list.pop()", lst)) if args else lst.pop()
    elif method_name == "insert":
        lst.insert(_list_index_argument(tracer, args[0], "list.insert()", lst), args[1])
    elif method_name in ("reverse", "copy", "clear"):
        return getattr(lst, method_name)()
    elif method_name == "index":
        return _list_index(tracer, lst, *args)
    elif method_name == "count":
        return sum(1 for item in list(lst) if _equal(tracer, item, args[0], "list.count()"))
    elif method_name == "remove":
        for i, item in enumerate(list(lst)):
            if _equal(tracer, item, args[0], "list.remove()"):
                del lst[i]
                return None
        raise ValueError("list.remove(x): x not in list")
    return None


def _equal(tracer, item, value, what: str) -> bool:
    return bool(tracer.builder.concretize(items_equal(tracer, item, value), f"the comparison in {what}"))


def _list_index_argument(tracer, x, what: str, lst: list):
    if is_traced(x) and x.type == F64:
        raise TypeError("'float' object cannot be interpreted as an integer")
    if isinstance(x, (ExternalList, ExternalObject, BoundMethod)):
        raise tracer.error(f"{what} with an index {x!r} is not supported")
    if is_traced(x) and not tracer.builder.must_be_concrete(x):     # (traced again: a list of run-time length)
        dynlists.grow_at_run_time(tracer, lst, f"{what} at an index known only at run time")
    return tracer.builder.concretize(x, f"the index of {what}")


def _list_index(tracer, lst: list, value, start=0, stop=sys.maxsize):
    """list.index(value, start, stop), CPython's loop: bounds clamped like a slice's."""
    bounds = []
    for bound in (start, stop):
        if is_traced(bound) and bound.type == F64 or not is_traced(bound) and type(bound) not in (int, bool):
            if isinstance(bound, (ExternalList, ExternalObject, BoundMethod)):
                raise tracer.error(f"list.index() with a bound {bound!r} is not supported")
            raise TypeError("slice indices must be integers or have an __index__ method")
        bounds.append(tracer.builder.concretize(bound, "a bound of list.index()"))
    start, stop = bounds
    if start < 0:
        start = max(start + len(lst), 0)
    if stop < 0:
        stop = max(stop + len(lst), 0)
    i = start
    while i < stop and i < len(lst):
        if _equal(tracer, lst[i], value, "list.index()"):
            return i
        i += 1
    if is_symbolic(value) and not is_traced(value):
        raise tracer.error("list.index() of a missing sequence holding traced values is not supported")
    raise ValueError(f"{tracer.builder.concretize(value, 'the message of list.index()')!r} is not in list")


def _list_sort(tracer, lst: list, args: list, kwargs: dict):
    if args or set(kwargs) - {"key", "reverse"}:
        [].sort(*args, **kwargs)     # CPython's TypeError: sort() takes no positional arguments
        raise tracer.error("this call of list.sort() is not supported")
    lst[:] = _sorted(tracer, lst, key=kwargs.get("key"), reverse=kwargs.get("reverse", False))
    return None
