"""The shape of the house (docs/architecture.md): the import graph of `tracer` and `codegen`, read
from the source with `ast` (imports inside functions count too), has no circles; no module imports
another's `_private` name; the stages import only what the pipeline allows; no file is too long;
the layout table names every file.
"""
from __future__ import annotations

import ast
import importlib.util
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
PACKAGES = ("tracer", "codegen")
EXTENSIONS = {"tracer.native"}          # the C extension: a module with no Python source
MAX_LINES = 700


def modules() -> dict[str, tuple[pathlib.Path, bool]]:
    """module name -> (its file, whether it is a package's __init__)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


MODULES = modules()
KNOWN = set(MODULES) | EXTENSIONS


def imports_of(name: str) -> list[tuple[str, str | None, int]]:
    """(imported module, the name imported from it or None, line) for every import in `name`."""
    path, is_package = MODULES[name]
    package = name if is_package else name.rpartition(".")[0]
    found = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found += [(alias.name, None, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([module] if module else []))
            for alias in node.names:
                submodule = f"{module}.{alias.name}"
                if submodule in KNOWN:
                    found.append((submodule, None, node.lineno))
                else:
                    found.append((module, alias.name, node.lineno))
    return found


def graph() -> dict[str, set[str]]:
    return {name: {m for m, _, _ in imports_of(name) if m in KNOWN and m != name} for name in MODULES}


def circles(edges: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return found


def test_no_import_circles():
    assert circles(graph()) == []


def test_circles_are_found():
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_module_imports_another_modules_private_name():
    private = [f"{name}:{line} imports {what} from {module}"
               for name in MODULES for module, what, line in imports_of(name)
               if module in KNOWN and what and what.startswith("_") and not what.startswith("__")]
    assert private == []


def stage_of(name: str) -> str:
    parts = name.split(".")
    if parts[0] == "codegen":
        return "codegen"
    if len(parts) > 2 or (len(parts) == 2 and name in {"tracer.frontend", "tracer.ir", "tracer.transforms", "tracer.aot",
                                                       "tracer.cache"}):
        return parts[1]
    return "api"            # tracer/*.py: the public API, which glues the stages together


# which stages each stage may import (DESIGN: api -> frontend -> ir <- transforms; codegen -> ir;
# aot -> codegen; the compile cache under codegen and the API, importing no stage). `errors`,
# `logs`, `numpy_capi` and the C extension are leaves every stage may use.
ALLOWED = {
    "ir": {"ir"},
    "frontend": {"frontend", "ir"},
    "transforms": {"transforms", "ir"},
    "cache": {"cache"},
    "codegen": {"codegen", "ir", "cache"},
    "aot": {"aot", "api", "frontend", "ir", "transforms", "codegen", "cache"},
    "api": {"api", "frontend", "ir", "transforms", "codegen", "aot", "cache"},
}
LEAVES = {"tracer", "tracer.errors", "tracer.native", "tracer.logs", "tracer.numpy_capi"}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_stage_imports_follow_the_pipeline(name):
    stage = stage_of(name)
    wrong = [f"{name}:{line} imports {module} ({stage_of(module)})"
             for module, _, line in imports_of(name)
             if module in MODULES and module not in LEAVES and stage_of(module) not in ALLOWED[stage]]
    assert wrong == []


def test_only_codegen_imports_llvmlite_and_codegen_never_reads_bytecode():
    for name in MODULES:
        for module, _, line in imports_of(name):
            root = module.split(".")[0]
            if root == "llvmlite":
                assert name.startswith("codegen"), f"{name}:{line} imports llvmlite"
            if root in ("bytecode", "dis"):
                assert not name.startswith("codegen"), f"{name}:{line} reads bytecode"


def test_no_file_is_too_long():
    sources = [p for p in ROOT.rglob("*") if p.suffix in (".py", ".c", ".h", ".md")
               and not any(part.startswith((".", "build", "dist")) or part.endswith(".egg-info")
                           for part in p.relative_to(ROOT).parts)]
    long = {str(p.relative_to(ROOT)): n for p in sources if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert long == {}


def test_ruff_is_clean():
    if importlib.util.find_spec("ruff") is not None:
        ruff = [sys.executable, "-m", "ruff"]          # the one installed with this interpreter
    elif shutil.which("ruff"):
        ruff = [shutil.which("ruff")]
    else:
        pytest.skip("ruff is not installed (pip install -e '.[test]')")
    done = subprocess.run([*ruff, "check", "--no-cache", str(ROOT)], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_layout_table_names_every_file():
    """docs/architecture.md's layout table has a row for each source file of the two packages,
    and no row for a file that is not there."""
    import re
    text = (ROOT / "docs" / "architecture.md").read_text()
    rows = set(re.findall(r"^\| `((?:tracer|codegen)/[^`]+)` \|", text, flags=re.M))
    files = {str(p.relative_to(ROOT)) for package in PACKAGES for p in (ROOT / package).rglob("*")
             if p.suffix in (".py", ".c", ".h")}
    assert files - rows == set(), "add these files to the layout table of docs/architecture.md"
    assert rows - files == set(), "these rows of docs/architecture.md name files that are gone"
