"""Roofline model (kerncraft-tool-paper.txt §1.2.1, §2.3, Listing 4).

T_roof = max_k(T_core, T_k) with T_k = beta_k / B_k: per memory level, the data
volume beta_k of the link into that level divided by a measured streaming
bandwidth B_k (benchmark kernel chosen by read/write stream ratio, corrected for
write-allocate). The CPU roof is the applicable peak from the machine's FLOPs
per cycle, limited by the kernel's ADD/MUL/FMA mix. Performance per level is
arithmetic intensity (FLOP/B) times bandwidth.

Without FLOPs per cycle the CPU roof is the in-core T_OL; when that is unknown too
(the machine model lacks an operation's throughput), the CPU roof, the predicted
time, performance and bottleneck are None and ``unknown`` says why; the bandwidth
roofs are still given.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..machine.bandwidth import choose_bandwidth
from .incore import fused_operations


@dataclass(frozen=True)
class RooflineLevel:
    """One bandwidth roof.

    Attributes:
        level: ``L1`` (registers<->L1), ``L2`` (L1<->L2), ... ``MEM``.
        bytes: bytes per CL of work on that link.
        intensity: FLOP/B (None for kernels without FLOPs).
        bandwidth: B/s; kernel: benchmark kernel; cores: measurement's core count.
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


@dataclass(frozen=True)
class RooflineResult:
    """Roofline bottleneck analysis.

    Attributes:
        cpu_performance: applicable peak in FLOP/s (None without FLOPs per cycle).
        cpu_time: cy/CL of the CPU roof (None: unknown, see ``unknown``).
        levels: :class:`RooflineLevel` per level.
        bottleneck: ``CPU`` or a level name (None when the CPU roof is unknown).
        performance: predicted FLOP/s (min over roofs; None when the CPU roof is unknown).
        time: predicted cy/CL (max over roofs; None when the CPU roof is unknown).
        cores: core count of the prediction.
        cpu_source: where the CPU roof comes from (``"peak FLOP/s"`` or, for
            RooflineASM, the analyzer of the compiled block).
        unknown: why the CPU roof is unknown (None when known).
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

    def bandwidth_bound(self) -> RooflineLevel:
        """The slowest bandwidth roof (an upper bound of the performance when the CPU roof is unknown)."""
        return max(self.levels, key=lambda lv: lv.time)


def applicable_peak_flops_per_cycle(kernel, machine, ops) -> float | None:
    """Applicable peak FLOP/cy for the kernel's operation mix (paper §1.2.1).

    T = max over types (flops of type / peak of type, total flops / total peak);
    returns flops / T. None if the machine gives no FLOPs per cycle.
    """
    prec = "DP" if max((a.element_size for a in kernel.arrays.values()), default=8) >= 8 else "SP"
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
    clock = machine.clock
    wa = any(c.write_allocate for c in machine.caches)
    levels = []
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
        time = nbytes / ch.bandwidth * clock if ch.bandwidth > 0 else float("inf")
        work = flops_cl if flops_cl else it
        perf = work / time * clock if time > 0 else float("inf")
        ai = flops_cl / nbytes if (flops_cl and nbytes) else None
        levels.append(RooflineLevel(level, nbytes, ai, ch.bandwidth, ch.kernel, ch.cores, perf, time))
    source = "peak FLOP/s"
    if cpu_from_block:
        cpu_time = incore.core_time / cores
        work = flops_cl if flops_cl else it
        cpu_perf = work / cpu_time * clock if cpu_time > 0 else None
        source = f"{incore.source} block throughput"
    else:
        peak = applicable_peak_flops_per_cycle(kernel, machine, fused_operations(kernel, machine))
        cpu_perf = peak * clock * cores if peak else None
        if peak:
            cpu_time = flops_cl / (peak * cores)
        elif incore.T_OL is not None:
            cpu_time = incore.T_OL / cores
        else:
            return RooflineResult(None, None, tuple(levels), None, None, None, cores, source,
                                  f"CPU roof unknown: no FLOPs per cycle and no T_OL ({unknown or 'T_OL unknown'})")
    best_time, bottleneck = cpu_time, "CPU"
    for lv in levels:
        if lv.time > best_time:
            best_time, bottleneck = lv.time, lv.level
    work = flops_cl if flops_cl else it
    perf = work / best_time * clock if best_time > 0 else float("inf")
    return RooflineResult(cpu_perf, cpu_time, tuple(levels), bottleneck, perf, best_time, cores, source)
