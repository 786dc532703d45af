"""Export `fma`, its gradient and the NumPy MLP forward to WebAssembly, with its JavaScript loaders
(model.js for Node.js, model.mjs an ES module for browsers and Node.js), for main.js to run under
Node.js and index.html in a browser (the weights and a test batch go in weights.bin, as for C).

    python examples/export_wasm/export_model.py        # writes examples/export_wasm/build/
    node examples/export_wasm/main.js
    python -m http.server --bind 127.0.0.1 --directory examples/export_wasm 8000   # http://127.0.0.1:8000/

Needs wasm-ld and wasi-libc (Debian: apt-get install lld wasi-libc).
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "export_c"))

from export_model import main  # noqa: E402   (examples/export_c/export_model.py)

if __name__ == "__main__":
    main(out_dir=os.path.join(HERE, "build"), target="wasm32")
