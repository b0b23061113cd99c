"""Predicted time of an OpenMP program with the coherence-aware model of
benchmark-based-coherence-model.txt (§III): every phase's accesses become per-thread chunks
(§III-A), every chunk's MESI state is tracked across the phases (§III-B) and each phase is
timed by Algorithm 1 (§III-C) from the host's transition benchmarks (§IV).

Chunk extraction (§III-A): the worksharing loop of a ``parallel`` phase is split among the T
threads with ``schedule(static)`` (:func:`~loopmodel.models.coherence.static_schedule`); the
other phases run on thread 0. A thread's accesses to one array in one phase are one read and
one write statement over the bounding triplet of all its references (``x[i-1]`` and
``x[i+1]`` are one stream whose neighbours are reused from cache, as the paper's DAXPY turns
element accesses into region accesses); reads come before writes. The bounding triplet is
exact for dense affine accesses and an over-approximation otherwise (the paper does the same
for what triplets cannot describe).

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import math

from ..errors import ModelError
from ..ir.omp import OmpProgram, Phase, Repeat
from .coherence import Chunk, ChunkStates, Statement, phase_time, static_schedule, transition_label
from .coherence_timing import FALLBACK, Timing

#: Transitions that are misses on data another thread's cache holds exclusively.
_REMOTE = ("L M other", "L E other", "S M other", "S E other")


def _thread_box(phase: Phase, threads: int) -> dict:
    """thread -> {var: (first value, last value)} of the phase's loops for that thread."""
    loops = phase.loops
    if not loops or any(lp.trips == 0 for lp in loops):
        return {}
    outer = loops[0]
    if phase.kind == "parallel":
        sched = static_schedule(0, outer.trips, threads)
    else:
        sched = {0: (0, outer.trips)}
    inner = {lp.var: (lp.lo, lp.lo + (lp.trips - 1) * lp.step) for lp in loops[1:]}
    return {t: {outer.var: (outer.lo + a * outer.step, outer.lo + (b - 1) * outer.step), **inner}
            for t, (a, b) in sched.items()}


def _triplet(access, box: dict, steps: dict) -> tuple:
    """``(start, stop, step)`` (flat elements, stop exclusive) of ``access`` over ``box``."""
    lo = hi = access.offset
    step = 0
    for var, c in access.coeffs:
        if var not in box or c == 0:
            continue
        a, b = box[var]
        lo += min(c * a, c * b)
        hi += max(c * a, c * b)
        if a != b:
            step = math.gcd(step, abs(c * steps[var]))
    return lo, hi + 1, step or 1


def _merge(a: tuple, b: tuple) -> tuple:
    step = math.gcd(math.gcd(a[2], b[2]), abs(b[0] - a[0]))
    return min(a[0], b[0]), max(a[1], b[1]), step or 1


def phase_statements(program: OmpProgram, phase: Phase, threads: int) -> list:
    """The phase's :class:`~loopmodel.models.coherence.Statement` list for ``threads`` threads:
    per array, one read statement (if read) then, after all reads, one write statement (if
    written), each mapping thread -> :class:`~loopmodel.models.coherence.Chunk` (see the
    module docstring for the bounding triplet)."""
    boxes = _thread_box(phase, threads)
    steps = {lp.var: lp.step for lp in phase.loops}
    regions: dict = {}
    for acc in phase.accesses:
        for t, box in boxes.items():
            tri = _triplet(acc, box, steps)
            key = (acc.kind, acc.array)
            per_t = regions.setdefault(key, {})
            per_t[t] = _merge(per_t[t], tri) if t in per_t else tri
    out = []
    for kind in ("read", "write"):
        for (k, array), per_t in regions.items():
            if k != kind:
                continue
            size = program.arrays[array].element_size
            out.append(Statement(kind, {t: Chunk(array, a, b, s, size) for t, (a, b, s) in per_t.items()}))
    return out


@dataclass(frozen=True)
class TransitionTime:
    """One transition's part of a phase: ``transition`` (paper notation, e.g.
    ``"L_t from (M,{0})"``), ``benchmark`` (the measured key, e.g. ``"L M other"``),
    ``seconds`` summed over the threads, ``share`` of the phase's summed thread time (0..1)."""
    transition: str
    benchmark: str
    seconds: float
    share: float


@dataclass(frozen=True)
class PhasePrediction:
    """One executed phase: ``index`` (0-based, execution order), ``line``, ``kind``, ``label``,
    ``iteration`` (None outside repeats), ``seconds`` (per thread the larger of Algorithm 1's
    memory time and the in-core time, max over threads, plus the fork/join overhead of a
    parallel loop), ``memory_seconds`` (Algorithm 1's θ), ``core_seconds`` (in-core time of
    the slowest thread, None where unknown), ``bound`` (``"memory"`` or ``"in-core"``),
    ``overhead_seconds``, ``transitions`` (:class:`TransitionTime`, largest first), ``hints``
    and ``notes`` (text)."""
    index: int
    line: int
    kind: str
    label: str
    iteration: int | None
    seconds: float
    overhead_seconds: float
    transitions: tuple
    hints: tuple = ()
    notes: tuple = ()
    memory_seconds: float = 0.0
    core_seconds: float | None = None
    bound: str = "memory"


