"""An element of a bool array is an np.bool_: its arithmetic with another bool is NumPy's (`+` is
or, `*` is and, `-` and unary `-` are TypeErrors, `~` is not), never Python's (True + True == 2)."""
from __future__ import annotations

import numpy as np
import pytest
from like_python import outcome

from tracer import trace

EXPRESSIONS = ["m[0] + m[1]", "m[0] * m[2]", "-m[0]", "m[0] - m[1]", "~m[0]", "~m[2]", "abs(m[0])",
               "m[0] + True", "True * m[2]", "m[2] + m[2]", "m[0] + 1", "m[0] * 2.5", "m[0] & m[2]",
               "m[0] | m[2]", "m[0] ^ m[1]", "bool(m[0]) + bool(m[1])", "int(m[0]) - int(m[1])",
               "m.any() + m.all()", "(m[0] + m[1]) + 1", "m[0] == m[1]", "float(m[0] + m[1])"]


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_bool_elements_have_numpys_arithmetic(expression):
    fn = eval(f"lambda m: {expression}")
    m = np.array([True, True, False])
    want, got = outcome(fn, m), outcome(trace(fn, fullgraph=True), m)
    if want[0] == "raise":
        assert got == want
    else:
        assert got[0] == "return" and got[1] == want[1] and type(got[1]) is type(want[1]), (got, want)
