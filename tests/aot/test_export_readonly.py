"""Exported functions that update an argument array in place: the header names the arguments they
write, and the ctypes loader refuses a read-only array for one of them with NumPy's ValueError,
before the library writes anything (a read-only array it only reads is fine)."""
import importlib.util
import shutil

import numpy as np
import pytest

from tracer import export

pytestmark = pytest.mark.skipif(shutil.which("cc") is None and shutil.which("gcc") is None,
                                reason="no C compiler to link exported libraries")


def sgd_step(w, g, lr):
    w -= lr * g


def load(exported):
    spec = importlib.util.spec_from_file_location(f"exported_{id(exported)}", exported.loader)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def read_only(a):
    a.flags.writeable = False
    return a


def test_the_loader_refuses_a_read_only_array_the_function_writes(tmp_path):
    exported = export(sgd_step, np.ones(3), np.ones(3), 0.1, out_dir=str(tmp_path), name="steps")
    m = load(exported)
    with open(exported.header) as header:
        assert "writes into w in place" in header.read()
    data = b"\0" * 24
    w = np.frombuffer(data)
    with pytest.raises(ValueError) as raised:
        m.sgd_step(w, np.ones(3), 0.1)
    with pytest.raises(ValueError) as expected:
        sgd_step(np.frombuffer(data), np.ones(3), 0.1)
    assert "read-only" in str(raised.value) and "read-only" in str(expected.value)
    assert data == b"\0" * 24
    w = np.zeros(3)
    m.sgd_step(w, read_only(np.ones(3)), 0.5)             # g is only read: read-only is fine
    assert np.array_equal(w, np.full(3, -0.5))
