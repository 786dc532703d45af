"""Random NumPy programs, as source text, for differential testing of `trace` (the fuzzer's `arrays`
kind, `python -m tests.fuzz --kinds arrays`).

A program is a module whose function `f(x, [y,] s, n)` takes one or two 1-D arrays (float64,
int64, float32 or bool: the dtypes are drawn with the program), a float `s` and a small int `n`.
Its statements are those of `program_gen` (if/elif/else, for, while, break/continue/return,
raise) over float and int scalars, plus array statements: array locals (`t0` float64, `t1` the
dtype of `x`, `m0` bool) assigned elementwise expressions (arithmetic with scalars and arrays,
ufuncs, `np.where`, comparisons, `astype`), reductions and element reads in scalar expressions
(`float(x.sum())`, `x[i]`, `np.mean(t0)`), in-place updates of arguments and locals (`x += t0`,
`x[i] = r0`, `x[::2] = ...`), loops over `range(len(x))` and over the array's elements. Types are
tracked so that a variable keeps its dtype on every path; what NumPy rejects (a float result
written into an int array, arrays of different lengths, an index past the end, a reduction of
an empty array) is left in: the oracle is NumPy, which raises.

`random_array_program(rng, avoid)` draws a program; `random_array_arguments(rng, program, avoid)`
draws one call's arguments as Python expressions (`np.array([0.0, -0.0, nan], dtype=np.float64)[::2]`,
`readonly(np.array([1, -9223372036854775808], dtype=np.int64))`), evaluated by `argument_namespace()`.
Edge values: 0, -0.0, nan, +-inf, tiny and huge floats, int64 extremes, empty arrays, 0-d
arrays, read-only arrays and non-contiguous views.

`avoid` names constructs that meet bugs known and being fixed (`KNOWN_BUGS`; by default the open
ones, `OPEN_BUGS`), so a fuzzing run is not drowned in them: the generator leaves them out until
they are fixed.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from program_exprs import E, operand, random_choices
from program_gen import Features, ProgramGenerator, random_float

KNOWN_BUGS = {         # what the generator can leave out (`avoid`), while it is being fixed
    "int-div-zero": "integer array // or % by zero crashes with SIGFPE (fixed)",
    "readonly-write": "writes into read-only arrays succeed (fixed)",
    "zero-d": "0-d arrays give an internal LLVM error (fixed)",
    "max-signed-zero": "np.maximum(-0.0, 0.0) gives the wrong zero (fixed)",
    "ufunc-ulp": "np.tanh, np.exp and np.log, and np.sin/np.cos/... of float32 arrays, differ from NumPy's "
                 "SIMD code in the last bit (each within 1 ulp of math's)",
    "clip-signed-zero": "np.clip(-0.0, 0.0, 1.0) gives 0.0 where NumPy keeps -0.0 (fixed)",
    "f32-reduction": "reductions of float32 arrays round differently from NumPy's (np.prod)",
}
OPEN_BUGS = frozenset({"ufunc-ulp", "f32-reduction"})   # avoided by default

DTYPES = {"f": "np.float64", "i": "np.int64", "g": "np.float32", "b": "np.bool_"}   # g: float32
SIZES = (0, 1, 2, 3, 5, 8)
INT_EDGES = (0, 1, -1, 2, 7, -3, 100, 2 ** 31, 2 ** 63 - 1, -2 ** 63, -2 ** 63 + 1)
FLOAT_EDGES = (0.0, -0.0, 1.0, -1.0, 0.5, 2.5, -3.0, 1e-310, 1e300, -1e300, math.inf, -math.inf, math.nan)


@dataclass(frozen=True)
class ArrayProgram:
    source: str
    arrays: tuple[tuple[str, str], ...]      # (parameter, kind) of the array parameters
    float_params: tuple[str, ...] = ("s",)
    int_params: tuple[str, ...] = ("n",)
    name: str = "f"

    @property
    def params(self) -> tuple[str, ...]:
        return tuple(p for p, _ in self.arrays) + self.float_params + self.int_params


class ArrayGenerator(ProgramGenerator):
    """program_gen's statements and scalar expressions, plus arrays (see the module docstring)."""

    def __init__(self, choose, arrays: dict, avoid: frozenset, shape: str):
        super().__init__(choose, ("s",), ("n",), ("r0", "r1"), ("j0",), "f",
                         Features(helpers=False), max_lines=14)
        self.arrays = dict(arrays)                    # name -> kind: arguments and locals
        self.args = tuple(arrays)
        self.avoid = avoid
        self.array_shape = shape                      # what f returns: 'a' array, 's' float, 'as' both
        for name, kind in (("t0", "f"), ("t1", arrays["x"]), ("m0", "b")):
            self.arrays[name] = kind
            self.prelude.append(f"{name} = np.zeros_like(x, dtype={DTYPES[kind]})")

    def of_kind(self, kind: str) -> list[str]:
        return [n for n, k in self.arrays.items() if k == kind]

    # -------------------------------------------------------------- scalars from arrays
    def bounded_atoms(self) -> list[str]:
        return super().bounded_atoms() + ["len(x)"]

    def fleaf(self) -> E:
        if not self.coin(30):
            return super().fleaf()
        numeric = [n for n, k in self.arrays.items() if k in "fi" or (k == "g" and "f32-reduction" not in self.avoid)]
        a = self.one(numeric)
        form = self.pick((3, "sum"), (2, "index"), (1, "mean"), (1, "max"), (1, "min"), (1, "prod"),
                         (1 if self.arrays[a] == "f" else 0, "dot"))
        if form == "index":
            text = f"{a}[{self.one(('0', '-1', self.bounded().text))}]"
        elif form == "dot":
            text = f"np.dot({a}, {self.one(self.of_kind('f'))})"
        elif form in ("mean", "prod"):
            text = f"np.{form}({a})"
        else:
            text = f"{a}.{form}()"
        # a NumPy scalar stays one where it is a float64 (np.float64 arithmetic is NumPy's)
        return E(text) if self.arrays[a] == "f" and self.coin(30) else E(f"float({text})")

    # -------------------------------------------------------------- array expressions
    def aexpr(self, kind: str, depth: int) -> E:
        """An expression whose value is an array of `kind` (the shape of `x`, or broadcast)."""
        names = self.of_kind(kind)
        if depth <= 0 or self.coin(25):
            if names and self.coin(85):
                return E(self.one(names))
            return self.convert(kind)
        d = depth - 1
        if kind == "b":
            return self.bool_array(d)
        if kind == "i":
            return self.int_array(d)
        return self.float_array(kind, d)

    def convert(self, kind: str) -> E:
        source = self.one(list(self.arrays))
        if kind == "b":
            if self.arrays[source] == "b":
                return E(source)
            return E(f"{source} {self.one(('>', '<=', '!=', '=='))} {operand(self.fexpr(1))}", atom=False)
        if kind == "f" and self.coin(30):
            return E(f"np.arange(len({source})) * 0.5", atom=False)
        if kind == "i" and self.coin(30):
            return E(f"np.arange(len({source}))")
        return E(f"{source}.astype({DTYPES[kind]})")

    def scalar_for(self, kind: str) -> E:
        if kind == "i":
            return self.bounded()
        return self.fexpr(1)

    def float_array(self, kind: str, d: int) -> E:
        form = self.pick((6, "bin"), (2, "scalar"), (3, "ufunc"), (2, "where"), (1, "neg"), (1, "pow"),
                         (1, "minmax"), (1 if kind == "f" else 0, "truediv"), (1, "floordiv"), (1, "clip"))
        if form == "bin":
            op = self.one(("+", "-", "*", "/"))
            return E(f"{operand(self.aexpr(kind, d))} {op} {operand(self.aexpr(kind, d))}", atom=False)
        if form == "scalar":
            op = self.one(("+", "-", "*", "/"))
            left, right = self.aexpr(kind, d), self.scalar_for(kind)
            if self.coin(40):
                left, right = right, left
            return E(f"{operand(left)} {op} {operand(right)}", atom=False)
        if form == "ufunc":
            fn = self.one(("np.sin", "np.exp", "np.tanh", "np.floor", "np.abs", "np.sqrt", "np.log", "np.cos"))
            if "ufunc-ulp" in self.avoid and (kind == "g" or fn in ("np.tanh", "np.exp", "np.log")):
                fn = self.one(("np.floor", "np.abs", "np.sqrt")) if kind == "g" else self.one(("np.sin", "np.cos"))
            inner = self.aexpr(kind, d)
            if fn in ("np.sqrt", "np.log") and self.coin(70):
                inner = E(f"np.abs({inner.text})")
            return E(f"{fn}({inner.text})")
        if form == "where":
            return E(f"np.where({self.aexpr('b', d).text}, {self.aexpr(kind, d).text}, {self.aexpr(kind, d).text})")
        if form == "neg":
            return E(f"-{operand(self.aexpr(kind, d))}", atom=False)
        if form == "pow":
            return E(f"{operand(self.aexpr(kind, d))} ** {self.one(('2', '3', '0.5', '2.0', '-1'))}", atom=False)
        if form == "minmax":
            if "max-signed-zero" in self.avoid:
                return E(f"np.abs({self.aexpr(kind, d).text})")
            fn = self.one(("np.maximum", "np.minimum"))
            return E(f"{fn}({self.aexpr(kind, d).text}, {self.aexpr(kind, d).text})")
        if form == "truediv":
            return E(f"{operand(self.aexpr('i', d))} / {operand(self.aexpr('i', d))}", atom=False)
        if form == "floordiv":
            op = self.one(("//", "%"))
            return E(f"{operand(self.aexpr(kind, d))} {op} {operand(self.aexpr(kind, d))}", atom=False)
        if "clip-signed-zero" in self.avoid:
            return E(f"np.abs({self.aexpr(kind, d).text})")
        lo = self.fexpr(0).text
        return E(f"np.clip({self.aexpr(kind, d).text}, {lo}, {lo} + 1.0)")

    def int_array(self, d: int) -> E:
        form = self.pick((5, "bin"), (2, "scalar"), (1, "abs"), (1, "neg"), (2, "where"), (2, "divmod"),
                         (1, "minmax"), (1, "square"))
        if form == "bin":
            op = self.one(("+", "-", "*"))
            return E(f"{operand(self.aexpr('i', d))} {op} {operand(self.aexpr('i', d))}", atom=False)
        if form == "scalar":
            op = self.one(("+", "-", "*"))
            return E(f"{operand(self.aexpr('i', d))} {op} {operand(self.bounded())}", atom=False)
        if form == "abs":
            return E(f"np.abs({self.aexpr('i', d).text})")
        if form == "neg":
            return E(f"-{operand(self.aexpr('i', d))}", atom=False)
        if form == "where":
            return E(f"np.where({self.aexpr('b', d).text}, {self.aexpr('i', d).text}, {self.aexpr('i', d).text})")
        if form == "divmod":
            op = self.one(("//", "%"))
            divisor = self.aexpr("i", d) if self.coin(50) else self.bounded()
            if "int-div-zero" in self.avoid:   # never zero: |d| + 1 (INT_MIN + 1 included)
                divisor = E(f"(np.abs({divisor.text}) + 1)")
            return E(f"{operand(self.aexpr('i', d))} {op} {operand(divisor)}", atom=False)
        if form == "minmax":
            fn = self.one(("np.maximum", "np.minimum"))
            return E(f"{fn}({self.aexpr('i', d).text}, {self.aexpr('i', d).text})")
        return E(f"{operand(self.aexpr('i', d))} ** 2", atom=False)

    def bool_array(self, d: int) -> E:
        form = self.pick((4, "cmp"), (1, "isnan"), (1, "not"), (2, "andor"))
        if form == "cmp":
            kind = self.one(("f", "i", self.arrays["x"]))
            if kind == "b":
                kind = "f"
            right = self.aexpr(kind, d) if self.coin(50) else self.scalar_for(kind)
            op = self.one(("<", ">", "<=", ">=", "==", "!="))
            return E(f"{operand(self.aexpr(kind, d))} {op} {operand(right)}", atom=False)
        if form == "isnan":
            return E(f"{self.one(('np.isnan', 'np.isfinite', 'np.isinf'))}({self.aexpr('f', d).text})")
        if form == "not":
            return E(f"np.logical_not({self.aexpr('b', d).text})")
        return E(f"{operand(self.aexpr('b', d))} {self.one(('&', '|'))} {operand(self.aexpr('b', d))}", atom=False)

    # -------------------------------------------------------------- statements
    def statement(self, indent, nesting, loops, exits, control_flow=False):
        if control_flow or not self.coin(45):
            return super().statement(indent, nesting, loops, exits, control_flow)
        can_loop = nesting < 3 and loops < self.max_loops and self.left >= 3 \
            and len(self.loop_vars) < 3
        form = self.pick((4, "assign"), (3, "inplace"), (2, "setitem"), (1, "setslice"),
                         (2 if can_loop else 0, "index-loop"), (1 if can_loop else 0, "element-loop"))
        target = self.one(list(self.arrays))
        kind = self.arrays[target]
        depth = self.expr_depth()
        if form == "assign" and target not in self.args:
            self.emit(indent, f"{target} = {self.aexpr(kind, depth).text}")
        elif form in ("assign", "inplace"):
            op = self.one(("+=", "-=", "*=") if kind != "b" else ("&=", "|="))
            value = self.aexpr(kind, depth) if self.coin(60) else self.scalar_for("i" if kind == "b" else kind)
            if kind == "b":
                value = self.aexpr("b", depth)
            self.emit(indent, f"{target} {op} {value.text}")
        elif form == "setitem":
            index = self.one(("0", "-1", self.bounded().text))
            self.emit(indent, f"{target}[{index}] = {self.element(kind).text}")
        elif form == "setslice":
            part = self.one(("::2", "1:", ":-1", ":"))
            value = self.element(kind) if self.coin(50) else self.aexpr(kind, depth - 1)
            self.emit(indent, f"{target}[{part}] = {value.text}")
        elif form == "index-loop":
            var = ("i0", "i1", "i2")[len(self.loop_vars)]
            self.emit(indent, f"for {var} in range(len({self.one(self.args)})):")
            self.loop_vars.append(var)
            self.block(indent + 1, nesting + 1, loops + 1, ("break", "continue", "return"))
        else:
            var = ("i0", "i1", "i2")[len(self.loop_vars)]
            source = self.one([n for n in self.args if self.arrays[n] in "fi"] or ["t0"])
            self.emit(indent, f"for {var} in range(len({source})):")
            self.loop_vars.append(var)
            self.emit(indent + 1, f"{self.one(self.float_vars[1:])} += float({source}[{var}])")
            self.block(indent + 1, nesting + 1, loops + 1, ("break", "continue", "return"))

    def element(self, kind: str) -> E:
        if kind == "b":
            return self.compare(1)
        if kind == "i":
            return self.iexpr(1)
        return self.fexpr(self.expr_depth())

    def return_value(self) -> str:
        array = self.aexpr(self.one(("f", self.arrays["x"])), self.expr_depth()).text
        if self.array_shape == "a":
            return array
        if self.array_shape == "s":
            return self.fexpr(self.expr_depth()).text
        return f"{array}, {self.fexpr(self.expr_depth()).text}"


