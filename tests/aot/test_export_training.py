"""A whole training step exported (examples/export_c/): `step` takes the gradient of a loss with
value_and_grad and updates its weight arguments in place; the C program train_mlp.c, built
against the exported library, trains with it and ends with the weights (and prints the losses and
accuracies) of the same training in Python with `trace(step, fuse_fma=False)`, bit for bit, as
does the ctypes loader. Small random data in the digits file's layout: no scikit-learn needed."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

from tracer import trace

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "export_c")
sys.path.insert(0, EXAMPLE)
from train_ctypes import load_loader, train  # noqa: E402
from write_digits import accuracy, export_trainer, step, write_data  # noqa: E402

CC = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc") or shutil.which("clang")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler to build train_mlp.c against the exported library")

N_IN, N_HIDDEN, N_OUT, N_TRAIN, N_TEST, EPOCHS = 12, 8, 4, 30, 10, 2


def small_data(seed=3):
    rng = np.random.default_rng(seed)
    X_train, X_test = rng.random((N_TRAIN, N_IN)), rng.random((N_TEST, N_IN))
    Y_train, Y_test = rng.integers(0, N_OUT, N_TRAIN), rng.integers(0, N_OUT, N_TEST)
    params = [rng.normal(0.0, 0.3, (N_IN, N_HIDDEN)), rng.normal(0.0, 0.1, N_HIDDEN),
              rng.normal(0.0, 0.3, (N_HIDDEN, N_OUT)), rng.normal(0.0, 0.1, N_OUT)]
    return X_train, Y_train, X_test, Y_test, params


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """(the folder, the exported library's files, the digits-format data file) with train_mlp built."""
    out = tmp_path_factory.mktemp("train")
    data = str(out / "digits.bin")
    write_data(data, *small_data(), seed=12345)
    exported = export_trainer(str(out), *small_data())
    program = str(out / "train_mlp")
    subprocess.run([CC, "-std=c99", "-O2", "-Wall", "-Werror", "-o", program, os.path.join(EXAMPLE, "train_mlp.c"),
                    f"-I{out}", f"-L{out}", "-ltrain", f"-Wl,-rpath,{out}", "-lm"], check=True)
    return out, exported, data, program


def c_training(built):
    """(the epoch lines train_mlp prints, its final [W1, b1, W2, b2])."""
    out, _, data, program = built
    weights = str(out / "weights_c.bin")
    run = subprocess.run([program, str(EPOCHS), data, weights], capture_output=True, text=True, check=True)
    flat = np.fromfile(weights, dtype="<f8")
    params, at = [], 0
    for shape in [(N_IN, N_HIDDEN), (N_HIDDEN,), (N_HIDDEN, N_OUT), (N_OUT,)]:
        n = int(np.prod(shape))
        params.append(flat[at:at + n].reshape(shape))
        at += n
    assert at == len(flat)
    return [line for line in run.stdout.splitlines() if line.startswith("epoch")], params


def python_training(step_fn, accuracy_fn, data):
    lines = []
    params = train(step_fn, accuracy_fn, data, EPOCHS, say=lines.append)
    return lines, params


def test_the_header_says_which_arguments_the_step_updates_in_place(built):
    _, exported, _, _ = built
    with open(exported.header) as header:
        text = header.read()
    assert "writes into W1, b1, W2, b2 in place" in text
    step_prototype = next(line for line in text.splitlines() if line.startswith("int32_t train_step("))
    assert "double *W1, " in step_prototype and "const double *W1" not in step_prototype
    assert "const double *x, " in step_prototype                  # only read
    accuracy_prototype = next(line for line in text.splitlines() if line.startswith("int32_t train_accuracy("))
    assert "const double *W1, " in accuracy_prototype and "const int64_t *Y, " in accuracy_prototype


def test_the_c_trainer_ends_with_the_traced_steps_weights_bit_for_bit(built):
    _, _, data, _ = built
    c_lines, c_params = c_training(built)
    py_lines, py_params = python_training(trace(step, fuse_fma=False), trace(accuracy, fuse_fma=False), data)
    assert len(c_lines) == EPOCHS and c_lines == py_lines
    for c, p in zip(c_params, py_params):
        assert c.tobytes() == p.tobytes()
    _, _, _, _, start = small_data()
    assert not np.array_equal(c_params[0], start[0])              # it trained


def test_the_ctypes_loader_drives_the_same_library(built):
    _, exported, data, _ = built
    loader = load_loader(exported.loader)
    assert "in place" in loader.step.__doc__
    lines, params = python_training(loader.step, loader.accuracy, data)
    c_lines, c_params = c_training(built)
    assert lines == c_lines
    for c, p in zip(c_params, params):
        assert c.tobytes() == p.tobytes()
    # one step writes into the caller's arrays (also through strides: a transposed W1's buffer)
    X_train, Y_train, _, _, (W1, b1, W2, b2) = small_data()
    W1t = np.asfortranarray(W1)
    expected = [W1.copy(), b1.copy(), W2.copy(), b2.copy()]
    value = trace(step, fuse_fma=False)(*expected, X_train[0], int(Y_train[0]), 0.05)
    assert loader.step(W1t, b1, W2, b2, X_train[0], int(Y_train[0]), 0.05) == value
    for got, want in zip([W1t, b1, W2, b2], expected):
        assert got.tobytes() == want.tobytes()
