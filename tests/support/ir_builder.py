"""Build IR functions by hand in tests: b = Builder(F64, I64); x, n = b.params; b.op("add", x, x)."""
from tracer import ir
from tracer.ir import ops


class Builder:
    def __init__(self, *types, name="f"):
        self.name = name
        self.params = [ir.make_param(i, f"p{i}", t) for i, t in enumerate(types)]
        self.values: list[ir.Value] = []

    def const(self, value) -> ir.Value:
        v = ir.Value("const", (), ir.type_of_constant(value), {"value": value})
        self.values.append(v)
        return v

    def op(self, name, *args, **attrs) -> ir.Value:
        v = ir.Value(name, args, ops.OPS[name].result_type(tuple(a.type for a in args), attrs), attrs)
        self.values.append(v)
        return v

    def function(self, *results) -> ir.Function:
        """The verified function returning `results` (several become one tuple)."""
        result = results[0] if len(results) == 1 else self.op("tuple", *results)
        return ir.verify(ir.Function(self.name, self.params, ir.Block(list(self.values), [result])))
