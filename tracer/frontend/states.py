"""Frame states, and how the states of several paths merge into traced values.

A `FrameState` is what the symbolic interpreter's frame holds at one place (stack, locals, closure
cells, the return value); an `Outcome` is where a run may continue, with a state for each place.
When paths meet (the sides of a branch, a loop's iterations), `layout_of` says how their values
merge: the same object on every path stays as it is (`Same`), numbers that differ become one
traced value (`Slot`), tuples and carried objects merge field by field (`Many`), a variable bound
on some paths only becomes `MaybeUnbound` (`Maybe`). `flatten` and `rebuild` go between a value
and its traced leaves, which an `if` op yields or a `loop` op carries.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field

from tracer import ir
from tracer.errors import UnsupportedError
from tracer.frontend import made_arrays, mixed_numbers, run_time_strings, trace_time
from tracer.frontend.builder import is_number, is_traced
from tracer.frontend.dynlists import DynList
from tracer.frontend.instances import InstanceKind, TracedInstance
from tracer.frontend.objects import NULL, ExternalList, MaybeNone, TracedArray
from tracer.ir import BOOL, F64, I64, Value


class MergeError(UnsupportedError):
    pass


# ------------------------------------------------------------------------------ symbolic objects
@dataclass(frozen=True, eq=False)
class MaybeUnbound:
    """A local bound on some paths only: `value` where `bound` (a traced bool) holds."""
    bound: Value
    value: object



# ------------------------------------------------------------------------------ frame states
@dataclass
class FrameState:
    pc: int | None
    stack: tuple
    locals: dict
    cells: dict                     # name -> contents (the Cell objects stay the frame's)
    return_value: object = NULL
    arrays: tuple = ()              # (TracedArray, its value): contents updated in place later
    heap: dict = field(default_factory=dict)   # TracedInstance -> its attributes (instances.snapshot)


def array_values(objects) -> tuple:
    """(array, value) for the arrays (not views) among `objects` and the tuples and lists in
    them: an in-place update outside any region rebinds an array to a new value, which rolling
    the frame back to an earlier state must undo."""
    out, seen, stack = [], set(), list(objects)
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if isinstance(x, TracedArray):
            if x.base is None:
                out.append((x, x.value))
        elif type(x) in (tuple, list):
            stack.extend(x)
        elif isinstance(x, TracedInstance):
            stack.extend(x.attrs.values())
    return tuple(out)


def rebind_arrays(arrays: tuple, top) -> None:
    """Give each array of `arrays` (from `array_values`) its value again: where that value is an
    argument that has been made writable since (its copy inserted at the top of the function's
    block `top`, tracer.frontend.arrays), the copy, which the argument's updates go to."""
    for array, value in arrays:
        if value.op == "param":
            for v in top.values:
                if v.op != "copy":
                    break
                if v.args[0] is value:
                    value = v
                    break
        if array.value is not value:
            array.rebind(value)


def block_mark(block):
    """Where `block` ends now: `cut_block` removes what is appended after it."""
    return block.values[-1] if block.values else None


def cut_block(block, mark) -> list:
    """Remove (and return) the values appended to `block` after `mark`. Values inserted at its
    top meanwhile stay: the copies of argument arrays made writable (tracer.frontend.arrays),
    which arrays keep using."""
    values = block.values
    if mark is None:
        keep = 0
        while keep < len(values) and values[keep].op == "copy" and values[keep].args[0].op == "param":
            keep += 1
    else:
        keep = next(i + 1 for i in range(len(values) - 1, -1, -1) if values[i] is mark)
    removed = values[keep:]
    del values[keep:]
    return removed


@dataclass(frozen=True)
class StateLayout:
    """How frame states merge at one place: `layout` (see `layout_of`) of the value
    (stack, locals in `names` order, cells in `cells` order, heap), or (return value, heap) at
    a return (names is None). The heap part: the attributes (`objects`: instance and attribute
    names) of the instances that exist on every path and differ between them (or hold values
    made inside the regions); `kept`: the other instances' attributes, the same on every path."""
    names: tuple | None
    cells: tuple
    layout: object
    objects: tuple = ()
    kept: dict = field(default=None, compare=False)


