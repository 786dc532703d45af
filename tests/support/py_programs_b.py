"""Plain-Python programs, part B: numerical linear algebra and signal processing on `array.array`
(LU with pivoting, FFT, sparse CSR mat-vec, prefix sums in place), random-number generators written
in Python (LCG, xorshift) driving Monte Carlo, shuffles and random walks, and k-means on lists.
Assembled with the other parts in `py_programs.py`.

Each program is written the way such code is written without a compiler in mind (no tracer import,
nothing shaped around what the tracer compiles), registered with `@program(make_args)`: `make_args()`
gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import math
from array import array

from py_program_registry import Programs

PROGRAMS = Programs()
program = PROGRAMS.register


# ----------------------------------------------------------------------------------- LU on arrays
def lu_args(singular=False):
    n = 5
    a = array("d", [0.0] * (n * n))
    for i in range(n):
        for j in range(n):
            a[i * n + j] = 1.0 / (i + j + 1) + (2.0 if i == j else 0.0)
    if singular:
        for j in range(n):
            a[4 * n + j] = a[1 * n + j] * 2.0
    b = array("d", [float(k * k - 3) for k in range(n)])
    return a, n, b


@program(lambda: lu_args())
@program(lambda: lu_args(singular=True), name="lu_solve_singular")
def lu_solve(a, n, b):
    """Doolittle LU with partial pivoting in place on a row-major array; solves a x = b in place."""
    perm = list(range(n))
    swaps = 0
    for k in range(n):
        pivot = max(range(k, n), key=lambda i: abs(a[i * n + k]))
        if abs(a[pivot * n + k]) < 1e-12:
            raise ZeroDivisionError(f"matrix is singular at column {k}")
        if pivot != k:
            for j in range(n):
                a[k * n + j], a[pivot * n + j] = a[pivot * n + j], a[k * n + j]
            perm[k], perm[pivot] = perm[pivot], perm[k]
            b[k], b[pivot] = b[pivot], b[k]
            swaps += 1
        for i in range(k + 1, n):
            f = a[i * n + k] / a[k * n + k]
            a[i * n + k] = f
            for j in range(k + 1, n):
                a[i * n + j] -= f * a[k * n + j]
    for i in range(n):                       # forward substitution, unit lower triangle
        for j in range(i):
            b[i] -= a[i * n + j] * b[j]
    for i in reversed(range(n)):             # back substitution
        for j in range(i + 1, n):
            b[i] -= a[i * n + j] * b[j]
        b[i] /= a[i * n + i]
    det = 1.0
    for k in range(n):
        det *= a[k * n + k]
    return perm, -det if swaps % 2 else det


# ------------------------------------------------------------------------------------------- FFT
def fft_args():
    n = 32
    re = array("d", [math.sin(2 * math.pi * 3 * k / n) + 0.5 * math.cos(2 * math.pi * 5 * k / n) for k in range(n)])
    return re, array("d", [0.0] * n)


@program(fft_args)
def fft_in_place(re, im):
    """Iterative radix-2 Cooley-Tukey on two arrays, in place; returns the strongest bins."""
    n = len(re)
    if n & (n - 1):
        raise ValueError("length must be a power of two")
    bits = n.bit_length() - 1
    for i in range(n):
        j = 0
        x = i
        for _ in range(bits):
            j = (j << 1) | (x & 1)
            x >>= 1
        if j > i:
            re[i], re[j] = re[j], re[i]
            im[i], im[j] = im[j], im[i]
    size = 2
    while size <= n:
        half = size >> 1
        step = -2.0 * math.pi / size
        for start in range(0, n, size):
            for k in range(half):
                wr, wi = math.cos(step * k), math.sin(step * k)
                a, b = start + k, start + k + half
                tr = wr * re[b] - wi * im[b]
                ti = wr * im[b] + wi * re[b]
                re[b], im[b] = re[a] - tr, im[a] - ti
                re[a] += tr
                im[a] += ti
        size <<= 1
    mags = [math.hypot(r, i) for r, i in zip(re, im)]
    top = sorted(range(n // 2), key=lambda k: -mags[k])[:2]
    return top, [round(mags[k], 9) for k in top]


# ------------------------------------------------------------------------------------------ sparse
def csr_args():
    n = 12
    data, indices, indptr = array("d"), array("i"), array("i", [0])
    for i in range(n):
        for j in (i - 3, i, i + 1, i + 5):
            if 0 <= j < n:
                data.append(4.0 if j == i else -1.0 / (1 + abs(i - j)))
                indices.append(j)
        indptr.append(len(data))
    x = array("d", [1.0 + 0.25 * k for k in range(n)])
    return data, indices, indptr, x, array("d", [0.0] * n)


@program(csr_args)
def csr_power_iteration(data, indices, indptr, x, y):
    """y = A x on CSR arrays, repeated with normalisation (power iteration); y and x change in place."""
    n = len(indptr) - 1
    lam = 0.0
    for _ in range(30):
        for i in range(n):
            s = 0.0
            for k in range(indptr[i], indptr[i + 1]):
                s += data[k] * x[indices[k]]
            y[i] = s
        norm = math.sqrt(sum(v * v for v in y))
        lam = sum(a * b for a, b in zip(x, y)) / sum(v * v for v in x)
        for i in range(n):
            x[i] = y[i] / norm
    return lam, data.count(4.0), indices.tolist()[:6]


@program(lambda: ({(0, 0): 2.0, (0, 3): -1.0, (1, 1): 3.0, (2, 0): 1.5, (2, 2): -4.0, (3, 3): 1.0, (3, 1): 0.5},
                  4, array("d", [1.0, 2.0, 3.0, 4.0])))
def coo_to_csr_matvec(entries, n, x):
    """Build CSR from a dict of (row, col) -> value, then multiply; returns the three arrays and A x."""
    data, indices, indptr = array("d"), array("l"), array("l", [0] * (n + 1))
    for (i, j) in sorted(entries):
        data.append(entries[i, j])
        indices.append(j)
        indptr[i + 1] += 1
    for i in range(n):
        indptr[i + 1] += indptr[i]
    y = array("d", bytes(8 * n))
    for i in range(n):
        y[i] = sum(data[k] * x[indices[k]] for k in range(indptr[i], indptr[i + 1]))
    return list(data), list(indices), list(indptr), y


@program(lambda: (array("l", [3, -1, 4, 1, -5, 9, 2, -6, 5, 3, -5, 8]),))
def prefix_sums_in_place(a):
    """Running sums in place, then the maximum subarray (Kadane) from the prefix sums."""
    for i in range(1, len(a)):
        a[i] += a[i - 1]
    best, lo_val, lo_at, span = -(1 << 62), 0, -1, (0, 0)
    for i, s in enumerate(a):
        if s - lo_val > best:
            best, span = s - lo_val, (lo_at + 1, i)
        if s < lo_val:
            lo_val, lo_at = s, i
    a.reverse()
    return best, span, a[0]


# ------------------------------------------------------------------------------ generators in Python
class LCG:
    """The Numerical Recipes linear congruential generator, 32 bits."""

    def __init__(self, seed):
        self.state = seed & 0xFFFFFFFF

    def next(self):
        self.state = (1664525 * self.state + 1013904223) & 0xFFFFFFFF
        return self.state

    def random(self):
        return self.next() / 4294967296.0

    def randint(self, lo, hi):
        return lo + self.next() % (hi - lo + 1)


class XorShift32:
    def __init__(self, seed):
        if seed == 0:
            raise ValueError("xorshift seed must be nonzero")
        self.state = seed

    def __iter__(self):
        return self

    def __next__(self):
        x = self.state
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.state = x
        return x

    def uniform(self):
        return next(self) / 0x100000000


@program(lambda: (12345, 3000))
def monte_carlo_pi(seed, samples):
    rng = LCG(seed)
    hits = 0
    for _ in range(samples):
        x, y = rng.random(), rng.random()
        if x * x + y * y <= 1.0:
            hits += 1
    estimate = 4.0 * hits / samples
    return hits, round(estimate, 4), abs(estimate - math.pi) < 0.1


@program(lambda: (2463534242, list(range(20))))
def xorshift_shuffle(seed, deck):
    """Fisher-Yates in place with xorshift; then the cycle structure of the permutation."""
    rng = XorShift32(seed)
    for i in range(len(deck) - 1, 0, -1):
        j = next(rng) % (i + 1)
        deck[i], deck[j] = deck[j], deck[i]
    seen = set()
    cycles = []
    for start in range(len(deck)):
        if start in seen:
            continue
        length, k = 0, start
        while k not in seen:
            seen.add(k)
            k = deck[k]
            length += 1
        cycles.append(length)
    return sorted(cycles, reverse=True), [x for _, x in zip(range(3), rng)]


@program(lambda: (0,), name="xorshift_zero_seed")
def xorshift_sum(seed):
    return sum(next(XorShift32(seed)) for _ in range(3))


@program(lambda: (7, 400, 5))
def random_walk_histogram(seed, steps, walkers):
    """2-D lattice walks; a dict histogram of final distances and the most visited cell."""
    rng = LCG(seed)
    moves = ((1, 0), (-1, 0), (0, 1), (0, -1))
    visits = {}
    finals = {}
    for _ in range(walkers):
        x = y = 0
        for _ in range(steps):
            dx, dy = moves[rng.next() >> 30]
            x += dx
            y += dy
            visits[x, y] = visits.get((x, y), 0) + 1
        d = abs(x) + abs(y)
        finals[d] = finals.get(d, 0) + 1
    cell = max(visits, key=lambda c: (visits[c], -abs(c[0]) - abs(c[1]), c))
    return sorted(finals.items()), cell, visits[cell], len(visits)


@program(lambda: (99, 2000, 10))
def reservoir_and_moments(seed, n, k):
    """Reservoir sampling of k of n gaussians (Box-Muller), and Welford's running mean/variance."""
    rng = LCG(seed)
    reservoir = []
    mean = m2 = 0.0
    spare = None
    for i in range(n):
        if spare is None:
            u1, u2 = rng.random() or 1e-12, rng.random()
            r = math.sqrt(-2.0 * math.log(u1))
            z, spare = r * math.cos(2 * math.pi * u2), r * math.sin(2 * math.pi * u2)
        else:
            z, spare = spare, None
        delta = z - mean
        mean += delta / (i + 1)
        m2 += delta * (z - mean)
        if i < k:
            reservoir.append(z)
        else:
            j = rng.randint(0, i)
            if j < k:
                reservoir[j] = z
    return round(mean, 10), round(m2 / (n - 1), 10), [round(z, 6) for z in sorted(reservoir)]