@dataclass(frozen=True)
class RepeatTime:
    """A repeated block: ``line``, ``count`` and the predicted ``seconds`` of each iteration."""
    line: int
    count: int
    seconds: tuple


@dataclass(frozen=True)
class ProgramPrediction:
    """The whole program on ``threads`` threads: ``total_seconds`` (sum of the phases, one
    execution from all chunks in (I, ∅)), ``phases`` (:class:`PhasePrediction`, execution
    order), ``repeats`` (:class:`RepeatTime`), ``notes``."""
    threads: int
    total_seconds: float
    phases: tuple
    repeats: tuple = ()
    notes: tuple = ()


@dataclass(frozen=True)
class OmpRow:
    """One thread count of ``loopmodel omp``: ``prediction`` (:class:`ProgramPrediction`),
    ``measured`` (:class:`~loopmodel.measure.omp_bench.ProgramMeasurement` or None),
    ``speedup`` (predicted time on the smallest thread count / this one),
    ``measured_speedup`` (same for the measurement, or None)."""
    threads: int
    prediction: ProgramPrediction
    measured: object = None
    speedup: float = 1.0
    measured_speedup: float | None = None


def _transitions(pt) -> tuple:
    total = sum(pt.transitions.values()) or 1.0
    items = [TransitionTime(transition_label(k, pt.holders[k]), k, s, s / total)
             for k, s in pt.transitions.items()]
    return tuple(sorted(items, key=lambda x: -x.seconds))


def _hints(phase: Phase, parts: tuple, threads: int, shared) -> tuple:
    """A hint where the phase spends half its time or more in misses on lines another
    thread's cache holds: false sharing where ``shared()`` (the share of the phase's lines
    that chunks of several threads touch, :func:`shared_lines`) is half or more, else data
    left in the caches of the threads of an earlier phase."""
    if not parts or phase.kind != "parallel" or threads < 2:
        return ()
    top = parts[0]
    if top.benchmark not in _REMOTE or top.share < 0.5:
        return ()
    shared = shared()
    if shared >= 0.5:
        return (f"{100 * top.share:.0f} % of the time in {top.transition}: the threads' chunks share cache "
                f"lines ({100 * shared:.0f} % of the lines the phase touches; false sharing), so each line moves "
                "between their caches; give each thread whole cache lines (contiguous blocks rather than "
                "interleaved elements)",)
    return (f"{100 * top.share:.0f} % of the time in {top.transition}: the threads read data "
            "another thread's cache holds; initialise the arrays in parallel with the same "
            "static schedule (first touch) so each thread works on the chunks it wrote",)


def shared_lines(statements, line: int) -> float:
    """The share (0..1) of the cache lines a phase touches, per array, that chunks of two or
    more threads touch (:meth:`~loopmodel.models.coherence.Chunk.lines`); 0 for no lines."""
    runs: dict = {}
    for st_ in statements:
        for t, c in st_.chunks.items():
            runs.setdefault(c.array, []).extend((lo, hi, t) for lo, hi in c.lines(line))
    touched = shared = 0
    for rs in runs.values():
        events = sorted([(lo, 1, t) for lo, _, t in rs] + [(hi, -1, t) for _, hi, t in rs])
        active: dict = {}
        pos = None
        for x, d, t in events:
            if pos is not None and x > pos and active:
                touched += x - pos
                shared += (x - pos) if len(active) > 1 else 0
            pos = x
            active[t] = active.get(t, 0) + d
            if not active[t]:
                del active[t]
    return shared / touched if touched else 0.0


def _iterations(phase: Phase, threads: int) -> dict:
    """thread -> iterations of the whole loop nest it executes."""
    out = {}
    for t, box in _thread_box(phase, threads).items():
        n = 1
        for lp in phase.loops:
            a, b = box[lp.var]
            n *= (b - a) // lp.step + 1
        out[t] = n
    return out


def _phase_seconds(pt, phase: Phase, team: int, core_per_it) -> tuple:
    """``(seconds, core seconds or None)``: max over threads of max(θ_L, θ_S, in-core time).
    Memory transfers and in-core execution overlap (the ECM model's T_OL, ecm-model-slides.txt;
    benchmark-based-coherence-model.txt §III-C overlaps reads and writes likewise)."""
    if core_per_it is None:
        return pt.seconds, None
    core = {t: n * core_per_it for t, n in _iterations(phase, team).items()}
    total = max((max(pt.reads.get(t, 0.0), pt.writes.get(t, 0.0), c) for t, c in core.items()), default=pt.seconds)
    return max(total, pt.seconds), max(core.values(), default=0.0)


