"""Python's argument binding for a call: CPython's checks, order and error messages; and the
arguments of a recursive call, which the trace unrolls."""
from __future__ import annotations

CO_VARARGS, CO_VARKEYWORDS = 0x04, 0x08


def bind_arguments(code, name, args, kwargs, defaults, kwdefaults) -> dict:
    """Python's argument binding for a call (CPython's checks, order and messages): a dict of the
    callee's argument locals, in the frame's order."""
    n_pos, n_kwonly, names = code.co_argcount, code.co_kwonlyargcount, code.co_varnames
    pos_names = names[:n_pos]
    kwonly_names = names[n_pos:n_pos + n_kwonly]
    has_varargs = bool(code.co_flags & CO_VARARGS)
    has_varkw = bool(code.co_flags & CO_VARKEYWORDS)
    if len(args) > n_pos and not has_varargs:
        lo = n_pos - len(defaults)
        takes = f"from {lo} to {n_pos} positional arguments" if defaults else _plural(n_pos, "positional argument")
        was = "was" if len(args) == 1 else "were"
        raise TypeError(f"{name}() takes {takes} but {len(args)} {was} given")
    values: dict = dict(zip(pos_names, args))
    extra_kw, posonly_as_kw = {}, []
    for k, v in kwargs.items():
        if k in pos_names[code.co_posonlyargcount:] or k in kwonly_names:
            if k in values:
                raise TypeError(f"{name}() got multiple values for argument '{k}'")
            values[k] = v
        elif has_varkw:
            extra_kw[k] = v
        elif k in pos_names:
            posonly_as_kw.append(k)
        else:
            raise TypeError(f"{name}() got an unexpected keyword argument '{k}'")
    if posonly_as_kw:
        raise TypeError(f"{name}() got some positional-only arguments passed as keyword arguments: "
                        f"{', '.join(repr(k) for k in posonly_as_kw)}")
    first_default = n_pos - len(defaults)
    missing = []
    for i, n in enumerate(pos_names):
        if n not in values:
            if i >= first_default:
                values[n] = defaults[i - first_default]
            else:
                missing.append(n)
    if missing:
        raise TypeError(f"{name}() missing {_plural(len(missing), 'required positional argument')}: {_names(missing)}")
    missing = [n for n in kwonly_names if n not in values and n not in kwdefaults]
    if missing:
        raise TypeError(f"{name}() missing {_plural(len(missing), 'required keyword-only argument')}: {_names(missing)}")
    for n in kwonly_names:
        values.setdefault(n, kwdefaults.get(n))
    index = n_pos + n_kwonly
    if has_varargs:
        values[names[index]] = tuple(args[n_pos:])
        index += 1
    if has_varkw:
        values[names[index]] = extra_kw
        index += 1
    return {n: values[n] for n in names[:index]}


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _names(names: list[str]) -> str:
    """'a' / 'a' and 'b' / 'a', 'b', and 'c', as CPython lists missing arguments."""
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 2:
        return " and ".join(quoted)
    return ", ".join(quoted[:-1]) + ", and " + quoted[-1]