@dataclass
class Outcome:
    """Where a run may continue: a state per place, and which place (traced) if several."""
    states: dict = field(default_factory=dict)        # place (pc or RETURN) -> FrameState
    selector: Value | None = None

    @property
    def places(self) -> list:
        return list(self.states)

    @classmethod
    def at(cls, place, state) -> Outcome:
        return cls({place: state})


# ------------------------------------------------------------------------------ layouts
@dataclass(frozen=True)
class Same:
    value: object


@dataclass(frozen=True)
class Slot:
    type: object


@dataclass(frozen=True)
class ArraySlot:
    """An array that differs between paths (one of the same type on each): a traced array value,
    which the merged TracedArray holds (`merged`: it may be any path's array, even an argument,
    so it is never written in place)."""
    type: object
    tracer: object = field(compare=False, repr=False)


@dataclass(frozen=True)
class Many:
    kind: type                   # tuple or RangeIter
    parts: tuple


@dataclass(frozen=True)
class Maybe:
    inner: object


@dataclass(frozen=True)
class StrSlot:
    """Strings that differ between paths: their index in the trace's table (run_time_strings)."""
    builder: object = field(compare=False, repr=False)


@dataclass(frozen=True)
class MaybeNoneLayout:
    inner: object


def _const_key(x):
    return (type(x), struct.pack("<d", x)) if isinstance(x, float) else (type(x), x)


def _numeric(x) -> bool:
    return is_traced(x) or (is_number(x))


TYPE_NAMES = {F64: "a float", I64: "an int", BOOL: "a bool"}


class _Everything:
    def __contains__(self, x):
        return True


ALL = _Everything()


def layout_of(values: list, what: str, b, force=frozenset(), mutated=frozenset(), heaps=None):
    """How to merge `values` (one per side): Same, a traced Slot, a Many of parts, or Maybe-bound.
    Traced values in `force` (those defined inside the regions) always get a slot. Different
    instances made in the trace merge attribute by attribute (a new, frozen instance: see
    tracer.frontend.instances), with their attributes in each side's heap (`heaps`, one per
    value), except those in `mutated` (their attributes differ per path)."""
    first = values[0]
    if all(isinstance(v, TracedArray) for v in values) and (
            any(_made_inside(v, force) for v in values) or any(v is not first for v in values)):
        types = {v.type for v in values}
        if len({(t.dtype, t.rank) for t in types}) == 1 and len(types) > 1:      # sizes known on some paths
            shape = tuple(sizes.pop() if len(sizes := set(col)) == 1 else None for col in zip(*(t.shape for t in types)))
            types = {ir.ArrayType(first.type.dtype, shape)}
        if len(types) > 1:
            raise MergeError(f"{what} is an array of type {' on one path and '.join(sorted(map(str, types)))} on "
                             f"another; compiled code needs one dtype and shape", b.loc)
        for v in values:        # the merged array may be any of these (or what they view): none is written
            while v is not None:
                v.merged = True
                v = v.base
        return ArraySlot(types.pop(), first.tracer)
    if force is not ALL and any(_made_inside(v.value if isinstance(v, MaybeUnbound) else v, force) for v in values):
        raise MergeError(f"{what} is an array (or list) made inside a data-dependent branch or loop and used "
                         f"after it; compiled code carries only numbers and tuples of numbers out of one", b.loc)
    if all(v is first for v in values) and not isinstance(first, (MaybeUnbound, MaybeNone, tuple,
                                                                  run_time_strings.RunTimeString)) \
            and not getattr(type(first), "carried", False) and not (is_traced(first) and first in force):
        return Same(first)
    if is_copyable_iterator(first) and all(type(v) is type(first) and v.__reduce__() == first.__reduce__()
                                             for v in values):
        return Same(first)          # copies of one iterator (each side got its own), not advanced
    if any(v is None or isinstance(v, MaybeNone) for v in values) and not all(v is None for v in values) \
            and all(v is None or isinstance(v, MaybeNone) or _numeric(v) for v in values):
        inner = [v.value if isinstance(v, MaybeNone) else v for v in values if v is not None]
        kinds = {b.kind(v) for v in inner}
        if len(kinds) > 1:
            raise MergeError(f"{what} is None on one path and {' or '.join(TYPE_NAMES[k] for k in kinds)} on others; "
                             f"compiled code needs one type", b.loc)
        # (always carried: a constant on the paths seen so far may be computed on the next ones)
        return MaybeNoneLayout(Slot(kinds.pop()))
    if any(v is NULL or isinstance(v, MaybeUnbound) for v in values):
        inner = [v.value if isinstance(v, MaybeUnbound) else v for v in values if v is not NULL]
        if heaps is not None:
            heaps = [h for h, v in zip(heaps, values) if v is not NULL]
        return Maybe(layout_of(inner, what, b, force=ALL, mutated=mutated, heaps=heaps))
    if (tracer := mixed_numbers.merges(values)) is not None:     # an int or a float by a run-time tag
        return mixed_layout(tracer)
    if all(_numeric(v) for v in values):
        kinds = {b.kind(v) for v in values}
        if len(kinds) > 1:
            raise MergeError(f"{what} is {' on one path and '.join(TYPE_NAMES[k] for k in sorted(kinds, key=str))} "
                             f"on another; compiled code needs one type (convert it, e.g. with float())", b.loc)
        if force is not ALL and not any(is_traced(v) for v in values) and len({_const_key(v) for v in values}) == 1:
            return Same(first)
        return Slot(kinds.pop())
    if all(type(tuple_items(v)) is tuple for v in values) and len({len(v) for v in values}) == 1:
        return Many(tuple, tuple(layout_of(list(col), f"{what}[{i}]", b, force, mutated, heaps)
                                 for i, col in enumerate(zip(*map(tuple_items, values)))))
    if all(isinstance(v, TracedInstance) for v in values):
        return _instance_layout(values, what, b, force, mutated, heaps)
    if getattr(type(first), "carried", False) and all(type(v) is type(first) for v in values):
        # an object the interpreter rebuilds from its fields (a range being iterated, a list
        # held in an array, a running sum): its fields merge
        return Many(type(first), tuple(layout_of(list(col), f"{what} (a {type(first).__name__})", b, force, mutated,
                                                 heaps)
                                       for col in zip(*(v.fields() for v in values))))
    if all(run_time_strings.is_string(v) for v in values):
        return StrSlot(b)
    kinds = ", ".join(sorted({_describe(v) for v in values}))
    raise MergeError(f"{what} differs between paths of a data-dependent branch or loop ({kinds}); "
                     f"only numbers and tuples of numbers can differ", b.loc)


