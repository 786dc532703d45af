"""Export `fma`, its gradient and the NumPy MLP forward into a C library, with the MLP's weights
and a test batch (and the probabilities Python computes for it) in a binary file main.c reads.

    python examples/export_c/export_model.py                  # writes examples/export_c/build/
    cc -std=c99 -o examples/export_c/build/main examples/export_c/main.c -Iexamples/export_c/build \\
       -Lexamples/export_c/build -lmodel -Wl,-rpath,examples/export_c/build -lm
    examples/export_c/build/main

`--target aarch64-linux` writes a library for 64-bit ARM Linux instead (build main.c with
aarch64-linux-gnu-gcc and run it with qemu-aarch64-static -L /usr/aarch64-linux-gnu).
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))           # examples/: fma.py and mlp_numpy.py

from fma import fma  # noqa: E402
from mlp_numpy import mlp  # noqa: E402

from tracer import export  # noqa: E402

BATCH = 4


def model_data(seed: int = 0):
    """The weights (784 -> 50 -> 10), a batch of inputs, and NumPy's probabilities for it."""
    rng = np.random.default_rng(seed)
    W1, b1 = rng.normal(0.0, 0.05, (784, 50)), rng.normal(0.0, 0.01, 50)
    W2, b2 = rng.normal(0.0, 0.05, (50, 10)), rng.normal(0.0, 0.01, 10)
    x = rng.random((BATCH, 784))
    return W1, b1, W2, b2, x, mlp(W1, b1, W2, b2, x)


def main(out_dir: str = os.path.join(HERE, "build"), target: str = "host"):
    W1, b1, W2, b2, x, probabilities = model_data()
    result = export([(fma, (3.0, -1.0, 2.0)), (mlp, (W1, b1, W2, b2, x))], out_dir=out_dir, name="model",
                    grad=[fma], target=target)
    # float64, in this order: W1, b1, W2, b2, x, the expected probabilities
    with open(os.path.join(out_dir, "weights.bin"), "wb") as out:
        for a in (W1, b1, W2, b2, x, probabilities):
            out.write(np.ascontiguousarray(a, dtype="<f8").tobytes())
    print("wrote", result.library, result.header, os.path.join(out_dir, "weights.bin"))
    print("C functions:", ", ".join(result.symbols))


if __name__ == "__main__":
    main(target=sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else "host")
