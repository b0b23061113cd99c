"""Machine model: the validated, unit-explicit description of a CPU (pure data, no I/O).

Follows the split of cross-architecture-machine-models.txt §3.3: an in-core
part (operation throughputs and latencies, load/store and AGU limits, shared
ports, SIMD width) and a memory-hierarchy part (cache levels, the link between
each pair of adjacent levels with its bandwidth per direction and optional
latency penalty, which contributions overlap, victim / write-through caches),
plus measured streaming bandwidths for Roofline (kerncraft-tool-paper.txt §2.2).

Objects are frozen dataclasses holding floats in base units (Hz, bytes, B/cy,
B/s, cycles). They are built by :mod:`loopmodel.fileio.machine_schema`, which
validates a machine file; field names are the YAML keys.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from ..units import parse_quantity

OPS = ("ADD", "MUL", "FMA", "DIV", "SQRT", "EXP", "FABS", "FMIN", "FMAX")


@dataclass(frozen=True)
class LoadStore:
    """L1 load or store limit: instructions per cycle and bytes per cycle (B/cy)."""

    instructions_per_cycle: float
    bytes_per_cycle: float


@dataclass(frozen=True)
class FlopsPerCycle:
    """Peak FLOPs per cycle by operation type (kerncraft paper Listing 2 ``FLOPs per cycle``)."""

    total: float
    ADD: Optional[float] = None
    MUL: Optional[float] = None
    FMA: Optional[float] = None


@dataclass(frozen=True)
class InCore:
    """In-core execution model (cross-architecture paper §3.3, §3.4.1 eq. 1-2).

    ``simd_width`` in bytes. ``throughput``: instructions per cycle at full SIMD
    width per operation type (the per-element throughput is that times the SIMD
    lanes, paper eq. 6). ``latency`` in cycles. ``port_groups``: sets of
    operation types sharing execution ports (their times add up).
    ``load_store_per_cycle``: combined LD+ST (AGU) limit, instructions/cy.
    """

    simd_width: float
    throughput: dict
    load: LoadStore
    store: LoadStore
    latency: dict = field(default_factory=dict)
    port_groups: list = field(default_factory=list)
    load_store_per_cycle: Optional[float] = None
    instructions_per_cycle: Optional[float] = None
    flops_per_cycle: dict = field(default_factory=dict)  # {"DP": FlopsPerCycle, "SP": ...}
    analyzer_ports: dict = field(default_factory=dict)
    llvm_mca_cpu: Optional[str] = None


@dataclass(frozen=True)
class CacheLevel:
    """One level of the memory hierarchy (``MEM`` last, without size).

    ``size`` in bytes. ``type``: ``non-inclusive`` (default), ``inclusive``
    (evictions back-invalidate the levels above) or ``victim``
    (filled only by evictions of the level above, clean and dirty; misses of
    the level above are served from the next level directly,
    cross-architecture paper §3.3). ``write_back=False``: write-through, every
    store goes to the next level. ``cores_per_group``: cores sharing one instance.
    Victim levels: ``memory_bypass`` (memory delivers the misses of the level above
    directly to it; only evictions cross this level's upper link) and
    ``victim_clean`` (clean evictions from the level above are transfers into
    it; False: they are placed in it without a transfer, semantics in
    :mod:`loopmodel.cachesim`); ``victim_clean_note``: where ``victim_clean``
    came from when a converter chose it (a note for the report), else empty.
    """

    level: str
    size: Optional[float] = None
    sets: Optional[int] = None
    ways: Optional[int] = None
    replacement: str = "LRU"
    cores_per_group: int = 1
    groups: Optional[int] = None
    write_allocate: bool = True
    write_back: bool = True
    type: str = "non-inclusive"
    memory_bypass: bool = False
    victim_clean: bool = True
    victim_clean_note: str = ""


@dataclass(frozen=True)
class Link:
    """The data path between two adjacent levels (cross-architecture paper §3.4.2 eq. 3).

    ``bandwidth``: one value (a half-duplex link) or ``[toward core, away from
    core]`` (two uni-directional links, ``duplex='full'``), each a string with
    unit (B/cy or GB/s) or ``measured``. Penalties in cy per cache line.
    ``shared_by``: cores sharing the bandwidth (non-scalable shared cache).
    """

    between: tuple
    bandwidth: object
    duplex: str = "half"
    penalty_load: float = 0.0
    penalty_store: float = 0.0
    shared_by: int = 1

    def bandwidths(self) -> list:
        return list(self.bandwidth) if isinstance(self.bandwidth, (list, tuple)) else [self.bandwidth]


@dataclass(frozen=True)
class BenchmarkKernel:
    """A streaming benchmark kernel (kerncraft paper §2.2 ``benchmarks.kernels``); element size in bytes."""

    read_streams: int
    write_streams: int
    read_write_streams: int = 0
    flops_per_iteration: float = 0
    element_size: float = 8.0


@dataclass(frozen=True)
class Benchmarks:
    """Measured bandwidths (B/s), without write-allocate traffic, one thread per core.

    ``measurements[level]`` maps ``cores`` to a list of core counts and each
    kernel name to a list of bandwidths of the same length.
    """

    kernels: dict = field(default_factory=dict)
    measurements: dict = field(default_factory=dict)


@dataclass(frozen=True)
class MachineModel:
    """A whole machine model; see the module docstring. ``clock`` in Hz, ``cacheline_size`` in bytes."""

    name: str
    clock: float
    cores_per_socket: int
    in_core: InCore
    memory_hierarchy: list
    links: list
    description: str = ""
    model_name: str = ""
    micro_architecture: str = ""
    isa: str = "x86"
    sockets: int = 1
    threads_per_core: int = 1
    numa_domains_per_socket: int = 1
    cacheline_size: float = 64.0
    overlap: list = field(default_factory=lambda: ["T_OL"])
    overlap_unless_memory: list = field(default_factory=list)
    contention_p0: float = 0.5
    benchmarks: Benchmarks = field(default_factory=Benchmarks)
    compiler: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)

    @staticmethod
    def link_name(pair) -> str:
        """``('L3', 'MEM')`` -> ``'L3MEM'``: the ECM contribution name T_L3MEM."""
        return f"{pair[0]}{pair[1]}"

    @property
    def caches(self) -> list:
        return self.memory_hierarchy[:-1]

    @property
    def cores_per_numa_domain(self) -> int:
        return max(1, self.cores_per_socket // self.numa_domains_per_socket)

    def link(self, upper: str) -> Link:
        for lk in self.links:
            if lk.between[0] == upper:
                return lk
        raise KeyError(upper)

    def link_bandwidths_cy(self, lk: Link, measured_bps: Optional[float] = None) -> list:
        """Link bandwidths in B/cy, ``[toward core]`` or ``[toward core, away from core]``.

        GB/s values are converted with the clock: B/cy = (B/s) / Hz. ``measured``
        takes ``measured_bps`` (B/s).

        Raises:
            ValueError: ``measured`` without ``measured_bps``.
        """
        out = []
        for x in lk.bandwidths():
            if x == "measured":
                if measured_bps is None:
                    raise ValueError("no measured memory bandwidth available")
                out.append(measured_bps / self.clock)
            elif str(x).rstrip().endswith("/s"):
                out.append(parse_quantity(x, "bandwidth_s") / self.clock)
            else:
                out.append(parse_quantity(x, "bandwidth_cy"))
        return out
