"""The MESI line states of :class:`~loopmodel.models.coherence.ChunkStates` at many sizes at once
(benchmark-based-coherence-model.txt §III-B, Fig. 2), for :mod:`loopmodel.models.omp_sizes`.

Per array, the cache lines are cut at every start and stop of the line runs that any chunk of
the program will touch (at each size its own cuts): between two cuts every line has one state,
and a chunk covers whole segments. A segment's state is its MESI state (int8) and the set of
threads holding the line as a bit mask (uint64, so at most :data:`MAX_THREADS` threads).
:meth:`SegmentStates.apply` is :func:`~loopmodel.models.coherence.delta` and
:func:`~loopmodel.models.coherence.transition` of one chunk at every size, the bytes taken by
each transition counted as :meth:`~loopmodel.models.coherence.Chunk.bytes_in` counts them (in
elements: the bytes are the elements x the element size). The results equal those of
:class:`~loopmodel.models.coherence.ChunkStates` line for line (tests/test_omp_sizes.py
compares them over programs, sizes and thread counts).

Pure functions over numpy arrays; no I/O.
"""
from __future__ import annotations

import numpy as np

#: most threads whose holder sets fit the state's bit mask
MAX_THREADS = 64
#: state codes: the order of :data:`~loopmodel.machine.coherence.LOAD_KEYS` gives the key index
#: 0 for I and 2 x code - own for M, E, S (M own 1, M other 2, E own 3, ...)
_I, _M, _E, _S = range(4)
#: transitions per action (``L I`` .. ``L S other``; ``S I`` .. ``S S other``)
KEYS_PER_ACTION = 7
#: a first position past every segment
_NONE = np.iinfo(np.int64).max


def _cuts(runs: list) -> tuple:
    """``(bounds, ranks)``: the sorted cuts (B, S) of the runs' ``(lo, hi)`` line arrays (equal
    ones once) and, per run, ``(index of lo, index of hi)`` among them (the first of equal
    cuts)."""
    columns: dict = {}
    where = [columns.setdefault(x.tobytes(), (len(columns), x))[0] for run in runs for x in run]
    values = np.stack([x for _, x in columns.values()])
    order = np.argsort(values, axis=0, kind="stable")
    bounds = np.take_along_axis(values, order, axis=0)
    pos = np.arange(bounds.shape[0])[:, None]
    new = np.ones_like(bounds, dtype=bool)
    new[1:] = bounds[1:] != bounds[:-1]
    first = np.maximum.accumulate(np.where(new, pos, 0), axis=0)
    rank = np.empty_like(first)
    np.put_along_axis(rank, order, first, axis=0)
    return bounds, [(rank[where[2 * j]], rank[where[2 * j + 1]]) for j in range(len(runs))]


