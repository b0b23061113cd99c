"""JSON of a kernel function of several loop nests (:class:`~loopmodel.workflows.sequence.SequenceResult`;
document type :class:`~loopmodel.report.doctypes.sequence.AnalyzeFunctionDocument`)."""
from __future__ import annotations

from .json_report import to_dict
from .schema import document


def sequence_dict(res) -> dict:
    """One JSON-ready document of a function's analysis: per nest its figures and full analysis
    (:func:`loopmodel.report.json_report.to_dict`), the total per call and the notes."""
    m = res.machine
    nests = []
    for n in res.nests:
        ecm = None if n.result is None else n.result.ecm
        t_ecm = None if ecm is None else ecm.selected
        per_unit = None if n.result is None else n.result.traffic.iterations_per_unit
        nests.append({
            "line": n.nest.line, "loops": [lp.index for lp in n.nest.kernel.loops],
            "repeat_loops": [lp.index for lp in n.nest.repeat], "runs": n.repeats, "iterations": n.iterations,
            "data_location": None if n.result is None else n.result.location, "T_ECM_cy_per_cl": t_ecm,
            "cy_per_it": None if t_ecm is None else t_ecm / per_unit, "time_per_call_cy": n.cycles,
            "share": res.share(n), "bottleneck": n.bottleneck, "does_not_run": n.empty,
            "analysis": None if n.result is None else to_dict(n.result)})
    return document({
        "kernel_file": res.sequence.source,
        "machine": {"name": m.name, "model_name": m.model_name, "clock_Hz": m.clock,
                    "cacheline_size_B": m.cacheline_size},
        "defines": dict(res.defines), "nests": nests, "total_time_per_call_cy": res.total_cycles,
        "total_time_per_call_s": res.seconds,
        "outer_loop": None if res.outer is None else res.outer[0],
        "time_per_outer_iteration_cy": None if res.outer is None else res.outer[1], "notes": list(res.notes)})
