"""Seed 004's workload, one sample at a time: `d(a, b, c)` and its three partial derivatives,
called per sample from Python on Python floats (the unbatched companion of B2 in
shared/BENCHMARKS.md).

    d(a, b, c) = -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a

Every method takes three Python floats and returns `(value, (dd/da, dd/db, dd/dc))` as Python
floats, one call per sample:

  - tracer `value_and_grad(d, argnums=(0, 1, 2))`: the gradient comes from the tracer's autodiff;
  - plain Python: a forward plus hand-derived closed-form partials (what an engineer would write);
  - seed 004's way: four LLVM kernels (forward, d/da, d/db, d/dc; the closed-form partials
    emitted as LLVM IR by this file) JIT-compiled with llvmlite, four ctypes calls per sample;
  - JAX `jit(value_and_grad)` with x64 enabled (results fetched back as Python floats);
  - PyTorch eager: three scalar tensors with requires_grad, forward, backward, `.item()`.

Runs every peer in one process and prints ratios (the figure that matters on a noisy machine).
Results are checked against the plain-Python closed form before anything is timed. Peers that
are not installed are skipped with a line saying so.

    python examples/bench/grad_scalar.py [--n 20000] [--repeat 5]
"""
import argparse
import ctypes
import math
import os
import platform
import random
import sys
import time

import one_thread  # noqa: F401  (one thread for every peer; the compile cache off)

N = 20_000
REPEAT = 5
CHECK = 8           # samples compared against the plain-Python closed form before timing
REL = 1e-9


def d(a, b, c):
    return -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a


# ---------------------------------------------------------------- the closed form, by hand
# With p = a + b, q = c - a/b, r = b*c - a, s = a + c:
#   d     = -a*b + q*p*c - r/s + b*b*c/a
#   dd/da = -b - p*c/b + q*c + c*(1 + b)/s**2 - b*b*c/a**2
#   dd/db = -a + a*p*c/b**2 + q*c - c/s + 2*b*c/a
#   dd/dc = p*(2*c - a/b) - a*(1 + b)/s**2 + b*b/a
# Each formula is written once, generically, so that the plain-Python reference and seed 004's
# LLVM kernels (which evaluate them on IR values, below) compute the same expressions.

def forward(a, b, c):
    return -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a


def partial_a(a, b, c):
    return -b - (a + b)*c/b + (c - a/b)*c + c*(1.0 + b)/((a + c)*(a + c)) - b*b*c/(a*a)


def partial_b(a, b, c):
    return -a + a*(a + b)*c/(b*b) + (c - a/b)*c - c/(a + c) + 2.0*b*c/a


def partial_c(a, b, c):
    return (a + b)*(2.0*c - a/b) - a*(1.0 + b)/((a + c)*(a + c)) + b*b/a


def value_and_grad_python(a, b, c):
    """The plain-Python reference: one function, common subexpressions shared by hand."""
    p = a + b
    q = c - a / b
    s = a + c
    ss = s * s
    bb = b * b
    qc = q * c
    value = -a * b + q * p * c - (b * c - a) / s + bb * c / a
    da = -b - p * c / b + qc + c * (1.0 + b) / ss - bb * c / (a * a)
    db = -a + a * p * c / bb + qc - c / s + 2.0 * b * c / a
    dc = p * (2.0 * c - a / b) - a * (1.0 + b) / ss + bb / a
    return value, (da, db, dc)


# ---------------------------------------------------------------- seed 004's way
class _IRValue:
    """A double in an LLVM function being built: arithmetic on it emits instructions."""

    def __init__(self, builder, value):
        self.builder, self.value = builder, value

    def _lift(self, x):
        if isinstance(x, _IRValue):
            return x.value
        from llvmlite import ir
        return ir.Constant(ir.DoubleType(), float(x))

    def _op(self, name, lhs, rhs):
        return _IRValue(self.builder, getattr(self.builder, name)(self._lift(lhs), self._lift(rhs)))

    def __add__(self, o): return self._op("fadd", self, o)
    def __radd__(self, o): return self._op("fadd", o, self)
    def __sub__(self, o): return self._op("fsub", self, o)
    def __rsub__(self, o): return self._op("fsub", o, self)
    def __mul__(self, o): return self._op("fmul", self, o)
    def __rmul__(self, o): return self._op("fmul", o, self)
    def __truediv__(self, o): return self._op("fdiv", self, o)
    def __rtruediv__(self, o): return self._op("fdiv", o, self)
    def __neg__(self): return _IRValue(self.builder, self.builder.fneg(self.value))


