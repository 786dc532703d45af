"""Command line:

    python -m tracer dump TARGET [--args ...] [--stage ...] [--format table|dot] [--no-fma] [--grad [--argnums 0,1]]
    python -m tracer export TARGET [--fn NAME ...] [--args ...] -o OUT [--name NAME] [--grad]
                                   [--no-fma] [--target host] [--cpu NAME|native]

TARGET is `path/to/file.py:function` or `package.module:function`. Argument types come from
example values (`--args 3.0 -1.0 2 "np.ones((4, 3))"`) or, without --args, from the function's
annotations.

A failure is one line on stderr, `tracer: error: ...`, and a non-zero exit: 2 for a command line
that asks for something impossible (a bad option, a missing file, module or function, example
arguments that do not fit, a function that cannot be compiled for them), 1 for a failure while
doing it (the function or its module raised, an output that cannot be written, a missing or
failing compiler). TRACER_DEBUG=1 prints the traceback too.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import sys
import traceback

from tracer.aot.toolchain import ToolchainError
from tracer.dump import FORMATS, STAGES, dump_function
from tracer.errors import TracerError, is_internal

EXAMPLE_FOR_ANNOTATION = {float: 1.0, int: 1, bool: True, "float": 1.0, "int": 1, "bool": True}
USAGE, FAILURE = 2, 1          # exit statuses


class CommandError(Exception):
    """A command line that asks for something impossible (exit status 2)."""


class CommandFailed(Exception):
    """A command that failed while doing what it was asked (exit status 1)."""


class Parser(argparse.ArgumentParser):
    """argparse, with its errors as CommandError (one line) instead of a usage text and an exit."""

    def error(self, message: str):
        raise CommandError(f"{message} (see {self.prog} --help)")


# ------------------------------------------------------------------------------ the function
def load_module(where: str):
    """The module of a TARGET: a file path/to/file.py, or package.module on sys.path."""
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise CommandError(f"no such file: {where}")
        module_name = os.path.splitext(os.path.basename(where))[0]
        spec = importlib.util.spec_from_file_location(module_name, where)
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(module_name, module)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CommandFailed(f"importing {where} raised {_exception_line(exc)}") from exc
        return module
    try:
        return importlib.import_module(where)
    except ImportError as exc:
        raise CommandError(f"cannot import module {where!r}: {exc}") from None
    except Exception as exc:
        raise CommandFailed(f"importing {where} raised {_exception_line(exc)}") from exc


def load_target(target: str, modules: dict | None = None):
    """The Python function a TARGET names (`modules` caches the modules already loaded)."""
    if ":" not in target:
        raise CommandError(f"TARGET must be path/to/file.py:function or package.module:function, got {target!r}")
    where, name = target.rsplit(":", 1)
    modules = {} if modules is None else modules
    if where not in modules:
        modules[where] = load_module(where)
    fn = getattr(modules[where], name, None)
    if fn is None:
        raise CommandError(f"{where} has no function {name!r}")
    fn = getattr(fn, "py_func", fn)
    if not inspect.isfunction(fn):
        raise CommandError(f"{target} is not a Python function")
    return fn


# ------------------------------------------------------------------------------ example arguments
ARRAY_MAKERS = ("zeros", "ones", "arange", "eye")   # --args "np.ones((4, 3))": an example array


def parse_example(text: str):
    """A Python literal, or a NumPy array made by np.zeros/ones/arange/eye of literals."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    try:
        call = ast.parse(text, mode="eval").body
        maker = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        if (maker in ARRAY_MAKERS and isinstance(call.func.value, ast.Name) and call.func.value.id in ("np", "numpy")
                and not call.keywords):
            import numpy
            return getattr(numpy, maker)(*(ast.literal_eval(a) for a in call.args))
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    raise CommandError(f"--args: {text!r} is not a Python literal (e.g. 3.0, 2, True, [1.0, 2.0]) or an array "
                       f"np.{'/'.join(ARRAY_MAKERS)}(...) of literals")


def parse_args_for(fn, values: list[str] | None) -> tuple:
    """The example arguments of `fn`: `values` parsed, or one per float/int/bool annotation."""
    if values is not None:
        args = tuple(parse_example(text) for text in values)
        try:
            inspect.signature(fn).bind(*args)
        except TypeError as exc:
            raise CommandError(f"--args for {fn.__qualname__}(): {exc}") from None
        return args
    args = []
    for p in inspect.signature(fn).parameters.values():
        try:
            example = EXAMPLE_FOR_ANNOTATION.get(p.annotation)
        except TypeError:       # an unhashable annotation
            example = None
        if example is not None:
            args.append(example)
        elif p.default is not inspect.Parameter.empty:
            break
        else:
            raise CommandError(f"argument {p.name!r} has no float/int/bool annotation: pass example values with --args")
    return tuple(args)


