"""Nothing is stale (tracer.frontend.sources, tracer.frontend.loader): a global, a closure variable,
an argument list, an object's weights or attributes, a class attribute or a method that the trace
read is read again on every call, and a change that decides control flow compiles anew.

The oracle is CPython: a compiled function returns what the Python function returns.
"""
from __future__ import annotations

from like_python import assert_like_python

from tracer import native, trace

I64_MIN, I64_MAX = -2 ** 63, 2 ** 63 - 1


# ============================================================================ no stale constants
SCALE = 2.0
OFFSETS = [1.0, 2.0]
BIAS_T = (0.5, 1)


def uses_global(x):
    return SCALE * x


def uses_global_list(x):
    return OFFSETS[0] * x + OFFSETS[-1]


def uses_global_tuple(x):
    a, b = BIAS_T
    return a * x + b


def _global_helper(v):
    return v + 1.0


def uses_global_function(x):
    return _global_helper(x) * 2.0


def test_changing_a_global_number_changes_the_result():
    global SCALE
    compiled = trace(uses_global)
    old = SCALE
    try:
        assert compiled(3.0) == 6.0
        SCALE = 5.0
        assert compiled(3.0) == 15.0
        SCALE = 4            # an int now: 4 * 3.0
        assert compiled(3.0) == 12.0 and type(compiled(3.0)) is float
        SCALE = 2.0
        assert compiled(3.0) == 6.0
    finally:
        SCALE = old
    assert not native.installed()


def test_changing_a_global_list_or_tuple_changes_the_result():
    global OFFSETS, BIAS_T
    compiled_list = trace(uses_global_list)
    compiled_tuple = trace(uses_global_tuple)
    old_list, old_tuple = OFFSETS, BIAS_T
    try:
        assert compiled_list(3.0) == 5.0
        OFFSETS[0] = -1.0                # mutated in place
        assert compiled_list(3.0) == -1.0
        OFFSETS.append(10.0)             # a new length
        assert compiled_list(3.0) == 7.0
        OFFSETS = [0.0, 0.5]             # rebound
        assert compiled_list(3.0) == 0.5
        assert compiled_tuple(2.0) == 2.0
        BIAS_T = (2.0, -1)
        assert compiled_tuple(2.0) == 3.0
    finally:
        OFFSETS, BIAS_T = old_list, old_tuple


def test_rebinding_a_global_function_is_seen():
    global _global_helper
    compiled = trace(uses_global_function)
    old = _global_helper
    try:
        assert compiled(1.0) == 4.0
        _global_helper = lambda v: v * 10.0
        assert compiled(1.0) == 20.0
    finally:
        _global_helper = old
    assert compiled(1.0) == 4.0


def test_changing_a_closure_variable_changes_the_result():
    gain = 2.0

    def scaled(x):
        return gain * x
    compiled = trace(scaled)
    assert compiled(3.0) == 6.0
    gain = -1.0
    assert compiled(3.0) == -3.0


def test_mutating_a_list_argument_is_seen():
    def weighted(ws, x):
        return ws[0] * x + ws[1]
    compiled = trace(weighted, fuse_fma=False)
    ws = [2.0, 1.0]
    assert compiled(ws, 3.0) == 7.0
    ws[0] = -2.0
    assert compiled(ws, 3.0) == -5.0
    ws[1] = 4                       # an int now: a new specialization, still right
    assert compiled(ws, 3.0) == -2.0
    ws[1] = 0.5
    assert compiled(ws, 3.0) == -5.5


class Neuron:
    def __init__(self, w, b):
        self.w = w
        self.b = b

    def __call__(self, xs):
        return max(0.0, sum(wi * xi for wi, xi in zip(self.w, xs)) + self.b)


class Gain:
    factor = 2.0

    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return self.w * x * self.factor


def test_mutating_an_objects_weights_is_seen():
    def forward(neuron, x0, x1):
        return neuron([x0, x1])
    compiled = trace(forward, fuse_fma=False)
    n = Neuron([1.0, 2.0], 0.5)
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 3.5
    n.w[0] = -4.0
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 0.0
    n.b = 10.0
    assert compiled(n, 1.0, 1.0) == forward(n, 1.0, 1.0) == 8.0
    n.w = [0.5, 0.5]                # a new list object
    assert compiled(n, 1.0, 3.0) == forward(n, 1.0, 3.0) == 12.0
    other = Neuron([1.0, 1.0], -100.0)
    assert compiled(other, 1.0, 3.0) == 0.0
    assert len(compiled.specializations) == 1


STEPS = 3
USE_ABS = False


def uses_global_control(x):
    y = abs(x) if USE_ABS else x
    for _ in range(STEPS):
        y = y * 0.5 + 1.0
    return y


def test_changing_globals_that_decide_control_flow_is_seen():
    global STEPS, USE_ABS
    compiled = trace(uses_global_control, fuse_fma=False)
    try:
        for steps, use_abs in [(3, False), (5, False), (5, True), (0, True), (3, False)]:
            STEPS, USE_ABS = steps, use_abs
            assert_like_python(compiled, -3.0)
            assert_like_python(compiled, 2.5)
    finally:
        STEPS, USE_ABS = 3, False


class Iterations:
    def __init__(self, steps, damped, rate):
        self.steps = steps
        self.damped = damped
        self.rate = rate

    def run(self, x):
        for _ in range(self.steps):
            x = x - self.rate * x
        return x * 0.5 if self.damped else x


def test_changing_attributes_that_decide_control_flow_is_seen():
    def run(it, x):
        return it.run(x)
    compiled = trace(run, fuse_fma=False)
    it = Iterations(2, False, 0.25)
    assert_like_python(compiled, it, 4.0)
    it.steps = 4
    assert_like_python(compiled, it, 4.0)
    it.damped = True
    assert_like_python(compiled, it, 4.0)
    it.rate = 0.5
    assert_like_python(compiled, it, 4.0)
    n = len(compiled.specializations)
    assert_like_python(compiled, Iterations(4, True, 0.125), 4.0)   # same structure and decisions
    assert len(compiled.specializations) == n


def test_changing_a_closure_int_that_decides_a_loop_is_seen():
    n = 2

    def repeat(x):
        for _ in range(n):
            x = x * 3.0
        return x
    compiled = trace(repeat)
    assert compiled(1.0) == 9.0
    n = 3
    assert compiled(1.0) == 27.0


def test_changing_a_class_attribute_is_seen():
    def run(g, x):
        return g.apply(x)
    compiled = trace(run)
    g = Gain(1.5)
    assert compiled(g, 2.0) == 6.0
    try:
        Gain.factor = 3.0
        assert compiled(g, 2.0) == run(g, 2.0) == 9.0
    finally:
        Gain.factor = 2.0


def test_redefining_a_method_is_seen():
    class Model:
        def __init__(self, w):
            self.w = w

        def apply(self, x):
            return self.w * x

    def run(m, x):
        return m.apply(x)
    compiled = trace(run)
    m = Model(2.0)
    assert compiled(m, 3.0) == 6.0
    Model.apply = lambda self, x: self.w - x
    assert compiled(m, 3.0) == run(m, 3.0) == -1.0