def mixed_layout(tracer) -> Many:
    """How a number whose type is known only at run time merges: its tag, int and float."""
    return Many(mixed_numbers.MixedNumber, (Same(tracer), Slot(I64), Slot(I64), Slot(F64)))


def attributes_in(v: TracedInstance, heap) -> dict:
    """An instance's attributes in a state's heap (as they are now if it is not there)."""
    return heap.get(v, v.attrs) if heap is not None else v.attrs


def _instance_layout(values: list, what: str, b, force, mutated, heaps):
    """Different instances in one place: one class and one attribute set on every path, merged
    attribute by attribute into a new instance. Which object it is depends on the path, so
    these and the merged one are frozen (tracer.frontend.instances)."""
    attrs = [attributes_in(v, heaps[i] if heaps is not None else None) for i, v in enumerate(values)]
    cls, names = values[0].cls, tuple(attrs[0])        # (in the order they were set)
    for v, a in zip(values, attrs):
        if v.cls is not cls:
            raise MergeError(f"{what} is a {cls.__name__} object on one path and a {v.cls.__name__} object on "
                             f"another; compiled code needs one class", b.loc)
        if set(a) != set(names):
            raise MergeError(f"{what} is a {cls.__name__} object with attributes {', '.join(names)} on one path "
                             f"and {', '.join(a)} on another", b.loc)
        if v in mutated:
            raise MergeError(f"{what} is one of several {cls.__name__} objects depending on a traced condition, "
                             f"and one of them is changed on a path", b.loc)
    for v in values:
        v.frozen = True
    return Many(InstanceKind(cls, names, values[0].tracer),
                tuple(layout_of([a[n] for a in attrs], f"{what}.{n}", b, force, mutated, heaps) for n in names))


