"""Measuring the host for a machine model of it (``loopmodel machine probe``): what runs, in
which order, at which sizes. Produces raw measurements (:class:`ProbeData`); fitting them
into a model is :mod:`loopmodel.workflows.hostmodel`.

The steps follow Kerncraft's ``likwid_bench_auto.py`` (kerncraft-tool-paper.txt §2.2:
topology, then streaming benchmarks per cache level and core count with working sets sized
from the caches) and add what the cross-architecture paper fits from measurement
(cross-architecture-machine-models.txt §3.3–3.4: clock, in-core throughputs, latencies,
per-level bandwidths, the memory penalty and the contention curve):

1. topology from sysfs (:mod:`.topology`), clock (:mod:`.clock`, thread CPU time);
2. in-core instruction throughput and latency (:mod:`.incore_bench`);
3. load latency per level (pointer chase, :mod:`.latency`);
4. a single-core working-set sweep per benchmark kernel (:mod:`.bandwidth`), from which the
   effective capacity of every cache is found (:func:`loopmodel.models.link_fit.effective_capacities`);
5. every benchmark kernel at 1..N cores with its working set inside each level's effective
   capacity (per core for private levels, in total for shared ones), and in memory;
6. the cost of many concurrent streams and of misaligned (cache-line-split) streaming;
7. with ``coherence``: the MESI transition table at 1..N threads (:mod:`.coherence_bench`,
   benchmark-based-coherence-model.txt §IV), chunks from 4 KiB to 4 x the last-level cache;
8. a short-inner-loop kernel in L1 at several inner trip counts (loop entry overhead and
   remainder cost, :mod:`loopmodel.models.short_loops`), and a loop in L1 at four lengths (the
   cost of entering a nest once per execution, :mod:`loopmodel.models.nest_entry`);
9. with ``power``: package power (RAPL) of a streaming kernel at 1..N cores and, where the
   clock can be set, several clocks, fitted to the chip power model W0 + (W1·f + W2·f²)·n
   (:mod:`.power_probe`, ecm-model-slides.txt "A simple power model for multicore chips").

A step that cannot run (no compiler for an ISA, sysfs missing, pinning refused) leaves a
note and the probe goes on; the model builder says what it had to assume instead.
"""
from __future__ import annotations

import dataclasses
import math
import os
import platform
import socket
import tempfile
import time
from dataclasses import dataclass, field

from .. import toolchain
from ..errors import LoopmodelError
from ..models.link_fit import effective_capacities
from ..toolchain import native_arch_flag
from ..version import __version__
from .bandwidth import KERNELS as _BANDWIDTH_KERNELS, run_bandwidth
from .clock import measure_clock
from .coherence_bench import coherence_sizes, measure_coherence
from .host_cpu import compiler_simd_width, native_cpu
from .incore_bench import run_incore
from .kernel_bench import measure_kernel
from .latency import run_latency
from .power_probe import NO_COUNTERS, probe_power
from .probe_check import latency_spread
from .stream import available_memory
from .topology import allowed_cpus, one_cpu_per_core, read_topology

KERNELS = ("load", "copy", "update", "triad", "daxpy")
#: Kerncraft's stream semantics of the benchmark kernels (kerncraft-tool-paper.txt §2.2)
BENCH_KERNELS = _BANDWIDTH_KERNELS
ELEMENT = 8  # bytes per element (double)
#: a kernel whose in-core time is comparable to its cache transfers (nine loads, three of them
#: misaligned, per update): the streaming kernels alone cannot tell whether the in-core work
#: overlaps the transfers (their T_nOL is small), this one can; it is not one of the example
#: kernels that validate the model
TRAINING_NAME = "box9"
TRAINING_SOURCE = ("double a[N][N], b[N][N];\ndouble s;\n\n"
                   "for (int j = 1; j < N - 1; ++j)\n    for (int i = 1; i < N - 1; ++i)\n"
                   "        b[j][i] = (a[j-1][i-1] + a[j-1][i] + a[j-1][i+1] + a[j][i-1] + a[j][i] + a[j][i+1]\n"
                   "                   + a[j+1][i-1] + a[j+1][i] + a[j+1][i+1]) * s;\n")
#: a nest of inner loops of N iterations (N < 64, rows of 64 + 8 elements so that the compiler
#: cannot fuse the rows into one loop) whose data stay in L1: its time per loop entry at several
#: N gives the loop entry overhead and the remainder cost of short inner loops
#: (:func:`loopmodel.models.short_loops.fit_short_loop`)
SHORT_LOOP_NAME = "short-loops"
SHORT_LOOP_SOURCE = ("double a[M][72], b[M][72];\ndouble s;\n\n"
                     "for (int j = 0; j < M; ++j)\n    for (int i = 0; i < N; ++i)\n"
                     "        a[j][i] = a[j][i] + s * b[j][i];\n")
