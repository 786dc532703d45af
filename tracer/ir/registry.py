"""The op registry: every IR op is declared here once, by `define`, with what it *is*:

    name         what `Value.op` holds
    doc          one line of meaning, printed by `python -m tracer ops`-style listings and docs
    result_type  the type rule: (operand types, attrs) -> result type, or a TypeError
    evaluate     its meaning in Python: (*operand values, **attrs) -> value, raising OpFailure
                 with the Status the compiled op returns (folding, the IR interpreter and the
                 tests' oracle all use it)
    statuses     the failures it can return (empty: it cannot fail), and `fails_when`, a rule for
                 when a particular use can fail where that depends on its operands
    vjp          its derivative rules, one per operand (tracer/ir/scalar_ops.py explains them)
    effect       whether it touches memory (never folded, merged or dropped)

The ops themselves are declared by family in `scalar_ops`, `structure_ops` and `array_ops`;
importing `tracer.ir.ops` declares them all. The stages that need more keep one table each,
keyed by op name: codegen's lowerings (`codegen.lowerings.LOWERINGS`, filled by `@lowers`) and
autodiff's structural rules and explicit non-derivatives (`tracer.transforms.autodiff.STRUCTURAL`,
`NOT_DIFFERENTIABLE`). `tests/ir/test_op_registry.py` checks every table covers every op.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from tracer.errors import Status
from tracer.ir.graph import Value
from tracer.ir.types import I64, Type

TypeRule = Callable[[tuple[Type, ...], dict], Type]
FailureRule = Callable[["OpDef", Value], bool]


@dataclass(frozen=True)
class OpDef:
    name: str
    doc: str
    result_type: TypeRule
    evaluate: Callable | None        # (*operand values, **attrs) -> value; raises OpFailure
    statuses: tuple[Status, ...] = ()  # the failures the op can return (empty: it cannot fail)
    commutative: bool = False
    attrs: tuple[str, ...] = field(default=())
    vjp: tuple | None = None         # derivative rules, one per operand (see "Derivative rules")
    effect: bool = False             # touches memory (the tape ops): never folded, merged or dropped
    fails_when: FailureRule | None = None   # when a use can fail, if not by its statuses alone

    def may_fail(self, v: Value) -> bool:
        """Whether this use of the op can fail at run time (dead failing ops must stay)."""
        return (self.fails_when or may_fail_by_status)(self, v)


def may_fail_by_status(op: OpDef, v: Value) -> bool:
    """The default failure rule: an op with statuses can fail, except that an op whose only
    failure is FALLBACK (an i64 result past 64 bits: add, sub, mul, neg, abs) cannot fail on
    floats (overflow gives inf, as in CPython), so a dead f64 `a * b` can go."""
    if not op.statuses:
        return False
    return not (op.statuses == (Status.FALLBACK,) and v.type != I64)


OPS: dict[str, OpDef] = {}


def define(name, doc, result_type, evaluate, statuses=(), commutative=False, attrs=(), vjp=None, effect=False,
           fails_when=None) -> OpDef:
    """Declare the op `name` (once: a second definition is an error)."""
    assert name not in OPS, f"the op {name} is defined twice"
    OPS[name] = OpDef(name, doc, result_type, evaluate, tuple(statuses), commutative, tuple(attrs), vjp, effect,
                      fails_when)
    return OPS[name]


def signature(*sigs: tuple[tuple[Type, ...], Type]) -> TypeRule:
    """A type rule from a list of (operand types, result type) overloads."""
    table = dict(sigs)

    def rule(arg_types, attrs):
        try:
            return table[tuple(arg_types)]
        except KeyError:
            raise TypeError("no overload for operand types (" + ", ".join(map(str, arg_types)) + ")") from None
    return rule