def heap_layout(states: list, b, force, part) -> tuple[tuple, dict, object]:
    """The heap part of merging `states` (StateLayout): (objects, kept, layout), where
    `part(values, what, mutated, heaps)` is the layout of one attribute's values."""
    heaps = [s.heap for s in states]
    objects, kept = [], {}
    for inst, attrs in heaps[0].items():
        if not all(inst in h for h in heaps[1:]):
            continue                      # made on some paths only: merged where it is referenced
        per_path = [h[inst] for h in heaps]
        if all(a is attrs for a in per_path) and not (force and _mentions(attrs, force)):
            kept[inst] = attrs
            continue
        names = tuple(attrs)
        if any(set(a) != set(names) for a in per_path):
            raise MergeError(f"a {inst.cls.__name__} object has different attributes on different paths of a "
                             f"data-dependent branch or loop", b.loc)
        objects.append((inst, names))
    mutated = frozenset(inst for inst, _ in objects)
    layout = Many(tuple, tuple(Many(tuple, tuple(part([a[n] for a in (h[inst] for h in heaps)],
                                                      f"attribute '{n}' of a {inst.cls.__name__} object", mutated,
                                                      heaps)
                                                 for n in names))
                               for inst, names in objects))
    return tuple(objects), kept, layout


def heap_values(objects: tuple, heap: dict) -> tuple:
    """A state's attribute values of the heap part's `objects`."""
    return tuple(tuple(heap[inst][n] for n in names) for inst, names in objects)


def rebuilt_heap(objects: tuple, kept: dict, values: tuple, made: dict) -> dict:
    """The heap of a merged state: the instances kept as they were, those merged with their
    merged attributes, and those `made` by the merge."""
    heap = {**kept, **made}
    for (inst, names), vals in zip(objects, values):
        heap[inst] = dict(zip(names, vals))
    return heap


def _mentions(attrs: dict, force) -> bool:
    """Whether attribute values hold a traced value in `force` (made inside the regions)."""
    stack = list(attrs.values())
    while stack:
        x = stack.pop()
        if is_traced(x):
            if x in force:
                return True
        elif type(x) in (tuple, list):
            stack.extend(x)
        elif isinstance(x, TracedArray):
            if x.value in force:
                return True
    return False


def _made_inside(x, force) -> bool:
    """Whether `x` is an array or a list that holds a value defined in the regions (`force`): it
    cannot be the same object after the merge, as its value is out of scope there."""
    if isinstance(x, TracedArray):
        return x.value in force or (x.base is not None and _made_inside(x.base, force))
    if type(x) is list:
        return any((is_traced(v) and v in force) or _made_inside(v, force) for v in x)
    if isinstance(x, DynList):               # (a list of run-time length made there: its list_new)
        return x.handle in force
    return False


ITERATOR_TYPES = {type(iter([])), type(iter(())), type(iter(range(1))), type(reversed([]))}


def is_copyable_iterator(x) -> bool:
    return type(x) in ITERATOR_TYPES


def copy_iterator(x):
    """A fresh iterator at the same position (each side of a fork advances its own)."""
    fn, args, *state = x.__reduce__()
    it = fn(*args)
    if state and state[0] is not None:
        it.__setstate__(state[0])
    return it


def _describe(v) -> str:
    if is_traced(v):
        return TYPE_NAMES.get(v.type, str(v.type))
    if v is NULL:
        return "unbound"
    if isinstance(v, TracedInstance):
        return f"a {v.cls.__name__} object"
    return type(v).__name__


def tuple_items(v):
    """A tuple argument's items as a tuple (it merges with the tuples a loop makes from it);
    anything else as it is."""
    return tuple(v.items()) if isinstance(v, ExternalList) and type(v.obj) is tuple else v


def layout_types(layout) -> list:
    if isinstance(layout, (Slot, ArraySlot)):
        return [layout.type]
    if isinstance(layout, StrSlot):
        return [I64]
    if isinstance(layout, Many):
        return [t for p in layout.parts for t in layout_types(p)]
    if isinstance(layout, (Maybe, MaybeNoneLayout)):
        return [BOOL] + layout_types(layout.inner)
    return []