def random_array_program(rng, avoid=OPEN_BUGS) -> ArrayProgram:
    """A NumPy program drawn from a seeded `random.Random`: the same seed, the same program."""
    choose = random_choices(rng)
    arrays = {"x": rng.choice("fffiigb")}
    if rng.randrange(3):
        arrays["y"] = rng.choice("ffig")
    gen = ArrayGenerator(choose, arrays, frozenset(avoid), rng.choice(("a", "s", "as")))
    lines = ["import math", "", "import numpy as np", "", ""] + gen.function()
    params = ", ".join(list(arrays) + ["s", "n"])
    lines[5] = f"def f({params}):"
    return ArrayProgram("\n".join(lines) + "\n", tuple(arrays.items()))


# ---------------------------------------------------------------------------- arguments
def _value(rng, kind: str):
    if kind == "b":
        return rng.random() < 0.5
    if kind == "i":
        return rng.choice(INT_EDGES) if rng.random() < 0.3 else rng.randint(-5, 9)
    if rng.random() < 0.3:
        return rng.choice(FLOAT_EDGES)
    return random_float(rng)


def _array_text(rng, kind: str, size: int, avoid) -> str:
    layout = rng.choice(("plain",) * 6 + ("strided", "strided", "readonly", "zero-d"))
    if layout == "zero-d" and "zero-d" in avoid:
        layout = "plain"
    if layout == "readonly" and "readonly-write" in avoid:
        layout = "strided"
    if layout == "zero-d":
        return f"np.array({_value(rng, kind)!r}, dtype={DTYPES[kind]})"
    count = 2 * size if layout == "strided" else size
    values = ", ".join(repr(_value(rng, kind)) for _ in range(count))
    text = f"np.array([{values}], dtype={DTYPES[kind]})"
    if layout == "strided":
        return text + "[::2]"
    return f"readonly({text})" if layout == "readonly" else text


def random_array_arguments(rng, program: ArrayProgram, avoid=OPEN_BUGS) -> tuple[str, ...]:
    """One call's arguments, each a Python expression (see `argument_namespace`)."""
    size = rng.choice(SIZES)
    texts = []
    for _, kind in program.arrays:
        n = size if rng.random() < 0.85 else rng.choice(SIZES)
        texts.append(_array_text(rng, kind, n, avoid))
    texts.append(repr(random_float(rng)))
    texts.append(repr(rng.randint(0, 6) if rng.random() < 0.8 else rng.randint(-3, 20)))
    return tuple(texts)


def readonly(array):
    array.flags.writeable = False
    return array


def argument_namespace() -> dict:
    """What argument expressions are evaluated in: np, nan, inf and `readonly`."""
    import numpy as np
    return {"np": np, "nan": math.nan, "inf": math.inf, "readonly": readonly}