def predict_program(program: OmpProgram, timing: Timing, threads: int, core: dict | None = None) -> ProgramPrediction:
    """Predict every phase of ``program`` on ``threads`` threads.

    A repeat's iterations are simulated until one leaves the chunk states as it found them:
    each phase's time is a function of the states and the phase alone, so every later
    iteration is the same, and is copied rather than simulated again; the result is the same
    as simulating every iteration.

    Args:
        program: :class:`~loopmodel.ir.omp.OmpProgram`.
        timing: :class:`~loopmodel.models.coherence_timing.Timing` over the host's table.
        threads: T >= 1 (parallel phases use T threads, the others thread 0 with T = 1 in the
            timing functions).
        core: phase -> in-core seconds per iteration of its loop nest on one core (the
            ECM model's T_OL per iteration / clock), or None per phase where unknown; phases
            not in it are timed by their memory accesses alone.
    Returns:
        :class:`ProgramPrediction`.
    Raises:
        ModelError: T beyond the measured thread counts, a transition without a timing, or a
            chunk that touches too many separate cache lines (naming the phase's line).
    """
    sim = _Simulation(program, timing, threads, core or {})
    for item in program.items:
        if isinstance(item, Repeat):
            sim.repeat(item)
        else:
            sim.phase(item, None)
    phases = sim.phases
    notes = tuple(program.notes) + tuple(
        f"'{k}' was not measured on this host; timed as '{FALLBACK[k]}'" for k in sorted(sim.used_fallback))
    return ProgramPrediction(threads, sum(p.seconds for p in phases), tuple(phases),
                             _repeat_times(program, phases), notes)


class _Simulation:
    """The chunk states and the :class:`PhasePrediction` list while a program is predicted."""

    def __init__(self, program: OmpProgram, timing: Timing, threads: int, core: dict):
        self.program, self.timing, self.threads, self.core = program, timing, threads, core
        self.states = ChunkStates()
        self.phases: list = []
        self.used_fallback: set = set()

    def phase(self, phase: Phase, iteration: int | None) -> None:
        """Time one executed phase from the current states and move the states on."""
        timing, threads = self.timing, self.threads
        team = threads if phase.kind == "parallel" else 1
        statements = phase_statements(self.program, phase, team)
        try:
            for c in (c for st_ in statements for c in st_.chunks.values()):
                c.check_lines(timing.cacheline_size)
        except ModelError as exc:
            raise ModelError(exc.message, file=self.program.source, line=phase.line) from None
        pt = phase_time(statements, self.states, timing.seconds, timing.seconds, team, timing.cacheline_size)
        self.states = pt.states
        self.used_fallback |= {k for k in pt.transitions if timing.key_for(k) != k}
        overhead = timing.overhead(threads) if phase.kind == "parallel" else 0.0
        seconds, core_s = _phase_seconds(pt, phase, team, self.core.get(phase))
        parts = _transitions(pt)
        bound = "in-core" if seconds > pt.seconds else "memory"
        shared = lambda: shared_lines(statements, timing.cacheline_size)  # noqa: E731
        hints = _hints(phase, parts, threads, shared) if bound == "memory" else ()
        self.phases.append(PhasePrediction(len(self.phases), phase.line, phase.kind, phase.label, iteration,
                                           seconds + overhead, overhead, parts, hints, tuple(phase.notes),
                                           pt.seconds, core_s, bound))

    def repeat(self, rep: Repeat) -> None:
        """Every iteration of ``rep``: simulated until one leaves the chunk states as it found
        them (a steady state); the later iterations are copies of that one."""
        before = None
        for k in range(rep.count):
            key = self.states.key()
            if key == before and rep.body:
                last = self.phases[-len(rep.body):]
                for j in range(k, rep.count):
                    self.phases += [dataclasses.replace(p, index=len(self.phases) + m, iteration=j)
                                    for m, p in enumerate(last)]
                return
            before = key
            for ph in rep.body:
                self.phase(ph, k)


def repeat_slices(program: OmpProgram) -> tuple:
    """``((repeat, ((start, stop), ...)), ...)``: for each :class:`~loopmodel.ir.omp.Repeat`,
    the executed-phase index range of each of its iterations (execution order)."""
    return tuple((item, its) for item, its in program.item_slices() if isinstance(item, Repeat))


def _repeat_times(program: OmpProgram, phases: list) -> tuple:
    return tuple(RepeatTime(rep.line, rep.count, tuple(sum(p.seconds for p in phases[a:b]) for a, b in its))
                 for rep, its in repeat_slices(program))


def measured_iterations(program: OmpProgram, measured) -> tuple:
    """Measured seconds per iteration of each repeat (sums of the phases' minima) of
    ``measured`` (:class:`~loopmodel.measure.omp_bench.ProgramMeasurement`), in the order of
    :func:`repeat_slices`."""
    return tuple(tuple(sum(m.seconds for m in measured.phases[a:b]) for a, b in its)
                 for _, its in repeat_slices(program))
