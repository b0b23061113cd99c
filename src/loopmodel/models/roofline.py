"""Roofline model (kerncraft-tool-paper.txt §1.2.1, §2.3, Listing 4).

T_roof = max_k(T_core, T_k) with T_k = beta_k / B_k: per memory level, the data
volume beta_k of the link into that level divided by a measured streaming
bandwidth B_k (benchmark kernel chosen by read/write stream ratio, corrected for
write-allocate, measured with the cores asked: paper §2.2, "streaming benchmark results
are required input for the Roofline model with all core counts"). Performance per level
is arithmetic intensity (FLOP/B) times bandwidth.

The CPU roof T_core is the in-core time of the model ECM uses: T_OL of the in-core result
(paper §1.2.1: "T_core is the in-core execution time for computations ... any other
well-defined metric will do"), so division throughput, loop-carried dependency chains and
integer operations count as they do in ECM, where the applicable FLOP peak of the paper's
hand model counts only ADD/MUL/FMA. With n cores it is T_OL / n. RooflineASM (the tool's
RooflineIACA, §2.3) takes max(T_OL, T_nOL) of the compiled block, which also replaces the
L1 roof's loads and stores. Where the machine model lacks an operation's throughput or
latency (T_OL unknown), the CPU roof is the applicable peak FLOP/s
(:func:`applicable_peak_flops_per_cycle`, a lower bound of the in-core time, so the Roofline
stays an upper bound of the performance) and ``cpu_source`` says so; without that too, the
CPU roof, the predicted time, performance and bottleneck are None and ``unknown`` says why;
the bandwidth roofs are still given.

The work is counted in FLOPs when the kernel has a floating-point operand (a float or double
array or scalar, or a loop index used as a value); a kernel of integer arithmetic only has no
FLOPs: its work is counted in iterations (``work_unit`` ``"it"``), performances in it/s and
intensities None (the kernel IR counts its integer operations with the FLOP types).

With n cores every bandwidth is that of n cores: those of
:func:`~loopmodel.machine.bandwidth.choose_bandwidth` for n active cores, measured in one
ccNUMA domain and added over the domains in use (so the Roofline doubles from one socket's
cores to both sockets', as the ECM multicore model does, and never falls when a core is added).
Where the machine model has no measurement for a level, its bandwidth is derived from the ECM
transfer rates of the model (:func:`~loopmodel.machine.derived_bandwidth.roofline_bandwidth`:
the link toward the core, or the L1 load/store limits, x clock x links in use;
cross-architecture-machine-models.txt §3.4.1-§3.4.2), with a note; measured figures keep priority.

Roofline and ECM: both are at least T_OL / n, and a CPU-bound Roofline is never slower than
ECM. A bandwidth roof can be: Roofline divides the traffic by the bandwidth measured with the
cores asked, ECM adds the transfer times of its link model (documented cache bandwidths, the
saturated memory bandwidth, paper §1.2.2, §2.3 "ECMData"), and a single core, or a few, measures
less than that model implies. :func:`versus_ecm` writes the note that says so with both figures.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses

from ..machine.derived_bandwidth import DERIVED_KERNEL, roofline_bandwidth
from ..units import format_fixed, format_si
from .incore import fused_operations

#: ``cpu_source`` of the CPU roof from the in-core model (``{source}``: analytic, llvm-mca, ...)
TOL_SOURCE = "T_OL of the {source} in-core model"
#: ``cpu_source`` of the peak FLOP/s, taken only where T_OL is unknown
PEAK_SOURCE = "peak FLOP/s (T_OL unknown)"


@dataclass(frozen=True)
class RooflineLevel:
    """One bandwidth roof.

    Attributes:
        level: ``L1`` (registers<->L1), ``L2`` (L1<->L2), ... ``MEM``.
        bytes: bytes per CL of work on that link.
        intensity: FLOP/B (None for kernels without FLOPs).
        bandwidth: B/s; kernel: benchmark kernel (:data:`~loopmodel.machine.derived_bandwidth.DERIVED_KERNEL`
            where derived from the ECM transfer rates); cores: measurement's core count (summed over the
            ccNUMA domains in use; at most the cores of the prediction; the cores asked where derived).
        performance: FLOP/s (it/s if the kernel has no FLOPs).
        time: cy/CL.
    """

    level: str
    bytes: float
    intensity: object
    bandwidth: float
    kernel: str
    cores: int
    performance: float
    time: float


@dataclass(frozen=True)
class RooflineResult:
    """Roofline bottleneck analysis.

    Attributes:
        cpu_performance: CPU roof in FLOP/s (it/s for a kernel without FLOPs; None when unknown).
        cpu_time: cy/CL of the CPU roof (None: unknown, see ``unknown``).
        levels: :class:`RooflineLevel` per level.
        bottleneck: ``CPU`` or a level name (None when the CPU roof is unknown).
        performance: predicted FLOP/s (it/s without FLOPs; min over roofs; None when the CPU roof is
            unknown).
        time: predicted cy/CL (max over roofs; None when the CPU roof is unknown).
        cores: core count of the prediction (that of every bandwidth and of the CPU roof).
        cpu_source: where the CPU roof comes from: :data:`TOL_SOURCE` (the in-core model ECM uses),
            :data:`PEAK_SOURCE` (T_OL unknown), or for RooflineASM the analyzer of the compiled block.
        unknown: why the CPU roof is unknown (None when known).
        notes: how the roofs were obtained where that is not the plain rule (precision of
            mixed float/double kernels, bandwidths added over ccNUMA domains or measured with
            fewer cores than are active, a Roofline slower than ECM: :func:`versus_ecm`).
        work_unit: ``"FLOP"`` or ``"it"`` (a kernel without floating-point operations,
            :func:`flop_precision`): the unit of every performance.
    """

    cpu_performance: object
    cpu_time: float
    levels: tuple
    bottleneck: str
    performance: float
    time: float
    cores: int
    cpu_source: str = ""
    unknown: str | None = None
    notes: tuple = ()
    work_unit: str = "FLOP"

    def bandwidth_bound(self) -> RooflineLevel:
        """The slowest bandwidth roof (an upper bound of the performance when the CPU roof is unknown)."""
        return max(self.levels, key=lambda lv: lv.time)


def flop_precision(kernel) -> tuple:
    """``(precision, mixed)``: ``"SP"`` when every floating-point operand type of the kernel (its
    arrays and float/double scalars) is float, ``"DP"`` when one is double or a loop index is used
    as a value (converted to double), None when the kernel has no floating-point operand (integer
    arithmetic only: no FLOPs); ``mixed`` is True when the kernel has operands of both types (C's
    usual arithmetic conversions evaluate an operation with a double operand in double; which
    operations those are is not in the IR)."""
    types = {a.ctype for a in kernel.arrays.values()} | {s.ctype for s in kernel.scalars.values()}
    fp = types & {"float", "double"}
    if not fp and not kernel.index_values:
        return None, False
    return ("SP" if fp == {"float"} and not kernel.index_values else "DP"), fp == {"float", "double"}


def applicable_peak_flops_per_cycle(machine, ops, prec: str) -> float | None:
    """Applicable peak FLOP/cy for the kernel's operation mix (paper §1.2.1).

    T = max over types (flops of type / peak of type, total flops / total peak);
    returns flops / T. ``ops``: operations per iteration after FMA fusion
    (:func:`~loopmodel.models.incore.fused_operations`); ``prec``: ``"SP"`` or ``"DP"``
    (:func:`flop_precision`). None if the machine gives no FLOPs per cycle for that precision
    or the kernel has no FLOPs.
    """
    fpc = machine.in_core.flops_per_cycle.get(prec)
    flops = {"ADD": ops.get("ADD", 0), "MUL": ops.get("MUL", 0), "FMA": 2 * ops.get("FMA", 0)}
    total = flops["ADD"] + flops["MUL"] + flops["FMA"] + ops.get("DIV", 0) + ops.get("SQRT", 0)
    if not fpc or total == 0:
        return None
    t = total / fpc.total
    for op in ("ADD", "MUL", "FMA"):
        peak = getattr(fpc, op)
        if flops[op]:
            if peak:
                t = max(t, flops[op] / peak)
            elif op == "FMA":  # no FMA unit: executed as MUL + ADD
                t = max(t, flops[op] / fpc.total)
    return total / t


def roofline_model(kernel, traffic, incore, machine, cores: int = 1, cpu_from_block: bool = False,
                   unknown: str | None = None) -> RooflineResult:
    """Roofline prediction of ``cores`` cores: the CPU roof from the in-core result, the bandwidth
    roofs from the traffic per level and the bandwidths measured with ``cores`` cores.

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel` (loads and stores per iteration, FLOPs).
        traffic: :class:`~loopmodel.predictors.traffic.TrafficResult` (bytes per CL of work per link).
        incore: :class:`~loopmodel.models.incore.InCoreResult` of the in-core model ECM uses.
        machine: :class:`~loopmodel.machine.model.MachineModel` (measured bandwidths, else its ECM
            transfer rates; clock).
        cores: active cores (>= 1): the bandwidths' measurement (summed over ccNUMA domains) and
            the CPU roof T_OL / cores.
        cpu_from_block: RooflineASM (kerncraft-tool-paper.txt §2.3, the tool's RooflineIACA):
            the CPU roof is the compiled block's in-core time, max(T_OL, T_nOL) cy/CL per
            core, from ``incore`` (llvm-mca or OSACA).
        unknown: why ``incore.T_OL`` is None (reported when the CPU roof is unknown).

    Returns:
        :class:`RooflineResult` (FLOP/s or it/s, and cy/CL); CPU roof and prediction None when
        T_OL and the peak FLOP/s are both unknown.

    Raises:
        ModelError: a level has neither a measured bandwidth nor a transfer rate to derive one from.
    """
    it = traffic.iterations_per_unit
    prec, mixed = flop_precision(kernel)
    flops_cl = kernel.flops_per_iteration * it if prec else 0
    work = flops_cl if flops_cl else it
    unit = "FLOP" if flops_cl else "it"
    clock = machine.clock
    levels, chosen = _bandwidth_roofs(kernel, traffic, machine, cores, flops_cl, work)
    notes = bandwidth_notes(chosen, cores)
    if cpu_from_block:
        cpu_time, source = incore.core_time / cores, f"{incore.source} block throughput"
    else:
        cpu_time, source, more = _cpu_roof(incore, machine, cores, flops_cl, fused_operations(kernel, machine),
                                           (prec, mixed))
        notes += more
        if cpu_time is None:
            return RooflineResult(None, None, tuple(levels), None, None, None, cores, source,
                                  f"CPU roof unknown: no T_OL and no FLOPs per cycle ({unknown or 'T_OL unknown'})",
                                  tuple(notes), unit)
    cpu_perf = work / cpu_time * clock if cpu_time > 0 else None
    best_time, bottleneck = cpu_time, "CPU"
    for lv in levels:
        if lv.time > best_time:
            best_time, bottleneck = lv.time, lv.level
    perf = work / best_time * clock if best_time > 0 else float("inf")
    return RooflineResult(cpu_perf, cpu_time, tuple(levels), bottleneck, perf, best_time, cores, source,
                          notes=tuple(notes), work_unit=unit)


def _bandwidth_roofs(kernel, traffic, machine, cores: int, flops_cl: float, work: float) -> tuple:
    """``([RooflineLevel], [ChosenBandwidth])``: registers<->L1 (the instructions' loads and stores)
    and each link of ``traffic``, at the bandwidths measured with ``cores`` cores, else derived from
    the ECM transfer rates (:func:`~loopmodel.machine.derived_bandwidth.roofline_bandwidth`)."""
    it, clock = traffic.iterations_per_unit, machine.clock
    wa = any(c.write_allocate for c in machine.caches)
    ld = kernel.bytes_loaded_per_iteration() * it
    st = kernel.bytes_stored_per_iteration() * it
    roofs = [(machine.caches[0].level, ld + st, kernel.loads_per_iteration(), kernel.stores_per_iteration(), False)]
    for k, lt in enumerate(traffic.levels):
        roofs.append((machine.memory_hierarchy[k + 1].level, lt.bytes, lt.loads_cl, lt.stores_cl, wa))
    levels, chosen = [], []
    for level, nbytes, r, w, corr in roofs:
        ch = roofline_bandwidth(machine, level, r, w, cores=cores, correct_write_allocate=corr)
        chosen.append(ch)
        time = nbytes / ch.bandwidth * clock if ch.bandwidth > 0 else float("inf")
        perf = work / time * clock if time > 0 else float("inf")
        ai = flops_cl / nbytes if (flops_cl and nbytes) else None
        levels.append(RooflineLevel(level, nbytes, ai, ch.bandwidth, ch.kernel, ch.cores, perf, time))
    return levels, chosen


def _cpu_roof(incore, machine, cores: int, flops_cl: float, ops: dict, precision: tuple) -> tuple:
    """``(cy/CL or None, source, notes)`` of the CPU roof of ``cores`` cores: T_OL / cores of the
    in-core result, else (T_OL unknown) the applicable peak (:func:`applicable_peak_flops_per_cycle`
    at ``precision``, ``(prec, mixed)`` of :func:`flop_precision`), else None."""
    if incore.T_OL is not None:
        return incore.T_OL / cores, TOL_SOURCE.format(source=incore.source), []
    prec, mixed = precision
    peak = applicable_peak_flops_per_cycle(machine, ops, prec) if prec else None
    if not peak:
        return None, TOL_SOURCE.format(source=incore.source), []
    notes = []
    single = applicable_peak_flops_per_cycle(machine, ops, "SP") if mixed else None
    if single:
        notes.append(f"Roofline: the kernel mixes float and double operands; C evaluates an operation "
                     f"with a double operand in double, so the CPU roof takes the DP peak, "
                     f"{format_si(peak * machine.clock * cores, 'FLOP/s')} for its FLOP mix on {cores} "
                     f"core(s) (all FLOPs in single precision: "
                     f"{format_si(single * machine.clock * cores, 'FLOP/s')})")
    return flops_cl / (peak * cores), PEAK_SOURCE, notes


def bandwidth_notes(chosen: list, cores: int) -> list:
    """Notes on the bandwidths of ``cores`` cores (:class:`~loopmodel.machine.bandwidth.ChosenBandwidth`
    per roof): added over several ccNUMA domains, measured with fewer cores than a domain has active, or
    derived from the ECM transfer rates where the machine model has no measurement."""
    notes = []
    derived = [ch for ch in chosen if ch.derived]
    if derived:
        notes.append(f"Roofline: the {', '.join(ch.level for ch in derived)} bandwidth(s) are derived from the machine "
                     "model's ECM transfer rates, not measured (no benchmarks.measurements for them): "
                     + "; ".join(ch.derived for ch in derived))
    domains = max((ch.domains for ch in chosen), default=1)
    if domains > 1:
        notes.append(f"Roofline with {cores} cores: the bandwidths measured in one ccNUMA domain are added over "
                     f"the {domains} domains in use (cores fill the domains one after the other)")
    short = sorted({(ch.level, ch.most_measured) for ch in chosen if ch.most_measured})
    if short:
        what = ", ".join(f"{lvl} ({n})" for lvl, n in short)
        notes.append(f"Roofline with {cores} cores: bandwidths measured with at most {what} cores per domain; "
                     "a domain with more active cores gets the best measured figure (a lower bound)")
    return notes


def slower_than_ecm(roof: RooflineResult, ecm_time: float | None) -> bool:
    """Whether the Roofline predicts a longer time than ECM's ``ecm_time`` (cy/CL of the same
    cores and data location); False where either is unknown. Only a bandwidth roof can be
    (the CPU roof T_OL / n is at most ECM's n-core time)."""
    return roof.time is not None and ecm_time is not None and roof.time > ecm_time * (1 + 1e-9)


def versus_ecm(roof: RooflineResult, ecm, prediction, clock: float) -> RooflineResult:
    """``roof`` with a note where it is slower than ECM (:func:`slower_than_ecm`): the roof, both
    figures in cy/CL, and the assumption that differs (module docstring: measured bandwidth at the
    cores asked against ECM's link model with the saturated memory bandwidth).

    Args:
        roof: :class:`RooflineResult` of ``roof.cores`` cores.
        ecm: :class:`~loopmodel.models.ecm.ECMResult` of the same analysis (its memory link's bandwidth).
        prediction: the point's :class:`~loopmodel.models.prediction.Prediction` (ECM's aggregate cy/CL of
            ``roof.cores`` cores at its data location, the multicore model that gives it; None: no ECM).
        clock: Hz (bandwidths in B/s from B/cy).

    Returns:
        :class:`RooflineResult`, ``roof`` itself where it is not slower than ECM.
    """
    ecm_time = None if prediction is None else prediction.cy_per_cl
    if not slower_than_ecm(roof, ecm_time):
        return roof
    lv = next(lv for lv in roof.levels if lv.level == roof.bottleneck)
    mem = [c.bandwidth[0] * clock for c in ecm.contributions if c.name.endswith("MEM") and c.bandwidth]
    location = prediction.location
    saturated = f", memory at the saturated bandwidth {format_si(mem[0], 'B/s')}" if mem and location == "MEM" else ""
    rule = f", with the {prediction.multicore_model} model for {roof.cores} cores" if roof.cores > 1 else ""
    n = f"{roof.cores} core{'s' if roof.cores > 1 else ''}"
    how = (f"bandwidth derived from the ECM transfer rates for {lv.cores} core(s)" if lv.kernel == DERIVED_KERNEL
           else f"'{lv.kernel}' bandwidth measured with {lv.cores} core(s)")
    note = (f"Roofline {format_fixed(roof.time, 2)} cy/CL is slower than ECM {format_fixed(ecm_time, 2)} cy/CL "
            f"(data in {location}, {n}): its {lv.level} roof moves {format_fixed(lv.bytes, 0)} B/CL at the "
            f"{how}, {format_si(lv.bandwidth, 'B/s')}, where ECM's "
            f"figure implies {format_si(lv.bytes / ecm_time * clock, 'B/s')}; Roofline takes the bandwidth measured "
            f"at the core count asked, ECM adds the transfer times of its link model (documented cache "
            f"bandwidths{saturated}){rule}, and the measurement with {n} is below what that model implies")
    return dataclasses.replace(roof, notes=roof.notes + (note,))
