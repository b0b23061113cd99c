"""The analysis of the loop nest the compiler runs, where it differs from the nest as written.

gcc interchanges the two loops of a nest whose inner loop strides through memory, or vectorises
the loop around the inner one (outer-loop vectorisation: ``y[j] += A[i][j] * x[i]`` with ``i``
inner runs eight ``j`` per pass on a contiguous vector of a row), and says so in its
optimisation report (:func:`loopmodel.compiled.incore.loop_structure`). The data traffic, the
layer conditions and the in-core time are then those of the nest with its two innermost loops
swapped (:func:`loopmodel.fileio.interchange.interchanged`): the corpus measured column-wise
stencils, matrix-vector and ijk matrix-matrix products 100-2000 % faster than the nest as
written predicts. :func:`as_compiled` gives the analyzer of the nest that runs, with a note
saying so, wherever the analysis compiles the kernel anyway (``--incore`` auto, llvm-mca or
osaca); with ``--incore analytic`` or another compiler than gcc the nest is analysed as written.
A swap the report leaves open (an interchange in a deeper nest) or an outer-loop vectorisation
is followed only where the swapped nest compiles as it is, with its inner loop vectorised
(checked by compiling it): the fixed point of what gcc does.
"""
from __future__ import annotations

import dataclasses

from ..errors import ToolError
from ..fileio.interchange import can_interchange, interchanged
from .analysis import Analyzer

#: in-core modes that compile the kernel (and so may read the compiler's report)
COMPILING = ("auto", "llvm-mca", "osaca")
#: how the note of an analysis of the interchanged nest begins
FOLLOWED = "analysed as compiled: "


def followed_note(res) -> str:
    """The note of an analysis result ``res`` saying it analysed the nest the compiler runs
    instead of the one written ("" where it did not)."""
    return next((n for n in res.notes if n.startswith(FOLLOWED)), "")


def as_compiled(analyzer: Analyzer, machine, at: dict) -> Analyzer:
    """``analyzer``, or an :class:`Analyzer` of the nest with its two innermost loops swapped
    (same machine model ``machine`` as given, same settings, a note with every result) where gcc
    runs the kernel so at the sizes ``at`` (module docstring).

    A compiler that fails here is left to the in-core analysis to report (the nest is kept).
    """
    opt, kernel = analyzer.options, analyzer.kernel
    if opt.incore not in COMPILING or opt.kernel_text is None or not can_interchange(kernel):
        return analyzer
    try:
        nest = analyzer.loop_structure(at)
    except ToolError:
        return analyzer
    why, check = _swap_reason(nest, kernel.loop_indices)
    if not why:
        return analyzer
    new, text = interchanged(kernel)
    note = f"{FOLLOWED}{why}; the traffic and in-core models follow the nest that runs"
    follow = Analyzer(new, machine, dataclasses.replace(opt, kernel_text=text, notes=tuple(opt.notes) + (note,)))
    if check:
        try:
            swapped = follow.loop_structure(at)
        except ToolError:
            return analyzer
        if swapped is None or swapped.interchanged or not swapped.loops[-1].vector_bytes:
            return analyzer
    return follow


def _swap_reason(nest, written: tuple) -> tuple:
    """``(why, check)``: why the nest runs with its two innermost loops swapped, '' where it does
    not (as the report ``nest`` says; ``written``: the loop indices as written, outermost first),
    and whether the swapped nest must be compiled to confirm it."""
    if nest is None or len(nest.loops) != len(written) or len(written) < 2:
        return "", False
    swapped = written[:-2] + (written[-1], written[-2])
    if nest.interchanged and nest.order == swapped:
        return (f"{nest.compiler} interchanges the loops (its optimisation report), so the nest runs in the order "
                f"{', '.join(swapped)}, not {', '.join(written)} as written"), False
    if nest.interchanged and not nest.order:
        return (f"{nest.compiler} interchanges loops of the nest (its optimisation report; the nest with "
                f"{written[-2]} and {written[-1]} swapped compiles as it is, so the nest runs in the order "
                f"{', '.join(swapped)})"), True
    inner, outer = nest.loops[-1], nest.loops[-2]
    if not nest.interchanged and outer.vector_bytes and not inner.vector_bytes:
        return (f"{nest.compiler} vectorises loop {written[-2]} around the inner loop {written[-1]} "
                f"({outer.vector_bytes}-byte vectors, its optimisation report): each pass of {written[-1]} runs "
                f"several {written[-2]} on contiguous elements, as the nest in the order {', '.join(swapped)} does "
                f"(where the compiler keeps a sum over {written[-1]} in one register, its add chain per pass is not "
                "in this model)"), True
    return "", False
