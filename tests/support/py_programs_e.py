"""Plain-Python programs, part E: counting with dicts, word statistics, string encodings and
ciphers, records ranked with sorted/min/max and key=, sorting algorithms, and the small loops over
lists of numbers that every tutorial has (series, searches, in-place sorts, cumulative integrals).
Assembled with the other parts in `py_programs.py`.

Each program is written the way such code is written without a compiler in mind (no tracer import,
nothing shaped around what the tracer compiles), registered with `@program(make_args)`: `make_args()`
gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import collections
import math

from py_program_registry import Programs

PROGRAMS = Programs()
program = PROGRAMS.register


# ----------------------------------------------------------------------- dict counting and strings
@program(lambda: ([3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3, 2, 3, 8, 4, 6, 2, 6, 4, 3, 3],))
def integer_frequencies(values):
    counts = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    by_count = {}
    for v, c in counts.items():
        by_count.setdefault(c, []).append(v)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:3]
    mode = max(counts, key=counts.get)
    rarest = min(counts.items(), key=lambda kv: (kv[1], -kv[0]))
    del counts[mode]
    return top, mode, rarest, {c: sorted(vs) for c, vs in sorted(by_count.items())}, len(counts)


@program(lambda: ("the quick brown fox jumps over the lazy dog the fox barks and the dog sleeps",))
def word_statistics(text):
    words = text.split()
    freq = collections.Counter(words)
    lengths = {}
    for w in words:
        lengths[len(w)] = lengths.get(len(w), 0) + 1
    longest = max(words, key=len)
    first_letters = sorted({w[0] for w in words})
    capitalised = " ".join(w.capitalize() if freq[w] > 1 else w for w in words[:6])
    return freq.most_common(3), sorted(lengths.items()), longest, "".join(first_letters), capitalised


@program(lambda: ("WWWWWWWWWWWWBWWWWWWWWWWWWBBBWWWWWWWWWWWWWWWWWWWWWWWWBWWWWWWWWWWWWWW",))
def run_length_encoding(s):
    runs = []
    prev, count = s[0], 0
    for ch in s:
        if ch == prev:
            count += 1
        else:
            runs.append((count, prev))
            prev, count = ch, 1
    runs.append((count, prev))
    encoded = "".join(f"{n}{c}" for n, c in runs)
    decoded, num = [], ""
    for ch in encoded:
        if ch.isdigit():
            num += ch
        else:
            decoded.append(ch * int(num))
            num = ""
    return encoded, "".join(decoded) == s, len(encoded) / len(s)


@program(lambda: ("Attack at dawn, retreat at dusk!", 13))
def caesar_and_vigenere(message, shift):
    def caesar(text, k):
        out = []
        for ch in text:
            if ch.isupper():
                out.append(chr((ord(ch) - 65 + k) % 26 + 65))
            elif ch.islower():
                out.append(chr((ord(ch) - 97 + k) % 26 + 97))
            else:
                out.append(ch)
        return "".join(out)

    def vigenere(text, key):
        shifts = [ord(c) - 97 for c in key]
        out, i = [], 0
        for ch in text.lower():
            if "a" <= ch <= "z":
                out.append(chr((ord(ch) - 97 + shifts[i % len(shifts)]) % 26 + 97))
                i += 1
            else:
                out.append(ch)
        return "".join(out)

    rot = caesar(message, shift)
    return rot, caesar(rot, -shift) == message, vigenere(message, "lemon"), message[::-1].swapcase()


@program(lambda: ([("ada", 36, 91.5), ("grace", 45, 88.0), ("alan", 41, 91.5), ("edsger", 72, 79.25),
                   ("barbara", 29, 95.0), ("donald", 84, 88.0)],))
def ranking_records(records):
    by_score = sorted(records, key=lambda r: (-r[2], r[0]))
    youngest = min(records, key=lambda r: r[1])
    oldest_name = max(records, key=lambda r: r[1])[0]
    ranks = {}
    rank = 0
    prev = None
    for i, (name, _, score) in enumerate(by_score):
        if score != prev:
            rank = i + 1
            prev = score
        ranks[name] = rank
    mean = sum(r[2] for r in records) / len(records)
    above = [name for name, _, score in reversed(by_score) if score > mean]
    initials = "".join(sorted(name[0].upper() for name, *_ in records))
    return [r[0] for r in by_score], youngest, oldest_name, ranks, round(mean, 3), above, initials


@program(lambda: ([38, 27, 43, 3, 9, 82, 10, 3, 55, 1, 70, 27],))
def sorting_algorithms(values):
    def merge_sort(a):
        if len(a) <= 1:
            return a
        mid = len(a) // 2
        left, right = merge_sort(a[:mid]), merge_sort(a[mid:])
        out = []
        i = j = 0
        while i < len(left) and j < len(right):
            if left[i] <= right[j]:
                out.append(left[i])
                i += 1
            else:
                out.append(right[j])
                j += 1
        out.extend(left[i:])
        out.extend(right[j:])
        return out

    def quicksort(a, lo, hi):
        if lo >= hi:
            return
        pivot = a[(lo + hi) // 2]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        quicksort(a, lo, j)
        quicksort(a, i, hi)

    merged = merge_sort(values)
    quicksort(values, 0, len(values) - 1)
    insertion = []
    for v in merged[::-1]:
        k = 0
        while k < len(insertion) and insertion[k] < v:
            k += 1
        insertion.insert(k, v)
    return merged == values == insertion, values[:4], sorted(set(values), reverse=True)[:3]


# ------------------------------------------------------------------------- small loops over lists
@program(lambda: ([5.0, 1.0, 4.0, 2.0, 8.0, 0.5, 3.0],))
def bubble_sort_in_place(xs):
    swaps = 0
    n = len(xs)
    for i in range(n):
        swapped = False
        for j in range(n - 1 - i):
            if xs[j] > xs[j + 1]:
                xs[j], xs[j + 1] = xs[j + 1], xs[j]
                swaps += 1
                swapped = True
        if not swapped:
            break
    return swaps


@program(lambda: ([0.0, 0.5, 1.5, 2.0, 1.0, -0.5, -1.0, 0.25], 0.1, [0.0] * 8))
def cumulative_trapezoid(ys, dx, out):
    """The running integral of samples, written into the caller's list."""
    total = 0.0
    out[0] = 0.0
    for i in range(1, len(ys)):
        total += 0.5 * dx * (ys[i - 1] + ys[i])
        out[i] = total
    return total


