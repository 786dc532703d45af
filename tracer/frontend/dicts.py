"""Dicts and sets made in the traced function: displays, comprehensions, dict() and set().

Two levels, as for lists. A dict whose keys are constants (strings, numbers, tuples of them) is a
Python dict at trace time, its values symbolic (numbers, functions, lists...); reading and
writing it with constant keys happens at trace time, as Python would. Where a key is known only
at run time (`counts[x] = counts.get(x, 0) + 1`), or a data-dependent branch or loop changes the
dict, the trace fails with ListChanged naming where the dict was made, and is traced again with
the dict made there a `DynDict`: two lists of run-time length (tracer.frontend.dynlists), its
keys and its values, in insertion order. A lookup is a compiled loop over the keys
(`pybuiltins.position_of`): CPython's `==` on numbers and tuples of numbers, a NaN key left to
Python (CPython finds it by identity). Deleting keeps the order; a missing key's KeyError is
raised by Python (the call runs the function again, which raises it with its message).

Sets likewise: a Python set of constants at trace time, else a `DynSet` (its items in one
DynList). CPython iterates a set in the order of its hash table, which a DynSet does not keep:
what does not depend on that order compiles (`in`, add, discard, remove, len, sorted, min, max,
sum of ints, returning it), iterating one in another way is reported.
"""
from __future__ import annotations

from tracer.frontend import dynlists, gathered, pybuiltins
from tracer.frontend.builder import is_traced
from tracer.frontend.iteration import ListChanged
from tracer.frontend.sources import ItemSource, StructureGuard

DICT_METHODS = ("get", "setdefault", "items", "keys", "values", "pop", "update", "copy", "clear")
_MISSING = object()


class DynDict:
    """A dict of run-time size: `keys` and `values`, two DynLists of one length."""

    def __init__(self, keys: dynlists.DynList, values: dynlists.DynList):
        self.keys, self.values = keys, values

    def __repr__(self):
        return "<dict of run-time size>"


class DynSet:
    """A set of run-time size: its items in `keys`, a DynList (in the order they were added)."""

    def __init__(self, keys: dynlists.DynList):
        self.keys = keys

    def __repr__(self):
        return "<set of run-time size>"


SET_METHODS = ("add", "discard", "remove", "copy", "clear")


class InputDict(dict):
    """A dict argument (or one read from an argument): its keys (constants) are guarded, its
    values loaded per call. Compiled code reads it; changing it is reported."""


InputDict.__name__ = InputDict.__qualname__ = "dict"     # (in CPython's messages: "'dict' and 'float'")


class InputSet(set):
    """A set argument (or one read from an argument) of constants, guarded with its order: a
    constant of the trace. Compiled code reads it; changing it is reported."""


InputSet.__name__ = InputSet.__qualname__ = "set"
SET_READERS = ("__contains__", "copy", "union", "intersection", "difference", "symmetric_difference", "issubset",
               "issuperset", "isdisjoint")


def input_container(tracer, obj, source):
    """A dict, set or frozenset argument whose keys are constants: its keys (in order) guarded;
    a dict's values loaded per call (an InputDict); a set a constant (an InputSet)."""
    tracer.structure_guards.setdefault(source.key, StructureGuard(source, type(obj), len(obj), tuple(obj)))
    if type(obj) is dict:
        return InputDict({k: tracer.wrap(v, ItemSource(source, k)) for k, v in obj.items()})
    held = ordered_copy(obj) if type(obj) is set else obj
    if held is None:
        raise tracer.error(f"{source} is a set whose copy iterates in another order, which is not supported")
    return held


def ordered_copy(obj: set) -> InputSet | None:
    """An InputSet that iterates in the order `obj` does, or None. CPython's order is that of the
    hash table, whose size depends on how the set was made: `set(obj)` sizes its table for the
    items at once, while adding them one by one grows it as a display, a comprehension or a
    copy made by pickling or `copy.deepcopy` did. The first copy of the two that keeps the order."""
    order = tuple(obj)
    held = InputSet(obj)
    if tuple(held) == order:
        return held
    held = InputSet()
    for item in order:
        held.add(item)
    return held if tuple(held) == order else None


def constant_key(k) -> bool:
    if type(k) is tuple:
        return all(map(constant_key, k))
    return type(k) in (str, int, float, bool, bytes) or k is None


class DictMethod:
    """A method of a DynDict or DynSet."""

    def __init__(self, d, name: str):
        self.d, self.name = d, name


def symbolic(x) -> bool:
    """Whether `x` cannot be a key of a trace-time dict (a traced number, or holds one)."""
    if type(x) is tuple:
        return any(symbolic(v) for v in x)
    return is_traced(x) or not isinstance(x, (str, int, float, bool, type(None), bytes))


