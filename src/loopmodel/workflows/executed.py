"""The analysis of the loop nest the compiler runs, where it differs from the nest as written.

gcc interchanges the two loops of a nest whose inner loop strides through memory and says so in
its optimisation report (:func:`loopmodel.compiled.incore.loop_structure`). The data traffic,
the layer conditions and the in-core time are then those of the interchanged nest: the corpus
measured column-wise stencils and matrix-vector products 100-900 % faster than the nest as
written predicts. :func:`as_compiled` gives the analyzer of the nest that runs, with a note
saying so, wherever the analysis compiles the kernel anyway (``--incore`` auto, llvm-mca or
osaca); with ``--incore analytic`` or another compiler than gcc the nest is analysed as written.
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


def as_compiled(analyzer: Analyzer, machine, at: dict) -> Analyzer:
    """``analyzer``, or an :class:`Analyzer` of the interchanged nest (same machine model
    ``machine`` as given, same settings, a note with every result) where gcc interchanges the
    kernel's two loops at the sizes ``at``.

    A compiler that fails here is left to the in-core analysis to report (the nest is kept).
    """
    opt, kernel = analyzer.options, analyzer.kernel
    if opt.incore not in COMPILING or opt.kernel_text is None or not can_interchange(kernel):
        return analyzer
    try:
        nest = analyzer.loop_structure(at)
    except ToolError:
        return analyzer
    written = kernel.loop_indices
    if nest is None or not nest.interchanged or nest.order != tuple(reversed(written)):
        return analyzer
    new, text = interchanged(kernel)
    note = (f"{FOLLOWED}{nest.compiler} interchanges the loops (its optimisation report), so the nest "
            f"runs in the order {', '.join(nest.order)}, not {', '.join(written)} as written; the traffic and "
            "in-core models follow it")
    return Analyzer(new, machine, dataclasses.replace(opt, kernel_text=text, notes=tuple(opt.notes) + (note,)))
