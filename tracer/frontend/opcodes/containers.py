"""Opcode handlers: tuples and lists whose length is known at trace time.

The module-level helpers are shared with `tracer.frontend.library` (builtins such as `sum`, list methods):
`materialize` (the items of a trace-time iterable), `items_equal` (CPython's item comparison, with
its identity shortcut) and the type-name helpers used to reproduce CPython's `TypeError`s.
"""
from __future__ import annotations

import operator
import sys
from array import array

from tracer.errors import DataDependentControlFlow
from tracer.frontend import (
    complex_arrays,
    dicts,
    dynlists,
    gathered,
    indexing,
    instance_ops,
    made_arrays,
    pybuiltins,
    run_time_strings,
    selected,
    trace_time,
)
from tracer.frontend.builder import PYTHON_BINARY, Failed, Unknown, is_number, is_traced
from tracer.frontend.iteration import ListChanged, RangeIter
from tracer.frontend.objects import BoundMethod, ExternalList, ExternalObject, TracedArray
from tracer.ir import BOOL, F64, I64, NARROW, NUMPY_DTYPE_NAMES

MAX_UNPACKED = 64       # the most items of an array unpacked (or listed) one by one in a trace

COMPARE_SYMBOLS = {"lt": "<", "le": "<=", "gt": ">", "ge": ">=", "eq": "==", "ne": "!="}
BINARY_SYMBOLS = {"add": "+", "sub": "-", "mul": "*", "div": "/", "floordiv": "//", "mod": "%", "pow": "**"}
PYTHON_INPLACE = {"add": operator.iadd, "sub": operator.isub, "mul": operator.imul, "div": operator.itruediv,
                  "floordiv": operator.ifloordiv, "mod": operator.imod, "pow": operator.ipow}
# objects whose every comparison with a number is unequal (and ordering is a TypeError)
_NEVER_EQUAL_TO_NUMBERS = (type(None), str, bytes, list, tuple, ExternalList)


# ------------------------------------------------------------------------------ shared helpers
def python_type(x) -> type:
    """The Python type of a stack value as the user's program sees it."""
    if is_traced(x):
        if x.type in NARROW:            # np.uint8, np.float16...
            import numpy
            return numpy.dtype(NUMPY_DTYPE_NAMES[x.type]).type
        return {F64: float, I64: int, BOOL: bool}[x.type]
    if isinstance(x, (ExternalList, ExternalObject)):
        return type(x.obj)
    if isinstance(x, instance_ops.TracedInstance):
        return x.cls
    return type(x)


def type_name(x) -> str:
    return python_type(x).__name__


def sequence_kind(x):
    """list or tuple for a sequence (an input list by its Python type), else None."""
    if isinstance(x, ExternalList):
        return type(x.obj)
    if type(x) in (list, tuple):
        return type(x)
    return None


def _holds(x, leaf, seen=None) -> bool:
    """Whether `x` is, or holds in its (possibly nested, possibly cyclic) lists and tuples, an
    item for which `leaf` is true."""
    if leaf(x):
        return True
    if type(x) in (list, tuple):
        seen = set() if seen is None else seen
        if id(x) in seen:
            return False
        seen.add(id(x))
        return any(_holds(item, leaf, seen) for item in x)
    return False


def is_symbolic(x) -> bool:
    """Whether `x` holds anything known only at run time: a traced value, an input list or object."""
    return _holds(x, lambda v: is_traced(v) or isinstance(v, (ExternalList, ExternalObject, BoundMethod,
                                                              instance_ops.TracedInstance)))


def holds_object(x) -> bool:
    """Whether `x` is or holds (in lists and tuples) a user object or one of its methods."""
    return _holds(x, lambda v: isinstance(v, (ExternalObject, BoundMethod)))


