"""Machine model: the validated, unit-explicit description of a CPU (no I/O).

Follows the split of cross-architecture-machine-models.txt §3.3: an in-core
part (operation throughputs and latencies, load/store and AGU limits, shared
ports, SIMD width) and a memory-hierarchy part (cache levels, the link between
each pair of adjacent levels with its bandwidth per direction and optional
latency penalty, which contributions overlap, victim / write-through caches),
plus measured streaming bandwidths for Roofline (kerncraft-tool-paper.txt §2.2).

Every quantity in a file carries its unit ("3.0 GHz", "32 KiB", "32 B/cy",
"47.2 GB/s"); validated values are stored as floats in Hz, bytes, B/cy, B/s
and cycles. Field names below are the YAML keys.
"""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..units import UnitError, parse_quantity

OPS = ("ADD", "MUL", "FMA", "DIV", "SQRT", "EXP", "FABS", "FMIN", "FMAX")


def _q(kind, binary=False):
    def conv(v):
        try:
            return parse_quantity(v, kind, binary)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    return conv


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class LoadStore(_Strict):
    """L1 load or store limit: instructions per cycle and bytes per cycle."""

    instructions_per_cycle: float = Field(gt=0)
    bytes_per_cycle: float  # B/cy

    _bpc = field_validator("bytes_per_cycle", mode="before")(_q("bandwidth_cy"))


class FlopsPerCycle(_Strict):
    """Peak FLOPs per cycle by operation type (paper Listing 2 ``FLOPs per cycle``)."""

    total: float = Field(gt=0)
    ADD: Optional[float] = None
    MUL: Optional[float] = None
    FMA: Optional[float] = None


class InCore(_Strict):
    """In-core execution model (cross-architecture paper §3.3, §3.4.1 eq. 1-2).

    ``throughput`` is in instructions per cycle at full SIMD width for each
    operation type; the operation throughput per element is that times the
    SIMD lanes (paper eq. 6). ``latency`` in cycles. ``port_groups`` lists sets
    of operation types that share execution ports: their times add up.
    """

    simd_width: float  # bytes
    throughput: dict
    latency: dict = Field(default_factory=dict)
    port_groups: list = Field(default_factory=list)
    load: LoadStore
    store: LoadStore
    load_store_per_cycle: Optional[float] = Field(default=None, gt=0)
    instructions_per_cycle: Optional[float] = Field(default=None, gt=0)
    flops_per_cycle: dict[str, FlopsPerCycle] = Field(default_factory=dict)  # {"DP": ..., "SP": ...}
    analyzer_ports: dict = Field(default_factory=dict)  # per analyzer: {overlapping: [...], non_overlapping: [...]}
    llvm_mca_cpu: Optional[str] = None

    _simd = field_validator("simd_width", mode="before")(_q("size"))

    @field_validator("throughput")
    @classmethod
    def _tp(cls, v):
        out = {}
        for op, val in v.items():
            if op not in OPS:
                raise ValueError(f"unknown operation type '{op}' (known: {', '.join(OPS)})")
            if isinstance(val, bool) or not isinstance(val, (int, float)) or val < 0:
                raise ValueError(f"throughput of {op} must be a number >= 0 (instructions per cycle)")
            out[op] = float(val)
        return out

    @field_validator("latency")
    @classmethod
    def _lat(cls, v):
        out = {}
        for op, val in v.items():
            if op not in OPS:
                raise ValueError(f"unknown operation type '{op}' (known: {', '.join(OPS)})")
            out[op] = parse_quantity(val, "cycles") if not isinstance(val, (int, float)) else float(val)
        return out

    @field_validator("port_groups")
    @classmethod
    def _groups(cls, v):
        for g in v:
            if not isinstance(g, list) or any(op not in OPS for op in g):
                raise ValueError(f"port group {g!r} must be a list of operation types ({', '.join(OPS)})")
        return v


