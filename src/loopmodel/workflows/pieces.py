"""A sweep of sizes evaluated piece by piece: one analysis per piece, numpy over the points.

Layer conditions, the traffic they select and the ECM and Roofline compositions built on it are
piecewise constant in the sizes (kerncraft-tool-paper.txt §2.4.2: a layer condition holds or it
does not; ecm-model-slides.txt: the ECM contributions follow from the traffic per CL). What
decides the piece of a point is a set of comparisons of polynomials in the sizes with cache
capacities: each reuse distance against each candidate distance, each layer-condition
requirement and the whole data set against each cache, the near-capacity band of the confidence
tags, and the inner loop's trip count where the loop is short. :func:`piecewise` evaluates those
comparisons for all points at once (float64 numpy; a comparison closer than
:data:`EXACT_BAND` to its threshold is redone exactly), groups the points by their outcomes and
runs :meth:`~loopmodel.workflows.analysis.Analyzer.run` once per piece, at its first point.

The figures of a piece's result are those of every point of the piece; its ``defines``, the byte
counts of its layer-condition requirements and data set, and the sizes named in its notes are
its first point's.

The points at which the kernel does nothing (an array without elements, a loop of no iteration:
:func:`empty_points`) are left out of the pieces and counted for the sweep's one note. Where the
grouping cannot be shown exact (cache simulation, several cores, loop bounds that depend on outer
indices, strides that depend on the sizes, arrays near 2**62 bytes), :func:`piecewise` returns None
with the reason (:func:`why_not_piecewise`) and the caller analyses every point.
"""
from __future__ import annotations

from dataclasses import dataclass

from fractions import Fraction

import numpy as np

from ..errors import EmptyPointError
from ..ir.point import MAX_DATA_BYTES, check_point
from ..ir.poly import Poly
from ..models.incore import full_simd_lanes
from ..models.short_loops import LONG_LOOP_PASSES
from ..predictors.layer_conditions import effective_sizes
from .confidence import CAPACITY_FACTOR, SHORT_INNER_LOOP

#: relative distance to a threshold below which a float64 comparison is redone exactly
EXACT_BAND = 1e-9
#: models whose results the pieces reproduce
PIECEWISE_MODELS = frozenset({"LC", "ECM", "Roofline"})


@dataclass(frozen=True)
class Pieces:
    """A sweep split into pieces.

    Attributes:
        names: the constants that vary over the sweep, in ``-D`` order.
        columns: constant -> int64 array of its value at each point (shape ``(points,)``).
        piece: int array, the piece of each point; pieces are numbered by their first point.
        first: int array, the index of each piece's first point (shape ``(pieces,)``).
        results: the :class:`~loopmodel.workflows.analysis.AnalysisResult` of each piece's first point.
    """

    names: tuple
    columns: dict
    piece: np.ndarray
    first: np.ndarray
    results: tuple

    def counts(self) -> np.ndarray:
        """Points per piece (shape ``(pieces,)``)."""
        return np.bincount(self.piece, minlength=len(self.first))


def point_by_point(points, kept: tuple) -> Pieces:
    """The :class:`Pieces` of a sweep analysed point by point: each point analysed a piece of its own
    (``kept``: ``(index in the sweep, result)`` of each, in sweep order; the points left out, at
    which the kernel does nothing, are not in the columns)."""
    cols = point_columns(points)
    names = varying(points)
    at = np.asarray([i for i, _ in kept], dtype=np.int64)
    index = np.arange(len(kept))
    return Pieces(names, {n: cols[n][at] for n in names}, index, index, tuple(res for _, res in kept))


def point_columns(points) -> dict:
    """The values of every constant of a :class:`~loopmodel.fileio.defines.Sweep` at each of its
    points, in its order (cartesian product, the last constant fastest): name -> int64 array."""
    seqs = {n: np.asarray(list(s) if not isinstance(s, range) else np.arange(s.start, s.stop, s.step),
                          dtype=np.int64) for n, s in points.values.items()}
    if not seqs:
        return {n: np.full(1, v, dtype=np.int64) for n, v in points.base.items()}
    grids = np.meshgrid(*seqs.values(), indexing="ij", copy=False)
    size = len(points)
    cols = {n: np.full(size, v, dtype=np.int64) for n, v in points.base.items() if n not in seqs}
    cols.update({n: g.reshape(-1) for n, g in zip(seqs, grids)})
    return cols


def varying(points) -> tuple:
    """The constants of a :class:`~loopmodel.fileio.defines.Sweep` with more than one value, in ``-D`` order."""
    return tuple(n for n, seq in points.values.items() if len(seq) > 1)


