"""Reverse-mode automatic differentiation: IR -> IR.

`backpropagate` is the whole algorithm: walk the forward values backwards, and for each value that
carries a gradient (`ct`, its cotangent) apply its op's derivative rules (`tracer.ir.ops`, one rule
per operand) to emit the gradient's share for each operand, summing shares that meet. The rules
build new IR through `Sym` (tracer.transforms.sym), so the gradient is ordinary IR: it is optimized
(CSE, DCE, FMA fusion), compiled and differentiated again (`grad(grad(f))`) like any other function.

Every op has one entry, found by op: its `vjp` rules (declared with the op), a rule in STRUCTURAL
(`@structural`: tuples, getitem, if, loop, and array reads), or a line in NOT_DIFFERENTIABLE saying
why it has none (tests/ir/test_op_registry.py checks that).

Two ways to use it:
- `grad_function(fn, wrt)`: one *joint* function that computes the value and the gradient in one
  call (what `grad` and `value_and_grad` compile);
- `vjp_functions(fn, wrt)`: a *forward* function that returns the value and the residuals the
  backward needs, and a *backward* function from residuals and a cotangent to the gradients
  (AOTAutograd's split; what `vjp` compiles).

    >>> print(grad_function(sq, [0]))     # sq(x) = x * x, before the passes
    func grad_sq(x: f64) -> f64
      value  op     operands  type  source
      %0     mul    x, x      f64   sq.py:2  return x * x      the forward (DCE drops it: unused)
      %1     const  1.0       f64   sq.py:1  def sq(x):        the seed: the output %0 has gradient 1
      %2     mul    %1, x     f64   sq.py:2  return x * x      mul's rule: ct * b for a ...
      %3     mul    %1, x     f64   sq.py:2  return x * x      ... and ct * a for b
      %4     add    %2, %3    f64   sq.py:2  return x * x      both shares of x, summed
      return %4

Only f64 values carry gradients: ints and bools are constant for the derivative (a `to_f64` of an
int is a constant), comparisons and rounding have zero derivative, and a function's gradient with
respect to a parameter it does not use is 0.0.
"""
from __future__ import annotations

from collections.abc import Callable, Iterable

from tracer import ir
from tracer.errors import TracerError, UnsupportedError
from tracer.ir import F64, Block, Function, TupleType, Value
from tracer.ir.ops import OPS
from tracer.transforms.sym import BlockEmitter, Sym


class NotDifferentiable(TracerError, TypeError):
    """The function's output is not a float (grad of a tuple, an int or a bool)."""


# ------------------------------------------------------------------------------- the algorithm
def differentiable(t: ir.Type) -> bool:
    """Whether values of type `t` carry gradients: f64, f64 arrays, or a tuple holding one."""
    return (t == F64 or (isinstance(t, ir.ArrayType) and t.dtype == F64)
            or (isinstance(t, TupleType) and any(differentiable(e) for e in t.elements)))


def _fit(emitter, ct: Value, t: ir.Type) -> Value:
    """A scalar operand of an elementwise op on arrays stood for every element: its gradient is
    the sum of the elements' gradients."""
    if isinstance(ct.type, ir.ArrayType) and not isinstance(t, ir.ArrayType):
        return emitter.emit("reduce", (ct,), kind="sum", axes=tuple(range(ct.type.rank)), keepdims=False)
    return ct


