"""A callee of the traced function's own body changes a list in a data-dependent loop or branch
(ListChanged): the call is traced again with that list held in an array or grown as a list of
run-time length (tracer.frontend.interpreter.trace_frame), not made a graph break at that call
(tracer.frontend.resume.retraced), which would leave the rest of the function to CPython, or run it
all as Python where a nested function is live across the break. Checked against CPython."""
import copy

from tests.support.py_programs_c import collatz_stats
from tracer import explain, trace


def digits_of(n, base):
    out = []
    while n > 0:
        out.append(n % base)
        n //= base
    return out


def digit_sums(values, base):
    def total(ds):
        return sum(ds)

    sums = []
    for v in values:
        sums.append(total(digits_of(v, base)))
    return sums, digits_of(values[-1], base)


def moments_then_rounded(xs, k):
    def kept(z):
        return z > 0.0

    picked = []
    for x in xs:
        if kept(x) and len(picked) < k:
            picked.append(x)
    mean = sum(picked) / max(len(picked), 1)
    return round(mean, 6), [round(z, 3) for z in sorted(picked)]


def compiled_alike(fn, *args):
    """The compiled call gives what CPython gives, leaves the arguments as CPython does, and is
    native code throughout (no break, no run as Python)."""
    traced = trace(fn)
    mine, theirs = copy.deepcopy(args), copy.deepcopy(args)
    assert repr(traced(*mine)) == repr(fn(*theirs))
    assert repr(mine) == repr(theirs)
    why = explain(traced, *copy.deepcopy(args))
    assert why.compiled and not why.breaks, why
    for again in (args, tuple(copy.deepcopy(a) for a in args)):     # the compiled entry, called again
        assert repr(traced(*copy.deepcopy(again))) == repr(fn(*copy.deepcopy(again)))


def test_a_dict_memo_grown_in_a_callee_compiles():
    compiled_alike(collatz_stats, 300)          # (the corpus's: a dict memo grown in a nested callee)


def test_a_list_grown_in_a_module_callee_compiles():
    compiled_alike(digit_sums, [360, 97, 1001, 0, 7, 123456789], 10)
    compiled_alike(digit_sums, [5, 255, 1 << 40], 2)


def test_a_list_appended_on_one_path_before_a_round_compiles():
    compiled_alike(moments_then_rounded, [0.5, -1.0, 2.25, 3.0, -0.5, 1.125, 4.5], 4)
    traced = trace(moments_then_rounded)
    for xs, k in (([-1.0, -2.0], 3), ([1.0, 2.0, 3.0], 0), ([0.1 * i for i in range(20)], 20)):
        assert repr(traced(xs, k)) == repr(moments_then_rounded(xs, k))