def power_table(cols: dict):
    """``power(sym, exp)``: the float64 column of ``sym`` raised to ``exp``, computed once per pair."""
    memo = {}

    def power(sym: str, exp: int) -> np.ndarray:
        if (sym, exp) not in memo:
            memo[sym, exp] = cols[sym].astype(np.float64) ** exp
        return memo[sym, exp]
    return power


def evaluate(poly, size: int, power) -> np.ndarray:
    """``poly`` (:class:`~loopmodel.ir.poly.Poly`) at every point, float64 (shape ``(size,)``);
    ``power``: :func:`power_table` of the columns.

    Raises:
        KeyError: a symbol of ``poly`` without a column.
    """
    out = np.zeros(size)
    for mono, coef in poly.terms.items():
        term = np.full(size, float(coef))
        for sym, exp in mono:
            term *= power(sym, exp)
        out += term
    return out


class _Comparisons:
    """Boolean columns ``lhs <= rhs`` for all points, each side a Poly or a number (bytes), kept
    packed 62 to an int64 column (a sweep of a million points and hundreds of comparisons).

    Each comparison evaluates ``lhs - rhs`` with the sizes that do not vary substituted, over the
    varying ones (their powers computed once; nothing per point where the difference is the same
    everywhere). With integer coefficients and the terms of both sides below 2**53 in magnitude
    at every point that is exact in float64; otherwise a difference within :data:`EXACT_BAND` of
    the terms' magnitude is decided again with the exact values, as the layer-condition code
    compares them (the float of each exact value).
    """

    def __init__(self, cols: dict, size: int, constants: dict):
        self.cols, self.size, self.constants = cols, size, constants
        self.words, self.count, self._power = [], 0, power_table(cols)
        self._top = {n: float(np.abs(c).max()) for n, c in cols.items()}

    def _magnitude(self, poly) -> float:
        """An upper bound of the terms of ``poly`` (sizes substituted) over all points, in magnitude."""
        return sum(abs(float(c)) * float(np.prod([self._top[s] ** e for s, e in m])) for m, c in poly.terms.items())

    def _difference(self, lhs, rhs) -> tuple:
        """``(values of lhs - rhs at every point or a number where it is the same everywhere, exact,
        magnitude of both sides' terms)``."""
        sides = [_poly(x).subs(self.constants) for x in (lhs, rhs)]
        poly = sides[0] - sides[1]
        whole = all(Fraction(c).denominator == 1 for p in sides for c in p.terms.values())
        magnitude = sum(self._magnitude(p) for p in sides)
        exact = whole and magnitude < 2.0 ** 53
        if poly.is_constant():
            return float(poly.constant_value()), exact, magnitude
        return evaluate(poly, self.size, self._power), exact, magnitude

    def _exact(self, side, i: int) -> float:
        if isinstance(side, (int, float)):
            return side
        return float(side.evaluate({**self.constants, **{n: int(c[i]) for n, c in self.cols.items()}}))

    def leq(self, lhs, rhs) -> None:
        """Append the column ``lhs <= rhs`` (a number where it is the same at every point)."""
        diff, exact, magnitude = self._difference(lhs, rhs)
        bit = diff <= 0
        if not exact:  # decided again where the difference is within the band of the terms' size
            bit = np.array(np.broadcast_to(bit, (self.size,)))
            for i in np.flatnonzero(np.abs(np.broadcast_to(diff, (self.size,))) <= EXACT_BAND * magnitude):
                bit[i] = self._exact(lhs, i) <= self._exact(rhs, i)
        if self.count % 62 == 0:
            self.words.append(np.zeros(self.size, dtype=np.int64))
        self.words[-1] |= np.asarray(bit, dtype=np.int64) << (self.count % 62)
        self.count += 1

    def within(self, poly, capacity: float) -> None:
        """Append the near-capacity band ``capacity / F <= poly <= capacity * F`` and ``poly <= 0``
        (:func:`loopmodel.workflows.confidence.near_capacity`)."""
        if not capacity:
            return
        self.leq(poly, capacity * CAPACITY_FACTOR)
        self.leq(capacity / CAPACITY_FACTOR, poly)
        self.leq(poly, 0.0)

    def packed(self) -> list:
        """The columns appended so far, packed 62 to an int64 column."""
        return list(self.words)


def _poly(side):
    """A Poly of a Poly or a number (a float exactly, as a Fraction)."""
    return Poly.const(Fraction(side)) if isinstance(side, (int, float)) else side


