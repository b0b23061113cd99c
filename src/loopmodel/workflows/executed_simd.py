"""The SIMD form the compiler gave the inner loop, for the analytic in-core model.

The analytic model (:func:`loopmodel.models.incore.analytic_incore`) assumes the SIMD width the
compiler's flags give (:mod:`loopmodel.machine.vector_width`) and scalar code where a
floating-point reduction may not be reassociated. gcc's optimisation report
(:mod:`loopmodel.compiled.loop_report`) says what it did instead, wherever the analysis compiles
the kernel anyway: whether the inner loop was vectorised at all, with which vector size, and a
float reduction "vectorised" in its loads while its adds stay in source order (gcc's fold-left
reduction: vector loads and multiplies, then one scalar add per element; on a Zen 4 guest the
dot3 reduction measured 3.0-3.3 cy/it, its add chain, where the scalar-code assumption put 24
scalar loads per CL of work into T_nOL and predicted 6.7 cy/it with the data in memory). The
model then follows the report; where there is none (another compiler, ``--incore analytic``,
no C source), the flags' assumptions stay.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..compiled.loop_report import fold_left_reductions


@dataclass(frozen=True)
class ExecutedSimd:
    """How the compiled inner loop runs, as the analytic model should take it.

    Attributes:
        vector_bytes: the vector size of the compiled inner loop, B (None: scalar code).
        fold_left: a floating-point reduction kept in source order is vectorised in its loads
            and arithmetic, its adds one element at a time.
        note: what the report says, for the analysis' notes ("" where it agrees with the flags).
    """

    vector_bytes: int | None
    fold_left: bool = False
    note: str = ""


def executed_simd(nest, kernel, flags_bytes: int, reassociate: bool) -> ExecutedSimd | None:
    """The SIMD form of ``kernel``'s inner loop in the compiled ``nest``
    (:class:`~loopmodel.compiled.loop_report.CompiledNest`), against the ``flags_bytes`` (B) the
    flags give and whether reductions are ``reassociate``-d; None where the report leaves the
    assumption as it is (no report, or only an outer loop vectorised: the analytic model
    vectorises along the inner loop only; a loop replaced by a library call, whose code is not
    the loop's)."""
    if nest is None or not nest.loops or nest.library_calls:
        return None
    inner = nest.loops[-1]
    if not inner.vector_bytes:
        if nest.vectorised is not None:
            return None
        return ExecutedSimd(None, note=f"{nest.compiler} did not vectorise the loop (its optimisation report): "
                                       "the analytic in-core model takes scalar code")
    kept = fold_left_reductions(nest, kernel, reassociate)
    notes = []
    if inner.vector_bytes != flags_bytes:
        notes.append(f"SIMD width {inner.vector_bytes} B, as {nest.compiler} vectorised the loop (its optimisation "
                     f"report), not the {flags_bytes} B its flags suggest")
    if kept:
        notes.append(f"the reduction into {', '.join(repr(v) for v in kept)} as {nest.compiler} compiles it (its "
                     "optimisation report): vector loads and arithmetic, the adds one element at a time in source "
                     "order (fold-left): the chain per iteration, the rest at the SIMD width")
    return ExecutedSimd(inner.vector_bytes, bool(kept), "; ".join(notes))
