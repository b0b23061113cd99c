"""Machine model: the validated, unit-explicit description of a CPU (pure data, no I/O).

Follows the split of cross-architecture-machine-models.txt §3.3: an in-core
part (operation throughputs and latencies, load/store and AGU limits, shared
ports, SIMD width) and a memory-hierarchy part (cache levels, the link between
each pair of adjacent levels with its bandwidth per direction and optional
latency penalty, which contributions overlap, victim / write-through caches),
plus measured streaming bandwidths for Roofline (kerncraft-tool-paper.txt §2.2).

These frozen dataclasses are the only declaration of the machine-file schema:
field names are the YAML keys, defaults are the file's defaults, and the
``Annotated`` metadata states the constraints (``Gt(0)``: positive; a
:class:`~loopmodel.machine.fields.Range`: the physical range of a quantity, in base
units) and the conversion of values written with units (:mod:`loopmodel.machine.fields`).
:mod:`loopmodel.fileio.machine_schema` validates a file against them (pydantic
``TypeAdapter``) when it is read, so every object holds floats in base units (Hz,
bytes, B/cy, B/s, cycles) and parsed tables; nothing is parsed at evaluation.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Literal, Optional

from . import fields as fx
from .coherence import CoherenceTable
from .fields import OPS, Convert, Ge, Gt, Le
from .power import PowerSection
from .probe_section import ProbeSection, probe_section
from .provenance import FigureSource, provenance_section

__all__ = ["OPS", "P0_MAX", "LoadStore", "FlopsPerCycle", "InCore", "CacheLevel", "LinkBandwidth", "Link",
           "BenchmarkKernel", "LevelMeasurements", "Benchmarks", "MachineModel"]

#: Largest contention parameter p0 of the multi-core scaling model (``contention_p0`` in a
#: machine file, ``--p0``): up to it the utilization recursion of :mod:`loopmodel.models.scaling`
#: gives a monotone u(n) that reaches 1; from p0 = 0.76 on u(n) can drop when a core is added.
P0_MAX = 0.75

#: pydantic reads this from each dataclass: unknown keys in a machine file are errors
_STRICT = {"extra": "forbid"}

@dataclass(frozen=True)
class LoadStore:
    """L1 load or store limit: instructions per cycle and bytes per cycle (B/cy, ``"64 B/cy"`` in a file).

    Attributes:
        instructions_per_cycle: load (or store) instructions the core issues per cycle, at any
            width (cross-architecture paper §3.4.1 eq. 1, f_LD or f_ST).
        bytes_per_cycle: bytes per cycle the L1 delivers to loads (or accepts from stores), B/cy:
            a wide vector access counts as several instructions where this is the limit.
        split_extra: the port time a vector access that crosses a cache line costs beyond an
            aligned one, in instructions' worth (0: not charged); measured by ``loopmodel
            machine probe`` as split / aligned cycles per instruction - 1, per split access: for
            loads in the pattern of a stencil (an aligned, a split and an unaligned stream at the
            widest width), for stores in a loop of split stores
            (:func:`loopmodel.measure.incore_bench.split_extra`).
    """

    __pydantic_config__ = _STRICT

    instructions_per_cycle: Annotated[float, fx.THROUGHPUT]
    bytes_per_cycle: Annotated[float, Convert(fx.quantity("bandwidth_cy")), fx.BANDWIDTH_CY]
    split_extra: Annotated[float, Ge(0), Le(64)] = 0.0

    def bytes_per_cycle_at(self, width: float) -> float:
        """Bytes per cycle of accesses ``width`` bytes wide, B/cy: the smaller of the data-path
        limit ``bytes_per_cycle`` and the instruction limit ``instructions_per_cycle`` x ``width``
        (cross-architecture paper §3.4.1 eq. 1)."""
        return min(self.bytes_per_cycle, self.instructions_per_cycle * width)


@dataclass(frozen=True)
class FlopsPerCycle:
    """Peak FLOPs per cycle by operation type (kerncraft paper Listing 2 ``FLOPs per cycle``).

    Attributes:
        total: peak floating-point operations per cycle of one core at full SIMD width (the
            Roofline CPU roof, FLOP/cy).
        ADD: peak FLOP/cy of additions alone; None where not given.
        MUL: peak FLOP/cy of multiplications alone; None where not given.
        FMA: peak FLOP/cy of fused multiply-adds (two FLOPs each); None where not given.
    """

    __pydantic_config__ = _STRICT

    total: Annotated[float, fx.FLOPS]
    ADD: Optional[Annotated[float, Ge(0), Le(fx.FLOPS.hi)]] = None
    MUL: Optional[Annotated[float, Ge(0), Le(fx.FLOPS.hi)]] = None
    FMA: Optional[Annotated[float, Ge(0), Le(fx.FLOPS.hi)]] = None


@dataclass(frozen=True)
class InCore:
    """In-core execution model (cross-architecture paper §3.3, §3.4.1 eq. 1-2).

    Attributes:
        simd_width: the widest SIMD register of the core, bytes (``32 B`` for AVX); an analysis
            uses the width its compiler's flags give, at most this (``loopmodel.machine.vector_width``).
        throughput: instructions per cycle at full SIMD width per operation type (ADD, MUL, FMA,
            DIV, SQRT, EXP, LOG, POW, FABS, FMIN, FMAX); the per-element throughput is that times the SIMD
            lanes (cross-architecture paper eq. 6).
        load: the L1 load limit (:class:`LoadStore`).
        store: the L1 store limit (:class:`LoadStore`).
        latency: cycles from an instruction's inputs to its result per operation type, used for
            loop-carried dependency chains (a reduction that is not reassociated).
        port_groups: sets of operation types sharing execution ports: their times add up in T_OL.
        shared_units: sets of operation types executed by one unit that is not fully pipelined,
            such as the divider that divisions and square roots share: their times add up as a
            port group's do (cross-architecture-machine-models.txt §3.3 and §3.4.1 eq. 2, units
            served by one port). Not given: the ISA's rule, ``[[DIV, SQRT]]`` on x86 (one
            divide/square-root unit per core from Intel Sandy Bridge on and in AMD Zen) and none
            on other ISAs; ``[]``: none (:meth:`MachineModel.summed_groups`).
        stores_in: where the L1 cycles of stores count. ``T_nOL`` (default): with the loads,
            T_nOL = max(n_LD/f_LD, n_ST/f_ST, (n_LD+n_ST)/f_LDST), cross-architecture-machine-models.txt
            §3.4.1 eq. 1, "cycles in which at least one load or store operation takes place".
            ``T_OL``: Intel's ECM model, "T_OL is the overlapping time for computations and
            stores, T_nOL is the time for the loads from registers into L1" (kerncraft-tool-paper.txt
            §2.3; ecm-model-slides.txt, basic rules: only loads in L1 do not overlap); the address
            generation of loads and stores, the LD+ST limit, is then in T_OL too, as ports 2/3
            are in Kerncraft's overlapping ports. ``ports``: as the analyzer port lists say, the
            rule of Kerncraft's machine files (``non-overlapping model: ports``) and of the peer's
            ECM: with a compiled analyzer T_nOL is the largest pressure, all instructions, on a
            ``non_overlapping`` port and T_OL the largest on an ``overlapping`` one (a port in
            both lists is a candidate for both; kerncraft-tool-paper.txt §2.3); the analytic
            model, which has no ports, counts stores in T_OL as Kerncraft's ECM does. Every
            in-core analyzer follows it (:meth:`MachineModel.stores_overlap`,
            :meth:`MachineModel.ports_decide`).
        load_store_per_cycle: the combined limit of loads and stores per cycle (address
            generation units), instructions/cy; None: no combined limit.
        instructions_per_cycle: the front end's issue width, instructions per cy sustained from a
            loop body of independent 1-uop instructions (``machine probe``: integer moves of an
            immediate and 4-byte nops in turn, :mod:`loopmodel.measure.incore_bench`); a lower
            bound of T_OL. None where not measured.
        flops_per_cycle: peak FLOPs per cycle by precision, ``{DP: {...}, SP: {...}}``
            (:class:`FlopsPerCycle`).
        analyzer_ports: per in-core analyzer (``llvm-mca``, ``osaca``, ``iaca``) the port names
            whose cycles make T_OL and T_nOL: ``{overlapping: [...], non_overlapping: [...]}``.
        llvm_mca_cpu: llvm-mca's ``-mcpu`` for the compiled in-core analysis (and, mapped, OSACA's
            architecture); on a probed host of a newer generation than that name (gcc 12 calls
            Sapphire Rapids ``cooperlake``) llvm-mca 17 or later uses its own model
            (``sapphirerapids``, ``znver4``; Debian: ``apt-get install llvm-19``), with a note
            (:func:`loopmodel.compiled.llvm_mca.cpu_for`).
        latency_by_width: ``{op: {width in B: cy}}``, the latency of every register width the
            probe measured (op: ADD, MUL, FMA, DIV, SQRT or another known type; width: 4 float
            scalar, 8 scalar double, 16/32/64 B vectors; > 0 and <= 1000 cy): a chain of scalar
            additions runs at the scalar latency, which differs from the widest width's on some
            cores (:mod:`loopmodel.machine.latency`). Written by ``machine probe`` only.
        throughput_by_width: ``{op: {width in B: instructions/cy}}``, the throughput of every
            register width the probe measured (> 0 and <= 64 per cy), as ``latency_by_width``.
            Written by ``machine probe`` only.
        store_forward_latency: cycles from a store to the data of a load of its address (a
            dependency chain through memory, scalar double), measured by ``machine probe``; a
            bound of the compiled in-core model. None where not measured.
        taken_branches_per_cycle: taken branches per cycle (a tight loop, or a loop body of taken
            jumps if faster), measured by ``machine probe``; one taken branch per pass bounds
            T_OL from below. None where not measured.
        inner_loop_entry_cy: cycles per entry of an inner loop (setup and exit), the in-core
            overhead of short inner loops that ``machine probe`` measures on a nest of short
            inner loops in L1 (:mod:`loopmodel.models.short_loops`); None: a short inner loop is
            modelled in its steady state, with a note.
        inner_loop_remainder_ratio: the cost of one remainder iteration of a short inner loop
            relative to a full SIMD pass, measured with ``inner_loop_entry_cy``.
        nest_entry_cy: cycles per execution of a whole loop nest (its call, set-up and loop exit),
            which ``machine probe`` measures on a loop in L1 at several lengths
            (:mod:`loopmodel.models.nest_entry`); None: not modelled.
    """

    __pydantic_config__ = _STRICT

    simd_width: Annotated[float, Convert(fx.quantity("size")), fx.SIMD_WIDTH]
    throughput: Annotated[dict[str, float], Convert(fx.throughputs)]
    load: LoadStore
    store: LoadStore
    latency: Annotated[dict[str, float], Convert(fx.latencies)] = field(default_factory=dict)
    port_groups: Annotated[list, Convert(fx.port_groups)] = field(default_factory=list)
    shared_units: Annotated[Optional[list], Convert(fx.shared_units)] = None
    stores_in: Literal["T_nOL", "T_OL", "ports"] = "T_nOL"
    load_store_per_cycle: Optional[Annotated[float, fx.THROUGHPUT]] = None
    instructions_per_cycle: Optional[Annotated[float, fx.THROUGHPUT]] = None
    flops_per_cycle: dict[str, FlopsPerCycle] = field(default_factory=dict)
    analyzer_ports: dict = field(default_factory=dict)
    llvm_mca_cpu: Optional[str] = None
    latency_by_width: Annotated[dict, Convert(fx.latencies_by_width)] = field(default_factory=dict)
    throughput_by_width: Annotated[dict, Convert(fx.throughputs_by_width)] = field(default_factory=dict)
    store_forward_latency: Optional[Annotated[float, fx.MEASURED_LATENCY]] = None
    taken_branches_per_cycle: Optional[Annotated[float, fx.THROUGHPUT]] = None
    inner_loop_entry_cy: Optional[Annotated[float, fx.LATENCY]] = None
    inner_loop_remainder_ratio: Optional[Annotated[float, fx.REMAINDER_RATIO]] = None
    nest_entry_cy: Optional[Annotated[float, fx.LATENCY]] = None


@dataclass(frozen=True)
class CacheLevel:
    """One level of the memory hierarchy (``MEM`` last, without size).

    Attributes:
        level: the level's name, ``L1``, ``L2``, ``L3``, ... and ``MEM`` for the last; links and
            reports name levels by it.
        size: capacity of one instance in bytes (``32 KiB``); not given for ``MEM``.
        sets: number of sets (for the cache simulation); with ``ways`` and the line size it gives
            ``size``.
        ways: associativity (lines per set), for the cache simulation.
        replacement: the replacement policy the cache simulation uses.
        cores_per_group: cores sharing one instance of the cache (1: private); the layer
            conditions and ``--cores`` divide a shared cache among its cores.
        groups: instances of the cache per socket (Kerncraft's ``groups``), as documentation: the
            models use ``cores_per_group``.
        write_allocate: a store that misses first loads the line (write-allocate traffic).
        write_back: ``true``: dirty lines go to the next level when evicted; ``false``:
            write-through, every store goes to the next level.
        type: ``non-inclusive`` (default), ``inclusive`` (evictions back-invalidate the levels
            above) or ``victim`` (filled only by evictions of the level above, clean and dirty;
            misses of the level above are served from the next level directly,
            cross-architecture paper §3.3).
        memory_bypass: victim levels only: memory delivers the misses of the level above
            directly to it, so only evictions cross this level's upper link (cross-architecture
            paper §5.2.1 for EPYC, ThunderX2, Power9).
        victim_clean: victim levels only: clean evictions from the level above are transfers
            into it; ``false``: they are placed in it without a transfer (Epyc,
            cross-architecture paper Table 3; semantics in :mod:`loopmodel.cachesim`).
        victim_clean_note: where ``victim_clean`` came from when a converter chose it (a note
            for the report), else empty.
    """

    __pydantic_config__ = _STRICT

    level: str
    size: Annotated[Optional[float], Convert(fx.optional_size), fx.CACHE_SIZE] = None
    sets: Optional[Annotated[int, Gt(0), Le(2 ** 40)]] = None
    ways: Optional[Annotated[int, Gt(0), Le(2 ** 16)]] = None
    replacement: Literal["LRU", "FIFO", "RANDOM", "PLRU"] = "LRU"
    cores_per_group: Annotated[int, fx.COUNT] = 1
    groups: Optional[Annotated[int, fx.COUNT]] = None
    write_allocate: bool = True
    write_back: bool = True
    type: Literal["inclusive", "non-inclusive", "victim"] = "non-inclusive"
    memory_bypass: bool = False
    victim_clean: bool = True
    victim_clean_note: str = ""


@dataclass(frozen=True)
class LinkBandwidth:
    """One direction of a link: ``value`` in ``unit`` (``B/cy`` or ``B/s``), or ``measured``.

    ``B/s`` values (``"40 GB/s"`` in a file) are converted to B/cy with the clock when a
    model is evaluated (:meth:`MachineModel.link_bandwidths_cy`), so that a clock override
    does not scale a memory bandwidth.

    Attributes:
        value: the bandwidth in ``unit``; None for ``measured``.
        unit: ``B/cy``, ``B/s``, or ``measured``: the saturated bandwidth of the streaming
            benchmarks that best match the kernel.
    """

    __pydantic_config__ = _STRICT

    value: Optional[float]
    unit: Literal["B/cy", "B/s", "measured"]

    def __str__(self) -> str:
        return "measured" if self.unit == "measured" else f"{self.value:g} {self.unit}"


@dataclass(frozen=True)
class Link:
    """The data path between two adjacent levels (cross-architecture paper §3.4.2 eq. 3).

    Attributes:
        between: the two levels the link joins, ``[upper, lower]`` (``[L1, L2]``, ``[L3, MEM]``).
        bandwidth: one value (a half-duplex link) or ``[toward core, away from core]`` (two
            uni-directional links, ``duplex: full``); each a string with a unit (B/cy or GB/s)
            or ``measured``, read into :class:`LinkBandwidth`. The busy time of the link per
            cache line is the data volume over it divided by this bandwidth.
        duplex: ``half``: loads and evictions share one bandwidth, their times add; ``full``:
            each direction has its own ``bandwidth`` and the link's time is the larger.
        penalty_load: latency penalty in cycles per cache line loaded over the link, added to
            the transfer time (ECM's latency penalties; 0: none).
        penalty_store: latency penalty in cycles per cache line evicted over the link.
        shared_by: cores whose traffic shares this link's bandwidth (a non-scalable shared cache:
            EPYC's CCX L3, Power9's core-pair L2/L3; cross-architecture paper §5.2.2); 1: per core.
    """

    __pydantic_config__ = _STRICT

    between: Annotated[tuple[str, str], Convert(fx.level_pair)]
    bandwidth: Annotated[tuple[LinkBandwidth, ...], Convert(fx.link_bandwidths)]
    duplex: Literal["half", "full"] = "half"
    penalty_load: Annotated[float, Convert(fx.penalty), fx.PENALTY] = 0.0
    penalty_store: Annotated[float, Convert(fx.penalty), fx.PENALTY] = 0.0
    shared_by: Annotated[int, fx.COUNT] = 1

    def bandwidths(self) -> list:
        """The :class:`LinkBandwidth` per direction: ``[both]`` or ``[toward core, away from core]``."""
        return list(self.bandwidth)

    def busy_cy(self, bytes_in: float, bytes_out: float, bandwidths_cy) -> float:
        """Cycles the link is busy moving ``bytes_in`` toward the core and ``bytes_out`` away from it
        (cross-architecture paper §3.4.2 eq. 3): half duplex, the directions share one bandwidth,
        (in + out) / b; ``duplex: full``, each has its own, max(in / b_in, out / b_out).

        Args:
            bandwidths_cy: B/cy per direction (:meth:`MachineModel.link_bandwidths_cy`).
        """
        if self.duplex == "full":
            return max(bytes_in / bandwidths_cy[0], bytes_out / bandwidths_cy[1])
        return (bytes_in + bytes_out) / bandwidths_cy[0]

    @property
    def measured(self) -> bool:
        """True if a direction takes the measured (benchmark) bandwidth."""
        return any(b.unit == "measured" for b in self.bandwidth)


@dataclass(frozen=True)
class BenchmarkKernel:
    """A streaming benchmark kernel (kerncraft paper §2.2 ``benchmarks.kernels``); element size in bytes.

    Attributes:
        read_streams: arrays read per iteration.
        write_streams: arrays written per iteration (an array both read and written counts in
            both, and in ``read_write_streams``).
        read_write_streams: arrays both read and written per iteration (``a[i] = s * a[i]``).
        flops_per_iteration: floating-point operations per iteration.
        element_size: bytes per array element (``8 B`` for double).
    """

    __pydantic_config__ = _STRICT

    read_streams: Annotated[int, Ge(0), Le(64)]
    write_streams: Annotated[int, Ge(0), Le(64)]
    read_write_streams: Annotated[int, Ge(0), Le(64)] = 0
    flops_per_iteration: Annotated[float, Ge(0), Le(1e4)] = 0
    element_size: Annotated[float, Convert(fx.quantity("size")), fx.Range(1, 1024, "B")] = 8.0


@dataclass(frozen=True)
class LevelMeasurements:
    """Measured bandwidths of one level: ``bandwidths[kernel][i]`` (B/s) with ``cores[i]`` cores.

    A file writes the table as ``{cores: [1, 2, ...], copy: ['10 GB/s', ...], ...}``
    (:func:`loopmodel.machine.fields.benchmark_tables`).

    Attributes:
        cores: the core counts measured (one thread per core).
        bandwidths: kernel name -> bandwidth in B/s per core count of ``cores``.
    """

    __pydantic_config__ = _STRICT

    cores: tuple[int, ...]
    bandwidths: dict[str, tuple[float, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Benchmarks:
    """Measured bandwidths (B/s), without write-allocate traffic, one thread per core
    (kerncraft-tool-paper.txt §2.2).

    Attributes:
        kernels: the streaming kernels the measurements name (:class:`BenchmarkKernel`).
        measurements: level -> the :class:`LevelMeasurements` table of the benchmarks run with
            their data in that level.
    """

    __pydantic_config__ = _STRICT

    kernels: dict[str, BenchmarkKernel] = field(default_factory=dict)
    measurements: dict[str, LevelMeasurements] = field(default_factory=dict)


@dataclass(frozen=True)
class MachineModel:
    """A whole machine model: the in-core part, the memory hierarchy and its links, measured
    benchmarks and provenance (cross-architecture paper §3.3).

    Attributes:
        name: the model's name, printed in every report (``-m`` takes a bundled model by it).
        clock: the core clock in Hz (``3.0 GHz`` in a file), which turns cycles into seconds;
            ``--clock`` replaces it (cycle counts stay, bandwidths in GB/s do not scale).
        cores_per_socket: physical cores per socket (chip).
        in_core: the in-core execution model (:class:`InCore`).
        memory_hierarchy: the cache levels, closest to the core first, then ``MEM``: at least
            one cache level and ``MEM`` (:class:`CacheLevel`).
        links: one link per pair of adjacent levels of ``memory_hierarchy`` (:class:`Link`):
            the data paths whose busy times are ECM's transfer contributions.
        description: free text on the machine (``loopmodel machine list`` shows it where
            ``model_name`` is empty).
        model_name: the CPU's model name as the vendor gives it
            (``Intel(R) Xeon(R) CPU E5-2690 v2 @ 3.00GHz``).
        micro_architecture: the micro-architecture's short name (``IVB``, ``SKX``, ``ZEN``, or
            the compiler's ``-march=native`` name on a probed host), as documentation.
        isa: the instruction set, ``x86`` (default), ``aarch64`` or ``ppc64le``: chooses the
            cross compiler for the compiled in-core analysis and the default ``shared_units``.
        sockets: sockets (chips) of the machine.
        threads_per_core: hardware threads per core (SMT); the models use one thread per core.
        numa_domains_per_socket: ccNUMA domains per socket (sub-NUMA clustering): the
            multicore models saturate memory bandwidth per domain.
        cacheline_size: the cache-line size in bytes (``64 B``): the unit of work of every
            per-CL figure is one cache line of the written array.
        overlap: the contributions that overlap with the rest (``T_OL`` on Intel; add ``T_nOL``,
            ``L1L2``, ... for hierarchies whose transfers overlap; cross-architecture paper
            §3.4.3).
        overlap_unless_memory: contributions that overlap while the data are in a cache but add
            up once memory is involved (ThunderX2).
        contention_p0: p0 of the multicore contention model (cross-architecture paper §3.4.4
            eq. 5), in (0, :data:`P0_MAX`]; ``--p0`` replaces it.
        benchmarks: measured streaming bandwidths per kernel, level and core count
            (:class:`Benchmarks`), for Roofline and for links whose bandwidth is ``measured``.
        compiler: compiler name -> flags used to compile kernels for this machine
            (``{gcc: -O3 -march=corei7-avx}``); flags from a file must pass the allow-list of
            :mod:`loopmodel.gate` unless ``--trust-machine-flags``.
        sources: where the figures come from (citations, measurements), as documentation.
        probe: provenance of a model measured on its host (``loopmodel machine probe``), typed
            (:class:`~loopmodel.machine.probe_section.ProbeSection`: the host, date, bandwidth
            tables, latencies, instruction forms, self-check and validation the models read, with
            the whole section as read for the writer), or None for a model that was not probed.
        coherence: the measured MESI transition table
            (:class:`~loopmodel.machine.coherence.CoherenceTable`,
            benchmark-based-coherence-model.txt §IV), or None where not measured (``loopmodel
            machine probe --coherence``).
        power: the chip power model W0, W1, W2 (:class:`~loopmodel.machine.power.PowerSection`,
            ecm-model-slides.txt "A simple power model for multicore chips"), or None where not
            known (``loopmodel machine probe --power`` measures it where RAPL counters are
            readable).
        provenance: figure -> :class:`~loopmodel.machine.provenance.FigureSource`: where each
            figure comes from and which are estimated (:mod:`loopmodel.machine.provenance`);
            empty where the file gives only ``sources``.
    """

    __pydantic_config__ = _STRICT

    name: str
    clock: Annotated[float, Convert(fx.quantity("frequency")), fx.CLOCK]
    cores_per_socket: Annotated[int, fx.COUNT]
    in_core: InCore
    memory_hierarchy: Annotated[list[CacheLevel], Convert(fx.hierarchy)]
    links: list[Link]
    description: str = ""
    model_name: str = ""
    micro_architecture: str = ""
    isa: str = "x86"
    sockets: Annotated[int, Gt(0), Le(64)] = 1
    threads_per_core: Annotated[int, Gt(0), Le(16)] = 1
    numa_domains_per_socket: Annotated[int, fx.COUNT] = 1
    cacheline_size: Annotated[float, Convert(fx.quantity("size")), fx.LINE_SIZE] = 64.0
    overlap: list = field(default_factory=lambda: ["T_OL"])
    overlap_unless_memory: list = field(default_factory=list)
    contention_p0: Annotated[float, Gt(0), Le(P0_MAX)] = 0.5
    benchmarks: Annotated[Benchmarks, Convert(fx.benchmark_tables)] = field(default_factory=Benchmarks)
    compiler: dict = field(default_factory=dict)
    sources: list = field(default_factory=list)
    probe: Annotated[Optional[ProbeSection], Convert(probe_section)] = None
    coherence: Annotated[Optional[CoherenceTable], Convert(fx.coherence_section)] = None
    power: Annotated[Optional[PowerSection], Convert(fx.power_section)] = None
    provenance: Annotated[dict[str, FigureSource], Convert(provenance_section)] = field(default_factory=dict)

    @staticmethod
    def link_name(pair) -> str:
        """``('L3', 'MEM')`` -> ``'L3MEM'``: the ECM contribution name T_L3MEM."""
        return f"{pair[0]}{pair[1]}"

    def stores_overlap(self) -> bool:
        """The one rule for every in-core analyzer (analytic and compiled): True if the L1
        cycles of stores (and the address generation of loads and stores) count in T_OL, False
        if they count in T_nOL with the loads (``in_core.stores_in``, see :class:`InCore`); with
        ``stores_in: ports`` (Kerncraft's files) True, the ECM rule of kerncraft-tool-paper.txt §2.3
        ("T_OL is the overlapping time for computations and stores")."""
        return self.in_core.stores_in in ("T_OL", "ports")

    def ports_decide(self) -> bool:
        """True if the analyzer port lists alone decide T_nOL (``in_core.stores_in: ports``, the
        rule of Kerncraft's machine files): T_nOL is the whole pressure, store uops included, on
        the ``non_overlapping`` ports, not the loads' share of it."""
        return self.in_core.stores_in == "ports"

    def summed_groups(self) -> list:
        """Sets of operation types whose times add up in T_OL (cross-architecture-machine-models.txt
        §3.4.1 eq. 2): ``in_core.port_groups`` and the shared units (``in_core.shared_units``, or
        where a file does not say, ``[[DIV, SQRT]]`` on x86 and none elsewhere), without repeats."""
        units = self.in_core.shared_units
        if units is None:
            units = [["DIV", "SQRT"]] if (self.isa or "x86").lower() in ("x86", "x86_64", "amd64") else []
        out = []
        for g in list(self.in_core.port_groups) + list(units):
            if sorted(g) not in [sorted(x) for x in out]:
                out.append(list(g))
        return out

    @property
    def caches(self) -> list:
        return self.memory_hierarchy[:-1]

    @property
    def cores_per_numa_domain(self) -> int:
        """Cores of the fullest ccNUMA domain: ``ceil(cores_per_socket / numa_domains_per_socket)``,
        so that filling domains of this many cores one after the other never uses more domains
        than a socket has (Granite Rapids' SNC3: 128 cores as 43 + 43 + 42)."""
        return max(1, -(-self.cores_per_socket // self.numa_domains_per_socket))

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
        for x in lk.bandwidth:
            if x.unit == "measured":
                if measured_bps is None:
                    raise ValueError("no measured memory bandwidth available")
                out.append(measured_bps / self.clock)
            elif x.unit == "B/s":
                out.append(x.value / self.clock)
            else:
                out.append(x.value)
        return out