def gradient_transform(fn, argnums_text: str, args: tuple):
    """The value_and_grad transform for `--grad --argnums 0,1`, checked against `args`."""
    from tracer.gradients import Grad
    try:
        argnums = tuple(int(a) for a in argnums_text.split(","))
    except ValueError:
        raise CommandError(f"--argnums takes comma-separated argument positions such as 0,2, got {argnums_text!r}") from None
    try:
        transform = Grad(fn, None, argnums if len(argnums) > 1 else argnums[0], with_value=True)
        transform.check_arguments(args)
    except (ValueError, TypeError) as exc:
        raise CommandError(str(exc)) from None
    return transform


def check_exportable(fn, args: tuple) -> None:
    """An exported function takes numbers and NumPy arrays: anything else in --args is a usage error."""
    from tracer.frontend.arrays import is_ndarray
    names = list(inspect.signature(fn).parameters)
    for i, a in enumerate(args):
        if type(a) not in (float, int, bool) and not is_ndarray(a):
            raise CommandError(f"--args: argument {names[i] if i < len(names) else i} of {fn.__qualname__} is a "
                               f"{type(a).__name__}: an exported function takes floats, ints, bools and NumPy arrays")


# ------------------------------------------------------------------------------ the commands
def make_parser() -> Parser:
    parser = Parser(prog="python -m tracer")
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="show the bytecode, IR, optimized IR, LLVM IR or assembly of a function")
    dump.add_argument("target", help="path/to/file.py:function or package.module:function")
    dump.add_argument("--args", nargs="*", help="example argument values (Python literals)")
    dump.add_argument("--stage", choices=STAGES, default="opt")
    dump.add_argument("--format", choices=FORMATS, default="table",
                      help="dot: the IR (stage ir or opt) as a Graphviz graph, e.g. | dot -Tsvg > f.svg")
    dump.add_argument("--dot", dest="format", action="store_const", const="dot", help="the same as --format dot")
    dump.add_argument("--no-fma", action="store_true", help="turn FMA fusion off")
    dump.add_argument("--fullgraph", action="store_true",
                      help="what the tracer cannot compile is an error (as @trace(fullgraph=True))")
    dump.add_argument("--grad", action="store_true",
                      help="show the gradient: the joint value-and-gradient function (stages ir, opt, llvm, asm)")
    dump.add_argument("--argnums", default="0", help="with --grad: the arguments to differentiate, e.g. 0,1")
    dump.add_argument("--timings", action="store_true",
                      help="compile as a first call would and say how long each stage took, the guards and what "
                           "the compile cache does with it (tracer.explain)")
    dump.set_defaults(run=run_dump)
    export = commands.add_parser("export", help="compile functions into a shared library with a C header and a "
                                                "ctypes loader")
    export.add_argument("function", metavar="TARGET", help="path/to/file.py:function or package.module:function")
    export.add_argument("--fn", action="append", default=[], help="another function of the same file or module "
                                                                  "(repeatable)")
    export.add_argument("--args", nargs="*", help="example argument values (Python literals or np.ones(...)); "
                                                  "without it, the functions' annotations")
    export.add_argument("-o", "--out", required=True, help="the output folder")
    export.add_argument("--name", help="the library's name (default: the first function's)")
    export.add_argument("--target", default="host", help="host (more targets: see the README)")
    export.add_argument("--grad", action="store_true", help="also export <fn>_grad: the value and the gradient "
                                                            "with respect to every float argument")
    export.add_argument("--no-fma", action="store_true", help="turn FMA fusion off (results equal CPython's bits)")
    export.add_argument("--cpu", help="the CPU the code may assume (default: a portable baseline; native: this one)")
    export.set_defaults(run=run_export)
    cache = commands.add_parser("cache", help="the compile cache: where it is and what it holds, or empty it")
    cache.add_argument("action", choices=("info", "clear"))
    cache.set_defaults(run=run_cache)
    return parser


def run_cache(options) -> int:
    from tracer.cache.store import Store, default_folder
    store = Store(default_folder())
    if options.action == "clear":
        print(f"removed {store.clear()} file(s) from {store.folder}")
        return 0
    info = store.info()
    print(f"folder: {info['folder']}")
    print(f"enabled: {'yes' if info['enabled'] else 'no (TRACER_CACHE=0)'}")
    print(f"functions: {info['functions']}, files: {info['files']}, size: {info['bytes'] / 2**20:.1f} MiB "
          f"(bound {info['bound'] / 2**20:.0f} MiB, TRACER_CACHE_SIZE)")
    return 0


