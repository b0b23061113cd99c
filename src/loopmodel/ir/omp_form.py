"""The form of an OpenMP program (its integers as polynomials of the swept size constants,
:mod:`loopmodel.fileio.omp_swept`) evaluated at many sizes at once, into the numpy columns of
:class:`~loopmodel.ir.omp_sizes.ProgramSizes`.

The values are those the per-size reading computes (:mod:`loopmodel.fileio.omp_program`): a
loop's ``hi`` is raised to its ``lo``, a repeat loop's count is its trips. Sizes at which the
per-size reading refuses the program (a dimension not above 0, arrays beyond
:data:`~loopmodel.ir.point.MAX_DATA_BYTES`, more than ``max_phases`` executed phases, a negative
repeat count) or whose integers come near the int64 range are not ``ok``: the per-size reading
takes them (and says why).

Pure functions over numpy arrays; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .omp import LoopBound, OmpProgram, Repeat
from .omp_sizes import ProgramSizes, SizedPhase
from .point import MAX_DATA_BYTES
from .poly import Poly

#: integers whose estimated magnitude reaches this are left to the per-size reading
_LIMIT = 2.0 ** 61


@dataclass(frozen=True)
class FormValues:
    """A form at S sizes.

    Attributes:
        ok: bool (S,): sizes whose program the columns give (see the module text).
        counts: int64 (repeats, S): each repeat's count, in program order.
        phases: per phase of the form, in program order (a repeat's body once):
            ``(lo, hi, coeff, offset)`` as in :class:`~loopmodel.ir.omp_sizes.SizedPhase`.
    """
    ok: np.ndarray
    counts: np.ndarray
    phases: tuple

    def sizes(self, program: OmpProgram, select) -> ProgramSizes:
        """The :class:`ProgramSizes` of the sizes ``select`` picks (a bool mask or indices),
        with the structure of ``program`` (the program read at one of them: same items)."""
        phases = iter(self.phases)

        def sized(ph):
            lo, hi, coeff, offset = next(phases)
            return SizedPhase(ph, lo[:, select], hi[:, select], coeff[:, :, select], offset[:, select])

        items = tuple(tuple(sized(p) for p in it.body) if isinstance(it, Repeat) else sized(it)
                      for it in program.items)
        return ProgramSizes(program, items, int(np.arange(self.ok.shape[0])[select].size))


def _values(poly: Poly, values: dict, size: int) -> tuple:
    """``(value, magnitude)``: ``poly`` at every size (int64 (S,)) and a float bound of the
    magnitude of its terms (overflow guard)."""
    out = np.zeros(size, dtype=np.int64)
    mag = np.zeros(size)
    for mono, c in poly.terms.items():
        if abs(c) >= _LIMIT:
            return out, np.full(size, np.inf)
        term = np.full(size, int(c), dtype=np.int64)
        bound = np.full(size, abs(float(c)))
        for sym, e in mono:
            for _ in range(e):
                term = term * values[sym]
                bound = bound * np.abs(values[sym].astype(np.float64))
        out += term
        mag += bound
    return out, mag


class _Evaluation:
    """The values of one form at S sizes, and whether each size stays in range so far."""

    def __init__(self, values: dict, size: int):
        self.values, self.size = values, size
        self.ok = np.ones(size, dtype=bool)

    def value(self, poly: Poly):
        v, mag = _values(poly, self.values, self.size)
        self.ok &= mag < _LIMIT
        return v

    def phase(self, ph) -> tuple:
        loops = ph.loops
        lo = np.zeros((len(loops), self.size), dtype=np.int64)
        hi = np.zeros_like(lo)
        for k, lp in enumerate(loops):
            lo[k] = self.value(lp.lo)
            hi[k] = np.maximum(self.value(lp.hi), lo[k])
        coeff = np.zeros((len(ph.accesses), len(loops), self.size), dtype=np.int64)
        offset = np.zeros((len(ph.accesses), self.size), dtype=np.int64)
        names = [lp.var for lp in loops]
        for a, acc in enumerate(ph.accesses):
            offset[a] = self.value(acc.offset)
            for var, c in acc.coeffs:
                coeff[a, names.index(var)] = self.value(c)
        return lo, hi, coeff, offset

    def count(self, count):
        """A repeat's count: the trips of its loop (C) or the number itself (YAML, >= 0)."""
        if isinstance(count, LoopBound):
            lo = self.value(count.lo)
            hi = np.maximum(self.value(count.hi), lo)
            return -((lo - hi) // count.step)
        n = self.value(count)
        self.ok &= n >= 0
        return n

    def arrays(self, form: OmpProgram) -> None:
        """Dimensions above 0 and the arrays within :data:`MAX_DATA_BYTES` (estimated)."""
        total = np.zeros(self.size)
        for arr in form.arrays.values():
            n = np.full(self.size, float(arr.element_size))
            for d in arr.dims:
                v = self.value(d)
                self.ok &= v > 0
                n = n * v.astype(np.float64)
            total += n
        self.ok &= total < MAX_DATA_BYTES / 2


def evaluate(form: OmpProgram, values: dict, max_phases: int) -> FormValues:
    """``form`` at S sizes: ``values`` maps each swept constant to its int64 values (S,).

    Args:
        form: the form (:func:`loopmodel.fileio.omp_program.read_omp_form`).
        values: swept constant -> int64 array (S,).
        max_phases: the most executed phases the per-size reading takes.
    Returns:
        :class:`FormValues`.
    """
    size = len(next(iter(values.values())))
    ev = _Evaluation(values, size)
    ev.arrays(form)
    counts, phases = [], []
    executed = np.zeros(size, dtype=np.int64)
    for item in form.items:
        if isinstance(item, Repeat):
            n = ev.count(item.count)
            counts.append(n)
            executed += np.where(ev.ok, n, 0) * len(item.body)
            phases += [ev.phase(p) for p in item.body]
        else:
            executed += 1
            phases.append(ev.phase(item))
    ok = ev.ok & (executed <= max_phases)
    return FormValues(ok, np.array(counts, dtype=np.int64).reshape(len(counts), size), tuple(phases))