def _add(emitter, a, b):
    """The sum of two cotangents: Values, None (zero) or tuples of them (for tuple values)."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple):
        return tuple(_add(emitter, x, y) for x, y in zip(a, b))
    return emitter.emit("add", (a, b))


def _one_hot(t: TupleType, index: int, ct):
    return tuple(ct if i == index else None for i in range(len(t.elements)))


def backpropagate(emitter, values: list[Value], seeds: dict[Value, object], wrt: list[Value],
                  home: Block | None = None, sinks: dict | None = None) -> list:
    """The gradients of `wrt`: Value, or None where the gradient is zero.

    `values` are the forward values in definition order; `seeds` give the cotangent of the
    outputs (a Value for an f64, a tuple of Values/None for a tuple). New values are emitted
    through `emitter`, each with the source location of the forward value it differentiates.
    `home` is the block holding `values`: a loop among them gets its tape created there.
    `sinks` maps outer arrays read inside a loop to the buffers their gradients are added into,
    element by element, as the backward loop runs (see `_backpropagate_loop`).

    Each value with a gradient goes through its op's rule: the op's entry in STRUCTURAL if it has
    one, else the op's per-operand `vjp` rules (`per_operand`).
    """
    sinks = sinks or {}
    active = set(wrt) | set(sinks)            # values that depend on `wrt` (and carry gradients)
    for v in values:
        if v.op == "python_call" or v.regions and any(x.op == "python_call" for x in ir.defined_in(v.regions)):
            raise UnsupportedError("cannot differentiate a function that calls into Python here "
                                   "(a print or another call compiled code makes in CPython)", v.loc)
        if v.op == "store" and v.args[1] in active or v.regions and _stores_inside(v, active):
            raise UnsupportedError("cannot differentiate through a write into an array (x[i] = v) yet", v.loc)
        if v.op in ("to_f32", "cast") and v.args[0] in active:
            raise UnsupportedError("cannot differentiate through float32 values yet (gradients are float64)", v.loc)
        if differentiable(v.type) and any(a in active for a in (*v.args, *ir.free_values(v))):
            active.add(v)
    walk = Backward(emitter, active, sinks, home)
    for v, ct in seeds.items():
        walk.accumulate(v, ct)
    for v in reversed(values):
        if v in walk.buffers:                 # every read of v is behind: its buffer is complete
            walk.accumulate(v, walk.buffers.pop(v))
        ct = walk.adjoint.get(v)
        if ct is None or v in wrt:
            continue
        emitter.loc = v.loc
        for x, g in STRUCTURAL.get(v.op, per_operand)(walk, v, ct):
            walk.accumulate(x, g)
    for x, buffer in walk.buffers.items():    # arrays defined before `values` (the wrt arrays)
        walk.accumulate(x, buffer)
    return [walk.adjoint.get(w) for w in wrt]


class Backward:
    """One walk of `backpropagate`: what its rules read (the emitter, the active values, the
    sinks, the home block) and the gradients found so far (`adjoint`, `buffers`)."""

    def __init__(self, emitter, active: set, sinks: dict, home: Block | None):
        self.emitter = emitter
        self.active = active
        self.sinks = sinks
        self.home = home
        self.adjoint: dict[Value, object] = {}
        # An array read element by element (x[i], or row by row) gets one gradient buffer, and
        # each read adds its share into buffer[i] in place: not an array of zeros per read, summed
        self.buffers: dict[Value, Value] = {}

    def accumulate(self, x: Value, ct) -> None:
        if x in self.active and ct is not None:
            self.adjoint[x] = _add(self.emitter, self.adjoint.get(x), ct)


# ------------------------------------------------------------------------- the rules, by op
# A rule is `rule(walk: Backward, v, ct) -> iterable of (operand, its share of the gradient)`,
# given `ct`, the gradient of v; it may emit IR (through walk.emitter) as it goes.
Rule = Callable[[Backward, Value, object], Iterable[tuple[Value, object]]]

# The ops whose gradient is not one share per operand from the op's `vjp` rules: tuples,
# control flow, and array reads (whose gradients go into buffers).
STRUCTURAL: dict[str, Rule] = {}

# The ops with no derivative, on purpose, and why. `backpropagate` refuses them if a gradient
# reaches one (most never carry one: their results are not floats).
NOT_DIFFERENTIABLE: dict[str, str] = {
    "param": "a leaf: its gradient is the result",
    "block_param": "a leaf: a region's parameter, differentiated by its region's op (loop)",
    "const": "a constant",
    **dict.fromkeys(("lt", "le", "gt", "ge", "eq", "ne", "not", "isnan", "isinf", "isfinite", "to_bool"),
                    "a bool result: piecewise constant"),
    "to_i64": "an int result: piecewise constant",
    "to_f64": "from an int or a bool: a constant (from float32: gradients are float64 only)",
    "to_f32": "float32 values carry no gradients yet (refused where one would flow)",
    "cast": "values of NumPy's narrow dtypes carry no gradients yet (refused where one would flow)",
    "linalg_lstsq": "np.linalg.lstsq has no derivative rule yet: its residuals and rank change with the rank "
                    "found at run time (refused where a gradient would flow)",
    "linalg_eig": "np.linalg.eig and eigvals give complex arrays, which carry no gradients yet (refused where one "
                  "would flow)",
    **dict.fromkeys(("complex_parts", "complex_from_parts"),
                    "complex arrays carry no gradients yet (refused where one would flow)"),
    "dim": "an int result (an array's size)",
    "iota": "an int array (0, 1, ..., n - 1)",
    "argsort": "an int array (positions): piecewise constant",
    "searchsorted": "an int array (positions): piecewise constant",
    "store": "a write into an array (refused where a gradient would flow through it)",
    "index_update": "x[idx] = v: which of repeated indices is written last decides where a gradient goes "
                    "(refused where one would flow; np.add.at is differentiable)",
    "writeback": "a write into argument arrays (made by the in-place pass, after autodiff)",
    "in_place_check": "a check before in-place writes (made by the in-place pass, after autodiff)",
    "raise": "has no value",
    "python_call": "a call into CPython (a print): it has no value (refused inside a differentiated function)",
    "map": "made by fusion and vectorize, after autodiff",
    **dict.fromkeys(("tape_new", "tape_push", "tape_get", "tape_len", "tape_free"),
                    "autodiff's own tapes: second-order gradients through a compiled loop are not supported"),
    **dict.fromkeys(("list_new", "list_append", "list_get", "list_set", "list_len", "list_pop", "list_insert",
                     "list_delete", "list_array", "list_find"),
                    "a list of run-time length (memory the backward pass cannot read as values): refused where a "
                    "gradient would flow through it"),
    **dict.fromkeys(("bit_and", "bit_or", "bit_xor", "invert", "lshift", "rshift", "bit_length", "bit_count", "powmod", "gcd",
                     "isqrt", "factorial", "comb", "perm", "frexp_exponent"), "an int (or bool) result: piecewise constant"),
    "fsum": "takes any number of operands (no per-operand rule table); use sum() to differentiate",
}


def structural(*ops: str) -> Callable[[Rule], Rule]:
    """Register the decorated rule as the gradient rule of `ops` (once each)."""
    def register(rule: Rule) -> Rule:
        for op in ops:
            assert op not in STRUCTURAL, f"two structural rules for {op}"
            STRUCTURAL[op] = rule
        return rule
    return register


def per_operand(walk: Backward, v: Value, ct) -> Iterable[tuple[Value, object]]:
    """The default rule: each active operand's share from the op's `vjp` rules (tracer.ir.ops)."""
    _refuse_sinks(walk, v)
    rules = OPS[v.op].vjp
    if rules is None:
        raise UnsupportedError(f"cannot differentiate through the op {v.op!r}", v.loc)
    emitter = walk.emitter
    out, operands = Sym(v, emitter), [Sym(a, emitter) for a in v.args]
    for x, rule in zip(v.args, rules):
        if rule is not None and x in walk.active:
            yield x, _fit(emitter, rule(Sym(ct, emitter), out, *operands, **v.attrs).value, x.type)


def _refuse_sinks(walk: Backward, v: Value) -> None:
    if any(a in walk.sinks for a in v.args):
        raise UnsupportedError("cannot differentiate an array used whole inside a loop yet (only its "
                               "elements, x[i])", v.loc)


@structural("tuple")
def _tuple(walk: Backward, v: Value, ct: tuple):
    return zip(v.args, ct)


@structural("getitem")
def _getitem(walk: Backward, v: Value, ct):
    return [(v.args[0], _one_hot(v.args[0].type, v.attrs["index"], ct))]


@structural("if")
def _if(walk: Backward, v: Value, ct: tuple):
    outer = [x for x in ir.free_values(v) if x in walk.active]
    return _backpropagate_if(walk.emitter, v, ct, outer, walk.sinks)


@structural("loop")
def _loop(walk: Backward, v: Value, ct: tuple):
    return _backpropagate_loop(walk.emitter, v, ct, walk.active, walk.home, walk.sinks)


@structural("load")
def _load(walk: Backward, v: Value, ct):
    """x[i] of an array whose gradient goes into a sink (a buffer outside the loop): buffer[i] += ct."""
    if v.args[0] not in walk.sinks:
        return _read(walk, v, ct)
    emitter = walk.emitter
    buffer, indices = walk.sinks[v.args[0]], v.args[1:]
    total = emitter.emit("add", (emitter.emit("load", (buffer, *indices)), ct))
    emitter.emit("store", (buffer, total, *indices))
    return ()


@structural("index")
def _read(walk: Backward, v: Value, ct):
    """x[i] (an element, or a row) of an active array: buffer[i] += ct, in x's gradient buffer."""
    _refuse_sinks(walk, v)
    x, indices = v.args[0], v.args[1:]
    if x not in walk.active:
        return per_operand(walk, v, ct)
    emitter = walk.emitter
    if x not in walk.buffers:
        walk.buffers[x] = _zeros_of(emitter, x)
    part = emitter.emit(v.op, (walk.buffers[x], *indices), **v.attrs)
    emitter.emit("store", (walk.buffers[x], emitter.emit("add", (part, _fit(emitter, ct, v.type))), *indices))
    return ()


