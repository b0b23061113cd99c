"""JSON rendering of :class:`~loopmodel.workflows.analysis.AnalysisResult` (plain floats, units in keys).

Output is deterministic: dicts whose order carries no meaning (ports) are sorted by key,
so that two runs of the same analysis -- computed, or read from the per-user cache --
print the same bytes. Unknown figures are null, with the reason in ``unknown`` and ``notes``.
"""
from __future__ import annotations

import math

from ..predictors.layer_conditions import largest_size, transition_size
from .schema import document, finite
from .output_units import convert_all


def _sorted(d: dict) -> dict:
    """``d`` with its keys in sorted order (for dicts whose order has no meaning)."""
    return {k: d[k] for k in sorted(d)}


def to_dict(res) -> dict:
    """One JSON-ready document for one analysis (naming rule: :mod:`loopmodel.report.schema`).

    Keys: ``schema_version``, ``loopmodel_version``, ``kernel``, ``machine``, ``defines``, ``cores``, ``sweeps``, ``layer_conditions``,
    ``traffic``, ``incore`` (null when no requested model needs it), ``ecm``, ``roofline``,
    ``roofline_asm``, ``performance``, ``notes``, ``confidence`` (regime tags, the host validation's
    error band, notes on regimes known to be poorly modelled; null when not assessed).
    """
    k, m = res.kernel, res.machine
    doc = {
        "kernel": _kernel(k),
        "machine": {"name": m.name, "model_name": m.model_name, "clock_Hz": m.clock,
                    "cacheline_size_B": m.cacheline_size},
        "defines": dict(res.defines),
        "cores": res.options.cores,
        "sweeps": res.options.sweeps,
        "iterations_per_cl": res.traffic.iterations_per_unit,
        "unit_of_work": _unit_of_work(res),
        "layer_conditions": _layer_conditions(res),
        "traffic": [],
        "notes": list(res.notes),
    }
    doc["traffic_predictor"] = res.traffic.predictor
    for lt in res.traffic.levels:
        doc["traffic"].append({"level": lt.level, "loads_cl_per_cl": lt.loads_cl, "stores_cl_per_cl": lt.stores_cl,
                               "volume_B_per_cl": lt.bytes, "load_volume_B_per_cl": lt.load_bytes,
                               "store_volume_B_per_cl": lt.store_bytes, "hits_cl_per_cl": lt.hits,
                               "misses_cl_per_cl": lt.misses, "evicts_cl_per_cl": lt.evicts_cl})
    if res.simulation is not None:
        doc["simulation"] = _simulation(res.simulation)
    doc["incore"] = _incore(res) if res.incore is not None else None
    if res.ecm:
        doc["ecm"] = _ecm(res)
    for key, r in (("roofline", res.roofline), ("roofline_asm", res.roofline_asm)):
        if r:
            doc[key] = _roofline(r, res)
    doc["confidence"] = _confidence(res.confidence)
    return document(doc)


def _confidence(c) -> dict | None:
    """Regime tags, error band (``basis`` and the :class:`~loopmodel.machine.probe_section.ErrorStats`
    as fractions) and notes of a :class:`~loopmodel.workflows.confidence.Confidence`."""
    if c is None:
        return None
    band = None if c.band is None else {"basis": c.basis, **c.band.to_mapping()}
    return {"regimes": list(c.tags), "level": c.level, "band": band, "notes": list(c.notes)}


def _kernel(k) -> dict:
    return {
            "file": k.source,
            "loops": [{"index": lp.index, "start": str(lp.start), "stop_exclusive": str(lp.stop), "step": lp.step}
                      for lp in k.loops],
            "arrays": {n: {"type": a.ctype, "element_size_B": a.element_size, "dims": [str(d) for d in a.dims]}
                       for n, a in k.arrays.items()},
            "loads_per_it": k.loads_per_iteration(),
            "stores_per_it": k.stores_per_iteration(),
            "operations_per_it": dict(k.operations),
            "fma_candidates_per_it": k.fma_candidates,
            "flops_per_it": k.flops_per_iteration,
            # longest_chain: the path with the most operations from the dependent read to the write
            "recurrences": [{"variable": r.variable, "distance_it": r.distance,
                             "longest_chain": list(r.graph.longest_chain()[1]), "reassociable": r.reassociable}
                            for r in k.recurrences],
            "pragmas": list(k.pragmas),
            "swaps": [list(p) for p in k.swaps],
    }


