"""Execution-Cache-Memory model (cross-architecture-machine-models.txt §3.4.2-3.4.4).

Per link (eq. 3): busy time = (loads + stores)·CL / b for one half-duplex link,
max(loads·CL / b_in, stores·CL / b_out) for two uni-directional links, plus the
latency penalty per CL. Single-core time for data in level k (eq. 4): the sum
of the non-overlapping contributions up to k, then the maximum with the
overlapping ones (on Intel: only T_OL overlaps):

    T_ECM^L1 = max(T_OL, T_nOL),  T_ECM^L2 = max(T_OL, T_nOL + T_L1L2), ...

Notation ``{ T_OL || T_nOL | T_L1L2 | T_L2L3 | T_L3Mem } cy/CL`` and
``{ T_ECM^L1 \\ T_ECM^L2 \\ ... } cy/CL`` (ecm-model-slides.txt "ECM model –
composition/prediction"). Saturation (kerncraft-tool-paper.txt §3.2,
ecm-model-slides.txt "ECM model – saturation"): n_s = ceil(T_ECM^Mem / T_L3Mem),
P(n) = min(n·P(1), P_sat).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..machine.bandwidth import choose_bandwidth


@dataclass(frozen=True)
class Contribution:
    """One data-transfer contribution (link between two levels).

    Attributes:
        name: ``L1L2``, ``L2L3``, ``L3MEM``...
        cycles: busy time + penalty in cy/CL.
        busy: link busy time in cy/CL; penalty: latency penalty in cy/CL.
        bytes_in / bytes_out: bytes per CL of work toward / away from the core.
        bandwidth: B/cy per direction used.
        source: where the bandwidth came from (machine file or benchmark kernel).
    """

    name: str
    cycles: float
    busy: float
    penalty: float
    bytes_in: float
    bytes_out: float
    bandwidth: tuple
    source: str


@dataclass(frozen=True)
class ECMResult:
    """ECM prediction in cy/CL.

    Attributes:
        T_OL, T_nOL: in-core contributions.
        contributions: data-transfer contributions, core side first.
        T_ECM: level -> cy/CL for data in that level (``L1`` ... ``MEM``).
        overlapping: contributions that overlap (machine model).
        saturation_cores: n_s (cores to saturate the memory link).
        memory_contribution: T of the memory link (the saturation bottleneck).
    """

    T_OL: float
    T_nOL: float
    contributions: tuple
    T_ECM: dict
    overlapping: tuple
    saturation_cores: int
    memory_contribution: float
    levels: tuple = field(default=())

    def notation(self) -> str:
        parts = " | ".join(f"{c.cycles:.1f}" for c in self.contributions)
        return f"{{ {self.T_OL:.1f} || {self.T_nOL:.1f} | {parts} }} cy/CL"

    def prediction_notation(self) -> str:
        return "{ " + " \\ ".join(f"{v:.1f}" for v in self.T_ECM.values()) + " } cy/CL"

    def multicore(self, cores: int) -> float:
        """cy/CL per core-group for ``cores`` cores: max(T_ECM^Mem / n, T_mem)."""
        return max(self.T_ECM["MEM"] / max(cores, 1), self.memory_contribution)


def ecm_model(traffic, incore, machine, memory_bandwidth: float | None = None) -> ECMResult:
    """Combine in-core and data-transfer contributions into the ECM prediction.

    Args:
        traffic: :class:`~loopmodel.predictors.traffic.TrafficPrediction`.
        incore: :class:`~loopmodel.models.incore.InCoreResult`.
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        memory_bandwidth: B/s overriding the measured saturated bandwidth.

    Returns:
        :class:`ECMResult`.

    Raises:
        ModelError: no memory bandwidth can be determined.
    """
    cl = machine.cacheline_size
    contribs = []
    for lt in traffic.levels:
        link = machine.link(lt.level)
        measured = None
        source = "machine model"
        if "measured" in link.bandwidths():
            if memory_bandwidth is not None:
                measured, source = memory_bandwidth, "override"
            else:
                ch = choose_bandwidth(machine, link.between[1], lt.loads_cl, lt.stores_cl)
                measured = ch.bandwidth
                source = f"{ch.kernel} benchmark, {ch.cores} cores"
        bws = machine.link_bandwidths_cy(link, measured)
        b_in, b_out = lt.loads_cl * cl, lt.stores_cl * cl
        if link.duplex == "full":
            busy = max(b_in / bws[0], b_out / bws[1])
        else:
            busy = (b_in + b_out) / bws[0]
        penalty = lt.loads_cl * link.penalty_load + lt.stores_cl * link.penalty_store
        contribs.append(Contribution(machine.link_name(link.between), busy + penalty, busy, penalty,
                                     b_in, b_out, tuple(bws), source))
    overlap = set(machine.overlap)
    t_ecm = {}
    names = [machine.caches[0].level] + [c.name for c in contribs]
    levels = [lv.level for lv in machine.memory_hierarchy]
    parts = [("T_nOL", incore.T_nOL)] + [(c.name, c.cycles) for c in contribs]
    for k, level in enumerate(levels):
        upto = parts[: k + 1]
        non = sum(v for n, v in upto if n not in overlap)
        ovl = [v for n, v in upto if n in overlap]
        t_ecm[level] = max([incore.T_OL, non] + ovl)
    mem = contribs[-1].cycles if contribs else 0.0
    ns = math.ceil(t_ecm[levels[-1]] / mem - 1e-9) if mem > 0 else 1
    return ECMResult(incore.T_OL, incore.T_nOL, tuple(contribs), t_ecm, tuple(sorted(overlap)),
                     max(ns, 1), mem, tuple(names))
