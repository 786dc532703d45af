"""A whole training step compiled into one native function: the forward pass, the gradient of a
softmax cross-entropy loss from `grad` (traced through, as `jax.grad` inside `jax.jit`), and the
in-place SGD update of the weights. Trains a small MLP on random data labelled by a random linear teacher;
the loss goes down.

    python examples/train_step.py
"""
import time

import numpy as np

from tracer import grad, trace


def loss(W1, b1, W2, b2, x, y):
    h = np.maximum(x @ W1 + b1, 0.0)
    o = h @ W2 + b2
    m = o.max()
    return m + np.log(np.sum(np.exp(o - m))) - o[y]


@trace
def step(W1, b1, W2, b2, x, y, lr):
    gW1, gb1, gW2, gb2 = grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, x, y)
    W1 -= lr * gW1
    b1 -= lr * gb1
    W2 -= lr * gW2
    b2 -= lr * gb2


def main():
    rng = np.random.default_rng(0)
    n_in, n_hidden, n_out, n_samples = 64, 32, 10, 200
    X = rng.random((n_samples, n_in)) - 0.5
    Y = np.argmax(X @ rng.normal(size=(n_in, n_out)), axis=1)       # labels a linear teacher gives
    W1, b1 = rng.normal(0.0, 0.1, (n_in, n_hidden)), np.zeros(n_hidden)
    W2, b2 = rng.normal(0.0, 0.1, (n_hidden, n_out)), np.zeros(n_out)

    def mean_loss():
        return np.mean([loss(W1, b1, W2, b2, X[i], int(Y[i])) for i in range(n_samples)])

    print(f"epoch 0: mean loss {mean_loss():.4f}")
    t0 = time.perf_counter()
    step(W1, b1, W2, b2, X[0], int(Y[0]), 0.05)                     # compiles
    print(f"compiled the train step in {time.perf_counter() - t0:.2f} s")
    losses = []
    for epoch in range(1, 6):
        t0 = time.perf_counter()
        for i in range(n_samples):
            step(W1, b1, W2, b2, X[i], int(Y[i]), 0.05)
        rate = n_samples / (time.perf_counter() - t0)
        losses.append(mean_loss())
        print(f"epoch {epoch}: mean loss {losses[-1]:.4f}  ({rate:,.0f} steps/s)")
    assert losses[-1] < losses[0], "the loss should go down"


if __name__ == "__main__":
    main()