def materialize(tracer, x) -> list:
    """The items of a trace-time iterable (an external list's items are loaded per call)."""
    if isinstance(x, ExternalList):
        return x.items()               # (a ListView's too: loads from its array)
    dicts.not_iterable(tracer, x)
    if isinstance(x, dicts.DynDict):
        x = x.keys
    if isinstance(x, dynlists.DynList):
        raise tracer.error("this use of a list whose length is known only at run time (it changes in a "
                           "data-dependent branch or loop) is not supported")
    if isinstance(x, RangeIter) and x.array is not None and not isinstance(x.array, TracedArray):
        return list(x.array.unrolled(tracer, tracer.builder.concretize(x.index, "an iterator's position")))
    if is_traced(x):
        raise tracer.error("iterating over a traced number is not possible")
    if isinstance(x, TracedArray):               # `lo, hi = np.percentile(x, [5, 95])`
        if x.rank == 0:
            raise TypeError("iteration over a 0-d array")
        n = x.type.shape[0]
        if n is None or n > MAX_UNPACKED:
            raise tracer.error("unpacking (or listing) an array the trace does not know to be short is not "
                               f"supported (at most {MAX_UNPACKED} items of a known count)")
        return [indexing.subscript(tracer, x, i) for i in range(n)]
    if isinstance(x, (ExternalObject, BoundMethod)):
        raise tracer.error(f"iterating over {x!r} is not supported")
    try:
        return list(x)
    except TypeError:
        raise tracer.error(f"iterating over a {type(x).__name__} is not supported") from None


def plain(x):
    """An input list as a Python list/tuple of its (symbolic) items; anything else as it is
    (an array.array argument is refused before: `refuse_array_comparison`)."""
    return type(x.obj)(x.items()) if isinstance(x, ExternalList) else x


def refuse_array_comparison(tracer, a, b) -> None:
    for x in (a, b):
        if isinstance(x, ExternalList) and type(x.obj) is array:
            raise tracer.error(f"comparing {x!r} is not supported yet")


def deep_plain(x):
    """`plain`, recursively through lists and tuples (for comparisons run by Python)."""
    x = plain(x)
    if type(x) in (list, tuple):
        return type(x)(deep_plain(item) for item in x)
    return x


def proxy(x):
    """A plain object of the same Python type, to let Python raise its own TypeError message."""
    if is_traced(x):
        return python_type(x)(0)
    if isinstance(x, ExternalList):
        return array(x.obj.typecode) if type(x.obj) is array else type(x.obj)()
    return x


def both_true(builder, a, b):
    """`a and b` for two truth values, each a Python bool or a traced bool."""
    if not is_traced(a):
        return b if a else False
    if not is_traced(b):
        return a if b else False
    return builder.emit("select", (a, b, builder.const(False)))


def either_true(builder, a, b):
    """`a or b` for two truth values, each a Python bool or a traced bool."""
    if not is_traced(a):
        return True if a else b
    if not is_traced(b):
        return True if b else a
    return builder.emit("select", (a, builder.const(True), b))


def _unsupported_comparison(tracer, a, b):
    for x in (a, b):
        if isinstance(x, ExternalObject):
            return tracer.error(f"comparing {x!r} (class {type(x.obj).__name__}) is not supported")
        if isinstance(x, BoundMethod):
            return tracer.error("comparing methods of objects from outside the traced function is not supported")
    return tracer.error(f"comparing a {type_name(a)} with a {type_name(b)} is not supported here")


def items_equal(tracer, a, b):
    """CPython's `PyObject_RichCompareBool(a, b, Py_EQ)` for two items of sequences: the same
    object is equal (even a NaN); numbers compare as numbers, sequences item by item.
    The result is a Python bool or a traced bool."""
    if a is b:
        return True
    if run_time_strings.involved(a, b):
        return run_time_strings.compare(tracer, "eq", a, b)
    if instance_ops.involved(a, b):
        return instance_ops.truth_value(tracer, instance_ops.compare(tracer, "eq", a, b))
    if isinstance(a, (ExternalObject, BoundMethod)) or isinstance(b, (ExternalObject, BoundMethod)):
        raise _unsupported_comparison(tracer, a, b)
    a_number = is_traced(a) or is_number(a)
    b_number = is_traced(b) or is_number(b)
    if a_number and b_number:
        return tracer.builder.compare("eq", a, b)
    ka, kb = sequence_kind(a), sequence_kind(b)
    if ka is not None and ka is kb:
        return sequences_equal(tracer, a, b)
    if is_traced(a) or is_traced(b):
        other = b if is_traced(a) else a
        if isinstance(other, _NEVER_EQUAL_TO_NUMBERS):
            return False          # a number never equals None, a string or a sequence
        raise _unsupported_comparison(tracer, a, b)
    if ka is not None or kb is not None:
        return False              # a list and a tuple, or a sequence and a plain object
    result = a == b
    if type(result) is not bool:
        raise _unsupported_comparison(tracer, a, b)
    return result


