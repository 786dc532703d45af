"""Plain-Python programs, part D: data structures as classes (binary heap, linked list, union-find),
graph searches with dicts and deques, a stack-machine interpreter and an RPN calculator, generators
driving a simulation, context managers that count, and exceptions with try/except/else/finally.
Assembled with the other parts in `py_programs.py`.

Each program is written the way such code is written without a compiler in mind (no tracer import,
nothing shaped around what the tracer compiles), registered with `@program(make_args)`: `make_args()`
gives a fresh tuple of deterministic example arguments on every call.
"""
from __future__ import annotations

import collections
import heapq
import math

from py_program_registry import Programs

PROGRAMS = Programs()
program = PROGRAMS.register


# ---------------------------------------------------------------------------------- data structures
class BinaryHeap:
    """A min-heap of (priority, item) pairs in a list."""

    def __init__(self):
        self.items = []

    def __len__(self):
        return len(self.items)

    def push(self, priority, item):
        a = self.items
        a.append((priority, item))
        i = len(a) - 1
        while i > 0:
            parent = (i - 1) // 2
            if a[parent] <= a[i]:
                break
            a[parent], a[i] = a[i], a[parent]
            i = parent

    def pop(self):
        a = self.items
        if not a:
            raise IndexError("pop from an empty heap")
        top = a[0]
        last = a.pop()
        if a:
            a[0] = last
            i = 0
            while True:
                smallest = i
                for child in (2 * i + 1, 2 * i + 2):
                    if child < len(a) and a[child] < a[smallest]:
                        smallest = child
                if smallest == i:
                    break
                a[i], a[smallest] = a[smallest], a[i]
                i = smallest
        return top


@program(lambda: ([5.5, 1.25, 9.0, 3.5, 7.75, 0.5, 6.0, 2.0, 8.25, 4.5],))
def heap_sort_with_class(values):
    heap = BinaryHeap()
    for i, v in enumerate(values):
        heap.push(v, i)
    order = []
    while len(heap):
        v, i = heap.pop()
        order.append(i)
    try:
        heap.pop()
    except IndexError as e:
        message = str(e)
    return order, [values[i] for i in order] == sorted(values), message


@program(lambda: ({"a": {"b": 7, "c": 9, "f": 14}, "b": {"a": 7, "c": 10, "d": 15}, "c": {"a": 9, "b": 10, "d": 11, "f": 2},
                   "d": {"b": 15, "c": 11, "e": 6}, "e": {"d": 6, "f": 9}, "f": {"a": 14, "c": 2, "e": 9}, "g": {}},
                  "a"))
def dijkstra(graph, source):
    dist = {source: 0}
    prev = {}
    queue = [(0, source)]
    done = set()
    while queue:
        d, u = heapq.heappop(queue)
        if u in done:
            continue
        done.add(u)
        for v, w in sorted(graph[u].items()):
            nd = d + w
            if nd < dist.get(v, math.inf):
                dist[v] = nd
                prev[v] = u
                heapq.heappush(queue, (nd, v))
    path, node = [], "e"
    while node != source:
        path.append(node)
        node = prev[node]
    path.append(source)
    unreachable = sorted(set(graph) - set(dist))
    return dict(sorted(dist.items())), path[::-1], unreachable


class Node:
    __slots__ = ("value", "next")

    def __init__(self, value, next=None):
        self.value = value
        self.next = next


class LinkedList:
    def __init__(self, values=()):
        self.head = None
        self.size = 0
        for v in reversed(list(values)):
            self.push_front(v)

    def push_front(self, value):
        self.head = Node(value, self.head)
        self.size += 1

    def __iter__(self):
        node = self.head
        while node is not None:
            yield node.value
            node = node.next

    def __len__(self):
        return self.size

    def reverse(self):
        prev, node = None, self.head
        while node:
            node.next, prev, node = prev, node, node.next
        self.head = prev

    def remove_if(self, predicate):
        removed = 0
        while self.head is not None and predicate(self.head.value):
            self.head = self.head.next
            removed += 1
        node = self.head
        while node is not None and node.next is not None:
            if predicate(node.next.value):
                node.next = node.next.next
                removed += 1
            else:
                node = node.next
        self.size -= removed
        return removed