@program(lambda: (array("d", [0.0] * 10), 31337, 1500))
def histogram_into_array(bins, seed, n):
    """Sum of three uniforms binned into an array of counts (in place); returns the mode bin."""
    rng = XorShift32(seed)
    width = 3.0 / len(bins)
    for _ in range(n):
        s = rng.uniform() + rng.uniform() + rng.uniform()
        bins[min(int(s / width), len(bins) - 1)] += 1.0
    total = sum(bins)
    mode = max(range(len(bins)), key=bins.__getitem__)
    return mode, total, [round(c / total, 4) for c in bins]


# ------------------------------------------------------------------------------------------ k-means
def kmeans_points():
    rng = LCG(2024)
    pts = []
    for cx, cy in ((0.0, 0.0), (5.0, 5.0), (0.0, 6.0)):
        for _ in range(20):
            pts.append((cx + rng.random() * 2 - 1, cy + rng.random() * 2 - 1))
    return pts


@program(lambda: (kmeans_points(), 3, 20))
def kmeans(points, k, iterations):
    centroids = points[:k]
    labels = [0] * len(points)
    for it in range(iterations):
        changed = False
        for i, (x, y) in enumerate(points):
            best = min(range(k), key=lambda c: (x - centroids[c][0]) ** 2 + (y - centroids[c][1]) ** 2)
            if best != labels[i]:
                labels[i] = best
                changed = True
        clusters = [[] for _ in range(k)]
        for label, p in zip(labels, points):
            clusters[label].append(p)
        centroids = [(sum(p[0] for p in c) / len(c), sum(p[1] for p in c) / len(c)) if c else centroids[j]
                     for j, c in enumerate(clusters)]
        if not changed and it > 0:
            break
    inertia = sum((x - centroids[c][0]) ** 2 + (y - centroids[c][1]) ** 2 for (x, y), c in zip(points, labels))
    return sorted((round(cx, 6), round(cy, 6)) for cx, cy in centroids), round(inertia, 6), it


