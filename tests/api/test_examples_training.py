"""The training examples run and learn (the digits one needs scikit-learn, the `examples` extra)."""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples"))


def test_train_digits_reaches_95_percent():
    pytest.importorskip("sklearn")
    import train_digits
    assert train_digits.main(epochs=12) >= 0.95
