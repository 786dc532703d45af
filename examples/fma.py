"""The main job: trace `fma`, show its IR (with the fused multiply-add), run it, time it.

    python examples/fma.py
"""
import time
import timeit

from tracer import trace


def fma(x, y, z):
    return x * y + z


def main():
    traced = trace(fma)
    start = time.perf_counter()
    result = traced(3.0, -1.0, 2.0)          # first call: capture, trace, optimize, compile, run
    first_call_ms = (time.perf_counter() - start) * 1e3
    print(traced.dump(3.0, -1.0, 2.0, stage="opt"))
    print()
    print(f"fma(3.0, -1.0, 2.0) = {result}   (Python: {fma(3.0, -1.0, 2.0)})")
    print(f"first call (capture + compile + run): {first_call_ms:.1f} ms")

    number = 1_000_000
    # timing through a lambda adds the same constant to both; time the bare calls the same way
    python_ns = min(timeit.repeat("f(3.0, -1.0, 2.0)", globals={"f": fma}, number=number, repeat=5)) / number * 1e9
    traced_ns = min(timeit.repeat("f(3.0, -1.0, 2.0)", globals={"f": traced}, number=number, repeat=5)) / number * 1e9
    print(f"per call: plain Python {python_ns:.1f} ns, traced {traced_ns:.1f} ns "
          f"-> traced costs {traced_ns / python_ns:.2f}x the Python call")


if __name__ == "__main__":
    main()
