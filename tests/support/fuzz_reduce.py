"""Shrinking a failing fuzz case to a small program that fails the same way (delta debugging).

`reduce_case` first keeps only the failing call (or the calls up to it, when the failure needs
the earlier ones: a specialization compiled by one call and wrongly reused by the next), then
`shrink_source` edits the module's syntax tree, keeping an edit when the program still fails
with the same failure key (fuzz_oracle): it deletes runs of statements (halves first, then
smaller runs, down to single statements, in every body: the module's, the functions', each
if/for/while's and else's), replaces an if/for/while by its body (a loop's without its break
and continue) or its else, drops an else, replaces an expression by one of its operands (`a + b`
-> `a`, `f(x)` -> `x`, `p and q` -> `p`, `x if c else y` -> `x`) and a number by 0 or 1, until no
edit helps or the time is up. Edits that do not compile are never run. Then `shrink_arguments`
shortens the array literals of the calls.
"""
from __future__ import annotations

import ast
import copy
import time

from fuzz_cases import Case

STATEMENT_LISTS = ("body", "orelse")


def _paths(node, path=()):
    """(path, node) for every node under `node`, parents first; a path is ((field, index), ...)."""
    yield path, node
    for name, value in ast.iter_fields(node):
        if isinstance(value, list):
            for i, item in enumerate(value):
                if isinstance(item, ast.AST):
                    yield from _paths(item, path + ((name, i),))
        elif isinstance(value, ast.AST):
            yield from _paths(value, path + ((name, None),))


def _resolve(tree, path):
    node = tree
    for name, index in path:
        node = getattr(node, name) if index is None else getattr(node, name)[index]
    return node


def _replace(tree, path, new):
    """A copy of `tree` with the node at `path` replaced by `new` (a node, or a list of
    statements spliced into the statement list it is in)."""
    tree = copy.deepcopy(tree)
    parent = _resolve(tree, path[:-1])
    name, index = path[-1]
    if index is None:
        setattr(parent, name, new)
    else:
        items = getattr(parent, name)
        items[index:index + 1] = new if isinstance(new, list) else [new]
        if not items and name == "body":
            items.append(ast.Pass())
    return tree


def _is_entry(node) -> bool:
    return isinstance(node, ast.FunctionDef) and node.name == "f"


def _deletions(tree):
    """Copies of `tree` with a run of statements deleted, longest runs first."""
    lists = [(path, node, name) for path, node in _paths(tree) for name in STATEMENT_LISTS
             if isinstance(getattr(node, name, None), list) and getattr(node, name)
             and isinstance(getattr(node, name)[0], ast.stmt)]
    longest = max((len(getattr(n, name)) for _, n, name in lists), default=0)
    size = max(longest // 2, 1)
    while True:
        for path, node, name in lists:
            items = getattr(node, name)
            for start in range(0, len(items), size):
                if any(_is_entry(s) for s in items[start:start + size]):
                    continue
                new = copy.deepcopy(tree)
                kept = getattr(_resolve(new, path), name)
                del kept[start:start + size]
                if not kept and name == "body":
                    kept.append(ast.Pass())
                yield new
        if size == 1:
            return
        size //= 2


class _NoJumps(ast.NodeTransformer):
    """`break` and `continue` of the loop being unwrapped become `pass` (inner loops keep theirs)."""

    def visit_Break(self, node):
        return ast.Pass()

    visit_Continue = visit_Break

    def visit_For(self, node):
        return node

    visit_While = visit_AsyncFor = visit_FunctionDef = visit_For


def _unwrappings(tree):
    """Copies of `tree` with an if/for/while replaced by its body or else (a loop's body run
    once, its break and continue dropped), or its else dropped."""
    for path, node in _paths(tree):
        if isinstance(node, (ast.If, ast.For, ast.While)) and path:
            body = copy.deepcopy(node.body)
            if not isinstance(node, ast.If):
                body = [_NoJumps().visit(stmt) for stmt in body]
            yield _replace(tree, path, body)
            if node.orelse:
                yield _replace(tree, path, list(node.orelse))
                dropped = copy.deepcopy(node)
                dropped.orelse = []
                yield _replace(tree, path, dropped)


def _operands(node) -> list:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.BoolOp):
        fewer = [ast.BoolOp(node.op, node.values[:i] + node.values[i + 1:]) for i in range(len(node.values))
                 if len(node.values) > 2]
        return list(node.values) + fewer
    if isinstance(node, ast.Compare):
        shorter = [ast.Compare(node.left, node.ops[:1], node.comparators[:1])] if len(node.ops) > 1 else []
        return shorter + [node.left] + list(node.comparators)
    if isinstance(node, ast.IfExp):
        return [node.body, node.orelse]
    if isinstance(node, ast.Call):
        return [a for a in node.args if not isinstance(a, ast.Starred)]
    if isinstance(node, ast.Subscript):
        return [node.value]
    if isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value not in (0, 1):
        return [ast.Constant(type(node.value)(0)), ast.Constant(type(node.value)(1))]
    return []


