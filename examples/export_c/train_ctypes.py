"""The training train_mlp.c runs, from Python: once through the library's ctypes loader
(build/train.py, the same native code as the C program) and once with the step traced by
`@trace` (fuse_fma=False, as exported). Prints train_mlp.c's lines for each and checks that the
two end with the same weights, bit for bit (and the C program's too, given the file its
WEIGHTS_OUT argument wrote).

    python examples/export_c/train_ctypes.py [EPOCHS [C_WEIGHTS]]      (after write_digits.py)
"""
import importlib.util
import os
import sys

import numpy as np
from write_digits import LR, accuracy, epoch_order, read_data, step

from tracer import trace

HERE = os.path.dirname(os.path.abspath(__file__))


def load_loader(path):
    """The generated ctypes module at `path` (build/train.py)."""
    spec = importlib.util.spec_from_file_location("train_loader", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def train(step_fn, accuracy_fn, data_path, epochs, say=print):
    """train_mlp.c's loop in Python: the final [W1, b1, W2, b2] (updated in place by step_fn)."""
    X_train, Y_train, X_test, Y_test, params, seed = read_data(data_path)
    state = [seed]
    for epoch in range(1, epochs + 1):
        total = 0.0
        for i in epoch_order(state, len(X_train)):
            total += step_fn(*params, X_train[i], int(Y_train[i]), LR)
        acc = accuracy_fn(*params, X_test, Y_test)
        say(f"epoch {epoch:2d}: loss {total / len(X_train):.6f}  test accuracy {100.0 * acc:6.2f}%")
    return params


def main(epochs: int = 12, c_weights: str | None = None, build: str = os.path.join(HERE, "build")):
    data = os.path.join(build, "digits.bin")
    loader = load_loader(os.path.join(build, "train.py"))
    print("through the ctypes loader (libtrain.so):")
    native = train(loader.step, loader.accuracy, data, epochs)
    print("with @trace (fuse_fma=False):")
    traced = train(trace(step, fuse_fma=False), trace(accuracy, fuse_fma=False), data, epochs)
    same = all(np.array_equal(a, b) for a, b in zip(native, traced))
    print("final weights: ctypes and @trace", "equal bit for bit" if same else "DIFFER")
    if c_weights is not None:
        flat = np.fromfile(c_weights, dtype="<f8")
        same_c = np.array_equal(flat, np.concatenate([p.ravel() for p in traced]))
        print("final weights: C program and @trace", "equal bit for bit" if same_c else "DIFFER")
        same = same and same_c
    return same


if __name__ == "__main__":
    ok = main(int(sys.argv[1]) if len(sys.argv) > 1 else 12, sys.argv[2] if len(sys.argv) > 2 else None)
    sys.exit(0 if ok else 1)
