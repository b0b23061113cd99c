"""``omp`` over a ``-D`` range: the program predicted at every size point of the range for
every thread count, one :class:`SizeResult` per point, in sweep order.

The points are taken :data:`BLOCK` at a time: the program is read once as a form and evaluated
at the block's sizes (:class:`~loopmodel.fileio.omp_sizes.ProgramAtSizes`), the in-core time of
each phase is analysed once per distinct value of what it depends on (the accesses' integers,
empty loops and the sizes the loop bodies use), and each thread count is predicted for the
whole block at once (:func:`~loopmodel.models.omp_sizes.predict_sizes`; the line states are
simulated once per class of sizes and thread count, and a later block whose classes were all
met reuses them: :class:`~loopmodel.models.omp_trace.Traces`). Points the vectorised path
does not take are predicted one by one as ``omp -D`` predicts a single size
(:func:`loopmodel.workflows.omp.analyse`). Every number equals what ``omp`` gives at that one
size; memory is bounded by the block, whatever the number of points.
"""
from __future__ import annotations

from dataclasses import dataclass

import itertools

import numpy as np

from ..errors import DefineError
from ..fileio.defines import Sweep
from ..fileio.host_models import machine_notes
from ..fileio.omp_program import read_omp_program
from ..fileio.omp_sizes import ProgramAtSizes
from ..ir.omp import OmpProgram, Repeat
from ..ir.omp_sizes import ProgramSizes
from ..machine.model import MachineModel
from ..models.coherence_classes import classes
from ..models.omp_program import repeat_slices
from ..models.omp_sizes import predict_sizes
from ..models.omp_trace import Traces
from .inputs import machine_model, machine_name
from .omp import OmpOptions, analyse, coherence_timing, phase_core_seconds, thread_counts

#: size points predicted together (the arrays of a block are a few times this x the phases x the
#: threads; 2048 keeps those of 16 threads within a core's cache)
BLOCK = 2048


@dataclass(frozen=True)
class ThreadTime:
    """One thread count at one size: ``threads``, ``total_seconds`` (the sum of the phases),
    ``speedup`` (the size's time on the first thread count / this one), ``phase_seconds``
    (every executed phase, execution order), ``repeat_seconds`` (per repeat, in program order,
    the seconds of each iteration)."""
    threads: int
    total_seconds: float
    speedup: float
    phase_seconds: tuple
    repeat_seconds: tuple


@dataclass(frozen=True)
class SizeResult:
    """One size point: ``defines`` (constant -> value, as ``-D`` gave them), ``rows``
    (:class:`ThreadTime`, in the order of the thread counts) and ``repeat_lines`` (the source
    line of each repeat, the order of :attr:`ThreadTime.repeat_seconds`)."""
    defines: dict
    rows: tuple
    repeat_lines: tuple


@dataclass(frozen=True)
class OmpSizes:
    """A prepared size study of the program file ``path`` at ``points``
    (:class:`~loopmodel.fileio.defines.Sweep`) for ``threads``: the ``program`` at the first
    point, the ``machine`` model and its ``machine_name``, the machine's ``notes``;
    :meth:`results` computes it."""
    path: str
    points: Sweep
    threads: tuple
    program: OmpProgram
    machine: MachineModel
    machine_name: str
    notes: tuple

    def results(self):
        """:class:`SizeResult` per point, in sweep order, computed a block at a time."""
        timing = coherence_timing(self.machine, self.machine_name)
        swept = [n for n, seq in self.points.values.items() if len(seq) > 1]
        reader = ProgramAtSizes(self.path, self.points[0], swept, self.program)
        incore = _InCore(reader, self.machine)
        traces = Traces()
        for start in range(0, len(self.points), BLOCK):
            points = [self.points[i] for i in range(start, min(start + BLOCK, len(self.points)))]
            yield from self._block(reader, incore, timing, traces, points)

    def _block(self, reader: ProgramAtSizes, incore: "_InCore", timing, traces: Traces, points: list) -> list:
        groups, alone = reader.block(points)
        rows: dict = {}
        for idx, sizes in groups:
            core = incore.core(sizes, [points[i] for i in idx])
            done = np.ones(sizes.count, dtype=bool)
            preds = []
            for pred in predict_sizes(sizes, timing, self.threads, core, False, traces):
                done &= pred.done  # one prediction at a time: only its phase times are kept
                preds.append((pred.seconds[pred.phase_rows], pred.phase_rows))
            repeats = repeat_slices(sizes.program)
            sums = [_sums(per[:, done], at, repeats) for per, at in preds]
            lines = tuple(rep.line for rep, _ in repeats)
            for s, row in zip(np.flatnonzero(done).tolist(), _assemble(self.threads, sums)):
                rows[int(idx[s])] = row, lines
            alone = np.concatenate([alone, idx[~done]])
        for i in alone.astype(int):
            program = read_omp_program(self.path, points[i])
            one = analyse(program, self.machine, list(self.threads), machine_name=self.machine_name)
            rows[int(i)] = _rows(repeat_slices(program), [(r.threads, [p.seconds for p in r.prediction.phases])
                                                          for r in one])
        return [SizeResult(p, *rows[i]) for i, p in enumerate(points)]


