"""Random plain-Python programs, as source text, for differential testing of `trace`.

`program_cases()` is a hypothesis strategy for a `Program` (a small function `f` as source text)
together with argument tuples for it; `load_function(source)` turns the text into a function
whose code lives in a real `.py` file, so `inspect`, `linecache` and the tracer's file:line error
messages see its lines. `tests/api/test_random_programs.py` compiles each program with `trace` and
compares it with CPython.

A generated program (one drawn at random, as printed):

    import math


    def f(a, b, c, n):
        x0 = math.sin((-2.5))
        i0 = 0
        i1 = 0
        if (a <= c) and ((x0 > b) and (c <= n)):
            c = c
            return math.tanh(c) != (c ** 2.0)
        b = n / n
        for i0 in range(n):
            for i1 in range(i0):
                if math.tanh(c) > a:
                    return ((i1 % i0) - (i0 // n)) < i1
        return i1 == math.sqrt(a)

Rules that make every program valid Python that always terminates quickly:

- Every variable is assigned at the top of the function, before any branch, with a value of a
  fixed type: float variables (the float arguments `a b c` and locals `x0 x1 x2`) are only ever
  assigned float expressions, int variables (locals `j0 j1`) only int expressions. Mixing goes
  through `float(int)`, `int / int`, `math.floor`/`math.ceil`/`int`/`round` of a float.
- The int arguments (`n m`), `for` variables (`i0 i1 i2`) and `while` counters (`k0 k1 k2`) are
  never assigned by the body: they are *bounded* (|value| <= ~30), and only bounded expressions
  (such an atom, or a small constant, plus or minus a small constant) are `range` bounds and
  `while` limits. At most two loops nest, so no body runs more than ~1000 times.
- Every `while` has a counter reset right before it and incremented as the first statement of
  its body, checked in the condition (`while k0 < n and x0 < 10.0:`) or by a break right after
  the increment (`if k0 > n: break`, also in `while True:` loops), so it always makes
  progress.
- Int values cannot blow up: `*` of two ints needs a bounded operand and `**` of ints has a
  bounded base and an exponent in 0..3 (no repeated squaring in a loop); `**` of floats has a
  constant exponent, a non-integral one only on `abs(...)` (no complex results).
- `return`, `break` and `continue` end an `if` branch (early exits are guarded); the function
  ends with a `return`. All returns of one program return the same shape of value (a float, an
  int, a bool or a tuple of them).

Exceptions are allowed and expected (ZeroDivisionError, ValueError: math domain error,
OverflowError, ...): the test compares them with CPython's. The first choice of every draw is
the simplest one, so hypothesis shrinks a failing program to a short one. Bodies have at most
`MAX_LINES` lines (plus the initializations and a few closing lines: ~25 statements at most).
"""
from __future__ import annotations

import atexit
import hashlib
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass

from hypothesis import strategies as st

FLOAT_ARGS = ("a", "b", "c")
INT_ARGS = ("n", "m")
FLOAT_LOCALS = ("x0", "x1", "x2")
INT_LOCALS = ("j0", "j1")
LOOP_VARS = ("i0", "i1", "i2")
COUNTERS = ("k0", "k1", "k2")

MAX_LINES = 18             # lines of the body, the initializations at the top not counted
MAX_NESTING = 3            # nested if/for/while
MAX_LOOP_NESTING = 2
MAX_EXPR_DEPTH = 3

INT_ARG_RANGE = (0, 20)    # what `arguments()` draws for the int arguments

FLOAT_CONSTANTS = ("1.0", "2.0", "0.5", "0.0", "-1.0", "3.0", "10.0", "100.0", "-2.5", "0.001",
                   "1e+200", "1e-200", "math.pi")
INT_CONSTANTS = ("1", "2", "0", "3", "-1", "5", "10", "-3", "7")
SMALL_BOUNDS = ("3", "0", "1", "5", "8", "-2")

RETURN_SHAPES = ("f", "i", "fi", "ff", "b", "if", "fb", "fff")
COMPARISONS = ("<", ">", "<=", ">=", "==", "!=")


@dataclass(frozen=True)
class Program:
    source: str
    float_params: tuple[str, ...]
    int_params: tuple[str, ...]
    name: str = "f"

    @property
    def params(self) -> tuple[str, ...]:
        return self.float_params + self.int_params