#: a loop whose data stay in L1, measured at several lengths: its cycles per call against its
#: iterations give the cost of entering and leaving a nest once per execution
#: (:func:`loopmodel.models.nest_entry.fit_nest_entry`)
NEST_ENTRY_NAME = "nest-entry"
NEST_ENTRY_SOURCE = "double a[N], b[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n    a[i] = a[i] + s * b[i];\n"
#: its lengths (two arrays of 1024 doubles: 16 KiB, in any L1 we know)
NEST_ENTRY_TRIPS = (128, 256, 512, 1024)
#: inner trip counts of the short-loop step (whole passes and remainders of 4-, 8- and 16-lane SIMD)
SHORT_LOOP_TRIPS = (8, 9, 11, 12, 15, 16, 17, 20, 24, 28, 32, 33, 40, 48, 64)
SHORT_LOOP_TRIPS_QUICK = (8, 11, 12, 16, 17, 24, 32, 33, 48, 64)
KiB, MiB = 1024, 1024 * 1024
#: the smallest data set of a memory benchmark (all cores together): a guest's last-level cache
#: as measured or reported can be far smaller than the physical cache its data still hit (a Zen 4
#: guest: 8 MiB effective, 32 MiB reported; daxpy at 32 MiB ran 1.4 cy/it, at 128 MiB-1 GiB
#: 2.2-2.45 cy/it, benchmarks/results/memory-placement/)
MEMORY_MIN_B = 128 * MiB


@dataclass(frozen=True)
class ProbeOptions:
    """What to measure and how thoroughly.

    Attributes:
        cores: core counts for the per-level tables (1..N by default).
        quick: fewer sizes, kernels and repetitions (about a minute on 2 cores, the full probe about two).
        repetitions: runs per point (min-of-K; spread from all K).
        min_time_s: shortest duration of one run, seconds.
        compiler: C compiler for the benchmarks.
        coherence: also measure the MESI transition table (step 7).
        power: also measure the chip power model (step 9).
    """
    cores: tuple
    quick: bool = False
    repetitions: int = 5
    min_time_s: float = 0.02
    compiler: str = "gcc"
    coherence: bool = False
    power: bool = False

    @classmethod
    def make(cls, cores=None, quick: bool = False, compiler: str = "gcc", coherence: bool = False,
             power: bool = False) -> "ProbeOptions":
        cores = tuple(cores) if cores else tuple(range(1, usable_cpus() + 1))
        if quick:
            cores = tuple(sorted({cores[0], cores[-1]}))
            return cls(cores, True, 3, 0.004, compiler, coherence, power)
        return cls(cores, False, 5, 0.015, compiler, coherence, power)


def usable_cpus() -> int:
    """How many CPUs this process may run on (its affinity mask; the CPU count without one)."""
    return len(allowed_cpus())


@dataclass(frozen=True)
class ProbeData:
    """Everything a probe measured (raw), with what could not be measured in ``notes``.

    Attributes:
        host: provenance: ``hostname``, ``kernel``, ``date`` (ISO 8601, UTC), ``loopmodel``,
            ``compiler``, ``compiler_version``, ``native_cpu``, ``llvm_mca_cpu``, ``duration_s``.
        topology: :class:`~loopmodel.measure.topology.HostTopology`.
        clock: :class:`~loopmodel.measure.clock.ClockMeasurement` or None.
        incore: :class:`~loopmodel.measure.incore_bench.InCoreBenchResult` or None.
        latency: :class:`~loopmodel.measure.latency.LatencyResult` or None.
        sweep: kernel -> single-core :class:`~loopmodel.measure.bandwidth.BandwidthPoint` list
            over working-set sizes.
        tables: level name -> kernel -> points at the level's size, one per core count.
        streams: load points with K concurrent streams (memory, one core).
        offsets: ``(kernel, level, aligned point, misaligned point)`` tuples.
        notes: what was left out and why.
        training: single-core times of :data:`TRAINING_SOURCE` with its data in L2, L3 and
            memory: ``{"kernel", "level", "defines", "seconds_per_it", "clock_Hz"}`` dicts
            (the clock measured right around the point).
        coherence: :class:`~loopmodel.machine.coherence.CoherenceTable` or None (not asked
            for or failed).
        coherence_info: its provenance (:func:`coherence_provenance`), or empty.
        power: :class:`~loopmodel.machine.power.PowerSection` or None (not asked for, no
            energy counters, or failed: then a note says why).
        power_info: its provenance (the runs and the fit), or empty.
        short_loops: :data:`SHORT_LOOP_SOURCE` with its data in L1 at each inner trip count
            of :data:`SHORT_LOOP_TRIPS`: ``{"n", "rows", "seconds_per_it", "clock_Hz"}`` dicts.
        nest_entry: :data:`NEST_ENTRY_SOURCE` in L1 at each length of :data:`NEST_ENTRY_TRIPS`,
            dicts as ``short_loops`` (``rows`` 1).
    """
    host: dict
    topology: object
    clock: object = None
    incore: object = None
    latency: object = None
    sweep: dict = field(default_factory=dict)
    tables: dict = field(default_factory=dict)
    streams: tuple = ()
    offsets: tuple = ()
    notes: tuple = ()
    options: ProbeOptions | None = None
    training: tuple = ()
    coherence: object = None
    coherence_info: dict = field(default_factory=dict)
    power: object = None
    power_info: dict = field(default_factory=dict)
    short_loops: tuple = ()
    nest_entry: tuple = ()