class CacheLevel(_Strict):
    """One level of the memory hierarchy (``MEM`` last, without size).

    ``type``: ``inclusive`` (default), ``non-inclusive`` or ``victim`` (filled
    only by evictions of the level above, clean and dirty; misses of the level
    above are served from the next level directly, cross-architecture paper
    §3.3). ``write_back: false`` makes a write-through cache: every store goes
    to the next level. ``cores_per_group``: cores sharing one instance.
    """

    level: str
    size: Optional[float] = None  # bytes
    sets: Optional[int] = Field(default=None, gt=0)
    ways: Optional[int] = Field(default=None, gt=0)
    replacement: Literal["LRU", "FIFO", "RANDOM", "PLRU"] = "LRU"
    cores_per_group: int = Field(default=1, gt=0)
    groups: Optional[int] = Field(default=None, gt=0)
    write_allocate: bool = True
    write_back: bool = True
    type: Literal["inclusive", "non-inclusive", "victim"] = "inclusive"

    _size = field_validator("size", mode="before")(lambda v: None if v is None else _q("size")(v))


class Link(_Strict):
    """The data path between two adjacent levels (cross-architecture paper §3.4.2 eq. 3).

    ``bandwidth``: one value for a single half-duplex (bi-directional) link,
    or two values ``[toward core, away from core]`` for two uni-directional
    links (``duplex: full``); B/cy, or GB/s (converted with the clock), or
    ``measured`` for the memory link (saturated bandwidth from ``benchmarks``).
    ``penalty_load``/``penalty_store``: latency penalty in cy per cache line.
    """

    between: tuple
    bandwidth: Union[str, list]
    duplex: Literal["half", "full"] = "half"
    penalty_load: float = 0.0
    penalty_store: float = 0.0

    _pl = field_validator("penalty_load", "penalty_store", mode="before")(
        lambda v: float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) and v == 0 else _q("cycles")(v))

    @field_validator("between", mode="before")
    @classmethod
    def _between(cls, v):
        if not isinstance(v, (list, tuple)) or len(v) != 2 or not all(isinstance(x, str) for x in v):
            raise ValueError("must name two levels, e.g. [L1, L2]")
        return tuple(v)

    @field_validator("bandwidth", mode="before")
    @classmethod
    def _bw(cls, v):
        vals = v if isinstance(v, list) else [v]
        if not 1 <= len(vals) <= 2:
            raise ValueError("give one bandwidth (half-duplex) or two [toward core, away from core]")
        for x in vals:
            if x == "measured":
                continue
            s = str(x)
            kind = "bandwidth_s" if s.rstrip().endswith("/s") else "bandwidth_cy"
            try:
                parse_quantity(x, kind)
            except UnitError as exc:
                raise ValueError(str(exc)) from None
        return v

    def bandwidths(self) -> list:
        return self.bandwidth if isinstance(self.bandwidth, list) else [self.bandwidth]


class BenchmarkKernel(_Strict):
    """A streaming benchmark kernel (paper §2.2 ``benchmarks.kernels``)."""

    read_streams: int = Field(ge=0)
    write_streams: int = Field(ge=0)
    read_write_streams: int = Field(default=0, ge=0)
    flops_per_iteration: float = 0
    element_size: float = 8.0

    _es = field_validator("element_size", mode="before")(_q("size"))


class Benchmarks(_Strict):
    """Measured bandwidths (B/s), without write-allocate traffic, one thread per core.

    ``measurements[level]`` maps ``cores`` to a list of core counts and each
    kernel name to a list of bandwidths of the same length.
    """

    kernels: dict[str, BenchmarkKernel] = Field(default_factory=dict)
    measurements: dict = Field(default_factory=dict)

    @model_validator(mode="after")
    def _meas(self):
        clean = {}
        for level, block in self.measurements.items():
            if not isinstance(block, dict) or "cores" not in block:
                raise ValueError(f"measurements.{level} needs a 'cores' list")
            cores = block["cores"]
            if not isinstance(cores, list) or not all(isinstance(c, int) and c > 0 for c in cores):
                raise ValueError(f"measurements.{level}.cores must be a list of positive integers")
            out = {"cores": cores}
            for name, vals in block.items():
                if name == "cores":
                    continue
                if name not in self.kernels:
                    raise ValueError(f"measurements.{level}.{name}: kernel '{name}' is not defined in benchmarks.kernels")
                if not isinstance(vals, list) or len(vals) != len(cores):
                    raise ValueError(f"measurements.{level}.{name} must list one bandwidth per core count ({len(cores)})")
                try:
                    out[name] = [parse_quantity(x, "bandwidth_s") for x in vals]
                except UnitError as exc:
                    raise ValueError(f"measurements.{level}.{name}: {exc}") from None
            clean[level] = out
        object.__setattr__(self, "measurements", clean)
        return self


