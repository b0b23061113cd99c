"""The chunks of one OpenMP phase on T threads at many sizes at once
(benchmark-based-coherence-model.txt §III-A: each thread's chunk of each statement, the index
triplet it touches, and its working set s(t), Algorithm 1 lines 1-2), with numpy arrays of
shape (threads, sizes): what :func:`~loopmodel.models.omp_program.phase_statements` gives at
one size, for every size of a :class:`~loopmodel.ir.omp_sizes.SizedPhase`.

Every integer is the per-size path's: the static schedule of the outer loop
(:func:`~loopmodel.models.coherence.static_schedule`), each access's triplet over the thread's
box, the accesses of one array and kind merged, the cache-line run of each chunk
(:meth:`~loopmodel.models.coherence.Chunk.lines`, stride of at most a line).

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..ir.omp_sizes import SizedPhase

#: integers (elements, bytes, lines) beyond this are left to the per-size path (no int64 overflow)
LIMIT = 2.0 ** 60


@dataclass(frozen=True)
class Statement:
    """One statement of a phase on ``team`` threads at S sizes.

    Attributes:
        store: a write (else a read).
        array, elem: the array and its element size in bytes.
        start, step, count: int64 (team, S): each thread's chunk, the index triplet
            ``start, start + step, ...`` of ``count`` elements (count 0: no chunk).
        lo, hi: int64 (team, S): the cache-line run ``[lo, hi)`` the chunk covers (0, 0 where
            it has none).
    """
    store: bool
    array: str
    elem: int
    start: np.ndarray
    step: np.ndarray
    count: np.ndarray
    lo: np.ndarray
    hi: np.ndarray


class Plan:
    """One phase at S sizes on T threads (its ``team``: T for a parallel phase, 1 otherwise):
    the threads' loop ``boxes`` and ``present`` (:func:`_boxes`), :class:`Statement` per
    statement (reads, then writes, per array in order of first access) and ``work``, int64
    (team, S): s(t), the bytes of every chunk of thread t. Made by :meth:`Chunker.plan`."""

    def __init__(self, sized: SizedPhase, team: int, line: int, boxes: tuple, statements: tuple, work):
        self.sized, self.team, self.line = sized, team, line
        self.boxes, self.present = boxes
        self.statements, self.work = statements, work

    def supported(self):
        """bool (S,): every chunk has at most one element or a stride of at most a line (one
        line run per chunk)."""
        ok = np.ones(self.work.shape[1], dtype=bool)
        for st_ in self.statements:
            ok &= ((st_.count <= 1) | (st_.step * st_.elem <= self.line)).all(axis=0)
        return ok

    def iterations(self):
        """int64 (team, S): iterations of the loop nest per thread (0 where it has none)."""
        n = np.where(self.present, 1, 0).astype(np.int64)
        for (a, b), lp in zip(self.boxes, self.sized.phase.loops):
            n = n * ((b - a) // lp.step + 1)
        return np.where(self.present, n, 0)


class Chunker:
    """The :class:`Plan` of every phase of one program at S sizes on ``threads`` threads
    (``elements``: array name -> element size; ``line``: the cache-line size in bytes).
    Phases and accesses with the same integers share their arrays: the threads' boxes, each
    access's triplet, the merged chunks and their line runs are computed once per distinct
    value (so equal chunks are the same arrays). ``ids``: the numbers given to the values of
    the phases' integer arrays, shared by the chunkers of several thread counts (they do not
    depend on it)."""

    def __init__(self, elements: dict, threads: int, line: int, ids: dict | None = None):
        self.elements, self.threads, self.line = elements, threads, line
        self._ids: dict = {} if ids is None else ids
        self._memo: dict = {}

    def _id(self, x) -> int:
        """A number for the value of array ``x`` (equal values, equal numbers)."""
        return self._ids.setdefault((x.shape, x.tobytes()), len(self._ids))

    def _once(self, key, make):
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    def plan(self, sized: SizedPhase) -> Plan:
        """The :class:`Plan` of ``sized``."""
        team = self.threads if sized.phase.kind == "parallel" else 1
        loops = sized.phase.loops
        where = ("boxes", team) + tuple((self._id(sized.lo[k]), self._id(sized.hi[k]), lp.step)
                                        for k, lp in enumerate(loops))
        boxes = self._once(where, lambda: _boxes(sized, team))
        statements = self._statements(sized, where, boxes) if boxes[0] else ()
        work = self._once(("work",) + tuple((id(st_.count), st_.elem) for st_ in statements)
                          + (sized.lo.shape[1], team), lambda: _work(statements, team, sized.lo.shape[1]))
        return Plan(sized, team, self.line, boxes, statements, work)

    def _statements(self, sized: SizedPhase, where: tuple, boxes: tuple) -> tuple:
        """The phase's statements (reads, then writes, per array in order of first access)
        with each thread's merged chunk (:func:`~loopmodel.models.omp_program.phase_statements`)
        and its line run (:meth:`~loopmodel.models.coherence.Chunk.lines` for a stride of at
        most a line)."""
        regions: dict = {}
        for a, acc in enumerate(sized.phase.accesses):
            key = ("triplet", where, self._id(sized.coeff[a]), self._id(sized.offset[a]))
            self._once(key, lambda: _triplet(sized, a, boxes[0]))
            at = (acc.kind, acc.array)
            if at in regions:
                key = ("merge", regions[at], key)
                old, new = self._memo[key[1]], self._memo[key[2]]
                self._once(key, lambda: _merge(old, new))
            regions[at] = key
        out = []
        for kind in ("read", "write"):
            for (k, array), key in regions.items():
                if k == kind:
                    e = self.elements[array]
                    arrays = self._once(("chunks", key, e), lambda: _chunks(self._memo[key], boxes[1], e, self.line))
                    out.append(Statement(kind == "write", array, e, *arrays))
        return tuple(out)


def _work(statements: tuple, team: int, size: int):
    work = np.zeros((team, size), dtype=np.int64)
    for st_ in statements:
        work += st_.count * st_.elem
    return work


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


def _gcd(a, b):
    """np.gcd of two int64 arrays >= 0, without it where one side is 0 or 1 everywhere (the
    common unit strides)."""
    if not (b > 1).any():
        return np.where(b == 1, 1, np.abs(a))
    if not (a > 1).any():
        return np.where(a == 1, 1, np.abs(b))
    return np.gcd(a, b)


def _triplet(sized: SizedPhase, a: int, boxes: list) -> tuple:
    """``(start, stop, step)`` arrays (team, S) of access number ``a`` over each thread's box
    (:func:`~loopmodel.models.omp_program._triplet`)."""
    lo = np.broadcast_to(sized.offset[a], boxes[0][0].shape).copy()
    hi = lo.copy()
    step = np.zeros_like(lo)
    for k, ((first, last), lp) in enumerate(zip(boxes, sized.phase.loops)):
        c = sized.coeff[a, k]
        if not c.any():
            continue
        ca, cb = c * first, c * last
        lo += np.minimum(ca, cb)
        hi += np.maximum(ca, cb)
        step = np.where((first != last) & (c != 0), _gcd(step, np.abs(c * lp.step)), step)
    return lo, hi + 1, np.where(step == 0, 1, step)


def _floor_div(x, d: int):
    """``x // d`` for int64 ``x`` and a positive int ``d`` (a shift for a power of two)."""
    if d & (d - 1) == 0:
        return x >> (d.bit_length() - 1)
    return x // d