def _layer_conditions(res) -> list:
    return [{
        "level": lv.level,
        "cache_size_B": lv.cache_size,
        "variable": res.lc_variable,
        "conditions": [{
            "condition": f"{st.requirement} <= {lv.cache_size:.17g}" if st.distance.degree or not st.distance.is_zero() else "none (no reuse)",
            "reuse_distance_it": str(st.distance),
            "dimension": st.dimension,
            "requirement_B": finite(st.requirement_bytes),
            "fulfilled": bool(st.condition),
            "hits_per_it": st.hits, "misses_per_it": st.misses,
            "evicts_per_it": st.evicts,
            "max_size_exact": finite(st.max_size),
            "transition_size": finite(transition_size(st.max_size)),
            "largest_block_size": _floor(st.max_size),
        } for st in lv.states],
        "selected": lv.selected,
        "whole_data_set": None if lv.data_set is None else {
            "data_set_B": lv.data_set.requirement_bytes, "capacity_B": lv.capacity,
            "condition": f"{lv.data_set.requirement} <= {lv.capacity:g}",
            "fulfilled": bool(lv.data_set.condition), "held": lv.holds_data_set,
            "max_size_exact": finite(lv.data_set.max_size),
            "transition_size": finite(transition_size(lv.data_set.max_size)),
            "largest_size": _floor(lv.data_set.max_size),
        },
    } for lv in res.lc_levels]


def _floor(max_size):
    """``max_size`` rounded down (the largest integer size keeping the condition); None and inf kept."""
    return finite(largest_size(max_size))


def _simulation(si) -> dict:
    return {
        "measured_iterations": si.measured_iterations, "simulated_iterations": si.simulated_iterations,
        "warmup_iterations": si.warmup_iterations, "sweeps": si.sweeps, "cold_single_sweep": si.cold,
        "arrays": {name: {"address_B": addr, "size_B": size} for name, (addr, size) in si.layout.items()},
        "levels": [{"level": lv.name, "sets": lv.sets, "ways": lv.ways, "line_size_B": lv.line_size,
                    "policy": lv.policy, "write_allocate": lv.write_allocate, "write_back": lv.write_back,
                    "type": lv.kind} for lv in si.levels],
    }


def _ecm(res) -> dict:
    e, m, p = res.ecm, res.machine, res.prediction
    return {
        "T_OL_cy_per_cl": e.T_OL, "T_nOL_cy_per_cl": e.T_nOL,
        "contributions": [_contribution(c) for c in e.contributions],
        "by_location": {lvl: {"T_ECM_cy_per_cl": e.T_ECM[lvl], "contributions": [_contribution(c) for c in parts]}
                        for lvl, parts in e.by_location.items()},
        "memory_busy_cy_per_cl": e.memory_busy,
        "T_ECM_cy_per_cl": dict(e.T_ECM),
        "T_transfer_cy_per_cl": dict(e.T_transfer),
        "unknown": e.unknown,
        "overlapping": list(e.overlapping),
        "saturation_cores": e.saturation_cores,
        "saturated_per_domain_it_s": e.saturation.it_per_s(res.traffic.iterations_per_unit, m.clock),
        "notation": e.notation(),
        "prediction_notation": e.prediction_notation(),
        "data_location": p.location,
        "selected_T_ECM_cy_per_cl": p.single_core_cy_per_cl,
        "multicore_model": p.multicore_model,
        "multicore_cy_per_cl": p.cy_per_cl,
        "performance": {k: finite(v) for k, v in convert_all(p.cy_per_cl, res).items()},
    }


def _incore(res) -> dict:
    ic = res.incore
    out = {"source": ic.source, "T_OL_cy_per_cl": ic.T_OL, "T_nOL_cy_per_cl": ic.T_nOL,
           "simd_lanes": ic.lanes, "components_cy_per_cl": dict(ic.components),
           "operations_per_it": dict(ic.operations), "dependency_cy_per_it": ic.dependency}
    if getattr(ic, "reassociation", None) is not None:  # analytic model: partial sums assumed, and why
        out["reassociation"] = dict(ic.reassociation)
    if getattr(ic, "origin", None):  # compiled analyzers: the port, chain or data path giving T_OL, T_nOL
        out["origin"] = dict(ic.origin)
    if getattr(ic, "measurement", None) is not None:  # --incore measured: the benchmark behind T_OL
        out["measurement"] = _measurement(ic.measurement)
    if res.compiled is not None:
        ci = res.compiled
        bal, loads = ci.port_table.balanced, ci.port_table.loads
        out["compiled"] = {
            "analyzer": ci.analyzer, "analyzer_version": ci.analyzer_version, "compiler": ci.compiler,
            "compiler_version": ci.compiler_version, "flags": list(ci.flags), "block_label": ci.block_label,
            "block": ci.block, "iterations_per_pass": ci.iterations_per_pass,
            "pointer_increment_B_per_pass": ci.bytes_per_pass, "ports_cy_per_pass": _sorted(ci.ports_cy_per_pass),
            "block_throughput_cy_per_pass": ci.block_throughput, "simulated_cy_per_pass": ci.cycles_per_pass,
            "balanced_ports_cy_per_pass": _sorted(bal), "load_ports_cy_per_pass": _sorted(loads),
        }
        if ci.loops is not None:
            out["compiled"]["loops"] = _compiled_loops(ci.loops)
        if ci.check is not None:
            out["compiled"]["probe_check"] = [
                {"op": r.op, "width_B": r.width, "kind": r.kind, "instruction": r.instruction,
                 "count_per_pass": r.count, "analyzer_cy": r.analyzer_cy, "probe_cy": r.probe_cy, "agrees": r.agrees}
                for r in ci.check.rows]
    return out