def _stores_inside(v: Value, active: set) -> bool:
    """Whether a region of `v` (a loop or an if) writes memory while reading an active value:
    a gradient would flow through that memory, which `backpropagate` does not follow (it
    follows values), so it must refuse rather than answer zero."""
    inside = ir.defined_in(v.regions)
    if not any(x.op == "store" for x in inside):
        return False
    return any(a in active for a in (*v.args, *ir.free_values(v)))


def _backpropagate_if(emitter, v: Value, ct: tuple, outer: list[Value], sinks: dict) -> list[tuple[Value, Value]]:
    """The gradients of the outer values `outer` through the `if` op `v`, as a backward `if` on
    the same condition: each of its regions is the backward of the forward region. What a
    backward region reads from inside its forward region is added to what `v` yields."""
    sunk = [x for x in outer if x in sinks]           # their gradients go into their buffers
    outer = [x for x in outer if x not in sinks]
    if not outer and not sunk:
        return []
    if any(x.type != F64 for x in outer):
        raise UnsupportedError("cannot differentiate a branch or loop with respect to an array or a tuple "
                               "it reads yet", v.loc)
    backward_blocks = []
    for region in v.regions:
        block = Block()
        inner = BlockEmitter(block)
        inner.loc = v.loc
        seeds: dict[Value, object] = {}
        for r, c in zip(region.results, ct):
            if c is not None and differentiable(r.type):
                seeds[r] = _add(inner, seeds.get(r), c)
        block.results = zero_if_none(inner, backpropagate(inner, region.values, seeds, outer, home=region,
                                                          sinks=sinks))
        backward_blocks.append(block)
    # forward values a backward region reads: the forward `if` yields them (the other side a 0)
    for i, (region, block) in enumerate(zip(v.regions, backward_blocks)):
        _hoist_getitems(block, region)
        internal = ir.defined_in([region])
        needed = [x for x in ir.used_in([block]) if x in internal]
        if not needed:
            continue
        other = v.regions[1 - i]
        index = len(v.type.elements)
        for x in needed:
            region.results.append(x)
            other.results.append(_zero_of(BlockEmitter(other), x.type))
        v.type = TupleType(v.type.elements + tuple(x.type for x in needed))
        replacement = {x: emitter.emit("getitem", (v,), index=index + k) for k, x in enumerate(needed)}
        _substitute(block, replacement)
    op = emitter.append(Value("if", (v.args[0],), TupleType(tuple(F64 for _ in outer)), loc=v.loc))
    op.regions = backward_blocks
    return [(x, emitter.emit("getitem", (op,), index=k)) for k, x in enumerate(outer)]