def why_not_piecewise(analyzer, points) -> str | None:
    """Why the sweep ``points`` of ``analyzer`` cannot be split into pieces, or None where it can:
    only a layer-condition analysis (no cache simulation) of LC, ECM and Roofline, one core,
    loop bounds and strides that do not depend on outer indices or (strides) on the sizes."""
    opt, kernel = analyzer.options, analyzer.kernel
    if analyzer.lc is None or analyzer.sim is not None:
        return "the data traffic comes from cache simulation"
    if not set(opt.models) <= PIECEWISE_MODELS:
        return "RooflineASM is evaluated per point"
    if opt.cores != 1:
        return "several cores divide the data set by the outer loop's trips"
    kept = analyzer.lc.write_back_loops(opt.sweeps)
    if kept:
        return (f"'{min(kept)}' is written back once per trip of an outer loop (traffic not constant "
                "between layer-condition transitions)")
    indices = set(kernel.loop_indices)
    for loop in kernel.loops:
        if (loop.start.symbols | loop.stop.symbols) & indices:
            return f"the bounds of loop '{loop.index}' depend on an outer index"
    if analyzer.alignment_modulus is None:
        return "the split vector accesses depend on the sizes beyond their residues"
    if analyzer.fixed_strides is None:
        return "a stride depends on the sizes"
    return None


def empty_points(kernel, cols: dict, size: int) -> np.ndarray:
    """Whether the kernel does nothing at each point (bool, shape ``(size,)``): an array dimension
    below 1 or a loop of no iteration, as :func:`~loopmodel.ir.point.check_point` refuses them
    (:class:`~loopmodel.errors.EmptyPointError`) for loop bounds that depend on sizes only."""
    empty, power = np.zeros(size, dtype=bool), power_table(cols)
    for arr in kernel.arrays.values():
        for dim in arr.dims:
            empty |= evaluate(dim, size, power) < 1
    for loop in kernel.loops:
        empty |= _trips(loop, size, power) < 1
    return empty


def _within_bytes(kernel, cols: dict, size: int) -> bool:
    """Whether the arrays take well below 2**62 bytes at every point (near it the exact check of
    :func:`~loopmodel.ir.point.check_point` decides: the points are analysed one by one)."""
    total, power = np.zeros(size), power_table(cols)
    for arr in kernel.arrays.values():
        total += evaluate(arr.size_elements, size, power) * arr.element_size
    return not (total > MAX_DATA_BYTES / 2).any()


def _trips(loop, size: int, power) -> np.ndarray:
    """Iterations of a loop whose bounds depend on sizes only: ceil(span / |step|), at least 0."""
    span = loop.stop - loop.start if loop.step > 0 else loop.start - loop.stop
    value = np.ceil(evaluate(span, size, power) / abs(loop.step)).astype(np.int64)
    return np.maximum(0, value)


def _lc_bits(analyzer, comps: _Comparisons) -> None:
    """The comparisons that decide the layer conditions (``LayerConditionAnalysis.predict``):
    each finite reuse distance against each candidate, each requirement and the whole data set
    against each cache's share, and the near-capacity bands of the confidence tags."""
    lc, machine, opt = analyzer.lc, analyzer.machine, analyzer.options
    for a in lc.accesses:
        if a.distance is not None:
            for t in lc.candidates[1:]:
                comps.leq(a.distance, t)
    for csize in effective_sizes(machine.caches, 1, opt.cache_factor):
        for ci, req in enumerate(lc.requirements):
            comps.leq(req, csize)
            if ci:
                comps.within(req, csize)
        if opt.sweeps == "repeated" and lc.accesses:
            comps.leq(lc.data_set, csize)
            comps.within(lc.data_set, csize)



def _short_bound(result, kernel, machine) -> int:
    """Inner trip counts below this get a piece each: the short-loop correction of the in-core
    times (:func:`~loopmodel.workflows.analysis.short_loop_incore`: a loop of fewer than
    ``LONG_LOOP_PASSES`` passes, or of fewer iterations than a compiled pass) and the
    ``short-inner-loop`` confidence tag (:data:`~loopmodel.workflows.confidence.SHORT_INNER_LOOP`)
    depend on the count itself."""
    bound = max(SHORT_INNER_LOOP, 4 * full_simd_lanes(kernel, machine))
    if result.incore is not None:
        per_pass = result.compiled.iterations_per_pass if result.compiled is not None else result.incore.lanes
        bound = max(bound, int(LONG_LOOP_PASSES * per_pass) + 1)
    return bound


def _segments(keys: np.ndarray) -> np.ndarray:
    """The piece of each point of a key matrix (points x columns), equal rows one piece, numbered
    by first point (:func:`_renumbered`); runs of equal rows are found first, so a sweep whose
    pieces are intervals costs one comparison per point and column."""
    size = keys.shape[0]
    change = np.ones(size, dtype=bool)
    if size > 1:
        change[1:] = (keys[1:] != keys[:-1]).any(axis=1)
    starts = np.flatnonzero(change)
    _, run_key = np.unique(keys[starts], axis=0, return_inverse=True)
    run_piece, _ = _renumbered(run_key.reshape(-1))
    return np.repeat(run_piece, np.diff(np.append(starts, size)))