def sequences_equal(tracer, a, b):
    """`a == b` for two lists or two tuples (input lists included): a Python or traced bool."""
    refuse_array_comparison(tracer, a, b)
    xs, ys = plain(a), plain(b)
    if len(xs) != len(ys):
        return False
    result = True
    for x, y in zip(xs, ys):
        result = both_true(tracer.builder, result, items_equal(tracer, x, y))
        if result is False:
            return False
    return result


def compare_objects(tracer, op: str, a, b):
    """`a <op> b` when not both operands are numbers: sequences, None, strings, objects."""
    builder = tracer.builder
    if run_time_strings.involved(a, b):
        return run_time_strings.compare(tracer, op, a, b)
    refuse_array_comparison(tracer, a, b)
    if instance_ops.involved(a, b):
        return instance_ops.compare(tracer, op, a, b)
    if holds_object(a) or holds_object(b):
        raise _unsupported_comparison(tracer, a, b)
    if not is_symbolic(a) and not is_symbolic(b):
        return _python_compare(op, a, b)
    if op in ("eq", "ne"):
        result = items_equal(tracer, a, b) if a is not b else _top_level_same(tracer, a)
        return result if op == "eq" else builder.logical_not(result)
    ka, kb = sequence_kind(a), sequence_kind(b)
    if ka is not None and kb is not None and ka is kb:
        pa, pb = deep_plain(a), deep_plain(b)
        if is_symbolic(pa) or is_symbolic(pb):
            return _lexicographic(tracer, op, plain(a), plain(b))
        return _python_compare(op, pa, pb)
    if is_traced(a) or is_traced(b):
        other = b if is_traced(a) else a
        if not isinstance(other, _NEVER_EQUAL_TO_NUMBERS):
            raise _unsupported_comparison(tracer, a, b)
    # a list and a tuple, a sequence and a number, None or a string: Python's own TypeError
    raise TypeError(f"'{COMPARE_SYMBOLS[op]}' not supported between instances of "
                    f"'{type_name(a)}' and '{type_name(b)}'")


def _lexicographic(tracer, op: str, xs, ys):
    """CPython's ordering of two lists or tuples: by the first items that are not equal
    (`items_equal`), else by length; with traced items, which item decides is known at run
    time, so each is tried from the last one back (a select per item)."""
    b = tracer.builder
    result = _python_compare(op, len(xs), len(ys))
    for x, y in reversed(list(zip(xs, ys))):
        equal = items_equal(tracer, x, y)
        if equal is True:
            continue
        here = compare_objects(tracer, op, x, y) if not (is_number_like(x) and is_number_like(y)) \
            else b.compare(op, x, y)
        if equal is False:
            result = here
        else:
            result = b.emit("select", (equal, b.value(result), b.value(here)))
    return result


def is_number_like(x) -> bool:
    return is_traced(x) or isinstance(x, (int, float))


def _top_level_same(tracer, a):
    """`a == a` at the top level (no identity shortcut there, only inside sequences)."""
    if is_traced(a):
        return tracer.builder.compare("eq", a, a)     # False for a NaN
    return items_equal(tracer, plain(a), plain(a))  # a sequence: every item is itself


def pinned_already(builder, x) -> bool:
    """Whether traced `x` depends only on arguments the trace has pinned already (so knowing its
    value at trace time adds no guard), with a known value."""
    if x not in builder.examples or isinstance(builder.examples[x], (Unknown, Failed)):
        return False
    stack, seen = [x], set()
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        if v.op == "param" and v not in builder.pinned:
            return False
        stack.extend(v.args)
    return True


def _python_compare(op, a, b):
    return getattr(operator, op)(a, b)


