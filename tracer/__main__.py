"""Command line:

    python -m tracer dump TARGET [--args ...] [--stage ...] [--no-fma] [--grad [--argnums 0,1]]
    python -m tracer export TARGET [--fn NAME ...] [--args ...] -o OUT [--name NAME] [--grad]
                                   [--no-fma] [--target host] [--cpu NAME|native]

TARGET is `path/to/file.py:function` or `package.module:function`. Argument types come from
example values (`--args 3.0 -1.0 2 "np.ones((4, 3))"`) or, without --args, from the function's
annotations.
"""
from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import inspect
import os
import sys

from tracer.dump import STAGES, dump_function
from tracer.errors import TracerError

EXAMPLE_FOR_ANNOTATION = {float: 1.0, int: 1, bool: True, "float": 1.0, "int": 1, "bool": True}


class CommandError(Exception):
    pass


def load_target(target: str):
    if ":" not in target:
        raise CommandError(f"TARGET must be path/to/file.py:function or package.module:function, got {target!r}")
    where, name = target.rsplit(":", 1)
    if where.endswith(".py"):
        if not os.path.isfile(where):
            raise CommandError(f"no such file: {where}")
        module_name = os.path.splitext(os.path.basename(where))[0]
        spec = importlib.util.spec_from_file_location(module_name, where)
        module = importlib.util.module_from_spec(spec)
        sys.modules.setdefault(module_name, module)
        sys.path.insert(0, os.path.dirname(os.path.abspath(where)))
        spec.loader.exec_module(module)
    else:
        try:
            module = importlib.import_module(where)
        except ImportError as exc:
            raise CommandError(f"cannot import module {where!r}: {exc}") from None
    fn = getattr(module, name, None)
    if fn is None:
        raise CommandError(f"{where} has no function {name!r}")
    fn = getattr(fn, "py_func", fn)
    if not inspect.isfunction(fn):
        raise CommandError(f"{target} is not a Python function")
    return fn


ARRAY_MAKERS = ("zeros", "ones", "arange", "eye")   # --args "np.ones((4, 3))": an example array


def parse_example(text: str):
    """A Python literal, or a NumPy array made by np.zeros/ones/arange/eye of literals."""
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        pass
    try:
        call = ast.parse(text, mode="eval").body
        maker = call.func.attr if isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) else None
        if maker in ARRAY_MAKERS and isinstance(call.func.value, ast.Name) and call.func.value.id in ("np", "numpy"):
            import numpy
            return getattr(numpy, maker)(*(ast.literal_eval(a) for a in call.args))
    except (ValueError, SyntaxError, TypeError):
        pass
    raise CommandError(f"--args: {text!r} is not a Python literal (e.g. 3.0, 2, True, [1.0, 2.0]) or an array "
                       f"np.{'/'.join(ARRAY_MAKERS)}(...) of literals")


def parse_args_for(fn, values: list[str] | None) -> tuple:
    if values is not None:
        return tuple(parse_example(text) for text in values)
    args = []
    for p in inspect.signature(fn).parameters.values():
        if p.annotation in EXAMPLE_FOR_ANNOTATION:
            args.append(EXAMPLE_FOR_ANNOTATION[p.annotation])
        elif p.default is not inspect.Parameter.empty:
            break
        else:
            raise CommandError(f"argument {p.name!r} has no float/int/bool annotation: pass example values with --args")
    return tuple(args)


def gradient_transform(fn, argnums_text: str):
    """The value_and_grad transform for `--grad --argnums 0,1`."""
    from tracer.gradients import Grad
    try:
        argnums = tuple(int(a) for a in argnums_text.split(","))
    except ValueError:
        raise CommandError(f"--argnums takes comma-separated argument positions such as 0,2, got {argnums_text!r}") from None
    try:
        return Grad(fn, None, argnums if len(argnums) > 1 else argnums[0], with_value=True)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tracer")
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="show the bytecode, IR, optimized IR, LLVM IR or assembly of a function")
    dump.add_argument("target", help="path/to/file.py:function or package.module:function")
    dump.add_argument("--args", nargs="*", help="example argument values (Python literals)")
    dump.add_argument("--stage", choices=STAGES, default="opt")
    dump.add_argument("--no-fma", action="store_true", help="turn FMA fusion off")
    dump.add_argument("--grad", action="store_true",
                      help="show the gradient: the joint value-and-gradient function (stages ir, opt, llvm, asm)")
    dump.add_argument("--argnums", default="0", help="with --grad: the arguments to differentiate, e.g. 0,1")
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
    options = parser.parse_args(argv)
    if options.command == "export":
        return _export(options)
    try:
        fn = load_target(options.target)
        args = parse_args_for(fn, options.args)
        transform = gradient_transform(fn, options.argnums) if options.grad else None
        if transform is not None and options.stage == "bytecode":
            raise CommandError("--grad shows IR stages: ir, opt, llvm or asm")
        print(dump_function(fn, args, stage=options.stage, fuse_fma=not options.no_fma, transform=transform))
    except (CommandError, TracerError) as exc:
        print(f"error: {exc}".splitlines()[0] if isinstance(exc, CommandError) else f"error: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:   # the user's code raised while tracing (e.g. a bad argument)
        print(f"error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2
    return 0


def _export(options) -> int:
    from tracer.aot.export import export
    try:
        first = load_target(options.function)
        where = options.function.rsplit(":", 1)[0]
        fns = [first] + [load_target(f"{where}:{name}") for name in options.fn]
        pairs = [(fn, parse_args_for(fn, options.args)) for fn in fns]
        result = export(pairs, out_dir=options.out, target=options.target, name=options.name,
                        grad=options.grad, fuse_fma=not options.no_fma, cpu=options.cpu)
    except (CommandError, TracerError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    for path in (result.library, result.header, result.loader):
        print(path)
    print("functions:", ", ".join(result.symbols))
    return 0


if __name__ == "__main__":
    sys.exit(main())
