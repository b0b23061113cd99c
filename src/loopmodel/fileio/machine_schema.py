"""Machine-file schema: pydantic validation of the YAML mapping (I/O edge).

Validation runs when a file is read; the result is converted to the pure data
model :class:`loopmodel.machine.model.MachineModelSchema` (frozen dataclasses), which
is what the models use and what :mod:`loopmodel.fileio.machine_files` caches,
so an analysis of an unchanged machine file does not import pydantic.

Sections follow cross-architecture-machine-models.txt §3.3 (in-core part,
memory hierarchy, links with bandwidth per direction and latency penalty,
overlap) and kerncraft-tool-paper.txt §2.2 (measured streaming bandwidths).
Every quantity in a file carries its unit ("3.0 GHz", "32 KiB", "32 B/cy",
"47.2 GB/s"); validated values are floats in Hz, bytes, B/cy, B/s and cycles.
"""
from __future__ import annotations

from typing import Literal, Optional, Union

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ..machine import model as dm
from ..machine.model import OPS
from ..models.scaling import P0_MAX
from ..units import UnitError, parse_quantity



def _q(kind, binary=False):
    def conv(v):
        try:
            return parse_quantity(v, kind, binary)
        except UnitError as exc:
            raise ValueError(str(exc)) from None
    return conv


def _known_op(op) -> None:
    if op not in OPS:
        raise ValueError(f"unknown operation type '{op}' (known: {', '.join(OPS)})")


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True)


class LoadStoreSchema(_Strict):
    """L1 load or store limit: instructions per cycle and bytes per cycle."""

    instructions_per_cycle: float = Field(gt=0)
    bytes_per_cycle: float  # B/cy

    _bpc = field_validator("bytes_per_cycle", mode="before")(_q("bandwidth_cy"))


class FlopsPerCycleSchema(_Strict):
    """Peak FLOPs per cycle by operation type (paper Listing 2 ``FLOPs per cycle``)."""

    total: float = Field(gt=0)
    ADD: Optional[float] = None
    MUL: Optional[float] = None
    FMA: Optional[float] = None


class InCoreSchema(_Strict):
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
    load: LoadStoreSchema
    store: LoadStoreSchema
    load_store_per_cycle: Optional[float] = Field(default=None, gt=0)
    instructions_per_cycle: Optional[float] = Field(default=None, gt=0)
    flops_per_cycle: dict[str, FlopsPerCycleSchema] = Field(default_factory=dict)  # {"DP": ..., "SP": ...}
    analyzer_ports: dict = Field(default_factory=dict)  # per analyzer: {overlapping: [...], non_overlapping: [...]}
    llvm_mca_cpu: Optional[str] = None

    _simd = field_validator("simd_width", mode="before")(_q("size"))

    @field_validator("throughput")
    @classmethod
    def _tp(cls, v):
        out = {}
        for op, val in v.items():
            _known_op(op)
            if isinstance(val, bool) or not isinstance(val, (int, float)) or val < 0:
                raise ValueError(f"throughput of {op} must be a number >= 0 (instructions per cycle)")
            out[op] = float(val)
        return out

    @field_validator("latency")
    @classmethod
    def _lat(cls, v):
        out = {}
        for op, val in v.items():
            _known_op(op)
            out[op] = parse_quantity(val, "cycles") if not isinstance(val, (int, float)) else float(val)
        return out

    @field_validator("port_groups")
    @classmethod
    def _groups(cls, v):
        for g in v:
            if not isinstance(g, list) or any(op not in OPS for op in g):
                raise ValueError(f"port group {g!r} must be a list of operation types ({', '.join(OPS)})")
        return v