def _sums(per, at, repeats: tuple) -> tuple:
    """One thread count at the sizes of a block: ``(phases, totals, iterations)``, per size its
    phase seconds (a tuple), their sum, and per repeat its iterations' sums (a tuple per
    size of a tuple per repeat), added by Python's ``sum`` as
    :func:`~loopmodel.models.omp_program.predict_program` adds them. ``per``: float
    (executed phases, sizes); ``at``: the simulated row of each executed phase (iterations
    with the same rows have the same sums)."""
    phases = per.T.tolist()
    totals = list(map(sum, phases))
    iterations = []
    for _, its in repeats:
        known: dict = {}
        columns = []
        for a, b in its:
            key = tuple(at[a:b].tolist())
            if key not in known:
                known[key] = [sum(p[a:b]) for p in phases]
            columns.append(known[key])
        iterations.append(list(zip(*columns)) if columns else [()] * len(totals))
    return list(map(tuple, phases)), totals, list(zip(*iterations)) if iterations else [()] * len(totals)


def _assemble(threads: tuple, sums: list):
    """Per size of a block, the :class:`ThreadTime` of every thread count from :func:`_sums`
    per thread count, speed-ups as :func:`~loopmodel.workflows.omp.analyse` divides them."""
    base = sums[0][1]
    columns = []
    for t, (phases, totals, iterations) in zip(threads, sums):
        speedups = [b / x if x else 1.0 for b, x in zip(base, totals)]
        columns.append(list(map(ThreadTime, itertools.repeat(t), totals, speedups, phases, iterations)))
    return zip(*columns)


def _rows(repeats: tuple, per_thread: list) -> tuple:
    """``(rows, repeat lines)``: :class:`ThreadTime` per ``(threads, phase seconds)``, totals and
    per-iteration sums as :func:`~loopmodel.models.omp_program.predict_program` adds them,
    speed-ups as :func:`~loopmodel.workflows.omp.analyse` divides them; ``repeats``: the
    program's :func:`~loopmodel.models.omp_program.repeat_slices`."""
    slices = [its for _, its in repeats]
    out = []
    for threads, secs in per_thread:
        total = sum(secs)
        reps = tuple(tuple(sum(secs[a:b]) for a, b in its) for its in slices)
        out.append((threads, total, tuple(secs), reps))
    base = out[0][1]
    rows = tuple(ThreadTime(t, total, base / total if total else 1.0, secs, reps) for t, total, secs, reps in out)
    return rows, tuple(rep.line for rep, _ in repeats)