def llvmlite_ctypes_kernels():
    """Seed 004's way: a forward kernel `d(a, b, c)` and three gradient kernels
    `d_x(a, b, c, d_grad)` (the seed's signature: the upstream gradient is an argument), built as
    LLVM IR with llvmlite, optimized at O3, JIT-compiled by MCJIT and wrapped with ctypes.
    Returns the per-sample callable (four ctypes calls) and the build time in ms."""
    import llvmlite.binding as llvm
    from llvmlite import ir
    t0 = time.perf_counter()
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    double = ir.DoubleType()
    module = ir.Module(name="seed004_d")
    for name, formula, with_grad in (("d", forward, False), ("d_a", partial_a, True),
                                     ("d_b", partial_b, True), ("d_c", partial_c, True)):
        fn = ir.Function(module, ir.FunctionType(double, [double] * (4 if with_grad else 3)), name=name)
        builder = ir.IRBuilder(fn.append_basic_block("entry"))
        a, b, c = (_IRValue(builder, arg) for arg in fn.args[:3])
        result = formula(a, b, c)
        if with_grad:
            result = result * _IRValue(builder, fn.args[3])
        builder.ret(result.value)

    target_machine = llvm.Target.from_default_triple().create_target_machine(
        cpu=llvm.get_host_cpu_name(), features=llvm.get_host_cpu_features().flatten(), opt=3)
    parsed = llvm.parse_assembly(str(module))
    parsed.verify()
    pass_builder = llvm.create_pass_builder(target_machine, llvm.create_pipeline_tuning_options(speed_level=3))
    pass_builder.getModulePassManager().run(parsed, pass_builder)
    engine = llvm.create_mcjit_compiler(parsed, target_machine)
    engine.finalize_object()

    fwd_type = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double)
    grad_type = ctypes.CFUNCTYPE(ctypes.c_double, *[ctypes.c_double] * 4)
    f_d = fwd_type(engine.get_function_address("d"))
    f_a, f_b, f_c = (grad_type(engine.get_function_address(n)) for n in ("d_a", "d_b", "d_c"))

    def value_and_grad_llvmlite(a, b, c):
        return f_d(a, b, c), (f_a(a, b, c, 1.0), f_b(a, b, c, 1.0), f_c(a, b, c, 1.0))
    value_and_grad_llvmlite.keep_alive = (engine, f_d, f_a, f_b, f_c)
    return value_and_grad_llvmlite, (time.perf_counter() - t0) * 1e3


# ---------------------------------------------------------------- JAX and PyTorch
def jax_value_and_grad():
    import jax
    import numpy as np
    jax.config.update("jax_enable_x64", True)
    jf = jax.jit(jax.value_and_grad(d, argnums=(0, 1, 2)))
    get = np.asarray    # the cheapest way back to Python floats measured (float(x), x.item() and
                        # jax.device_get each cost more per result)

    def value_and_grad_jax(a, b, c):
        value, (da, db, dc) = jf(a, b, c)
        return float(get(value)), (float(get(da)), float(get(db)), float(get(dc)))
    return value_and_grad_jax, jax.__version__


def torch_value_and_grad():
    import torch
    torch.set_num_threads(1)
    tensor, f64 = torch.tensor, torch.float64

    def value_and_grad_torch(a, b, c):
        ta = tensor(a, dtype=f64, requires_grad=True)
        tb = tensor(b, dtype=f64, requires_grad=True)
        tc = tensor(c, dtype=f64, requires_grad=True)
        out = d(ta, tb, tc)
        out.backward()
        return out.item(), (ta.grad.item(), tb.grad.item(), tc.grad.item())
    return value_and_grad_torch, torch.__version__


