"""An *estimated* MESI transition table (:class:`~loopmodel.machine.coherence.CoherenceTable`)
derived from a machine model's own figures, for models that were not probed with ``loopmodel
machine probe --coherence`` (every bundled model): ``loopmodel omp`` can then be tried on them.

What each transition means follows benchmark-based-coherence-model.txt §III-B (the chunk's MESI
state and whether the acting thread holds a valid copy: ``own`` or ``other``) and §III-C / §IV-A
(the time of one of T threads, all taking the same transition at once on separate chunks of
the same size, unit stride). The rules that replace the paper's benchmarks (times in cycles per
64-B cache line, CL, turned into seconds with the clock; a chunk of ``s`` bytes takes s / CL
lines):

* **Streaming a level** (cross-architecture-machine-models.txt §3.4.1-3.4.3, eq. 1-4;
  ecm-model-slides.txt "ECM model - composition"): a load stream is one CL per CL on every link
  between the core and the data's level, a store stream adds the write-back of the modified line
  and, where a level at or above the link allocates on a write miss, the write-allocate load.
  The links' busy times (``machine.link_bandwidths_cy``; a ``measured`` memory link takes the
  benchmark bandwidth of the kernel closest to the stream, write-allocate traffic included,
  :func:`~loopmodel.machine.bandwidth.choose_bandwidth`) and the in-core L1 limits (loads:
  ``in_core.load``, in T_nOL; stores: ``in_core.store``, in T_OL or T_nOL as
  ``machine.stores_overlap`` says) combine by the model's ``overlap`` rule
  (:func:`~loopmodel.models.ecm.contributions_for`, :func:`~loopmodel.models.ecm.combine`). A
  farther level is never taken faster than a nearer one (running maximum over the levels).
* **Sharing** (ecm-model-slides.txt "ECM model - saturation"; cross-architecture paper §3.4.4
  and §5.2.2): the m = min(T, cores per ccNUMA domain) threads of the fullest domain (threads
  fill domains one after the other) share its memory interface, so one thread's time per CL is
  max(T_ECM, m · T_Mem) (the saturation rule of :func:`~loopmodel.models.saturation.domain_rate`,
  per thread); a link with ``shared_by`` > 1 likewise gives max(T_ECM, min(T,
  shared_by) · busy time).
* **Where a chunk is** (benchmark-based paper §IV-B: "parallel capacity misses" when threads
  share the last-level cache): in the first cache level whose capacity share holds it, the
  share being the level's size over the active threads on one instance, min(T,
  ``cores_per_group``) (the per-core share once the group is full); else in memory.

The transitions:

* own hits ``L M/E/S own``, ``S M/E own``: the chunk streamed from the level it is in (load or
  store stream). ``S S own`` adds the invalidation of the other sharers (below).
* ``L I``, ``S I`` (in no cache): the stream from memory, shared by the domain's threads;
  stores with their write-allocate traffic.
* ``other`` (the chunk is valid in another core's caches; §IV-B, Fig. 3): the transfer goes
  through the nearest level shared by the T threads' cores, the first cache level with
  ``cores_per_group`` >= max(T, 2) (the slowest thread's partner is the farthest one), else
  memory (other socket, other CCX: no shared cache). The owner holds at most the capacity
  share of its level above that one (the last bytes it wrote in its L1, the ones before in its
  L2, ...: LRU); those bytes cost the requester's stream from the shared level plus the owner's
  forward: the write-back of each line from the owner's level down to the shared level, cycles
  of those links added (§IV-B, Fig. 3: a load of data modified in another L1 is about half as
  fast as one of shared data). Clean data (E, S) need no forward where the shared level is
  inclusive (it holds a copy) or is memory (memory is up to date). The rest of the chunk
  streams from the level it is in. Stores to other-owned or shared lines (``S M/E/S other``,
  ``S S own``) add one invalidation per line the others hold: the path from the core to the
  shared level priced as one line transfer toward the core. Hence an ``other`` transition is
  slower than the ``own`` one while the chunk fits the private caches; beyond them it can be
  faster, as on real hardware: re-reading one's own chunk larger than a cache in order misses
  it entirely (LRU), while the requester of another's chunk finds the owner's last bytes in
  the owner's caches.
* a published core-to-core latency ``L`` (seconds) makes each line that crosses between cores
  (forward and invalidation) cost at least L / :data:`MLP_LINES` (Little's law with that many
  misses in flight): max(bandwidth rule, latency rule).

``region_overhead`` (fork/join) is not estimated: left empty (0 s). Every table's ``notes`` say
it is estimated, not measured, and by which rules. Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..machine.coherence import LOAD_KEYS, STORE_KEYS, TRANSITION_KEYS, CoherenceTable
from .ecm import combine, contributions_for, link_bandwidth, memory_busy, shared_links
from .saturation import domain_counts, domain_rate

#: cache-line misses one core keeps in flight (the 10 line fill buffers of Intel cores since
#: Nehalem), the memory-level parallelism that turns a core-to-core latency into a rate
MLP_LINES = 10

#: smallest default chunk size, bytes (benchmark-based paper §IV-B starts its plots at 4 KiB)
SMALLEST_SIZE = 4096

_OWN = {"L M own": "load", "L E own": "load", "L S own": "load", "S M own": "store", "S E own": "store"}


@dataclass(frozen=True)
class _LinkTraffic:
    """Cache lines per CL of one link (the fields :func:`~loopmodel.models.ecm.contributions_for` reads)."""
    level: str
    loads_cl: float
    stores_cl: float


@dataclass(frozen=True)
class _Traffic:
    levels: tuple


@dataclass(frozen=True)
class _InCore:
    T_OL: float
    T_nOL: float


@dataclass(frozen=True)
class _Rates:
    """Cycles per CL of one thread among ``threads``: ``load[d]``/``store[d]`` with the data in
    level d (0 = L1 ... last = MEM), ``down[k]``: link k's write-back of one line (away from the
    core), ``up[k]``: link k's transfer of one line toward the core, ``c2c``: the latency floor
    per line crossing between cores (0: none)."""
    threads: int
    load: tuple
    store: tuple
    down: tuple
    up: tuple
    c2c: float


def default_sizes(machine) -> tuple:
    """Chunk sizes, bytes: powers of two from 4 KiB up to the first at or beyond 4x the size of
    the last cache level (the memory plateau even for one thread; benchmark-based paper §IV-B
    plots sizes from KiB to beyond the L3)."""
    top = 4 * max(lv.size or 0 for lv in machine.caches)
    n = max(SMALLEST_SIZE, 2 ** math.ceil(math.log2(max(top, 1))))
    return tuple(2 ** k for k in range(int(math.log2(SMALLEST_SIZE)), int(math.log2(n)) + 1))


def default_threads(machine) -> tuple:
    """Thread counts: 1, 2, 4, ... below ``cores_per_socket``, ``cores_per_socket`` and, with
    several sockets, all cores (one thread per core; :class:`~loopmodel.models.coherence_timing.Timing`
    interpolates linearly between them and refuses counts beyond the last)."""
    out = {2 ** k for k in range(0, 13) if 2 ** k < machine.cores_per_socket}
    out |= {machine.cores_per_socket, machine.cores_per_socket * machine.sockets}
    return tuple(sorted(out))


def capacity_share(machine, k: int, threads: int) -> float:
    """Bytes of cache level ``k`` (index into ``machine.caches``) one of ``threads`` threads
    holds: size / min(threads, cores_per_group) (benchmark-based paper §IV-B, parallel capacity
    misses); inf for memory (k beyond the caches)."""
    if k >= len(machine.caches):
        return math.inf
    lv = machine.caches[k]
    return (lv.size or 0.0) / max(1, min(threads, lv.cores_per_group))


def fit_level(machine, size: float, threads: int) -> int:
    """Index of the level (0 = L1 ... last = MEM) a chunk of ``size`` bytes of one of
    ``threads`` threads is in: the first whose :func:`capacity_share` holds it."""
    n = len(machine.caches)
    return next((k for k in range(n) if size <= capacity_share(machine, k, threads)), n)


def transfer_level(machine, threads: int) -> int:
    """Index of the level a line crosses between the cores of ``threads`` threads: the first
    cache level shared by max(threads, 2) cores (``cores_per_group``), else memory (module
    docstring, ``other`` transitions)."""
    pair = max(threads, 2)
    n = len(machine.caches)
    return next((k for k in range(n) if machine.caches[k].cores_per_group >= pair), n)


def _stream_traffic(machine, location: int, store: bool) -> _Traffic:
    """Lines per CL on each link of a load or store stream with the data in level ``location``
    (module docstring: a write-allocating level at or above the link pulls the line over it;
    write-through levels send stores on wherever the data are)."""
    out, allocate = [], False
    for k, lv in enumerate(machine.caches):
        allocate = allocate or lv.write_allocate
        inside = k < location
        loads = 1.0 if inside and (not store or allocate) else 0.0
        stores = 1.0 if store and (inside or not lv.write_back) else 0.0
        out.append(_LinkTraffic(lv.level, loads, stores))
    return _Traffic(tuple(out))


def _bandwidths(machine, store: bool) -> list:
    """Per link the bandwidth :func:`~loopmodel.models.ecm.contributions_for` takes
    (:func:`~loopmodel.models.ecm.link_bandwidth` of the link's traffic in a load or store stream
    from memory: a ``measured`` link takes the benchmark closest to it).

    Raises:
        ModelError: a ``measured`` link without benchmark measurements.
    """
    lines = _stream_traffic(machine, len(machine.caches), store).levels
    return [link_bandwidth(machine, lt, machine.link(lt.level), None) for lt in lines]


def _in_core(machine, store: bool) -> _InCore:
    """L1 cycles per CL of a load or store stream at the widest SIMD width (cross-architecture
    paper §3.4.1 eq. 1): CL over the load or store bytes per cycle at that width."""
    cl = machine.cacheline_size
    ls = machine.in_core.store if store else machine.in_core.load
    cy = cl / ls.bytes_per_cycle_at(min(machine.in_core.simd_width, cl))
    if store and machine.stores_overlap():
        return _InCore(cy, 0.0)
    return _InCore(0.0, cy)


def _stream_cycles(machine, location: int, store: bool, threads: int) -> float:
    """One thread's cycles per CL of a stream from level ``location`` while ``threads`` threads
    stream at once (module docstring: ECM eq. 4, then the saturation of the memory domain and of
    ``shared_by`` links: :func:`~loopmodel.models.saturation.domain_rate`, the links of
    :func:`~loopmodel.models.ecm.shared_links`)."""
    parts = contributions_for(_stream_traffic(machine, location, store), machine, location,
                              _bandwidths(machine, store))
    t = combine(_in_core(machine, store), parts, machine)
    m = domain_counts(threads, machine.cores_per_numa_domain)[0]  # the fullest domain
    t = m / domain_rate(m, t, memory_busy(parts))
    for _, group, busy in shared_links(parts, machine):
        k = min(threads, group)
        t = k / domain_rate(k, t, busy)
    return t


def _rates(machine, threads: int, c2c_latency) -> _Rates:
    """The per-line figures of :class:`_Rates` for ``threads`` threads."""
    levels = range(len(machine.memory_hierarchy))
    load, store = [], []
    for d in levels:  # running maximum: a farther level is never faster
        load.append(max([_stream_cycles(machine, d, False, threads)] + load[-1:]))
        store.append(max([_stream_cycles(machine, d, True, threads)] + store[-1:]))
    cl = machine.cacheline_size
    up_bw, down_bw = _bandwidths(machine, False), _bandwidths(machine, True)
    up, down = [], []
    for k, lv in enumerate(machine.caches):
        link = machine.link(lv.level)
        up.append(link.busy_cy(cl, 0.0, up_bw[k][0]) + link.penalty_load)
        down.append(link.busy_cy(0.0, cl, down_bw[k][0]) + link.penalty_store)
    c2c = (c2c_latency or 0.0) * machine.clock / MLP_LINES
    return _Rates(threads, tuple(load), tuple(store), tuple(down), tuple(up), c2c)


def _forward_cycles(machine, r: _Rates, held: float, x: int) -> float:
    """Cycles of the owner's write-back of ``held`` bytes down to level ``x``: the last bytes it
    wrote are in its L1, the ones before in its L2, ... (LRU), each level's bytes over the links
    from there to ``x``, at least the core-to-core latency floor per line."""
    cycles, above = 0.0, 0.0
    for k in range(x):
        upto = max(above, min(held, capacity_share(machine, k, r.threads)))
        cycles += (upto - above) * max(sum(r.down[k:x]), r.c2c)
        above = upto
    return cycles


def _other_seconds(machine, r: _Rates, size: float, state: str, store: bool) -> float:
    """Seconds of one thread for a load or store of a chunk valid in another core's cache in
    ``state`` (M, E or S; module docstring, ``other`` transitions)."""
    x = transfer_level(machine, r.threads)
    held = min(size, capacity_share(machine, x - 1, r.threads)) if x > 0 else 0.0
    shared = machine.memory_hierarchy[x] if x < len(machine.caches) else None
    clean_copy = state != "M" and (shared is None or shared.type == "inclusive")
    forward = 0.0 if clean_copy else _forward_cycles(machine, r, held, x)
    inval = max(sum(r.up[:x]), r.c2c) if store else 0.0
    stream = r.store if store else r.load
    rest_level = max(fit_level(machine, size, r.threads), x)
    cycles = held * (stream[x] + inval) + forward + (size - held) * stream[rest_level]
    return cycles / machine.cacheline_size / machine.clock


def _own_seconds(machine, r: _Rates, size: float, store: bool, invalidate: bool) -> float:
    """Seconds of one thread streaming its own chunk from the level it is in; ``invalidate``:
    the chunk is shared (``S S own``), the others' copies are invalidated line by line."""
    d = fit_level(machine, size, r.threads)
    cycles = size * (r.store if store else r.load)[d]
    if invalidate:
        x = transfer_level(machine, r.threads)
        held = min(size, capacity_share(machine, x - 1, r.threads)) if x > 0 else 0.0
        cycles += held * max(sum(r.up[:x]), r.c2c)
    return cycles / machine.cacheline_size / machine.clock