def _backpropagate_loop(emitter, v: Value, ct: tuple, active: set, home: Block | None,
                        sinks: dict) -> list[tuple[Value, Value]]:
    """The gradients of the outer values through the `loop` op `v`, with a tape.

    The forward loop pushes each iteration's carried values x_k onto a tape (x_0 are the loop's
    operands, x_{k+1} = body(x_k), and the loop's value is the last x_n). A backward loop then
    runs k = n-1 down to 0: it reads x_k back, recomputes the body from it (the body's inner
    values are not saved: a second run of one iteration costs less than keeping them all), and
    backpropagates that iteration, which turns the gradient of x_{k+1} into the gradient of x_k
    and adds the iteration's share to the gradients of the outer values the body reads.

    An outer float64 array the body reads element by element gets a buffer of zeros before the
    backward loop, and each read x[i] adds its gradient into buffer[i] (a `store`): no array is
    carried through the loop or made per iteration. A nested loop adds into the same buffer.
    """
    body = v.regions[0]
    inits = [x for x in v.args if x in active]
    free = [x for x in ir.free_values(v) if x in active and not isinstance(x.type, ir.ArrayType)]
    arrays = [x for x in ir.free_values(v) if x in active and isinstance(x.type, ir.ArrayType)]
    if not inits and not free and not arrays:
        return []
    new_sinks = {x: _zeros_of(emitter, x) for x in arrays if x not in sinks}
    sinks = {**sinks, **new_sinks}
    if any(x.op.startswith("tape_") for x in ir.defined_in([body])):
        raise UnsupportedError("second-order gradients through a compiled loop are not supported", v.loc)
    if home is None or v not in home.values:
        raise UnsupportedError("cannot differentiate this loop here (no block to save its tape in)", v.loc)
    carried = tuple(p.type for p in body.params)
    if not all(isinstance(t, ir.ScalarType) for t in carried):
        raise UnsupportedError("cannot differentiate a loop that carries a tuple", v.loc)
    floats = [i for i, t in enumerate(carried) if t == F64]
    snapshot = ir.copy_block(body, {})      # the body as the forward runs it, for the recompute
    tape = emitter.emit("getitem", (v,), index=_save_iterations(v, home))

    def const(x):
        return emitter.emit("const", (), value=x)
    one, zero_ = const(1), const(0)
    last = emitter.emit("sub", (emitter.emit("tape_len", (tape,)), one))
    seeds = [ct[i] if ct[i] is not None else const(0.0) for i in floats]
    back = Value("loop", (last, *seeds, *(const(0.0) for _ in free)),
                 TupleType((ir.I64,) + (F64,) * (len(floats) + len(free))), loc=v.loc)
    block = Block()
    k = block.add_param(ir.I64, v.loc)
    g = [block.add_param(F64, v.loc) for _ in floats]
    acc = [block.add_param(F64, v.loc) for _ in free]
    inner = BlockEmitter(block)
    inner.loc = v.loc
    record = inner.emit("tape_get", (tape, k))
    x = [inner.emit("getitem", (record,), index=i) for i in range(len(carried))]
    start = len(block.values)
    ir.copy_block(snapshot, dict(zip(snapshot.params, x)), block)
    recomputed, nexts = block.values[start:], block.results[1:]
    iteration_seeds: dict[Value, object] = {}
    for i, gi in zip(floats, g):
        iteration_seeds[nexts[i]] = _add(inner, iteration_seeds.get(nexts[i]), gi)
    grads = backpropagate(inner, recomputed, iteration_seeds, [x[i] for i in floats] + free, home=block,
                          sinks=sinks)
    new_g = zero_if_none(inner, grads[:len(floats)])
    new_acc = [a if d is None else inner.emit("add", (a, d)) for a, d in zip(acc, grads[len(floats):])]
    block.results = [inner.emit("gt", (k, zero_)), inner.emit("sub", (k, one)), *new_g, *new_acc]
    back.regions = [block]
    emitter.append(back)
    emitter.emit("tape_free", (tape,))
    out = [(v.args[i], emitter.emit("getitem", (back,), index=1 + j)) for j, i in enumerate(floats)
           if v.args[i] in active]
    out += [(xf, emitter.emit("getitem", (back,), index=1 + len(floats) + m)) for m, xf in enumerate(free)]
    return out + list(new_sinks.items())