# ---------------------------------------------------------------------------- expressions
@dataclass(frozen=True)
class E:
    """An expression's text; `atom` when it needs no parentheses as an operand."""
    text: str
    atom: bool = True


def _operand(e: E) -> str:
    return e.text if e.atom else f"({e.text})"


def _const(text: str) -> E:
    return E(f"({text})" if text.startswith("-") else text)


class _Generator:
    def __init__(self, draw, float_params, int_params, float_locals, int_locals, shape):
        self.draw = draw
        self.float_params = float_params
        self.int_params = int_params
        self.float_vars: list[str] = list(float_params)
        self.int_locals: list[str] = []
        self.loop_vars: list[str] = []          # allocated so far, in text order
        self.counters: list[str] = []
        self.shape = shape
        self.left = 0
        self.lines: list[str] = []
        self._float_locals = float_locals
        self._int_locals = int_locals

    # -------------------------------------------------------------- choices
    def pick(self, *weighted):
        """One of `(weight, value)` pairs; shrinks towards the first."""
        options = [(w, v) for w, v in weighted if w > 0]
        total = sum(w for w, _ in options)
        k = self.draw(st.integers(0, total - 1))
        for w, v in options:
            if k < w:
                return v
            k -= w
        raise AssertionError("unreachable")

    def one(self, seq):
        return seq[self.draw(st.integers(0, len(seq) - 1))]

    def coin(self, percent: int) -> bool:
        """True with about `percent`% probability; shrinks to False."""
        return self.draw(st.integers(0, 99)) >= 100 - percent

    # -------------------------------------------------------------- float expressions
    def fleaf(self) -> E:
        if self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(self.float_vars))
        return _const(self.one(FLOAT_CONSTANTS))

    def fexpr(self, depth: int) -> E:
        if depth <= 0:
            return self.fleaf()
        kind = self.pick((10, "leaf"), (6, "bin"), (1, "neg"), (3, "call1"), (2, "call2"),
                         (1, "pow"), (1, "float"), (1, "intdiv"), (1, "ifexp"))
        d = depth - 1
        if kind == "leaf":
            return self.fleaf()
        if kind == "bin":
            op = self.pick((3, "+"), (3, "-"), (3, "*"), (2, "/"), (1, "//"), (1, "%"))
            return E(f"{_operand(self.fexpr(d))} {op} {_operand(self.fexpr(d))}", atom=False)
        if kind == "neg":
            return E(f"-{_operand(self.fexpr(d))}", atom=False)
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
            return E(f"{_operand(base)} ** {_operand(_const(exponent))}", atom=False)
        if kind == "float":
            return E(f"float({self.iexpr(d).text})")
        if kind == "intdiv":
            return E(f"{_operand(self.iexpr(d))} / {_operand(self.iexpr(d))}", atom=False)
        return self.ifexp(self.fexpr, d)

    def ifexp(self, make, d) -> E:
        body, test, orelse = make(d), self.cond(d), make(d)
        return E(f"({body.text} if {test.text} else {orelse.text})")

    # -------------------------------------------------------------- int expressions
    def int_vars(self) -> list[str]:
        return self.int_locals + list(self.int_params) + self.loop_vars + self.counters

    def bounded_atoms(self) -> list[str]:
        return list(self.int_params) + self.loop_vars + self.counters

    def bounded_atom(self) -> E:
        atoms = self.bounded_atoms()
        if atoms and self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(atoms))
        return _const(self.one(SMALL_BOUNDS))

    def bounded(self) -> E:
        """An int with |value| <= ~30: a range bound or a while limit."""
        atom = self.bounded_atom()
        kind = self.pick((4, "atom"), (1, "+"), (1, "-"))
        if kind == "atom":
            return atom
        return E(f"{atom.text} {kind} {self.one(('1', '2', '3'))}", atom=False)

    def ileaf(self) -> E:
        if self.pick((3, "var"), (1, "const")) == "var":
            return E(self.one(self.int_vars()))
        return _const(self.one(INT_CONSTANTS))

    def iexpr(self, depth: int) -> E:
        if depth <= 0:
            return self.ileaf()
        d = depth - 1
        kind = self.pick((10, "leaf"), (4, "addsub"), (2, "mul"), (2, "divmod"), (1, "neg"),
                         (1, "abs"), (1, "minmax"), (2, "fromfloat"), (1, "pow"), (1, "ifexp"))
        if kind == "leaf":
            return self.ileaf()
        if kind == "addsub":
            op = self.one(("+", "-"))
            return E(f"{_operand(self.iexpr(d))} {op} {_operand(self.iexpr(d))}", atom=False)
        if kind == "mul":   # one operand bounded: ints grow by a few bits per product, never squared
            left, right = self.iexpr(d), self.bounded_atom()
            if self.coin(50):
                left, right = right, left
            return E(f"{_operand(left)} * {_operand(right)}", atom=False)
        if kind == "divmod":
            op = self.one(("//", "%"))
            return E(f"{_operand(self.iexpr(d))} {op} {_operand(self.iexpr(d))}", atom=False)
        if kind == "neg":
            return E(f"-{_operand(self.iexpr(d))}", atom=False)
        if kind == "abs":
            return E(f"abs({self.iexpr(d).text})")
        if kind == "minmax":
            fn = self.one(("min", "max"))
            return E(f"{fn}({self.iexpr(d).text}, {self.iexpr(d).text})")
        if kind == "fromfloat":
            fn = self.one(("math.floor", "int", "math.ceil", "round"))
            return E(f"{fn}({self.fexpr(d).text})")
        if kind == "pow":
            return E(f"{_operand(self.bounded_atom())} ** {self.one(('2', '0', '1', '3'))}", atom=False)
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
            return E(f"{_operand(first)} {op} {_operand(middle)} {op2} {_operand(last)}", atom=False)
        return E(f"{_operand(left)} {op} {_operand(right)}", atom=False)

    def cond(self, depth: int) -> E:
        d = max(depth - 1, 0)
        kind = self.pick((6, "cmp"), (1, "not"), (2, "and"), (2, "or"), (1, "truth"), (1, "pred"))
        if kind == "cmp" or depth <= 0:
            return self.compare(d)
        if kind == "not":
            return E(f"not {_operand(self.cond(d))}", atom=False)
        if kind in ("and", "or"):
            return E(f"{_operand(self.cond(d))} {kind} {_operand(self.cond(d))}", atom=False)
        if kind == "truth":   # a number's truth value: `if x0:`
            return E(self.one(self.float_vars + self.int_vars()))
        fn = self.one(("math.isnan", "math.isinf", "math.isfinite"))
        return E(f"{fn}({self.fexpr(d).text})")

    def expr_depth(self) -> int:
        return self.draw(st.integers(1, MAX_EXPR_DEPTH))

    # -------------------------------------------------------------- statements
    def emit(self, indent: int, text: str):
        self.lines.append("    " * indent + text)
        self.left -= 1

    def return_value(self) -> str:
        parts = []
        for kind in self.shape:
            if kind == "f":
                parts.append(self.fexpr(self.expr_depth()).text)
            elif kind == "i":
                parts.append(self.iexpr(self.expr_depth()).text)
            else:   # a comparison is a bool (a truth-value atom or `and` of numbers need not be)
                parts.append(self.compare(self.expr_depth() - 1).text)
        return ", ".join(parts)

    def block(self, indent: int, nesting: int, loops: int, exits: tuple[str, ...]):
        """1-4 statements at `indent`; `exits` are the jumps allowed at the end of a branch."""
        count = self.draw(st.integers(1, 4))
        emitted = 0
        for _ in range(count):
            if self.left <= 0:
                break
            self.statement(indent, nesting, loops, exits)
            emitted += 1
        if not emitted:
            self.emit(indent, "pass")

    def statement(self, indent: int, nesting: int, loops: int, exits: tuple[str, ...],
                  control_flow: bool = False):
        """One statement; with `control_flow`, an if, for or while."""
        can_nest = nesting < MAX_NESTING and self.left >= 3
        can_loop = can_nest and loops < MAX_LOOP_NESTING
        simple = 0 if control_flow else 1
        kind = self.pick(
            (4 * simple, "fassign"), (2 * simple if self.int_locals else 0, "iassign"), (2 * simple, "aug"),
            (4 if can_nest else 0, "if"),
            (3 if can_loop and len(self.loop_vars) < len(LOOP_VARS) else 0, "for"),
            (3 if can_loop and len(self.counters) < len(COUNTERS) else 0, "while"),
            (2 * simple if nesting < MAX_NESTING else 0, "exit"))
        if kind == "fassign":
            target = self.one(self.float_vars)
            self.emit(indent, f"{target} = {self.fexpr(self.expr_depth()).text}")
        elif kind == "iassign":
            target = self.one(self.int_locals)
            self.emit(indent, f"{target} = {self.iexpr(self.expr_depth()).text}")
        elif kind == "aug":
            self.augmented(indent)
        elif kind == "if":
            self.if_statement(indent, nesting, loops, exits)
        elif kind == "for":
            self.for_statement(indent, nesting, loops)
        elif kind == "while":
            self.while_statement(indent, nesting, loops)
        else:   # a guarded early exit: if cond: [statement] return/break/continue
            self.emit(indent, f"if {self.cond(self.expr_depth()).text}:")
            if self.left > 0 and self.coin(30):
                self.simple_assignment(indent + 1)
            self.exit(indent + 1, exits)

    def simple_assignment(self, indent: int):
        if self.int_locals and self.coin(30):
            self.emit(indent, f"{self.one(self.int_locals)} = {self.iexpr(self.expr_depth()).text}")
        else:
            self.emit(indent, f"{self.one(self.float_vars)} = {self.fexpr(self.expr_depth()).text}")

    def augmented(self, indent: int):
        if self.int_locals and self.coin(35):
            target = self.one(self.int_locals)
            op = self.one(("+=", "-=", "*=", "//=", "%="))
            value = self.bounded_atom() if op == "*=" else self.iexpr(self.expr_depth())
        else:
            target = self.one(self.float_vars)
            op = self.one(("+=", "-=", "*=", "/="))
            value = self.fexpr(self.expr_depth())
        self.emit(indent, f"{target} {op} {value.text}")

    def exit(self, indent: int, exits: tuple[str, ...]):
        jump = self.one(exits)
        self.emit(indent, f"return {self.return_value()}" if jump == "return" else jump)

    def branch_body(self, indent: int, nesting: int, loops: int, exits: tuple[str, ...]):
        self.block(indent, nesting, loops, exits)
        if self.coin(25):   # an early return / break / continue ending the branch
            self.exit(indent, exits)

    def if_statement(self, indent, nesting, loops, exits):
        self.emit(indent, f"if {self.cond(self.expr_depth()).text}:")
        self.branch_body(indent + 1, nesting + 1, loops, exits)
        for _ in range(self.draw(st.integers(0, 2))):
            if self.left <= 0:
                break
            self.emit(indent, f"elif {self.cond(self.expr_depth()).text}:")
            self.branch_body(indent + 1, nesting + 1, loops, exits)
        if self.left > 0 and self.coin(50):
            self.emit(indent, "else:")
            self.branch_body(indent + 1, nesting + 1, loops, exits)

    def for_statement(self, indent, nesting, loops):
        var = LOOP_VARS[len(self.loop_vars)]
        form = self.pick((3, "range(n)"), (2, "range(lo, hi)"), (2, "range(lo, hi, step)"))
        if form == "range(n)":
            args = self.bounded().text
        elif form == "range(lo, hi)":
            args = f"{self.bounded().text}, {self.bounded().text}"
        else:
            step = self.one(("2", "-1", "3", "-2", "1", "-3"))
            args = f"{self.bounded().text}, {self.bounded().text}, {step}"
        self.emit(indent, f"for {var} in range({args}):")
        self.loop_vars.append(var)   # usable in the body, and after the loop (initialized at the top)
        self.block(indent + 1, nesting + 1, loops + 1, ("break", "continue", "return"))

    def while_statement(self, indent, nesting, loops):
        counter = COUNTERS[len(self.counters)]
        limit = self.bounded().text
        form = self.pick((3, "cond"), (2, "break"), (1, "true"))
        self.emit(indent, f"{counter} = 0")
        if form == "cond":
            self.emit(indent, f"while {counter} < {limit} and {_operand(self.cond(self.expr_depth()))}:")
            self.emit(indent + 1, f"{counter} += 1")
        elif form == "break":
            self.emit(indent, f"while {self.cond(self.expr_depth()).text}:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {limit}:")
            self.emit(indent + 2, "break")
        else:
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {limit} or {_operand(self.cond(self.expr_depth()))}:")
            self.emit(indent + 2, "break")
        self.counters.append(counter)
        self.block(indent + 1, nesting + 1, loops + 1, ("break", "continue", "return"))

    # -------------------------------------------------------------- the function
    def function(self) -> str:
        inits = []
        for name in self._float_locals:
            inits.append(f"{name} = {self.fexpr(self.draw(st.integers(0, 1))).text}")
            self.float_vars.append(name)
        for name in self._int_locals:
            inits.append(f"{name} = {self.iexpr(self.draw(st.integers(0, 1))).text}")
            self.int_locals.append(name)
        self.left = self.draw(st.integers(3, MAX_LINES))
        if self.coin(75):   # most programs have control flow (shrinking drops it if it can)
            self.statement(1, 0, 0, ("return",), control_flow=True)
        if self.left > 0 or not self.lines:
            self.block(1, 0, 0, ("return",))
        while self.left > 0 and self.coin(60):   # more top-level statements, up to the budget
            self.statement(1, 0, 0, ("return",))
        self.emit(1, f"return {self.return_value()}")
        # for variables and counters are assigned at the top: a loop that runs zero times, or
        # sits in a branch not taken, leaves them defined
        inits += [f"{name} = 0" for name in self.loop_vars + self.counters]
        inits = _used_initializations(inits, self.lines)
        params = ", ".join(self.float_params + self.int_params)
        header = ["import math", "", "", f"def f({params}):"]
        return "\n".join(header + ["    " + line for line in inits] + self.lines) + "\n"


