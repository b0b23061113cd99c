"""Measured Roofline points and the roofs they are drawn under (roofline-measurement-thesis.txt
§2, §4): for each kernel and size, the arithmetic intensity from the model's traffic to the
level the data come from, the measured FLOP/s with the spread over the runs, and the model's
predicted FLOP/s; the roofs from the machine model (peak FLOP/s and each level's measured
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
