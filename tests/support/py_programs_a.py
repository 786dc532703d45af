"""Plain-Python programs, part A: the classic numeric benchmarks (n-body, spectral norm, fannkuch,
Mandelbrot), vectors as classes with dunder operators, matrices as lists of lists, quadrature, root
finding, ODE integrators and relaxation solvers. Assembled with the other parts in `py_programs.py`.

Each program is written the way such code is written without a compiler in mind (no tracer import,
nothing shaped around what the tracer compiles), registered with `@program(make_args)`: `make_args()`
gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import math

from py_program_registry import Programs

PROGRAMS = Programs()
program = PROGRAMS.register


# ------------------------------------------------------------------------------------------ n-body
SOLAR_MASS = 4 * math.pi * math.pi
DAYS_PER_YEAR = 365.24


def solar_system():
    """The sun and the four gas giants: [x, y, z, vx, vy, vz, mass] each."""
    def body(x, y, z, vx, vy, vz, mass):
        return [x, y, z, vx * DAYS_PER_YEAR, vy * DAYS_PER_YEAR, vz * DAYS_PER_YEAR, mass * SOLAR_MASS]
    return [
        body(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
        body(4.841, -1.160, -0.1036, 1.660e-3, 7.699e-3, -6.905e-5, 9.548e-4),
        body(8.343, 4.125, -0.4035, -2.767e-3, 4.998e-3, 2.304e-5, 2.858e-4),
        body(12.894, -15.111, -0.2233, 2.964e-3, 2.378e-3, -2.965e-5, 4.366e-5),
        body(15.380, -25.919, 0.1792, 2.680e-3, 1.628e-3, -9.515e-5, 5.151e-5),
    ]


def energy(bodies):
    e = 0.0
    for i, (x, y, z, vx, vy, vz, m) in enumerate(bodies):
        e += 0.5 * m * (vx * vx + vy * vy + vz * vz)
        for (x2, y2, z2, _, _, _, m2) in bodies[i + 1:]:
            dx, dy, dz = x - x2, y - y2, z - z2
            e -= (m * m2) / math.sqrt(dx * dx + dy * dy + dz * dz)
    return e


@program(lambda: (solar_system(), 120, 0.01))
def nbody(bodies, steps, dt):
    """Offset the momentum, advance the system in place, return the energy before and after."""
    px = py = pz = 0.0
    for b in bodies:
        px += b[3] * b[6]
        py += b[4] * b[6]
        pz += b[5] * b[6]
    sun = bodies[0]
    sun[3], sun[4], sun[5] = -px / SOLAR_MASS, -py / SOLAR_MASS, -pz / SOLAR_MASS
    before = energy(bodies)
    pairs = [(bodies[i], bodies[j]) for i in range(len(bodies)) for j in range(i + 1, len(bodies))]
    for _ in range(steps):
        for b1, b2 in pairs:
            dx = b1[0] - b2[0]
            dy = b1[1] - b2[1]
            dz = b1[2] - b2[2]
            d2 = dx * dx + dy * dy + dz * dz
            mag = dt / (d2 * math.sqrt(d2))
            m1 = b1[6] * mag
            m2 = b2[6] * mag
            b1[3] -= dx * m2
            b1[4] -= dy * m2
            b1[5] -= dz * m2
            b2[3] += dx * m1
            b2[4] += dy * m1
            b2[5] += dz * m1
        for b in bodies:
            b[0] += dt * b[3]
            b[1] += dt * b[4]
            b[2] += dt * b[5]
    return before, energy(bodies)


# ---------------------------------------------------------------------------------- spectral norm
def eval_a(i, j):
    return 1.0 / ((i + j) * (i + j + 1) // 2 + i + 1)


def mul_av(v):
    n = len(v)
    return [sum(eval_a(i, j) * v[j] for j in range(n)) for i in range(n)]


def mul_atv(v):
    n = len(v)
    return [sum(eval_a(j, i) * v[j] for j in range(n)) for i in range(n)]


@program(lambda: (20,))
def spectral_norm(n):
    u = [1.0] * n
    for _ in range(10):
        v = mul_atv(mul_av(u))
        u = mul_atv(mul_av(v))
    vbv = vv = 0.0
    for ue, ve in zip(u, v):
        vbv += ue * ve
        vv += ve * ve
    return math.sqrt(vbv / vv)


# ------------------------------------------------------------------------------- vectors as classes
class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __sub__(self, other):
        return Vec(self.x - other.x, self.y - other.y)

    def __mul__(self, k):
        return Vec(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __truediv__(self, k):
        return Vec(self.x / k, self.y / k)

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def __abs__(self):
        return math.hypot(self.x, self.y)

    def __eq__(self, other):
        return isinstance(other, Vec) and self.x == other.x and self.y == other.y

    def __iter__(self):
        yield self.x
        yield self.y

    def dot(self, other):
        return self.x * other.x + self.y * other.y

    def cross(self, other):
        return self.x * other.y - self.y * other.x


@program(lambda: ([(0.0, 0.0), (4.0, 0.0), (5.0, 2.5), (3.0, 4.0), (0.5, 3.0)],))
def polygon_centroid(points):
    """Shoelace area, centroid and perimeter of a simple polygon given as (x, y) tuples."""
    vs = [Vec(x, y) for x, y in points]
    area = 0.0
    c = Vec(0.0, 0.0)
    perimeter = 0.0
    for a, b in zip(vs, vs[1:] + vs[:1]):
        w = a.cross(b)
        area += w
        c = c + (a + b) * w
        perimeter += abs(b - a)
    area /= 2.0
    c = c / (6.0 * area)
    return area, tuple(c), round(perimeter, 6)


@program(lambda: (40, 0.05))
def particles_in_a_box(steps, dt):
    """Particles with a class defined in the function, bouncing off the walls of the unit box."""
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

    ps = [Particle(Vec(0.1 * k, 0.05 * k), Vec(0.7 - 0.1 * k, 0.3 + 0.2 * k)) for k in range(8)]
    bounces = 0
    for _ in range(steps):
        for p in ps:
            before = p.vel
            p.step(dt)
            if p.vel != before:
                bounces += 1
    momentum = Vec(0.0, 0.0)
    for p in ps:
        momentum = momentum + p.vel
    farthest = max(ps, key=lambda p: abs(p.pos - Vec(0.5, 0.5)))
    return bounces, tuple(momentum), tuple(farthest.pos)


# ---------------------------------------------------------------------------------------- fannkuch
@program(lambda: (6,))
def fannkuch(n):
    perm1 = list(range(n))
    count = [0] * n
    max_flips = checksum = perm_count = 0
    r = n
    while True:
        while r != 1:
            count[r - 1] = r
            r -= 1
        perm = perm1[:]
        flips = 0
        k = perm[0]
        while k:
            perm[:k + 1] = perm[k::-1]
            flips += 1
            k = perm[0]
        max_flips = max(max_flips, flips)
        checksum += flips if perm_count % 2 == 0 else -flips
        while r != n:
            perm0 = perm1.pop(0)
            perm1.insert(r, perm0)
            count[r] -= 1
            if count[r] > 0:
                break
            r += 1
        else:
            return checksum, max_flips
        perm_count += 1


# -------------------------------------------------------------------------------------- Mandelbrot
@program(lambda: (32, 16, 60))
def mandelbrot(width, height, max_iter):
    rows = []
    for py in range(height):
        ci = 2.0 * py / height - 1.0
        row = []
        for px in range(width):
            cr = 3.0 * px / width - 2.0
            zr = zi = 0.0
            n = 0
            while n < max_iter and zr * zr + zi * zi <= 4.0:
                zr, zi = zr * zr - zi * zi + cr, 2.0 * zr * zi + ci
                n += 1
            row.append(n)
        rows.append(row)
    picture = "".join("#" if n == max_iter else "." for n in rows[height // 2])
    return sum(map(sum, rows)), picture


@program(lambda: (-2.0, 1.0, -1.0, 1.0, 24, 40))
def mandelbrot_complex(x0, x1, y0, y1, size, max_iter):
    inside = 0
    escape = [0] * (max_iter + 1)
    for i in range(size):
        for j in range(size):
            c = complex(x0 + (x1 - x0) * j / size, y0 + (y1 - y0) * i / size)
            z = 0j
            for n in range(max_iter):
                z = z * z + c
                if abs(z) > 2.0:
                    escape[n] += 1
                    break
            else:
                inside += 1
    return inside, escape.index(max(escape)), sum(k * e for k, e in enumerate(escape))


# ---------------------------------------------------------------------------------- lists of lists
def matmul(A, B):
    cols = list(zip(*B))
    return [[sum(a * b for a, b in zip(row, col)) for col in cols] for row in A]


@program(lambda: ([[float((i * 7 + j * 3) % 11) - 5.0 for j in range(8)] for i in range(8)], 5))
def matrix_power_trace(A, k):
    """Traces of A, A^2, ..., A^k by repeated multiplication, and the scaled last power in place."""
    n = len(A)
    P = [row[:] for row in A]
    traces = [sum(A[i][i] for i in range(n))]
    for _ in range(k - 1):
        P = matmul(P, A)
        traces.append(sum(P[i][i] for i in range(n)))
    biggest = max(abs(x) for row in P for x in row)
    for i in range(n):
        for j in range(n):
            A[i][j] = P[i][j] / biggest
    return traces


@program(lambda: ([[4.0, -1.0, 0.0, 1.0], [-1.0, 5.0, 2.0, 0.0], [0.0, 2.0, 6.0, -2.0], [1.0, 0.0, -2.0, 7.0]],
                  [3.0, -2.0, 8.0, 1.0], 1e-10))
def gauss_seidel(A, b, tol):
    n = len(b)
    x = [0.0] * n
    for sweep in range(1, 500):
        change = 0.0
        for i in range(n):
            s = b[i]
            for j in range(n):
                if j != i:
                    s -= A[i][j] * x[j]
            new = s / A[i][i]
            change = max(change, abs(new - x[i]))
            x[i] = new
        if change < tol:
            residual = max(abs(sum(a * xi for a, xi in zip(row, x)) - bi) for row, bi in zip(A, b))
            return x, sweep, residual < 1e-8
    raise ArithmeticError(f"Gauss-Seidel did not converge (last change {change:.3g})")


# ------------------------------------------------------------------------------- SOR on a grid class
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

    def interior(self):
        for y in range(1, self.height - 1):
            for x in range(1, self.width - 1):
                yield x, y


@program(lambda: (12, 1.5, 60))
def sor_laplace(n, omega, sweeps):
    """Successive over-relaxation for Laplace's equation, hot top edge, cold others."""
    G = Grid(n, n)
    for x in range(n):
        G[x, 0] = 100.0
    worst = 0.0
    for _ in range(sweeps):
        worst = 0.0
        for x, y in G.interior():
            old = G[x, y]
            new = 0.25 * (G[x - 1, y] + G[x + 1, y] + G[x, y - 1] + G[x, y + 1])
            G[x, y] = old + omega * (new - old)
            worst = max(worst, abs(new - old))
    center = G[n // 2, n // 2]
    return round(center, 10), worst < 1e-3, sum(G.cells) / len(G)


# ------------------------------------------------------------------------------------- polynomials
@program(lambda: ([2.0, -6.0, 2.0, -1.0], [-2.0, -0.5, 0.0, 0.25, 1.0, 3.0]))
def horner_table(coeffs, xs):
    """p(x) and p'(x) by Horner's scheme; coefficients highest power first."""
    deriv = [c * (len(coeffs) - 1 - k) for k, c in enumerate(coeffs[:-1])]
    table = []
    for x in xs:
        p = 0.0
        for c in coeffs:
            p = p * x + c
        dp = 0.0
        for c in deriv:
            dp = dp * x + c
        table.append((x, p, dp))
    return table


@program(lambda: ([1.0, 0.0, -3.0, 1.0], [-4.0, 0.0, 1.0, 1.2, 2.5, 10.0]))
def polynomial_roots(coeffs, guesses):
    """Newton from each guess; a zero derivative falls back to bisection on a bracket."""
    def p(x):
        acc = 0.0
        for c in coeffs:
            acc = acc * x + c
        return acc

    def dp(x):
        acc = 0.0
        n = len(coeffs) - 1
        for k, c in enumerate(coeffs[:-1]):
            acc = acc * x + c * (n - k)
        return acc

    def bisect(lo, hi):
        flo = p(lo)
        for _ in range(200):
            mid = (lo + hi) / 2
            fm = p(mid)
            if fm == 0 or hi - lo < 1e-13:
                return mid
            if (fm < 0) == (flo < 0):
                lo, flo = mid, fm
            else:
                hi = mid
        return (lo + hi) / 2

    roots = set()
    fallbacks = 0
    for x in guesses:
        try:
            for _ in range(60):
                step = p(x) / dp(x)
                x -= step
                if abs(step) < 1e-12:
                    break
        except ZeroDivisionError:
            fallbacks += 1
            x = bisect(x - 0.5, x + 1.0)
        roots.add(round(x, 9))
    return sorted(roots), fallbacks


# --------------------------------------------------------------------------------------- quadrature
@program(lambda: (0.0, math.pi, 64))
def simpson_table(a, b, n):
    def simpson(f, a, b, n):
        if n % 2:
            raise ValueError("n must be even")
        h = (b - a) / n
        s = f(a) + f(b)
        for i in range(1, n):
            s += (4 if i % 2 else 2) * f(a + i * h)
        return s * h / 3

    funcs = [math.sin, lambda x: x * x, lambda x: math.exp(-x) * math.cos(x), math.sqrt]
    return [simpson(f, a, b, n) for f in funcs]


@program(lambda: (0.0, 1.0, 8))
def romberg(a, b, levels):
    f = lambda x: 4.0 / (1.0 + x * x)
    R = [[0.0] * levels for _ in range(levels)]
    h = b - a
    R[0][0] = 0.5 * h * (f(a) + f(b))
    for i in range(1, levels):
        h /= 2
        R[i][0] = 0.5 * R[i - 1][0] + h * sum(f(a + (2 * k - 1) * h) for k in range(1, 2 ** (i - 1) + 1))
        for j in range(1, i + 1):
            R[i][j] = R[i][j - 1] + (R[i][j - 1] - R[i - 1][j - 1]) / (4 ** j - 1)
    return R[levels - 1][levels - 1], abs(R[levels - 1][levels - 1] - math.pi) < 1e-9


# --------------------------------------------------------------------------------------------- ODEs
@program(lambda: ((1.0, 1.0, 1.0), 0.01, 300))
def lorenz_rk4(state, dt, steps):
    def deriv(s, sigma=10.0, rho=28.0, beta=8.0 / 3.0):
        x, y, z = s
        return sigma * (y - x), x * (rho - z) - y, x * y - beta * z

    def add(s, k, h):
        return tuple(a + h * b for a, b in zip(s, k))

    s = state
    zmax = s[2]
    for _ in range(steps):
        k1 = deriv(s)
        k2 = deriv(add(s, k1, dt / 2))
        k3 = deriv(add(s, k2, dt / 2))
        k4 = deriv(add(s, k3, dt))
        s = tuple(v + dt / 6 * (a + 2 * b + 2 * c + d) for v, a, b, c, d in zip(s, k1, k2, k3, k4))
        zmax = max(zmax, s[2])
    return s, zmax


@program(lambda: (1.2, 0.0, 0.05, 200))
def pendulum_energy_drift(theta, omega, dt, steps):
    """Explicit Euler against symplectic Euler against RK4 on the pendulum; energy drift of each."""
    g_over_l = 9.81

    def energy(th, om):
        return 0.5 * om * om + g_over_l * (1 - math.cos(th))

    e0 = energy(theta, omega)
    th1, om1 = theta, omega
    th2, om2 = theta, omega
    th3, om3 = theta, omega
    for _ in range(steps):
        th1, om1 = th1 + dt * om1, om1 - dt * g_over_l * math.sin(th1)
        om2 -= dt * g_over_l * math.sin(th2)
        th2 += dt * om2

        def f(th, om):
            return om, -g_over_l * math.sin(th)
        a1, b1 = f(th3, om3)
        a2, b2 = f(th3 + dt / 2 * a1, om3 + dt / 2 * b1)
        a3, b3 = f(th3 + dt / 2 * a2, om3 + dt / 2 * b2)
        a4, b4 = f(th3 + dt * a3, om3 + dt * b3)
        th3 += dt / 6 * (a1 + 2 * a2 + 2 * a3 + a4)
        om3 += dt / 6 * (b1 + 2 * b2 + 2 * b3 + b4)
    return tuple(round(energy(th, om) - e0, 12) for th, om in ((th1, om1), (th2, om2), (th3, om3)))
