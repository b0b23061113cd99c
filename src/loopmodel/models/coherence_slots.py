"""One statement's chunks as runs of segments taking one transition, placed in slots common to
every thread and class (benchmark-based-coherence-model.txt §III-C, Algorithm 1: a chunk's
seconds are added transition by transition, in the order its lines come): the runs of each
thread in each class (:func:`statement_runs`) are placed in one sequence of slots, a common
supersequence of them (:func:`slots`), so that the bytes and seconds of a slot can be counted
for every size at once with the slot's transition known.

Pure functions; no I/O.
"""
from __future__ import annotations

import functools

import numpy as np

from .coherence_sizes import KEYS_PER_ACTION


def statement_runs(lo: int, key, rb) -> tuple:
    """The runs of segments taking one transition, per thread and class, of one statement's
    chunks.

    Args:
        lo, key: what :meth:`~loopmodel.models.coherence_sizes.ClassStates.apply` returned for
            the statement.
        rb: int (team, R): the segment past each thread's chunk in each class.
    Returns:
        ``(starts, keys)``: int64 (team, P, R): the segment each run starts at, in line order
        (P the most runs of a thread in a class; past a thread's runs ``rb``); int8 (team, P,
        R): the transition of each run (-1 past a thread's runs).
    """
    team, count = rb.shape
    start = key >= 0
    start[:, 1:] &= key[:, 1:] != key[:, :-1]
    counts = start.sum(axis=1).ravel()
    t_, r_, s_ = np.nonzero(start.transpose(0, 2, 1))
    pos = np.arange(t_.size) - np.repeat(np.cumsum(counts) - counts, counts)
    runs = int(counts.max())
    starts = np.broadcast_to(rb[:, None, :], (team, runs, count)).astype(np.int64)
    starts[t_, pos, r_] = s_ + lo
    keys = np.full((team, runs, count), -1, dtype=np.int8)
    keys[t_, pos, r_] = key[t_, s_, r_]
    return starts, keys


def slots(keys) -> tuple:
    """The runs of :func:`statement_runs` placed in one sequence of slots: a sequence of
    transitions that holds every thread's runs in every class in order (a common
    supersequence; a transition may have several slots), each run in a slot of its transition.

    Returns:
        ``(sequence, slot)``: the transition of each slot (tuple); int (team, P, R): the slot
        of each run (0 past a thread's runs).
    """
    team, runs, count = keys.shape
    if runs <= 19:  # each thread's runs in a class as one number, base 9 (9 ** 19 < 2 ** 63)
        code = np.zeros((team, count), dtype=np.int64)
        for p in range(runs - 1, -1, -1):
            code = code * (KEYS_PER_ACTION + 2) + (keys[:, p] + 1)
        distinct, inverse = np.unique(code, return_inverse=True)
        rows = [[(c // (KEYS_PER_ACTION + 2) ** p) % (KEYS_PER_ACTION + 2) - 1 for p in range(runs)]
                for c in distinct.tolist()]
    else:
        distinct, inverse = np.unique(keys.transpose(0, 2, 1).reshape(-1, runs), axis=0, return_inverse=True)
        rows = distinct.tolist()
    seqs = [tuple(k for k in row if k >= 0) for row in rows]
    sequence = _supersequence(tuple(seqs))
    places = np.zeros((len(seqs), max(runs, 1)), dtype=np.intp)
    for d, seq in enumerate(seqs):
        places[d, :len(seq)] = _embedding(seq, sequence)
    slot = places[inverse.reshape(team, count)].transpose(0, 2, 1)
    return sequence, slot


@functools.lru_cache(maxsize=4096)
def _supersequence(seqs: tuple) -> tuple:
    """A common supersequence of ``seqs`` (tuples): each merged in turn with the shortest
    common supersequence of two (by their longest common subsequence)."""
    out: tuple = ()
    for seq in sorted(seqs, key=len, reverse=True):
        out = _merge(out, seq)
    return out


def _merge(a: tuple, b: tuple) -> tuple:
    """The shortest common supersequence of ``a`` and ``b`` (dynamic programming)."""
    n, m = len(a), len(b)
    lcs = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            lcs[i][j] = lcs[i + 1][j + 1] + 1 if a[i] == b[j] else max(lcs[i + 1][j], lcs[i][j + 1])
    out, i, j = [], 0, 0
    while i < n and j < m:
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif lcs[i + 1][j] >= lcs[i][j + 1]:
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return tuple(out) + a[i:] + b[j:]


def _embedding(seq: tuple, sequence: tuple) -> list:
    """The slots of ``sequence`` holding ``seq`` in order (leftmost)."""
    out, j = [], 0
    for k in seq:
        while sequence[j] != k:
            j += 1
        out.append(j)
        j += 1
    return out
