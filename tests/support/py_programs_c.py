"""Plain-Python programs, part C: recursion and backtracking (n-queens, Hanoi, partitions), dynamic
programming over strings and lists (edit distance, knapsack, LCS, LIS, coin change), combinatorics
with itertools, and number theory (sieves, Collatz, factorization, bit tricks, modular arithmetic).
Assembled with the other parts in `py_programs.py`.

Each program is written the way such code is written without a compiler in mind (no tracer import,
nothing shaped around what the tracer compiles), registered with `@program(make_args)`: `make_args()`
gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import math

from py_program_registry import Programs

PROGRAMS = Programs()
program = PROGRAMS.register


# ------------------------------------------------------------------------------------ backtracking
@program(lambda: (7,))
def n_queens(n):
    """Number of solutions, and the first one found, by recursion over rows."""
    cols, diag1, diag2 = set(), set(), set()
    placement = []
    first = []

    def place(row):
        if row == n:
            if not first:
                first.extend(placement)
            return 1
        count = 0
        for c in range(n):
            if c in cols or row + c in diag1 or row - c in diag2:
                continue
            cols.add(c)
            diag1.add(row + c)
            diag2.add(row - c)
            placement.append(c)
            count += place(row + 1)
            placement.pop()
            cols.remove(c)
            diag1.remove(row + c)
            diag2.remove(row - c)
        return count

    return place(0), first


@program(lambda: (8,))
def n_queens_bitmask(n):
    """The same count with bitmasks: ~, &, | and the lowest set bit by x & -x."""
    full = (1 << n) - 1

    def solve(cols, left, right):
        if cols == full:
            return 1
        total = 0
        free = ~(cols | left | right) & full
        while free:
            bit = free & -free
            free ^= bit
            total += solve(cols | bit, ((left | bit) << 1) & full, (right | bit) >> 1)
        return total

    return solve(0, 0, 0)


@program(lambda: (6,))
def towers_of_hanoi(n):
    moves = []

    def hanoi(k, src, dst, via):
        if k == 0:
            return
        hanoi(k - 1, src, via, dst)
        moves.append((k, src, dst))
        hanoi(k - 1, via, dst, src)

    hanoi(n, "A", "C", "B")
    pegs = {"A": list(range(n, 0, -1)), "B": [], "C": []}
    for disk, src, dst in moves:
        moved = pegs[src].pop()
        assert moved == disk and (not pegs[dst] or pegs[dst][-1] > disk), "illegal move"
        pegs[dst].append(moved)
    return len(moves), moves[:3], pegs["C"] == list(range(n, 0, -1))


@program(lambda: (40,))
def integer_partitions(n):
    @functools.cache
    def p(n, k):
        """Partitions of n into parts of size at most k."""
        if n == 0:
            return 1
        if n < 0 or k == 0:
            return 0
        return p(n - k, k) + p(n, k - 1)

    return [p(m, m) for m in range(0, n + 1, 5)]


# ----------------------------------------------------------------------------- dynamic programming
@program(lambda: ("intention", "execution"))
def edit_distance(a, b):
    """Levenshtein distance with two rows, and the alignment from a full table."""
    prev = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        cur = [i] + [0] * len(b)
        for j, cb in enumerate(b, 1):
            cur[j] = min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb))
        prev = cur
    D = [[i + j if i * j == 0 else 0 for j in range(len(b) + 1)] for i in range(len(a) + 1)]
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            D[i][j] = min(D[i - 1][j] + 1, D[i][j - 1] + 1, D[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
    ops = []
    i, j = len(a), len(b)
    while i or j:
        if i and j and D[i][j] == D[i - 1][j - 1] + (a[i - 1] != b[j - 1]):
            ops.append("=" if a[i - 1] == b[j - 1] else "~")
            i, j = i - 1, j - 1
        elif i and D[i][j] == D[i - 1][j] + 1:
            ops.append("-")
            i -= 1
        else:
            ops.append("+")
            j -= 1
    return prev[-1], "".join(reversed(ops))


@program(lambda: ([12, 7, 11, 8, 9, 5, 6], [24, 13, 23, 15, 16, 9, 11], 26))
def knapsack(weights, values, capacity):
    n = len(weights)
    best = [[0] * (capacity + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        w, v = weights[i - 1], values[i - 1]
        for c in range(capacity + 1):
            best[i][c] = best[i - 1][c]
            if w <= c and best[i - 1][c - w] + v > best[i][c]:
                best[i][c] = best[i - 1][c - w] + v
    chosen = []
    c = capacity
    for i in range(n, 0, -1):
        if best[i][c] != best[i - 1][c]:
            chosen.insert(0, i - 1)
            c -= weights[i - 1]
    return best[n][capacity], chosen


@program(lambda: ("ACCGGTCGAGTGCGCGGAAGCCGGCCGAA", "GTCGTTCGGAATGCCGTTGCTCTGTAAA"))
def longest_common_subsequence(a, b):
    m, n = len(a), len(b)
    L = [[0] * (n + 1) for _ in range(m + 1)]
    for i in range(m - 1, -1, -1):
        for j in range(n - 1, -1, -1):
            L[i][j] = L[i + 1][j + 1] + 1 if a[i] == b[j] else max(L[i + 1][j], L[i][j + 1])
    out = []
    i = j = 0
    while i < m and j < n:
        if a[i] == b[j]:
            out.append(a[i])
            i += 1
            j += 1
        elif L[i + 1][j] >= L[i][j + 1]:
            i += 1
        else:
            j += 1
    return L[0][0], "".join(out)


@program(lambda: ([10, 9, 2, 5, 3, 7, 101, 18, 4, 8, 6, 12, 11, 14],))
def longest_increasing_subsequence(seq):
    tails, tails_at, parent = [], [], [None] * len(seq)
    for i, x in enumerate(seq):
        k = bisect.bisect_left(tails, x)
        if k == len(tails):
            tails.append(x)
            tails_at.append(i)
        else:
            tails[k] = x
            tails_at[k] = i
        parent[i] = tails_at[k - 1] if k else None
    out = []
    i = tails_at[-1]
    while i is not None:
        out.append(seq[i])
        i = parent[i]
    return len(tails), out[::-1]


@program(lambda: ([1, 2, 5, 10, 20, 50], 100))
def coin_change(coins, amount):
    """Ways to make change (combinations), and the fewest coins with one example."""
    ways = [1] + [0] * amount
    for c in coins:
        for v in range(c, amount + 1):
            ways[v] += ways[v - c]
    inf = float("inf")
    fewest = [0] + [inf] * amount
    last = [0] * (amount + 1)
    for v in range(1, amount + 1):
        for c in coins:
            if c <= v and fewest[v - c] + 1 < fewest[v]:
                fewest[v] = fewest[v - c] + 1
                last[v] = c
    example = []
    v = amount
    while v:
        example.append(last[v])
        v -= last[v]
    return ways[amount], int(fewest[amount]), sorted(example, reverse=True)


# ------------------------------------------------------------------------------------ combinatorics
@program(lambda: (6,))
def permutation_statistics(n):
    """Derangements, inversions and cycle counts over all permutations, with itertools."""
    derangements = 0
    inversions = 0
    by_cycles = {}
    for perm in itertools.permutations(range(n)):
        if all(p != i for i, p in enumerate(perm)):
            derangements += 1
        inversions += sum(1 for a, b in itertools.combinations(perm, 2) if a > b)
        seen = [False] * n
        cycles = 0
        for i in range(n):
            if not seen[i]:
                cycles += 1
                while not seen[i]:
                    seen[i] = True
                    i = perm[i]
        by_cycles[cycles] = by_cycles.get(cycles, 0) + 1
    return derangements, inversions, [by_cycles[k] for k in sorted(by_cycles)]


@program(lambda: ([3, 34, 4, 12, 5, 2, 9, 7], 21))
def subset_sums(items, target):
    hits = [c for r in range(1, len(items) + 1) for c in itertools.combinations(items, r) if sum(c) == target]
    smallest = min(hits, key=len) if hits else None
    grid = sum(1 for a, b in itertools.product(items, repeat=2) if (a * b) % 7 == 1)
    running = list(itertools.accumulate(sorted(items)))
    return len(hits), smallest, grid, running, list(itertools.islice(itertools.cycle("xyz"), 7))


@program(lambda: (10,))
def pascal_and_catalan(rows):
    tri = [[1]]
    for _ in range(rows - 1):
        prev = tri[-1]
        tri.append([1] + [a + b for a, b in zip(prev, prev[1:])] + [1])
    assert all(tri[n][k] == math.comb(n, k) for n in range(rows) for k in range(n + 1))
    catalan = [math.comb(2 * n, n) // (n + 1) for n in range(rows)]
    return tri[-1], catalan, math.factorial(rows) // math.factorial(rows - 3), sum(map(sum, tri))


# ------------------------------------------------------------------------------------ number theory
@program(lambda: (500,))
def sieve_of_eratosthenes(limit):
    is_prime = [True] * (limit + 1)
    is_prime[0] = is_prime[1] = False
    for p in range(2, math.isqrt(limit) + 1):
        if is_prime[p]:
            is_prime[p * p::p] = [False] * len(range(p * p, limit + 1, p))
    primes = [i for i, flag in enumerate(is_prime) if flag]
    twins = [(p, q) for p, q in zip(primes, primes[1:]) if q - p == 2]
    gaps = {}
    for p, q in zip(primes, primes[1:]):
        gaps[q - p] = gaps.get(q - p, 0) + 1
    return len(primes), primes[-3:], len(twins), max(gaps.items(), key=lambda kv: kv[1])


@program(lambda: (60,))
def growing_prime_list(count):
    """The first primes by trial division against the list as it grows."""
    primes = [2]
    candidate = 3
    while len(primes) < count:
        for p in primes:
            if p * p > candidate:
                primes.append(candidate)
                break
            if candidate % p == 0:
                break
        candidate += 2
    return primes[-1], sum(primes), primes[::10]


@program(lambda: (3000,))
def collatz_stats(limit):
    cache = {1: 0}

    def steps(n):
        path = []
        while n not in cache:
            path.append(n)
            n = n // 2 if n % 2 == 0 else 3 * n + 1
        k = cache[n]
        for m in reversed(path):
            k += 1
            cache[m] = k
        return k

    longest = max(range(1, limit), key=steps)
    peak = longest
    n = longest
    while n != 1:
        n = n >> 1 if not n & 1 else 3 * n + 1
        peak = max(peak, n)
    return longest, cache[longest], peak, sum(steps(n) for n in range(1, 100))


@program(lambda: ([360, 97, 1001, 2 ** 10 * 3 ** 4, 999983 * 7, 600851475143],))
def factorize_all(numbers):
    def factorize(n):
        factors = {}
        d = 2
        while d * d <= n:
            q, r = divmod(n, d)
            while r == 0:
                factors[d] = factors.get(d, 0) + 1
                n = q
                q, r = divmod(n, d)
            d += 1 if d == 2 else 2
        if n > 1:
            factors[n] = factors.get(n, 0) + 1
        return factors

    out = []
    for n in numbers:
        f = factorize(n)
        divisors = 1
        for e in f.values():
            divisors *= e + 1
        out.append((n, sorted(f.items()), divisors, max(f)))
    return out


@program(lambda: ([0, 1, 7, 255, 1023, 0xDEADBEEF, 2 ** 31 - 1, 12345678],))
def bit_tricks(values):
    rows = []
    for v in values:
        kernighan, x = 0, v
        while x:
            x &= x - 1
            kernighan += 1
        rev, x = 0, v
        for _ in range(32):
            rev = (rev << 1) | (x & 1)
            x >>= 1
        gray = v ^ (v >> 1)
        parity = bin(v).count("1") & 1
        rows.append((kernighan, v.bit_count(), rev, gray, parity, ~v & 0xFF, v.bit_length()))
    return rows, functools.reduce(lambda a, b: a ^ b, values)


@program(lambda: ([561, 1105, 7919, 104729, 999983, 2147483647, 3215031751],))
def miller_rabin(candidates):
    def is_prime(n):
        if n < 2:
            return False
        for p in (2, 3, 5, 7, 11, 13):
            if n % p == 0:
                return n == p
        d, s = n - 1, 0
        while d % 2 == 0:
            d //= 2
            s += 1
        for a in (2, 3, 5, 7, 11):
            x = pow(a, d, n)
            if x in (1, n - 1):
                continue
            for _ in range(s - 1):
                x = x * x % n
                if x == n - 1:
                    break
            else:
                return False
        return True

    results = [is_prime(n) for n in candidates]
    inverses = [pow(3, -1, n) for n in candidates if math.gcd(3, n) == 1]
    return results, inverses


@program(lambda: (84, 36, 1071, 462))
def gcd_and_continued_fractions(a, b, c, d):
    def ext_gcd(a, b):
        x0, x1, y0, y1 = 1, 0, 0, 1
        while b:
            q, r = divmod(a, b)
            a, b = b, r
            x0, x1 = x1, x0 - q * x1
            y0, y1 = y1, y0 - q * y1
        return a, x0, y0

    def continued_fraction(p, q):
        terms = []
        while q:
            t, r = divmod(p, q)
            terms.append(t)
            p, q = q, r
        return terms

    g, x, y = ext_gcd(a, b)
    return (g, x, y, a * x + b * y == g, math.gcd(c, d), math.lcm(a, b),
            continued_fraction(c, d), continued_fraction(355, 113), round(math.sqrt(2), 5))