@program(lambda: (list(range(1, 21)),))
def linked_list_ops(values):
    ll = LinkedList(values)
    removed = ll.remove_if(lambda v: v % 3 == 0)
    ll.reverse()
    ll.push_front(100)
    return list(ll), len(ll), removed, sum(ll), next(iter(ll))


@program(lambda: (10, [(0, 1), (2, 3), (1, 2), (5, 6), (7, 8), (8, 9), (6, 5), (4, 4)]))
def union_find_components(n, edges):
    class DisjointSet:
        def __init__(self, n):
            self.parent = list(range(n))
            self.rank = [0] * n

        def find(self, x):
            while self.parent[x] != x:
                self.parent[x] = self.parent[self.parent[x]]
                x = self.parent[x]
            return x

        def union(self, a, b):
            ra, rb = self.find(a), self.find(b)
            if ra == rb:
                return False
            if self.rank[ra] < self.rank[rb]:
                ra, rb = rb, ra
            self.parent[rb] = ra
            if self.rank[ra] == self.rank[rb]:
                self.rank[ra] += 1
            return True

    ds = DisjointSet(n)
    merges = sum(ds.union(a, b) for a, b in edges)
    groups = collections.defaultdict(list)
    for x in range(n):
        groups[ds.find(x)].append(x)
    return merges, sorted(groups.values(), key=lambda g: (-len(g), g))


# ----------------------------------------------------------------------------------- graph searches
@program(lambda: (["S.#.......", ".##.####.#", "....#....#", "#.#...##..", "..#.#....E"],))
def maze_bfs(rows):
    h, w = len(rows), len(rows[0])
    start = next((r, c) for r in range(h) for c in range(w) if rows[r][c] == "S")
    goal = next((r, c) for r in range(h) for c in range(w) if rows[r][c] == "E")
    queue = collections.deque([start])
    came = {start: None}
    while queue:
        r, c = queue.popleft()
        if (r, c) == goal:
            break
        for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
            nr, nc = r + dr, c + dc
            if 0 <= nr < h and 0 <= nc < w and rows[nr][nc] != "#" and (nr, nc) not in came:
                came[nr, nc] = (r, c)
                queue.append((nr, nc))
    if goal not in came:
        return -1, ""
    path = []
    node = goal
    while node:
        path.append(node)
        node = came[node]
    grid = [list(row) for row in rows]
    for r, c in path[1:-1]:
        grid[r][c] = "*"
    return len(path) - 1, "\n".join("".join(row) for row in grid)


@program(lambda: ({(1, 0), (2, 1), (0, 2), (1, 2), (2, 2)}, 8))
def game_of_life_glider(live, generations):
    history = []
    for _ in range(generations):
        counts = {}
        for (x, y) in live:
            for dx in (-1, 0, 1):
                for dy in (-1, 0, 1):
                    if dx or dy:
                        counts[x + dx, y + dy] = counts.get((x + dx, y + dy), 0) + 1
        live = {cell for cell, k in counts.items() if k == 3 or (k == 2 and cell in live)}
        history.append(len(live))
    xs = [x for x, _ in live]
    ys = [y for _, y in live]
    return history, (min(xs), min(ys)), sorted(live)


@program(lambda: ({"shirt": ["tie", "belt"], "tie": ["jacket"], "pants": ["shoes", "belt"], "belt": ["jacket"],
                   "socks": ["shoes"], "shoes": [], "jacket": [], "watch": []},))
def topological_sort(deps):
    indegree = {k: 0 for k in deps}
    for targets in deps.values():
        for t in targets:
            indegree[t] += 1
    ready = sorted(k for k, d in indegree.items() if d == 0)
    order = []
    while ready:
        k = ready.pop(0)
        order.append(k)
        for t in deps[k]:
            indegree[t] -= 1
            if indegree[t] == 0:
                ready.append(t)
                ready.sort()
    if len(order) != len(deps):
        raise ValueError("cycle")
    return order


