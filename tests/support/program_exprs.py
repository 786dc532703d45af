"""The expressions and conditions of random programs (`program_gen.py` builds statements on them).

`ExpressionGenerator` draws every choice through `choose(lo, hi)` (an int in lo..hi): a
hypothesis draw (`hypothesis_choices`, which shrinks towards the first option) or a seeded
`random.Random` (`random_choices`, for the fuzzer: the same seed, the same program). Expressions
are typed by construction: float expressions (`fexpr`), int expressions (`iexpr`), *bounded* int
expressions (|value| <= ~30: range bounds, while limits, int arguments of helper functions) and
conditions (`cond`). See program_gen's docstring for the rules that keep programs terminating.
"""
from __future__ import annotations

from dataclasses import dataclass

FLOAT_CONSTANTS = ("1.0", "2.0", "0.5", "0.0", "-1.0", "3.0", "10.0", "100.0", "-2.5", "0.001",
                   "1e+200", "1e-200", "math.pi")
INT_CONSTANTS = ("1", "2", "0", "3", "-1", "5", "10", "-3", "7")
SMALL_BOUNDS = ("3", "0", "1", "5", "8", "-2")
COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")
MAX_EXPR_DEPTH = 3


def hypothesis_choices(draw):
    from hypothesis import strategies as st
    return lambda lo, hi: draw(st.integers(lo, hi))


def random_choices(rng):
    return rng.randint


@dataclass(frozen=True)
class E:
    """An expression's text; `atom` when it needs no parentheses as an operand."""
    text: str
    atom: bool = True


def operand(e: E) -> str:
    return e.text if e.atom else f"({e.text})"


def const(text: str) -> E:
    return E(f"({text})" if text.startswith("-") else text)


@dataclass(frozen=True)
class Helper:
    """A function of the generated module that the traced one calls: its parameters' kinds
    ('f' float, 'i' bounded int) and what it returns ('f' or 'i')."""
    name: str
    params: tuple[str, ...]
    returns: str