class CacheLevelSchema(_Strict):
    """One level of the memory hierarchy (``MEM`` last, without size).

    ``type``: ``non-inclusive`` (default), ``inclusive`` (an eviction here removes
    the line from the levels above: back-invalidation) or ``victim`` (filled
    only by evictions of the level above, clean and dirty; misses of the level
    above are served from the next level directly, cross-architecture paper
    §3.3). ``write_back: false`` makes a write-through cache: every store goes
    to the next level. ``cores_per_group``: cores sharing one instance.
    For a victim level: ``memory_bypass: true`` when memory delivers the misses of
    the level above directly to it (only evictions cross this level's upper link,
    cross-architecture paper §5.2.1 for EPYC, TX2, PWR9); ``victim_clean: false``
    when clean evictions are placed in it without a transfer on the link, only
    dirty ones count (EPYC, derived from Table 3; semantics in
    :mod:`loopmodel.cachesim`). ``victim_clean_note``: where ``victim_clean``
    came from when it is a default (set by the Kerncraft converter; shown in
    the report).
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
    type: Literal["inclusive", "non-inclusive", "victim"] = "non-inclusive"
    memory_bypass: bool = False
    victim_clean: bool = True
    victim_clean_note: str = ""

    _size = field_validator("size", mode="before")(lambda v: None if v is None else _q("size")(v))


class LinkSchema(_Strict):
    """The data path between two adjacent levels (cross-architecture paper §3.4.2 eq. 3).

    ``bandwidth``: one value for a single half-duplex (bi-directional) link,
    or two values ``[toward core, away from core]`` for two uni-directional
    links (``duplex: full``); B/cy, or GB/s (converted with the clock), or
    ``measured`` for the memory link (saturated bandwidth from ``benchmarks``).
    ``penalty_load``/``penalty_store``: latency penalty in cy per cache line.
    ``shared_by``: cores whose traffic shares this link's bandwidth (a non-scalable
    shared cache: EPYC's CCX L3, Power9's core-pair L2/L3; paper §5.2.2); 1 = per core.
    """

    between: tuple
    bandwidth: Union[str, list]
    duplex: Literal["half", "full"] = "half"
    penalty_load: float = 0.0
    penalty_store: float = 0.0
    shared_by: int = Field(default=1, gt=0)

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


class BenchmarkKernelSchema(_Strict):
    """A streaming benchmark kernel (paper §2.2 ``benchmarks.kernels``)."""

    read_streams: int = Field(ge=0)
    write_streams: int = Field(ge=0)
    read_write_streams: int = Field(default=0, ge=0)
    flops_per_iteration: float = 0
    element_size: float = 8.0

    _es = field_validator("element_size", mode="before")(_q("size"))


class BenchmarksSchema(_Strict):
    """Measured bandwidths (B/s), without write-allocate traffic, one thread per core.

    ``measurements[level]`` maps ``cores`` to a list of core counts and each
    kernel name to a list of bandwidths of the same length.
    """

    kernels: dict[str, BenchmarkKernelSchema] = Field(default_factory=dict)
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


class MachineModelSchema(_Strict):
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
    in_core: InCoreSchema
    memory_hierarchy: list[CacheLevelSchema]
    links: list[LinkSchema]
    overlap: list = Field(default_factory=lambda: ["T_OL"])
    overlap_unless_memory: list = Field(default_factory=list)
    contention_p0: float = Field(default=0.5, gt=0, le=P0_MAX)
    benchmarks: BenchmarksSchema = Field(default_factory=BenchmarksSchema)
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
            if "measured" in lk.bandwidths():
                if lk.between[1] != "MEM":
                    raise ValueError(f"links[{i}]: only the memory link can use 'measured'")
                if not any(k != "cores" for k in self.benchmarks.measurements.get("MEM", {})):
                    raise ValueError(f"links[{i}].bandwidth: 'measured' needs measured bandwidths in "
                                     "benchmarks.measurements.MEM (or give the bandwidth, e.g. '40 GB/s')")
        valid = {"T_OL", "T_nOL"} | {f"{a}{b}" for a, b in pairs}
        valid |= {f"{a}MEM" for a in names[:-1]}  # memory bypass: L2MEM next to L3MEM
        for key in ("overlap", "overlap_unless_memory"):
            for item in getattr(self, key):
                if item not in valid:
                    raise ValueError(f"{key}: unknown contribution '{item}' (valid: {', '.join(sorted(valid))})")
        for i, lv in enumerate(levels[:-1]):
            if (lv.memory_bypass or not lv.victim_clean) and lv.type != "victim":
                raise ValueError(f"memory_hierarchy[{i}] ({lv.level}): memory_bypass and victim_clean apply to "
                                 "victim caches only")
        for lvl in self.benchmarks.measurements:
            if lvl not in names:
                raise ValueError(f"benchmarks.measurements: unknown level '{lvl}'")
        return self


def to_model(spec: MachineModelSchema) -> dm.MachineModel:
    """The validated schema object as the pure data model (frozen dataclasses, same field names)."""
    d = {k: getattr(spec, k) for k in MachineModelSchema.model_fields}
    ic = spec.in_core
    d["in_core"] = dm.InCore(**{
        **{k: getattr(ic, k) for k in InCoreSchema.model_fields},
        "load": dm.LoadStore(**ic.load.model_dump()),
        "store": dm.LoadStore(**ic.store.model_dump()),
        "flops_per_cycle": {k: dm.FlopsPerCycle(**v.model_dump()) for k, v in ic.flops_per_cycle.items()},
    })
    d["memory_hierarchy"] = [dm.CacheLevel(**lv.model_dump()) for lv in spec.memory_hierarchy]
    d["links"] = [dm.Link(**lk.model_dump()) for lk in spec.links]
    d["benchmarks"] = dm.Benchmarks(
        kernels={k: dm.BenchmarkKernel(**v.model_dump()) for k, v in spec.benchmarks.kernels.items()},
        measurements=spec.benchmarks.measurements)
    return dm.MachineModel(**d)
