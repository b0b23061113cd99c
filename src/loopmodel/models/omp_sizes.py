"""The coherence-aware prediction of one OpenMP program at many sizes at once:
:func:`~loopmodel.models.omp_program.predict_program` (benchmark-based-coherence-model.txt §III:
chunks per thread §III-A, their MESI states §III-B, Algorithm 1 §III-C) for every size of a
:class:`~loopmodel.ir.omp_sizes.ProgramSizes`, with numpy arrays over the sizes.

What does not depend on the state of the lines is computed once per phase and thread count:
the threads' chunks, their line runs, working sets and the timing functions at them. The line
states are those of :class:`~loopmodel.models.coherence_sizes.SegmentStates`. Every number is
computed with the operations of the per-size path in the same order (float additions
included), so the results are identical to predicting each size alone; a repeat is simulated
until every size has reached its steady iteration (the per-size path's rule, size by size).

Sizes this path does not take are left to the per-size path (:attr:`SizesPrediction.done`
False): more than :data:`~loopmodel.models.coherence_sizes.MAX_THREADS` threads, a chunk whose
stride exceeds a cache line (one line run per element), or integers near the int64 range.

Pure functions; no I/O.
"""
from __future__ import annotations

import bisect
import math

import numpy as np

from ..errors import ModelError
from ..ir.omp_sizes import ProgramSizes, SizedPhase
from ..machine.coherence import LOAD_KEYS, STORE_KEYS, TRANSITION_KEYS
from .coherence_sizes import KEYS_PER_ACTION, MAX_THREADS, SegmentStates
from .coherence_timing import Timing
from ..record import record

#: integers (elements, bytes, lines) beyond this are left to the per-size path (no int64 overflow)
_LIMIT = 2.0 ** 60


@record
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
            (0 where the phase does not take it: every timing is positive).
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
    transitions: np.ndarray

    def phase_seconds(self, sizes) -> list:
        """Per size that ``sizes`` picks (indices or a bool mask), the ``seconds`` of every
        executed phase (lists of Python floats)."""
        return self.seconds[self.phase_rows][:, sizes].T.tolist()


@record
class _Chunk:
    """One thread's chunk of one statement at S sizes: ``(start, step, count)`` int64 (S,),
    count 0 where the thread has none."""
    thread: int
    start: np.ndarray
    step: np.ndarray
    count: np.ndarray


@record
class _Statement:
    """One access of a phase at the sizes: a store or a load, its array, element size (B) and the
    chunks of it each thread touches (:class:`_Chunk`)."""

    store: bool
    array: str
    elem: int
    chunks: tuple