def _merge(old: tuple, tri: tuple) -> tuple:
    """Two accesses of one array and kind as one chunk: the hull, the gcd of the steps and of
    the offset between the starts (:func:`~loopmodel.models.omp_program._merge`)."""
    step = _gcd(_gcd(old[2], tri[2]), np.abs(tri[0] - old[0]))
    return np.minimum(old[0], tri[0]), np.maximum(old[1], tri[1]), np.where(step == 0, 1, step)


def _chunks(region: tuple, present, e: int, line: int) -> tuple:
    """``(start, step, count, lo, hi)`` of :class:`Statement` from a merged ``(start, stop,
    step)`` region of elements of ``e`` bytes."""
    start, stop, step = region
    if (step == 1).all():
        count = np.where(present, np.maximum(0, stop - start), 0)
        last = start + np.maximum(count - 1, 0)
    else:
        count = np.where(present, np.maximum(0, -((start - stop) // step)), 0)
        last = start + np.maximum(count - 1, 0) * step
    if line % e == 0:
        lo = _floor_div(start, line // e)
        hi = -_floor_div(-last - 1, line // e)
    else:
        lo = start * e // line
        hi = ((last + 1) * e - 1) // line + 1
    has = count > 0
    return start, step, count, np.where(has, lo, 0), np.where(has, hi, 0)


def in_range(sized: SizedPhase, line: int, elements: dict):
    """bool (S,): the phase's loop values, indices, their bytes and lines, and its iteration
    counts stay far from the int64 range (estimated in floats)."""
    loops = sized.phase.loops
    steps = np.array([[abs(lp.step)] for lp in loops], dtype=np.float64).reshape(len(loops), 1)
    reach = np.maximum(np.abs(sized.lo.astype(np.float64)), np.abs(sized.hi.astype(np.float64))) + steps
    ok = (reach < LIMIT).all(axis=0) & (np.prod(reach + 1.0, axis=0) < LIMIT)
    widest = max([elements[a.array] for a in sized.phase.accesses] + [line])
    for a in range(sized.offset.shape[0]):
        span = np.abs(sized.offset[a].astype(np.float64)) + (np.abs(sized.coeff[a].astype(np.float64))
                                                             * (reach + 1.0)).sum(axis=0)
        ok &= span * widest < LIMIT
    return ok
