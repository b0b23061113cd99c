"""How far to trust one prediction: the regimes a kernel at its sizes falls in (regime tags),
and the error the host's validation corpus measured for those regimes.

The tags are computed from the analysis result alone (kernel IR, traffic, ECM, in-core
result, machine model), so that ``validate --corpus`` groups its cases by the same tags that
``analyze`` attaches to a user's kernel. Each rule, with its threshold and why, is in
:func:`regime_tags`. :func:`assess` adds the error band of the host's validation
(``probe.validation`` of a probed machine model, :mod:`loopmodel.models.accuracy`) that
applies to the prediction's data location and regimes, and notes for regimes known to be
poorly modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

from fractions import Fraction

from ..compiled.asm import RESTRUCTURED
from ..ir.kernel import coefficient, strip_indices
from ..machine.probe_section import MEMORY_SPREAD_MAX
from ..models.accuracy import MIN_CASES
from ..models.incore import full_simd_lanes, strided_accesses
from ..units import format_bytes

#: regime tag -> what it means (the vocabulary shared by ``analyze`` and ``validate --corpus``)
REGIMES = {
    "streaming": "unit-stride streams, no reuse between iterations beyond the cache line",
    "reduction": "a loop-carried sum or product (scalar accumulator)",
    "latency-bound": "a loop-carried dependency chain sets the in-core time",
    "stencil": "several accesses to one array at neighbouring offsets (reuse through layer conditions)",
    "in-place": "an array read and written in the same sweep, read where it is not written (Gauss-Seidel style)",
    "strided": "an inner-loop access with a stride above one element (or transposed)",
    "split-loads": "loads not aligned to the SIMD width, crossing cache lines",
    "many-streams": "more concurrent streams than the hardware prefetchers track well",
    "short-inner-loop": "an inner loop of few iterations: loop overhead and remainder code matter",
    "expensive-ops": "division, square root or exponential in the loop body",
    "compute-bound": "the arithmetic (T_OL) exceeds the loads, stores and data transfers (T_nOL + T_data)",
    "single-precision": "float data",
    "near-capacity": "the data set is close to a cache's (effective) capacity",
    "memory-noisy": "memory-bound, and the memory bandwidth measurement it uses did not repeat on the probed host",
    "restructured": "the compiler restructured the loop nest; the prediction is for the loop as written",
}

#: many-streams: more distinct address streams than this
MANY_STREAMS = 8
#: bytes within which accesses to one array count as one stream (a 4 KiB page)
STREAM_PAGE_B = 4096
#: short-inner-loop: fewer inner iterations than this (or than 4 x the SIMD lanes)
SHORT_INNER_LOOP = 64
#: near-capacity: a working set within this factor of a level's capacity, either side
CAPACITY_FACTOR = 1.5
#: a regime whose validation p90 |error| exceeds this gets a note
POOR_P90 = 0.15

#: regimes known to be weak, cautioned where the host's validation has no figures for them (worded
#: as cautions: how far off a given host is, only its validation says). Why each: validation runs
#: predicted kernels with short inner loops 51 % and 66 % too fast, and a 2-D stencil with its data
#: in L2 41 % too fast (which level holds a working set near a capacity depends on the effective
#: capacity and the replacement policy); memory-bound measurements moved by up to 50 % between runs
#: on a shared host; and a chain's latency is a single machine-model figure that nothing overlaps
#: (a probe of a 2-vCPU host measured an ADD latency of 3.4 cy where llvm-mca's model has 4: 18 %
#: on a latency-bound T_OL).
KNOWN_WEAK = {
    "latency-bound": ("a loop-carried dependency chain sets T_OL: the prediction rests on the machine model's "
                      "latencies, which no other part of the loop hides, so any error in them shows in full"),
    "short-inner-loop": ("the inner loop is short: loop overhead, remainder code and the outer loop's work are "
                         "not in the ECM model, and the prediction may be far too optimistic"),
    "near-capacity": ("a working set is close to a cache's capacity: where the data come from is uncertain, "
                      "and the measurement may fall between the predictions of two data locations"),
    "memory-noisy": ("the data come from memory, and the memory bandwidth measurement the prediction uses did not "
                     "repeat on this host: the measured time may move by as much between runs"),
    # the corpus's transposed stencils and column-wise matrix-vector product: gcc -O3 interchanged
    # or vectorized across the outer loop, and ran 1.5-9x faster than the loop as written
    "restructured": ("the compiler restructured the loop nest (loop interchange or vectorization across an outer "
                     "loop): the prediction is for the loop as written, and the compiled code may run several "
                     "times faster; write the loops in the order the compiler chose to predict that code"),
}


@dataclass(frozen=True)
class KernelFacts:
    """What the tags need from the kernel alone (computed once per kernel, :func:`kernel_facts`).

    Attributes:
        tags: the tags that depend on the kernel only (``reduction``, ``stencil``, ``in-place``,
            ``expensive-ops``, ``single-precision``).
        unit_streams: every streamed access moves one element per inner iteration at any size.
        every_index: every streamed access depends on every loop index (no array reused across an
            outer loop).
        trips: ``(midpoint Polys of the outer loops, span of the inner loop)``: the inner loop's
            trip count with the outer indices at the middle of their ranges is span / |step|.
        streams: streamed accesses (reads and writes) grouped by array and the index terms of
            their offsets: per group, the offsets without loop indices in B (a number, or a Poly
            in the size constants).
    """

    tags: frozenset
    unit_streams: bool
    every_index: bool
    trips: tuple
    streams: tuple


@dataclass(frozen=True)
class Confidence:
    """How far to trust one prediction.

    Attributes:
        tags: regime tags (keys of :data:`REGIMES`, in that order).
        band: :class:`~loopmodel.machine.probe_section.ErrorStats` of the host's validation that applies
            (None: the machine model has no validation with enough cases).
        basis: which statistic ``band`` is: ``"L2 / stencil"``, ``"stencil"``, ``"L2"`` or
            ``"overall"`` (None with ``band``).
        level: the prediction's data location (``L1`` .. ``MEM``).
        notes: the regimes the host's validation found poorly modelled (p90 above :data:`POOR_P90`),
            and cautions for the regimes of :data:`KNOWN_WEAK` it has no figures for.
    """

    tags: tuple
    band: object = None
    basis: str | None = None
    level: str = ""
    notes: tuple = ()


def kernel_facts(kernel, machine) -> KernelFacts:
    """The size-independent part of the regime rules for ``kernel``
    (:class:`~loopmodel.ir.kernel.Kernel`) on ``machine`` (its SIMD width and cache-line size):
    :class:`KernelFacts`, see :func:`regime_tags` for the rules."""
    tags = set()
    if any(r.reassociable for r in kernel.recurrences):
        tags.add("reduction")
    reads, writes = kernel.streamed_reads(), kernel.streamed_writes()
    offsets: dict = {}
    for a in reads:
        offsets.setdefault(a.array, set()).add(a.offset)
    if any(len(v) > 1 for v in offsets.values()):
        tags.add("stencil")
    written = {(a.array, a.offset) for a in writes}
    if any(name in {w for w, _ in written} and offs - {o for w, o in written if w == name}
           for name, offs in offsets.items()):
        tags.add("in-place")
    if any(kernel.operations.get(op, 0) for op in ("DIV", "SQRT", "EXP", "LOG", "POW")):
        tags.add("expensive-ops")
    types = [a.ctype for a in kernel.arrays.values()] or [s.ctype for s in kernel.scalars.values()]
    if "float" in types:
        tags.add("single-precision")
    inner, loops = kernel.inner_loop.index, kernel.loop_indices
    groups, unit, every = {}, True, True
    for a in tuple(writes) + tuple(reads):
        c = coefficient(a.offset, inner)
        unit = unit and c.is_constant() and abs(Fraction(c.constant_value()) * kernel.inner_loop.step) == 1
        every = every and set(loops) <= a.offset.symbols
        rest = strip_indices(a.offset, loops)
        at = rest * kernel.arrays[a.array].element_size
        groups.setdefault((a.array, a.offset - rest), []).append(
            float(at.constant_value()) if at.is_constant() else at)
    mids = tuple((lp.index, lp.start + lp.stop) for lp in kernel.loops[:-1])
    inner_loop = kernel.inner_loop
    span = inner_loop.stop - inner_loop.start if inner_loop.step > 0 else inner_loop.start - inner_loop.stop
    return KernelFacts(frozenset(tags), unit, every, (mids, span),
                       tuple(tuple(g) for g in groups.values()))


def regime_tags(result, facts: KernelFacts | None = None, level: str | None = None) -> tuple:
    """Regime tags (keys of :data:`REGIMES`) of an analysis result
    (:class:`~loopmodel.workflows.analysis.AnalysisResult`), in :data:`REGIMES` order.

    The rules (``facts``: :func:`kernel_facts` of ``result.kernel`` and ``result.machine``,
    computed here when None; ``level``: the result's data location, likewise):

    * ``streaming``: streamed accesses, all moving one element per inner iteration and depending
      on every loop index (no array reused across an outer loop, as ``x`` in a matrix-vector
      product), and no stencil: each array is read at one place.
    * ``reduction``: a recurrence the compiler may reassociate (``s += ...``).
    * ``latency-bound``: the loop-carried chain's latency (``incore.dependency`` cy/it x it/CL)
      is T_OL (kerncraft-tool-paper.txt §2.3: T_OL is the largest of the throughput bounds and
      the chain); a reassociated reduction has no chain.
    * ``stencil``: one array read at two or more offsets that move with the inner loop.
    * ``in-place``: an array written and read, by accesses that move with the inner loop, at an
      offset where it is not written: values updated in the sweep feed later iterations (a
      Gauss-Seidel sweep; ``y[i] = y[i] + ...`` is an update, not in-place).
    * ``strided``: an inner-loop access moving by other than one element per iteration
      (:func:`~loopmodel.models.incore.strided_accesses`: strides, transposed access).
    * ``split-loads``: vector loads that cross a cache line in the code the in-core result times
      (its ``split``, :func:`~loopmodel.models.split_access.split_accesses`: the loop as compiled,
      not peeled, at the point's sizes), the figure the in-core model charges.
    * ``many-streams``: more than :data:`MANY_STREAMS` (8) address streams; accesses to one array
      with the same index terms whose addresses lie within :data:`STREAM_PAGE_B` (a 4 KiB page)
      count as one stream, as the L2 streamer tracks one stream per page. Eight because an Intel
      core has 10 (Sandy Bridge, Haswell) to 12 (Skylake) L1 line fill buffers: beyond 8 streams
      missing in L1, fewer than about one and a half lines per stream are in flight, and the
      probe's concurrent-streams benchmark (1, 8, 16 streams) measures the bandwidth beyond 8
      apart; the validation corpus places its stream kernels at 1 to 8 streams.
    * ``short-inner-loop``: the inner loop's trips (outer indices at the middle of their ranges)
      below max(:data:`SHORT_INNER_LOOP`, 4 x SIMD lanes): with a vector loop body unrolled
      2-4 times, 64 iterations are a few trips of it, and the remainder code, the loop exit and
      the outer loop's work, none of which the ECM model counts, become a large share.
    * ``expensive-ops``: a DIV, SQRT, EXP, LOG or POW in the loop body (long, partly pipelined units).
    * ``compute-bound``: T_OL above T_nOL plus the data transfers for the data location
      (ECM eq. 4, cross-architecture-machine-models.txt: then the arithmetic, not the data
      movement, sets T_ECM).
    * ``single-precision``: a float array (or, without arrays, a float scalar).
    * ``near-capacity``: a layer condition's requirement C_req (nonzero reuse distance) or the
      whole data set within a factor :data:`CAPACITY_FACTOR` (1.5) of the level's effective
      capacity, either side: the effective capacity the probe fits and the replacement policy
      move the transition by about that much (the "C/2" rule of ecm-model-slides.txt halves
      the capacity), so which state the level is in is uncertain. With the cache simulation
      (no layer conditions) the whole data set against each cache's size.
    * ``memory-noisy``: data from memory, not compute-bound, and the memory benchmark the ECM
      memory term is built from fails the probe self-check's repetition rule (two fastest runs
      over :data:`~loopmodel.machine.probe_section.MEMORY_SPREAD_MAX` apart,
      :func:`memory_measurement`), whatever ``--cores``. No probe or no measured memory
      bandwidth (``--mem-bw``, a machine file's figure), no tag.
    * ``restructured``: the compiled in-core analysis refused the loop block because the
      compiler interchanged the nest or vectorized across an outer loop
      (:data:`loopmodel.compiled.asm.RESTRUCTURED` in the notes): the prediction is for the loop
      as written, the measured code is another loop.
    """
    kernel, machine, defines = result.kernel, result.machine, result.defines
    facts = facts or kernel_facts(kernel, machine)
    tags = set(facts.tags)
    strided = bool(strided_accesses(kernel, defines)) if not facts.unit_streams else False
    if facts.streams and facts.every_index and not strided and "stencil" not in tags:
        tags.add("streaming")
    if strided:
        tags.add("strided")
    if _latency_bound(result.incore, result.traffic.iterations_per_unit):
        tags.add("latency-bound")
    split = result.incore.split if result.incore is not None else None
    if split is not None and split.loads > 0:
        tags.add("split-loads")
    if _stream_count(facts, defines) > MANY_STREAMS:
        tags.add("many-streams")
    trips = _inner_trips(kernel, defines, facts)
    if trips is not None and trips < max(SHORT_INNER_LOOP, 4 * full_simd_lanes(kernel, machine)):
        tags.add("short-inner-loop")
    level = level or result.location
    if _compute_bound(result.ecm, level):
        tags.add("compute-bound")
    if near_capacity(result):
        tags.add("near-capacity")
    tags |= _host_tags(result, level, "compute-bound" in tags)
    return tuple(t for t in REGIMES if t in tags)


def _host_tags(result, level: str, compute_bound: bool) -> set:
    """``restructured`` (the compiled block was refused because the compiler changed the nest)
    and ``memory-noisy`` (data from memory, not compute-bound, the memory term's measurement
    above :data:`~loopmodel.machine.probe_section.MEMORY_SPREAD_MAX`: :func:`memory_measurement`)."""
    tags = {"restructured"} if any(RESTRUCTURED in n for n in result.notes) else set()
    if level == result.machine.memory_hierarchy[-1].level and not compute_bound:
        got = memory_measurement(result)
        if got is not None and got[1] > MEMORY_SPREAD_MAX:
            tags.add("memory-noisy")
    return tags


def _latency_bound(incore, it_per_cl: float) -> bool:
    """The loop-carried chain (``incore.dependency`` cy/it) sets T_OL (cy/CL)."""
    if incore is None or incore.T_OL is None or not incore.dependency:
        return False
    return incore.dependency * it_per_cl >= incore.T_OL * (1 - 1e-6)


def _stream_count(facts: KernelFacts, defines: dict) -> int:
    """Distinct address streams: per array and index terms, the offsets (B) grouped where
    neighbours lie within :data:`STREAM_PAGE_B`."""
    if sum(len(g) for g in facts.streams) <= MANY_STREAMS:
        return sum(len(g) for g in facts.streams)
    count = 0
    for group in facts.streams:
        offsets = sorted(_bytes_at(x, defines) for x in group)
        count += 1 + sum(1 for a, b in zip(offsets, offsets[1:]) if not b - a < STREAM_PAGE_B)
    return count


def _bytes_at(offset, defines: dict) -> float:
    """``offset`` (B: a number, or a Poly in size constants) at ``defines``; inf without a value."""
    if isinstance(offset, float):
        return offset
    try:
        return float(offset.evaluate(defines))
    except KeyError:
        return float("inf")


def _inner_trips(kernel, defines: dict, facts: KernelFacts) -> float | None:
    """Inner-loop iterations, ceil(span / |step|) and at least 0, with the outer indices at the
    middle of their ranges (the mean trip count of a nest whose bounds are affine in outer
    indices); None where a bound cannot be evaluated."""
    mids, span = facts.trips
    env = defines
    try:
        if mids:
            env = dict(defines)
            for index, twice in mids:
                env[index] = Fraction(twice.evaluate(env)) / 2
        value = Fraction(span.evaluate(env))
    except (KeyError, ZeroDivisionError, TypeError, ValueError):
        return None
    return float(max(0, -(-value // abs(kernel.inner_loop.step))))


def _compute_bound(ecm, level: str) -> bool:
    """T_OL above the data-transfer part of T_ECM for data in ``level`` (cy/CL,
    :attr:`~loopmodel.models.ecm.ECMResult.T_transfer`: T_nOL and the transfers under the machine's
    overlap rules, cross-architecture-machine-models.txt eq. 4): the arithmetic, not the data
    movement, sets T_ECM. Comparing with the transfers alone would tag every kernel with data in L1
    (no transfers)."""
    if ecm is None or ecm.T_OL is None or level not in ecm.T_transfer:
        return False
    return ecm.T_OL > ecm.T_transfer[level]


def _near(requirement, capacity) -> bool:
    if requirement is None or not capacity or requirement <= 0:
        return False
    return capacity / CAPACITY_FACTOR <= requirement <= capacity * CAPACITY_FACTOR


def near_capacity(result) -> str:
    """The first working set of ``result`` near a level's capacity (see :func:`regime_tags`), as
    text (``"the 2D layer condition of L2: 1.25 MiB for 1 MiB"``), or '' where none is."""
    for lv in result.lc_levels:
        for st in lv.states:
            if not st.distance.is_zero() and _near(st.requirement_bytes, lv.cache_size):
                return (f"the {st.dimension}D layer condition of {lv.level}: {format_bytes(st.requirement_bytes)} "
                        f"for {format_bytes(lv.cache_size)}")
        if lv.data_set is not None and _near(lv.data_set.requirement_bytes, lv.capacity):
            return (f"the data set in {lv.level}: {format_bytes(lv.data_set.requirement_bytes)} for "
                    f"{format_bytes(lv.capacity)}")
    if result.lc_levels or result.simulation is None:
        return ""
    data = sum(size for _, size in result.simulation.layout.values())
    factor, cores = result.options.cache_factor, result.options.cores
    for c in result.machine.caches:
        capacity = c.size * factor / min(max(cores, 1), c.cores_per_group) * cores if c.size else 0
        if _near(data, capacity):
            return f"the data set in {c.level}: {format_bytes(data)} for {format_bytes(capacity)}"
    return ""


def memory_measurement(result) -> tuple | None:
    """``(benchmark point, gap)``: the memory benchmark the ECM memory term of ``result`` is built
    from (:attr:`~loopmodel.models.ecm.Contribution.measured`, a
    :class:`~loopmodel.machine.bandwidth.ChosenBandwidth`) and the gap between its two fastest
    repetitions on the probed host (a fraction,
    :meth:`~loopmodel.machine.probe_section.ProbeSection.memory_gap`); None without a probe, an ECM
    result, or a memory term from a measured figure the probe recorded."""
    probe, ecm = result.machine.probe, result.ecm
    if probe is None or ecm is None:
        return None
    for c in ecm.contributions:
        point = c.measured
        if point is not None and point.level == "MEM":
            gap = probe.memory_gap(point.kernel, point.cores)
            if gap is not None:
                return point, gap
    return None


def assess(result, summary=None, facts: KernelFacts | None = None) -> Confidence:
    """The :class:`Confidence` of ``result``.

    Args:
        result: :class:`~loopmodel.workflows.analysis.AnalysisResult`.
        summary: the host's :class:`~loopmodel.machine.probe_section.AccuracySummary` (None: read from
            ``result.machine.probe.validation``; False: none).
        facts: :func:`kernel_facts` of the kernel (computed when None).

    The band is, for the prediction's data location, the statistic of the most specific entry
    with at least :data:`~loopmodel.models.accuracy.MIN_CASES` cases: of the (level, regime)
    pairs of the result's tags the one with the largest p90 (conservative), else the regime
    with the largest p90, else the level, else all cases. Notes: a tag whose validation p90
    exceeds :data:`POOR_P90` (15 %) with enough cases; a tag of :data:`KNOWN_WEAK` that the
    validation does not cover with enough cases, as a caution.
    """
    level = result.location
    tags = regime_tags(result, facts, level)
    if summary is None:
        probe = result.machine.probe
        summary = probe.validation if probe else None
    band, basis = choose_band(summary or None, level, tags)
    return Confidence(tags, band, basis, level, tuple(regime_notes(summary or None, level, tags, result)))


def _detail(tag: str, result) -> str:
    """What in ``result`` puts it in the regime ``tag`` (for the caution), or ''."""
    if result is None:
        return ""
    if tag == "memory-noisy":
        got = memory_measurement(result)
        if got is None:
            return ""
        point, gap = got
        return (f" (the {point.kernel} benchmark at {point.cores} core{'s' if point.cores > 1 else ''} that the "
                f"memory term uses: its two fastest runs {gap * 100:.0f} % apart in the probe)")
    if tag == "near-capacity":
        return f" ({near_capacity(result)})"
    if tag == "short-inner-loop":
        trips = _inner_trips(result.kernel, result.defines, kernel_facts(result.kernel, result.machine))
        return f" ({trips:g} iterations of '{result.kernel.inner_loop.index}')" if trips is not None else ""
    return ""


def _enough(stats) -> bool:
    return stats is not None and stats.count >= MIN_CASES


def choose_band(summary, level: str, tags) -> tuple:
    """``(ErrorStats, basis)`` of :func:`assess`'s rule, or ``(None, None)``."""
    if summary is None:
        return None, None
    pairs = [(summary.by_level_regime.get((level, t)), f"{level} / {t}") for t in tags]
    regimes = [(summary.by_regime.get(t), t) for t in tags]
    for group in (pairs, regimes, [(summary.by_level.get(level), level)], [(summary.overall, "overall")]):
        found = [(s, basis) for s, basis in group if _enough(s)]
        if found:
            return max(found, key=lambda sb: sb[0].p90)
    return None, None


def regime_notes(summary, level: str, tags, result=None) -> list:
    """Notes on the regimes of ``tags`` known to be poorly modelled (see :func:`assess`)."""
    notes, covered = [], set()
    for t in tags:
        stats, where = None, ""
        if summary is not None:
            pair = summary.by_level_regime.get((level, t))
            stats, where = (pair, f" with data in {level}") if _enough(pair) else (summary.by_regime.get(t), "")
        if _enough(stats):
            covered.add(t)
            if stats.p90 > POOR_P90:
                notes.append(f"on this host, predictions in the {t} regime{where} were off by up to "
                             f"{stats.p90 * 100:.0f} % (p90, n={stats.count}; {t}: {REGIMES[t]})")
    for t in tags:
        if t in KNOWN_WEAK and t not in covered:
            notes.append(f"caution ({t}): {KNOWN_WEAK[t]}{_detail(t, result)}")
    return notes
