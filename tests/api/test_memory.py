"""What a compiled function holds is freed with it: its native code (unloaded from the JIT), its
specializations, and its entries in the tracer's tables. And `grad(f)`, `value_and_grad(f)`,
`vjp(f, ...)` and `vectorize(f)` written inline compile once, not on every call."""
import functools
import gc
import subprocess
import sys
import textwrap
import weakref

import numpy as np

import codegen.jit
import tracer
from tracer import grad, value_and_grad, vectorize, vjp

RSS_SCRIPT = textwrap.dedent("""
    import gc, os
    import numpy as np
    from tracer import trace

    def resident_bytes():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

    def make(k):
        c = float(k)
        def f(x):
            return x * c + 1.0
        return f

    def trace_and_drop(n, first):
        small = np.ones(3)
        for k in range(first, first + n):
            f = trace(make(k))
            assert f(1.5) == 1.5 * k + 1.0
            if k % 10 == 0:           # an array specialization too, now and then
                assert np.array_equal(f(small), small * k + 1.0)

    trace_and_drop(300, 0)            # warm-up: caches, allocator arenas, the first JITs
    gc.collect()
    before = resident_bytes()
    trace_and_drop(1000, 1000)
    gc.collect()
    print(resident_bytes() - before)
""")


def test_tracing_and_dropping_closures_keeps_no_memory():
    """1,000 closures traced (1,100 compiles), called and dropped: the process does not grow
    (measured in a process of its own, so other tests' allocations do not count). Keeping each
    compiled library grows it by about 66 MB; the allocator alone moves it by up to ~7 MB from
    run to run (seen on 3.13), hence the bound."""
    run = subprocess.run([sys.executable, "-c", RSS_SCRIPT], capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr
    growth = int(run.stdout.split()[-1])
    assert growth < 24 * 2 ** 20, f"resident memory grew by {growth / 2 ** 20:.1f} MB"


class CountCompiles:
    def __init__(self, monkeypatch):
        self.count = 0
        compile_function = codegen.jit.compile_function

        def counted(*args, **kwargs):
            self.count += 1
            return compile_function(*args, **kwargs)
        monkeypatch.setattr(codegen.jit, "compile_function", counted)


def h(x):
    return x * x * x


def test_inline_grad_compiles_once(monkeypatch):
    compiles = CountCompiles(monkeypatch)
    for i in range(1000):
        x = 1.0 + i / 1024           # exact products: the gradient equals 3 x^2 exactly
        assert grad(h)(x) == 3 * x * x
    assert compiles.count == 1


def test_inline_transforms_compile_once(monkeypatch):
    compiles = CountCompiles(monkeypatch)
    a = np.linspace(0.0, 1.0, 5)
    for i in range(50):
        x = 1.0 + i
        assert value_and_grad(h)(x) == (x * x * x, 3 * x * x)
        assert grad(grad(h))(x) == 6 * x
        assert grad(h, argnums=(0,))(x) == (3 * x * x,)
        value, pullback = vjp(h, x)
        assert value == x * x * x and pullback(1.0) == (3 * x * x,)
        assert np.array_equal(vectorize(h)(a), a * a * a)
    # one each: value_and_grad, grad(grad), grad with a tuple argnums, vjp's forward and
    # backward, vectorize's loop
    assert compiles.count == 6


def ten_times(g):
    @functools.wraps(g)
    def wrapper(x):
        return 10.0 * g(x)
    return wrapper


def test_kept_transforms_live_as_long_as_their_function():
    def g(x):
        return x * x
    assert grad(g)(3.0) == 6.0 and vectorize(g)(2.0) == 4.0 and vjp(g, 1.0)[0] == 1.0
    assert grad(g) is grad(g)

    wrapper = ten_times(g)          # functools.wraps copies g's __dict__, what was kept for g included
    assert grad(wrapper)(3.0) == 60.0 and grad(g)(3.0) == 6.0

    compiled = weakref.ref(grad(g).specializations[0].compiled)
    function = weakref.ref(g)
    del g, wrapper
    gc.collect()
    assert function() is None and compiled() is None


class Scale:
    def __init__(self, value):
        self.value = value


def scaled_by(scale):
    def f(x):
        return x * scale.value
    return f


def test_capture_frees_what_it_compiled_for_a_closure():
    scales = [Scale(float(k)) for k in range(50)]
    alive = [weakref.ref(s) for s in scales]
    with tracer.capture(modules=__name__):
        for k, s in enumerate(scales):
            assert scaled_by(s)(2.0) == 2.0 * k
    del scales, s
    gc.collect()
    assert [a() for a in alive] == [None] * 50


LOOP_SCRIPT = textwrap.dedent("""
    import resource
    import numpy as np
    from tracer import trace

    def f(x, n):
        s = 0.0
        for i in range(n):
            s += np.sum(x * i)          # a new 800 KB array in each iteration
        return s

    g, x = trace(f), np.ones(100_000)
    assert g(x, 3) == f(x, 3)
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert g(x, 400) == f(x, 400)
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
""")


def test_arrays_made_in_a_loop_die_with_their_iteration():
    """400 iterations that each make an 800 KB array peak at the memory of a few, not 320 MB."""
    run = subprocess.run([sys.executable, "-c", LOOP_SCRIPT], capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    growth = int(run.stdout.split()[-1])
    assert growth < 40 * 2 ** 20, f"peak resident memory grew by {growth / 2 ** 20:.1f} MB"
