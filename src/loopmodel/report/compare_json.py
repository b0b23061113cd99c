"""``compare``'s JSON document: one object per machine model with the figures of its row
(:class:`~loopmodel.workflows.compare.MachineRow`), in the units of the key names
(:mod:`loopmodel.report.schema`). The text table (:mod:`loopmodel.report.compare_text`) and the
plot (:mod:`loopmodel.report.compare_plot`) render these objects, so every unit conversion is
made here once (:mod:`loopmodel.report.output_units`).
"""
from __future__ import annotations

from .output_units import convert
from .schema import document, finite


def _rates(it_s: float | None, flops_per_it: float) -> dict:
    """``{"it_s", "flop_s", "lup_s"}`` of a rate in it/s (one lattice-site update per
    iteration; FLOP/s = it/s · FLOP/it); None values for an unknown rate."""
    if it_s is None:
        return {"it_s": None, "flop_s": None, "lup_s": None}
    return {"it_s": finite(it_s), "flop_s": finite(it_s * flops_per_it), "lup_s": finite(it_s)}


def _per_location(res) -> dict:
    """Level -> ``{"cy_per_cl", "cy_per_it"}``: the single-core ECM prediction with the data in
    that level (``T_ECM`` of the analysis' :class:`~loopmodel.models.ecm.ECMResult`)."""
    it = res.traffic.iterations_per_unit
    return {lvl: {"cy_per_cl": v, "cy_per_it": convert(v, "cy/it", it, res.machine.clock, 0.0)}
            for lvl, v in res.ecm.T_ECM.items()}


def _energy(result) -> dict | None:
    """The energy-optimal operating point of an ``energy`` result (None without one)."""
    if result is None:
        return None
    p = result.energy_optimum
    return {"cores": p.cores, "clock_Hz": p.clock_hz, "power_W": p.power_w, "it_s": p.it_per_s,
            "energy_J_per_it": p.energy_j_per_unit}


def row_dict(row) -> dict:
    """One machine model's object (:class:`~loopmodel.workflows.compare.MachineRow`): ECM per data
    location, the data location and T_ECM there, n_s, the Roofline bottleneck, the performance of
    one core and of one socket, the energy optimum, the footnotes and the analysis' notes; a figure
    the model could not give is null (its footnote says why)."""
    res = row.analysis
    out = {"machine": row.machine, "clock_Hz": None, "cores_per_socket": None, "iterations_per_cl": None,
           "ecm_per_location": {}, "data_in": None, "T_ECM_cy_per_cl": None, "T_ECM_cy_per_it": None,
           "saturation_cores": None, "roofline_bottleneck": None, "core": _rates(None, 0.0), "socket": None,
           "energy": _energy(row.energy)}
    if res is not None:
        m, p, flops = res.machine, res.prediction, res.kernel.flops_per_iteration
        it = res.traffic.iterations_per_unit
        one = convert(p.single_core_cy_per_cl, "it/s", it, m.clock, flops)
        out.update({"clock_Hz": m.clock, "cores_per_socket": m.cores_per_socket, "iterations_per_cl": it,
                    "ecm_per_location": _per_location(res), "data_in": p.location,
                    "T_ECM_cy_per_cl": p.single_core_cy_per_cl,
                    "T_ECM_cy_per_it": convert(p.single_core_cy_per_cl, "cy/it", it, m.clock, flops),
                    "saturation_cores": p.saturation.cores,
                    "roofline_bottleneck": res.roofline.bottleneck if res.roofline is not None else None,
                    "core": _rates(one, flops)})
        if row.socket is not None and row.socket.point is not None:
            s = row.socket
            out["socket"] = {"cores": s.cores, "data_in": s.location, **_rates(s.point.it_per_s, flops),
                             "limit": s.point.limit}
    out["footnotes"] = [{"column": f.column, "text": f.text} for f in row.footnotes]
    out["notes"] = list(res.notes) if res is not None else []
    return out


def to_dict(run) -> dict:
    """The document of ``compare --json`` (:class:`~loopmodel.workflows.compare.CompareRun`)."""
    first = next((r.analysis for r in run.rows if r.analysis is not None), None)
    return document({"kernel": run.kernel, "defines": dict(run.defines),
                     "flops_per_it": first.kernel.flops_per_iteration if first is not None else None,
                     "multicore_model": run.model, "machines": [row_dict(r) for r in run.rows]})
