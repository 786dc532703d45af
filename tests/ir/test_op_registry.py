"""Every op of the registry (tracer.ir.ops.OPS) is covered by the table of each stage:

    its meaning   an evaluator (`define(..., evaluate)`), or one of the region and leaf ops whose
                  meaning `tracer.ir.ops.run` gives (REGION_AND_LEAF_OPS)
    its lowering  a rule in codegen's table (`@lowers`, codegen.lowerings.LOWERINGS), except
                  block_param (NOT_LOWERED)
    its gradient  per-operand `vjp` rules (`define(..., vjp=...)`), a structural rule
                  (`@structural`, tracer.transforms.autodiff.STRUCTURAL), or an explicit entry in
                  tracer.transforms.autodiff.NOT_DIFFERENTIABLE

and no table names an op that does not exist. docs/adding-an-op.md walks through the steps.
"""
from __future__ import annotations

import pytest

import codegen
from codegen.lowerings import LOWERINGS, lowering_for, lowers
from tracer import ir
from tracer.ir import ops
from tracer.ir.ops import OPS
from tracer.transforms.autodiff import NOT_DIFFERENTIABLE, STRUCTURAL

# ops with no evaluator: `ops.run` gives the meaning of the region ops, and a parameter's value is
# its argument (a region's parameter: what its op passes in)
REGION_AND_LEAF_OPS = {"if", "loop", "raise", "map", "param", "block_param"}
# a region's parameter has no code of its own: the op of its region (loop, map) sets its value
NOT_LOWERED = {"block_param"}
# lowered by codegen.lower.BlockLowering: the ops with regions, and what they pass in
CONTROL_FLOW = ("if", "loop", "raise", "block_param", "map")


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_a_meaning(name):
    op = OPS[name]
    assert op.name == name
    assert op.doc, f"{name} has no doc line"
    if name in REGION_AND_LEAF_OPS:
        assert op.evaluate is None, f"{name} has an evaluator: take it out of REGION_AND_LEAF_OPS"
    else:
        assert callable(op.evaluate), f"{name} has no evaluator"


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_a_lowering(name):
    if name in NOT_LOWERED:
        assert name not in LOWERINGS
    else:
        assert LOWERINGS.get(name), f"{name} has no lowering: @lowers({name!r}) in codegen"


@pytest.mark.parametrize("name", sorted(OPS))
def test_op_has_a_derivative_or_says_it_has_none(name):
    rules = [what for what, has in (("vjp", OPS[name].vjp is not None), ("STRUCTURAL", name in STRUCTURAL),
                                    ("NOT_DIFFERENTIABLE", name in NOT_DIFFERENTIABLE)) if has]
    # load and index have both: a structural rule for reads of an array that carries a gradient
    # (into its gradient buffer), and vjp rules for the rest
    if name in ("load", "index"):
        assert rules == ["vjp", "STRUCTURAL"]
    else:
        assert len(rules) == 1, f"{name}: {rules or 'no derivative rule and not in NOT_DIFFERENTIABLE'}"


def test_every_op_has_a_lowering():
    assert set(LOWERINGS) | set(CONTROL_FLOW) == set(ops.OPS)
    assert all(callable(rule) for rules in LOWERINGS.values() for rule in rules.values())
    assert codegen.LOWERINGS is LOWERINGS


def test_no_table_names_an_op_that_does_not_exist():
    assert set(LOWERINGS) - set(OPS) == set()
    assert set(STRUCTURAL) - set(OPS) == set()
    assert set(NOT_DIFFERENTIABLE) - set(OPS) == set()
    assert set(REGION_AND_LEAF_OPS) - set(OPS) == set()


def test_lowerings_are_keyed_by_types_the_op_takes():
    """A rule for operands of one type is for a type the op's type rule accepts."""
    for name, rules in LOWERINGS.items():
        for on in rules:
            if on is None:
                continue
            assert isinstance(on, ir.ScalarType), (name, on)
            accepted = False
            for arity in (1, 2, 3):
                try:
                    OPS[name].result_type((on,) * arity, {})
                    accepted = True
                except (TypeError, KeyError, IndexError):
                    pass
            assert accepted, f"the lowering of {name} on {on}: {name} takes no {on} operands"


def test_no_op_is_lowered_twice():
    with pytest.raises(AssertionError, match="two lowerings"):
        lowers("add", on=ir.F64)(lambda k, v, a, b: None)
    assert LOWERINGS["add"][ir.F64].__name__ != "<lambda>"


def test_lowering_for_picks_the_rule_of_the_operand_type():
    x = ir.Value("param", (), ir.F64, {"index": 0})
    n = ir.Value("param", (), ir.I64, {"index": 1})
    assert lowering_for(ir.Value("add", (x, x), ir.F64)) is LOWERINGS["add"][ir.F64]
    assert lowering_for(ir.Value("add", (n, n), ir.I64)) is LOWERINGS["add"][ir.I64]
    assert lowering_for(ir.Value("tuple", (x, n), ir.TupleType((ir.F64, ir.I64)))) is LOWERINGS["tuple"][None]
    with pytest.raises(NotImplementedError, match="has no lowering"):
        f = ir.Value("param", (), ir.F32, {"index": 2})
        lowering_for(ir.Value("add", (f, f), ir.F32))
