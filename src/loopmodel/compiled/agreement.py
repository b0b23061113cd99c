"""Why a compiled analyzer's ECM prediction and the analytic model's differ (a note for the report).

Both in-core analyzers feed the same ECM combination (cross-architecture-machine-models.txt
§3.4.3 eq. 4, the machine's overlap rule and, for stores, its
:meth:`~loopmodel.machine.model.MachineModel.stores_overlap`), so on the same machine they
should predict similar T_ECM. Where one differs from the other by more than
:data:`TOLERANCE` in any data location, the report says by how much and names the
differences of fact between the compiled loop block and the analytic model's assumptions
(:func:`reasons`): SIMD width, division or square-root instructions the compiler replaced or
kept, a loop-carried dependency only one of them sees, and the largest contribution of each.
"""
from __future__ import annotations

from .instructions import packed_bytes, parse

#: relative T_ECM difference from which the two analyses are reported as disagreeing
TOLERANCE = 0.25


def disagreement_note(analytic_ecm, compiled_ecm, analytic, compiled, info, kernel) -> str | None:
    """A note naming why the compiled analyzer's T_ECM differs from the analytic model's, or None
    where they agree within :data:`TOLERANCE` in every data location (or either is unknown).

    Args:
        analytic_ecm, compiled_ecm: :class:`~loopmodel.models.ecm.ECMResult` of the same traffic
            with the analytic and with the compiled in-core result (cy/CL).
        analytic, compiled: the two :class:`~loopmodel.models.incore.InCoreResult` (cy/CL).
        info: :class:`~loopmodel.compiled.incore.CompiledInCore` of the compiled block.
        kernel: the kernel IR.

    Returns:
        One line: the largest relative difference with its data location and times, then the
        reasons (:func:`reasons`).
    """
    worst = None
    for level, a in analytic_ecm.T_ECM.items():
        c = compiled_ecm.T_ECM.get(level)
        if a is None or c is None or a <= 0:
            continue
        rel = c / a - 1
        if worst is None or abs(rel) > abs(worst[1]):
            worst = (level, rel, c, a)
    if worst is None or abs(worst[1]) <= TOLERANCE:
        return None
    level, rel, c, a = worst
    return (f"{info.analyzer} and the analytic in-core model differ by {100 * rel:+.0f} % in T_ECM (data in "
            f"{level}: {c:.2f} vs {a:.2f} cy/CL): " + "; ".join(reasons(analytic, compiled, info, kernel)))


def reasons(analytic, compiled, info, kernel) -> list:
    """The differences of fact between the compiled block and the analytic model, as phrases:
    the SIMD lanes (widest packed memory access of the block, :func:`.instructions.packed_bytes`, over
    the largest element size, against the analytic lanes), division and square-root
    instructions (the analytic model counts the kernel's operations; a compiler turns a
    division by a power of two into a multiplication), a loop-carried dependency bound on one
    side only, and always the largest contribution of each (their bottlenecks)."""
    lines = [ln.strip() for ln in info.block.split("\n") if ln.strip()]
    elem = kernel.largest_element_size
    width = max((packed_bytes(ln, info.aarch64) for ln in lines), default=0)
    lanes = max(1, int(width // elem))
    out = []
    if lanes != analytic.lanes:
        packed = f"{width} B packed accesses, {lanes} lanes" if width else "no packed access, scalar code"
        out.append(f"the compiled loop has {packed}, the analytic model assumes {analytic.lanes} lane(s) of {elem} B")
    classes = [parse(ln, info.aarch64).fp_op for ln in lines]
    for op in ("DIV", "SQRT"):
        found = classes.count(op)
        if analytic.operations.get(op) and not found:
            out.append(f"the analytic model counts {analytic.operations[op]} {op} per iteration, the compiled loop has "
                       f"no {op} instruction (replaced, e.g. a division by a power of two by a multiplication)")
        elif found and not analytic.operations.get(op):
            out.append(f"the compiled loop has {found} {op} instruction(s), the analytic model none")
    dep_a, dep_c = analytic.dependency or 0.0, compiled.dependency or 0.0
    if (dep_a > 0) != (dep_c > 0):
        side, value = ("the analytic model", dep_a) if dep_a > 0 else (info.analyzer, dep_c)
        out.append(f"only {side} finds a loop-carried dependency ({value:.2f} cy/it)")
    elif dep_a > 0 and abs(dep_c / dep_a - 1) > TOLERANCE:
        out.append(f"both find a loop-carried dependency, of {dep_a:.2f} cy/it (analytic: the kernel's chain) and "
                   f"{dep_c:.2f} cy/it ({info.analyzer}: the compiled instructions)")
    out.append(f"largest contributions: {info.analyzer} {_largest(compiled)}, analytic {_largest(analytic)}")
    return out


def _largest(res) -> str:
    """``name value`` of the largest in-core contribution (cy/CL) of ``res``, T_nOL's or T_OL's (an
    analyzer's simulated time only where it found a dependency: it then sets T_OL)."""
    skip = ("block throughput",) + (() if res.dependency else ("simulated",))
    comps = {k: v for k, v in res.components.items() if k not in skip and v is not None}
    if not comps:
        return f"T_OL {res.T_OL:.2f} cy/CL"
    name = max(comps, key=comps.get)
    return f"{name} {comps[name]:.2f} cy/CL (T_OL {res.T_OL:.2f}, T_nOL {res.T_nOL:.2f})"
