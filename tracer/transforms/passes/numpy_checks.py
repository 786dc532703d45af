"""NumPy scalar checks merged along chains of `+ - *`.

NumPy warns where its scalar arithmetic overflows or makes a NaN, so the front end checks each
such result (op numpy_scalar_check, see codegen.fpflags). An add, sub or mul that makes an
infinity or a NaN passes it on through the adds, subs and muls after it (inf + x, inf * 0 and
nan * x are not finite either). So a checked link whose result feeds only checked adds, subs and
muls needs no check of its own: the check at the chain's end sees what it made, and where that
end is not finite, codegen.fpflags checks the links before it. `a[i - 1] + a[i + 1] - 2.0 * a[i]`
then costs one compare, not three.
"""
from __future__ import annotations

from tracer import ir
from tracer.ir.scalar_ops import KEEPS_NONFINITE as CHAIN
from tracer.ir.scalar_ops import MAX_CHAIN


def merge_numpy_checks(fn: ir.Function) -> ir.Function:
    out = ir.clone(fn)
    # the users of each value, but for checks reading it as an operand (not as the result checked)
    users: dict[ir.Value, list[ir.Value]] = {}
    results: set[ir.Value] = set(out.body.results)
    for v in out.walk():
        for i, a in enumerate(v.args):
            if v.op != "numpy_scalar_check" or i == 0:
                users.setdefault(a, []).append(v)
        for region in v.regions:
            results.update(region.results)

    def checked_link(u: ir.Value) -> bool:     # an add/sub/mul whose only user is its check
        return (u.op in CHAIN and u.type == ir.F64 and u not in results
                and [x.op for x in users.get(u, [])] == ["numpy_scalar_check"])
    unchecked: dict[ir.Value, int] = {}      # a link whose check went -> the links it ends
    for check in [v for v in out.walk() if v.op == "numpy_scalar_check"]:
        link = check.args[0]
        length = 1 + max((unchecked.get(a, 0) for a in link.args), default=0)
        if (check.type == ir.F64 and checked_link(link) and check not in results and length < MAX_CHAIN
                and users.get(check) and all(checked_link(u) for u in users[check])):
            out.replace_all_uses(check, link)
            _remove(out.body, check)
            unchecked[link] = length
    return ir.verify(out)


def _remove(block: ir.Block, v: ir.Value) -> bool:
    if v in block.values:
        block.values.remove(v)
        return True
    return any(_remove(region, v) for x in block.values for region in x.regions)