def _zeros_of(emitter, x: Value) -> Value:
    """A new array of zeros shaped like array `x`."""
    sizes = [emitter.emit("const", (), value=n) if n is not None else emitter.emit("dim", (x,), axis=a)
             for a, n in enumerate(x.type.shape)]
    return emitter.emit("full", (emitter.emit("const", (), value=0.0), *sizes), shape=x.type.shape)


def _save_iterations(v: Value, home: Block) -> int:
    """Make the forward `loop` op `v` (in `home`) push its carried values onto a tape at the
    start of each iteration: a `tape_new` before it, the tape carried as one more value. The
    index of the filled tape in v's tuple."""
    body = v.regions[0]
    carried = tuple(p.type for p in body.params)
    tape = Value("tape_new", (), ir.TapeType(carried), {"fields": carried}, loc=v.loc)
    home.values.insert(home.values.index(v), tape)
    tape_param = body.add_param(tape.type, v.loc)
    pushed = Value("tape_push", (tape_param, *body.params[:-1]), tape.type, loc=v.loc)
    body.values.insert(0, pushed)
    body.results.append(pushed)
    v.args = (*v.args, tape)
    v.type = TupleType(v.type.elements + (tape.type,))
    return len(carried)


def _hoist_getitems(block: Block, region: Block) -> None:
    """Reads of a nested branch's yields (`getitem`s in the backward `block` of a value of the
    forward `region`) move into `region`, so the enclosing branch yields those scalars, not
    the nested branch's whole tuple (a tuple would not be differentiable again)."""
    top = set(region.values)
    hoisted: dict[tuple, Value] = {}
    replacement: dict[Value, Value] = {}

    def visit(b: Block):
        kept = []
        for x in b.values:
            if x.op == "getitem" and x.args[0] in top:
                key = (x.args[0], x.attrs["index"])
                if key not in hoisted:
                    hoisted[key] = Value("getitem", x.args, x.type, dict(x.attrs), loc=x.loc)
                    region.values.append(hoisted[key])
                replacement[x] = hoisted[key]
                continue
            for r in x.regions:
                visit(r)
            kept.append(x)
        b.values = kept
    visit(block)
    _substitute(block, replacement)


