"""The coherence-aware prediction of one OpenMP program at many sizes at once:
:func:`~loopmodel.models.omp_program.predict_program` (benchmark-based-coherence-model.txt §III:
chunks per thread §III-A, their MESI states §III-B, Algorithm 1 §III-C) for every size of a
:class:`~loopmodel.ir.omp_sizes.ProgramSizes`, with numpy arrays over the threads and sizes.

What does not depend on the state of the lines is computed once per phase and thread count:
the threads' chunks and line runs (:mod:`~loopmodel.models.omp_chunks`, equal chunks of
different phases and arrays computed once), their working sets and the timing functions at
them (at the largest and smallest working set of each size where every thread has one of
them). The line states are simulated once per class of sizes whose cuts fall alike
(:mod:`~loopmodel.models.coherence_classes`, :mod:`~loopmodel.models.omp_trace`): each
statement's chunks as runs of segments taking one transition, in slots common to all threads
and classes (:mod:`~loopmodel.models.coherence_slots`). The bytes of each slot and their
seconds are then counted per size from that size's cuts (:class:`_Replay`), once per distinct
statement (another array with the same chunks and cuts, a repeat's later iteration reuse them).
Every number is computed with the operations of the per-size path in the same order (float
additions included), so the results are identical to predicting each size alone; a repeat is
simulated until every size has reached its steady iteration (the per-size path's rule, size
by size).

Sizes this path does not take are left to the per-size path (:attr:`SizesPrediction.done`
False): more than :data:`~loopmodel.models.coherence_sizes.MAX_THREADS` threads, a chunk whose
stride exceeds a cache line (one line run per element), or integers near the int64 range.

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import bisect
import math
import numpy as np

from ..errors import ModelError
from ..ir.omp_sizes import ProgramSizes, structure
from ..machine.coherence import LOAD_KEYS, STORE_KEYS, TRANSITION_KEYS
from .coherence_classes import Layout
from .coherence_sizes import KEYS_PER_ACTION, MAX_THREADS
from .coherence_timing import Timing
from .omp_chunks import Chunker, Plan, Statement, in_range
from .omp_trace import Runs, Traces, items_of, plan_places, simulate


@dataclass(frozen=True)
class SizesPrediction:
    """:func:`predict_sizes` at S sizes on ``threads`` threads.

    Attributes:
        threads: T.
        done: bool (S,): sizes predicted here (the others: see the module text).
        phase_rows: int (executed phases,): the row of :attr:`seconds` ... that holds each
            executed phase (a repeat's steady iterations share the rows of the last one
            simulated).
        iterations: the iteration of each executed phase (None outside repeats).
        seconds, memory_seconds, core_seconds: float (rows, S): per row the
            :class:`~loopmodel.models.omp_program.PhasePrediction`'s ``seconds``,
            ``memory_seconds`` and ``core_seconds`` (NaN where None).
        in_core: bool (rows, S): ``bound == "in-core"``.
        overhead: float (rows,): ``overhead_seconds``.
        transitions: float (rows, 14, S): seconds per benchmark key
            (:data:`~loopmodel.machine.coherence.TRANSITION_KEYS` order), summed over the threads
            (0 where the phase does not take it: every timing is positive); None where not
            asked for.
    """
    threads: int
    done: np.ndarray
    phase_rows: np.ndarray
    iterations: tuple
    seconds: np.ndarray
    memory_seconds: np.ndarray
    core_seconds: np.ndarray
    in_core: np.ndarray
    overhead: np.ndarray
    transitions: np.ndarray | None

    def phase_seconds(self, sizes) -> list:
        """Per size that ``sizes`` picks (indices or a bool mask), the ``seconds`` of every
        executed phase (lists of Python floats)."""
        return self.seconds[self.phase_rows][:, sizes].T.tolist()


class Footprint:
    """:meth:`Timing.seconds` for ``threads`` threads at every entry of the int64 arrays
    ``stride`` and ``size`` (S,), for any key (:meth:`seconds`), with the operations of
    :meth:`Timing.seconds` in the same order, so the same floats; what does not depend on the
    key (footprints, their place among the table's sizes, log2 by :func:`math.log2`) once.

    Raises:
        ModelError: ``threads`` outside the table's thread counts.
    """

    def __init__(self, timing: Timing, stride, size, threads: int):
        self.timing, self.size = timing, size
        table = timing.table
        ts = table.threads
        if threads > ts[-1] or threads < 1:
            raise ModelError(f"the coherence table was measured for 1..{ts[-1]} threads, not {threads}")
        self.footprint = size * np.maximum(1.0, np.minimum(stride, timing.cacheline_size) / table.element_size)
        j = bisect.bisect_left(ts, threads)
        if ts[j] == threads or j == 0:
            self.weights = ((ts[j], None),)
        else:
            w = (threads - ts[j - 1]) / (ts[j] - ts[j - 1])
            self.weights = ((ts[j - 1], 1 - w), (ts[j], w))
        sizes = table.sizes
        fp = self.footprint
        self.low = fp <= sizes[0]
        self.high = (fp >= sizes[-1]) & ~self.low
        self.mid = ~(self.low | self.high)
        s = fp[self.mid]
        grid = np.asarray(sizes, dtype=np.float64)
        self.k = np.searchsorted(grid, s, side="right")
        logs = np.array([math.log2(x) for x in sizes])
        log_s = np.fromiter(map(math.log2, s.tolist()), dtype=np.float64, count=s.size)
        self.w = (log_s - logs[self.k - 1]) / (logs[self.k] - logs[self.k - 1])
        self.a, self.b = grid[self.k - 1], grid[self.k]
        self.rest = 1 - self.w
        self.at_mid, self.at_low, self.at_high = s, fp[self.low], fp[self.high]
        self.every = None if (size > 0).all() else size > 0

    def seconds(self, key: str):
        """float (S,): :meth:`Timing.seconds` of ``key`` (0 where the size is 0).

        Raises:
            ModelError: neither ``key`` nor its fallback measured.
        """
        rows = self.timing.table.seconds[self.timing.key_for(key)]
        (t0, w0), *rest = self.weights
        out = self._per_size(rows[t0])
        if rest:
            (t1, w1), = rest
            out = w0 * out + w1 * self._per_size(rows[t1])
        return out if self.every is None else np.where(self.every, out, 0.0)

    def _per_size(self, row):
        """:meth:`Timing._per_size` of one table row at every footprint."""
        sizes = self.timing.table.sizes
        out = np.empty_like(self.footprint)
        if self.at_low.size:
            out[self.low] = row[0] / sizes[0] * self.at_low
        if self.at_high.size:
            out[self.high] = row[-1] / sizes[-1] * self.at_high
        if self.at_mid.size:
            r = np.asarray(row, dtype=np.float64)
            per_byte = self.rest * r[self.k - 1] / self.a + self.w * r[self.k] / self.b
            if self.at_mid.size == out.size:
                out[...] = (per_byte * self.at_mid).reshape(out.shape)
            else:
                out[self.mid] = per_byte * self.at_mid
        return out


class _Rates:
    """The timing functions of one phase's threads at their working sets (float (team, S) per
    transition and stride, computed once per phase): where every thread's working set is the
    largest or the smallest of its size's (a static schedule: q or q + 1 iterations) and the
    stride is the same for every thread, they are computed at those two alone (the functions
    are elementwise, so the floats are the same)."""

    def __init__(self, timing: Timing, plan: Plan):
        self.timing, self.team, self.raw = timing, plan.team, plan.work
        top, bottom = plan.work.max(axis=0), plan.work.min(axis=0)
        self.upper = plan.work == top
        self.pair = np.stack([top, bottom]) if bool((self.upper | (plan.work == bottom)).all()) else None
        self.divisor = np.where(plan.work > 0, plan.work, 1).astype(np.float64)  # as the division converts it
        self._known: dict = {}
        self._strides: dict = {}

    def seconds(self, name: str, st_: Statement):
        """float (team, S): :meth:`Timing.seconds` of ``name`` for each thread at its working
        set with the statement's stride (step x element size)."""
        at = (id(st_.step), st_.elem)
        if at not in self._strides:
            stride = st_.step * st_.elem
            two = self.pair is not None and bool((stride == stride[0]).all())
            self._strides[at] = (two, stride, (two, stride[0].tobytes() if two else stride.tobytes()))
        two, stride, key = self._strides[at]
        if key not in self._known:
            fp = (Footprint(self.timing, np.broadcast_to(stride[0], self.pair.shape), self.pair, self.team) if two
                  else Footprint(self.timing, stride, self.raw, self.team))
            self._known[key] = (fp, {})
        fp, per_name = self._known[key]
        if name not in per_name:
            got = fp.seconds(name)
            per_name[name] = np.where(self.upper, got[0], got[1]) if two else got
        return per_name[name]


