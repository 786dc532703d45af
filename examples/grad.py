"""Compiled gradients of plain Python: `grad`, `value_and_grad`, `vjp`, and a whole
gradient-descent step compiled as one native function.

    python examples/grad.py
"""
import math
import time

from tracer import grad, trace, value_and_grad, vjp


def d(a, b, c):
    """The benchmark expression of docs/performance.md (B2), written for floats."""
    return -a*b + (c - a/b)*(a + b)*c - (b*c - a)/(a + c) + b*b*c/a


def rosenbrock(x, y):
    return (1.0 - x) ** 2 + 100.0 * (y - x * x) ** 2


@trace
def descend(x, y, lr):
    """One gradient step: grad() inside a traced function is differentiated while tracing, so
    the forward, the backward and the update are one native function."""
    gx, gy = grad(rosenbrock, argnums=(0, 1))(x, y)
    return x - lr * gx, y - lr * gy


def main():
    d_and_grads = value_and_grad(d, argnums=(0, 1, 2))
    value, (da, db, dc) = d_and_grads(1.5, 2.0, 3.0)
    print(f"d(1.5, 2.0, 3.0) = {value!r}")
    print(f"  dd/da = {da!r}, dd/db = {db!r}, dd/dc = {dc!r}")

    print("\nthe joint value-and-gradient IR after the passes (python -m tracer dump examples/grad.py:d "
          "--grad --argnums 0,1,2):")
    print(d_and_grads.dump(1.5, 2.0, 3.0, stage="opt"))

    d2 = grad(grad(math.sin))
    print(f"\nsecond derivative of sin at 1.0: {d2(1.0)!r} (-sin(1.0) = {-math.sin(1.0)!r})")

    value, pullback = vjp(lambda r, t: (r * math.cos(t), r * math.sin(t)), 2.0, 0.5)
    print(f"vjp of polar -> cartesian at (2.0, 0.5): value {value}, pullback((1.0, 0.0)) = {pullback((1.0, 0.0))}")

    x, y = -1.2, 1.0
    start = time.perf_counter()
    descend(x, y, 1e-3)                        # compiles
    compile_s = time.perf_counter() - start
    start = time.perf_counter()
    steps = 200_000
    for _ in range(steps):
        x, y = descend(x, y, 1e-3)
    elapsed = time.perf_counter() - start
    print(f"\ngradient descent on Rosenbrock from (-1.2, 1.0): ({x:.6f}, {y:.6f}) after {steps:,} steps, "
          f"{elapsed / steps * 1e9:.0f} ns per step (compile {compile_s * 1e3:.0f} ms)")


if __name__ == "__main__":
    main()