# --------------------------------------------------------------------------------- interpreters
def run_stack_machine(code, max_steps=10_000):
    stack = []
    pc = 0
    steps = 0
    variables = {}
    binary = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
              "div": lambda a, b: a // b, "mod": lambda a, b: a % b, "lt": lambda a, b: int(a < b)}
    while pc < len(code):
        steps += 1
        if steps > max_steps:
            raise RuntimeError("step limit")
        op, *arg = code[pc]
        pc += 1
        if op == "push":
            stack.append(arg[0])
        elif op in binary:
            try:
                b = stack.pop()
                a = stack.pop()
            except IndexError:
                raise RuntimeError(f"stack underflow at {pc - 1} ({op})") from None
            stack.append(binary[op](a, b))
        elif op == "dup":
            stack.append(stack[-1])
        elif op == "store":
            variables[arg[0]] = stack.pop()
        elif op == "load":
            stack.append(variables[arg[0]])
        elif op == "jz":
            if stack.pop() == 0:
                pc = arg[0]
        elif op == "jmp":
            pc = arg[0]
        else:
            raise ValueError(f"unknown opcode {op!r}")
    return stack, variables, steps


@program(lambda: ([("push", 1), ("store", "acc"), ("push", 10), ("store", "n"),
                   ("push", 0), ("load", "n"), ("lt",), ("jz", 17),
                   ("load", "acc"), ("load", "n"), ("mul",), ("store", "acc"),
                   ("load", "n"), ("push", 1), ("sub",), ("store", "n"), ("jmp", 4),
                   ("load", "acc"), ("push", 1000007), ("mod",)],))
@program(lambda: ([("push", 4), ("push", 0), ("div",)],), name="stack_machine_div_zero")
@program(lambda: ([("push", 4), ("add",)],), name="stack_machine_underflow")
@program(lambda: ([("push", 4), ("neg",)],), name="stack_machine_bad_opcode")
def stack_machine(code):
    stack, variables, steps = run_stack_machine(code)
    return stack, sorted(variables.items()), steps


@program(lambda: (["3 4 + 2 *", "5 1 2 + 4 * + 3 -", "2 3 ^ 2 ^", "10 4 /", "1 2 3 4 5 + + + +"],))
@program(lambda: (["1 +"],), name="rpn_calculator_error")
def rpn_calculator(lines):
    ops = {"+": float.__add__, "-": float.__sub__, "*": float.__mul__, "/": float.__truediv__, "^": pow}
    results = []
    for line in lines:
        stack = []
        for token in line.split():
            if token in ops:
                if len(stack) < 2:
                    raise SyntaxError(f"not enough operands for {token!r} in {line!r}")
                b, a = stack.pop(), stack.pop()
                stack.append(ops[token](a, b))
            else:
                stack.append(float(token))
        results.append(stack[-1])
    return results


@program(lambda: ("x = 3\ny = x * 4 + 2\nz = (y - x) / 2\nw = z ** 2 - y\n",))
def tiny_expression_interpreter(source):
    """A recursive-descent evaluator for assignments of + - * / ** and parentheses."""
    env = {}

    def tokenize(text):
        tokens, i = [], 0
        while i < len(text):
            ch = text[i]
            if ch.isspace():
                i += 1
            elif ch.isdigit():
                j = i
                while j < len(text) and (text[j].isdigit() or text[j] == "."):
                    j += 1
                tokens.append(("num", float(text[i:j])))
                i = j
            elif ch.isalpha():
                tokens.append(("name", ch))
                i += 1
            elif text.startswith("**", i):
                tokens.append(("op", "**"))
                i += 2
            else:
                tokens.append(("op", ch))
                i += 1
        return tokens

    def parse(tokens):
        pos = 0

        def peek():
            return tokens[pos][1] if pos < len(tokens) else None

        def atom():
            nonlocal pos
            kind, value = tokens[pos]
            pos += 1
            if value == "(":
                v = expr()
                pos += 1
                return v
            return env[value] if kind == "name" else value

        def power():
            nonlocal pos
            base = atom()
            if peek() == "**":
                pos += 1
                return base ** power()
            return base

        def term():
            nonlocal pos
            v = power()
            while peek() in ("*", "/"):
                op = peek()
                pos += 1
                v = v * power() if op == "*" else v / power()
            return v

        def expr():
            nonlocal pos
            v = term()
            while peek() in ("+", "-"):
                op = peek()
                pos += 1
                v = v + term() if op == "+" else v - term()
            return v

        return expr()

    for line in source.strip().splitlines():
        name, _, rhs = line.partition("=")
        env[name.strip()] = parse(tokenize(rhs))
    return env


