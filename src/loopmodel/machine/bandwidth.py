"""Choosing a measured streaming bandwidth for a kernel's traffic.

kerncraft-tool-paper.txt §2.2/§2.3: "Kerncraft tries to find the [benchmark]
matching the kernel under examination as closely as possible with regard to
the number of read and write streams"; measured bandwidths exclude
write-allocate traffic and are corrected for it. The tables are read with the machine
file (:class:`~loopmodel.machine.model.LevelMeasurements`: core counts and bandwidths in
B/s per kernel); nothing is parsed here.

A table holds the measurements in one ccNUMA domain, cores filled one after the other. For
``cores`` active cores (the Roofline), cores fill the domains one after the other, as in the
ECM multicore model (cross-architecture-machine-models.txt §3.4.4: every domain has its own
memory interface and caches), and the bandwidths of the domains in use add up; within a domain
of ``m`` active cores the figure is the best measured with at most ``m`` cores (more cores can
always leave some idle, so a bandwidth never falls when a core is added).
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..errors import ModelError


@dataclass(frozen=True)
class ChosenBandwidth:
    """A measured bandwidth picked for a level.

    Attributes:
        level: memory level the benchmark ran in (``L1``, ``L2``, ..., ``MEM``).
        kernel: benchmark kernel name (``copy``, ``triad``, ...).
        bandwidth: B/s including write-allocate traffic.
        cores: core count of the measurement used (summed over the ccNUMA domains in use).
        domains: ccNUMA domains whose bandwidths are added (1 for ``cores=None``).
        reported: the figure as the benchmark reports it (B/s without write-allocate traffic,
            the machine file's value); ``bandwidth`` / ``reported`` is the write-allocate factor.
        most_measured: with ``cores`` given, the largest core count measured, where a domain has
            more active cores than that (its figure is then a lower bound); else None.
        derived: empty for a measured figure; for one derived from the ECM transfer rates where the
            level has no measurement (:func:`loopmodel.machine.derived_bandwidth.derived_bandwidth`),
            how (rate in B/cy, clock, link instances in use).
    """

    level: str
    kernel: str
    bandwidth: float
    cores: int
    domains: int = 1
    most_measured: int | None = None
    reported: float | None = None
    derived: str = ""


def has_measurements(machine, level: str) -> bool:
    """Whether the machine model holds measured bandwidths for ``level`` (``benchmarks.measurements``)."""
    table = machine.benchmarks.measurements.get(level)
    return table is not None and bool(table.bandwidths)


def _ratio(read: float, write: float) -> float:
    return read / write if write else math.inf


def _closest_kernel(kernels: dict, names: list, target: float) -> str:
    """The benchmark kernel whose read/write stream ratio is closest to ``target`` (first on ties)."""
    best, best_ratio = None, None
    for name in names:
        k = kernels[name]
        r = _ratio(k.read_streams + k.write_streams - k.read_write_streams, k.write_streams)
        if best is None or abs(r - target) < abs(best_ratio - target) or (
                math.isinf(r) and math.isinf(target) and not math.isinf(best_ratio)):
            best, best_ratio = name, r
    return best


def _best_up_to(core_list: tuple, values: tuple, cores: int) -> tuple:
    """``(bandwidth B/s, cores)``: the best measurement with at most ``cores`` cores (the one with
    the fewest cores if none has so few)."""
    cand = [(v, c) for v, c in zip(values, core_list) if c <= cores] or [(values[0], core_list[0])]
    return max(cand)


def _pick(machine, level: str, core_list: tuple, values: tuple, cores) -> tuple:
    """``(bandwidth B/s, cores, domains, most_measured)``: with ``cores`` given, the sum over
    the ccNUMA domains in use of :func:`_best_up_to` their active cores (module docstring); with
    ``cores=None`` the maximum over 1..min(cores sharing the level, cores per NUMA domain)."""
    if cores is not None:
        per = machine.cores_per_numa_domain
        full, rest = divmod(cores, per)
        counts = [per] * full + ([rest] if rest else [])
        picks = [_best_up_to(core_list, values, m) for m in counts]
        short = max(core_list) if max(counts) > max(core_list) else None
        return sum(v for v, _ in picks), sum(c for _, c in picks), len(counts), short
    levels = {lv.level: lv for lv in machine.memory_hierarchy}
    limit = min(levels[level].cores_per_group, machine.cores_per_numa_domain)
    bw, used = _best_up_to(core_list, values, limit)
    return bw, used, 1, None


def choose_bandwidth(machine, level: str, read_streams: float, write_streams: float,
                     cores: int | None = None, correct_write_allocate: bool = True) -> ChosenBandwidth:
    """Best-matching measured bandwidth for a level.

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        level: level whose measurement is used (the level data comes from).
        read_streams, write_streams: the kernel's traffic at that level (any
            unit; only their ratio matters).
        cores: the bandwidth of this many active cores (Roofline): the measurements of the
            ccNUMA domains in use added (module docstring); None takes the maximum over
            1..min(cores sharing the level, cores per NUMA domain) (ECM: saturated bandwidth).
        correct_write_allocate: scale by (read + 2 write - rw)/(read + write)
            bytes to include the write-allocate traffic the benchmark caused.

    Returns:
        :class:`ChosenBandwidth` (B/s).

    Raises:
        ModelError: the machine has no measurements for ``level``.
    """
    table = machine.benchmarks.measurements.get(level)
    kernels = machine.benchmarks.kernels
    if not has_measurements(machine, level):
        raise ModelError(f"machine model '{machine.name}' has no measured bandwidths for {level} "
                         "(benchmarks.measurements); give the link bandwidth explicitly")
    best = _closest_kernel(kernels, sorted(table.bandwidths), _ratio(read_streams, write_streams))
    reported, used, domains, short = _pick(machine, level, table.cores, table.bandwidths[best], cores)
    factor = write_allocate_factor(kernels[best]) if correct_write_allocate else 1.0
    return ChosenBandwidth(level, best, reported * factor, used, domains, short, reported)


def write_allocate_factor(kernel) -> float:
    """Bytes a benchmark kernel moves over the bus per byte it reports: (read + 2 write - read-write) /
    (read + write) stream bytes (each written line not also read is first loaded: write-allocate;
    kerncraft-tool-paper.txt §2.2). copy: 1.5, triad (3 read, 1 write): 1.25, load and update: 1."""
    rb = kernel.read_streams * kernel.element_size
    wb = kernel.write_streams * kernel.element_size
    rwb = kernel.read_write_streams * kernel.element_size
    return (rb + 2 * wb - rwb) / (rb + wb) if rb + wb > 0 else 1.0
