"""Benchmark B3 (shared/BENCHMARKS.md): training an MLP 784 -> 50 (ReLU) -> 10, softmax
cross-entropy, plain SGD (lr 0.01), float64, on MNIST-shaped random data (784 values in [0, 1),
labels 0-9), at batch size 1 (the bar) and 32, 128. Images per second over a few thousand images.

Methods, each in the same process, each checked against the NumPy step first:
  - tracer: the whole train step compiled with `@trace`, the gradient from `grad` of the plain
    loss function (traced through), the SGD update in place;
  - NumPy with a hand-written backward;
  - PyTorch eager (autograd, in-place SGD under no_grad);
  - JAX `jit` of the train step (grad of the same loss; new parameters returned).
Peers that are not installed are skipped with a line saying so. Ratios: peer time / tracer time
(> 1: the tracer is faster). Then how the tracer's compile time and step time grow with the
hidden width (50, 200, 1000), at batch size 1.

    python examples/bench/mlp_train.py [--images 4000] [--repeat 5] [--batches 1 32 128]
"""
import argparse
import platform
import time

import numpy as np
import one_thread  # noqa: F401  (before NumPy: every peer on one thread)

from tracer import grad, trace

LR = 0.01


def loss(W1, b1, W2, b2, X, T):
    """Mean softmax cross-entropy of a batch X (rows) against one-hot targets T."""
    H = np.maximum(X @ W1 + b1, 0.0)
    O = H @ W2 + b2
    M = O.max(axis=1, keepdims=True)
    lse = M[:, 0] + np.log(np.sum(np.exp(O - M), axis=1))
    return np.mean(lse - np.sum(O * T, axis=1))


@trace
def train_step(W1, b1, W2, b2, X, T, lr):
    gW1, gb1, gW2, gb2 = grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, X, T)
    W1 -= lr * gW1
    b1 -= lr * gb1
    W2 -= lr * gW2
    b2 -= lr * gb2


def numpy_step(W1, b1, W2, b2, X, T, lr):
    """The same step with the backward written by hand."""
    A = X @ W1 + b1
    H = np.maximum(A, 0.0)
    O = H @ W2 + b2
    E = np.exp(O - O.max(axis=1, keepdims=True))
    dO = (E / E.sum(axis=1, keepdims=True) - T) / len(X)
    dA = (dO @ W2.T) * (A > 0.0)
    W1 -= lr * (X.T @ dA)
    b1 -= lr * dA.sum(axis=0)
    W2 -= lr * (H.T @ dO)
    b2 -= lr * dO.sum(axis=0)


