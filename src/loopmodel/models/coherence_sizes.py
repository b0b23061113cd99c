"""The MESI line states of :class:`~loopmodel.models.coherence.ChunkStates` in many classes of
sizes at once (benchmark-based-coherence-model.txt §III-B, Fig. 2), for
:mod:`loopmodel.models.omp_trace`: per array, segment (the lines between two neighbouring cuts,
:mod:`~loopmodel.models.coherence_classes`) and class, the MESI state (int8) and the set of
threads holding the lines as a bit mask (uint64, so at most :data:`MAX_THREADS` threads).
:meth:`ClassStates.apply` is :func:`~loopmodel.models.coherence.delta` and
:func:`~loopmodel.models.coherence.transition` of one statement's chunks (thread 0 first) in
every class; tests/test_omp_sizes.py compares it with them segment by segment, and the
predictions with the per-size path over programs, sizes and thread counts.

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


class ClassStates:
    """The line states of every array in R classes (all ``(I, ∅)`` at first): per array and
    segment (rows) and class (columns) the MESI state (int8) and the holders' bit mask (uint64).

    Args:
        segments: array name -> the number of segments (distinct cuts - 1, the most of any
            class).
        count: R, the number of classes.
    """

    def __init__(self, segments: dict, count: int):
        self._kind = {a: np.zeros((max(n, 0), count), dtype=np.int8) for a, n in segments.items()}
        self._mask = {a: np.zeros((max(n, 0), count), dtype=np.uint64) for a, n in segments.items()}

    def snapshot(self) -> dict:
        """The states now (for :meth:`same`)."""
        return {a: (self._kind[a].copy(), self._mask[a].copy()) for a in self._kind}

    def same(self, snapshot: dict):
        """Per class, whether every line is in the state it had at ``snapshot`` (bool (R,))."""
        out = None
        for array, (kind, mask) in snapshot.items():
            eq = ((self._kind[array] == kind) & (self._mask[array] == mask)).all(axis=0)
            out = eq if out is None else out & eq
        return out

    def apply(self, array: str, ra, rb, store: bool):
        """One statement's chunks in every class, thread 0 first: thread t's segments
        ``ra[t] .. rb[t] - 1`` (int (team, R), ra = rb where it has no chunk) take its load
        (``store`` False) or store (δ of Fig. 2). A segment two threads share takes the first
        one's action, then the second's; three or more: thread by thread.

        Returns:
            None where no chunk covers a segment in any class, else ``(lo, key)``: the
            transition thread t takes on segment ``lo + j`` (int8 (team, rows, R): the index
            into :data:`~loopmodel.machine.coherence.LOAD_KEYS` / ``STORE_KEYS``; -1 outside
            its chunk).
        """
        has = ra < rb
        if not has.any():
            return None
        lo, hi = int(ra[has].min()), int(rb[has].max())
        seg = np.arange(lo, hi)[None, :, None]
        inside = (seg >= ra[:, None, :]) & (seg < rb[:, None, :])
        kind, mask = self._kind[array][lo:hi], self._mask[array][lo:hi]
        team = ra.shape[0]
        key = np.full(inside.shape, -1, dtype=np.int8)
        count = inside.sum(axis=0)
        if count.max() > 2:
            for t in range(team):
                key[t] = np.where(inside[t], _step(kind, mask, store, np.full(kind.shape, t), inside[t]), -1)
            return lo, key
        first = np.argmax(inside, axis=0)
        last = team - 1 - np.argmax(inside[::-1], axis=0)
        j, r = np.nonzero(count > 0)
        key[first[j, r], j, r] = _step(kind, mask, store, first, count > 0)[j, r]
        j, r = np.nonzero(count > 1)
        key[last[j, r], j, r] = _step(kind, mask, store, last, count > 1)[j, r]
        return lo, key


def _step(kind, mask, store: bool, thread, where):
    """The transition (int8, -1 where ``where`` is False) each segment of ``kind``, ``mask``
    takes on the action of ``thread`` (int, per segment), and the segment's state moved on by
    δ (in place) where ``where``."""
    bit = np.left_shift(np.uint64(1), thread.astype(np.uint64))
    held = (mask & bit) != 0
    key = np.where(kind == _I, 0, 2 * kind - held).astype(np.int8)
    if store:
        np.copyto(kind, _M, where=where)
        np.copyto(mask, bit, where=where)
    else:
        alone = ((kind == _M) | (kind == _E)) & (mask == bit)
        np.copyto(kind, np.where(kind == _I, _E, np.where(alone, kind, _S)).astype(np.int8), where=where)
        np.copyto(mask, mask | bit, where=where)
    return key
