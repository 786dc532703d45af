"""User classes for the tests of instances made in traced code (test_traced_instances.py,
test_traced_instance_flow.py)."""
from __future__ import annotations

import dataclasses
import math

from tracer import trace


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        if not isinstance(other, Vec):
            return NotImplemented
        return Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __truediv__(self, k):
        return Vec(self.x / k, self.y / k)

    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __pos__(self):
        return self

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __eq__(self, other):
        return isinstance(other, Vec) and self.x == other.x and self.y == other.y

    def __lt__(self, other):
        return abs(self) < abs(other)

    def __iter__(self):
        yield self.x
        yield self.y

    def dot(self, other):
        return self.x * other.x + self.y * other.y


class Account:
    rate = 0.05
    count = 0

    def __init__(self, balance):
        self._balance = balance

    @property
    def balance(self):
        return self._balance

    @balance.setter
    def balance(self, value):
        if value < 0:
            raise ValueError("negative balance")
        self._balance = value

    @property
    def interest(self):
        return self._balance * self.rate

    @classmethod
    def empty(cls):
        return cls(0.0)

    @staticmethod
    def fee(amount):
        return amount * 0.01

    def __iadd__(self, amount):
        self.balance = self.balance + amount
        return self

    def __bool__(self):
        return self._balance > 0


class Grid:
    def __init__(self, width, height, fill=0.0):
        self.width = width
        self.height = height
        self.cells = [fill] * (width * height)

    def __getitem__(self, key):
        x, y = key
        return self.cells[y * self.width + x]

    def __setitem__(self, key, value):
        x, y = key
        self.cells[y * self.width + x] = value

    def __len__(self):
        return len(self.cells)


class Counter:
    def __init__(self):
        self.n = 0

    def __call__(self, k):
        self.n += k
        return self.n

    def __len__(self):
        return self.n


class Meters:
    def __init__(self, v):
        self.v = v

    def __add__(self, other):
        return Meters(self.v + other.v)

    def __radd__(self, other):
        if other == 0:
            return Meters(self.v)
        return NotImplemented

    def __eq__(self, other):
        return self.v == other.v


class Feet(Meters):
    def __radd__(self, other):           # a subclass's reflected method goes first
        return Feet(other.v * 0.3048 + self.v * 0.3048)


class LCG:
    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def next(self):
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state

    def random(self):
        return self.next() / 4294967296.0


@dataclasses.dataclass
class Point:
    x: float
    y: float = 0.0

    def norm2(self):
        return self.x * self.x + self.y * self.y


class Plain:
    pass


class Shape:
    sides = 0

    def __init__(self, scale):
        super().__init__()
        self.scale = scale

    def area(self):
        return 0.0

    def describe(self):
        return self.sides, self.area()


class Square(Shape):
    sides = 4

    def __init__(self, side, scale=1.0):
        super().__init__(scale)
        self.side = side

    def area(self):
        return self.side * self.side * self.scale


class ScaledSquare(Square):
    def area(self):
        return 2.0 * super().area()




class Bag:
    def __init__(self, *items):
        self.items = items

    def __contains__(self, x):
        return x in self.items

    def __iter__(self):
        return iter(self.items)


class Walk:
    def __init__(self, n):
        self.i, self.n = 0, n

    def __iter__(self):
        return self

    def __next__(self):
        if self.i >= self.n:
            raise StopIteration
        self.i += 1
        return self.i * 0.5



class Particle:
    __slots__ = ("pos", "vel")

    def __init__(self, pos, vel):
        self.pos = pos
        self.vel = vel

    def step(self, dt):
        self.pos = self.pos + dt * self.vel
        if not 0.0 <= self.pos.x <= 1.0:
            self.vel = Vec(-self.vel.x, self.vel.y)
            self.pos.x = min(max(self.pos.x, 0.0), 1.0)
        if not 0.0 <= self.pos.y <= 1.0:
            self.vel = Vec(self.vel.x, -self.vel.y)
            self.pos.y = min(max(self.pos.y, 0.0), 1.0)



class Tally:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def run(self, x, n):
        for i in range(n):
            self.total += x * i
            self.count += 1



class Body:
    def __init__(self, pos, vel, name):
        self.pos, self.vel, self.name = pos, vel, name
        self.tag = None


def compiled(fn):
    """The traced function, compiled whole (what these tests check)."""
    return trace(fn, fullgraph=True)


def same(fn, *args):
    """fn's compiled result equals CPython's, with its type."""
    expected = fn(*args)
    got = compiled(fn)(*args)
    assert got == expected and type(got) is type(expected), (got, expected)
    return got