def needs_run_time(tracer, d: dict, key=_MISSING, value=_MISSING):
    """The trace-time dict `d` meets a traced key: ListChanged naming where it was made (the
    next trace makes it a DynDict there), with the key's and value's types when known."""
    b = tracer.builder
    made = tracer.list_sites.get(id(d))
    exc = ListChanged("a dict is used with a key known only at run time", b.loc)
    if made is None or made[0] is not d or type(d) is InputDict:
        return tracer.error("a dict from outside the traced code, used with a key known only at run time, is not "
                            "supported")
    types = type_hint(b, list(d.items())) if type(d) is dict else set_hint(b, list(d))
    if types is None and key is not _MISSING:
        kt = dynlists.item_type(b, key)
        vt = dynlists.item_type(b, value) if value is not _MISSING else None
        types = (type(d).__name__, kt, vt) if kt is not None else None
    exc.sites, exc.grown = frozenset({made[1]}), {made[1]: types}
    exc.final = True          # (unrolling a loop would meet the same key: the next trace holds the dict)
    return exc


def type_hint(b, items: list):
    """("dict", key type, value type) of a dict's items (the first one's), or None."""
    if not items:
        return None
    k, v = items[0]
    return ("dict", dynlists.item_type(b, k), dynlists.item_type(b, v))


def set_hint(b, items: list):
    """("set", item type) of a set's items (the first one's), or None."""
    return ("set", dynlists.item_type(b, items[0]), None) if items else None


def made_from(tracer, d: dict, hint=None):
    """A DynDict holding the items of `d` (made in the trace), or None when its keys or values
    are not numbers (or tuples of numbers) of one type each."""
    _, kt, vt = hint if hint is not None else (None, None, None)
    keys = dynlists.made_from(tracer, list(d.keys()), kt)
    values = dynlists.made_from(tracer, list(d.values()), vt)
    if keys is None or values is None:
        return None
    return DynDict(keys, values)


def set_made_from(tracer, items, hint=None):
    """A DynSet of `items` (made in the trace; duplicates dropped as they are added), or None."""
    kt = hint[1] if hint is not None else None
    keys = dynlists.made_from(tracer, [], kt)
    if keys is None or not dynlists.holds_items(tracer.builder, list(items)):
        return None
    s = DynSet(keys)
    for x in items:
        _call(tracer, pybuiltins.set_add, s.keys, x)
    return s


def made_of_pairs(tracer, pairs: list, hint=None):
    """A DynDict of (key, value) pairs (a display with traced keys: later ones win)."""
    _, kt, vt = hint if hint is not None else (None, None, None)
    d = DynDict(dynlists.made_from(tracer, [], kt), dynlists.made_from(tracer, [], vt))
    for k, v in pairs:
        set_item(tracer, d, k, v)
    return d


# ----------------------------------------------------------------------------------- operations
def _call(tracer, helper, *args):
    return tracer.call(helper, list(args), {})


def get_item(tracer, d: DynDict, key):
    return _call(tracer, pybuiltins.dict_getitem, d.keys, d.values, key)


def set_item(tracer, d: DynDict, key, value) -> None:
    _call(tracer, pybuiltins.dict_set, d.keys, d.values, key, value)


def delete_item(tracer, d: DynDict, key) -> None:
    _call(tracer, pybuiltins.dict_delitem, d.keys, d.values, key)


def contains(tracer, d: DynDict, key):
    return _call(tracer, pybuiltins.list_contains, d.keys, key)


def length(tracer, d: DynDict):
    return dynlists.length(tracer, d.keys)


def iterate(tracer, d: DynDict):
    return dynlists.iterate(tracer, d.keys)


def call_method(tracer, method: DictMethod, args: list, kwargs: dict):
    d, name = method.d, method.name
    if kwargs:
        raise TypeError(f"{'set' if isinstance(d, DynSet) else 'dict'}.{name}() takes no keyword arguments")
    if isinstance(d, DynSet):
        return _set_method(tracer, d, name, args)
    if name == "get" and 1 <= len(args) <= 2:
        return _call(tracer, pybuiltins.dict_get, d.keys, d.values, args[0], args[1] if len(args) > 1 else None)
    if name == "setdefault" and 1 <= len(args) <= 2:
        return _call(tracer, pybuiltins.dict_setdefault, d.keys, d.values, args[0], args[1] if len(args) > 1 else None)
    if name == "pop" and 1 <= len(args) <= 2:
        return _call(tracer, pybuiltins.dict_pop, d.keys, d.values, args[0], len(args) > 1, args[1] if len(args) > 1
                     else None)
    if name == "items" and not args:
        return _call(tracer, pybuiltins.zipped_lists, d.keys, d.values)
    if name == "keys" and not args:
        return d.keys
    if name == "values" and not args:
        return d.values
    if name == "copy" and not args:
        return DynDict(_call(tracer, pybuiltins.copied_list, d.keys), _call(tracer, pybuiltins.copied_list, d.values))
    if name == "clear" and not args:
        _call(tracer, pybuiltins.clear_list, d.keys)
        _call(tracer, pybuiltins.clear_list, d.values)
        return None
    raise tracer.error(f"dict.{name}() with these arguments is not supported on a dict of run-time size")