def _zero_of(emitter, t: ir.Type) -> Value:
    """A placeholder of type `t` (zeros) for the side of a branch that does not compute it."""
    if isinstance(t, TupleType):
        return emitter.emit("tuple", tuple(_zero_of(emitter, e) for e in t.elements))
    if isinstance(t, ir.TapeType):
        return emitter.emit("tape_new", (), fields=t.elements)
    return emitter.emit("const", (), value=ir.zero(t))


def _substitute(block: Block, replacement: dict) -> None:
    for x in block.values:
        x.args = tuple(replacement.get(a, a) for a in x.args)
        for region in x.regions:
            _substitute(region, replacement)
    block.results = [replacement.get(r, r) for r in block.results]


def zero_if_none(emitter, grads: list, wrt: list[Value] | None = None) -> list[Value]:
    """The gradients with a zero where `backpropagate` found none: 0.0, or zeros shaped like
    the array in `wrt` it is the gradient of."""
    out = []
    for i, g in enumerate(grads):
        if g is None:
            array = wrt is not None and isinstance(wrt[i].type, ir.ArrayType)
            g = _zeros_of(emitter, wrt[i]) if array else emitter.emit("const", (), value=0.0)
        out.append(g)
    return out


# ------------------------------------------------------------------------------- joint function
def check_float_output(fn: Function, what: str) -> None:
    t = fn.result_type
    if t != F64:
        kind = {ir.I64: "an int", ir.BOOL: "a bool", ir.F32: "a float32 (gradients are float64)"}.get(
            t, f"an array {t}" if isinstance(t, ir.ArrayType) else f"a tuple {t}; use vjp() for tuple outputs")
        raise NotDifferentiable(f"{what} needs {fn.name}() to return a float, but it returns {kind}", fn.loc)