class _Plan:
    """What one phase is at S sizes on T threads, whatever the line states: its statements'
    chunks, the threads' iterations and working sets, the timing functions at them (cached)."""

    def __init__(self, sized: SizedPhase, elements: dict, threads: int, line: int):
        self.sized, self.line = sized, line
        self.team = threads if sized.phase.kind == "parallel" else 1
        self.boxes, self.present = _boxes(sized, self.team)
        self.statements = _statements(sized, self.boxes, self.present, elements)
        self.work = np.zeros((self.team, sized.lo.shape[1]), dtype=np.int64)
        for st_ in self.statements:
            for c in st_.chunks:
                self.work[c.thread] += c.count * st_.elem
        self._f: dict = {}

    def runs(self) -> list:
        """``(array, chunk, (lo, hi))`` of every chunk: the line run ``[lo, hi)`` it covers
        (int64 (S,), :meth:`~loopmodel.models.coherence.Chunk.lines` for a stride of at most a
        line; lo = hi = 0 where the thread has no chunk)."""
        out = []
        for st_ in self.statements:
            for c in st_.chunks:
                e, step = st_.elem, c.step
                last = c.start + np.maximum(c.count - 1, 0) * step
                lo = np.where(c.count > 0, c.start * e // self.line, 0)
                hi = np.where(c.count > 0, ((last + 1) * e - 1) // self.line + 1, 0)
                out.append((st_.array, c, (lo, hi)))
        return out

    def supported(self):
        """bool (S,): every chunk has at most one element or a stride of at most a line."""
        ok = np.ones(self.work.shape[1], dtype=bool)
        for st_ in self.statements:
            for c in st_.chunks:
                ok &= (c.count <= 1) | (c.step * st_.elem <= self.line)
        return ok

    def f(self, timing: Timing, k: int, st_: _Statement, c: _Chunk):
        """:meth:`Timing.seconds` of transition ``k`` of the statement's action for the chunk's
        stride and its thread's working set (float (S,)), computed once per plan."""
        if id(c) not in self._f:
            stride = c.step * st_.elem
            key = (c.thread, stride.tobytes())
            self._f[key] = self._f.get(key) or (Footprint(timing, stride, self.work[c.thread], self.team), {})
            self._f[id(c)] = self._f[key]
        fp, per_key = self._f[id(c)]
        name = (STORE_KEYS if st_.store else LOAD_KEYS)[k]
        if name not in per_key:
            per_key[name] = fp.seconds(name)
        return per_key[name]

    def iterations(self):
        """int64 (team, S): iterations of the loop nest per thread (0 where it has none)."""
        n = np.where(self.present, 1, 0).astype(np.int64)
        for (a, b), lp in zip(self.boxes, self.sized.phase.loops):
            n = n * ((b - a) // lp.step + 1)
        return np.where(self.present, n, 0)


def _trips(lo, hi, step: int):
    return np.maximum(0, -((lo - hi) // step))


def _boxes(sized: SizedPhase, team: int) -> tuple:
    """``(boxes, present)``: per loop ``(first, last)`` value arrays (team, S), and bool
    (team, S): threads with iterations (the static schedule of the outer loop for a parallel
    phase, thread 0 alone otherwise; none where a loop has no iterations), as
    :func:`~loopmodel.models.omp_program._thread_box` at each size."""
    loops = sized.phase.loops
    size = sized.lo.shape[1]
    if not loops:
        return [], np.zeros((team, size), dtype=bool)
    trips = [_trips(sized.lo[k], sized.hi[k], lp.step) for k, lp in enumerate(loops)]
    empty = np.zeros(size, dtype=bool)
    for t_ in trips:
        empty |= t_ == 0
    q, r = np.divmod(trips[0], team)
    t = np.arange(team)[:, None]
    count = q + (t < r)
    start = t * q + np.minimum(t, r)
    step0 = loops[0].step
    boxes = [(sized.lo[0] + start * step0, sized.lo[0] + (start + count - 1) * step0)]
    for k in range(1, len(loops)):
        first = np.broadcast_to(sized.lo[k], (team, size))
        boxes.append((first, first + (trips[k] - 1) * loops[k].step))
    return boxes, (count > 0) & ~empty


def _triplet(sized: SizedPhase, a: int, boxes: list) -> tuple:
    """``(start, stop, step)`` arrays (team, S) of access number ``a`` over each thread's box
    (:func:`~loopmodel.models.omp_program._triplet`)."""
    lo = np.broadcast_to(sized.offset[a], boxes[0][0].shape).copy()
    hi = lo.copy()
    step = np.zeros_like(lo)
    for k, ((first, last), lp) in enumerate(zip(boxes, sized.phase.loops)):
        c = sized.coeff[a, k]
        ca, cb = c * first, c * last
        lo += np.minimum(ca, cb)
        hi += np.maximum(ca, cb)
        step = np.where((first != last) & (c != 0), np.gcd(step, np.abs(c * lp.step)), step)
    return lo, hi + 1, np.where(step == 0, 1, step)


def _statements(sized: SizedPhase, boxes: list, present, elements: dict) -> tuple:
    """The phase's statements (reads, then writes, per array in order of first access) with
    each thread's merged chunk (:func:`~loopmodel.models.omp_program.phase_statements`)."""
    if not boxes:
        return ()
    regions: dict = {}
    for a, acc in enumerate(sized.phase.accesses):
        tri = _triplet(sized, a, boxes)
        key = (acc.kind, acc.array)
        if key in regions:
            old = regions[key]
            step = np.gcd(np.gcd(old[2], tri[2]), np.abs(tri[0] - old[0]))
            tri = (np.minimum(old[0], tri[0]), np.maximum(old[1], tri[1]), np.where(step == 0, 1, step))
        regions[key] = tri
    out = []
    for kind in ("read", "write"):
        for (k, array), (start, stop, step) in regions.items():
            if k != kind:
                continue
            count = np.where(present, np.maximum(0, -((start - stop) // step)), 0)
            chunks = tuple(_Chunk(t, start[t], step[t], count[t]) for t in range(present.shape[0])
                           if present[t].any())
            out.append(_Statement(kind == "write", array, elements[array], chunks))
    return tuple(out)


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
        return np.where(self.size > 0, out, 0.0)

    def _per_size(self, row):
        """:meth:`Timing._per_size` of one table row at every footprint."""
        sizes, fp = self.timing.table.sizes, self.footprint
        out = np.empty_like(fp)
        out[self.low] = row[0] / sizes[0] * fp[self.low]
        out[self.high] = row[-1] / sizes[-1] * fp[self.high]
        if self.mid.any():
            r = np.asarray(row, dtype=np.float64)
            per_byte = (1 - self.w) * r[self.k - 1] / self.a + self.w * r[self.k] / self.b
            out[self.mid] = per_byte * fp[self.mid]
        return out


def _in_range(sized: SizedPhase, line: int, elements: dict):
    """bool (S,): the phase's loop values, indices, their bytes and lines, and its iteration
    counts stay far from the int64 range (estimated in floats)."""
    loops = sized.phase.loops
    steps = np.array([[abs(lp.step)] for lp in loops], dtype=np.float64).reshape(len(loops), 1)
    reach = np.maximum(np.abs(sized.lo.astype(np.float64)), np.abs(sized.hi.astype(np.float64))) + steps
    ok = (reach < _LIMIT).all(axis=0) & (np.prod(reach + 1.0, axis=0) < _LIMIT)
    widest = max([elements[a.array] for a in sized.phase.accesses] + [line])
    for a in range(sized.offset.shape[0]):
        span = np.abs(sized.offset[a].astype(np.float64)) + (np.abs(sized.coeff[a].astype(np.float64))
                                                             * (reach + 1.0)).sum(axis=0)
        ok &= span * widest < _LIMIT
    return ok


def _unique(sizes: ProgramSizes) -> list:
    return [sp for item in sizes.items for sp in (item if isinstance(item, tuple) else (item,))]


class _Simulation:
    """The segment states and the rows of the phases simulated so far (one row per executed
    phase simulated; a repeat's copied iterations reuse rows)."""

    def __init__(self, plans: dict, elements: dict, timing: Timing, threads: int, core: dict, size: int):
        self.plans, self.timing, self.threads, self.core, self.size = plans, timing, threads, core, size
        runs: dict = {}
        chunks = []
        for plan in plans.values():
            for array, c, lohi in plan.runs():
                chunks.append((array, len(runs.setdefault(array, [])), c))
                runs[array].append(lohi)
        self.states = SegmentStates(runs, elements, timing.cacheline_size)
        self.windows = {id(c): self.states.window(array, run, (c.start, c.step, c.count))
                        for array, run, c in chunks}
        self.rows: list = []

    def phase(self, sized: SizedPhase) -> int:
        """Time one executed phase from the current states, move the states on; its row."""
        plan = self.plans[id(sized)]
        reads = np.zeros((plan.team, self.size))
        writes = np.zeros((plan.team, self.size))
        parts = np.zeros((len(TRANSITION_KEYS), self.size))
        for st_ in plan.statements:
            for c in st_.chunks:
                self._chunk(plan, st_, c, writes if st_.store else reads, parts)
        memory = np.maximum(reads, writes).max(axis=0)
        seconds, core_s = self._with_core(plan, sized, reads, writes, memory)
        overhead = self.timing.overhead(self.threads) if sized.phase.kind == "parallel" else 0.0
        self.rows.append((seconds + overhead, memory, core_s, seconds > memory, overhead, parts))
        return len(self.rows) - 1

    def _chunk(self, plan: _Plan, st_: _Statement, c: _Chunk, acc, parts) -> None:
        """Apply one chunk; add its seconds to its thread's ``acc`` in the order the per-size
        path adds them (its transitions in the order their first lines come) and to
        ``parts``."""
        window = self.windows[id(c)]
        if window is None:
            return
        found = self.states.apply(window, st_.store, c.thread)
        base = KEYS_PER_ACTION if st_.store else 0
        work = np.where(plan.work[c.thread] > 0, plan.work[c.thread], 1)
        secs = []
        for k, elements, _ in found:
            has = elements > 0
            nbytes = elements * st_.elem
            secs.append(np.where(has, plan.f(self.timing, k, st_, c) * nbytes / work, 0.0))
            parts[base + k] += secs[-1]
        if len(found) == 1:
            acc[c.thread] += secs[0]
            return
        if len(found) == 2:
            ahead = found[0][2] < found[1][2]
            acc[c.thread] += np.where(ahead, secs[0], secs[1])
            acc[c.thread] += np.where(ahead, secs[1], secs[0])
            return
        order = np.argsort(np.stack([first for _, _, first in found], axis=1), axis=1, kind="stable")
        ordered = np.take_along_axis(np.stack(secs, axis=1), order, axis=1)
        for j in range(len(found)):
            acc[c.thread] += ordered[:, j]

    def _with_core(self, plan: _Plan, sized: SizedPhase, reads, writes, memory) -> tuple:
        """``(seconds, core seconds)`` (S,): max over threads of max(θ_L, θ_S, in-core time)
        (:func:`~loopmodel.models.omp_program._phase_seconds`); NaN core where unknown."""
        per_it = self.core.get(id(sized))
        if per_it is None:
            return memory, np.full(self.size, np.nan)
        core_t = plan.iterations() * per_it
        core_t = np.where(plan.present, core_t, 0.0)
        slowest = np.maximum(np.maximum(reads, writes), core_t).max(axis=0)
        seconds = np.maximum(slowest, memory)
        known = ~np.isnan(per_it)
        return np.where(known, seconds, memory), np.where(known, core_t.max(axis=0), np.nan)

    def repeat(self, body: tuple, count: int, out: list) -> None:
        """A repeat's iterations, until every size's states repeat (then copies of the last)."""
        before = None
        for k in range(count):
            snap = self.states.snapshot()
            if before is not None and self.states.same(before).all():
                last = out[-len(body):]
                out += [(row, j) for j in range(k, count) for row, _ in last]
                return
            before = snap
            out += [(self.phase(sp), k) for sp in body]


def predict_sizes(sizes: ProgramSizes, timing: Timing, threads: int, core: dict | None = None) -> SizesPrediction:
    """:func:`~loopmodel.models.omp_program.predict_program` of every size of ``sizes``.

    Args:
        sizes: :class:`~loopmodel.ir.omp_sizes.ProgramSizes` (S sizes).
        timing: :class:`~loopmodel.models.coherence_timing.Timing`.
        threads: T >= 1, within the table's thread counts.
        core: ``id(SizedPhase)`` of a phase of ``sizes`` -> float (S,): in-core seconds per
            iteration of its loop nest (NaN where unknown); phases not in it are timed by their
            memory accesses alone.
    Returns:
        :class:`SizesPrediction` (the sizes it leaves to the per-size path: ``done`` False,
        their entries NaN).
    Raises:
        ModelError: a transition without a timing, or T outside the table (as
            :func:`~loopmodel.models.omp_program.predict_program`).
    """
    line = timing.cacheline_size
    elements = {a.name: a.element_size for a in sizes.program.arrays.values()}
    unique = _unique(sizes)
    done = np.full(sizes.count, threads <= MAX_THREADS)
    for sp in unique:
        done &= _in_range(sp, line, elements)
    plans = {id(sp): _Plan(sp, elements, threads, line) for sp in unique}
    for plan in plans.values():
        done &= plan.supported()
    if not done.any():
        return _prediction([], [], threads, done)
    if not done.all():
        plans = {id(sp): _Plan(part, elements, threads, line) for sp, part in zip(unique, _unique(sizes.take(done)))}
    sim = _Simulation(plans, elements, timing, threads, {k: v[done] for k, v in (core or {}).items()}, int(done.sum()))
    out: list = []
    for item, sized in zip(sizes.program.items, sizes.items):
        if isinstance(sized, tuple):
            if sized:
                sim.repeat(sized, item.count, out)
        else:
            out.append((sim.phase(sized), None))
    return _prediction(sim.rows, out, threads, done)


def _prediction(rows: list, out: list, threads: int, done) -> SizesPrediction:
    """The :class:`SizesPrediction` of the simulated ``rows`` at the ``done`` sizes (NaN at the
    others); ``out``: ``(row, iteration)`` per executed phase."""
    def stack(k, extra: tuple = (), fill=np.nan, dtype=np.float64):
        full = np.full((len(rows),) + extra + (done.shape[0],), fill, dtype=dtype)
        if rows:
            full[..., done] = np.stack([r[k] for r in rows])
        return full

    return SizesPrediction(threads, done, np.array([r for r, _ in out], dtype=np.int64), tuple(k for _, k in out),
                           stack(0), stack(1), stack(2), stack(3, fill=False, dtype=bool),
                           np.array([r[4] for r in rows], dtype=np.float64), stack(5, (len(TRANSITION_KEYS),)))