def _set_method(tracer, s: DynSet, name: str, args: list):
    if name == "add" and len(args) == 1:
        return _call(tracer, pybuiltins.set_add, s.keys, args[0])
    if name in ("discard", "remove") and len(args) == 1:
        return _call(tracer, pybuiltins.set_discard, s.keys, args[0], name == "remove")
    if name == "copy" and not args:
        return DynSet(_call(tracer, pybuiltins.copied_list, s.keys))
    if name == "clear" and not args:
        return _call(tracer, pybuiltins.clear_list, s.keys)
    raise tracer.error(f"set.{name}() with these arguments is not supported on a set of run-time size")


def trace_time_method(tracer, d, name: str, args: list, kwargs: dict):
    """A method of a trace-time dict or set: run on it, unless a key is traced."""
    if type(d) is InputDict and name not in ("get", "keys", "values", "items", "copy", "__getitem__",
                                             "__contains__") or type(d) is InputSet and name not in SET_READERS:
        raise tracer.error(f"{type(d).__name__}.{name}() of a {type(d).__name__} from outside the traced function "
                           f"is not supported (it changes it)")
    keyed = ("get", "setdefault", "pop", "__getitem__", "__contains__", "add", "discard", "remove")
    if name in keyed and args and symbolic(args[0]):
        raise needs_run_time(tracer, d, args[0], args[1] if len(args) > 1 else _MISSING)
    if name in ("update", "union", "difference", "intersection") and any(
            symbolic(a) and not (isinstance(a, (set, frozenset, list, dict)) and not any(map(symbolic, a)))
            for a in args):
        raise tracer.error(f"{type(d).__name__}.{name}() of a container of run-time size is not supported yet")
    return getattr(d, name)(*args, **kwargs)


def held_form(tracer, obj, site):
    """What a list or dict made at `site` in an earlier trace that failed is made as now (a
    DynList or DynDict where its length changed, a list held in an array where only its items
    did), or None to keep it a Python object."""
    if site not in tracer.held_sites:
        return None
    grown = tracer.grown_sites
    if type(obj) is dict:
        return made_from(tracer, obj, grown.get(site)) if site in grown else None
    if type(obj) is set:
        return set_made_from(tracer, obj, grown.get(site)) if site in grown else None
    made = dynlists.made_from(tracer, obj, grown[site]) if site in grown else None
    if made is not None:
        made.site = site
    return made or gathered.view_of(tracer, obj, always=True)


def build(tracer, site, pairs: list):
    """A dict display's dict: a Python dict, or a DynDict where a key is traced."""
    if not any(symbolic(k) for k, _ in pairs):
        return dict(pairs)
    if site in tracer.grown_sites:
        return made_of_pairs(tracer, pairs, tracer.grown_sites[site])
    b = tracer.builder
    exc = ListChanged("a dict display with a key known only at run time", b.loc)
    kt, vt = dynlists.item_type(b, pairs[0][0]), dynlists.item_type(b, pairs[0][1])
    exc.sites, exc.grown = frozenset({site}), {site: ("dict", kt, vt)}
    exc.final = True
    raise exc


def build_set(tracer, site, items: list):
    """A set display's (or set()'s) set: a Python set, or a DynSet where an item is traced."""
    if not any(symbolic(x) for x in items):
        return set(items)
    if site in tracer.grown_sites:
        made = set_made_from(tracer, items, tracer.grown_sites[site])
        if made is not None:
            return made
    b = tracer.builder
    exc = ListChanged("a set display with an item known only at run time", b.loc)
    exc.sites, exc.grown = frozenset({site}), {site: ("set", dynlists.item_type(b, items[0]), None)}
    exc.final = True
    raise exc


def not_iterable(tracer, x) -> None:
    if isinstance(x, DynSet):
        raise tracer.error("iterating over a set of run-time size is not supported (CPython's order is its hash "
                           "table's); sorted(s) is")
