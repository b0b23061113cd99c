"""Reading one OpenMP program at many sizes: the file is read once as a form
(:func:`~loopmodel.fileio.omp_program.read_omp_form`, the swept size constants kept as
symbols), the form is evaluated a block of sizes at a time (:func:`loopmodel.ir.omp_form.evaluate`),
the sizes are grouped by their repeat counts, and one program is read per group for its
structure (:func:`~loopmodel.fileio.omp_program.read_omp_program` at its first size). The
sizes the form does not give (a program whose integers depend on the sizes in another way,
or sizes the per-size reading refuses) are left to the caller, to read one by one.
"""
from __future__ import annotations

import numpy as np

from ..ir.omp import OmpProgram
from ..ir.omp_form import evaluate
from ..ir.omp_sizes import structure
from .omp_program import MAX_EXECUTED_PHASES, read_omp_form, read_omp_program
from .omp_swept import SizeDependent


class ProgramAtSizes:
    """One program file at the sizes of a study.

    Args:
        path: the program (C or YAML).
        first: the first size point (constant -> int; every constant of the study).
        swept: the constants that vary over the study.
        program: the program read at ``first``, where the caller has it (else it is read).
    Raises:
        KernelError: the file cannot be read or is refused at ``first`` (as
            :func:`~loopmodel.fileio.omp_program.read_omp_program`).
    """

    def __init__(self, path, first: dict, swept, program: OmpProgram | None = None):
        self.path, self.swept = path, tuple(swept)
        self._first_point = dict(first)
        self.first = program if program is not None else read_omp_program(path, first)
        try:
            self.form = read_omp_form(path, first, self.swept) if self.swept else None
        except SizeDependent:
            self.form = None
        self._programs: dict = {}

    def block(self, points: list) -> tuple:
        """``(groups, alone)`` for a block of size points (dicts): ``groups`` a list of
        ``(indices into points, ProgramSizes)``, one per structure; ``alone`` the indices of
        the points to read one by one."""
        if self.form is None:
            return [], np.arange(len(points))
        values = {n: np.array([p[n] for p in points], dtype=np.int64) for n in self.swept}
        fv = evaluate(self.form, values, MAX_EXECUTED_PHASES)
        ok = np.flatnonzero(fv.ok)
        groups, alone = [], [np.flatnonzero(~fv.ok)]
        if ok.size:
            keys, inverse = np.unique(fv.counts[:, ok].T, axis=0, return_inverse=True)
            for g, key in enumerate(keys):
                idx = ok[inverse.reshape(-1) == g]
                program = self._program(tuple(int(k) for k in key), points[int(idx[0])])
                if program is None:
                    alone.append(idx)
                else:
                    groups.append((idx, fv.sizes(program, idx)))
        return groups, np.sort(np.concatenate(alone))

    def _program(self, counts: tuple, point: dict) -> OmpProgram | None:
        """The program with repeat ``counts`` (read at ``point`` once); None if its structure is
        not the form's (then its sizes are read one by one)."""
        if counts not in self._programs:
            program = self.read(point)
            same = structure(program)[0] == structure(self.form, counts)[0]
            self._programs[counts] = program if same else None
        return self._programs[counts]

    def read(self, point: dict) -> OmpProgram:
        """The program at ``point`` (:func:`~loopmodel.fileio.omp_program.read_omp_program`;
        the first point's program is read once)."""
        return self.first if point == self._first_point else read_omp_program(self.path, point)
