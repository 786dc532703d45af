"""docs/numpy.md is what `python docs/numpy_coverage.py` makes from the registry now (run it after
adding a NumPy function or method)."""
from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent


def test_the_numpy_table_is_current():
    spec = importlib.util.spec_from_file_location("numpy_coverage", ROOT / "docs" / "numpy_coverage.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert (ROOT / "docs" / "numpy.md").read_text() == module.render(), "run python docs/numpy_coverage.py"
