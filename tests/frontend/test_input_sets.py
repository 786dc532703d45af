"""Set arguments (tracer.frontend.dicts.input_container): a constant of the trace, guarded with
its iteration order, which is CPython's hash-table order and depends on how the set was made.
Whatever made it (a display, set(list), copy.deepcopy, a comprehension, removals), the compiled
call iterates it, and sets made from it, in CPython's order."""
from __future__ import annotations

import copy
import pickle

from tracer import trace


def orders(live, steps):
    """Every generation's cells in iteration order, and a set made from the argument."""
    seen = []
    for _ in range(steps):
        seen.append([cell for cell in live])
        live = {(x + 1, y - 1) for x, y in live if x != 3}
    return seen, list(live), [c for c in {*live, (9, 9)}]


def made_sets():
    display = {(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)}
    removed = set((i, -i) for i in range(40))
    for i in range(0, 40, 3):
        removed.discard((i, -i))
    return {"display": display, "set(list)": set(list(display)), "deepcopy": copy.deepcopy(display),
            "pickled": pickle.loads(pickle.dumps(display)), "comprehension": {c for c in sorted(display)},
            "removals": removed, "frozenset": frozenset(display)}


def test_set_arguments_iterate_as_in_cpython():
    traced = trace(orders)
    for name, s in made_sets().items():
        want = orders(s, 3)
        assert traced(s, 3) == want, name
        assert traced(copy.deepcopy(s), 3) == orders(copy.deepcopy(s), 3), name


def test_a_display_and_its_deepcopy_compile():
    # a copy of the set that kept its order: both compile (one specialization per order)
    display = made_sets()["display"]
    copied = copy.deepcopy(display)
    assert list(copied) != list(display)            # (the case: two orders of one set)
    traced = trace(orders)
    for s in (copied, display, copied):
        assert traced(s, 4) == orders(s, 4)
    assert [type(spec).__name__ for spec in traced.specializations] == ["Specialization", "Specialization"]