def _residue_count(analyzer, points) -> int:
    """Distinct values of :func:`_residues`."""
    return analyzer.alignment_modulus ** len(varying(points))


def _residues(analyzer, points, cols: dict, size: int) -> np.ndarray:
    """The varying sizes modulo the alignment modulus, as one number per point: the analytic in-core
    model's split vector accesses depend on them
    (:func:`~loopmodel.models.split_access.alignment_modulus`)."""
    m = analyzer.alignment_modulus
    out = np.zeros(size, dtype=np.int64)
    for n in varying(points):
        out = out * m + cols[n] % m
    return out


def _renumbered(key: np.ndarray) -> tuple:
    """``(piece per point, first point of each piece)`` of one int64 key per point, the pieces
    numbered by their first point."""
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    order = np.argsort(first)
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return rank[inverse.reshape(-1)], first[order]


def _key_columns(analyzer, points, cols: dict, size: int, first) -> list:
    """The columns whose values decide a point's piece (see the module docstring)."""
    names = set(varying(points))
    constants = {n: int(c[0]) for n, c in cols.items() if n not in names}
    comps = _Comparisons({n: c for n, c in cols.items() if n in names}, size, constants)
    _lc_bits(analyzer, comps)
    keys = comps.packed()
    var = analyzer.options.solve_for or analyzer.lc.variable
    keys += [cols[n] for n, seq in points.values.items() if len(seq) > 1 and n != var]
    trips = _trips(analyzer.kernel.loops[-1], size, power_table(cols))
    keys.append(np.where(trips < _short_bound(first, analyzer.kernel, analyzer.machine), trips, -1))
    at = analyzer.options.incore_defines
    if at:  # the compiled analysis is done once, at the largest point; the others say so
        keys.append(np.logical_and.reduce([cols[n] == v for n, v in at.items() if n in cols]).astype(np.int64))
    return keys


def piecewise(analyzer, points, skipped) -> tuple:
    """``(Pieces, None)`` for the sweep ``points`` (:class:`~loopmodel.fileio.defines.Sweep`) of
    ``analyzer`` (:class:`~loopmodel.workflows.analysis.Analyzer`), the points at which the kernel
    does nothing (:func:`empty_points`) left out and counted in ``skipped``
    (:class:`~loopmodel.workflows.analyze.SkippedPoints`, the first one's message from
    :func:`~loopmodel.ir.point.check_point`); or ``(None, reason)`` where the points must be
    analysed one by one (:func:`why_not_piecewise`, arrays near 2**62 bytes, or no point at which
    the kernel runs: the analysis of a point says why).

    Raises:
        LoopmodelError: as :meth:`~loopmodel.workflows.analysis.Analyzer.run` at a piece's first point.
    """
    reason = why_not_piecewise(analyzer, points)
    if reason:
        return None, reason
    cols = point_columns(points)
    empty = empty_points(analyzer.kernel, cols, len(points))
    at = np.flatnonzero(~empty)
    if not len(at):
        return None, "the kernel does nothing at any point"
    if len(at) < len(points):
        if not _count_skipped(analyzer.kernel, points, empty, skipped):
            return None, "the sizes at which the kernel does nothing could not be told apart at once"
        cols = {n: c[at] for n, c in cols.items()}
    size = len(at)
    if not _within_bytes(analyzer.kernel, cols, size):
        return None, "the arrays take close to 2**62 bytes at some of the points"
    first = analyzer.run(points[int(at[0])])
    keys = _key_columns(analyzer, points, cols, size, first)
    base = _segments(np.column_stack(keys))
    piece, firsts = _renumbered(base * _residue_count(analyzer, points) + _residues(analyzer, points, cols, size))
    results = (first,) + tuple(analyzer.run(points[int(at[i])]) for i in firsts[1:])
    names = varying(points)
    return Pieces(names, {n: cols[n] for n in names}, piece, firsts, results), None


def _count_skipped(kernel, points, empty: np.ndarray, skipped) -> bool:
    """Count the ``empty`` points in ``skipped``, the first one's refusal as the exact check words it
    (:func:`~loopmodel.ir.point.check_point`); False (nothing counted) where the exact check does
    not refuse that point."""
    try:
        check_point(kernel, points[int(np.flatnonzero(empty)[0])])
    except EmptyPointError as exc:
        skipped.add(exc, int(empty.sum()))
        return True
    return False
