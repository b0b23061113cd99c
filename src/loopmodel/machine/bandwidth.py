"""Choosing a measured streaming bandwidth for a kernel's traffic.

kerncraft-tool-paper.txt §2.2/§2.3: "Kerncraft tries to find the [benchmark]
matching the kernel under examination as closely as possible with regard to
the number of read and write streams"; measured bandwidths exclude
write-allocate traffic and are corrected for it. The tables are read with the machine
file (:class:`~loopmodel.machine.model.LevelMeasurements`: core counts and bandwidths in
B/s per kernel); nothing is parsed here.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import ModelError


@dataclass(frozen=True)
class ChosenBandwidth:
    """A measured bandwidth picked for a level.

    Attributes:
        level: memory level the benchmark ran in (``L1``, ``L2``, ..., ``MEM``).
        kernel: benchmark kernel name (``copy``, ``triad``, ...).
        bandwidth: B/s including write-allocate traffic.
        cores: core count of the measurement used.
    """

    level: str
    kernel: str
    bandwidth: float
    cores: int


def write_allocate_factor(kernel) -> float:
    """Bytes a streaming benchmark kernel moves per byte it counts: its measured bandwidth
    excludes write-allocate traffic (kerncraft-tool-paper.txt §2.2), and each array written
    but not read also loads its lines before the stores, so the factor is
    (read + 2 x write - read-write) / (read + write) streams: 3/2 for copy (``a = b``), 4/3 for
    a two-read triad (``a = b + s*c``), 5/4 for the three-read one (``a = b + c*d``), 1 for
    update (``a = s*a``) and daxpy (``y = y + s*x``), whose stores go to lines they read, and
    1 for a kernel without stores.

    Args:
        kernel: :class:`~loopmodel.machine.model.BenchmarkKernel` (or anything with
            ``read_streams``, ``write_streams`` and ``read_write_streams``).

    Returns:
        The factor (>= 1, dimensionless); 1 for a kernel without streams.
    """
    read, write, both = kernel.read_streams, kernel.write_streams, kernel.read_write_streams
    return (read + 2 * write - both) / (read + write) if read + write else 1.0


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


def _pick(machine, level: str, core_list: tuple, values: tuple, cores) -> tuple:
    """``(bandwidth B/s, cores)``: the measurement with ``cores`` cores (or the largest count
    below), or with ``cores=None`` the maximum over 1..min(cores sharing the level, cores per
    NUMA domain)."""
    if cores is not None:
        if cores in core_list:
            idx = core_list.index(cores)
        else:
            idx = max((i for i, c in enumerate(core_list) if c <= cores), default=0)
        return values[idx], core_list[idx]
    levels = {lv.level: lv for lv in machine.memory_hierarchy}
    limit = min(levels[level].cores_per_group, machine.cores_per_numa_domain)
    cand = [(v, c) for v, c in zip(values, core_list) if c <= limit] or [(values[0], core_list[0])]
    return max(cand)


def choose_bandwidth(machine, level: str, read_streams: float, write_streams: float,
                     cores: int | None = None, correct_write_allocate: bool = True) -> ChosenBandwidth:
    """Best-matching measured bandwidth for a level.

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        level: level whose measurement is used (the level data comes from).
        read_streams, write_streams: the kernel's traffic at that level (any
            unit; only their ratio matters).
        cores: use the measurement with this many cores (Roofline); None takes
            the maximum over 1..min(cores sharing the level, cores per NUMA
            domain) (ECM: saturated bandwidth).
        correct_write_allocate: scale by the benchmark's :func:`write_allocate_factor` to
            include the write-allocate traffic it caused.

    Returns:
        :class:`ChosenBandwidth` (B/s).

    Raises:
        ModelError: the machine has no measurements for ``level``.
    """
    table = machine.benchmarks.measurements.get(level)
    kernels = machine.benchmarks.kernels
    if table is None or not table.bandwidths:
        raise ModelError(f"machine model '{machine.name}' has no measured bandwidths for {level} "
                         "(benchmarks.measurements); give the link bandwidth explicitly")
    best = _closest_kernel(kernels, sorted(table.bandwidths), _ratio(read_streams, write_streams))
    bw, used = _pick(machine, level, table.cores, table.bandwidths[best], cores)
    if correct_write_allocate:
        bw *= write_allocate_factor(kernels[best])
    return ChosenBandwidth(level, best, bw, used)