def point_seconds_per_it(p) -> float:
    """Shortest time per iteration of one thread's loop (min-of-K), s/it."""
    return min(p.seconds) / (p.sweeps * p.elements_per_thread)


def cy_per_cl(p, clock_hz: float, line: float = 64.0) -> float:
    """Single-core time of a point in cy/CL of work (``line / 8`` iterations per CL)."""
    return point_seconds_per_it(p) * clock_hz * line / ELEMENT


def sweep_sizes(topology, quick: bool) -> list:
    """Single-core working sets (bytes): from 1/4 of L1 up to beyond the caches in steps of
    2^(1/2) (quick: 2), the top capped at 1 GiB and at 1/8 of the available memory."""
    caches = data_caches(topology)
    l1 = caches[0].size if caches else 32 * KiB
    last = caches[-1].size if caches else 32 * MiB
    top = min(max(4 * last, 256 * MiB), 1024 * MiB, _memory_cap())
    step = 2.0 if quick else math.sqrt(2)
    out, s = [], l1 / 4
    while s <= top:
        out.append(int(s) // 4096 * 4096 or 4096)
        s *= step
    return sorted(set(out))


def data_caches(topology) -> list:
    """The data (or unified) caches of one CPU, inner first."""
    return sorted((c for c in topology.caches if c.type in ("Data", "Unified")), key=lambda c: c.level)


def _memory_cap() -> int:
    """1/8 of the available memory (at least 64 MiB; 256 MiB where it cannot be read)."""
    avail = available_memory()
    return max(avail // 8, 64 * MiB) if avail else 256 * MiB


def level_sizes(effective: dict, shared: dict, cores: int) -> dict:
    """Working set per core (bytes) that puts each level's data in that level at ``cores``
    cores, or None where no size can (a shared cache too small for this many cores).

    Private level: the geometric mean of 2 x the previous level's capacity and half its own
    (L1: a third of it). Shared level (``shared[level]`` cores share one instance): the same
    bounds on the total over the cores sharing it. Memory: 4 x the last cache in total, at
    least 128 MiB, spread over the cores.
    """
    out, prev = {}, 0.0
    names = list(effective)
    for name in names:
        cap = effective[name]
        n = min(shared.get(name, 1), cores) if shared.get(name, 1) > 1 else 1
        lo, hi = 2 * prev, cap / 2
        if lo == 0:
            out[name] = int(cap / 3 / n)
        elif lo * max(n, 1) < hi:
            out[name] = int(math.sqrt(lo * n * hi) / n)
        else:
            out[name] = None
        prev = cap if n == 1 else cap / shared.get(name, 1)
    last = effective[names[-1]] if names else 32 * MiB
    out["MEM"] = int(max(4 * last, MEMORY_MIN_B) / cores)
    return out


def host_flags() -> str:
    """Compiler flags for this host's kernels and benchmarks: optimised for the CPU it runs on."""
    return f"-O3 {native_arch_flag()} -fopenmp"


def host_provenance(compiler: str) -> dict:
    """Host name, kernel, date, loopmodel and compiler versions for the ``probe`` section."""
    try:
        version = toolchain.tool_version(toolchain.find_compiler(compiler))
    except LoopmodelError:
        version = "unknown"
    return {"hostname": socket.gethostname(), "kernel": f"{platform.system()} {platform.release()}",
            "machine": platform.machine(), "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "loopmodel": __version__, "compiler": compiler, "compiler_version": version}


class _Steps:
    """Runs the probe's steps, turning a step's one-line failure into a note."""

    def __init__(self, progress):
        self.notes: list = []
        self.progress = progress or (lambda what, done, total: None)

    def attempt(self, what: str, fn, *args, **kw):
        try:
            return fn(*args, **kw)
        except LoopmodelError as exc:
            self.notes.append(f"{what}: not measured ({exc})")
            return None


def run_probe(options: ProbeOptions, progress=None, root: str = "/") -> ProbeData:
    """Measure this host (see the module docstring for the steps).

    Args:
        options: :class:`ProbeOptions`.
        progress: ``progress(step description, points done, points in total)`` callback.
        root: where sysfs and /proc are found (``/``).
    Returns:
        :class:`ProbeData`. A failing step leaves a note, never raises.
    """
    t0 = time.monotonic()
    steps = _Steps(progress)
    host = host_provenance(options.compiler)
    topo = read_topology(root)
    steps.notes += list(topo.notes)
    steps.progress("clock", 0, 1)
    clock = steps.attempt("clock", measure_clock, options.compiler)
    hz = clock.median_hz if clock else None
    host["native_cpu"] = steps.attempt("compiler's CPU name", native_cpu, options.compiler,
                                       platform.machine() in ("aarch64", "arm64"))
    host["compiler_flags"] = host_flags()
    host["simd_width_B"] = compiler_simd_width(options.compiler, host["compiler_flags"].split()) or topo.simd_width
    incore = steps.attempt("in-core micro-benchmarks", _incore, topo, hz, options, steps) if hz else None
    if incore is not None:  # the clock around the in-core step converts its seconds to cycles
        # (unless each repetition was counted against the reference chain: then it is only noted)
        after = steps.attempt("clock", measure_clock, options.compiler)
        if after is not None and abs(after.median_hz / hz - 1) > 0.03 and not incore.calibrated:
            steps.notes.append(f"the clock changed during the in-core micro-benchmarks ({hz / 1e9:.3f} GHz before, "
                               f"{after.median_hz / 1e9:.3f} GHz after): their cycle figures are uncertain by "
                               f"{100 * abs(after.median_hz / hz - 1):.0f} %")
        clock = clock.merged(after)
        incore = incore.at_clock(clock.median_hz)
    sweep = _sweeps(topo, options, steps)
    effective = effective_sizes(topo, sweep)
    latency = steps.attempt("latency", _latency, topo, effective, options, steps)
    clock = _more_clock(clock, options, steps)
    tables = _tables(topo, effective, options, steps)
    streams, offsets = _extras(topo, effective, options, steps)
    training = _training(effective, host["compiler_flags"], options, steps)
    short = short_loop_step(effective, host["compiler_flags"], options, steps)
    entry = nest_entry_step(host["compiler_flags"], options, steps)
    coherence = steps.attempt("coherence transitions", probe_coherence, options, last_level_bytes(topo, effective),
                              steps.progress, root) if options.coherence else None
    power = _power(options, clock.median_hz if clock else None, steps, root) if options.power else None
    clock = _more_clock(clock, options, steps)
    host["duration_s"] = round(time.monotonic() - t0, 1)
    return ProbeData(host, topo, clock, incore, latency, sweep, tables, streams, offsets, tuple(steps.notes),
                     options, training, *(coherence or (None, {})), *(power or (None, {})), short, entry)


def _power(options, clock_hz, steps, root: str = "/"):
    """Step 8: ``(PowerSection, provenance)``, or None with a note (no energy counters, a failing
    run); the probe goes on either way."""
    try:
        return probe_power(list(options.cores), clock_hz, root, seconds=0.5 if options.quick else 1.0,
                           compiler=options.compiler, clock_count=2 if options.quick else 3,
                           progress=steps.progress)
    except LoopmodelError as exc:
        steps.notes.append(str(exc) if str(exc) == NO_COUNTERS else f"power: not measured ({exc})")
        return None


def _more_clock(clock, options, steps):
    """The clock measured again and merged: on a shared host the clock may change during the
    probe, so the model takes the median over runs spread across it."""
    if clock is None:
        return None
    steps.progress("clock", 0, 1)
    return clock.merged(steps.attempt("clock", measure_clock, options.compiler))


def _incore(topo, hz, options, steps):
    family = "aarch64" if platform.machine() in ("aarch64", "arm64") else "x86"
    return run_incore(family, topo.isa, hz, compiler=options.compiler,
                      progress=lambda d, t: steps.progress("in-core instructions", d, t))


def _latency(topo, effective: dict, options, steps):
    """Pointer chase inside each cache's effective capacity (L1: a quarter, others: half)
    and in memory (8 x the last cache, at least 256 MiB, at most 1 GiB)."""
    caps = list(effective.values())
    sizes = [int(c / (4 if i == 0 else 2)) for i, c in enumerate(caps)]
    sizes.append(min(max(8 * int(caps[-1]) if caps else 0, 256 * MiB), 1024 * MiB, _memory_cap()))
    sizes = sorted({max(s // 4096 * 4096, 4096) for s in sizes})
    steps.progress("latency", 0, 1)
    caches = data_caches(topo)
    line = caches[0].line_size if caches else 64
    return run_latency(sizes, line, repetitions=3, min_time_s=0.01 if options.quick else 0.02, cpu=_first_cpu())


def _first_cpu() -> int:
    return allowed_cpus()[0]


def _sweeps(topo, options, steps) -> dict:
    kernels = ("copy",) if options.quick else KERNELS
    sizes = sweep_sizes(topo, options.quick)
    out, total, done = {}, len(kernels) * len(sizes), 0
    for k in kernels:
        pts = []
        for s in sizes:
            steps.progress(f"single-core sweep ({k})", done, total)
            p = steps.attempt(f"sweep {k} at {s} B", _bandwidth, k, 1, s, options.repetitions, options)
            done += 1
            if p is not None:
                pts.append(p)
        out[k] = pts
    return out


def effective_sizes(topo, sweep: dict) -> dict:
    """Level name -> effective capacity (bytes) of each cache: the median over the swept kernels
    of :func:`loopmodel.models.link_fit.effective_capacities`; the reported size where no sweep
    shows a plateau."""
    caches = data_caches(topo)
    nominal = {f"L{c.level}": float(c.size) for c in caches}
    found: dict = {name: [] for name in nominal}
    for pts in sweep.values():
        if len(pts) < 2:
            continue
        for lv in effective_capacities([p.bytes_per_thread for p in pts], [p.bytes_per_s_max for p in pts],
                                       nominal):
            if lv.capacity:
                found[lv.level].append(lv.capacity)
    return {n: (sorted(v)[len(v) // 2] if v else nominal[n]) for n, v in found.items()}


def _tables(topo, effective, options, steps) -> dict:
    """Level -> kernel -> one point per core count. Multi-core points in the caches are taken
    twice, at different times, and the faster kept: on a shared (virtual) host another tenant
    on a sibling hardware thread can slow one whole pass down, which min-of-K within one
    pass does not remove."""
    shared = {f"L{c.level}": c.shared_cores for c in data_caches(topo)}
    levels = list(effective) + ["MEM"]
    plan = [(lv, k, n) for lv in levels for k in KERNELS for n in options.cores]
    again = [(lv, k, n) for lv, k, n in plan if lv != "MEM" and n > 1]
    out: dict = {}
    for i, (level, k, n) in enumerate(plan + again):
        size = level_sizes(effective, shared, n).get(level)
        steps.progress(f"{level} bandwidth ({k}, {n} core{'s' if n > 1 else ''})", i, len(plan) + len(again))
        if not size:
            continue
        reps = options.repetitions + (2 if level != "MEM" else 0)  # short points: more repetitions
        p = steps.attempt(f"{level} {k} at {n} cores", _bandwidth, k, n, size, reps, options)
        if p is None:
            continue
        pts = out.setdefault(level, {}).setdefault(k, [])
        old = next((q for q in pts if q.threads == n), None)
        if old is None:
            pts.append(p)
        elif p.bytes_per_s_max > old.bytes_per_s_max:
            pts[pts.index(old)] = p
    return out


def _bandwidth(kernel, threads, size, repetitions, options, offset: int = 0):
    return run_bandwidth(kernel, threads, size, repetitions, options.min_time_s, offset=offset,
                         compiler=options.compiler)


def _extras(topo, effective, options, steps) -> tuple:
    """Many concurrent streams (memory) and misaligned streaming (L1 and memory), one core."""
    ks = (1, 8, 16) if options.quick else (1, 2, 4, 8, 12, 16, 20, 24)
    sizes = level_sizes(effective, {}, 1)
    mem = sizes["MEM"]
    streams = []
    for i, k in enumerate(ks):
        steps.progress("concurrent streams", i, len(ks))
        p = steps.attempt(f"{k} streams", _bandwidth, f"streams:{k}", 1, mem, options.repetitions, options)
        if p is not None:
            streams.append(p)
    offsets = []
    l1 = next(iter(sizes.items()))
    for kernel in ("load", "copy"):
        for level, size in (l1, ("MEM", mem)):
            steps.progress("misaligned streams", len(offsets), 4)
            a = steps.attempt("aligned", _bandwidth, kernel, 1, size, options.repetitions, options)
            b = steps.attempt("misaligned", _bandwidth, kernel, 1, size, options.repetitions, options, offset=8)
            if a is not None and b is not None:
                offsets.append((kernel, level, a, b))
    return tuple(streams), tuple(offsets)


def training_sizes(effective: dict) -> dict:
    """Level -> N that puts the training kernel's two N x N arrays at 40 % of that level's
    effective capacity (the levels after L1), and in memory at 4 x the last cache, at least
    256 MiB."""
    names = list(effective)[1:]
    out = {lv: int(math.sqrt(0.4 * effective[lv] / (2 * ELEMENT))) for lv in names}
    out["MEM"] = int(math.sqrt(max(4 * effective[list(effective)[-1]], 256 * MiB) / (2 * ELEMENT))) if effective else 4096
    return out


def _training(effective: dict, flags: str, options, steps) -> tuple:
    """The training kernel measured at each level's size (kernel benchmark, pinned, min-of-K),
    each point between two short clock measurements."""
    out = []
    sizes = training_sizes(effective)
    with tempfile.TemporaryDirectory(prefix="loopmodel-training-") as d:
        path = os.path.join(d, f"{TRAINING_NAME}.c")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(TRAINING_SOURCE)
        for i, (level, n) in enumerate(sizes.items()):
            steps.progress(f"training kernel ({level})", i, len(sizes))
            before = steps.attempt("clock", measure_clock, options.compiler, 20_000, 5)
            m = steps.attempt(f"training kernel in {level}", measure_kernel, path, {"N": n}, options.compiler,
                              flags, runs=5 if options.quick else 10, min_time_s=0.002, cpu=_first_cpu())
            after = steps.attempt("clock", measure_clock, options.compiler, 20_000, 5)
            if m is None or before is None or after is None:
                continue
            out.append({"kernel": TRAINING_NAME, "level": level, "defines": {"N": n},
                        "seconds_per_it": m.seconds_per_it_min, "clock_Hz": (before.median_hz + after.median_hz) / 2})
    return tuple(out)


def short_loop_step(effective: dict, flags: str, options, steps) -> tuple:
    """:data:`SHORT_LOOP_SOURCE` measured at each inner trip count (kernel benchmark, pinned,
    min-of-K), its two arrays at most a quarter of L1's effective capacity (at least 4 rows), one
    clock measurement around the step. Returns ``{"n", "rows", "seconds_per_it", "clock_Hz"}``
    dicts (empty where the clock or every point fails)."""
    l1 = next(iter(effective.values()), 32 * KiB)
    rows = max(4, int(l1 / 4 // (2 * 72 * ELEMENT)))
    trips = SHORT_LOOP_TRIPS_QUICK if options.quick else SHORT_LOOP_TRIPS
    return _lengths_step(SHORT_LOOP_NAME, SHORT_LOOP_SOURCE, "short inner loop",
                         [{"M": rows, "N": n} for n in trips], flags, options, steps)


def nest_entry_step(flags: str, options, steps) -> tuple:
    """:data:`NEST_ENTRY_SOURCE` measured at each length of :data:`NEST_ENTRY_TRIPS` as
    :func:`short_loop_step` measures its nest; the same dicts (``rows`` 1)."""
    return _lengths_step(NEST_ENTRY_NAME, NEST_ENTRY_SOURCE, "loop", [{"N": n} for n in NEST_ENTRY_TRIPS], flags,
                         options, steps)


def _lengths_step(name: str, source: str, what: str, plan: list, flags: str, options, steps) -> tuple:
    """``source`` measured at each set of sizes of ``plan`` (``N`` the inner trip count, ``M`` the
    rows where it has them; kernel benchmark, pinned, min-of-K), one clock measurement around the
    step; ``{"n", "rows", "seconds_per_it", "clock_Hz"}`` dicts (``rows`` 1 without ``M``; empty
    where the clock or every point fails)."""
    out = []
    with tempfile.TemporaryDirectory(prefix=f"loopmodel-{name}-") as d:
        path = os.path.join(d, f"{name}.c")
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(source)
        before = steps.attempt("clock", measure_clock, options.compiler, 20_000, 5)
        for i, sizes in enumerate(plan):
            steps.progress(f"{what}s", i, len(plan))
            n = sizes["N"]
            m = steps.attempt(f"{what} of {n} iterations", measure_kernel, path, sizes, options.compiler, flags,
                              runs=5 if options.quick else 10, min_time_s=0.002, cpu=_first_cpu())
            if m is not None:
                out.append({"n": n, "rows": sizes.get("M", 1), "seconds_per_it": m.seconds_per_it_min})
        after = steps.attempt("clock", measure_clock, options.compiler, 20_000, 5)
    if before is None or after is None:
        return ()
    hz = (before.median_hz + after.median_hz) / 2
    return tuple({**p, "clock_Hz": hz} for p in out)


def last_level_bytes(topo, effective: dict) -> int | None:
    """Effective capacity of the last cache (bytes): the probe's measurement, else sysfs; None
    where neither is known."""
    if effective:
        return int(list(effective.values())[-1])
    caches = data_caches(topo)
    return caches[-1].size if caches else None


def coherence_plan(options: ProbeOptions, llc_bytes: int | None, root: str = "/") -> tuple:
    """``(cpus, threads, sizes, repetitions)`` of the probe's coherence step.

    Threads T = 1..N (``--quick``: 1 and N), N the largest core count of ``options``; the
    first max(N, 3) CPUs this process may use, one per physical core where there are enough
    cores (:func:`~loopmodel.measure.topology.one_cpu_per_core`; a third CPU lets ``S other``
    be set up); chunk sizes from 4 KiB to 4 x ``llc_bytes`` (32 MiB where unknown), two per
    octave (``--quick``: powers of two only), each at most the memory cap (:func:`_memory_cap`)
    over N. ``root``: where sysfs is found.
    """
    n = max(options.cores)

    allowed = allowed_cpus()
    cores = one_cpu_per_core(allowed, root)
    cpus = tuple((list(cores) + [c for c in allowed if c not in cores])[:max(n, 3)])
    threads = tuple(sorted({1, n})) if options.quick else tuple(range(1, n + 1))
    top = max(min(4 * (llc_bytes or 32 * MiB), _memory_cap() // n), 4 * KiB)
    sizes = coherence_sizes(int(top) // 64 * 64, 4 * KiB)
    if options.quick:
        sizes = tuple(s for s in sizes if s & (s - 1) == 0) or sizes[:1]
    return cpus, threads, sizes, options.repetitions


def probe_coherence(options: ProbeOptions, llc_bytes: int | None, progress=None, root: str = "/") -> tuple:
    """The coherence step: ``(CoherenceTable, provenance dict)`` (:func:`coherence_plan`,
    :func:`loopmodel.measure.coherence_bench.measure_coherence`).

    Raises:
        ToolError: the benchmark cannot be built or run (one line).
    """
    cpus, threads, sizes, reps = coherence_plan(options, llc_bytes, root)
    if progress is not None:
        progress("coherence transitions", 0, 1)
    t0 = time.monotonic()
    table = measure_coherence(cpus, sizes, threads, repetitions=reps, compiler=options.compiler, llc_bytes=llc_bytes)
    return table, coherence_provenance(table, reps, options.compiler, time.monotonic() - t0)


def coherence_provenance(table, repetitions: int, compiler: str, duration_s: float) -> dict:
    """What the ``probe`` section records about a coherence measurement: date (ISO 8601, UTC),
    CPUs, repetitions K, compiler, duration in s."""
    return {"date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "cpus": list(table.cpus),
            "threads": list(table.threads), "repetitions": repetitions, "compiler": compiler,
            "duration_s": round(duration_s, 1)}


def remeasure(data: ProbeData, step: str, points: tuple = ()) -> ProbeData:
    """``data`` with one step measured again (the probe's self-check,
    :mod:`loopmodel.measure.probe_check`), keeping per point the better of the old and the new
    measurement: a bandwidth point keeps the fastest repetitions of all its attempts
    (:func:`fastest_of`), a latency point, an instruction form and the clock the attempt whose
    repetitions agree better (smaller spread), the training kernel the faster attempt.

    Args:
        data: :class:`ProbeData` of a finished probe (its ``options`` set).
        step: ``clock``, ``bandwidth tables`` (the ``points``: ``(level, kernel, threads)``
            keys), ``link fit`` (every single-core table point and the training kernel),
            ``latency`` or ``in-core``.
        points: the keys to measure again for ``bandwidth tables``.
    Returns:
        The new :class:`ProbeData`; a re-run that fails leaves the old measurement (and a note).
    """
    steps = _Steps(None)
    if step == "clock":
        out = _reclock(data, steps)
    elif step == "bandwidth tables":
        out = _repoints(data, tuple(points), steps)
    elif step == "link fit":
        one = tuple(k for k in table_keys(data) if k[2] == 1)
        out = _repoints(data, one, steps)
        out = dataclasses.replace(out, training=_retrain(out, steps))
    elif step == "latency":
        new = steps.attempt("latency", _latency, data.topology, effective_sizes(data.topology, data.sweep),
                            data.options, steps)
        out = dataclasses.replace(data, latency=_better_latency(data.latency, new))
    elif step == "in-core":
        new = steps.attempt("in-core micro-benchmarks", _incore, data.topology, data.clock.median_hz, data.options,
                            steps) if data.clock else None
        out = dataclasses.replace(data, incore=_better_incore(data.incore, new, data.clock))
    else:
        raise ValueError(f"unknown probe step {step!r}")
    return dataclasses.replace(out, notes=tuple(dict.fromkeys(data.notes + tuple(steps.notes))))


def table_keys(data: ProbeData) -> tuple:
    """``(level, kernel, threads)`` of every point of the per-level tables."""
    return tuple((lv, k, p.threads) for lv, per in data.tables.items() for k, pts in per.items() for p in pts)


def _reclock(data: ProbeData, steps) -> ProbeData:
    """The clock measured again; the new runs replace the old where they agree better."""
    new = steps.attempt("clock", measure_clock, data.options.compiler)
    if new is None or (data.clock is not None and new.spread >= data.clock.spread):
        return data
    incore = data.incore.at_clock(new.median_hz) if data.incore is not None else None
    return dataclasses.replace(data, clock=new, incore=incore)


def _repoints(data: ProbeData, keys: tuple, steps) -> ProbeData:
    """The table points ``keys`` measured again at their sizes and repetitions."""
    tables = {lv: {k: list(pts) for k, pts in per.items()} for lv, per in data.tables.items()}
    for level, kernel, threads in keys:
        pts = tables.get(level, {}).get(kernel, [])
        old = next((p for p in pts if p.threads == threads), None)
        if old is None:
            continue
        new = steps.attempt(f"{level} {kernel} at {threads} cores", _bandwidth, kernel, threads,
                            old.bytes_per_thread, len(old.seconds), data.options)
        if new is not None:
            pts[pts.index(old)] = fastest_of(old, new)
    return dataclasses.replace(data, tables=tables)


def fastest_of(old, new):
    """The bandwidth point ``old`` with its K repetitions replaced by the K fastest of ``old``'s
    and ``new``'s (min-of-all; ``new``'s times scaled to ``old``'s sweeps and elements): the
    more runs there are, the likelier the K fastest are undisturbed, so their spread says
    whether the minimum is reproducible."""
    scale = old.sweeps * old.elements_per_thread / (new.sweeps * new.elements_per_thread)
    both = sorted(old.seconds + tuple(t * scale for t in new.seconds))
    return dataclasses.replace(old, seconds=tuple(both[:len(old.seconds)]))


def _retrain(data: ProbeData, steps) -> tuple:
    """The training kernel measured again; per level the fewer cycles per iteration kept."""
    new = {t["level"]: t for t in _training(effective_sizes(data.topology, data.sweep),
                                            data.host.get("compiler_flags") or host_flags(), data.options, steps)}
    out = []
    for t in data.training:
        n = new.get(t["level"])
        faster = n is not None and n["seconds_per_it"] * n["clock_Hz"] < t["seconds_per_it"] * t["clock_Hz"]
        out.append(n if faster else t)
    return tuple(out)


def _better_latency(old, new):
    """Per size the pointer-chase point whose repetitions agree better."""
    if old is None or new is None:
        return old or new
    by = {p.size_bytes: p for p in new.points}

    def pick(p):
        q = by.get(p.size_bytes)
        return q if q is not None and latency_spread(q) < latency_spread(p) else p
    return dataclasses.replace(old, points=tuple(pick(p) for p in old.points))


def _better_incore(old, new, clock):
    """Per instruction form the point whose repetitions agree better (both at ``clock``)."""
    if new is None:
        return old
    new = new.at_clock(clock.median_hz)
    if old is None:
        return new
    by = {(p.op, p.width, p.kind, p.form): p for p in new.points}

    def pick(p):
        q = by.get((p.op, p.width, p.kind, p.form))
        return q if q is not None and q.spread < p.spread else p
    return dataclasses.replace(old, points=tuple(pick(p) for p in old.points))
