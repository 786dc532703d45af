"""Inputs are told apart structurally, nothing is stale after the user changes something the trace
depended on, and capture() regions and argument binding behave like CPython (tracer.frontend.sources,
tracer.frontend.loader, tracer.specialize, tracer.regions)."""
import math
import struct
import warnings

import pytest

import tracer
from tracer import native, trace


def outcome(f, *args, **kwargs):
    try:
        r = f(*args, **kwargs)
    except Exception as exc:
        return ("raise", type(exc), str(exc))
    return ("return", type(r), struct.pack("<d", r) if type(r) is float else r)


def same_as_python(f, *args, **kwargs):
    compiled = trace(f, fuse_fma=False)
    assert outcome(compiled, *args, **kwargs) == outcome(f, *args, **kwargs)
    return compiled


# ------------------------------------------------------------------ distinct inputs, same printed name
W = [1.0, 2.0]


def _scaled(x):
    return x * W[0]


def test_a_global_and_an_argument_with_the_same_name_are_different_inputs():
    def f(W, x):
        return W[0] + _scaled(x)
    same_as_python(f, [10.0, 20.0], 1.0)


def test_two_list_defaults_are_different_inputs():
    def g(a=[1.0, 2.0], b=[3.0, 4.0]):   # noqa: B006  (the defaults are what this test is about)
        return a[0] + b[0]

    def f(x):
        return g() + x
    same_as_python(f, 0.5)


def test_none_and_function_arguments_are_identity_guarded():
    def f(fn, x, y=None):
        return fn(x) if y is None else fn(x) + y
    compiled = same_as_python(f, math.sin, 1.0)
    assert outcome(compiled, math.cos, 1.0) == outcome(f, math.cos, 1.0)
    assert outcome(compiled, math.cos, 1.0, 2.0) == outcome(f, math.cos, 1.0, 2.0)


# ------------------------------------------------------------------ nothing stale
class Scaler:
    scale = 2.0

    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x * self.scale

    @property
    def doubled(self):
        return 2.0 * self.w


def test_instance_attribute_shadowing_a_class_attribute_is_seen():
    def f(s, x):
        return s.apply(x)
    compiled = trace(f)
    s = Scaler(1.5)
    assert compiled(s, 2.0) == f(s, 2.0)
    s.scale = 5.0
    assert compiled(s, 2.0) == f(s, 2.0) == 15.0


def test_properties_run_and_see_updates():
    def f(s):
        return s.doubled
    compiled = trace(f)
    s = Scaler(1.5)
    assert compiled(s) == 3.0
    s.w = 4.0
    assert compiled(s) == 8.0


def test_changing_an_inlined_functions_defaults_is_seen():
    def g(x, k=2.0):
        return x * k

    def f(x):
        return g(x)
    compiled = trace(f)
    assert compiled(1.5) == 3.0
    g.__defaults__ = (3.0,)
    assert compiled(1.5) == f(1.5) == 4.5


def test_replacing_an_inlined_functions_code_is_seen():
    def g(x):
        return x + 1.0

    def f(x):
        return g(x)
    compiled = trace(f)
    assert compiled(1.0) == 2.0
    g.__code__ = (lambda x: x + 10.0).__code__
    assert compiled(1.0) == f(1.0) == 11.0


# ------------------------------------------------------------------ failures at trace time
def test_a_failing_value_used_as_a_constant_raises_what_python_raises():
    def f(n, m):
        return sum(1.0 for _ in range(n // m))
    same_as_python(f, 4, 0)


def test_the_first_failure_in_program_order_is_raised():
    def f(x, m):
        a = 1.0 / x
        return sum(a for _ in range(m // 0))
    same_as_python(f, 0.0, 3)


# ------------------------------------------------------------------ generators are lazy
def test_generator_expressions_bind_late_and_run_lazily():
    def f(x):
        k = 1.0
        g = (x * k for _ in range(2))
        k = 2.0
        return sum(g)
    same_as_python(f, 1.0)


# ------------------------------------------------------------------ argument binding
@pytest.mark.parametrize("call", [
    lambda f: f(1.0, 2.0, 3.0, 4.0),
    lambda f: f(),
    lambda f: f(1.0, q=2.0),
    lambda f: f(1.0, x=2.0),
])
def test_binding_errors_of_inlined_calls_are_cpythons(call):
    def g(x, y=1.0, *, z=2.0):
        return x + y + z

    def f(x):
        return call(g)
    same_as_python(f, 1.0)


def test_keyword_only_parameter_passed_positionally_is_a_type_error():
    def f(x, *, z=3.0):
        return x + z
    compiled = same_as_python(f, 1.0)
    assert outcome(compiled, 1.0, 5.0) == outcome(f, 1.0, 5.0)
    assert compiled(1.0, z=5.0) == 6.0


# ------------------------------------------------------------------ capture() regions
def make_scaler(k):
    def scale(x):
        return k * x
    return scale


def sum_of(xs):
    total = 0.0
    for x in xs:
        total += x
    return total


def polynomial(x):
    return 3 * x * x + 1


def test_capture_keeps_closures_of_one_factory_apart():
    two, three = make_scaler(2.0), make_scaler(3.0)
    with tracer.capture(modules=__name__):
        assert (two(1.0), three(1.0), two(2.0), three(2.0)) == (2.0, 3.0, 4.0, 6.0)
    assert not native.installed()


def test_capture_reuses_a_loaded_specialization():
    with tracer.capture(modules=__name__) as stats:
        for i in range(5):
            assert sum_of([1.0, float(i)]) == 1.0 + i
    assert stats.compiled["sum_of"] == 1


def test_capture_a_big_int_call_runs_python_and_later_calls_still_compile():
    with tracer.capture(modules=__name__) as stats:
        assert polynomial(2 ** 70) == 3 * 2 ** 140 + 1
        assert polynomial(1.5) == 3 * 1.5 * 1.5 + 1
    assert "polynomial" in stats.compiled and "polynomial" not in stats.not_compiled


def test_capture_leaves_the_standard_library_alone():
    with warnings.catch_warnings():
        with tracer.capture() as stats:
            assert polynomial(2.0) == 13.0
    assert not any(name.startswith(("_GeneratorContextManager", "catch_warnings")) for name in
                   [*stats.compiled, *stats.not_compiled])


def test_zip_is_lazy_like_cpythons():
    def f(ws):
        return sum(a for a, _ in zip([1.0, 2.0], (1.0 / w for w in ws)))
    same_as_python(f, [1.0, 2.0, 0.0])


def _counts(lst):
    for _ in range(3):
        yield len(lst)


def test_a_generator_function_runs_interleaved_with_its_consumer():
    def f(x):
        lst, s = [], 0
        for n in _counts(lst):
            lst.append(x)
            s += n
        return s
    same_as_python(f, 1.0)


G = (1.0, 2.0)


def test_a_global_tuple_keeps_its_identity():
    def f(x):
        return (G is G) + x
    same_as_python(f, 1.0)
