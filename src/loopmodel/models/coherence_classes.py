"""The classes of the sizes of an OpenMP program's line runs (benchmark-based-coherence-model.txt
§III-B): per array, the cache lines are cut at every start and stop of the line runs that any
chunk of the program will touch, so that between two neighbouring distinct cuts every line has
one state and a chunk covers whole segments. Where two sizes order all their cuts alike (the
same *dense rank*, the rank among the array's distinct cuts, of every run's start and stop),
every chunk covers the same segments at both: every line state, and the transition every
segment takes, is the same, so the states are simulated once per class
(:class:`~loopmodel.models.coherence_sizes.ClassStates`), and only the bytes are counted per
size (from the size's own cuts: :attr:`Layout.first`).

Pure functions over numpy arrays; no I/O.
"""
from __future__ import annotations

import numpy as np

#: random weights of a row's numbers in its fingerprint (integer arithmetic, wrapping the same
#: way for equal rows; no BLAS, whose threads cost more than they give on rows this short)
_WEIGHTS = np.random.default_rng(20261127).integers(1, 1 << 40, size=1 << 13, dtype=np.int64)


class Cuts:
    """The cuts of a group of line runs at S sizes, put in order per size: ``values`` int64
    (rows, S), every run start and stop (rows) at every size.

    Attributes:
        lines: int64 (S, rows): the values, sizes first, the rows in the order they have at the
            last size (so that each size's sort, stable and adaptive, finds them nearly in
            order); ``ref``: int (rows,) the row of ``values`` each column of ``lines`` holds.
        order: int (S, rows): the stable sort of each size's ``lines``; ``ties``: bool
            (S, rows - 1): which neighbours in that order are equal. Two sizes with the same
            order and ties give every run the same dense rank (rank among the distinct cuts):
            they are the sizes' signature.
    """

    def __init__(self, values):
        self.ref = np.argsort(values[:, -1], kind="stable")
        self.lines = np.ascontiguousarray(values[self.ref].T)
        self.order = np.argsort(self.lines, axis=1, kind="stable")
        ordered = np.sort(self.lines, axis=1, kind="stable")
        self.ties = ordered[:, 1:] == ordered[:, :-1]

    def ranks(self, reps) -> tuple:
        """``(rank, source)`` at the sizes ``reps`` (int (R,)): the dense rank of every row of
        ``values`` (int64 (rows, R)), and per size the column of :attr:`lines` holding each
        dense rank's cut (int64 (R, D), D the most distinct cuts; past a size's own count, its
        largest)."""
        order = self.order[reps]
        new = np.ones(order.shape, dtype=bool)
        new[:, 1:] = ~self.ties[reps]
        dense = np.cumsum(new, axis=1) - 1
        placed = np.empty_like(dense)
        np.put_along_axis(placed, order, dense, axis=1)
        rank = np.empty_like(placed)
        rank[:, self.ref] = placed
        source = np.repeat(order[:, -1:], int(dense[:, -1].max(initial=0)) + 1, axis=1)
        r_, i_ = np.nonzero(new)
        source[r_, dense[r_, i_]] = order[r_, i_]
        return rank.T, source


def classes(parts: list, size: int) -> tuple:
    """``(reps, inverse)``: the distinct rows of the int arrays ``parts`` (each (S, K_i), taken
    side by side), each by its first row (int (R,), ascending), and the class of every row
    (int (S,)). A fingerprint per row (a weighted sum) groups them; where it puts two different
    rows together (checked against the rows themselves), np.unique does."""
    parts = [p for p in parts if p.shape[1]]
    if not parts:
        return np.zeros(1, dtype=np.int64), np.zeros(size, dtype=np.int64)
    if all(p.shape[1] <= _WEIGHTS.size for p in parts):
        prints = sum(np.einsum("ij,j->i", p, _WEIGHTS[:p.shape[1]]) * (j + 1) for j, p in enumerate(parts))
        _, reps, inverse = np.unique(prints, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        if all((p == p[reps[inverse]]).all() for p in parts):
            order = np.argsort(reps)
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            return reps[order], rank[inverse]
    _, reps, inverse = np.unique(np.concatenate(parts, axis=1), axis=0, return_index=True, return_inverse=True)
    order = np.argsort(reps)
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    return reps[order], rank[inverse.reshape(-1)]


class Layout:
    """The cuts of every array at S sizes and the classes of the sizes.

    Args:
        runs: array name -> list of ``(lo, hi)`` int64 arrays (team, S): the line runs
            ``[lo, hi)`` of the chunks on that array, one pair per statement (lo = hi where a
            thread has no chunk).
        elements: array name -> element size in bytes.
        line: the cache-line size in bytes.
        size: S.
    Attributes:
        reps: int (R,): one size of each class; inverse: int (S,): the class of each size.
        ranks: array name -> list of ``(ra, rb)`` int64 (team, R): each statement's runs as
            dense ranks of their cuts, in each class (the order of ``runs``).
        segments: array name -> the most segments of a class.
        first: array name -> int64 (S, K): per size, the first element at or after some of
            the array's cuts (segment j lies between the cuts of dense ranks j and j + 1);
            ``source``: array name -> int (R, D): per class, the column of ``first`` holding
            the cut of each dense rank.
        signatures: per class, the dense ranks of every run's cuts (bytes): equal for two
            classes of any sizes of one program and thread count that order all cuts alike.
    """

    def __init__(self, runs: dict, elements: dict, line: int, size: int):
        groups: dict = {}
        placed: dict = {}
        for array, pairs in runs.items():
            arrays: dict = {}
            for x in (x for pair in pairs for x in pair):
                arrays.setdefault(id(x), x)
            key = tuple(arrays)
            if key not in groups:
                rows = [0]
                for x in arrays.values():
                    rows.append(rows[-1] + x.shape[0])
                groups[key] = (Cuts(np.concatenate(list(arrays.values()))), dict(zip(key, rows)))
            placed[array] = key
        self.reps, self.inverse = classes([x for c, _ in groups.values() for x in (c.order, c.ties)], size)
        at = {}
        for key, (cuts, _) in groups.items():
            rank, source = cuts.ranks(self.reps)
            used, source = np.unique(source, return_inverse=True)  # the columns of lines the classes need
            at[key] = (rank, source.reshape(rank.shape[1], -1), np.ascontiguousarray(cuts.lines[:, used]))
        self.ranks, self.segments, self.first, self.source = {}, {}, {}, {}
        firsts: dict = {}
        for array, pairs in runs.items():
            key = placed[array]
            offset = groups[key][1]
            rank, self.source[array], lines = at[key]
            self.ranks[array] = [tuple(rank[offset[id(x)]:offset[id(x)] + x.shape[0]] for x in pair) for pair in pairs]
            self.segments[array] = int(rank.max(initial=0))
            e = elements[array]
            if (key, e) not in firsts:
                firsts[(key, e)] = lines * (line // e) if line % e == 0 else -((-lines * line) // e)
            self.first[array] = firsts[(key, e)]
        sig = [np.concatenate(pair) for array in runs for pair in self.ranks[array]]
        sig = np.ascontiguousarray(np.concatenate(sig).T.astype(np.int32)) if sig else np.zeros((self.reps.size, 0))
        self.signatures = [row.tobytes() for row in sig]