def _simplifications(tree):
    """Copies of `tree` with an expression replaced by a simpler one (outermost first)."""
    for path, node in _paths(tree):
        if isinstance(node, ast.expr) and path and not isinstance(getattr(node, "ctx", None), (ast.Store, ast.Del)):
            for simpler in _operands(node):
                yield _replace(tree, path, copy.deepcopy(simpler))


def shrink_source(source: str, interesting, deadline: float) -> str:
    """The smallest variant of `source` found before `deadline` (time.monotonic()) for which
    `interesting(source)` holds (it holds for `source`)."""
    tree = ast.parse(source)
    current = source
    tried = {source}
    progress = True
    while progress and time.monotonic() < deadline:
        progress = False
        for make in (_deletions, _unwrappings, _simplifications):
            for candidate in make(tree):
                if time.monotonic() >= deadline:
                    return current
                try:
                    text = ast.unparse(ast.fix_missing_locations(candidate)) + "\n"
                    compile(text, "<candidate>", "exec")
                except (SyntaxError, ValueError, TypeError):
                    continue
                if text in tried or len(text) >= len(current) + 20:
                    continue
                tried.add(text)
                if interesting(text):
                    tree, current, progress = candidate, text, True
                    break
            if progress:
                break
    return current


def shrink_arguments(calls: list, interesting, deadline: float) -> list:
    """`calls` with shorter array literals (halves, then one element fewer) where
    `interesting(calls)` still holds."""
    calls = [list(c) for c in calls]
    for c, call in enumerate(calls):
        for a in range(len(call)):
            progress = True
            while progress and time.monotonic() < deadline:
                progress = False
                tree = ast.parse(call[a], mode="eval")
                lists = [(path, node) for path, node in _paths(tree) if isinstance(node, ast.List) and node.elts]
                for path, node in lists:
                    n = len(node.elts)
                    keeps = [node.elts[:n // 2], node.elts[n // 2:]] + [node.elts[:i] + node.elts[i + 1:] for i in range(n)]
                    for keep in keeps:
                        new = _replace(tree, path, ast.List(list(keep), ast.Load()))
                        text = ast.unparse(new)
                        if text == call[a] or time.monotonic() >= deadline:
                            continue
                        candidate = [list(x) for x in calls]
                        candidate[c][a] = text
                        if interesting(candidate):
                            calls, call, progress = candidate, candidate[c], True
                            break
                    if progress:
                        break
    return calls


def reduce_case(case: Case, verdict: dict, worker, timeout: float, seconds: float,
                check_warnings: bool = True) -> Case | None:
    """A smaller case that fails with the same key as `verdict` (None if it does not fail again)."""
    key = verdict["key"]
    deadline = time.monotonic() + seconds
    limit = timeout if key in ("hang",) else min(timeout, 30.0)

    def fails(source, calls) -> bool:
        return worker.run(source, calls, limit, check_warnings).get("key") == key

    calls = case.calls
    index = verdict.get("call")
    if index is not None and index < len(calls):
        if fails(case.source, [calls[index]]):
            calls = [calls[index]]
        elif fails(case.source, calls[:index + 1]):
            calls = calls[:index + 1]
        elif not fails(case.source, calls):
            return None
    elif not fails(case.source, calls):
        return None
    source = shrink_source(case.source, lambda text: fails(text, calls), deadline)
    calls = shrink_arguments(calls, lambda candidate: fails(source, candidate), deadline)
    return Case(case.kind, case.seed, source, calls)