@program(lambda: ([1.0, -2.0, 3.5, 0.25, -1.5], [0.5, 4.0, -1.0, 2.0, 3.0]))
def vector_norms(xs, ys):
    dot = 0.0
    for x, y in zip(xs, ys):
        dot += x * y
    nx = math.sqrt(sum(x * x for x in xs))
    ny = math.sqrt(sum(y * y for y in ys))
    cos = dot / (nx * ny)
    linf = max(abs(x - y) for x, y in zip(xs, ys))
    l1 = sum(abs(x - y) for x, y in zip(xs, ys))
    return dot, nx, ny, math.degrees(math.acos(cos)), linf, l1


@program(lambda: (5000, 1e-3))
def series_for_pi_and_e(n, tol):
    """Leibniz until the term is below tol (or n terms), Nilakantha, and e by its factorial series."""
    leibniz = 0.0
    k = 0
    while k < n:
        term = (-1) ** k / (2 * k + 1)
        if abs(term) < tol:
            break
        leibniz += term
        k += 1
    nilakantha = 3.0
    sign = 1.0
    for i in range(2, 200, 2):
        nilakantha += sign * 4.0 / (i * (i + 1) * (i + 2))
        sign = -sign
    e = term = 1.0
    i = 1
    while term > 1e-17:
        term /= i
        e += term
        i += 1
    return 4 * leibniz, k, nilakantha, e, i


@program(lambda: ([1, 3, 4, 7, 9, 11, 15, 20, 21, 30], [0, 1, 8, 9, 21, 25, 31]))
def binary_search_many(sorted_xs, queries):
    """Index of each query, or -(insertion point) - 1, like Java's Arrays.binarySearch."""
    out = []
    for q in queries:
        lo, hi = 0, len(sorted_xs) - 1
        found = -1
        while lo <= hi:
            mid = (lo + hi) >> 1
            if sorted_xs[mid] < q:
                lo = mid + 1
            elif sorted_xs[mid] > q:
                hi = mid - 1
            else:
                found = mid
                break
        out.append(found if found >= 0 else -lo - 1)
    return out


@program(lambda: ([8, 4, 2, 1, 7, 3, 9, 0, 6, 5],))
def count_inversions(xs):
    n = len(xs)
    brute = 0
    for i in range(n):
        for j in range(i + 1, n):
            if xs[i] > xs[j]:
                brute += 1
    largest_gap = 0
    for a, b in zip(xs, xs[1:]):
        largest_gap = max(largest_gap, abs(a - b))
    return brute, largest_gap, n * (n - 1) // 2 - brute
