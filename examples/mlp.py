"""A micrograd-style MLP (2 -> 32 -> 32 -> 1) over plain float lists, its forward pass compiled.

The model is ordinary Python objects; `@trace` reads their weights on every call (they are
inputs, not frozen constants), so training the model in Python keeps the compiled forward right.
Its loops stay loops: the neurons' weights are gathered into arrays per call (tracer/frontend/gathered.py),
so the IR has a loop per layer instead of one multiply-add per weight.

    python examples/mlp.py
"""
import random
import time

from tracer import trace


class Neuron:
    def __init__(self, n_in, rng, nonlin=True):
        self.w = [rng.uniform(-1.0, 1.0) for _ in range(n_in)]
        self.b = 0.0
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum(wi * xi for wi, xi in zip(self.w, x)) + self.b
        return max(0.0, act) if self.nonlin else act


class Layer:
    def __init__(self, n_in, n_out, rng, **kwargs):
        self.neurons = [Neuron(n_in, rng, **kwargs) for _ in range(n_out)]

    def __call__(self, x):
        return [n(x) for n in self.neurons]


class MLP:
    def __init__(self, n_in, sizes, rng):
        dims = [n_in] + sizes
        self.layers = [Layer(dims[i], dims[i + 1], rng, nonlin=i != len(sizes) - 1) for i in range(len(sizes))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x[0]


def forward(model, x0, x1):
    return model([x0, x1])


def ir_size(compiled) -> str:
    fn = compiled.specializations[0].optimized
    return f"{sum(1 for _ in fn.walk())} IR values, {len(fn.params)} inputs"


def main():
    rng = random.Random(0)
    model = MLP(2, [32, 32, 1], rng)
    compiled = trace(forward)
    points = [(rng.uniform(-2, 2), rng.uniform(-2, 2)) for _ in range(1000)]

    start = time.perf_counter()
    compiled(model, *points[0])
    print(f"compiled in {(time.perf_counter() - start) * 1e3:.0f} ms: {ir_size(compiled)} "
          f"(loops over the neurons and their weights)")
    small = MLP(2, [8, 8, 1], rng)            # lists of <= 8 items unroll: one input per weight
    unrolled = trace(forward)
    unrolled(small, *points[0])
    print(f"a 2 -> 8 -> 8 -> 1 model unrolls instead: {ir_size(unrolled)}")

    # FMA fusion rounds once where Python rounds twice: equal within a few ulps
    worst = max(abs(compiled(model, a, b) - forward(model, a, b)) for a, b in points)
    print(f"max |compiled - Python| over {len(points)} points, FMA fusion on: {worst:.3g}")
    exact = trace(forward, fuse_fma=False)
    same = sum(exact(model, a, b) == forward(model, a, b) for a, b in points)
    print(f"FMA fusion off: bit-for-bit equal to Python on {same}/{len(points)} points")
    assert worst < 1e-9 and same == len(points)

    model.layers[0].neurons[0].w[0] += 0.5        # weights are read on every call, never frozen
    print("after changing a weight, still equal:", exact(model, 0.3, -0.7) == forward(model, 0.3, -0.7))

    for name, f in [("Python", forward), ("compiled", compiled)]:
        start = time.perf_counter()
        for a, b in points:
            f(model, a, b)
        print(f"{name:>9}: {(time.perf_counter() - start) / len(points) * 1e6:.1f} us per forward pass")


if __name__ == "__main__":
    main()
