"""Train an MLP (64 -> 64 ReLU -> 10) on scikit-learn's handwritten digits (8x8 images bundled
with the package: nothing is downloaded), one image per step, the whole step compiled: forward,
the gradient of a softmax cross-entropy from `grad` of the plain loss, the SGD update in place.

    python -m pip install -e ".[examples]" && python examples/train_digits.py

Prints, per epoch, the mean loss, the accuracy on the held-out test images and the images per
second, and stops with >= 95% test accuracy (checked at the end).
"""
import sys
import time

import numpy as np
from train_step import loss  # the loss and compiled step of examples/train_step.py
from train_step import step as train_step

from tracer import trace


@trace
def predict(W1, b1, W2, b2, X):
    """The predicted class of each row of X."""
    return np.argmax(np.maximum(X @ W1 + b1, 0.0) @ W2 + b2, axis=1)


@trace
def mean_loss(W1, b1, W2, b2, X, Y):
    total = 0.0
    for i in range(X.shape[0]):
        total += loss(W1, b1, W2, b2, X[i], Y[i])
    return total / X.shape[0]


def main(epochs: int = 12, lr: float = 0.05, hidden: int = 64, seed: int = 0):
    try:
        from sklearn.datasets import load_digits
    except ImportError:
        sys.exit("needs scikit-learn: python -m pip install -e \".[examples]\"")
    digits = load_digits()
    X = digits.data / 16.0                                      # pixel values 0..16 -> [0, 1]
    Y = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    n_test = len(X) // 5
    test, train = order[:n_test], order[n_test:]
    X_train, Y_train, X_test, Y_test = X[train], Y[train], X[test], Y[test]
    W1, b1 = rng.normal(0.0, np.sqrt(2.0 / 64), (64, hidden)), np.zeros(hidden)
    W2, b2 = rng.normal(0.0, np.sqrt(1.0 / hidden), (hidden, 10)), np.zeros(10)
    params = (W1, b1, W2, b2)
    print(f"{len(X_train)} training images, {len(X_test)} test images; MLP 64-{hidden}-10, SGD lr {lr}, batch 1")

    t0 = time.perf_counter()
    train_step(*params, X_train[0], int(Y_train[0]), 0.0)       # compiles (lr 0: changes nothing)
    print(f"compiled the train step in {time.perf_counter() - t0:.2f} s")
    accuracy = 0.0
    for epoch in range(1, epochs + 1):
        shuffled = rng.permutation(len(X_train))
        t0 = time.perf_counter()
        for i in shuffled:
            train_step(*params, X_train[i], int(Y_train[i]), lr)
        rate = len(X_train) / (time.perf_counter() - t0)
        accuracy = float(np.mean(predict(*params, X_test) == Y_test))
        print(f"epoch {epoch:2d}: loss {mean_loss(*params, X_train, Y_train):.4f}  "
              f"test accuracy {accuracy:6.2%}  ({rate:,.0f} images/s)")
    assert accuracy >= 0.95, f"test accuracy {accuracy:.2%} is below 95%"
    return accuracy


if __name__ == "__main__":
    main()