class SegmentStates:
    """The line states of every array at S sizes (all ``(I, ∅)`` at first): per array and
    segment (rows) and size (columns) the MESI state (int8) and the holders' bit mask (uint64).

    Args:
        runs: array name -> list of ``(lo, hi)`` int64 arrays of shape (S,): the line runs
            ``[lo, hi)`` the chunks will cover (a run that is empty at a size has lo = hi).
        elements: array name -> element size in bytes.
        line: the cache-line size in bytes.
    """

    def __init__(self, runs: dict, elements: dict, line: int):
        self._bounds, self._ranks, self._kind, self._mask, self._first = {}, {}, {}, {}, {}
        for array, rs in runs.items():
            bounds, ranks = _cuts(rs)
            self._bounds[array] = bounds
            self._ranks[array] = ranks
            shape = (max(bounds.shape[0] - 1, 0), bounds.shape[1])
            self._kind[array] = np.zeros(shape, dtype=np.int8)
            self._mask[array] = np.zeros(shape, dtype=np.uint64)
            self._first[array] = -((-bounds * line) // elements[array])  # first element at or after each cut

    def snapshot(self) -> dict:
        """The states now (for :meth:`same`)."""
        return {a: (self._kind[a].copy(), self._mask[a].copy()) for a in self._kind}

    def same(self, snapshot: dict):
        """Per size, whether every line is in the state it had at ``snapshot`` (bool (S,))."""
        out = None
        for array, (kind, mask) in snapshot.items():
            bounds = self._bounds[array]
            eq = (((self._kind[array] == kind) & (self._mask[array] == mask))
                  | (bounds[1:] == bounds[:-1])).all(axis=0)
            out = eq if out is None else out & eq
        return out

    def window(self, array: str, run: int, chunk: tuple):
        """What the chunk's action touches at every size, whatever the states (for
        :meth:`apply`; None where it touches nothing at any size).

        Args:
            run: the number of the chunk's run among ``array``'s runs.
            chunk: ``(start, step, count)``: the chunk's elements, int64 arrays of shape (S,);
                count 0 where the thread has no chunk.
        Returns:
            ``(array, lo, hi, inside, elements)``: the segments ``lo..hi-1`` that some size's
            run covers, bool (hi - lo, S) whether it covers each, and the chunk's elements whose
            first byte lies in each segment (integers (hi - lo, S), int32 where they fit).
        """
        ra, rb = self._ranks[array][run]
        start, step, count = chunk
        ra = np.where(count > 0, ra, 0)
        rb = np.where(count > 0, rb, 0)
        lo, hi = int(ra.min()), int(rb.max())
        if hi <= lo:
            return None
        seg = np.arange(lo, hi)[:, None]
        first = self._first[array][lo:hi + 1]  # the first element at or after each cut
        if (step == 1).all():
            before = np.clip(first - start, 0, count)
        else:
            before = np.clip(-((start - first) // step), 0, count)
        elements = before[1:] - before[:-1]
        if elements.max(initial=0) < 2 ** 31:  # the common case, in half the memory
            elements = elements.astype(np.int32)
        return array, lo, hi, (seg >= ra) & (seg < rb), elements

    def apply(self, window: tuple, store: bool, thread: int) -> list:
        """One chunk's action at every size: the segments of ``window`` (:meth:`window`) take
        the load (``store`` False) or store of ``thread`` (δ of Fig. 2).

        Returns:
            ``[(k, elements, first), ...]`` for each transition ``k`` of the action taken at
            some size (index into :data:`~loopmodel.machine.coherence.LOAD_KEYS` /
            ``STORE_KEYS``): int64 (S,) the chunk's elements whose first byte lies in a line
            that took it, and the first segment (in line order) where one did (a large number
            where none did).
        """
        array, lo, hi, inside, elements = window
        kind, mask = self._kind[array][lo:hi], self._mask[array][lo:hi]
        bit = np.uint64(1 << thread)
        key = np.where(kind == _I, 0, 2 * kind - ((mask & bit) != 0)).astype(np.intp)
        key[elements == 0] = KEYS_PER_ACTION
        size = key.shape[1]
        flat = (key * size + np.arange(size)).ravel()
        if int(elements.max(initial=0)) * (hi - lo) < 2 ** 53:  # exact in float64
            totals = np.bincount(flat, elements.ravel(), (KEYS_PER_ACTION + 1) * size).astype(np.int64)
        else:
            totals = np.zeros((KEYS_PER_ACTION + 1) * size, dtype=np.int64)
            np.add.at(totals, flat, elements.ravel())
        totals = totals.reshape(KEYS_PER_ACTION + 1, size)
        present = np.flatnonzero(totals[:KEYS_PER_ACTION].any(axis=1))
        first = np.full((KEYS_PER_ACTION + 1, size), _NONE)
        if len(present) > 1:  # the order of the transitions along the lines
            cols = np.arange(size)
            for j in range(hi - lo - 1, -1, -1):
                first[key[j], cols] = lo + j
        out = [(int(k), totals[k], first[k]) for k in present]
        if store:
            np.copyto(kind, _M, where=inside)
            np.copyto(mask, bit, where=inside)
        else:
            alone = ((kind == _M) | (kind == _E)) & (mask == bit)
            np.copyto(kind, np.where(kind == _I, _E, np.where(alone, kind, _S)).astype(np.int8), where=inside)
            np.copyto(mask, mask | bit, where=inside)
        return out