def _seconds(machine, r: _Rates, key: str, size: float) -> float:
    """Estimated seconds one of ``r.threads`` threads takes for transition ``key`` on a chunk of
    ``size`` bytes (unit stride), all threads at once (rules: module docstring;
    benchmark-based-coherence-model.txt §III-C for the meaning, cross-architecture paper eq. 1-4
    and ecm-model-slides.txt "saturation" for the rates), with the per-line figures ``r``
    computed once per thread count."""
    action, state, *who = key.split()
    store = action == "S"
    if state == "I":
        return size * (r.store if store else r.load)[-1] / machine.cacheline_size / machine.clock
    if who == ["own"]:
        return _own_seconds(machine, r, size, store, store and state == "S")
    return _other_seconds(machine, r, size, state, store)


def estimate_table(machine, sizes=None, threads=None, core_to_core_latency: float | None = None) -> CoherenceTable:
    """An estimated :class:`~loopmodel.machine.coherence.CoherenceTable` for ``machine``: every
    transition of benchmark-based-coherence-model.txt §III-B/§IV at every size and thread count,
    derived from the model's figures by the rules of this module's docstring (ECM eq. 1-4 of
    cross-architecture-machine-models.txt, saturation of ecm-model-slides.txt), not measured.

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        sizes: chunk bytes per thread, ascending (default :func:`default_sizes`).
        threads: thread counts, ascending (default :func:`default_threads`).
        core_to_core_latency: a published core-to-core latency in seconds, charged per line
            that crosses between cores with :data:`MLP_LINES` in flight (None: not charged).

    Returns:
        the table, seconds per thread, ``region_overhead`` empty, ``notes`` saying how it was
        estimated.

    Raises:
        ValueError: sizes or thread counts the table does not accept, a latency <= 0.
        ModelError: a ``measured`` link without benchmark measurements.
    """
    sizes = tuple(sizes) if sizes is not None else default_sizes(machine)
    threads = tuple(threads) if threads is not None else default_threads(machine)
    if core_to_core_latency is not None and not 0 < core_to_core_latency < 1e-3:
        raise ValueError(f"core-to-core latency must be in (0, 1 ms), got {core_to_core_latency} s")
    if not sizes or min(sizes) <= 0 or not threads or min(threads) < 1:
        raise ValueError("coherence estimate: need sizes > 0 and thread counts >= 1")
    rates = {t: _rates(machine, t, core_to_core_latency) for t in threads}
    seconds = {key: {t: tuple(_seconds(machine, rates[t], key, s) for s in sizes) for t in threads}
               for key in LOAD_KEYS + STORE_KEYS}
    return CoherenceTable(sizes, threads, seconds, notes=estimate_notes(machine, core_to_core_latency))


def estimate_notes(machine, core_to_core_latency: float | None) -> tuple:
    """The ``notes`` of an estimated table: that it is estimated, not measured, and how."""
    latency = (f"a core-to-core latency of {core_to_core_latency * 1e9:.4g} ns with {MLP_LINES} lines in flight "
               "is the floor of each line crossing between cores" if core_to_core_latency else
               "no core-to-core latency given: line transfers between cores at the link bandwidths only")
    return (f"ESTIMATED from the figures of machine model '{machine.name}', not measured "
            "(loopmodel.models.coherence_estimate; measure a host with `loopmodel machine probe --coherence`)",
            "own hits and I: ECM streams (link bandwidths, L1 load/store limits, overlap rule) from the level "
            "the chunk's capacity share fits in, memory shared by the threads of a ccNUMA domain",
            "other: via the nearest level shared by the threads' cores (else memory), plus the owner's "
            "write-back of modified (or non-inclusively held) lines and one invalidation per line for stores",
            latency,
            "region overhead not estimated (0 s)")
