"""A plain-Python MLP (2 -> 16 -> 16 -> 1, as in micrograd's demo; weights in lists of lists of floats) trained with a
compiled step: the forward pass, `grad` of a hinge loss with respect to the lists, and the SGD
update written into the lists, all in one native function. Loops stay loops, gradients come
from the tracer's autodiff, and after each call the caller's lists hold the new weights.

    python examples/train_lists.py
"""
import math
import random
import time

from tracer import grad, trace


def layer(W, b, x):
    return [sum(w * xi for w, xi in zip(row, x)) + bi for row, bi in zip(W, b)]


def relu(v):
    return [max(0.0, a) for a in v]


def score(W1, b1, W2, b2, W3, b3, x):
    return layer(W3, b3, relu(layer(W2, b2, relu(layer(W1, b1, x)))))[0]


def loss(W1, b1, W2, b2, W3, b3, x, y):
    """Hinge loss of one point with label y = -1.0 or +1.0 (micrograd's moons demo)."""
    return max(0.0, 1.0 - y * score(W1, b1, W2, b2, W3, b3, x))


def sgd(rows, grads, lr):
    for row, g in zip(rows, grads):
        for j in range(len(row)):
            row[j] -= lr * g[j]


@trace
def step(W1, b1, W2, b2, W3, b3, x, y, lr):
    gW1, gb1, gW2, gb2, gW3, gb3 = grad(loss, argnums=(0, 1, 2, 3, 4, 5))(W1, b1, W2, b2, W3, b3, x, y)
    sgd(W1, gW1, lr)
    sgd(W2, gW2, lr)
    sgd(W3, gW3, lr)
    sgd([b1, b2, b3], [gb1, gb2, gb3], lr)


def init(sizes, rng):
    """[W1, b1, W2, b2, ...]: W has one row of weights per output."""
    params = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        params.append([[rng.gauss(0.0, 1.0 / math.sqrt(n_in)) for _ in range(n_in)] for _ in range(n_out)])
        params.append([0.0 for _ in range(n_out)])
    return params


def moons(n, rng, noise=0.1):
    """Two interleaved half circles, labels -1.0 and +1.0."""
    points = []
    for i in range(n):
        t = rng.uniform(0.0, math.pi)
        x, y, label = (math.cos(t), math.sin(t), -1.0) if i % 2 else (1.0 - math.cos(t), 0.5 - math.sin(t), 1.0)
        points.append(([x + rng.gauss(0.0, noise), y + rng.gauss(0.0, noise)], label))
    return points


def accuracy(params, points):
    return sum((score(*params, x) > 0.0) == (y > 0.0) for x, y in points) / len(points)


def main(epochs=30):
    rng = random.Random(0)
    params = init([2, 16, 16, 1], rng)
    train, test = moons(300, rng), moons(200, rng)
    start = time.perf_counter()
    step(*params, *train[0], 0.0)                     # lr 0: compiles, changes nothing
    print(f"compiled the train step in {time.perf_counter() - start:.2f} s; "
          f"test accuracy before training: {accuracy(params, test):.1%}")
    steps, elapsed = 0, 0.0
    for epoch in range(1, epochs + 1):
        lr = 0.05 * (1.0 - 0.9 * epoch / epochs)
        rng.shuffle(train)
        start = time.perf_counter()
        for x, y in train:
            step(*params, x, y, lr)
        elapsed += time.perf_counter() - start
        steps += len(train)
        if epoch % 5 == 0:
            mean = sum(loss(*params, x, y) for x, y in train) / len(train)
            print(f"epoch {epoch:2d}: mean hinge loss {mean:.4f}, test accuracy {accuracy(params, test):.1%}")
    print(f"{steps / elapsed:,.0f} steps/s ({elapsed / steps * 1e6:.1f} us per step, one point each)")
    final = accuracy(params, test)
    assert final >= 0.95, f"test accuracy {final:.1%}"
    assert len(step.specializations) == 1


if __name__ == "__main__":
    main()
