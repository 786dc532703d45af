"""User objects and builtins inside `@trace` (tracer.frontend.objects, tracer.frontend.library):
module attributes are guarded, the truth value of objects, max/min of bools, `.real` and `.imag`,
operators on objects, and the errors of library calls on the wrong arguments.

Each test compares the traced function with CPython on the same inputs: the same value of the
same type, or the same exception type and message. Where the tracer does not support something
it must say so (`UnsupportedError`), never answer differently. Numbers in comments refer to the
review findings these tests pin down.
"""
from __future__ import annotations

import math
import types

import pytest
from like_python import same, unsupported

from tracer import UnsupportedError, trace

# --------------------------------------------------------------- 13: module attributes are guarded
cfg = types.ModuleType("cfg")
cfg.SCALE = 2.0


def scaled(x):
    return x * cfg.SCALE + math.pi


def test_module_attribute_rebinding_is_seen():   # 13
    compiled = trace(scaled, fuse_fma=False)
    assert compiled(1.0) == scaled(1.0)
    cfg.SCALE = 3.0
    try:
        assert compiled(1.0) == scaled(1.0) == 3.0 + math.pi
    finally:
        cfg.SCALE = 2.0
    assert compiled(1.0) == scaled(1.0)


# ---------------------------------------------------------------- 14: truth value of user objects
class Plain:
    def __init__(self):
        self.v = 1.0


class WithLen(Plain):
    def __len__(self):
        return 0


class WithBool(Plain):
    def __bool__(self):
        return False


def object_truth(o, x):
    return x if o else -x


def object_not(o, x):
    return x if not o else -x


class LateLen(Plain):
    pass


def test_truth_value_of_objects():   # 14
    same(object_truth, Plain(), 1.0)
    same(object_not, Plain(), 1.0)
    unsupported(object_truth, WithLen(), 1.0, match="__len__")
    unsupported(object_truth, WithBool(), 1.0, match="__bool__")
    compiled = trace(object_truth, fuse_fma=False, fullgraph=True)
    assert compiled(LateLen(), 1.0) == 1.0
    LateLen.__len__ = lambda self: 0          # the class changed: the old answer must not be reused
    try:
        with pytest.raises(UnsupportedError, match="__len__"):
            compiled(LateLen(), 1.0)
    finally:
        del LateLen.__len__


# ------------------------------------------------------------------------ 17: max/min of bools
def max_min_bools(a, b, c):
    return max(a, b), min(a, b), max(a, b, c), min([a, b, c]), max(a, b) + 0


@pytest.mark.parametrize("args", [(True, False, True), (False, False, True), (False, True, False),
                                  (True, True, True), (False, False, False)])
def test_max_min_of_bools(args):   # 17
    same(max_min_bools, *args)


# --------------------------------------------------------------------------- 18: .real and .imag
def real_imag(b, n, x):
    return b.real, b.imag, n.real, n.imag, x.real, x.imag, True.real


@pytest.mark.parametrize("args", [(True, 3, 1.5), (False, -2, -0.0)])
def test_real_and_imag(args):   # 18
    same(real_imag, *args)


# ---------------------------------------------------------------- 24: operators on user objects
class Scaled:
    def __init__(self, v):
        self.v = v

    def __mul__(self, other):
        return self.v * other

    def __neg__(self):
        return -self.v


def multiply(a, x):
    return a * x


def negate(a):
    return -a


def test_operators_on_objects_are_unsupported():   # 24
    unsupported(multiply, Scaled(2.0), 3.0, match=r"operator \* with an object of class Scaled")
    unsupported(multiply, 3.0, Scaled(2.0), match=r"operator \* with an object of class Scaled")
    unsupported(negate, Scaled(2.0), match="unary")


# ----------------------------------------------------------------------------- library clean-ups
def floor_of_list(xs):
    return math.floor(xs)


def isnan_of_list(xs):
    return math.isnan(xs)


def floor_of_local_list(x):
    return math.floor([x])


def len_of_object(o):
    return len(o)


def test_library_argument_errors():
    unsupported(floor_of_list, [1.0], match=r"math.floor\(\) of a list")
    unsupported(isnan_of_list, [1.0], match=r"math.isnan\(\) of a list")
    same(floor_of_local_list, 1.0)            # TypeError: must be real number, not list
    unsupported(len_of_object, Plain(), match="len")