# ---------------------------------------------------------------- running
def make_samples(n: int, seed: int = 4) -> list:
    """n random (a, b, c) floats with |a|, |b| in [0.5, 2] and |a + c| >= 0.5 (no pole nearby)."""
    rng = random.Random(seed)
    samples = []
    while len(samples) < n:
        a = rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 2.0)
        b = rng.choice((-1.0, 1.0)) * rng.uniform(0.5, 2.0)
        c = rng.uniform(-2.0, 2.0)
        if abs(a + c) >= 0.5:
            samples.append((a, b, c))
    return samples


def check(name: str, f, samples) -> None:
    for a, b, c in samples:
        want_value, want_grad = value_and_grad_python(a, b, c)
        value, grad = f(a, b, c)
        got, want = (value, *grad), (want_value, *want_grad)
        assert len(grad) == 3 and all(type(x) is float for x in got), f"{name}: returned {value!r}, {grad!r}"
        for what, x, y in zip(("value", "d/da", "d/db", "d/dc"), got, want):
            assert math.isclose(x, y, rel_tol=REL, abs_tol=1e-12), \
                f"{name}: {what} at ({a!r}, {b!r}, {c!r}) is {x!r}, the closed form gives {y!r}"


def loop(f, samples) -> None:
    for a, b, c in samples:
        f(a, b, c)


def best_us_per_sample(peers, samples, repeat: int) -> dict:
    """{name: µs per sample}, the best of `repeat` whole loops; the methods take turns, so a slow
    spell on the machine hits them alike."""
    best = {name: math.inf for name, _ in peers}
    for _ in range(repeat):
        for name, f in peers:
            t = time.perf_counter()
            loop(f, samples)
            best[name] = min(best[name], time.perf_counter() - t)
    return {name: t / len(samples) * 1e6 for name, t in best.items()}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=N, help=f"samples per loop (default {N:,})")
    parser.add_argument("--repeat", type=int, default=REPEAT, help=f"loops per method, best kept (default {REPEAT})")
    args = parser.parse_args()
    samples = make_samples(args.n)
    first = samples[:CHECK]

    import llvmlite

    from tracer import value_and_grad
    vg = value_and_grad(d, argnums=(0, 1, 2))
    t = time.perf_counter()
    vg(*samples[0])
    first_call_ms = (time.perf_counter() - t) * 1e3
    versions = [f"llvmlite {llvmlite.__version__}"]

    peers = [("tracer value_and_grad", vg), ("plain Python, closed form", value_and_grad_python)]
    seed004, build_ms = llvmlite_ctypes_kernels()
    peers.append(("llvmlite + 4 ctypes calls (seed 004)", seed004))
    optional = [("JAX", "jax", "jit(value_and_grad)", jax_value_and_grad),
                ("PyTorch", "torch", "eager backward", torch_value_and_grad)]
    for peer, package, how, build in optional:
        try:
            f, version = build()
        except ImportError:
            print(f"{peer}: not installed, skipped")
            continue
        peers.append((f"{peer} {version} {how}", f))
        versions.append(f"{package} {version}")

    for name, f in peers:
        check(name, f, first)
    spec = vg.specializations
    path = "native entry" if spec and all(s.fast for s in spec) else "NOT the native entry"

    print(f"Seed 004's d + 3 partials, one call per sample on Python floats: {args.n:,} samples, best of "
          f"{args.repeat} loops; Python {sys.version.split()[0]} on {platform.machine()} "
          f"({os.cpu_count()} CPUs), "
          f"{', '.join(versions)}")
    print(f"  (all methods agree with the closed form to rel {REL:g} on the first {len(first)} samples; "
          f"tracer: {len(spec)} specialization(s), {path})")
    times = best_us_per_sample(peers, samples, args.repeat)
    tracer_us, python_us = times["tracer value_and_grad"], times["plain Python, closed form"]
    for name, us in times.items():
        print(f"  {name:<38} {us:9.3f} µs/sample   {us / tracer_us:8.2f}x tracer   "
              f"{us / python_us:7.2f}x plain Python")
    print(f"  first call of value_and_grad(d) (trace + differentiate + compile + run, this process): "
          f"{first_call_ms:.1f} ms; seed 004's 4 kernels built in {build_ms:.1f} ms")


if __name__ == "__main__":
    main()
