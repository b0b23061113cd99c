"""Measured Roofline points (roofline-measurement-thesis.txt §2, §4): for each kernel and size,
the arithmetic intensity from the model's traffic to the level the data come from, the
measured FLOP/s with the spread over the runs, and the model's predicted FLOP/s at the same
intensity; the roofs from the machine model (peak FLOP/s and each level's measured
single-core bandwidth, kerncraft-tool-paper.txt §1.2.1).
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RooflinePoint:
    """One kernel at one size.

    Attributes:
        kernel: file; defines: sizes; level: where the data come from (cold: memory, the
            caches having been flushed; warm: the level the layer conditions choose).
        intensity: FLOP per byte of traffic on the link into ``level`` (model; for L1 the
            bytes the core loads and stores).
        measured: FLOP/s (best, median, worst run); predicted: FLOP/s of T_ECM.
        cache: ``warm`` or ``cold``.
    """
    kernel: str
    defines: dict
    level: str
    intensity: float
    measured: tuple
    predicted: float
    cache: str = "warm"

    def to_dict(self) -> dict:
        """The point of the ``--json`` document: no traffic (an infinite intensity) is ``"inf"``,
        no ECM time (a NaN prediction) is null (:func:`loopmodel.report.schema.finite`)."""
        from ..report.schema import finite

        return {"kernel": self.kernel, "defines": dict(self.defines), "data_location": self.level,
                "arithmetic_intensity_flop_per_B": finite(self.intensity), "measured_max_flop_s": self.measured[0],
                "measured_median_flop_s": self.measured[1], "measured_min_flop_s": self.measured[2],
                "predicted_flop_s": finite(self.predicted), "cache": self.cache}


@dataclass(frozen=True)
class Roof:
    """A roof: ``kind`` ``"compute"`` (``value`` FLOP/s) or ``"bandwidth"`` (``value`` B/s)."""
    kind: str
    label: str
    value: float


def roofs(machine) -> list:
    """Peak DP FLOP/s (``flops_per_cycle.DP.total`` x clock) and, per level with measured
    bandwidths, the best single-core benchmark (B/s)."""
    out = []
    dp = machine.in_core.flops_per_cycle.get("DP")
    if dp is not None:
        out.append(Roof("compute", f"peak DP {dp.total * machine.clock / 1e9:.1f} GFLOP/s", dp.total * machine.clock))
    for level, table in machine.benchmarks.measurements.items():
        if 1 not in table.cores:
            continue
        i = table.cores.index(1)
        kernel, bw = max(((k, v[i]) for k, v in table.bandwidths.items()), key=lambda kv: kv[1])
        out.append(Roof("bandwidth", f"{level} {bw / 1e9:.1f} GB/s ({kernel}, 1 core)", bw))
    return out


def measure_points(path: str, machine, points, repeat: int = 10, cpu: int | None = 0, use_cache: bool = True,
                   machine_file: str | None = None, cold: bool = False) -> tuple:
    """``(RooflinePoint list, notes)`` for a kernel at each set of sizes.

    Raises:
        LoopmodelError: a kernel the model or the benchmark cannot take (one line).
    """
    from ..measure.bench import run_bench
    from .validation import data_level, kernel_analyzer

    # cold: one sweep from memory (the caches flushed), so the single-sweep traffic
    kernel, analyzer = kernel_analyzer(path, machine, machine_file, use_cache, "single" if cold else "repeated")
    if not kernel.flops_per_iteration:
        return [], (f"{path}: no floating-point operations, so no arithmetic intensity: left out",)
    names = [lv.level for lv in machine.memory_hierarchy]
    out = []
    for pt in points:
        res = analyzer.run(pt)
        level = names[-1] if cold else data_level(res)  # cold: every line comes from memory
        d = names.index(level)
        if d == 0:  # data in L1: the bytes loaded and stored by the core
            per_it = kernel.bytes_loaded_per_iteration() + kernel.bytes_stored_per_iteration()
        else:
            per_it = res.traffic.levels[d - 1].bytes / res.traffic.iterations_per_unit
        flops = kernel.flops_per_iteration
        b = run_bench(path, pt, machine, repeat, 0.01, cpu, use_cache, machine_file=machine_file, cold=cold)
        t_ecm = res.ecm.T_ECM.get(level)
        predicted = flops * res.traffic.iterations_per_unit * machine.clock / t_ecm if t_ecm else float("nan")
        ai = flops / per_it if per_it > 0 else float("inf")
        out.append(RooflinePoint(path, dict(pt), level, ai, b.figures()["FLOP_per_s"], predicted, b.cache))
    return out, ()
