"""Roofline model (kerncraft-tool-paper.txt §1.2.1, §2.3, Listing 4).

T_roof = max_k(T_core, T_k) with T_k = beta_k / B_k: per memory level, the data
volume beta_k of the link into that level divided by a measured streaming
bandwidth B_k (benchmark kernel chosen by read/write stream ratio, corrected for
write-allocate). The CPU roof is the applicable peak from the machine's FLOPs
per cycle, limited by the kernel's ADD/MUL/FMA mix. Performance per level is
arithmetic intensity (FLOP/B) times bandwidth.

With n cores every roof is that of n cores: the peak times n, and the bandwidths of
:func:`~loopmodel.machine.bandwidth.choose_bandwidth` for n active cores, measured in one
ccNUMA domain and added over the domains in use (so the Roofline doubles from one socket's
cores to both sockets', as the ECM multicore model does, and never falls when a core is added).

The peak's precision: single precision (the machine's ``flops_per_cycle.SP``) when every
floating-point operand of the kernel (arrays and floating-point scalars) is float, double
precision otherwise; C evaluates an operation with a double operand in double, and a kernel
mixing both gets a note giving the all-SP figure too (the IR does not record the precision of
each operation).

Without FLOPs per cycle, or for a kernel without FLOPs, the CPU roof is the in-core T_OL
(``cpu_source`` says so); when that is unknown too (the machine model lacks an operation's
throughput), the CPU roof, the predicted time, performance and bottleneck are None and
``unknown`` says why; the bandwidth roofs are still given.
"""
from __future__ import annotations

from ..machine.bandwidth import choose_bandwidth
from ..units import format_si
from .incore import fused_operations
from ..record import record


