"""Benchmark B1 (shared/BENCHMARKS.md): per-call cost of `fma(x, y, z) = x * y + z` on floats.

Runs every peer in one process and prints ratios against plain Python (the figure that matters on
a noisy machine). Peers that are not installed are skipped with a line saying so.

    python examples/bench/call_overhead.py
"""
import ctypes
import os
import subprocess
import sys
import timeit

NUMBER = 500_000
REPEAT = 7


def fma(x, y, z):
    return x * y + z


def per_call_ns(f) -> float:
    t = min(timeit.repeat("f(3.0, -1.0, 2.0)", globals={"f": f}, number=NUMBER, repeat=REPEAT))
    return t / NUMBER * 1e9


def llvmlite_ctypes_fma():
    """Seed 004's way: an LLVM function called through ctypes."""
    import llvmlite.binding as llvm
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    module = llvm.parse_assembly("""
        define double @fma_c(double %x, double %y, double %z) {
          %p = fmul double %x, %y
          %s = fadd double %p, %z
          ret double %s
        }""")
    tm = llvm.Target.from_default_triple().create_target_machine(opt=3)
    engine = llvm.create_mcjit_compiler(module, tm)
    engine.finalize_object()
    address = engine.get_function_address("fma_c")
    f = ctypes.CFUNCTYPE(ctypes.c_double, ctypes.c_double, ctypes.c_double, ctypes.c_double)(address)
    f.keep_alive = engine
    return f


FIRST_CALL = """
import time, tracer
def fma(x, y, z):
    return x * y + z
f = tracer.trace(fma)
t = time.perf_counter(); f(3.0, -1.0, 2.0); print((time.perf_counter() - t) * 1e3)
"""


def main():
    from tracer import trace
    traced = trace(fma)
    assert traced(3.0, -1.0, 2.0) == fma(3.0, -1.0, 2.0)

    peers = [("plain Python", fma), ("tracer @trace", traced)]
    try:
        import numba
        nb = numba.njit(fma)
        nb(3.0, -1.0, 2.0)
        peers.append((f"numba {numba.__version__} @njit", nb))
    except ImportError:
        print("numba: not installed, skipped")
    peers.append(("llvmlite + ctypes (seed 004)", llvmlite_ctypes_fma()))
    try:
        import jax
        jf = jax.jit(fma)
        jf(3.0, -1.0, 2.0)
        peers.append((f"JAX {jax.__version__} jit", jf))
    except ImportError:
        print("JAX: not installed, skipped")

    print(f"B1 call overhead, Python {sys.version.split()[0]}, best of {REPEAT} x {NUMBER:,} calls")
    base = None
    for name, f in peers:
        ns = per_call_ns(f)
        base = base or ns
        print(f"  {name:<32} {ns:8.1f} ns/call   {ns / base:6.2f}x plain Python")
    # a fresh process with the compile cache off (what a first run compiles); start-up with the
    # cache, warm and cold, is examples/bench/startup.py's
    cold = {**os.environ, "TRACER_CACHE": "0"}
    firsts = [float(subprocess.run([sys.executable, "-c", FIRST_CALL], capture_output=True, text=True, env=cold,
                                   check=True).stdout) for _ in range(3)]
    print(f"  first call of a traced fma (capture + compile + run, fresh process, no compile cache): "
          f"{min(firsts):.1f} ms")


if __name__ == "__main__":
    main()