class _Replay:
    """The seconds of the phases of a :class:`~loopmodel.models.omp_trace.Trace` at every size
    of ``layout``: per simulated phase a row (its seconds, memory and in-core seconds, bound,
    overhead, transitions). ``columns``: the trace's column of each class of ``layout``;
    ``core``: per distinct phase its in-core seconds per iteration (float (S,)) or None."""

    def __init__(self, plans: list, layout: Layout, columns, timing: Timing, threads: int, core: list,
                 transitions: bool):
        self.plans, self.layout, self.columns = plans, layout, columns
        self.timing, self.threads, self.core = timing, threads, core
        self.size, self.transitions = layout.inverse.size, transitions
        self.rates = {id(plan.work): _Rates(timing, plan) for plan in plans}
        self._seconds: dict = {}
        self._known_bytes: dict = {}
        self._core: dict = {}
        self.cols = np.arange(self.size)

    def phase(self, k: int, runs: tuple) -> tuple:
        """The row of one executed phase: distinct phase ``k`` with the :class:`Runs` of its
        statements."""
        plan = self.plans[k]
        reads = np.zeros((plan.team, self.size))
        writes = np.zeros((plan.team, self.size))
        parts = np.zeros((len(TRANSITION_KEYS), self.size)) if self.transitions else None
        for st_, r in zip(plan.statements, runs):
            if r is not None:
                self._count(plan, st_, r, writes if st_.store else reads, parts)
        memory = np.maximum(reads, writes).max(axis=0)
        seconds, core_s = self._with_core(plan, self.core[k], reads, writes, memory)
        overhead = self.timing.overhead(self.threads) if plan.sized.phase.kind == "parallel" else 0.0
        return seconds + overhead, memory, core_s, seconds > memory, overhead, parts

    def _count(self, plan: Plan, st_: Statement, runs: Runs, acc, parts) -> None:
        """Add each thread's seconds of the statement to its ``acc`` in the order the per-size
        path adds them (its transitions in the order their first lines come) and to ``parts``.
        The seconds are a function of the chunks, the working sets, the cuts and the runs
        alone: a statement met again with all of them the same (another array with the same
        chunks and cuts, a repeat's next iteration) reuses them."""
        key = (id(plan.work), st_.store, st_.elem, id(st_.start), id(st_.step), id(st_.count),
               id(self.layout.first[st_.array]), runs.starts.tobytes(), runs.starts.shape, runs.sequence)
        if key not in self._seconds:
            self._seconds[key] = self._seconds_of(plan, st_, runs)
        secs = self._seconds[key]
        for q in range(secs.shape[1]):
            acc += secs[:, q]
        if parts is not None:
            base = KEYS_PER_ACTION if st_.store else 0
            for k in sorted(set(runs.sequence)):
                at = [q for q, c in enumerate(runs.sequence) if c == k]
                part = secs[:, at[0]] if len(at) == 1 else secs[:, at].sum(axis=1)
                parts[base + k] = np.cumsum(np.concatenate([parts[base + k][None], part]), axis=0)[-1]

    def _seconds_of(self, plan: Plan, st_: Statement, runs: Runs):
        """float (team, Q, S): the seconds each thread adds in each slot (Algorithm 1:
        L(key, stride, s(t), T) x bytes / s(t)); a transition with several slots: its total
        in the first of them with elements, 0 in the others (the per-size path adds a
        transition's seconds once, where its first line with elements comes)."""
        rates = self.rates[id(plan.work)]
        names = STORE_KEYS if st_.store else LOAD_KEYS
        nbytes = self._bytes(st_, runs.starts)
        work = rates.divisor
        secs = np.empty((nbytes.shape[0], len(runs.sequence), self.size))
        for k in set(runs.sequence):
            f = rates.seconds(names[k], st_)
            at = [q for q, c in enumerate(runs.sequence) if c == k]
            if len(at) == 1:
                np.divide(f * nbytes[:, at[0]], work, out=secs[:, at[0]])
                continue
            value = f * nbytes[:, at].sum(axis=1) / work
            seen = np.zeros(work.shape, dtype=bool)
            for q in at:
                has = nbytes[:, q] > 0
                np.copyto(secs[:, q], np.where(has & ~seen, value, 0.0))
                seen |= has
        return secs

    def _bytes(self, st_: Statement, starts):
        """(team, Q, S): the bytes of the chunk's elements whose first byte lies in each slot's
        segments (:meth:`~loopmodel.models.coherence.Chunk.bytes_in`; :func:`_as_float`), once
        per chunk, cuts and slots (statements on arrays alike share them)."""
        count = st_.count[:, None, :]
        team, slots = starts.shape[0], starts.shape[1]
        if slots == 1:
            return _as_float(count * st_.elem)
        first = self.layout.first[st_.array]
        source = self.layout.source[st_.array]
        cut = source[np.arange(source.shape[0]), starts[:, 1:, self.columns]]
        key = (id(st_.start), id(st_.step), id(st_.count), st_.elem, id(first), cut.tobytes(), cut.shape)
        if key in self._known_bytes:
            return self._known_bytes[key]
        at = np.take(cut.astype(np.int32 if first.size < 2 ** 31 else np.int64), self.layout.inverse, axis=2)
        at += (self.cols * first.shape[1]).astype(at.dtype)
        before = np.empty((team, slots + 1, self.size), dtype=np.int64)
        before[:, 0] = 0
        before[:, -1] = st_.count
        inner = before[:, 1:-1]
        inner[...] = np.take(first.ravel(), at, mode="clip")
        start = st_.start[:, None, :]
        if (st_.step == 1).all():
            inner -= start
        else:
            np.negative((start - inner) // st_.step[:, None, :], out=inner)
        np.maximum(inner, 0, out=inner)
        np.minimum(inner, count, out=inner)
        out = _as_float((before[:, 1:] - before[:, :-1]) * st_.elem)
        self._known_bytes[key] = out
        return out

    def _with_core(self, plan: Plan, per_it, reads, writes, memory) -> tuple:
        """``(seconds, core seconds)`` (S,): max over threads of max(θ_L, θ_S, in-core time)
        (:func:`~loopmodel.models.omp_program._phase_seconds`); NaN core where unknown
        (``per_it``: in-core seconds per iteration, float (S,), or None)."""
        if per_it is None:
            return memory, np.full(self.size, np.nan)
        if id(plan) not in self._core:
            self._core[id(plan)] = np.where(plan.present, plan.iterations() * per_it, 0.0)
        core_t = self._core[id(plan)]
        slowest = np.maximum(np.maximum(reads, writes), core_t).max(axis=0)
        seconds = np.maximum(slowest, memory)
        known = ~np.isnan(per_it)
        return np.where(known, seconds, memory), np.where(known, core_t.max(axis=0), np.nan)


def _as_float(nbytes):
    """int64 bytes as float64 where every one is below 2**53 (so that sums of them stay the
    integer sums, and a product with a float is the same), else as they are."""
    return nbytes.astype(np.float64) if nbytes.max(initial=0) < 2 ** 53 else nbytes


def _unique(sizes: ProgramSizes) -> list:
    return [sp for item in sizes.items for sp in (item if isinstance(item, tuple) else (item,))]


def predict_sizes(sizes: ProgramSizes, timing: Timing, threads: tuple, core: dict | None = None,
                  transitions: bool = True, traces: Traces | None = None):
    """:func:`~loopmodel.models.omp_program.predict_program` of every size of ``sizes``, for
    each thread count of ``threads`` in turn: a generator of :class:`SizesPrediction`. What
    does not depend on the thread count (which sizes stay within the integer range, the
    phases' integers told apart) is done once.

    Args:
        sizes: :class:`~loopmodel.ir.omp_sizes.ProgramSizes` (S sizes).
        timing: :class:`~loopmodel.models.coherence_timing.Timing`.
        threads: thread counts T >= 1, within the table's thread counts.
        core: ``id(SizedPhase)`` of a phase of ``sizes`` -> float (S,): in-core seconds per
            iteration of its loop nest (NaN where unknown); phases not in it are timed by their
            memory accesses alone.
        transitions: whether to give :attr:`SizesPrediction.transitions` (else None).
        traces: :class:`~loopmodel.models.omp_trace.Traces` of the study, to reuse the line
            states of classes met in earlier blocks of sizes (None: simulate them here).
    Yields:
        :class:`SizesPrediction` per thread count (the sizes it leaves to the per-size path:
        ``done`` False, their entries NaN).
    Raises:
        ModelError: a transition without a timing, or T outside the table (as
            :func:`~loopmodel.models.omp_program.predict_program`), when that thread count's
            prediction is asked for.
    """
    line = timing.cacheline_size
    elements = {a.name: a.element_size for a in sizes.program.arrays.values()}
    unique = _unique(sizes)
    within = np.ones(sizes.count, dtype=bool)
    for sp in unique:
        within &= in_range(sp, line, elements)
    ids: dict = {}
    for t in threads:
        done = within & (t <= MAX_THREADS)
        chunker = Chunker(elements, t, line, ids)
        plans = [chunker.plan(sp) for sp in unique]
        for plan in plans:
            done &= plan.supported()
        if not done.any():
            yield _prediction([], [], t, done, transitions)
            continue
        if not done.all():
            chunker = Chunker(elements, t, line)
            plans = [chunker.plan(part) for part in _unique(sizes.take(done))]
        yield _predict(sizes, unique, plans, timing, t, done, core, transitions, traces)


def _predict(sizes: ProgramSizes, unique: list, plans: list, timing: Timing, threads: int, done, core,
             transitions: bool, traces) -> SizesPrediction:
    """The prediction of the ``done`` sizes with the :class:`~loopmodel.models.omp_chunks.Plan`
    of each distinct phase at them."""
    runs, places = plan_places(plans)
    layout = Layout(runs, {a.name: a.element_size for a in sizes.program.arrays.values()}, timing.cacheline_size,
                    int(done.sum()))

    def make():
        return simulate(items_of(sizes.program, sizes.items, unique), list(zip(plans, places)), layout)

    if traces is None:
        trace, columns = make(), np.arange(layout.reps.size)
    else:
        trace, columns = traces.get((structure(sizes.program), threads, timing.cacheline_size), layout, make)
    per_it = [None if id(sp) not in (core or {}) else core[id(sp)][done] for sp in unique]
    replay = _Replay(plans, layout, columns, timing, threads, per_it, transitions)
    return _prediction([replay.phase(k, runs) for k, runs in trace.executed], list(trace.order), threads, done,
                       transitions)


def _prediction(rows: list, out: list, threads: int, done, transitions: bool) -> SizesPrediction:
    """The :class:`SizesPrediction` of the simulated ``rows`` at the ``done`` sizes (NaN at the
    others); ``out``: ``(row, iteration)`` per executed phase."""
    def stack(k, extra: tuple = (), fill=np.nan, dtype=np.float64):
        full = np.full((len(rows),) + extra + (done.shape[0],), fill, dtype=dtype)
        if rows:
            full[..., done] = np.stack([r[k] for r in rows])
        return full

    return SizesPrediction(threads, done, np.array([r for r, _ in out], dtype=np.int64), tuple(k for _, k in out),
                           stack(0), stack(1), stack(2), stack(3, fill=False, dtype=bool),
                           np.array([r[4] for r in rows], dtype=np.float64), stack(5, (len(TRANSITION_KEYS),)) if transitions else None)
