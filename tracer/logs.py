"""What the tracer does, said through the standard `logging` module.

Loggers, children of "tracer":

    tracer.compile    each compile: the function, its file:line, the arguments' types, the time
                      per stage (INFO; a WARNING when it took longer than a second)
    tracer.guards     each recompile: the guard the new call failed, with the old and new type or
                      value (INFO); too many specializations (WARNING)
    tracer.fallback   what runs as Python instead: a graph break, a function run as Python for
                      some argument types, with the file:line and the construct (INFO)
    tracer.cache      the compile cache (tracer.cache): each specialization stored or loaded,
                      each miss and why (INFO); a file refused, unreadable or corrupted (WARNING)

Nothing is logged on a call that a compiled specialization takes: only when compiling and when a
call misses every specialization. `TRACER_LOG=compile,guards,fallback` (or `all`) in the
environment, read when `tracer` is imported, attaches a stderr handler at INFO to those loggers
(`configure`). Without it, Python's logging shows the WARNINGs only (its last-resort handler).

This module imports nothing but `logging`, so that `import tracer` with TRACER_LOG set stays cheap.
"""
from __future__ import annotations

import logging
import sys

INFO = logging.INFO
logger = logging.getLogger("tracer")
compile_log = logging.getLogger("tracer.compile")
guard_log = logging.getLogger("tracer.guards")
fallback_log = logging.getLogger("tracer.fallback")
cache_log = logging.getLogger("tracer.cache")

CHANNELS = {"compile": compile_log, "guards": guard_log, "fallback": fallback_log, "cache": cache_log}
ALL = ("all", "*", "1", "true", "yes", "on")
SLOW_COMPILE_SECONDS = 1.0          # a compile that takes longer is a WARNING (seen by default)
FORMAT = "%(name)s: %(message)s"


# --------------------------------------------------------------------------------- TRACER_LOG
def configure(setting: str, stream=None) -> list[str]:
    """Show the channels `setting` names ("compile,guards", "all") on `stream` (stderr) at INFO.
    Returns the loggers' names; an unknown channel is a warning on "tracer"."""
    names = [n.strip().lower() for n in setting.replace(";", ",").replace(" ", ",").split(",") if n.strip()]
    if any(n in ALL for n in names):
        chosen = [logger]
    else:
        chosen = [CHANNELS[n] for n in names if n in CHANNELS]
    handler = logging.StreamHandler(sys.stderr if stream is None else stream)
    handler.setFormatter(logging.Formatter(FORMAT))
    handler.tracer_log = True               # (configure again: replaces, never doubles, the handler)
    for log in chosen:
        for old in [h for h in log.handlers if getattr(h, "tracer_log", False)]:
            log.removeHandler(old)
        log.addHandler(handler)
        if log.level == logging.NOTSET or log.level > logging.INFO:
            log.setLevel(logging.INFO)
    unknown = [n for n in names if n not in CHANNELS and n not in ALL]
    if unknown:
        logger.warning("TRACER_LOG: unknown channel(s) %s (choose from %s, or all)", ", ".join(unknown),
                       ", ".join(CHANNELS))
    return [log.name for log in chosen]


# --------------------------------------------------------------------------------- messages
def code_location(code) -> str:
    """file:line of a code object's `def`."""
    return f"{code.co_filename}:{code.co_firstlineno}"


def format_seconds(seconds: float) -> str:
    return f"{seconds:.2f} s" if seconds >= 1.0 else f"{seconds * 1e3:.1f} ms"


# the stages a compile is timed by: the trace, the IR passes (Specialization.build), and the back
# end's (codegen.jit.compile_function: lowering to LLVM IR, LLVM's passes, machine code, linking)
STAGE_NAMES = {"optimize": "llvm-opt", "codegen": "llvm-codegen"}


def format_stages(stages: dict) -> str:
    """"trace 1.2 ms, passes 0.3 ms, ...": a compile's seconds per stage."""
    return ", ".join(f"{STAGE_NAMES.get(stage, stage)} {format_seconds(t)}" for stage, t in stages.items())


def log_compiled(name: str, where: str, arguments: str, seconds: float, stages: dict, path: str) -> None:
    """One line for a compile: INFO, or a WARNING past SLOW_COMPILE_SECONDS."""
    slow = seconds > SLOW_COMPILE_SECONDS
    level = logging.WARNING if slow else logging.INFO
    if not compile_log.isEnabledFor(level):
        return
    parts = format_stages(stages)
    other = seconds - sum(stages.values())     # the rest: guards, the dispatcher's tables...
    if stages and other >= 0.001:
        parts += f", other {format_seconds(other)}"
    compile_log.log(level, "%s: %s(%s) compiled in %s%s [%s]%s", where, name, arguments, format_seconds(seconds),
                    f" ({parts})" if parts else "", path, "; that is longer than a second" if slow else "")


def log_recompile(name: str, where: str, count: int, limit: int, reasons: list[str]) -> None:
    """Why a call compiles again: the guard each earlier specialization rejected it by."""
    if not reasons:
        return
    if len(reasons) == 1:
        why = reasons[0]
    else:
        why = "; ".join(f"#{i + 1}: {r}" for i, r in enumerate(reasons))
    guard_log.info("%s: %s() recompiles (specialization %d of at most %d): %s", where, name, count + 1, limit, why)


def warn_storm(name: str, where: str, limit: int, reason: str | None) -> None:
    """max_specializations are compiled: further new argument types/values run as Python."""
    guard_log.warning("%s: %s(): more than %d specializations were compiled; further argument types/values "
                      "run as plain Python (raise max_specializations to allow more)%s", where, name, limit,
                      f"; this call: {reason}" if reason else "")
