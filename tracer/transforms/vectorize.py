"""Vectorization, IR -> IR: a function of floats becomes a function of float64 arrays that runs it
on every element, as one `map` over its arguments broadcast together (NumPy's rules). Used by
`tracer.vectorize`, which traces the scalar function and compiles the result.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir import F64, ArrayType, Block, Function, TupleType, Value


def map_over_arrays(scalar: Function, by_argument: dict[int, Value], args: list[tuple | None], name: str,
                    outs: list[tuple] | None = None) -> Function:
    """`scalar` (a function of floats) applied to every element of its arguments broadcast together:
    the arguments broadcast, and one map whose region is `scalar`'s body.

    `by_argument` maps an argument's position to the parameter of `scalar` it feeds (an argument
    the function does not read has none). `args` gives each argument's shape: None for a float,
    else a tuple with 1 for an axis that broadcasts and None for a size known at run time. With
    `outs` (their shapes), the map writes into those arrays, extra parameters after the arguments,
    and the function returns nothing."""
    params = [ir.make_param(i, f"x{i}", F64 if shape is None else ArrayType(F64, shape)) for i, shape in enumerate(args)]
    out_params = [ir.make_param(len(args) + i, f"out{i}", ArrayType(F64, shape)) for i, shape in enumerate(outs or [])]
    body = Block()

    def emit(op, operands, type_, **attrs):
        v = Value(op, tuple(operands), type_, attrs, loc=scalar.loc)
        body.values.append(v)
        return v
    arrays = [p for p in params if isinstance(p.type, ArrayType)]
    rank = max(p.type.rank for p in arrays + out_params)
    shape, sizes = [], []
    for axis in range(rank):                  # NumPy's broadcasting, the sizes from the first array that has it
        owners = [p for p in arrays + out_params if axis - (rank - p.type.rank) >= 0
                  and p.type.shape[axis - (rank - p.type.rank)] is None]
        if owners:
            shape.append(None)
            sizes.append(emit("dim", [owners[0]], ir.I64, axis=axis - (rank - owners[0].type.rank)))
        else:
            shape.append(1)
            sizes.append(emit("const", [], ir.I64, value=1))
    full = {}
    for p in arrays:
        if p.type.shape == tuple(shape):
            full[p] = p
        else:
            full[p] = emit("broadcast_in_dim", [p, *sizes], ArrayType(F64, tuple(shape)), shape=tuple(shape),
                           dims=tuple(range(rank - p.type.rank, rank)))
    region = Block()
    elements = {p: region.add_param(F64, scalar.loc) for p in arrays}
    mapping = {}
    for i, p in enumerate(params):
        if i in by_argument:
            mapping[by_argument[i]] = elements[p] if p in elements else p
    ir.copy_block(scalar.body, mapping, region)
    result = region.results[0]
    leaves, structure = _leaves(region, result)
    region.results = leaves
    types = tuple(ArrayType(x.type, tuple(shape)) for x in leaves)
    if outs is not None and (len(outs) != len(leaves) or any(x.type != F64 for x in leaves)):
        raise ValueError(f"vectorize({name}): out= has {len(outs)} array(s); the function returns "
                         f"{len(leaves)} float(s)")
    if out_params:        # before the loop writes them: each out= array has the result's shape and
        # shares no memory with another array argument (else its fallback raises, or copies)
        emit("in_place_check", [x for o in out_params for x in (o, *(full[p] for p in arrays))], TupleType(()),
             groups=tuple(1 + len(arrays) for _ in out_params))
    into = {"into": len(out_params)} if out_params else {}
    m = emit("map", [*out_params, *(full[p] for p in arrays)], types[0] if len(types) == 1 else TupleType(types),
             **into)
    m.regions = [region]
    if out_params:
        body.results = [emit("tuple", [], TupleType(()))]
    else:
        outputs = [m] if len(types) == 1 else [emit("getitem", [m], t, index=i) for i, t in enumerate(types)]
        body.results = [_rebuild(structure, iter(outputs), emit)]
    fn = Function(f"vectorize_{scalar.name}", params + out_params, body, scalar.loc,
                  python_on_failure=scalar.python_on_failure, returns_none=bool(out_params))
    return ir.verify(fn)


def _leaves(region: Block, v: Value):
    """The scalars of a (nested) tuple value made in `region`, left to right, and its structure
    (None for a scalar, a list of structures for a tuple)."""
    if not isinstance(v.type, TupleType):
        return [v], None
    leaves, structure = [], []
    for i, t in enumerate(v.type.elements):
        if v.op == "tuple":
            item = v.args[i]
        else:
            item = Value("getitem", (v,), t, {"index": i}, loc=v.loc)
            region.values.append(item)
        sub, s = _leaves(region, item)
        leaves += sub
        structure.append(s)
    return leaves, structure


def _rebuild(structure, outputs, emit):
    if structure is None:
        return next(outputs)
    items = [_rebuild(s, outputs, emit) for s in structure]
    return emit("tuple", items, TupleType(tuple(x.type for x in items)))