class ExpressionGenerator:
    def __init__(self, choose, float_params, int_params, helpers=()):
        self.choose = choose
        self.float_params = tuple(float_params)
        self.int_params = tuple(int_params)
        self.float_vars: list[str] = list(float_params)
        self.int_locals: list[str] = []
        self.loop_vars: list[str] = []          # allocated so far, in text order
        self.counters: list[str] = []
        self.helpers: tuple[Helper, ...] = tuple(helpers)

    # -------------------------------------------------------------- choices
    def pick(self, *weighted):
        """One of `(weight, value)` pairs; shrinks towards the first."""
        options = [(w, v) for w, v in weighted if w > 0]
        total = sum(w for w, _ in options)
        k = self.choose(0, total - 1)
        for w, v in options:
            if k < w:
                return v
            k -= w
        raise AssertionError("unreachable")

    def one(self, seq):
        return seq[self.choose(0, len(seq) - 1)]

    def coin(self, percent: int) -> bool:
        """True with about `percent`% probability; shrinks to False."""
        return self.choose(0, 99) >= 100 - percent

    def expr_depth(self) -> int:
        return self.choose(1, MAX_EXPR_DEPTH)

    # -------------------------------------------------------------- float expressions
    def fleaf(self) -> E:
        if self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(self.float_vars))
        return const(self.one(FLOAT_CONSTANTS))

    def fexpr(self, depth: int) -> E:
        if depth <= 0:
            return self.fleaf()
        kind = self.pick((10, "leaf"), (6, "bin"), (1, "neg"), (3, "call1"), (2, "call2"),
                         (1, "pow"), (1, "float"), (1, "intdiv"), (1, "ifexp"),
                         (2 if self.helpers_returning("f") else 0, "helper"))
        d = depth - 1
        if kind == "leaf":
            return self.fleaf()
        if kind == "bin":
            op = self.pick((3, "+"), (3, "-"), (3, "*"), (2, "/"), (1, "//"), (1, "%"))
            return E(f"{operand(self.fexpr(d))} {op} {operand(self.fexpr(d))}", atom=False)
        if kind == "neg":
            return E(f"-{operand(self.fexpr(d))}", atom=False)
        if kind == "call1":
            fn = self.one(("math.sqrt", "abs", "math.exp", "math.log", "math.sin", "math.cos",
                           "math.tanh", "math.fabs"))
            return E(f"{fn}({self.fexpr(d).text})")
        if kind == "call2":
            fn = self.one(("min", "max", "math.atan2", "math.hypot"))
            return E(f"{fn}({self.fexpr(d).text}, {self.fexpr(d).text})")
        if kind == "pow":
            exponent = self.one(("2", "3", "-1", "2.0", "0", "-2.0", "0.5", "1.5"))
            base = self.fexpr(d)
            if exponent in ("0.5", "1.5"):   # never a negative base: that result is complex
                base = E(f"abs({base.text})")
            return E(f"{operand(base)} ** {operand(const(exponent))}", atom=False)
        if kind == "float":
            return E(f"float({self.iexpr(d).text})")
        if kind == "intdiv":
            return E(f"{operand(self.iexpr(d))} / {operand(self.iexpr(d))}", atom=False)
        if kind == "helper":
            return self.helper_call(self.one(self.helpers_returning("f")), d)
        return self.ifexp(self.fexpr, d)

    def ifexp(self, make, d) -> E:
        body, test, orelse = make(d), self.cond(d), make(d)
        return E(f"({body.text} if {test.text} else {orelse.text})")

    def helpers_returning(self, kind: str) -> list[Helper]:
        return [h for h in self.helpers if h.returns == kind]

    def helper_call(self, helper: Helper, d: int) -> E:
        """A call of a helper function: float arguments any float expression, int ones bounded
        (the helper may use them as range bounds)."""
        args = [self.fexpr(d).text if p == "f" else self.bounded().text for p in helper.params]
        return E(f"{helper.name}({', '.join(args)})")

    # -------------------------------------------------------------- int expressions
    def int_vars(self) -> list[str]:
        return self.int_locals + list(self.int_params) + self.loop_vars + self.counters

    def bounded_atoms(self) -> list[str]:
        return list(self.int_params) + self.loop_vars + self.counters

    def bounded_atom(self) -> E:
        atoms = self.bounded_atoms()
        if atoms and self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(atoms))
        return const(self.one(SMALL_BOUNDS))

    def bounded(self) -> E:
        """An int with |value| <= ~30: a range bound or a while limit."""
        atom = self.bounded_atom()
        kind = self.pick((4, "atom"), (1, "+"), (1, "-"))
        if kind == "atom":
            return atom
        return E(f"{atom.text} {kind} {self.one(('1', '2', '3'))}", atom=False)

    def ileaf(self) -> E:
        if self.int_vars() and self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(self.int_vars()))
        return const(self.one(INT_CONSTANTS))

    def iexpr(self, depth: int) -> E:
        if depth <= 0:
            return self.ileaf()
        d = depth - 1
        kind = self.pick((10, "leaf"), (4, "addsub"), (2, "mul"), (2, "divmod"), (1, "neg"),
                         (1, "abs"), (1, "minmax"), (2, "fromfloat"), (1, "pow"), (1, "ifexp"),
                         (1 if self.helpers_returning("i") else 0, "helper"))
        if kind == "leaf":
            return self.ileaf()
        if kind == "addsub":
            op = self.one(("+", "-"))
            return E(f"{operand(self.iexpr(d))} {op} {operand(self.iexpr(d))}", atom=False)
        if kind == "mul":   # one operand bounded: ints grow by a few bits per product, never squared
            left, right = self.iexpr(d), self.bounded_atom()
            if self.coin(50):
                left, right = right, left
            return E(f"{operand(left)} * {operand(right)}", atom=False)
        if kind == "divmod":
            op = self.one(("//", "%"))
            return E(f"{operand(self.iexpr(d))} {op} {operand(self.iexpr(d))}", atom=False)
        if kind == "neg":
            return E(f"-{operand(self.iexpr(d))}", atom=False)
        if kind == "abs":
            return E(f"abs({self.iexpr(d).text})")
        if kind == "minmax":
            fn = self.one(("min", "max"))
            return E(f"{fn}({self.iexpr(d).text}, {self.iexpr(d).text})")
        if kind == "fromfloat":
            fn = self.one(("math.floor", "int", "math.ceil", "round"))
            return E(f"{fn}({self.fexpr(d).text})")
        if kind == "pow":
            return E(f"{operand(self.bounded_atom())} ** {self.one(('2', '0', '1', '3'))}", atom=False)
        if kind == "helper":
            return self.helper_call(self.one(self.helpers_returning("i")), d)
        return self.ifexp(self.iexpr, d)

    # -------------------------------------------------------------- conditions
    def compare(self, d: int) -> E:
        op = self.one(COMPARISONS)
        kind = self.pick((5, "float"), (2, "int"), (1, "mixed"), (1, "chain"))
        if kind == "float":
            left, right = self.fexpr(d), self.fexpr(d)
        elif kind == "int":
            left, right = self.iexpr(d), self.iexpr(d)
        elif kind == "mixed":
            left, right = self.iexpr(d), self.fexpr(d)
            if self.coin(50):
                left, right = right, left
        else:
            first, middle, last = self.fexpr(d), self.fexpr(d), self.fexpr(d)
            op2 = self.one(COMPARISONS)
            return E(f"{operand(first)} {op} {operand(middle)} {op2} {operand(last)}", atom=False)
        return E(f"{operand(left)} {op} {operand(right)}", atom=False)

    def cond(self, depth: int) -> E:
        d = max(depth - 1, 0)
        kind = self.pick((6, "cmp"), (1, "not"), (2, "and"), (2, "or"), (1, "truth"), (1, "pred"))
        if kind == "cmp" or depth <= 0:
            return self.compare(d)
        if kind == "not":
            return E(f"not {operand(self.cond(d))}", atom=False)
        if kind in ("and", "or"):
            return E(f"{operand(self.cond(d))} {kind} {operand(self.cond(d))}", atom=False)
        if kind == "truth":   # a number's truth value: `if x0:`
            return E(self.one(self.float_vars + self.int_vars()))
        fn = self.one(("math.isnan", "math.isinf", "math.isfinite"))
        return E(f"{fn}({self.fexpr(d).text})")