# ------------------------------------------------------------------------------ opcode handlers
class ContainerOps:
    def materialize(self, x) -> list:
        return materialize(self.tracer, x)

    def list_made(self, site) -> None:
        """Note where the list on top of the stack was made; one made where a list that a
        data-dependent branch or loop changed was made, in an earlier trace, is held in an array
        (gathered.ListView) from here on, so that branch or loop can change it (trace_frame)."""
        lst = self.stack[-1]
        if id(lst) in self.tracer.list_sites:
            return                         # made earlier (a call may return a list it was given)
        # only a list nothing else refers to yet (the stack, `lst`, getrefcount's argument) is
        # new here and can be held in an array instead: no other name sees the Python list
        if site in self.tracer.held_sites and sys.getrefcount(lst) <= 3:
            view = dicts.held_form(self.tracer, lst, site)
            if view is not None:
                self.stack[-1] = view
                return
        self.tracer.list_sites[id(lst)] = (lst, site)

    def compare_objects(self, op: str, a, b):
        return compare_objects(self.tracer, op, a, b)

    def subscript(self, container, index):
        if isinstance(container, instance_ops.TracedInstance):
            return instance_ops.get_item(self.tracer, container, index)
        if isinstance(container, made_arrays.MadeArray):
            if is_traced(index) and index.type in (I64, BOOL) and not self.builder.must_be_concrete(index) \
                    and selected.selectable(container.items):
                return selected.select_item(self.tracer, container.items, index)   # a short array
            return made_arrays.get_item(self.tracer, container, index)
        if isinstance(container, TracedArray):
            return indexing.subscript(self.tracer, container, index)
        if isinstance(container, complex_arrays.ComplexArray):
            return complex_arrays.subscript(self.tracer, container, index, indexing.subscript)
        if is_traced(container) or isinstance(container, ExternalObject):
            if isinstance(container, ExternalObject):
                raise self.tracer.error(f"subscripting {container!r} is not supported")
            raise TypeError(f"'{type_name(container)}' object is not subscriptable")
        if isinstance(index, slice) and gathered.sequence_noun(self.tracer, container) == "array":
            raise self.tracer.error("slicing an array.array is not supported yet (it makes a new array)")
        if isinstance(container, gathered.ListView):
            return self._view_item(container, index)
        if isinstance(container, dicts.DynDict):
            return dicts.get_item(self.tracer, container, index)
        if type(container) in (dict, dicts.InputDict) and dicts.symbolic(index):
            raise dicts.needs_run_time(self.tracer, container, index)
        trace_time.check_key(self.tracer, container, index)
        if isinstance(container, dynlists.DynList):
            if isinstance(index, slice):
                return self.tracer.call(pybuiltins.sliced_list, [container, index.start, index.stop, index.step], {})
            return dynlists.get(self.tracer, container, index)
        if is_traced(index) and pinned_already(self.builder, index):
            index = self.builder.concretize(index, "this index")     # (no new guard)
        run_time = is_traced(index) and not self.builder.must_be_concrete(index)
        if isinstance(container, ExternalList) and is_traced(index) and index.type == I64 \
                and (len(container) > gathered.unroll_limit(self.tracer) or run_time) \
                and (view := gathered.view_of(self.tracer, container, always=run_time)) is not None:
            # a long list indexed by a loop counter, or one indexed by a value known at run time only
            return self._view_item(view, index)
        if type(container) is list and is_traced(index) and index.type == I64 and not self.tracer.unroll_loops \
                and (view := gathered.view_of(self.tracer, container)) is not None:
            # numbers built in the trace, packed and loaded, not pinned (not under grad: a load's
            # gradient is a store, which a second derivative cannot go through)
            return self._view_item(view, index)
        if isinstance(index, slice) and list in (type(container), type(getattr(container, "obj", None))) \
                and self.run_time_bounds(index):          # a new list of run-time length
            return self.tracer.call(pybuiltins.sliced_list, [container, index.start, index.stop, index.step], {})
        if isinstance(index, slice):
            index = self.concrete_slice(index)
            if isinstance(container, ExternalList):
                positions = range(len(container))[index]        # load only the items sliced
                return type(container.obj)(container.item(i) for i in positions)   # a tuple's slice is a tuple
            return container[index]
        if run_time and index.type in (I64, BOOL) and selected.selectable(container):
            return selected.select_item(self.tracer, container, index)   # a short list: a select per item
        index = self.builder.concretize(index, "this index")
        if isinstance(container, ExternalList):
            n = len(container)
            if type(index) not in (int, bool):
                raise gathered.index_type_error(type(container.obj).__name__, type(index).__name__)
            if not -n <= index < n:
                raise IndexError(f"{type(container.obj).__name__} index out of range")
            return container.item(index % n if n else index)
        try:
            return container[index]
        except KeyError as exc:        # the user's missing key (a bare KeyError here is not the tracer's bug)
            raise KeyError(*exc.args) from None

    def _view_item(self, view, index):
        """list[index] of a list held in an array: a traced index is checked at run time (out
        of range: the call runs the Python function, which raises IndexError)."""
        if isinstance(index, slice):
            return materialize(self.tracer, view)[self.concrete_slice(index)]
        if is_traced(index) and index.type == I64:
            return view.element(self.tracer, index)
        noun = gathered.sequence_noun(self.tracer, view)
        if type(index) not in (int, bool):
            raise gathered.index_type_error(noun, type_name(index))
        if not -len(view) <= index < len(view):
            raise IndexError(f"{noun} index out of range")
        return view.element(self.tracer, int(index) % len(view))

    def run_time_bounds(self, s: slice) -> bool:
        """Whether a slice has a bound known only at run time (not one the trace pinned)."""
        return any(is_traced(p) and not self.builder.must_be_concrete(p) for p in (s.start, s.stop, s.step))

    def concrete_slice(self, s: slice) -> slice:
        """A list's slice: its bounds must be known when the function is compiled."""
        return slice(*(self.builder.concretize(p, "a slice bound") for p in (s.start, s.stop, s.step)))

    def op_BINARY_SUBSCR(self, instr):
        index = self.pop()
        self.push(self.subscript(self.pop(), index))

    def op_BUILD_SLICE(self, instr):
        # bounds stay traced: an array slice takes them at run time (a list's are concretized)
        self.push(slice(*self.popn(instr.arg)))

    def op_BINARY_SLICE(self, instr):   # 3.12+
        stop = self.pop()
        start = self.pop()
        self.push(self.subscript(self.pop(), slice(start, stop)))

    def op_STORE_SLICE(self, instr):    # 3.12+: container[start:stop] = value
        stop = self.pop()
        start = self.pop()
        self.store_subscript(self.pop(), slice(start, stop), self.pop())

    def op_STORE_SUBSCR(self, instr):
        index = self.pop()
        container = self.pop()
        self.store_subscript(container, index, self.pop())

    def store_subscript(self, container, index, value):
        if isinstance(container, instance_ops.TracedInstance):
            instance_ops.set_item(self.tracer, container, index, value)
            return
        if isinstance(container, TracedArray):
            indexing.store_item(self.tracer, container, index, value)
            return
        if isinstance(container, complex_arrays.ComplexArray):
            complex_arrays.store_item(self.tracer, container, index, value, indexing.store_item)
            return
        if isinstance(container, made_arrays.MadeArray):
            made_arrays.set_item(self.tracer, container, index, value)
            return
        if isinstance(container, dynlists.DynList) and not isinstance(index, slice):
            dynlists.set_item(self.tracer, container, index, value)
            return
        if isinstance(container, dynlists.DynList) and index.step is None:     # lst[a:b] = values
            self.tracer.call(pybuiltins.assign_slice, [container, index.start, index.stop, value], {})
            return
        if isinstance(container, dicts.DynDict):
            dicts.set_item(self.tracer, container, index, value)
            return
        if type(container) is dicts.InputDict:
            raise self.tracer.error("assigning an item of a dict from outside the traced function is not supported")
        if isinstance(container, dict):     # (a Counter, a defaultdict... made in the trace: at trace time too)
            trace_time.check_key(self.tracer, container, index)
            if dicts.symbolic(index):
                raise dicts.needs_run_time(self.tracer, container, index, value)
            container[index] = value
            return
        if isinstance(container, ExternalList) and type(container.obj) is tuple:
            raise TypeError("'tuple' object does not support item assignment")
        if isinstance(container, ExternalList):          # an input list, or a list held in an array
            gathered.store(self.tracer, gathered.writable_view(self.tracer, container), index, value)
            return
        if not isinstance(container, list):
            raise self.tracer.error("item assignment is supported only on lists and NumPy arrays")
        if isinstance(index, slice):
            index = self.concrete_slice(index)
        if is_traced(index) and isinstance(self.builder.examples.get(index), Unknown):
            self.hold_list(container, value)
        try:
            position = self.builder.concretize(index, "this index")
        except DataDependentControlFlow:        # (an index computed from floats: never pinned)
            self.hold_list(container, value)
            raise
        container[position] = value

    def hold_list(self, lst: list, value) -> None:
        """A store into a list made in the trace at an index known only at run time: the call is
        traced again with the lists made where this one was made held in arrays (ListChanged,
        interpreter.trace_frame), where such a store is an op; a list of numbers of several
        types (with `value`) is made a list of Mixed items instead (an array would make ints floats)."""
        made = self.tracer.list_sites.get(id(lst))
        if made is not None and made[0] is lst and made[1] not in self.tracer.held_sites:
            exc = ListChanged("a list is written at an index known only at run time", self.builder.loc)
            items = [*lst, value]
            mixed = not dynlists.holds_items(self.builder, items) and dynlists.common_type(self.builder, items)
            exc.sites, exc.grown = frozenset({made[1]}), ({made[1]: mixed} if mixed else {})
            exc.final = True          # (unrolling the loops over lists would meet the same store)
            raise exc

    def op_DELETE_SUBSCR(self, instr):
        """`del lst[i]` / `del lst[a:b]` on a list made in the trace (an index known at trace
        time): CPython's own deletion, errors included."""
        index = self.pop()
        container = self.pop()
        if isinstance(container, dynlists.DynList) and not isinstance(index, slice):
            return dynlists.delete_item(self.tracer, container, index)
        if isinstance(container, dicts.DynDict):
            return dicts.delete_item(self.tracer, container, index)
        if type(container) is dicts.InputDict:
            raise self.tracer.error("deleting an item of a dict from outside the traced function is not supported")
        if type(container) is dict:
            if dicts.symbolic(index):
                raise dicts.needs_run_time(self.tracer, container, index)
            del container[index]
            return None
        if type(container) is not list:
            if isinstance(container, TracedArray):
                raise ValueError("cannot delete array elements")
            if type(container) is tuple or (isinstance(container, ExternalList) and type(container.obj) is tuple):
                raise TypeError("'tuple' object doesn't support item deletion")
            raise self.tracer.error("del x[i] is supported only on lists made in the traced function")
        if isinstance(index, slice):
            index = self.concrete_slice(index)
        del container[self.builder.concretize(index, "this index")]

    def op_BUILD_TUPLE(self, instr):
        self.push(tuple(self.popn(instr.arg)))

    def op_BUILD_LIST(self, instr):
        self.push(list(self.popn(instr.arg)))

    # -- dicts (tracer.frontend.dicts)
    def op_BUILD_MAP(self, instr):
        items = self.popn(2 * instr.arg)
        self.push(dicts.build(self.tracer, (self.code, self.pc - 1), list(zip(items[::2], items[1::2]))))

    def op_BUILD_CONST_KEY_MAP(self, instr):
        keys = self.pop()
        self.push(dicts.build(self.tracer, (self.code, self.pc - 1), list(zip(keys, self.popn(instr.arg)))))

    def op_BUILD_SET(self, instr):
        self.push(dicts.build_set(self.tracer, (self.code, self.pc - 1), self.popn(instr.arg)))

    def op_SET_ADD(self, instr):
        value = self.pop()
        self._add_to_set(self.stack[-instr.arg], value)

    def op_SET_UPDATE(self, instr):
        items = self.materialize(self.pop())
        target = self.stack[-instr.arg]
        for x in items:
            self._add_to_set(target, x)

    def _add_to_set(self, target, value):
        if isinstance(target, dicts.DynSet):
            dicts.call_method(self.tracer, dicts.DictMethod(target, "add"), [value], {})
        else:
            dicts.trace_time_method(self.tracer, target, "add", [value], {})

    def op_MAP_ADD(self, instr):
        value = self.pop()
        key = self.pop()
        self.store_subscript(self.stack[-instr.arg], key, value)

    def op_DICT_UPDATE(self, instr):
        mapping = self.pop()
        target = self.stack[-instr.arg]
        if type(mapping) is not dict or isinstance(target, dicts.DynDict):
            raise self.tracer.error("{**mapping} of a dict of run-time size is not supported")
        dicts.trace_time_method(self.tracer, target, "update", [mapping], {})

    def op_LIST_APPEND(self, instr):
        value = self.pop()
        target = self.stack[-instr.arg]
        if isinstance(target, gathered.ListView):      # a comprehension compiled to a loop
            self.stack[-instr.arg] = target.append(self.tracer, value)
            return
        if isinstance(target, dynlists.DynList):
            dynlists.append(self.tracer, target, value)
            return
        target.append(value)

    def op_LIST_EXTEND(self, instr):
        items = self.materialize(self.pop())
        target = self.stack[-instr.arg]
        if isinstance(target, dynlists.DynList):      # a display [1, 2.5, 3] made empty at run time, then filled
            for x in items:
                dynlists.append(self.tracer, target, x)
            return
        target.extend(items)

    def op_LIST_TO_TUPLE(self, instr):
        self.push(tuple(self.pop()))

    def op_UNPACK_SEQUENCE(self, instr):
        items = self.materialize(self.pop())
        if len(items) != instr.arg:
            if len(items) > instr.arg:
                raise ValueError(f"too many values to unpack (expected {instr.arg})")
            raise ValueError(f"not enough values to unpack (expected {instr.arg}, got {len(items)})")
        self.push(*reversed(items))

    def op_UNPACK_EX(self, instr):
        before, after = instr.arg & 0xFF, instr.arg >> 8
        items = self.materialize(self.pop())
        if len(items) < before + after:
            raise ValueError(f"not enough values to unpack (expected at least {before + after}, got {len(items)})")
        middle = list(items[before:len(items) - after])
        self.push(*reversed(items[len(items) - after:]), middle, *reversed(items[:before]))

    def inplace_list(self, op: str, lst: list, other) -> list:
        """`lst += other` / `lst *= n` on a list built inside the trace: mutates it, as CPython does."""
        if isinstance(other, (ExternalObject, BoundMethod)):
            raise self.tracer.error(f"the operator {BINARY_SYMBOLS[op]}= with {other!r} is not supported")
        if op == "add":
            if is_traced(other) or is_number(other):
                raise TypeError(f"'{type_name(other)}' object is not iterable")
            lst.extend(self.materialize(other))
            return lst
        lst *= self.repeat_count(other)
        return lst

    def repeat_count(self, n) -> int:
        """The count of `seq * n`, or CPython's TypeError for a non-int count."""
        if is_traced(n):
            if n.type == F64:   # as Python: a float count is a TypeError, whatever its value
                raise TypeError("can't multiply sequence by non-int of type 'float'")
            return self.builder.concretize(n, "a repetition count")
        if isinstance(n, ExternalObject):
            raise self.tracer.error(f"repeating a sequence by {n!r} is not supported")
        if type(n) not in (int, bool):
            [] * proxy(n)       # raises Python's own TypeError (or works for an int-like constant)
        return n

    def container_binary(self, op, a, b, inplace: bool = False):
        """`+` and `*` on trace-time sequences (concatenation, repetition); other operators on
        sequences raise Python's own TypeError. (`lst += ...` on a list built in the trace is
        `inplace_list`; `a += b` on anything else computes `a + b`, with `+=` in error messages.)"""
        if instance_ops.involved(a, b):       # a user class's operator methods, inlined
            return instance_ops.binary(self.tracer, op, a, b, inplace)
        python_op = (PYTHON_INPLACE if inplace else PYTHON_BINARY)[op]
        for x in (a, b):
            if isinstance(x, ExternalList) and type(x.obj) is array:
                python_op(proxy(a), proxy(b))       # array + 1.0: Python's TypeError
                raise self.tracer.error(f"the operator {BINARY_SYMBOLS[op]} on an array.array (it makes or "
                                        f"changes an array) is not supported yet")
            if isinstance(x, (ExternalObject, BoundMethod)):
                raise self.tracer.error(f"the operator {BINARY_SYMBOLS[op]} with {x!r} is not supported")
        if op == "add":
            if sequence_kind(a) is not None and sequence_kind(b) is not None:
                return plain(a) + plain(b)   # list + tuple: Python's TypeError
            if not is_symbolic(a) and not is_symbolic(b):
                return python_op(a, b)
        elif op == "mul":
            a_count = is_traced(a) or is_number(a)
            seq, n = (b, a) if a_count else (a, b)
            constant_sequence = not is_symbolic(seq) and isinstance(seq, (str, bytes, list, tuple, range))
            if sequence_kind(seq) is not None or constant_sequence:
                return plain(seq) * self.repeat_count(n) if not a_count else self.repeat_count(n) * plain(seq)
        elif not is_symbolic(a) and not is_symbolic(b):
            return python_op(a, b)
        # a sequence with a number, or a number with a sequence: always a TypeError in Python
        python_op(proxy(a), proxy(b))
        raise self.tracer.error(f"the operator {BINARY_SYMBOLS[op]} on a {type_name(a)} and a {type_name(b)} "
                                f"is not supported")