def run_dump(options) -> int:
    fn = load_target(options.target)
    args = parse_args_for(fn, options.args)
    transform = gradient_transform(fn, options.argnums, args) if options.grad else None
    if transform is not None and options.stage == "bytecode":
        raise CommandError("--grad shows IR stages: ir, opt, llvm or asm")
    if options.format == "dot" and options.stage not in ("ir", "opt"):
        raise CommandError(f"--format dot shows the IR stages (--stage ir or opt), not {options.stage}")
    if options.timings:
        from tracer.explanation import explain
        from tracer.gradients import grad
        argnums = tuple(int(a) for a in options.argnums.split(","))
        print(explain(grad(fn, argnums) if options.grad else fn, *args))
        return 0
    print(dump_function(fn, args, stage=options.stage, fuse_fma=not options.no_fma, transform=transform,
                        fullgraph=options.fullgraph or getattr(fn, "fullgraph", False), format=options.format))
    return 0


LIBRARY_SUFFIXES = (".so", ".dylib", ".dll", ".wasm", ".h", ".js", ".py")


def run_export(options) -> int:
    from tracer.aot.export import check_options, export
    try:
        check_options(options.target, options.name, options.cpu)
    except ValueError as exc:
        raise CommandError(str(exc).removeprefix("export: ")) from None
    out = options.out
    if os.path.splitext(out)[1] in LIBRARY_SUFFIXES and not os.path.isdir(out):
        raise CommandError(f"-o/--out is the output folder (the files in it are named after --name), not a file: {out}")
    modules: dict = {}
    first = load_target(options.function, modules)
    where = options.function.rsplit(":", 1)[0]
    fns = [first] + [load_target(f"{where}:{name}", modules) for name in options.fn]
    pairs = []
    for fn in fns:
        args = parse_args_for(fn, options.args)
        check_exportable(fn, args)
        pairs.append((fn, args))
    check_writable_folder(out)      # before compiling, and without making it yet
    result = export(pairs, out_dir=out, target=options.target, name=options.name,
                    grad=options.grad, fuse_fma=not options.no_fma, cpu=options.cpu)
    for path in (result.library, result.header, result.loader):
        print(path)
    print("functions:", ", ".join(result.symbols))
    return 0


def check_writable_folder(out: str) -> None:
    """A CommandFailed unless `out` is a folder that can be written, or can be made as one."""
    path = os.path.abspath(out)
    while not os.path.lexists(path):
        path = os.path.dirname(path)
    if not os.path.isdir(path):
        reason = "it is a file" if path == os.path.abspath(out) else f"{path} is not a folder"
    elif not os.access(path, os.W_OK | os.X_OK):
        reason = f"{path} is not writable"
    else:
        return
    raise CommandFailed(f"cannot write to the output folder {out}: {reason}")


# ------------------------------------------------------------------------------ errors
def _exception_line(exc: BaseException) -> str:
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


def error_line(exc: BaseException) -> tuple[str, int]:
    """The one line that reports `exc`, and the exit status."""
    if isinstance(exc, CommandError):
        return str(exc), USAGE
    if isinstance(exc, CommandFailed):
        return str(exc), FAILURE
    if isinstance(exc, ToolchainError):
        return str(exc).splitlines()[0], FAILURE
    if isinstance(exc, TracerError):      # the function cannot be compiled as asked: where, and the line
        if exc.loc is None:
            return " ".join(str(exc).split("\n")), USAGE
        source = exc.loc.source_line
        return f"{exc.loc}: {exc.message}" + (f" (in `{source}`)" if source else ""), USAGE
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        return f"{where}{exc.strerror or exc}", FAILURE
    if is_internal(exc):
        return f"internal error, a bug in tracer: {_exception_line(exc)} (TRACER_DEBUG=1 shows where)", FAILURE
    return f"{_exception_line(exc)} (TRACER_DEBUG=1 shows where)", FAILURE


def main(argv=None) -> int:
    try:
        options = make_parser().parse_args(argv)
        status = options.run(options)
        sys.stdout.flush()
        return status
    except BrokenPipeError:          # `... | head`: the reader has gone, not an error to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return FAILURE
    except KeyboardInterrupt:
        print("tracer: error: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("TRACER_DEBUG"):
            traceback.print_exception(exc)
        line, status = error_line(exc)
        print(f"tracer: error: {' '.join(line.removeprefix('export: ').split())}", file=sys.stderr)
        return status


if __name__ == "__main__":
    sys.exit(main())