def flatten(layout, value, b, heap=None) -> list[Value]:
    """The traced leaves of `value` under `layout` (constants become const ops); instances have
    their attributes in `heap` (a state's)."""
    if isinstance(layout, Same):
        return []
    if isinstance(layout, Slot):
        return [b.convert(value, layout.type) if not is_traced(value) else value]
    if isinstance(layout, StrSlot):
        return [b.value(run_time_strings.index_of(b, value))]
    if isinstance(layout, ArraySlot):
        v = value.value
        if v.type != layout.type:                # sizes this path knows, forgotten: a whole view
            low, high = b.const(ir.I64_MIN), b.const(ir.I64_MAX)
            v = b.emit("slice", (v, *(x for _ in layout.type.shape for x in (low, high))),
                       steps=(1,) * layout.type.rank, shape=layout.type.shape)
        return [v]
    if isinstance(layout, Many):
        if layout.kind is tuple:
            fields = tuple_items(value)
        elif isinstance(layout.kind, InstanceKind):
            fields = [attributes_in(value, heap)[n] for n in layout.kind.names]
        elif layout.kind is mixed_numbers.MixedNumber and not isinstance(value, layout.kind):
            fields = mixed_numbers.plain_fields(b, value)
        else:
            fields = value.fields()
        return [x for p, f in zip(layout.parts, fields) for x in flatten(p, f, b, heap)]
    if isinstance(layout, MaybeNoneLayout):
        if value is None:
            return [b.const(False)] + zeros(layout.inner, b)
        if isinstance(value, MaybeNone):
            return [value.present] + flatten(layout.inner, value.value, b, heap)
        return [b.const(True)] + flatten(layout.inner, value, b, heap)
    if value is NULL:
        return [b.const(False)] + zeros(layout.inner, b)
    if isinstance(value, MaybeUnbound):
        return [value.bound] + flatten(layout.inner, value.value, b, heap)
    return [b.const(True)] + flatten(layout.inner, value, b, heap)


def zeros(layout, b) -> list[Value]:
    return [zero_value(b, t) for t in layout_types(layout)]


def zero_value(b, t) -> Value:
    """A placeholder of type `t` (for a path that computes nothing): 0, or an array of zeros
    (of size 0 along the axes the type does not know)."""
    if isinstance(t, ir.ArrayType):
        return b.emit("full", (zero_value(b, t.dtype), *(b.const(n or 0) for n in t.shape)), shape=t.shape)
    if t == ir.F32:
        return b.emit("to_f32", (b.const(0.0),))
    if t in ir.NARROW:                            # int8 ... float16: a zero cast to it
        return b.emit("cast", (b.const(ir.zero(ir.compute_type(t))),), to=ir.NUMPY_DTYPE_NAMES[t])
    return b.const(ir.zero(t))


def rebuild(layout, leaves: list):
    """The value of `layout` from its leaves (consumed from the front)."""
    if isinstance(layout, Same):
        return layout.value
    if isinstance(layout, Slot):
        return leaves.pop(0)
    if isinstance(layout, StrSlot):
        return run_time_strings.made(layout.builder, leaves.pop(0))
    if isinstance(layout, ArraySlot):
        merged = TracedArray(layout.tracer, leaves.pop(0))
        merged.merged = True
        return merged
    if isinstance(layout, Many):
        parts = [rebuild(p, leaves) for p in layout.parts]
        return tuple(parts) if layout.kind is tuple else layout.kind(*parts)
    bound = leaves.pop(0)
    value = rebuild(layout.inner, leaves)
    if isinstance(layout, MaybeNoneLayout):
        if bound.op == "const":
            return value if bound.attrs["value"] else None
        return MaybeNone(bound, value)
    if bound.op == "const":
        return value if bound.attrs["value"] else NULL
    return MaybeUnbound(bound, value)