def _used_initializations(inits: list[str], body: list[str]) -> list[str]:
    """The `name = value` lines of `inits` whose name the body (or a kept line) mentions.

    Dropping the others keeps shrunk programs short: hypothesis cannot always shrink the number
    of locals (that shifts every later draw), but an unused local no longer shows.
    """
    text = "\n".join(body)
    kept = []
    for line in reversed(inits):
        name, value = line.split(" = ", 1)
        if re.search(rf"\b{name}\b", text):
            kept.append(line)
            text += "\n" + value
    return kept[::-1]


@st.composite
def programs(draw) -> Program:
    """A small valid Python function `f` (float parameters first, then int ones) as source."""
    float_params = FLOAT_ARGS[:draw(st.integers(1, len(FLOAT_ARGS)))]
    int_params = INT_ARGS[:draw(st.integers(1, len(INT_ARGS)))]
    float_locals = FLOAT_LOCALS[:draw(st.integers(1, len(FLOAT_LOCALS)))]
    int_locals = INT_LOCALS[:draw(st.integers(0, len(INT_LOCALS)))]
    shape = draw(st.sampled_from(RETURN_SHAPES))
    gen = _Generator(draw, float_params, int_params, float_locals, int_locals, shape)
    return Program(gen.function(), float_params, int_params)


