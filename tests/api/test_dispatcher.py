"""tracer.native.Dispatcher: native entries, guards, the miss fallback.

Native entries are stand-ins for LLVM-generated code, built for the tests by
tests/support/native_entries.py: entry_address(kind) with kind in
  "add_floats"  sum of two exact floats, miss for anything else
  "echo"        returns (self, args), always a hit
  "raise"       raises ValueError
  "miss"        always misses
"""
import functools
import gc
import sys
import timeit
import tracemalloc
import types
import weakref

import pytest
from native_entries import entry_address

from tracer import native as F

ADD = entry_address()
ECHO = entry_address("echo")
RAISE = entry_address("raise")
ALWAYS_MISS = entry_address("miss")


class Recorder:
    """A miss callable that records its calls."""

    def __init__(self, result="missed"):
        self.calls = []
        self.result = result

    def __call__(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return self.result


def make(entry=ADD, self_obj=None, guards=(), miss=None):
    miss = miss if miss is not None else Recorder()
    d = F.Dispatcher(miss, "f")
    d.add_native(entry, self_obj, guards)
    return d, miss


# --- sentinels and basics ---------------------------------------------------

def test_sentinels_are_distinct_and_readable():
    assert len({id(F.MISS), id(F.ABSENT), id(F.SKIP)}) == 3
    assert repr(F.MISS) == "tracer.native.MISS"
    assert repr(F.ABSENT) == "tracer.native.ABSENT"
    assert repr(F.SKIP) == "tracer.native.SKIP"


def test_constructor_checks_arguments():
    with pytest.raises(TypeError):
        F.Dispatcher(42, "f")
    with pytest.raises(TypeError):
        F.Dispatcher(print, 42)
    d = F.Dispatcher(print, "f", "C.f")
    assert d.__name__ == "f" and d.__qualname__ == "C.f" and d.miss is print


def test_hit_returns_entry_result_without_calling_miss():
    d, miss = make()
    assert d(1.5, 2.25) == 3.75
    assert miss.calls == []


def test_miss_falls_back_to_miss_callable():
    d, miss = make()
    assert d(1, 2) == "missed"
    assert d(1.0) == "missed"
    assert d() == "missed"
    assert miss.calls == [((1, 2), {}), ((1.0,), {}), ((), {})]


def test_no_entries_calls_miss():
    miss = Recorder()
    d = F.Dispatcher(miss, "f")
    assert d.entry_count == 0
    assert d(1.0, 2.0) == "missed"
    assert miss.calls == [((1.0, 2.0), {})]


def test_keywords_go_to_miss():
    d, miss = make()
    assert d(1.0, y=2.0) == "missed"
    assert miss.calls == [((1.0,), {"y": 2.0})]
    # An empty **{} is no keywords at all: the entry takes the call.
    assert d(1.0, 2.0, **{}) == 3.0
    assert len(miss.calls) == 1


def test_entries_are_tried_in_order():
    d, miss = make(ALWAYS_MISS)
    d.add_native(ADD, None, ())
    d.add_native(ECHO, "third", ())
    assert d.entry_count == 3
    assert d(1.0, 2.0) == 3.0            # 1st misses, 2nd hits
    assert d(1, 2) == ("third", (1, 2))  # 1st and 2nd miss, 3rd hits
    assert miss.calls == []


def test_entry_receives_self_obj_and_args():
    marker = object()
    d, _ = make(ECHO, marker)
    assert d(1, "a", None) == (marker, (1, "a", None))
    assert d() == (marker, ())
    # Through *args, a bound method (PY_VECTORCALL_ARGUMENTS_OFFSET set) and partial.
    assert d(*[1, 2]) == (marker, (1, 2))
    assert types.MethodType(d, "obj")(3) == (marker, ("obj", 3))
    assert functools.partial(d, 1)(2) == (marker, (1, 2))


def test_entry_error_propagates_and_miss_is_not_called():
    d, miss = make(RAISE)
    with pytest.raises(ValueError, match="raised by the test entry"):
        d(1.0, 2.0)
    assert miss.calls == []


def test_miss_error_propagates():
    def miss(*args):
        raise KeyError("from miss")
    d, _ = make(miss=miss)
    with pytest.raises(KeyError, match="from miss"):
        d(1, 2)


def test_clear_and_entry_count():
    d, miss = make()
    d.add_native(ECHO, None, ())
    assert d.entry_count == 2
    d.clear()
    assert d.entry_count == 0
    assert d(1.0, 2.0) == "missed"
    with pytest.raises(AttributeError):
        d.entry_count = 5


def test_entries_introspection():
    g = {"k": 1}
    guards = ((g, "k", 1),)
    d, _ = make(ADD, "me", guards)
    ((address, self_obj, got_guards),) = d.entries
    assert address == ADD and self_obj == "me" and got_guards is guards


def test_add_native_validates():
    d = F.Dispatcher(print, "f")
    cell = types.CellType(1)
    with pytest.raises(ValueError):
        d.add_native(0, None, ())
    with pytest.raises(TypeError):
        d.add_native("nope", None, ())
    with pytest.raises(TypeError):
        d.add_native(ADD, None, [])
    with pytest.raises(TypeError):
        d.add_native(ADD, None, (({}, "k"),))
    with pytest.raises(TypeError):
        d.add_native(ADD, None, (([], "k", 1),))
    with pytest.raises(ValueError):
        d.add_native(ADD, None, ((cell, "k", 1),))
    with pytest.raises(TypeError):          # unhashable key: caught up front
        d.add_native(ADD, None, (({}, [], 1),))
    with pytest.raises(TypeError):
        d.add_native(ADD, None)
    assert d.entry_count == 0


# --- guards -------------------------------------------------------------------

def test_dict_guard():
    weights = object()
    g = {"w": weights}
    d, miss = make(guards=((g, "w", weights),))
    assert d(1.0, 2.0) == 3.0
    g["w"] = object()
    assert d(1.0, 2.0) == "missed"
    g["w"] = weights
    assert d(1.0, 2.0) == 3.0
    del g["w"]
    assert d(1.0, 2.0) == "missed"
    assert len(miss.calls) == 2


def test_dict_guard_is_identity_not_equality():
    big = int("1" + "0" * 30)
    g = {"n": big}
    d, _ = make(guards=((g, "n", big),))
    g["n"] = int("1" + "0" * 30)    # equal, not the same object
    assert g["n"] == big and g["n"] is not big
    assert d(1.0, 2.0) == "missed"


def test_absent_guard():
    g = {}
    d, miss = make(guards=((g, "k", F.ABSENT),))
    assert d(1.0, 2.0) == 3.0
    g["k"] = None
    assert d(1.0, 2.0) == "missed"
    del g["k"]
    assert d(1.0, 2.0) == 3.0


def test_cell_guard():
    value = object()
    cell = types.CellType(value)
    d, _ = make(guards=((cell, None, value),))
    assert d(1.0, 2.0) == 3.0
    cell.cell_contents = object()
    assert d(1.0, 2.0) == "missed"
    del cell.cell_contents            # an empty cell holds NULL
    assert d(1.0, 2.0) == "missed"
    cell.cell_contents = value
    assert d(1.0, 2.0) == 3.0


def test_closure_cell_guard():
    def outer():
        scale = 2.0
        def inner(x):
            return x * scale
        def set_scale(v):
            nonlocal scale
            scale = v
        return inner, set_scale
    inner, set_scale = outer()
    cell = inner.__closure__[0]
    d, _ = make(guards=((cell, None, cell.cell_contents),))
    assert d(1.0, 2.0) == 3.0
    set_scale(3.0)
    assert d(1.0, 2.0) == "missed"


def test_failing_guard_skips_to_next_entry():
    g = {"k": 1}
    d, miss = make(ECHO, "first", ((g, "k", 1),))
    d.add_native(ECHO, "second", ())
    assert d(0) == ("first", (0,))
    g["k"] = 2
    assert d(0) == ("second", (0,))


class CollidingKey:
    """Hashes like 'k' so a lookup compares with it, and runs code in __eq__."""

    def __init__(self, on_eq):
        self.on_eq = on_eq

    def __hash__(self):
        return hash("k")

    def __eq__(self, other):
        return self.on_eq()


def test_guard_lookup_error_propagates():
    def boom():
        raise RuntimeError("eq failed")
    # The lookup compares the stored key with the guard's key: __eq__ raises.
    g2 = {CollidingKey(boom): 1}
    d2, miss2 = make(guards=((g2, CollidingKey(boom), 1),))
    with pytest.raises(RuntimeError, match="eq failed"):
        d2(1.0, 2.0)
    assert miss2.calls == []
    # the same through an ABSENT guard
    d3, _ = make(guards=((g2, CollidingKey(boom), F.ABSENT),))
    with pytest.raises(RuntimeError, match="eq failed"):
        d3(1.0, 2.0)


def test_entries_replaced_during_a_call_are_safe():
    # A guard lookup runs Python code that clears the dispatcher and adds
    # entries while the call is iterating over the entries.
    holder = {}

    def mutate():
        d = holder["d"]
        d.clear()
        for _ in range(10):
            d.add_native(ECHO, object(), ())
        gc.collect()
        return False

    g = {CollidingKey(mutate): 1}
    d, miss = make(ADD, object(), ((g, "k", 1),))
    d.add_native(ECHO, "old second", ())
    holder["d"] = d
    # the first entry's guard fails (key absent); the old second entry still runs
    assert d(1.0, 2.0) == ("old second", (1.0, 2.0))
    assert d.entry_count == 10
    holder.clear()


# --- try_entries --------------------------------------------------------------

def test_try_entries():
    d, miss = make()
    assert d.try_entries((1.0, 2.0)) == 3.0
    assert d.try_entries((1, 2)) is F.MISS
    assert F.Dispatcher(miss, "g").try_entries(()) is F.MISS
    assert miss.calls == []
    with pytest.raises(TypeError):
        d.try_entries([1.0, 2.0])
    d2, _ = make(RAISE)
    with pytest.raises(ValueError):
        d2.try_entries((1.0,))


# --- Python-facing behaviour ---------------------------------------------------

def test_binds_as_a_method():
    marker = object()
    d, miss = make(ECHO, marker)

    class C:
        m = d

    obj = C()
    assert C.m is d
    assert d.__get__(None, C) is d
    bound = obj.m
    assert isinstance(bound, types.MethodType)
    assert bound.__self__ is obj and bound.__func__ is d
    assert obj.m(1.0) == (marker, (obj, 1.0))
    assert bound(2) == (marker, (obj, 2))
    assert C.m(obj, 3) == (marker, (obj, 3))


def test_method_miss_gets_self():
    d, miss = make()

    class C:
        m = d

    obj = C()
    assert obj.m(1.0, k=2) == "missed"
    assert miss.calls == [((obj, 1.0), {"k": 2})]


def test_attributes_are_settable():
    def f(x, y):
        """Adds."""
        return x + y

    d = F.Dispatcher(f, "f")
    d.py_func = f
    d.__doc__ = "doc"
    d.__wrapped__ = f
    assert d.py_func is f and d.__doc__ == "doc" and d.__wrapped__ is f
    assert d.__dict__["py_func"] is f
    d.__name__ = "g"
    d.__qualname__ = "Outer.g"
    assert (d.__name__, d.__qualname__) == ("g", "Outer.g")
    with pytest.raises(TypeError):
        d.__name__ = 3
    functools.update_wrapper(d, f)
    assert d.__name__ == "f" and d.__doc__ == "Adds." and d.__wrapped__ is f
    assert d.__module__ == __name__


def test_repr():
    d, _ = make()
    d.__qualname__ = "mod.fma"
    assert repr(d) == "<Dispatcher mod.fma: 1 native entry>"
    d.add_native(ADD, None, ())
    assert repr(d) == "<Dispatcher mod.fma: 2 native entries>"


def test_keeps_self_obj_and_guards_alive():
    self_obj = object()
    guards = ((types.CellType(1), None, 1),)
    before = sys.getrefcount(self_obj), sys.getrefcount(guards)
    d, _ = make(ECHO, self_obj, guards)
    assert sys.getrefcount(self_obj) == before[0] + 1
    assert sys.getrefcount(guards) == before[1] + 1
    d.clear()
    assert (sys.getrefcount(self_obj), sys.getrefcount(guards)) == before


def test_reference_cycles_are_collected():
    d, _ = make(ECHO)
    d.add_native(ECHO, d, ((d.__dict__, "me", F.ABSENT),))   # entry -> d
    d.me = d                                                 # __dict__ -> d
    ref = weakref.ref(d)
    del d
    gc.collect()
    assert ref() is None


def test_subclass():
    class Sub(F.Dispatcher):
        pass

    d = Sub(Recorder(), "f")
    d.add_native(ADD, None, ())
    assert d(1.0, 2.0) == 3.0 and d(1, 2) == "missed"


def test_no_leaks():
    marker = object()
    d, miss = make(ECHO, marker)
    a, b = object(), object()
    d2, miss2 = make(ADD, miss=Recorder(b))
    refs = sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(marker)
    for _ in range(10_000):
        d(a)
        d2(a)
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for _ in range(100_000):
            d(a, 1.0)
            d2(1.0, 2.0)
            d2(a)          # miss: goes to the Recorder
            miss2.calls.clear()
            d.try_entries((a,))
        grown = tracemalloc.get_traced_memory()[0] - start
    finally:
        tracemalloc.stop()
    assert (sys.getrefcount(a), sys.getrefcount(b), sys.getrefcount(marker)) == refs
    assert grown < 64 * 1024


def test_hit_is_cheaper_than_a_python_call():
    """Sanity check only (not a benchmark): a hit must not go anywhere slow.

    Interleaved repeats, best of each, with a generous bound so a loaded
    machine does not fail it.  examples/bench has the real figures.
    """
    def f(x, y):
        return x + y

    d, miss = make()
    ns = {"f": f, "d": d, "a": 1.5, "b": 2.25}
    t_py = timeit.Timer("f(a, b)", globals=ns)
    t_d = timeit.Timer("d(a, b)", globals=ns)
    best_py = best_d = float("inf")
    for _ in range(15):
        best_py = min(best_py, t_py.timeit(20_000))
        best_d = min(best_d, t_d.timeit(20_000))
    assert miss.calls == []
    assert best_d < 1.5 * best_py, (best_d, best_py)


# --- function attribute guards (an inlined function's code and defaults) -----
def test_function_guards_on_code_and_defaults():
    def g(x, k=2.0):
        return x * k
    code, defaults = g.__code__, g.__defaults__
    guards = ((g, "__code__", code), (g, "__defaults__", defaults), (g, "__kwdefaults__", None))
    d, miss = make(guards=guards)
    assert d(1.0, 2.0) == 3.0 and not miss.calls
    g.__defaults__ = (3.0,)
    assert d(1.0, 2.0) == "missed"
    g.__defaults__ = defaults
    assert d(1.0, 2.0) == 3.0
    g.__code__ = (lambda x, k=1.0: x).__code__
    assert d(1.0, 2.0) == "missed"


def test_function_guard_keys_are_checked_when_added():
    def g():
        pass
    with pytest.raises(ValueError):
        make(guards=((g, "__name__", "g"),))
