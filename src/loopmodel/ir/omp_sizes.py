"""One OpenMP program at many sizes: the structure of an :class:`~loopmodel.ir.omp.OmpProgram`
(phases, their kinds, loop variables and steps, accesses' arrays and kinds, repeats) with
every size-dependent integer as a numpy column, one entry per size, so that the coherence
model can predict all the sizes at once (:mod:`loopmodel.models.omp_sizes`).

Pure data; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .omp import OmpProgram, Phase, Repeat


@dataclass(frozen=True)
class SizedPhase:
    """One phase at S sizes.

    Attributes:
        phase: the phase at one of the sizes: its kind, line, label, loop variables and steps
            and its accesses' arrays and kinds hold at every size (its integers and notes are
            those of that size only).
        lo, hi: int64 arrays of shape (loops, S): :attr:`~loopmodel.ir.omp.LoopBound.lo` and
            ``hi`` of each loop (outermost first).
        coeff: int64 array of shape (accesses, loops, S): the coefficient of each loop variable
            in each access's flat index (0 where the variable does not occur).
        offset: int64 array of shape (accesses, S): each access's constant term.
    """
    phase: Phase
    lo: np.ndarray
    hi: np.ndarray
    coeff: np.ndarray
    offset: np.ndarray

    def take(self, sizes) -> "SizedPhase":
        """The phase at the sizes ``sizes`` selects (a bool mask or indices over S)."""
        return SizedPhase(self.phase, self.lo[:, sizes], self.hi[:, sizes], self.coeff[:, :, sizes],
                          self.offset[:, sizes])


@dataclass(frozen=True)
class ProgramSizes:
    """A program at S sizes with one structure.

    Attributes:
        program: the program at one of the sizes (the arrays' element sizes and the items'
            structure, :func:`structure`, hold at every size; integers and notes are that
            size's).
        items: one entry per item of ``program.items``: a :class:`SizedPhase` for a phase, a
            tuple of them (the body) for a :class:`~loopmodel.ir.omp.Repeat`; every size has
            the repeat counts of ``program``.
        count: S, the number of sizes.
    """
    program: OmpProgram
    items: tuple
    count: int

    def take(self, sizes) -> "ProgramSizes":
        """The program at the sizes ``sizes`` selects (a bool mask or indices over S)."""
        items = tuple(tuple(sp.take(sizes) for sp in it) if isinstance(it, tuple) else it.take(sizes)
                      for it in self.items)
        return ProgramSizes(self.program, items, int(np.arange(self.count)[sizes].size))


def _phase_shape(ph: Phase) -> tuple:
    return (ph.kind, ph.line, ph.label, tuple((lp.var, lp.step) for lp in ph.loops),
            tuple((a.array, a.kind) for a in ph.accesses))


def structure(program: OmpProgram, counts: tuple | None = None) -> tuple:
    """What :class:`ProgramSizes` takes to be the same at every size: the items with their
    integers and notes left out (repeat counts kept: ``counts``, one per repeat in order, where
    given, else the program's), and the arrays' element sizes."""
    counts = iter(counts if counts is not None else [it.count for it in program.items if isinstance(it, Repeat)])
    items = tuple(("repeat", next(counts), tuple(_phase_shape(p) for p in it.body)) if isinstance(it, Repeat)
                  else _phase_shape(it) for it in program.items)
    return items, tuple((a.name, a.element_size) for a in program.arrays.values())


def _sized_phase(phases: list) -> SizedPhase:
    first = phases[0]
    loops = [lp.var for lp in first.loops]
    lo = np.zeros((len(loops), len(phases)), dtype=np.int64)
    hi = np.zeros((len(loops), len(phases)), dtype=np.int64)
    coeff = np.zeros((len(first.accesses), len(loops), len(phases)), dtype=np.int64)
    offset = np.zeros((len(first.accesses), len(phases)), dtype=np.int64)
    for s, ph in enumerate(phases):
        for k, lp in enumerate(ph.loops):
            lo[k, s], hi[k, s] = lp.lo, lp.hi
        for a, acc in enumerate(ph.accesses):
            offset[a, s] = acc.offset
            for var, c in acc.coeffs:
                coeff[a, loops.index(var), s] = c
    return SizedPhase(first, lo, hi, coeff, offset)


def program_sizes(programs) -> ProgramSizes:
    """The :class:`ProgramSizes` of ``programs`` (one :class:`~loopmodel.ir.omp.OmpProgram` per
    size, at least one, all with the :func:`structure` of the first).

    Raises:
        ValueError: no program, or one whose structure differs from the first's.
    """
    programs = list(programs)
    if not programs:
        raise ValueError("no program")
    shape = structure(programs[0])
    if any(structure(p) != shape for p in programs[1:]):
        raise ValueError("the programs differ in more than their sizes")
    items = []
    for k, item in enumerate(programs[0].items):
        if isinstance(item, Repeat):
            items.append(tuple(_sized_phase([p.items[k].body[j] for p in programs]) for j in range(len(item.body))))
        else:
            items.append(_sized_phase([p.items[k] for p in programs]))
    return ProgramSizes(programs[0], tuple(items), len(programs))