def _compiled_loops(nest) -> dict:
    """What the compiler did to the nest, from its optimisation report
    (:class:`~loopmodel.compiled.loop_report.CompiledNest`): loops by depth, outermost first."""
    return {"compiler": nest.compiler, "interchanged": nest.interchanged, "order": list(nest.order),
            "loops": [{"depth": lp.depth, "index": lp.index, "vector_B": lp.vector_bytes,
                       "epilogue_vector_B": lp.epilogue_bytes, "versioned_for_aliasing": lp.versioned,
                       "unroll_factor": lp.unroll_factor, "completely_unrolled_iterations": lp.completely_unrolled}
                      for lp in nest.loops]}


def _measurement(m) -> dict:
    """The benchmark of a measured in-core time (:class:`~loopmodel.models.incore.InCoreMeasurement`)."""
    lo, med, hi = m.cy_per_cl
    return {"defines": dict(m.defines), "data_set_B": m.data_set_B, "l1_B": m.l1_B, "inner_trips": m.inner_trips,
            "time_min_cy_per_cl": lo, "time_median_cy_per_cl": med, "time_max_cy_per_cl": hi, "spread": m.spread,
            "repetitions": m.runs, "clock_Hz": m.clock_hz, "compiler": m.compiler, "flags": list(m.flags),
            "cached": m.cached, "model_T_nOL_cy_per_cl": m.model_t_nol}


def _roofline(r, res) -> dict:
    """The Roofline result (kerncraft-tool-paper.txt §1.2.1): every performance in FLOP/s (null
    for a kernel without FLOPs, whose model works in iterations) and in it/s (from the time in
    cy/CL: it/CL x clock / time)."""
    flops = r.work_unit == "FLOP"
    it, clock = res.traffic.iterations_per_unit, res.machine.clock

    def it_s(time):
        return None if time is None else finite(it * clock / time if time > 0 else float("inf"))

    def flop_s(value):
        return finite(value) if flops else None

    return {
        "cores": r.cores,
        "cpu_performance_flop_s": flop_s(r.cpu_performance),
        "cpu_performance_it_s": it_s(r.cpu_time),
        "cpu_time_cy_per_cl": r.cpu_time,
        "cpu_roof_source": r.cpu_source,
        "levels": [{"level": lv.level, "volume_B_per_cl": lv.bytes, "intensity_flop_per_B": finite(lv.intensity),
                    "bandwidth_B_s": lv.bandwidth, "bandwidth_kernel": lv.kernel, "measured_cores": lv.cores,
                    "performance_flop_s": flop_s(lv.performance), "performance_it_s": it_s(lv.time),
                    "time_cy_per_cl": finite(lv.time)} for lv in r.levels],
        "bottleneck": r.bottleneck,
        "performance_flop_s": flop_s(r.performance),
        "performance_it_s": it_s(r.time),
        "time_cy_per_cl": finite(r.time),
        "unknown": r.unknown,
    }


def _contribution(c) -> dict:
    return {"name": c.name, "time_cy_per_cl": c.cycles, "busy_cy_per_cl": c.busy, "penalty_cy_per_cl": c.penalty,
            "in_B_per_cl": c.bytes_in, "out_B_per_cl": c.bytes_out, "bandwidth_B_per_cy": list(c.bandwidth),
            "bandwidth_source": c.source}


def _unit_of_work(res) -> dict:
    """The unit all per-CL figures refer to (:meth:`~loopmodel.ir.kernel.Kernel.unit_of_work`)."""
    u = res.kernel.unit_of_work(res.machine.cacheline_size, res.defines)
    return {"definition": "one cache line of the written array (of the read arrays when no written array "
                          "moves with the inner loop): it/CL = CL / min(CL, |address step per iteration in B|); "
                          "no array moving with the inner loop: CL / largest floating-point scalar size",
            "array": u.array, "basis": u.basis, "address_step_B_per_it": finite(u.step_bytes),
            "iterations_per_cl": res.traffic.iterations_per_unit}