@record
class RooflineLevel:
    """One bandwidth roof.

    Attributes:
        level: ``L1`` (registers<->L1), ``L2`` (L1<->L2), ... ``MEM``.
        bytes: bytes per CL of work on that link.
        intensity: FLOP/B (None for kernels without FLOPs).
        bandwidth: B/s; kernel: benchmark kernel; cores: measurement's core count (summed over the
            ccNUMA domains in use).
        performance: FLOP/s (iterations/s if the kernel has no FLOPs).
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


@record
class RooflineResult:
    """Roofline bottleneck analysis.

    Attributes:
        cpu_performance: CPU roof in FLOP/s (it/s for a kernel without FLOPs; None when unknown).
        cpu_time: cy/CL of the CPU roof (None: unknown, see ``unknown``).
        levels: :class:`RooflineLevel` per level.
        bottleneck: ``CPU`` or a level name (None when the CPU roof is unknown).
        performance: predicted FLOP/s (min over roofs; None when the CPU roof is unknown).
        time: predicted cy/CL (max over roofs; None when the CPU roof is unknown).
        cores: core count of the prediction.
        cpu_source: where the CPU roof comes from: ``"peak FLOP/s"``, ``"T_OL of the <source>
            in-core model"`` (no FLOPs per cycle, or no FLOPs), or for RooflineASM the analyzer
            of the compiled block.
        unknown: why the CPU roof is unknown (None when known).
        notes: how the roofs were obtained where that is not the plain rule (precision of
            mixed float/double kernels, bandwidths added over ccNUMA domains or measured with
            fewer cores than are active).
    """

    cpu_performance: object
    cpu_time: float
    levels: tuple
    bottleneck: str
    performance: float
    time: float
    cores: int
    cpu_source: str = "peak FLOP/s"
    unknown: str | None = None
    notes: tuple = ()

    def bandwidth_bound(self) -> RooflineLevel:
        """The slowest bandwidth roof (an upper bound of the performance when the CPU roof is unknown)."""
        return max(self.levels, key=lambda lv: lv.time)


def flop_precision(kernel) -> tuple:
    """``(precision, mixed)``: ``"SP"`` when every floating-point operand type of the kernel (its
    arrays and float/double scalars) is float, else ``"DP"``; ``mixed`` is True when the kernel has
    operands of both types (C's usual arithmetic conversions evaluate an operation with a double
    operand in double; which operations those are is not in the IR)."""
    types = {a.ctype for a in kernel.arrays.values()} | {
        s.ctype for s in kernel.scalars.values() if s.ctype in ("float", "double")}
    return ("SP" if types == {"float"} else "DP"), types == {"float", "double"}


def applicable_peak_flops_per_cycle(kernel, machine, ops, prec: str | None = None) -> float | None:
    """Applicable peak FLOP/cy for the kernel's operation mix (paper §1.2.1).

    T = max over types (flops of type / peak of type, total flops / total peak);
    returns flops / T. ``prec``: ``"SP"`` or ``"DP"`` (None: :func:`flop_precision`). None if
    the machine gives no FLOPs per cycle for that precision or the kernel has no FLOPs.
    """
    prec = prec or flop_precision(kernel)[0]
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
    """Roofline prediction with measured bandwidths for ``cores`` cores.

    Args:
        kernel, traffic, incore, machine: analysis inputs (see ECM).
        cores: number of cores (selects the measurement).
        cpu_from_block: RooflineASM (kerncraft-tool-paper.txt §2.3, the tool's RooflineIACA):
            the CPU roof is the compiled block's in-core time, max(T_OL, T_nOL) cy/CL per
            core, from ``incore`` (llvm-mca or OSACA), instead of the applicable peak.
        unknown: why ``incore.T_OL`` is None (reported when the CPU roof needs it).

    Returns:
        :class:`RooflineResult` (FLOP/s and cy/CL); CPU roof and prediction None when
        the CPU roof needs T_OL and ``incore.T_OL`` is None.

    Raises:
        ModelError: a level has no measured bandwidth.
    """
    it = traffic.iterations_per_unit
    flops_cl = kernel.flops_per_iteration * it
    work = flops_cl if flops_cl else it
    clock = machine.clock
    wa = any(c.write_allocate for c in machine.caches)
    levels, chosen = [], []
    # registers <-> L1: loads and stores of the instructions
    l1 = machine.caches[0].level
    ld = kernel.bytes_loaded_per_iteration() * it
    st = kernel.bytes_stored_per_iteration() * it
    roofs = [(l1, ld + st, kernel.loads_per_iteration(), kernel.stores_per_iteration(), False)]
    for k, lt in enumerate(traffic.levels):
        nxt = machine.memory_hierarchy[k + 1].level
        roofs.append((nxt, lt.bytes, lt.loads_cl, lt.stores_cl, wa))
    for level, nbytes, r, w, corr in roofs:
        ch = choose_bandwidth(machine, level, r, w, cores=cores, correct_write_allocate=corr)
        chosen.append(ch)
        time = nbytes / ch.bandwidth * clock if ch.bandwidth > 0 else float("inf")
        perf = work / time * clock if time > 0 else float("inf")
        ai = flops_cl / nbytes if (flops_cl and nbytes) else None
        levels.append(RooflineLevel(level, nbytes, ai, ch.bandwidth, ch.kernel, ch.cores, perf, time))
    notes = bandwidth_notes(chosen, cores)
    if cpu_from_block:
        cpu_time, source = incore.core_time / cores, f"{incore.source} block throughput"
    else:
        cpu_time, source, more = _cpu_roof(kernel, incore, machine, cores, flops_cl)
        notes += more
        if cpu_time is None:
            return RooflineResult(None, None, tuple(levels), None, None, None, cores, source,
                                  f"CPU roof unknown: no FLOPs per cycle and no T_OL ({unknown or 'T_OL unknown'})",
                                  tuple(notes))
    cpu_perf = work / cpu_time * clock if cpu_time > 0 else None
    best_time, bottleneck = cpu_time, "CPU"
    for lv in levels:
        if lv.time > best_time:
            best_time, bottleneck = lv.time, lv.level
    perf = work / best_time * clock if best_time > 0 else float("inf")
    return RooflineResult(cpu_perf, cpu_time, tuple(levels), bottleneck, perf, best_time, cores, source,
                          notes=tuple(notes))


def _cpu_roof(kernel, incore, machine, cores: int, flops_cl: float) -> tuple:
    """``(cy/CL or None, source, notes)`` of the CPU roof of ``cores`` cores: the applicable peak
    (:func:`applicable_peak_flops_per_cycle`, precision by :func:`flop_precision`), else the in-core
    T_OL (None when that is unknown too)."""
    ops = fused_operations(kernel, machine)
    prec, mixed = flop_precision(kernel)
    peak = applicable_peak_flops_per_cycle(kernel, machine, ops, prec)
    if peak:
        notes = []
        single = applicable_peak_flops_per_cycle(kernel, machine, ops, "SP") if mixed else None
        if single:
            notes.append(f"Roofline: the kernel mixes float and double operands; C evaluates an operation "
                         f"with a double operand in double, so the CPU roof takes the DP peak, "
                         f"{format_si(peak * machine.clock * cores, 'FLOP/s')} for its FLOP mix on {cores} "
                         f"core(s) (all FLOPs in single precision: "
                         f"{format_si(single * machine.clock * cores, 'FLOP/s')})")
        return flops_cl / (peak * cores), "peak FLOP/s", notes
    source = f"T_OL of the {incore.source} in-core model"
    return (None if incore.T_OL is None else incore.T_OL / cores), source, []


def bandwidth_notes(chosen: list, cores: int) -> list:
    """Notes on the bandwidths of ``cores`` cores (:class:`~loopmodel.machine.bandwidth.ChosenBandwidth`
    per roof): added over several ccNUMA domains, or measured with fewer cores than a domain has active."""
    notes = []
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
