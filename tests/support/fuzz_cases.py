"""What the fuzzer runs: a `Case` is one generated module (its function `f` is the one traced) and
the argument tuples to call it with, each argument a Python expression, so a case prints, travels
to a worker process as JSON, and replays exactly (`make_case(kind, seed)` is deterministic).

Kinds of programs:
    scalar   float/int programs with every construct program_gen has: `while True` ended by
             and/or/not tests, nested loops with break/continue, loop else, helper functions
             called from `f`, raise/assert, math errors (program_gen.Features())
    classic  the programs of tests/api/test_random_programs.py (program_gen.ORIGINAL)
    arrays   NumPy programs over float64/int64/float32/bool arrays (array_program_gen)
"""
from __future__ import annotations

import random
from dataclasses import asdict, dataclass, field

from array_program_gen import OPEN_BUGS, random_array_arguments, random_array_program
from program_gen import ORIGINAL, Features, random_arguments, random_program

KINDS = ("scalar", "arrays", "classic")
CALLS = 4                      # argument tuples per case


@dataclass
class Case:
    kind: str
    seed: int
    source: str
    calls: list = field(default_factory=list)     # [[argument expression, ...], ...]

    def to_json(self) -> dict:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> Case:
        return cls(data["kind"], data["seed"], data["source"], [list(c) for c in data["calls"]])

    def show(self) -> str:
        calls = "\n".join(f"    f({', '.join(c)})" for c in self.calls)
        return f"# kind {self.kind}, seed {self.seed}\n{self.source}\n# calls:\n{calls}\n"


def make_case(kind: str, seed: int, avoid=OPEN_BUGS) -> Case:
    """The case of `kind` for `seed`: the same on every run and machine."""
    rng = random.Random(f"{kind}:{seed}")
    if kind == "arrays":
        program = random_array_program(rng, avoid)
        calls = [list(random_array_arguments(rng, program, avoid)) for _ in range(CALLS)]
        return Case(kind, seed, program.source, calls)
    if kind not in ("scalar", "classic"):
        raise ValueError(f"unknown kind of program {kind!r} (kinds: {', '.join(KINDS)})")
    program = random_program(rng, Features() if kind == "scalar" else ORIGINAL)
    calls = [[repr(v) for v in random_arguments(rng, program)] for _ in range(CALLS)]
    return Case(kind, seed, program.source, calls)