class _InCore:
    """The in-core time per iteration of each phase (:func:`~loopmodel.workflows.omp.phase_core_seconds`),
    analysed once per distinct value of what it depends on: the accesses' coefficients and
    offsets, which loops are empty, and the swept sizes the loop bodies use (the form's
    ``loop_code``)."""

    def __init__(self, reader: ProgramAtSizes, machine: MachineModel):
        self.reader, self.machine = reader, machine
        names = set()
        for item in (reader.form.items if reader.form is not None else ()):
            for ph in (item.body if isinstance(item, Repeat) else (item,)):
                names |= set(ph.loop_code.split())
        self.body_names = sorted(names)
        self.known: dict = {}

    def core(self, sizes: ProgramSizes, points: list) -> dict:
        """``id(SizedPhase)`` -> float (S,) in-core seconds per iteration (NaN: unknown)."""
        unique = [sp for it in sizes.items for sp in (it if isinstance(it, tuple) else (it,))]
        key = np.concatenate([np.concatenate([sp.coeff.reshape(-1, sizes.count), sp.offset, sp.hi == sp.lo])
                              for sp in unique] + [np.array([[p[n] for p in points] for n in self.body_names],
                                                            dtype=np.int64).reshape(-1, sizes.count)])
        first, inverse = classes([np.ascontiguousarray(key.T)], sizes.count)
        values = np.full((len(unique), sizes.count), np.nan)
        for k, at in enumerate(first):
            per_phase = self._analysed(key[:, at].tobytes(), points[int(at)])
            values[:, inverse == k] = np.array(per_phase, dtype=np.float64)[:, None]
        return {id(sp): values[j] for j, sp in enumerate(unique)}

    def _analysed(self, key: bytes, point: dict) -> list:
        """The in-core seconds of every phase (NaN where None) at ``point``, once per key."""
        if key not in self.known:
            program = self.reader.read(point)
            core, _ = phase_core_seconds(program, self.machine)
            phases = [ph for it in program.items for ph in (it.body if isinstance(it, Repeat) else (it,))]
            self.known[key] = [np.nan if core.get(ph) is None else core[ph] for ph in phases]
        return self.known[key]


def prepare(program: str, machine, options: OmpOptions, points: Sweep) -> OmpSizes:
    """The size study of ``program`` (C or YAML) on ``machine`` at ``points`` (a ``-D`` range),
    for ``options.threads`` (default: the thread counts of the coherence section).

    Raises:
        DefineError: ``--measure`` (it runs one size), or a bad thread list. KernelError: the
            program refused at the first point. MachineError, ModelError: as
            :func:`loopmodel.workflows.omp.run`.
    """
    if options.measure:
        raise DefineError("--measure runs the program at one size: give one value per size constant")
    model = machine_model(machine)
    name = machine_name(machine)
    threads = thread_counts(model, name, options.threads)
    first = read_omp_program(program, points[0])
    return OmpSizes(str(program), points, tuple(threads), first, model, name, machine_notes(name, model))


def table(study: OmpSizes) -> dict:
    """The study as columns, one row per point and thread count, in sweep order: one column
    per ``-D`` constant (int64), ``threads`` (int64), ``total_time_s``, ``speedup`` and
    ``phase_<k>_time_s`` for every executed phase k (float64; NaN where a point executes fewer
    phases). Built :data:`BLOCK` points at a time into numpy arrays (no Python object per
    number is kept)."""
    names = list(study.points[0])
    blocks, pending = [], []
    for res in study.results():
        pending.append(res)
        if len(pending) == BLOCK:
            blocks.append(_columns(pending, names))
            pending = []
    blocks.append(_columns(pending, names))
    phases = max(b[1].shape[1] for b in blocks)
    out = {k: np.concatenate([b[0][k] for b in blocks]) for k in blocks[0][0]}
    times = np.concatenate([np.pad(b[1], ((0, 0), (0, phases - b[1].shape[1])), constant_values=np.nan)
                            for b in blocks])
    out.update({f"phase_{k}_time_s": times[:, k] for k in range(phases)})
    return out


def _columns(results: list, names: list) -> tuple:
    """``(columns, phase times (rows, phases))`` of some :class:`SizeResult`."""
    rows = [(res, r) for res in results for r in res.rows]
    cols = {n: np.array([res.defines[n] for res, _ in rows], dtype=np.int64) for n in names}
    cols["threads"] = np.array([r.threads for _, r in rows], dtype=np.int64)
    cols["total_time_s"] = np.array([r.total_seconds for _, r in rows], dtype=np.float64)
    cols["speedup"] = np.array([r.speedup for _, r in rows], dtype=np.float64)
    times = np.full((len(rows), max((len(r.phase_seconds) for _, r in rows), default=0)), np.nan)
    for i, (_, r) in enumerate(rows):
        times[i, :len(r.phase_seconds)] = r.phase_seconds
    return cols, times
