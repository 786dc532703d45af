"""The back end's op table: how each IR op becomes LLVM IR, keyed by op and operand type.

A lowering is `(k: KernelBuilder, v: ir.Value, *operands) -> LLVM value` (a tuple for tuples,
an `ArrayValue` for arrays), where `operands` are the LLVM values of `v.args`. Each module
registers its rules next to their definitions, with `@lowers`:

    @lowers("add", on=F64)          # the rule for add when its (first) operand is an f64
    def add_f64(k, v, a, b): ...
    @lowers("tuple")                # on=None: the rule for any operand type
    def make_tuple(k, v, *xs): ...

`lowering_for(v)` finds the rule for a value: the one for the exact type of its first operand,
else its op's any-type rule. The rules live in codegen.scalars (numbers), codegen.lower
(tuples, control flow), codegen.arrays (array ops), codegen.matmul, codegen.tape, codegen.lists, codegen.scans
and codegen.callouts (calls into CPython); importing
`codegen.lower` (or `codegen`) registers them all. tests/ir/test_op_registry.py checks that every
op of `tracer.ir.ops.OPS` has one.
"""
from __future__ import annotations

from collections.abc import Callable

from tracer import ir

Lowering = Callable[..., object]

# op -> {operand type (None: any type) -> its rule}
LOWERINGS: dict[str, dict[ir.Type | None, Lowering]] = {}


def lowers(*names: str, on: ir.Type | None = None) -> Callable[[Lowering], Lowering]:
    """Register the decorated rule as the lowering of the ops `names` on operands of type `on`
    (None: of any type without a rule of its own). Registering one twice is an error."""
    def register(rule: Lowering) -> Lowering:
        for name in names:
            rules = LOWERINGS.setdefault(name, {})
            assert on not in rules, f"two lowerings for the op {name} on {on}"
            rules[on] = rule
        return rule
    return register


def lowering_for(v: ir.Value) -> Lowering:
    """The rule that lowers `v`: its op's rule for the type of its first operand, else its op's
    any-type rule. NotImplementedError if there is none."""
    rules = LOWERINGS.get(v.op, {})
    on = v.args[0].type if v.args else None
    rule = rules.get(on) or rules.get(None)
    if rule is None:
        raise NotImplementedError(f"codegen: op {v.op!r} has no lowering"
                                  + (f" for operands of type {on}" if rules else ""))
    return rule