# ------------------------------------------------------------------------------ mutable objects
def mutable_snapshot(objects) -> list:
    """(object, contents) for the lists, dicts and iterators reachable from `objects`: a side that
    changes one would change it for the other side too, which compiled code cannot mirror."""
    out, seen, stack = [], set(), list(objects)
    while stack:
        x = stack.pop()
        if id(x) in seen:
            continue
        seen.add(id(x))
        if type(x) is list:
            out.append((x, list(x)))
            stack.extend(x)
        elif isinstance(x, made_arrays.MadeArray):   # (its items: a list)
            stack.append(x.items)
        elif (contents := trace_time.snapshot_contents(x)) is not None:    # a deque, Counter...
            out.append((x, contents))
            stack.extend(x.values() if isinstance(x, dict) else x)
        elif type(x) is dict:
            out.append((x, list(x.items())))
            stack.extend(x.values())
        elif type(x) is tuple:
            stack.extend(x)
        elif isinstance(x, TracedInstance):      # (its own attributes are merged: states.heap_layout)
            stack.extend(x.attrs.values())
        elif is_copyable_iterator(x):            # a list's iterator...: its position
            out.append((x, Position(x.__reduce__())))
        elif type(x) in (zip, map, filter, enumerate) or _generator(x):
            # (zip, map, filter: their iterators' positions; a generator's frame is saved and put
            # back; enumerate's count cannot be: a change is reported, not undone)
            if _generator(x):
                out.append((x, Position((x.advances, x.frame.save()))))
                frame = x.frame                      # (and what its frame holds: the generators it reads)
                stack.extend([*frame.stack, *frame.locals.values(), *(c.contents for c in frame.cells.values())])
            elif type(x) is enumerate:
                out.append((x, Position(position_now(x), undoable=False)))
            if not _generator(x):
                stack.extend(x.__reduce__()[1])      # the iterators it reads
    return out


def _generator(x) -> bool:
    """Whether x is a generator made by traced code (generators.SymbolicGenerator counts its
    advances)."""
    return getattr(type(x), "advances", None) is not None


@dataclass(frozen=True)
class Position:
    """Where an iterator was (mutable_snapshot): `undoable` when `restore` can put it back."""
    state: object
    undoable: bool = True


class IteratorAdvanced(UnsupportedError):
    """enumerate() advanced inside a data-dependent branch or loop: it would advance once at
    trace time, not once per run of the branch or loop (and its count cannot be put back)."""


def position_now(x):
    return x.advances if _generator(x) else x.__reduce__()


def _moved(x, position: Position) -> bool:
    return x.advances != position.state[0] if _generator(x) else position_now(x) != position.state


def changed_since(snapshot, builder, loop_body: bool = False) -> list:
    """The lists (and dicts, iterators) of `snapshot` (mutable_snapshot) that changed since.
    An iterator advanced in a loop's body is one (the loop unrolls); advanced on one side of a
    branch, it is noted instead (`GraphBuilder.diverged`): using it again is refused, and a
    side that never does (an early exit) is fine."""
    changed = []
    for obj, contents in snapshot:
        if isinstance(contents, Position):
            if not _moved(obj, contents):
                continue
            if not loop_body:
                builder.diverged[id(obj)] = obj
            elif not contents.undoable:
                raise IteratorAdvanced("next() of enumerate() inside a data-dependent loop is not supported: "
                                       "compiled code cannot advance it there", builder.loc)
            else:
                changed.append(obj)
            continue
        now = list(obj.items()) if isinstance(obj, dict) else list(obj)
        if len(now) != len(contents) or any(a is not c and a != c for a, c in zip(now, contents)):
            changed.append(obj)
    return changed


def diverged_error(builder, iterator) -> UnsupportedError | None:
    """The error for using an iterator a data-dependent branch advanced on one side only."""
    if id(iterator) not in builder.diverged:
        return None
    return UnsupportedError("this iterator (or generator) was advanced on one side of a data-dependent branch: "
                            "compiled code cannot use it after the branch", builder.loc)


def restore(snapshot, builder) -> None:
    """Put the contents of the lists and dicts of `snapshot` back (the caller may run this code
    again)."""
    for obj, contents in snapshot:
        if isinstance(contents, Position):
            builder.diverged.pop(id(obj), None)      # (run again from here: as it was)
            if not _moved(obj, contents):
                continue
            if _generator(obj):
                obj.advances = contents.state[0]
                obj.frame.restore(contents.state[1])
                continue
            if contents.undoable and len(contents.state) > 2 and contents.state[2] is not None:
                obj.__setstate__(contents.state[2])
            if position_now(obj) != contents.state:     # (an iterator run to its end stays there)
                raise IteratorAdvanced("an iterator run to its end inside a data-dependent branch or loop is "
                                       "not supported", builder.loc)
            continue
        if type(obj) is dict:
            obj.clear()
            obj.update(contents)
        elif isinstance(obj, trace_time.CLASSES):
            trace_time.restore(obj, contents)
        else:
            obj[:] = contents