# ---------------------------------------------------------------------------- arguments
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 10.0, 100.0, -100.0, 1e-300, 5e-324,
               1e300, -1e300, 1.7976931348623157e308, 709.0, -745.0,
               math.inf, -math.inf, math.nan)
FLOATS = st.one_of(
    st.sampled_from(EDGE_FLOATS),
    st.floats(-10.0, 10.0),
    st.floats(-1e6, 1e6),
    st.floats(allow_nan=False, allow_infinity=False),
)
INTS = st.one_of(st.integers(0, 6), st.integers(*INT_ARG_RANGE))


def arguments(program: Program) -> st.SearchStrategy[tuple]:
    """One argument tuple for `program`: floats (edge values, nan and inf included), small ints."""
    return st.tuples(*[FLOATS] * len(program.float_params), *[INTS] * len(program.int_params))


@st.composite
def program_cases(draw, min_calls: int = 1, max_calls: int = 5):
    """(program, [argument tuples])."""
    program = draw(programs())
    calls = draw(st.lists(arguments(program), min_size=min_calls, max_size=max_calls))
    return program, calls


# ---------------------------------------------------------------------------- loading
_DIRECTORY: str | None = None


def _directory() -> str:
    global _DIRECTORY
    if _DIRECTORY is None:
        _DIRECTORY = tempfile.mkdtemp(prefix="tracer_random_programs_")
        atexit.register(shutil.rmtree, _DIRECTORY, True)
    return _DIRECTORY


def source_path(source: str) -> str:
    """A `.py` file holding `source`; named by its content, so linecache never sees a stale copy."""
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    path = os.path.join(_directory(), f"program_{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as f:
            f.write(source)
    return path


def load_function(source: str, name: str = "f"):
    """The function `name` defined by `source`, compiled from a real file (see `source_path`)."""
    path = source_path(source)
    namespace = {"__name__": f"random_program_{os.path.basename(path)[:-3]}", "__file__": path}
    exec(compile(source, path, "exec"), namespace)
    return namespace[name]