# ---------------------------------------------------------------------- generators and simulations
def arrivals(seed, rate):
    """Exponential inter-arrival times from an LCG, forever."""
    state = seed
    t = 0.0
    while True:
        state = (state * 1103515245 + 12345) & 0x7FFFFFFF
        u = (state + 1) / 0x80000001
        t += -math.log(u) / rate
        yield t


def take(n, it):
    for _, x in zip(range(n), it):
        yield x


@program(lambda: (42, 200, 1.0, 1.25))
def bank_queue_simulation(seed, customers, arrival_rate, service_rate):
    server_free = 0.0
    waits = []
    service = arrivals(seed + 1, service_rate)
    last_service = 0.0
    for t in take(customers, arrivals(seed, arrival_rate)):
        s = next(service)
        duration, last_service = s - last_service, s
        start = max(t, server_free)
        waits.append(start - t)
        server_free = start + duration
    waits.sort()
    return (round(sum(waits) / len(waits), 9), round(waits[len(waits) // 2], 9),
            sum(1 for w in waits if w == 0.0), round(server_free, 6))


@program(lambda: (30,))
def generator_pipeline(n):
    def naturals():
        k = 1
        while True:
            yield k
            k += 1

    def fib():
        a, b = 0, 1
        while True:
            yield a
            a, b = b, a + b

    squares = (k * k for k in naturals())
    odd_squares = filter(lambda s: s % 2, squares)
    first = list(take(n // 3, odd_squares))
    evens = [f for f in take(n, fib()) if f % 2 == 0]
    pairs = list(zip(reversed(first), map(str, evens)))
    return first, evens, pairs[:3], any(f > 10 ** 5 for f in evens), all(s % 2 for s in first)


# ------------------------------------------------------------------- context managers and exceptions
class CountingLock:
    def __init__(self):
        self.entered = 0
        self.exited = 0
        self.errors = []

    def __enter__(self):
        self.entered += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        self.exited += 1
        if exc_type is ZeroDivisionError:
            self.errors.append(str(exc))
            return True
        return False


@program(lambda: ([4.0, 0.0, 2.5, -1.0, 0.0, 8.0],))
def guarded_reciprocals(values):
    lock = CountingLock()
    out = []
    for v in values:
        with lock:
            out.append(1.0 / v)
            continue
        out.append(None)
    try:
        with lock:
            raise KeyError("missing")
    except KeyError as e:
        caught = repr(e)
    return out, lock.entered, lock.exited, lock.errors, caught


class InsufficientFunds(Exception):
    pass


@program(lambda: ([("deposit", 100), ("withdraw", 30), ("withdraw", 90), ("deposit", -5), ("withdraw", 70),
                   ("interest", 3), ("transfer", 1)],))
def bank_ledger(transactions):
    balance = 0
    log = []
    failures = {}
    finally_runs = 0
    for kind, amount in transactions:
        try:
            if kind == "deposit":
                if amount <= 0:
                    raise ValueError(f"bad deposit {amount}")
                balance += amount
            elif kind == "withdraw":
                if amount > balance:
                    raise InsufficientFunds(f"need {amount - balance} more")
                balance -= amount
            elif kind == "interest":
                balance = round(balance * (1 + amount / 100), 2)
            else:
                raise NotImplementedError(kind)
        except (ValueError, InsufficientFunds) as e:
            failures[type(e).__name__] = failures.get(type(e).__name__, 0) + 1
            log.append(str(e))
        except NotImplementedError:
            log.append("unsupported")
        else:
            log.append(balance)
        finally:
            finally_runs += 1
    return balance, log, failures, finally_runs
