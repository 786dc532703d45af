"""Export a whole MLP training step to C, with scikit-learn's handwritten digits for train_mlp.c.

    python examples/export_c/write_digits.py            # writes examples/export_c/build/
    cc -std=c99 -O2 -o examples/export_c/build/train_mlp examples/export_c/train_mlp.c \\
       -Iexamples/export_c/build -Lexamples/export_c/build -ltrain -Wl,-rpath,examples/export_c/build -lm
    examples/export_c/build/train_mlp                   # 12 epochs: loss and test accuracy per epoch

The MLP is examples/train_digits.py's: 64 -> 64 (ReLU) -> 10, softmax cross-entropy (the loss of
examples/train_step.py), SGD with lr 0.05, one image per step, split and initial weights drawn as
train_digits.py draws them (seed 0). `step` below gets the loss and its gradient from
`value_and_grad`, updates W1, b1, W2, b2 in place and returns the loss; exported, it is the C
function `train_step`, which writes the new weights into the caller's buffers (train.h says
which arguments it updates). `accuracy` is exported as `train_accuracy`.

Writes build/libtrain.so, build/train.h, the ctypes loader build/train.py and build/digits.bin
(`write_data` documents its layout). Exported with fuse_fma=False (every multiply and add
rounded on its own), so the C program's weights are bit for bit those of the same run in Python
with `trace(step, fuse_fma=False)`: train_ctypes.py runs it both ways and prints the same lines.
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))           # examples/: train_step.py

from train_step import loss  # noqa: E402

from tracer import export, value_and_grad  # noqa: E402

LR, EPOCHS, SEED = 0.05, 12, 0
HEADER = 6        # int64s before the arrays: n_train, n_test, n_in, n_hidden, n_out, shuffle seed


def step(W1, b1, W2, b2, x, y, lr):
    """One SGD step on image x (label y): the loss before the update; W1, b1, W2, b2 updated in place."""
    value, (gW1, gb1, gW2, gb2) = value_and_grad(loss, argnums=(0, 1, 2, 3))(W1, b1, W2, b2, x, y)
    W1 -= lr * gW1
    b1 -= lr * gb1
    W2 -= lr * gW2
    b2 -= lr * gb2
    return value


def accuracy(W1, b1, W2, b2, X, Y):
    """The fraction of the rows of X whose predicted class is their label in Y."""
    return np.mean(np.argmax(np.maximum(X @ W1 + b1, 0.0) @ W2 + b2, axis=1) == Y)


def digits_data(hidden: int = 64, seed: int = SEED):
    """train_digits.py's split and initial weights: X_train, Y_train, X_test, Y_test, [W1, b1, W2, b2]."""
    from sklearn.datasets import load_digits
    digits = load_digits()
    X = digits.data / 16.0                                      # pixel values 0..16 -> [0, 1]
    Y = digits.target.astype(np.int64)
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(X))
    n_test = len(X) // 5
    test, train = order[:n_test], order[n_test:]
    W1, b1 = rng.normal(0.0, np.sqrt(2.0 / 64), (64, hidden)), np.zeros(hidden)
    W2, b2 = rng.normal(0.0, np.sqrt(1.0 / hidden), (hidden, 10)), np.zeros(10)
    return X[train], Y[train], X[test], Y[test], [W1, b1, W2, b2]


def write_data(path, X_train, Y_train, X_test, Y_test, params, seed: int = SEED):
    """The file train_mlp.c reads, little-endian: HEADER int64s (n_train, n_test, n_in, n_hidden,
    n_out, the shuffle seed), then X_train (float64, n_train x n_in, C order), Y_train (int64),
    X_test, Y_test, W1 (n_in x n_hidden), b1, W2 (n_hidden x n_out), b2 (float64)."""
    W1, b1, W2, b2 = params
    sizes = [len(X_train), len(X_test), W1.shape[0], W1.shape[1], W2.shape[1], seed]
    with open(path, "wb") as out:
        out.write(np.array(sizes, dtype="<i8").tobytes())
        for a, dtype in ((X_train, "<f8"), (Y_train, "<i8"), (X_test, "<f8"), (Y_test, "<i8"),
                         (W1, "<f8"), (b1, "<f8"), (W2, "<f8"), (b2, "<f8")):
            out.write(np.ascontiguousarray(a, dtype=dtype).tobytes())


def read_data(path):
    """What write_data wrote: X_train, Y_train, X_test, Y_test, [W1, b1, W2, b2], seed."""
    raw = np.fromfile(path, dtype="<i8", count=HEADER)
    n_train, n_test, n_in, n_hidden, n_out, seed = (int(v) for v in raw)
    shapes = [((n_train, n_in), "<f8"), ((n_train,), "<i8"), ((n_test, n_in), "<f8"), ((n_test,), "<i8"),
              ((n_in, n_hidden), "<f8"), ((n_hidden,), "<f8"), ((n_hidden, n_out), "<f8"), ((n_out,), "<f8")]
    arrays, offset = [], 8 * HEADER
    for shape, dtype in shapes:
        count = int(np.prod(shape))
        arrays.append(np.fromfile(path, dtype=dtype, count=count, offset=offset).reshape(shape).astype(dtype[1:]))
        offset += 8 * count
    return (*arrays[:4], arrays[4:], seed)


def epoch_order(state: list, n: int) -> list:
    """The order of the n training images in the next epoch: train_mlp.c's Fisher-Yates shuffle with
    splitmix64 (state[0] is its 64-bit state, advanced), so C and Python visit the same images."""
    mask = (1 << 64) - 1
    order = list(range(n))
    for i in range(n - 1, 0, -1):
        state[0] = z = (state[0] + 0x9E3779B97F4A7C15) & mask
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & mask
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & mask
        j = (z ^ (z >> 31)) % (i + 1)
        order[i], order[j] = order[j], order[i]
    return order


def export_trainer(out_dir, X_train, Y_train, X_test, Y_test, params):
    """build/libtrain.so with train_step and train_accuracy, specialized for these shapes."""
    return export([(step, (*params, X_train[0], int(Y_train[0]), LR)),
                   (accuracy, (*params, X_test, Y_test))], out_dir=out_dir, name="train", fuse_fma=False)


def main(out_dir: str = os.path.join(HERE, "build")):
    try:
        data = digits_data()
    except ImportError:
        sys.exit("needs scikit-learn: python -m pip install -e \".[examples]\"")
    os.makedirs(out_dir, exist_ok=True)
    write_data(os.path.join(out_dir, "digits.bin"), *data)
    result = export_trainer(out_dir, *data)
    X_train, _, X_test, _, (W1, _, W2, _) = data
    print(f"wrote {os.path.join(out_dir, 'digits.bin')}: {len(X_train)} training and {len(X_test)} test images, "
          f"MLP {W1.shape[0]}-{W1.shape[1]}-{W2.shape[1]}")
    print("wrote", result.library, result.header, result.loader)
    print("C functions:", ", ".join(result.symbols))


if __name__ == "__main__":
    main()