# -------------------------------------------------------------------------------- statistics on lists
@program(lambda: ([2.5, 3.1, 4.7, 1.2, 3.3, 5.9, 2.2, 4.1, 3.8, 2.9], [1.9, 3.5, 4.1, 1.0, 3.9, 6.2, 1.7, 4.6, 3.2, 2.5]))
def linear_regression(xs, ys):
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx
    intercept = my - slope * mx
    r = sxy / math.sqrt(sxx * syy)
    residuals = [y - (slope * x + intercept) for x, y in zip(xs, ys)]
    worst = max(range(n), key=lambda i: abs(residuals[i]))
    ranks = {v: i for i, v in enumerate(sorted(xs))}
    median = (sorted(ys)[n // 2 - 1] + sorted(ys)[n // 2]) / 2 if n % 2 == 0 else sorted(ys)[n // 2]
    return round(slope, 12), round(intercept, 12), round(r, 12), worst, ranks[xs[worst]], median


@program(lambda: ([1.0, 4.0, 2.0, 8.0, 5.0, 7.0, 3.0, 9.0, 6.0, 2.0, 4.0, 8.0], 4))
def moving_statistics(xs, window):
    """Moving average with a running sum, and the moving maximum with a monotonic deque in a list."""
    averages, maxima = [], []
    total = 0.0
    dq = []
    for i, x in enumerate(xs):
        total += x
        if i >= window:
            total -= xs[i - window]
        while dq and xs[dq[-1]] <= x:
            dq.pop()
        dq.append(i)
        if dq[0] <= i - window:
            del dq[0]
        if i >= window - 1:
            averages.append(total / window)
            maxima.append(xs[dq[0]])
    return averages, maxima
