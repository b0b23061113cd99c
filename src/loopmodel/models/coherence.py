"""MESI chunk states and their transition function δ (benchmark-based-coherence-model.txt §III-B,
Fig. 2).

Each cache line of an array (as the caches keep it; a chunk, the index triplet one thread
touches, covers a set of lines, which chunks of other threads may share) has a MESI state
and the set of threads whose private caches hold it: ``(M, {t})``, ``(E, {t})``, ``(S, Ω)``
or ``(I, ∅)``. The
actions are a load by a set of threads ``L_T`` and a store by one thread ``S_t``. The timing
of a transition depends on the state it starts from (the paper's §IV, Fig. 3: the same miss
costs very different times from M, E or S), so :func:`transition` names what is to be
benchmarked and :func:`delta` gives the state after the action. The memory hierarchy is one
level of private, infinite caches (the paper's Fig. 1): nothing is evicted.

Pure data and functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import bisect

from ..errors import ModelError

STATES = ("M", "E", "S", "I")


@dataclass(frozen=True)
class ChunkState:
    """A chunk's MESI state and the threads whose caches hold a valid copy.

    Invariants (checked): ``M`` and ``E`` have exactly one thread, ``S`` at least one,
    ``I`` none.

    Raises:
        ValueError: a state outside MESI or a thread set that breaks the invariants.
    """
    state: str
    threads: frozenset = frozenset()

    def __post_init__(self):
        if self.state not in STATES:
            raise ValueError(f"unknown MESI state '{self.state}'")
        n = len(self.threads)
        if (self.state in "ME" and n != 1) or (self.state == "S" and n < 1) or (self.state == "I" and n):
            raise ValueError(f"state {self.state} cannot be held by {n} thread(s)")

    def __str__(self) -> str:
        who = ",".join(str(t) for t in sorted(self.threads)) or "∅"
        return f"({self.state},{{{who}}})" if self.threads else f"({self.state},{who})"


INVALID = ChunkState("I")


@dataclass(frozen=True)
class Load:
    """``L_T``: the threads ``threads`` read the chunk."""
    threads: frozenset

    def __post_init__(self):
        if not self.threads:
            raise ValueError("a load needs at least one thread")


@dataclass(frozen=True)
class Store:
    """``S_t``: thread ``thread`` writes the chunk."""
    thread: int


def delta(state: ChunkState, action) -> ChunkState:
    """The chunk's state after ``action`` (Fig. 2).

    * A store by ``t`` from any state leaves the only valid copy, modified, in ``t``'s cache:
      ``(M, {t})`` (the other copies are invalidated).
    * A load by ``T`` from ``(I, ∅)``: ``(E, T)`` for one thread, ``(S, T)`` for several.
    * A load by ``T`` from ``(M, {t})`` or ``(E, {t})``: unchanged when ``T = {t}``; else the
      copy is shared, ``(S, T ∪ {t})`` (a modified line is written back on the way).
    * A load by ``T`` from ``(S, Ω)``: ``(S, Ω ∪ T)``.

    Raises:
        TypeError: an action that is neither :class:`Load` nor :class:`Store`.
    """
    if isinstance(action, Store):
        return ChunkState("M", frozenset({action.thread}))
    if not isinstance(action, Load):
        raise TypeError(f"unknown action {action!r}")
    readers = frozenset(action.threads)
    if state.state == "I":
        return ChunkState("E" if len(readers) == 1 else "S", readers)
    if state.state in "ME" and readers == state.threads:
        return state
    return ChunkState("S", state.threads | readers)


def transition(state: ChunkState, action) -> str:
    """The benchmark a transition is timed by (:data:`loopmodel.machine.coherence.TRANSITION_KEYS`):
    the action, the state it starts from and whether the acting thread holds a valid copy,
    e.g. ``"L M other"`` (a miss on a line another cache holds modified), ``"S E own"``,
    ``"L I"`` (the paper's L(state, ...) and S(state, ...), §III-C; §IV, Fig. 3 shows why the
    holder matters). A load by several threads is named by its first thread.
    """
    kind, who = ("S", action.thread) if isinstance(action, Store) else ("L", min(action.threads))
    if state.state == "I":
        return f"{kind} I"
    return f"{kind} {state.state} {'own' if who in state.threads else 'other'}"


def transition_label(key: str, holders) -> str:
    """Text for a transition in reports, in the paper's notation: ``"L M other"`` with holders
    ``{frozenset({0})}`` -> ``"L_t from (M,{0})"``; several holder sets -> ``(M,{u})`` (another
    thread u); ``own`` -> ``(M,{t})`` / ``(S,Ω∋t)``; ``"L I"`` -> ``"L_t from (I,∅)"``."""
    parts = key.split()
    act = f"{parts[0]}_t"
    if parts[1] == "I":
        return f"{act} from (I,∅)"
    st_ = parts[1]
    if parts[2] == "own":
        return f"{act} from ({st_},Ω∋t)" if st_ == "S" else f"{act} from ({st_},{{t}})"
    if len(holders) == 1:
        (h,) = holders
        return f"{act} from {ChunkState(st_, h)}"
    return f"{act} from ({st_},Ω∌t)" if st_ == "S" else f"{act} from ({st_},{{u}})"


class ChunkStates:
    """The MESI state of every cache line of every array: an interval map array -> sorted,
    disjoint ``(start, stop, ChunkState)`` over the array's cache-line indices (stop
    exclusive; line ``k`` holds bytes ``k x line .. (k+1) x line - 1`` of the array, which
    begins on a line boundary); lines not listed are ``(I, ∅)``. The caches keep coherence
    per line, not per element (benchmark-based-coherence-model.txt §III-B states the MESI
    protocol on lines), so chunks of different threads that share a line (interleaved
    elements, or the two ends of neighbouring blocks) share its state. Adjacent ranges in the
    same state are merged so the map stays small.
    """

    def __init__(self, intervals: dict | None = None):
        self._iv = {a: list(v) for a, v in (intervals or {}).items()}
        self._starts = {a: [iv[0] for iv in v] for a, v in self._iv.items()}

    def copy(self) -> "ChunkStates":
        return ChunkStates(self._iv)

    def key(self) -> tuple:
        """A hashable value equal for equal interval maps (two states with equal keys give
        equal timings and successors)."""
        return tuple(sorted((a, tuple(v)) for a, v in self._iv.items() if v))

    def pieces(self, array: str, start: int, stop: int) -> list:
        """``[(lo, hi, state), ...]`` covering lines ``[start, stop)`` in order (gaps: ``(I, ∅)``)."""
        ivs = self._iv.get(array, ())
        k = max(bisect.bisect_right(self._starts.get(array, ()), start) - 1, 0)
        out, pos = [], start
        for lo, hi, state in ivs[k:]:
            if lo >= stop:
                break
            if hi <= pos:
                continue
            if lo > pos:
                out.append((pos, lo, INVALID))
            out.append((max(lo, pos), min(hi, stop), state))
            pos = min(hi, stop)
        if pos < stop:
            out.append((pos, stop, INVALID))
        return out

    def assign(self, array: str, start: int, stop: int, state: ChunkState) -> None:
        """Set lines ``[start, stop)`` of ``array`` to ``state``."""
        if stop > start:
            self.update(array, [(start, stop)], lambda _: state)

    def update(self, array: str, runs, step) -> list:
        """Move every line of ``runs`` (sorted, disjoint ``(start, stop)`` line ranges) from its
        state ``s`` to ``step(s)``, in one pass over the map (bisection to the first run, then
        a merge: O(log n + pieces), however many runs).

        Returns:
            ``[(lo, hi, state before), ...]``: the runs cut where the states before change,
            in order (gaps as ``(I, ∅)``).
        """
        if not runs:
            return []
        ivs = self._iv.setdefault(array, [])
        starts = self._starts.setdefault(array, [])
        a = max(bisect.bisect_right(starts, runs[0][0]) - 2, 0)  # one more on each side: merges
        b = min(bisect.bisect_left(starts, runs[-1][1]) + 1, len(ivs))
        old = list(ivs[a:b])
        new, pieces, i = [], [], 0
        for rlo, rhi in runs:
            while i < len(old) and old[i][1] <= rlo:
                new.append(old[i])
                i += 1
            if i < len(old) and old[i][0] < rlo:
                new.append((old[i][0], rlo, old[i][2]))
                old[i] = (rlo, old[i][1], old[i][2])
            pos = rlo
            while pos < rhi:
                if i < len(old) and old[i][0] <= pos:
                    hi, before = min(old[i][1], rhi), old[i][2]
                    if old[i][1] > rhi:
                        old[i] = (rhi, old[i][1], before)
                    else:
                        i += 1
                else:
                    hi, before = min(rhi, old[i][0]) if i < len(old) else rhi, INVALID
                pieces.append((pos, hi, before))
                new.append((pos, hi, step(before)))
                pos = hi
        new += old[i:]
        merged = []
        for iv in new:
            if merged and merged[-1][1] == iv[0] and merged[-1][2] == iv[2]:
                merged[-1] = (merged[-1][0], iv[1], iv[2])
            elif iv[2] != INVALID:
                merged.append(iv)
        ivs[a:b] = merged
        starts[a:b] = [iv[0] for iv in merged]
        return pieces

    def state_at(self, array: str, line: int) -> ChunkState:
        """The state of cache line ``line`` of ``array``."""
        return self.pieces(array, line, line + 1)[0][2]


#: most separate cache-line ranges one chunk may touch (a stride of more than a line touches
#: one range per element; the state map then holds one interval per line)
MAX_CHUNK_RUNS = 1 << 16


@dataclass(frozen=True)
class Chunk:
    """The part of an array one thread touches in one statement: the index triplet
    ``start:stop:step`` (stop exclusive) of ``array``, elements of ``element_size`` bytes."""
    array: str
    start: int
    stop: int
    step: int = 1
    element_size: int = 8

    @property
    def count(self) -> int:
        """Elements touched."""
        return max(0, -(-(self.stop - self.start) // self.step))

    @property
    def size(self) -> int:
        """Bytes touched (elements x element size)."""
        return self.count * self.element_size

    @property
    def stride(self) -> int:
        """Bytes between consecutive elements."""
        return self.step * self.element_size

    def lines(self, line: int) -> list:
        """The cache lines of ``line`` bytes the chunk touches, as sorted, disjoint ``(start,
        stop)`` line ranges (the array begins on a line boundary): one range when the stride is
        at most a line, else one per element (merged where they meet).

        Raises:
            ModelError: more than :data:`MAX_CHUNK_RUNS` separate ranges (:meth:`check_lines`).
        """
        n, e = self.count, self.element_size
        if not n:
            return []
        if self.stride <= line:
            last = self.start + (n - 1) * self.step
            return [(self.start * e // line, ((last + 1) * e - 1) // line + 1)]
        self.check_lines(line)
        runs = []
        for x in range(self.start, self.stop, self.step):
            lo, hi = x * e // line, ((x + 1) * e - 1) // line + 1
            if runs and runs[-1][1] >= lo:
                runs[-1] = (runs[-1][0], hi)
            else:
                runs.append((lo, hi))
        return runs

    def check_lines(self, line: int) -> None:
        """Raises ModelError (one line) where :meth:`lines` would give more than
        :data:`MAX_CHUNK_RUNS` separate ranges (a stride of more than ``line`` bytes)."""
        if self.stride > line and self.count > MAX_CHUNK_RUNS:
            raise ModelError(f"a chunk of '{self.array}' touches {self.count} separate cache lines (stride "
                             f"{self.stride} B); the coherence model tracks at most {MAX_CHUNK_RUNS} per chunk")

    def bytes_in(self, line: int, lo: int, hi: int) -> int:
        """Bytes of the chunk's elements whose first byte lies in lines ``[lo, hi)``."""
        first = -(-lo * line // self.element_size)  # the first element starting in line lo or later
        end = -(-hi * line // self.element_size)
        k0 = max(0, -(-(first - self.start) // self.step))
        k1 = min(self.count, -(-(end - self.start) // self.step))
        return max(0, k1 - k0) * self.element_size


@dataclass(frozen=True)
class Statement:
    """A read or write statement of a phase: ``kind`` ``"read"`` or ``"write"``; ``chunks``:
    thread -> :class:`Chunk` (threads without work are absent)."""
    kind: str
    chunks: dict


@dataclass(frozen=True)
class PhaseTime:
    """Predicted time of one phase.

    Attributes:
        seconds: max over threads of max(read time, write time) (Algorithm 1, line 12).
        reads, writes: thread -> seconds.
        transitions: benchmark key (``"L M other"`` ...) -> seconds summed over the threads that
            took it (what the phase's time is made of).
        holders: benchmark key -> set of the holder thread sets the transition started from
            (for :func:`transition_label`).
        states: :class:`ChunkStates` after the phase (the next phase starts from it).
    """
    seconds: float
    reads: dict
    writes: dict
    transitions: dict
    holders: dict
    states: ChunkStates


def _working_sets(statements) -> dict:
    """Algorithm 1, lines 1-2: s(t), bytes over all of thread t's chunks in the phase."""
    work: dict = {}
    for st_ in statements:
        for t, c in st_.chunks.items():
            work[t] = work.get(t, 0) + c.size
    return work


def phase_time(statements, states: ChunkStates, load, store, threads: int, line: int = 64) -> PhaseTime:
    """Algorithm 1 of benchmark-based-coherence-model.txt §III-C for one parallel phase (a
    sequential phase is the same with thread 0 alone and ``threads`` = 1).

    Each thread's working set s(t) is the total size of its chunks in the phase; every access
    is timed as if on data of that size and scaled by the chunk's share of it:
    θ_L(t) += L(key, stride, s(t), T) x size / s(t) (stores likewise with S). States are
    those of cache lines (:class:`ChunkStates`): a chunk is timed line range by line range,
    each range by the transition from its lines' state (``size`` the bytes of the chunk's
    elements in it), and its lines then follow δ. Statements run in program order, within a
    statement thread 0 first: of two threads whose chunks share a line, the later one finds
    it in the state the earlier one left. Reads and writes overlap: the phase takes max over
    threads of max(θ_L(t), θ_S(t)).

    Args:
        statements: :class:`Statement` sequence in program order.
        states: :class:`ChunkStates` before the phase (not changed).
        load, store: timing functions ``f(key, stride B, size B, threads) -> seconds`` from
            the micro-benchmarks; ``key`` as :func:`transition` returns.
        threads: T, the threads of the parallel region.
        line: the cache-line size in bytes.
    Returns:
        :class:`PhaseTime`.
    Raises:
        ModelError: a chunk that touches more than :data:`MAX_CHUNK_RUNS` separate line ranges.
    """
    states = states.copy()
    work = _working_sets(statements)
    acc = {"read": {t: 0.0 for t in work}, "write": {t: 0.0 for t in work}}
    parts: dict = {}
    holders: dict = {}
    for st_ in statements:
        f = store if st_.kind == "write" else load
        for t, c in st_.chunks.items():
            if not c.size:
                continue
            action = Store(t) if st_.kind == "write" else Load(frozenset({t}))
            for key, (nbytes, held) in _chunk_bytes(states, c, action, line).items():
                secs = f(key, c.stride, work[t], threads) * nbytes / work[t]
                acc[st_.kind][t] += secs
                parts[key] = parts.get(key, 0.0) + secs
                holders.setdefault(key, set()).update(held)
    reads, writes = acc["read"], acc["write"]
    total = max((max(reads[t], writes[t]) for t in work), default=0.0)
    return PhaseTime(total, reads, writes, parts, holders, states)


def _chunk_bytes(states: ChunkStates, c: Chunk, action, line: int) -> dict:
    """Apply ``action`` on chunk ``c`` to ``states`` (its lines follow δ) and return
    transition key -> ``(bytes of the chunk's elements taken by it, {holder thread sets})``;
    a line only reached by the tail of an element that starts before it adds no bytes."""
    after: dict = {}

    def step(before):
        if before not in after:
            after[before] = delta(before, action)
        return after[before]

    out: dict = {}
    for lo, hi, before in states.update(c.array, c.lines(line), step):
        nbytes = c.bytes_in(line, lo, hi)
        if nbytes:
            key = transition(before, action)
            total, held = out.get(key, (0, set()))
            held.add(before.threads)
            out[key] = (total + nbytes, held)
    return out


def static_schedule(lo: int, hi: int, threads: int) -> dict:
    """Iterations ``lo..hi-1`` of ``#pragma omp for schedule(static)`` (no chunk size) per
    thread: contiguous blocks, the first ``n mod T`` threads one iteration more (the
    OpenMP 4.5 §2.7.1 rule as libgomp and LLVM's runtime implement it); thread -> (start, stop),
    threads without iterations left out.

    Raises:
        ValueError: threads < 1.
    """
    if threads < 1:
        raise ValueError("threads must be >= 1")
    n = max(hi - lo, 0)
    q, r = divmod(n, threads)
    out, start = {}, lo
    for t in range(threads):
        count = q + (1 if t < r else 0)
        if count:
            out[t] = (start, start + count)
        start += count
    return out
