"""IR written as arithmetic: what autodiff's derivative rules are written in.

`BlockEmitter` appends new values to a block; `Sym` wraps a value so that `a * b`, `x.cos()` or
`c.select(a, b)` emit the op (the rules in tracer.ir.scalar_ops and array_ops receive Syms).
`tracer.frontend.builder.GraphBuilder` has the same `emit`, so the same rules can also
differentiate while tracing.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir import Block, Value
from tracer.ir.ops import OPS


class BlockEmitter:
    """Appends new values to a block. `tracer.frontend.builder.GraphBuilder` has the same `emit`, so the
    same rules can also differentiate while tracing."""

    def __init__(self, block: Block):
        self.block = block
        self.loc = None

    def emit(self, op: str, args: tuple[Value, ...], **attrs) -> Value:
        result_type = OPS[op].result_type(tuple(a.type for a in args), attrs)
        v = Value(op, args, result_type, attrs, loc=self.loc)
        self.block.values.append(v)
        return v

    def append(self, v: Value) -> Value:
        self.block.values.append(v)
        return v


class Sym:
    """An IR value in a derivative rule: arithmetic on it emits IR, so rules read like math.

    `a + b`, `a - b`, `a * b`, `-a`, comparisons, and `a / b` and `a ** b` as IEEE operations that
    never raise (`fdiv`, `ieee_pow`); any op of `tracer.ir.ops` as a method (`x.cos()`,
    `a.atan2(b)`); `cond.select(a, b)` and `a.eq(b)`. Python floats become constants.
    """

    __slots__ = ("value", "emitter")

    def __init__(self, value: Value, emitter):
        self.value = value
        self.emitter = emitter

    @property
    def type(self) -> ir.Type:
        return self.value.type

    def _sym(self, x) -> Sym:
        if isinstance(x, Sym):
            return x
        return Sym(self.emitter.emit("const", (), value=float(x)), self.emitter)

    def apply(self, op: str, *others) -> Sym:
        args = (self.value, *(self._sym(o).value for o in others))
        return Sym(self.emitter.emit(op, args), self.emitter)

    def apply_attrs(self, op: str, *others, **attrs) -> Sym:
        """`op` on self and `others` with attributes (the array ops: reduce, transpose...)."""
        args = (self.value, *(self._sym(o).value for o in others))
        return Sym(self.emitter.emit(op, args, **attrs), self.emitter)

    def constant(self, x) -> Sym:
        """A constant of x's own type (an int is an i64, a float an f64)."""
        return Sym(self.emitter.emit("const", (), value=x), self.emitter)

    def __add__(self, o): return self.apply("add", o)
    def __radd__(self, o): return self._sym(o).apply("add", self)
    def __sub__(self, o): return self.apply("sub", o)
    def __rsub__(self, o): return self._sym(o).apply("sub", self)
    def __mul__(self, o): return self.apply("mul", o)
    def __rmul__(self, o): return self._sym(o).apply("mul", self)
    def __truediv__(self, o): return self.apply("fdiv", o)
    def __rtruediv__(self, o): return self._sym(o).apply("fdiv", self)
    def __pow__(self, o): return self.apply("ieee_pow", o)
    def __neg__(self): return self.apply("neg")
    def __lt__(self, o): return self.apply("lt", o)
    def __le__(self, o): return self.apply("le", o)
    def __gt__(self, o): return self.apply("gt", o)
    def __ge__(self, o): return self.apply("ge", o)

    def eq(self, o) -> Sym:
        return self.apply("eq", o)

    def select(self, if_true, if_false) -> Sym:
        return self.apply("select", if_true, if_false)

    def __getattr__(self, op: str):
        if op not in OPS:
            raise AttributeError(op)
        return lambda *others: self.apply(op, *others)