class MachineModel(_Strict):
    """A whole machine model; see module docstring. Top-level YAML keys."""

    name: str
    description: str = ""
    model_name: str = ""
    micro_architecture: str = ""
    isa: str = "x86"
    clock: float  # Hz
    sockets: int = Field(default=1, gt=0)
    cores_per_socket: int = Field(gt=0)
    threads_per_core: int = Field(default=1, gt=0)
    numa_domains_per_socket: int = Field(default=1, gt=0)
    cacheline_size: float = 64.0  # bytes
    in_core: InCore
    memory_hierarchy: list[CacheLevel]
    links: list[Link]
    overlap: list = Field(default_factory=lambda: ["T_OL"])
    benchmarks: Benchmarks = Field(default_factory=Benchmarks)
    compiler: dict = Field(default_factory=dict)
    sources: list = Field(default_factory=list)

    _clock = field_validator("clock", mode="before")(_q("frequency"))
    _cl = field_validator("cacheline_size", mode="before")(_q("size"))

    @field_validator("memory_hierarchy", mode="before")
    @classmethod
    def _levels(cls, v):
        if not isinstance(v, list) or len(v) < 2:
            raise ValueError("must list the cache levels and MEM, closest to the core first")
        return v

    @model_validator(mode="after")
    def _consistent(self):
        levels = self.memory_hierarchy
        names = [lv.level for lv in levels]
        if names[-1] != "MEM":
            raise ValueError("memory_hierarchy: the last level must be MEM")
        if len(set(names)) != len(names):
            raise ValueError("memory_hierarchy: level names must be unique")
        for i, lv in enumerate(levels[:-1]):
            if lv.size is None:
                raise ValueError(f"memory_hierarchy[{i}] ({lv.level}): size is required")
            if lv.sets and lv.ways and abs(lv.sets * lv.ways * self.cacheline_size - lv.size) > 0.5:
                raise ValueError(f"memory_hierarchy[{i}] ({lv.level}): sets*ways*cacheline_size = "
                                 f"{lv.sets * lv.ways * self.cacheline_size:.0f} B differs from size {lv.size:.0f} B")
        if levels[0].type == "victim":
            raise ValueError("memory_hierarchy[0]: the first level cannot be a victim cache")
        pairs = [(names[i], names[i + 1]) for i in range(len(names) - 1)]
        got = [tuple(lk.between) for lk in self.links]
        for i, p in enumerate(got):
            if p not in pairs:
                raise ValueError(f"links[{i}]: {list(p)} are not adjacent levels of memory_hierarchy ({', '.join(names)})")
        for p in pairs:
            if p not in got:
                raise ValueError(f"links: no link between {p[0]} and {p[1]}")
        for i, lk in enumerate(self.links):
            n = len(lk.bandwidths())
            if (lk.duplex == "full") != (n == 2):
                raise ValueError(f"links[{i}]: duplex '{lk.duplex}' needs {'two bandwidths' if lk.duplex == 'full' else 'one bandwidth'}")
            if "measured" in lk.bandwidths() and lk.between[1] != "MEM":
                raise ValueError(f"links[{i}]: only the memory link can use 'measured'")
        valid = {"T_OL", "T_nOL"} | {self.link_name(p) for p in pairs}
        for item in self.overlap:
            if item not in valid:
                raise ValueError(f"overlap: unknown contribution '{item}' (valid: {', '.join(sorted(valid))})")
        for lvl in self.benchmarks.measurements:
            if lvl not in names:
                raise ValueError(f"benchmarks.measurements: unknown level '{lvl}'")
        return self

    # derived ---------------------------------------------------------------
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
