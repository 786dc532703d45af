"""The IR verifier: what a well-formed `Function` is. Tests run it after every pass."""
from __future__ import annotations

from tracer.ir.graph import Block, Function, Value
from tracer.ir.ops import OPS
from tracer.ir.types import BOOL, ArrayType, ScalarType, TupleType, Type


class VerificationError(Exception):
    pass


def verify(fn: Function) -> Function:
    """Check that `fn` is well formed: known ops, right arity and types, definitions before uses.

    Returns `fn` so it can wrap a pass: `verify(fold_constants(fn))`.
    """
    defined: set[Value] = set()
    for i, p in enumerate(fn.params):
        if p.op != "param" or p.attrs.get("index") != i or not isinstance(p.type, (ScalarType, ArrayType)):
            raise VerificationError(f"{fn.name}: parameter {i} is malformed: {p!r}")
        defined.add(p)

    def check_block(block: Block, visible: set[Value]):
        visible = set(visible)          # a region sees what is defined before its op, not after
        for v in block.values:
            if v in defined:
                raise VerificationError(f"{fn.name}: {v!r} is defined twice")
            opdef = OPS.get(v.op)
            if opdef is None or v.op in ("param", "block_param"):
                raise VerificationError(f"{fn.name}: unknown op {v.op!r}")
            missing = [name for name in opdef.attrs if name not in v.attrs]
            if missing:
                raise VerificationError(f"{fn.name}: {v!r} lacks the attribute(s) {', '.join(missing)}")
            for a in v.args:
                if a not in visible:
                    raise VerificationError(f"{fn.name}: {v!r} uses {a!r}, which is not defined before it in scope")
            if v.op in REGION_CHECKS:
                problem = REGION_CHECKS[v.op](v)
                if problem:
                    raise VerificationError(f"{fn.name}: {v!r}: {problem}")
            elif v.regions:
                raise VerificationError(f"{fn.name}: {v!r} has regions, which op {v.op} does not take")
            else:
                try:
                    expected = opdef.result_type(tuple(a.type for a in v.args), v.attrs)
                except (TypeError, KeyError, ValueError, IndexError, AttributeError) as exc:
                    raise VerificationError(f"{fn.name}: {v!r}: {exc}") from None
                if expected != v.type:
                    raise VerificationError(f"{fn.name}: {v!r} has type {v.type}, its op gives {expected}")
            for region in v.regions:
                for i, p in enumerate(region.params):
                    if p.op != "block_param" or p.attrs.get("index") != i or p in defined:
                        raise VerificationError(f"{fn.name}: block parameter {i} of {v!r} is malformed")
                    defined.add(p)
                check_block(region, visible | set(region.params))
            defined.add(v)
            visible.add(v)
        for r in block.results:
            if r not in visible:
                raise VerificationError(f"{fn.name}: result {r!r} is not defined in its block's scope")

    check_block(fn.body, set(fn.params))
    if len(fn.body.results) != 1:
        raise VerificationError(f"{fn.name}: a function returns exactly one value")
    return fn


def _yield_types(block: Block) -> tuple[Type, ...]:
    return tuple(r.type for r in block.results)


def _check_if(v: Value) -> str | None:
    if len(v.args) != 1 or v.args[0].type != BOOL or len(v.regions) != 2:
        return "an if takes one bool condition and two regions"
    if any(r.params for r in v.regions):
        return "the regions of an if take no parameters"
    then, else_ = map(_yield_types, v.regions)
    if then != else_ or v.type != TupleType(then):
        return f"its regions yield {then} and {else_}, its type is {v.type}"
    return None


def _check_loop(v: Value) -> str | None:
    if len(v.regions) != 1:
        return "a loop has one region, its body"
    body = v.regions[0]
    carried = tuple(a.type for a in v.args)
    if tuple(p.type for p in body.params) != carried:
        return f"its body's parameters {tuple(p.type for p in body.params)} do not match its operands {carried}"
    if _yield_types(body) != (BOOL,) + carried:
        return f"its body yields {_yield_types(body)}, not (bool, *{carried})"
    if v.type != TupleType(carried):
        return f"its type {v.type} is not the tuple of its carried values {carried}"
    return None


def _check_raise(v: Value) -> str | None:
    if v.args or v.type != TupleType(()) or not isinstance(v.attrs.get("exception"), BaseException):
        return "a raise takes no operands, has type () and an exception instance in attrs"
    return None


def _check_map(v: Value) -> str | None:
    shapes = {a.type.shape if isinstance(a.type, ArrayType) else None for a in v.args}
    if len(shapes) != 1 or None in shapes or len(v.regions) != 1:
        return "a map takes arrays of one shape and one region"
    body = v.regions[0]
    into = v.attrs.get("into", 0)         # attrs['into']: that many leading operands are written, not read
    if into and (into != len(body.results) or
                 tuple(a.type.dtype for a in v.args[:into]) != tuple(r.type for r in body.results)):
        return "its `into` arrays must be one per yield, of the yield's type"
    if tuple(p.type for p in body.params) != tuple(a.type.dtype for a in v.args[into:]):
        return "its region takes one parameter per array operand, of its element type"
    if not body.results or not all(isinstance(r.type, ScalarType) for r in body.results):
        return "its region yields scalars"
    shape = shapes.pop()
    arrays = [ArrayType(r.type, shape) for r in body.results]
    if v.type != (arrays[0] if len(arrays) == 1 else TupleType(tuple(arrays))):
        return f"its type {v.type} is not the array(s) of what its region yields, in its operands' shape"
    inner = Function("map", [], body)
    if any(isinstance(x.type, ArrayType) or any(isinstance(a.type, ArrayType) for a in x.args) for x in inner.walk()):
        return "its region computes scalars only"
    return None


REGION_CHECKS = {"if": _check_if, "loop": _check_loop, "raise": _check_raise, "map": _check_map}
