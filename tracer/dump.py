"""Show what the compiler does to a function: bytecode, IR as captured, IR after the passes,
optimized LLVM IR, and assembly (`python -m tracer dump FILE.py:fn --args 3.0 -1.0 2.0`).
With a transform (`--grad`), the IR stages show the transformed (gradient) function. The IR
stages print as a table (`tracer.ir.format_function`) or as a Graphviz graph (`format_dot`,
`--format dot`)."""
from __future__ import annotations

import dis
import itertools

from tracer.errors import BigIntInput, UnsupportedError
from tracer.frontend.capture import call_intercepted
from tracer.ir import REGION_NAMES, Function, value_names
from tracer.transforms.passes import count_fused, count_in_place, count_maps, optimize

STAGES = ("bytecode", "ir", "opt", "llvm", "asm")
FORMATS = ("table", "dot")


def capture_trace(py_func, args: tuple, call_out: bool = False):
    """Trace `py_func` for `args` through the PEP 523 hook, without compiling or running it (with
    `call_out`, call statements it cannot compile are calls into CPython, as under @trace)."""
    from tracer.frontend.interpreter import trace_frame
    traces = []

    def on_frame(code, frame_args, globals, builtins, closure):
        traces.append(trace_frame(code, frame_args, globals, builtins, closure, py_func.__qualname__,
                                  call_out=call_out))
        return None

    call_intercepted(py_func, args, {}, on_frame)
    return traces[0]


def dump_function(py_func, args: tuple, stage: str = "opt", fuse_fma: bool = True, transform=None,
                  fullgraph: bool = False, format: str = "table", parallel: bool = False) -> str:
    """The stage's text. Without `fullgraph` (and a transform), as under @trace: a function the
    tracer cannot compile says that it runs as Python, and why. `format="dot"`: the IR stages
    (ir, opt) as a Graphviz graph."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; choose from {', '.join(STAGES)}")
    if format not in FORMATS:
        raise ValueError(f"unknown format {format!r}; choose from {', '.join(FORMATS)}")
    if format == "dot" and stage not in ("ir", "opt"):
        raise ValueError(f"the dot format shows the IR stages (ir, opt), not {stage}")
    if stage == "bytecode":
        return dis.Bytecode(py_func).dis()
    strict = fullgraph or transform is not None
    try:
        trace = capture_trace(py_func, args, call_out=not strict)
    except UnsupportedError as exc:
        if strict or isinstance(exc, BigIntInput):
            raise
        return f"# {py_func.__qualname__} runs as Python for these arguments (nothing is compiled): {exc}"
    if transform is not None:
        transform.check_arguments(args)
        trace = transform.apply(trace)
    if stage == "ir":
        return format_dot(trace.function) if format == "dot" else str(trace.function)
    optimized = optimize(trace.function, fuse_fma=fuse_fma)
    optimized.parallel = parallel
    if format == "dot":
        return format_dot(optimized)
    if stage == "opt":
        before, after = len(list(trace.function.walk())), len(list(optimized.walk()))
        note = (f"# {before} values captured, {after} after passes; "
                f"fused multiply-adds: {count_fused(optimized)}{'' if fuse_fma else ' (fusion off)'}")
        if count_maps(optimized):
            note += f"; fused loops (map): {count_maps(optimized)}"
        if count_in_place(optimized):
            note += f"; arrays updated in place: {count_in_place(optimized)}"
        calls = sum(1 for v in optimized.walk() if v.op == "python_call")
        if calls:
            note += f"; calls into CPython (python_call): {calls}"
        return f"{optimized}\n{note}"
    from codegen.jit import assembly_for, llvm_ir_for
    from tracer.specialize import entry_args_for
    entry_args = entry_args_for(trace, optimized)
    if stage == "llvm":
        return llvm_ir_for(optimized, entry_args, optimized.name)
    return assembly_for(optimized, entry_args, optimized.name)


def format_dot(fn: Function) -> str:
    """`fn` as a Graphviz graph (`dot -Tsvg`): a node per value (its name, op, attributes, type
    and source line), an edge per operand (numbered where a value has several), a cluster per
    region (then, else, a loop's body), and dashed edges to what a region yields and what the
    function returns."""
    names = value_names(fn)
    ids: dict = {}
    lines = [f"digraph {_dot_quote(fn.name)} {{",
             f"  label={_dot_quote(f'func {fn.name}')}; labelloc=t; rankdir=TB;",
             '  node [shape=box, fontname="monospace", fontsize=10]; edge [fontsize=8];']
    edges: list[str] = []

    def node(v, label: str, pad: str, shape: str = "box") -> None:
        ids[v] = f"v{len(ids)}"
        lines.append(f"{pad}{ids[v]} [label={_dot_quote(label)}{'' if shape == 'box' else f', shape={shape}'}];")

    def results(block, target: str) -> None:
        for r in block.results:
            edges.append(f"  {ids[r]} -> {target} [style=dashed];")

    for p in fn.params:
        node(p, f"{p.name}: {p.type}\nparam", "  ", "ellipse")
    clusters = itertools.count()

    def visit(block, pad: str) -> None:
        for p in block.params:
            node(p, f"{names[p]}: {p.type}\nblock param", pad, "ellipse")
        for v in block.values:
            label = f"{names[v]} = {v.op}"
            attrs = _dot_attrs(v)
            if attrs:
                label += f"\n{attrs}"
            label += f"\n{v.type}"
            if v.loc is not None:
                label += f"\n{v.loc.filename.rsplit('/', 1)[-1]}:{v.loc.lineno}"
            node(v, label, pad)
            for i, a in enumerate(v.args):
                edges.append(f"  {ids[a]} -> {ids[v]}{f' [label={i}]' if len(v.args) > 1 else ''};")
            region_names = REGION_NAMES.get(v.op, ())
            for k, region in enumerate(v.regions):
                n = next(clusters)
                what = region_names[k] if k < len(region_names) else f"region {k}"
                lines.append(f"{pad}subgraph cluster_{n} {{")
                lines.append(f"{pad}  label={_dot_quote(f'{names[v]} {v.op}: {what}')}; style=rounded;")
                visit(region, pad + "  ")
                lines.append(f"{pad}  yield_{n} [label=\"yield\", shape=plaintext];")
                lines.append(f"{pad}}}")
                results(region, f"yield_{n}")

    visit(fn.body, "  ")
    lines.append('  result [label="return", shape=plaintext];')
    results(fn.body, "result")
    return "\n".join(lines + edges + ["}"])


def _dot_attrs(v) -> str:
    if v.op == "const":
        return repr(v.attrs.get("value"))
    if v.op == "tape_new":
        return ""
    text = ", ".join(f"{k}={val!r}" for k, val in v.attrs.items())
    return text if len(text) <= 60 else text[:57] + "..."


def _dot_quote(text: str) -> str:
    """A dot string: backslashes and quotes escaped, line breaks as \\n."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
