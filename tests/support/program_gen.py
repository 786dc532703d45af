"""Random plain-Python programs, as source text, for differential testing of `trace`.

`program_cases()` is a hypothesis strategy for a `Program` (a small module whose function `f` is
the one to trace) together with argument tuples for it; `random_program(rng)` and
`random_arguments(rng, program)` draw the same kind of program from a seeded `random.Random`
(the fuzzer, `python -m tests.fuzz`). `load_function(source)` turns the text into a function
whose code lives in a real `.py` file, so `inspect`, `linecache` and the tracer's file:line error
messages see its lines. `tests/api/test_random_programs.py` compiles each program with `trace` and
compares it with CPython. Expressions and conditions are drawn by `program_exprs.py`.

A generated program (one drawn at random, as printed):

    import math


    def h0(u, t):
        if u > t:
            raise ValueError("out of range")
        return u * 2.0


    def f(a, b, c, n):
        x0 = math.sin((-2.5))
        i0 = 0
        k0 = 0
        if (a <= c) and ((x0 > b) and (c <= n)):
            return math.tanh(c) != (c ** 2.0)
        b = h0(n / n, n + 1)
        while True:
            k0 += 1
            if (x0 > b) or k0 > n:
                break
            for i0 in range(n):
                if math.tanh(c) > a:
                    continue
                x0 += c
        else:
            x0 = 0.0
        return i0 == math.sqrt(a)

Rules that make every program valid Python that always terminates quickly:

- Every variable is assigned at the top of the function, before any branch, with a value of a
  fixed type: float variables (the float arguments `a b c` and locals `x0 x1 x2`) are only ever
  assigned float expressions, int variables (locals `j0 j1`) only int expressions. Mixing goes
  through `float(int)`, `int / int`, `math.floor`/`math.ceil`/`int`/`round` of a float.
- The int arguments (`n m`), `for` variables (`i0 i1 i2`) and `while` counters (`k0 k1 k2`) are
  never assigned by the body: they are *bounded* (|value| <= ~30), and only bounded expressions
  (such an atom, or a small constant, plus or minus a small constant) are `range` bounds, `while`
  limits and int arguments of helper functions. At most two loops nest (one in a helper), so no
  body runs more than ~1000 times.
- Every `while` has a counter reset right before it and incremented as the first statement of
  its body, checked in the condition (`while k0 < n and x0 < 10.0:`) or by a break right after
  the increment (`if k0 > n: break`; in `while True:` loops also `if x0 > b or k0 > n: break`,
  `if not (k0 <= n and x0 > b): break`, ...), or by a break at the end of a body that has no
  `continue` of its own, so it always makes progress.
- Int values cannot blow up: `*` of two ints needs a bounded operand and `**` of ints has a
  bounded base and an exponent in 0..3 (no repeated squaring in a loop); `**` of floats has a
  constant exponent, a non-integral one only on `abs(...)` (no complex results).
- `return`, `break`, `continue` and `raise` end an `if` branch (early exits are guarded); the
  function ends with a `return`. All returns of one function return the same shape of value (a
  float, an int, a bool or a tuple of them); a helper returns a float or an int.
- Helper functions (`h0`, `h1`: `Features.helpers`) come before `f`; a helper calls only the
  ones before it, so nothing recurses.

Exceptions are allowed and expected (ZeroDivisionError, ValueError: math domain error,
OverflowError, the program's own `raise ValueError("...")` and `assert`, ...): the test compares
them with CPython's. The first choice of every draw is the simplest one, so hypothesis shrinks a
failing program to a short one. Bodies have at most `MAX_LINES` lines (plus the initializations
and a few closing lines: ~25 statements at most).
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

from program_exprs import (
    ExpressionGenerator,
    Helper,
    hypothesis_choices,
    operand,
    random_choices,
)

FLOAT_ARGS = ("a", "b", "c")
INT_ARGS = ("n", "m")
FLOAT_LOCALS = ("x0", "x1", "x2")
INT_LOCALS = ("j0", "j1")
LOOP_VARS = ("i0", "i1", "i2")
COUNTERS = ("k0", "k1", "k2")

MAX_LINES = 18             # lines of the body, the initializations at the top not counted
MAX_NESTING = 3            # nested if/for/while
MAX_LOOP_NESTING = 2
HELPER_LINES = 6           # the same for a helper function
HELPER_LOOP_NESTING = 1

INT_ARG_RANGE = (0, 20)    # what `arguments()` draws for the int arguments

RETURN_SHAPES = ("f", "i", "fi", "ff", "b", "if", "fb", "fff")
EXCEPTIONS = ("ValueError", "ZeroDivisionError", "OverflowError", "RuntimeError", "ArithmeticError")
MESSAGES = ("bad value", "out of range", "negative", "no convergence", "")


@dataclass(frozen=True)
class Features:
    """Which constructs programs may use beyond the original ones (if/elif/else, for over
    range, while with a counter, break/continue/return, float and int arithmetic, math)."""
    while_true: bool = True   # `while True:` ended by and/or/not tests, or by a break at the end
    loop_else: bool = True    # `while ... else:` and `for ... else:`
    helpers: bool = True      # helper functions in the same module, called from `f`
    raises: bool = True       # `raise SomeError("...")` and `assert` on a condition


ORIGINAL = Features(while_true=False, loop_else=False, helpers=False, raises=False)


@dataclass(frozen=True)
class Program:
    source: str
    float_params: tuple[str, ...]
    int_params: tuple[str, ...]
    name: str = "f"

    @property
    def params(self) -> tuple[str, ...]:
        return self.float_params + self.int_params


class ProgramGenerator(ExpressionGenerator):
    def __init__(self, choose, float_params, int_params, float_locals, int_locals, shape,
                 features: Features = ORIGINAL, helpers=(), max_lines=MAX_LINES, max_loops=MAX_LOOP_NESTING):
        super().__init__(choose, float_params, int_params, helpers)
        self.shape = shape
        self.features = features
        self.max_lines = max_lines
        self.max_loops = max_loops
        self.left = 0
        self.lines: list[str] = []
        self._float_locals = float_locals
        self._int_locals = int_locals
        self.prelude: list[str] = []      # `name = value` lines before the locals' (array programs)

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
        count = self.choose(1, 4)
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
        can_loop = can_nest and loops < self.max_loops
        simple = 0 if control_flow else 1
        raises = simple if self.features.raises and nesting < MAX_NESTING else 0
        w = 2 if self.features.raises else 1      # (the original programs' weights, without raises)
        kind = self.pick(
            (4 * w * simple, "fassign"), (2 * w * simple if self.int_locals else 0, "iassign"),
            (2 * w * simple, "aug"), (4 * w if can_nest else 0, "if"),
            (3 * w if can_loop and len(self.loop_vars) < len(LOOP_VARS) else 0, "for"),
            (3 * w if can_loop and len(self.counters) < len(COUNTERS) else 0, "while"),
            (2 * w * simple if nesting < MAX_NESTING else 0, "exit"),
            (raises, "raise"), (raises, "assert"))
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
            self.for_statement(indent, nesting, loops, exits)
        elif kind == "while":
            self.while_statement(indent, nesting, loops, exits)
        elif kind == "raise":
            self.emit(indent, f"if {self.cond(self.expr_depth()).text}:")
            self.emit(indent + 1, self.raise_statement())
        elif kind == "assert":
            message = self.one(MESSAGES)
            self.emit(indent, f"assert {self.cond(self.expr_depth()).text}" + (f", {message!r}" if message else ""))
        else:   # a guarded early exit: if cond: [statement] return/break/continue
            self.emit(indent, f"if {self.cond(self.expr_depth()).text}:")
            if self.left > 0 and self.coin(30):
                self.simple_assignment(indent + 1)
            self.exit(indent + 1, exits)

    def raise_statement(self) -> str:
        message = self.one(MESSAGES)
        return f"raise {self.one(EXCEPTIONS)}({message!r})" if message else f"raise {self.one(EXCEPTIONS)}"

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
        jump = "raise" if self.features.raises and self.coin(10) else self.one(exits)
        if jump == "return":
            self.emit(indent, f"return {self.return_value()}")
        else:
            self.emit(indent, self.raise_statement() if jump == "raise" else jump)

    def branch_body(self, indent: int, nesting: int, loops: int, exits: tuple[str, ...]):
        self.block(indent, nesting, loops, exits)
        if self.coin(25):   # an early return / break / continue ending the branch
            self.exit(indent, exits)

    def if_statement(self, indent, nesting, loops, exits):
        self.emit(indent, f"if {self.cond(self.expr_depth()).text}:")
        self.branch_body(indent + 1, nesting + 1, loops, exits)
        for _ in range(self.choose(0, 2)):
            if self.left <= 0:
                break
            self.emit(indent, f"elif {self.cond(self.expr_depth()).text}:")
            self.branch_body(indent + 1, nesting + 1, loops, exits)
        if self.left > 0 and self.coin(50):
            self.emit(indent, "else:")
            self.branch_body(indent + 1, nesting + 1, loops, exits)

    def loop_else(self, indent, nesting, loops, exits):
        """An `else:` after a loop (it runs when the loop ends without a break): a statement
        of the enclosing block, which may leave by the enclosing block's exits."""
        if self.features.loop_else and self.left > 0 and self.coin(20):
            self.emit(indent, "else:")
            self.branch_body(indent + 1, nesting + 1, loops, exits)

    def for_statement(self, indent, nesting, loops, exits=("return",)):
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
        self.loop_else(indent, nesting, loops, exits)

    def while_statement(self, indent, nesting, loops, exits=("return",)):
        counter = COUNTERS[len(self.counters)]
        limit = self.bounded().text
        more = 3 if self.features.while_true else 0
        form = self.pick((3, "cond"), (2, "break"), (1, "true"), (more, "short-circuit"), (more // 2, "tail"))
        self.emit(indent, f"{counter} = 0")
        body_exits = ("break", "continue", "return")
        if form == "cond":
            self.emit(indent, f"while {counter} < {limit} and {operand(self.cond(self.expr_depth()))}:")
            self.emit(indent + 1, f"{counter} += 1")
        elif form == "break":
            self.emit(indent, f"while {self.cond(self.expr_depth()).text}:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {limit}:")
            self.emit(indent + 2, "break")
        elif form == "true":
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {counter} > {limit} or {operand(self.cond(self.expr_depth()))}:")
            self.emit(indent + 2, "break")
        elif form == "short-circuit":   # the limit test anywhere in an and/or/not chain
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            self.emit(indent + 1, f"if {self.break_test(counter, limit)}:")
            self.emit(indent + 2, "break")
        else:   # the test at the end of the body, which has no continue of its own
            self.emit(indent, "while True:")
            self.emit(indent + 1, f"{counter} += 1")
            body_exits = ("break", "return")
        self.counters.append(counter)
        self.block(indent + 1, nesting + 1, loops + 1, body_exits)
        if form == "tail":
            self.emit(indent + 1, f"if {self.break_test(counter, limit)}:")
            self.emit(indent + 2, "break")
        elif form in ("cond", "break"):
            self.loop_else(indent, nesting, loops, exits)

    def break_test(self, counter: str, limit: str) -> str:
        """A condition that holds whenever `counter > limit` (and maybe sooner)."""
        c = operand(self.cond(self.expr_depth()))
        form = self.pick((2, "first"), (2, "last"), (1, "not"), (1, "and-or"), (1, "nested"))
        if form == "first":
            return f"{counter} > {limit} or {c}"
        if form == "last":
            return f"{c} or {counter} > {limit}"
        if form == "not":
            return f"not ({counter} <= {limit} and {c})"
        if form == "and-or":
            return f"{c} and {operand(self.cond(self.expr_depth()))} or {counter} > {limit}"
        return f"({c} or {counter} >= {limit}) and ({counter} > {limit} or {operand(self.cond(1))})"

    # -------------------------------------------------------------- the function
    def function(self, name: str = "f") -> list[str]:
        """The lines of `def name(...)`."""
        inits = list(self.prelude)
        for local in self._float_locals:
            inits.append(f"{local} = {self.fexpr(self.choose(0, 1)).text}")
            self.float_vars.append(local)
        for local in self._int_locals:
            inits.append(f"{local} = {self.iexpr(self.choose(0, 1)).text}")
            self.int_locals.append(local)
        self.left = self.choose(3, self.max_lines)
        if self.coin(75):   # most programs have control flow (shrinking drops it if it can)
            self.statement(1, 0, 0, ("return",), control_flow=True)
        if self.left > 0 or not self.lines:
            self.block(1, 0, 0, ("return",))
        while self.left > 0 and self.coin(60):   # more top-level statements, up to the budget
            self.statement(1, 0, 0, ("return",))
        self.emit(1, f"return {self.return_value()}")
        # for variables and counters are assigned at the top: a loop that runs zero times, or
        # sits in a branch not taken, leaves them defined
        inits += [f"{local} = 0" for local in self.loop_vars + self.counters]
        inits = _used_initializations(inits, self.lines)
        params = ", ".join(self.float_params + self.int_params)
        return [f"def {name}({params}):"] + ["    " + line for line in inits] + self.lines


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


def _helper(choose, index: int, earlier: list[Helper], features: Features) -> tuple[Helper, list[str]]:
    """A helper function: one or two float parameters and maybe a bounded int one; it returns a
    float or an int and may call the helpers before it."""
    params = ("u", "v")[:choose(1, 2)]
    int_params = ("t",) if choose(0, 1) else ()
    returns = "fi"[choose(0, 1)] if choose(0, 3) == 0 else "f"
    gen = ProgramGenerator(choose, params, int_params, ("y0",), (), returns, features, earlier,
                     max_lines=HELPER_LINES, max_loops=HELPER_LOOP_NESTING)
    helper = Helper(f"h{index}", tuple("f" for _ in params) + tuple("i" for _ in int_params), returns)
    return helper, gen.function(helper.name)


def generate(choose, features: Features = ORIGINAL) -> Program:
    """A program from `choose(lo, hi)` (see program_exprs): the module's source and f's parameters."""
    float_params = FLOAT_ARGS[:choose(1, len(FLOAT_ARGS))]
    int_params = INT_ARGS[:choose(1, len(INT_ARGS))]
    float_locals = FLOAT_LOCALS[:choose(1, len(FLOAT_LOCALS))]
    int_locals = INT_LOCALS[:choose(0, len(INT_LOCALS))]
    shape = RETURN_SHAPES[choose(0, len(RETURN_SHAPES) - 1)]
    helpers, lines = [], ["import math", "", ""]
    for i in range(choose(0, 2) if features.helpers else 0):
        helper, helper_lines = _helper(choose, i, helpers, features)
        helpers.append(helper)
        lines += helper_lines + ["", ""]
    gen = ProgramGenerator(choose, float_params, int_params, float_locals, int_locals, shape, features, helpers)
    lines += gen.function()
    return Program("\n".join(lines) + "\n", float_params, int_params)


def random_program(rng, features: Features = Features()) -> Program:
    """A program drawn from a seeded `random.Random`: the same seed gives the same program."""
    return generate(random_choices(rng), features)


def programs(features: Features = ORIGINAL):
    """A hypothesis strategy: a small valid Python module whose function `f` takes float
    parameters first, then int ones."""
    from hypothesis import strategies as st
    return st.composite(lambda draw: generate(hypothesis_choices(draw), features))()


# ---------------------------------------------------------------------------- arguments
EDGE_FLOATS = (0.0, -0.0, 1.0, -1.0, 0.5, 2.0, -3.0, 10.0, 100.0, -100.0, 1e-300, 5e-324,
               1e300, -1e300, 1.7976931348623157e308, 709.0, -745.0,
               math.inf, -math.inf, math.nan)


def arguments(program: Program):
    """One argument tuple for `program` (a hypothesis strategy): floats (edge values, nan and
    inf included), small ints."""
    from hypothesis import strategies as st
    floats = st.one_of(st.sampled_from(EDGE_FLOATS), st.floats(-10.0, 10.0), st.floats(-1e6, 1e6),
                       st.floats(allow_nan=False, allow_infinity=False))
    ints = st.one_of(st.integers(0, 6), st.integers(*INT_ARG_RANGE))
    return st.tuples(*[floats] * len(program.float_params), *[ints] * len(program.int_params))


def random_float(rng) -> float:
    kind = rng.randrange(4)
    if kind == 0:
        return rng.choice(EDGE_FLOATS)
    if kind == 1:
        return rng.uniform(-10.0, 10.0)
    if kind == 2:
        return float(rng.randint(-5, 5)) / rng.choice((1, 2, 4))
    return rng.uniform(-1e6, 1e6)


def random_arguments(rng, program: Program) -> tuple:
    """One argument tuple for `program` from a seeded `random.Random`, as `arguments` draws."""
    ints = [rng.randint(0, 6) if rng.randrange(2) else rng.randint(-3, INT_ARG_RANGE[1])
            for _ in program.int_params]
    return tuple(random_float(rng) for _ in program.float_params) + tuple(ints)


def program_cases(min_calls: int = 1, max_calls: int = 5, features: Features = ORIGINAL):
    """A hypothesis strategy: (program, [argument tuples])."""
    from hypothesis import strategies as st

    @st.composite
    def cases(draw):
        program = draw(programs(features))
        calls = draw(st.lists(arguments(program), min_size=min_calls, max_size=max_calls))
        return program, calls
    return cases()


# ---------------------------------------------------------------------------- loading
_DIRECTORY: str | None = os.environ.get("TRACER_PROGRAM_DIR")


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


def load_module(source: str) -> dict:
    """The namespace `source` defines, compiled from a real file (see `source_path`)."""
    path = source_path(source)
    namespace = {"__name__": f"random_program_{os.path.basename(path)[:-3]}", "__file__": path}
    exec(compile(source, path, "exec"), namespace)
    return namespace


def load_function(source: str, name: str = "f"):
    """The function `name` defined by `source`, compiled from a real file (see `source_path`)."""
    return load_module(source)[name]