def grad_function(fn: Function, wrt: list[int], with_value: bool = False, as_tuple: bool = False,
                  name: str | None = None) -> Function:
    """One function computing d fn / d params[i] for i in `wrt` (and fn's value first when
    `with_value`): the gradient alone, or a tuple of gradients when `as_tuple`."""
    check_float_output(fn, "value_and_grad()" if with_value else "grad()")
    out = ir.clone(fn)
    out.name = name or ("value_and_grad_" if with_value else "grad_") + fn.name
    out.numpy_results = ()          # (a new result: gradients are Python floats and arrays)
    forward = list(out.body.values)
    emitter = BlockEmitter(out.body)
    emitter.loc = out.loc
    result = out.result
    one = emitter.emit("const", (), value=1.0)
    params = [out.params[i] for i in wrt]
    grads = backpropagate(emitter, forward, {result: one}, params, home=out.body)
    emitter.loc = out.loc
    grads = zero_if_none(emitter, grads, params)
    g = emitter.emit("tuple", tuple(grads)) if as_tuple else grads[0]
    out.body.results = [emitter.emit("tuple", (result, g)) if with_value else g]
    return out


# ------------------------------------------------------------------------------- forward/backward
def _cotangent_params(t: ir.Type, params: list[Value], loc):
    """Parameters for the cotangent of a value of type `t`, and its structure for `seeds`."""
    if isinstance(t, TupleType):
        return tuple(_cotangent_params(e, params, loc) for e in t.elements)
    if t != F64:
        return None
    p = ir.make_param(len(params), f"ct{len(params)}", F64, loc)
    params.append(p)
    return p


def vjp_functions(fn: Function, wrt: list[int]) -> tuple[Function, Function]:
    """Split differentiation (AOTAutograd-style).

    forward(params...) -> (value, residual_0, ..., residual_k)
    backward(residual_0, ..., residual_k, ct_0, ...) -> (grad_0, ...)   one per index in `wrt`

    The cotangents are one f64 per float leaf of fn's result. Residuals are the forward values
    the gradient reads (constants are recomputed instead).
    """
    if not differentiable(fn.result_type):
        raise NotDifferentiable(f"vjp() needs {fn.name}() to return a float or a tuple holding one, "
                                f"but it returns {fn.result_type}", fn.loc)
    if any(v.regions for v in fn.walk()):
        raise UnsupportedError("vjp() of a function with data-dependent branches or loops is not supported "
                               "yet; use grad() or value_and_grad()", fn.loc)
    joint = ir.clone(fn)
    joint.numpy_results = ()
    forward_values = list(joint.body.values)
    ct_params: list[Value] = []
    seed = _cotangent_params(joint.result_type, ct_params, joint.loc)
    body = Block()
    emitter = BlockEmitter(body)
    grads = backpropagate(emitter, forward_values, {joint.result: seed}, [joint.params[i] for i in wrt])
    emitter.loc = joint.loc
    grads = zero_if_none(emitter, grads)
    gradient = emitter.emit("tuple", tuple(grads))

    # the backward's inputs: forward values (params included) its values read, except constants
    forward_set = set(forward_values) | set(joint.params)
    residuals: list[Value] = []
    mapping: dict[Value, Value] = {p: p for p in ct_params}
    backward = Block()
    for v in body.values:
        for a in v.args:
            if a in forward_set and a not in mapping:
                if a.op == "const":
                    c = Value("const", (), a.type, dict(a.attrs), loc=a.loc)
                    backward.values.append(c)
                    mapping[a] = c
                else:
                    mapping[a] = ir.make_param(len(residuals), f"r{len(residuals)}", a.type, a.loc)
                    residuals.append(a)
        nv = Value(v.op, tuple(mapping[a] for a in v.args), v.type, v.attrs, v.loc)
        backward.values.append(nv)
        mapping[v] = nv
    backward.results = [mapping[gradient]]
    for i, p in enumerate(ct_params):
        p.attrs["index"] = len(residuals) + i
    residual_params = [mapping[r] for r in residuals]
    backward_fn = Function(f"vjp_backward_{fn.name}", residual_params + ct_params, backward, fn.loc)

    emitter = BlockEmitter(joint.body)
    emitter.loc = joint.loc
    joint.body.results = [emitter.emit("tuple", (joint.result, *residuals))]
    joint.name = f"vjp_forward_{fn.name}"
    return ir.verify(joint), ir.verify(backward_fn)