def make_data(n_images, hidden=50, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.random((n_images, 784))
    T = np.eye(10)[rng.integers(0, 10, n_images)]
    params = [rng.normal(0.0, 0.05, (784, hidden)), np.zeros(hidden), rng.normal(0.0, 0.05, (hidden, 10)), np.zeros(10)]
    return X, T, params


def epoch_runner(step, params, X, T, batch):
    """A function running `step` over all of X in batches (params updated in place)."""
    batches = [(X[i:i + batch], T[i:i + batch]) for i in range(0, len(X) - batch + 1, batch)]

    def run():
        for xb, tb in batches:
            step(*params, xb, tb, LR)
    return run


def best_rates(runners, n_images, repeat):
    """(name, images/s) of each runner, best of `repeat` rounds. The rounds interleave the
    methods (each runs once per round), so a slow spell of the machine hits all of them alike."""
    times = {name: [] for name, _ in runners}
    for _ in range(repeat):
        for name, run in runners:
            t0 = time.perf_counter()
            run()
            times[name].append(time.perf_counter() - t0)
    return [(name, n_images / min(times[name])) for name, _ in runners]


def torch_runner(params, X, T, batch):
    import torch
    torch.set_num_threads(1)
    tp = [torch.tensor(p, requires_grad=True) for p in params]
    tX, tT = torch.tensor(X), torch.tensor(T)
    batches = [(tX[i:i + batch], tT[i:i + batch]) for i in range(0, len(X) - batch + 1, batch)]

    def step(xb, tb):
        W1, b1, W2, b2 = tp
        O = torch.relu(xb @ W1 + b1) @ W2 + b2
        loss_value = torch.mean(torch.logsumexp(O, dim=1) - torch.sum(O * tb, dim=1))
        for p in tp:
            p.grad = None
        loss_value.backward()
        with torch.no_grad():
            for p in tp:
                p -= LR * p.grad

    def run():
        for xb, tb in batches:
            step(xb, tb)
    return run, lambda: [p.detach().numpy() for p in tp], lambda xb, tb: step(torch.as_tensor(xb), torch.as_tensor(tb))


def jax_runner(params, X, T, batch):
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_enable_x64", True)

    def jloss(W1, b1, W2, b2, xb, tb):
        O = jnp.maximum(xb @ W1 + b1, 0.0) @ W2 + b2
        return jnp.mean(jax.nn.logsumexp(O, axis=1) - jnp.sum(O * tb, axis=1))

    @jax.jit
    def step(p, xb, tb):
        g = jax.grad(jloss, argnums=(0, 1, 2, 3))(*p, xb, tb)
        return tuple(w - LR * gw for w, gw in zip(p, g))
    state = [tuple(jnp.asarray(p) for p in params)]
    batches = [(jnp.asarray(X[i:i + batch]), jnp.asarray(T[i:i + batch])) for i in range(0, len(X) - batch + 1, batch)]

    def run():
        p = state[0]
        for xb, tb in batches:
            p = step(p, xb, tb)
        jax.block_until_ready(p)
        state[0] = p
    return run, lambda: [np.asarray(p) for p in state[0]], lambda xb, tb: state.__setitem__(
        0, step(state[0], jnp.asarray(xb), jnp.asarray(tb)))


def check(name, one_step, get_params, params0, X, T, batch):
    """One step of the peer from params0 on the first batch equals NumPy's (to 1e-12)."""
    expected = [p.copy() for p in params0]
    numpy_step(*expected, X[:batch], T[:batch], LR)
    one_step(X[:batch], T[:batch])
    for got, want in zip(get_params(), expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12, err_msg=name)


def compare(batch, n_images, repeat):
    X, T, params0 = make_data(n_images)
    # the tracer (compiles on its first call: timed)
    params = [p.copy() for p in params0]
    t0 = time.perf_counter()
    train_step(*params, X[:batch], T[:batch], LR)
    compile_s = time.perf_counter() - t0
    expected = [p.copy() for p in params0]
    numpy_step(*expected, X[:batch], T[:batch], LR)
    for got, want in zip(params, expected):
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
    runners = [("tracer @trace step (grad of the loss)", epoch_runner(train_step, params, X, T, batch)),
               ("NumPy, hand-written backward", epoch_runner(numpy_step, [p.copy() for p in params0], X, T, batch))]
    for name, make in (("PyTorch eager", torch_runner), ("JAX jit train step", jax_runner)):
        try:
            run, get_params, one_step = make([p.copy() for p in params0], X, T, batch)
        except ImportError:
            print(f"  ({name}: not installed, skipped)")
            continue
        check(name, one_step, get_params, params0, X, T, batch)
        run()                                   # warm (JAX compiles here)
        runners.append((name, run))
    rows = best_rates(runners, n_images, repeat)
    ours = rows[0][1]
    compiled = f"compile {compile_s:.2f} s" if compile_s > 0.05 else "no new compile: batch sizes share one"
    print(f"\nbatch size {batch}: images/s (tracer {compiled})")
    for name, rate in rows:
        ratio = "" if name.startswith("tracer") else f"   tracer {ours / rate:5.1f}x faster"
        print(f"  {name:<40} {rate:>12,.0f}{ratio}")


def growth(repeat):
    print("\ncost growth (tracer, batch size 1): hidden width -> compile time, step time")
    for hidden in (50, 200, 1000):
        X, T, params = make_data(2000, hidden)
        step = trace(train_step.py_func)
        t0 = time.perf_counter()
        step(*params, X[:1], T[:1], LR)
        compile_s = time.perf_counter() - t0
        [(_, rate)] = best_rates([("tracer", epoch_runner(step, params, X, T, 1))], len(X), repeat)
        print(f"  hidden {hidden:>5}: compile {compile_s:5.2f} s, {1e6 / rate:8.1f} us per step, {rate:>10,.0f} images/s")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--images", type=int, default=4000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--batches", type=int, nargs="*", default=[1, 32, 128])
    parser.add_argument("--no-growth", action="store_true")
    options = parser.parse_args()
    print(f"B3: MLP 784-50-10 training, float64, SGD; {options.images} images, best of {options.repeat}; "
          f"{platform.processor() or platform.machine()}, Python {platform.python_version()}")
    for batch in options.batches:
        compare(batch, options.images, options.repeat)
    if not options.no_growth:
        growth(options.repeat)


if __name__ == "__main__":
    main()
