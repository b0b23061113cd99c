"""``sweep``: run a design-space study (:mod:`loopmodel.workflows.study`) locally or on Dask.

:func:`chunks` cuts a study's points into tasks of one kernel, machine and option set each,
made one at a time; :func:`run_chunk` computes a task exactly as ``loopmodel analyze KERNEL -m
MACHINE -D ... --json`` computes each of its points (the same
:class:`~loopmodel.workflows.analyze.AnalyzeOptions`, :func:`loopmodel.workflows.analyze.run`
and JSON document, from the kernel's bytes and the machine's model that the task carries);
:func:`study_results` runs the tasks on a ``dask.distributed`` client
(:mod:`loopmodel.workflows.sweep_dask`) or in this process, a bounded number in flight,
reusing the per-user result cache (:mod:`loopmodel.cache`, key :func:`chunk_key`) for tasks
computed before. :func:`write_study` (and :func:`run`, the command) streams the rows to a CSV
or Parquet file (:class:`loopmodel.fileio.result_file.ResultFile`); :func:`run_study` keeps
them in a :class:`Table` (at most :data:`MAX_TABLE_ROWS`).

Each point becomes one row: ``kernel`` (as given), ``machine`` (as given), one column per
define, one per option, ``error`` (the point's one-line :class:`LoopmodelError`, else None;
any other exception is a bug and stops the sweep) and the JSON report's fields flattened
with dots (:func:`flatten`).

The Python API's ``loopmodel.sweep`` (one kernel, machine and option set) takes its rows from
:func:`size_sweep` and writes them with :func:`write_rows` or keeps them in :func:`table`.
"""
from __future__ import annotations

import contextlib
import functools
import itertools
import json
import platform
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from .. import cache
from ..errors import DefineError, LoopmodelError, OptionError, stop_reason
from ..fileio.kernel_yaml import YAML_SUFFIXES
from ..fileio.result_file import ResultFile, RowBatch
from ..report.json_report import to_dict
from ..report.schema import ENVELOPE, document
from . import analyze, sweep_dask
from .analyze import AnalyzeOptions, model_names, peer_models
from .inputs import machine_name
from .options import option
from .study import FIXED_COLUMNS, Study, StudyError, StudyKernel, StudyMachine, read_study
from .sweep_dask import SweepStopped

#: points per task (a task prepares one analyzer and runs its points; the cache stores tasks)
CHUNK_POINTS = 32
#: the report's fields a row holds (``y`` of the study plot)
DEFAULT_Y = "ecm.performance.cy_per_cl"
#: most rows a table in memory holds (:func:`run_study`, ``loopmodel.sweep(...)``): 10^7 rows
#: of ~100 fields take some GB; a larger study is written to a file as it runs (:func:`write_study`)
MAX_TABLE_ROWS = 10 ** 7


@dataclass(frozen=True)
class SweepOptions:
    """``sweep``'s options that decide how the study is computed: where (a Dask scheduler or a
    local cluster of N processes), whether the result cache is used, and the trust given to
    the machine files. (The output, ``-o``, ``--force``, ``--plot`` and ``--no-progress``, is
    the command line's.)"""

    dask: str | None = option(
        None, "run on this dask.distributed scheduler (e.g. tcp://10.0.0.1:8786); its workers need loopmodel (the "
              "tasks carry the kernels and machine models). LOOPMODEL_DASK_TIMEOUT (seconds, default 15) bounds the "
              "wait for its answer, and for a worker when none is left", "--dask", metavar="SCHEDULER_ADDRESS")
    workers: int | None = option(None, "worker processes of the local cluster (default: the usable CPUs)",
                                 "--workers", "-w", type=int, metavar="N")
    no_cache: bool = option(False, "do not read or write the per-user result cache", "--no-cache")
    trust_machine_flags: bool = option(
        False, "use the machine files' compiler flags and names without the allow-list check (they run on the "
               "workers: only for files you trust; a study file cannot ask for this)", "--trust-machine-flags")


class SweepInterrupted(SweepStopped):
    """A sweep stopped by SIGINT (Ctrl-C; exit status 130), or by SIGTERM or SIGHUP
    (:class:`loopmodel.errors.Stopped`; 143, 129), as any command so stopped.

    Args:
        message: one line: what stopped it, the points done, what was written.
        exit_code: the exit status (:func:`loopmodel.errors.stop_reason`).
    """

    exit_code = 130

    def __init__(self, message: str, exit_code: int = 130):
        super().__init__(message)
        self.exit_code = exit_code


@dataclass(frozen=True)
class Chunk:
    """One task: points of one kernel, machine and option set.

    Attributes:
        index: position among the study's tasks (rows come out in this order).
        kernel, machine: :class:`~loopmodel.workflows.study.StudyKernel`,
            :class:`~loopmodel.workflows.study.StudyMachine`.
        options: ``((option, value as given), ...)`` of this task, in file order (its columns).
        analysis: the :class:`AnalyzeOptions` of every point of the task (frozen, hashable).
        points: tuple of ``{define: size}`` (the kernel's own defines of the study).
    """

    index: int
    kernel: StudyKernel
    machine: StudyMachine
    options: tuple
    analysis: AnalyzeOptions
    points: tuple


@dataclass
class SweepStats:
    """How a study runs, counted while it runs: ``points`` done, ``failed`` (rows with an
    error), ``cached`` (points read from the result cache), ``tasks`` (tasks sent to the
    workers), ``total`` (the study's points)."""

    points: int = 0
    failed: int = 0
    cached: int = 0
    tasks: int = 0
    total: int = 0

    def done(self) -> str:
        """``"N of M points done"``."""
        return f"{self.points} of {self.total} points done"


# ---------------------------------------------------------------- the command


def check(options: SweepOptions) -> None:
    """Check ``options`` before any work.

    Raises:
        DefineError: ``workers`` below 1, or a bad ``LOOPMODEL_DASK_TIMEOUT`` (one line).
    """
    if options.workers is not None and options.workers < 1:
        raise DefineError(f"--workers must be at least 1, got {options.workers}")
    sweep_dask.dask_timeout()


def check_measured(study: Study, options: SweepOptions) -> None:
    """A study whose ``incore`` takes ``measured`` (the kernel benchmarked on the host that
    computes the point, :mod:`.incore_measured`) runs in one local worker: benchmarks side by
    side disturb each other's times, and a Dask worker is not the host the model was probed on.

    Raises:
        OptionError: ``--dask``, or ``--workers`` other than 1 (one line).
    """
    if "measured" in study.settings.get("incore", ()) and (options.dask or options.workers != 1):
        raise OptionError("sweep: incore 'measured' benchmarks every point on the host that computes it; run it "
                          "with --workers 1 and without --dask (benchmarks side by side disturb each other)")


def run(study, options: SweepOptions, output: str | None = None, *, force: bool = False, advance=None,
        on_rows=None) -> SweepStats:
    """Run ``loopmodel sweep``: every point of the study, on the Dask scheduler of
    ``options.dask`` or a local cluster of ``options.workers`` processes (started only when
    a task is not in the result cache), rows written to ``output`` (:func:`write_study`).

    Args:
        study: the study file (read with ``options.trust_machine_flags``), or a
            :class:`~loopmodel.workflows.study.Study` read before.
        options: :class:`SweepOptions`.
        output, force, advance, on_rows: as for :func:`write_study`.

    Returns:
        :class:`SweepStats`.

    Raises:
        StudyError: a malformed study file. DefineError: bad options or output (:func:`check`,
            :func:`write_study`). LoopmodelError: the scheduler not reached, the local cluster
            not started. SweepStopped, SweepInterrupted: see :func:`write_study`.
    """
    check(options)
    if not isinstance(study, Study):
        study = read_study(study, options.trust_machine_flags)
    check_measured(study, options)
    return write_study(study, output, lambda: sweep_dask.dask_client(options.dask, options.workers),
                       not options.no_cache, advance, force, on_rows)


# ---------------------------------------------------------------- tasks


def chunks(study: Study, size: int = CHUNK_POINTS):
    """The study's tasks, in row order: kernels, then machines, then the options' product
    (first option slowest), then the kernel's own defines' product (last define fastest),
    cut into tasks of at most ``size`` points.

    Yields:
        :class:`Chunk`, one at a time: the points of a task are made when it is taken, so a
        study of any number of points takes the memory of one task here.
    """
    index = itertools.count()
    option_sets = tuple(study.option_sets())
    for kernel in study.kernels:
        for machine in study.machines:
            for given, analysis in option_sets:
                points = study.kernel_points(kernel)
                while batch := tuple(itertools.islice(points, size)):
                    yield Chunk(next(index), kernel, machine, given, analysis, batch)


def flatten(doc: dict, prefix: str = "") -> dict:
    """A JSON document -> one level: nested mappings joined with dots (``ecm.T_ECM_cy_per_cl.MEM``);
    lists and empty mappings as JSON text; numbers, strings, booleans and None as they are."""
    out = {}
    for key, value in doc.items():
        name = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            out.update(flatten(value, name + "."))
        elif isinstance(value, (list, tuple, dict)):
            out[name] = json.dumps(value)
        else:
            out[name] = value
    return out


@functools.lru_cache(maxsize=16)
def task_analyzer(kernel: StudyKernel, machine: StudyMachine, options: AnalyzeOptions):
    """``(Analyzer, #define defaults)`` exactly as ``loopmodel analyze`` prepares them for one
    point (:func:`loopmodel.workflows.analyze.run`), from the kernel's bytes and the machine's
    model that the task carries, no file read (the digests and the options key this
    per-process memo, so a changed file is prepared again)."""
    run_ = analyze.run(kernel, machine, options)
    return run_.analyzer, dict(run_.points.base)


def run_chunk(chunk: Chunk) -> RowBatch:
    """Compute a task's points as ``loopmodel analyze KERNEL -m MACHINE -D ... --json`` would,
    one JSON document each, flattened (:func:`flatten`). Runs on a Dask worker (or here).

    Returns:
        :class:`~loopmodel.fileio.result_file.RowBatch`; a point that fails with a
        :class:`LoopmodelError` (bad input, a size the machine cannot take, a failing tool)
        has only ``error``, its one line.

    Raises:
        Exception: anything else (a bug in loopmodel) propagates: it is not data.
    """
    try:
        analyzer, base = task_analyzer(chunk.kernel, chunk.machine, chunk.analysis)
    except LoopmodelError as exc:  # every point of the task fails the same way
        return RowBatch.of([{"error": str(exc)}] * len(chunk.points))
    return RowBatch.of([point_row(analyzer, {**base, **point}) for point in chunk.points])


def point_row(analyzer, point: dict) -> dict:
    """One point as a row: the JSON report of ``analyzer.run(point)`` flattened (:func:`flatten`)
    with ``error`` None, or only ``error`` (the one-line message) when the point fails with a
    :class:`LoopmodelError`.

    Raises:
        Exception: any other failure (a bug, not a property of the point) propagates.
    """
    try:
        # through JSON text, so that the values are those analyze --json prints (the envelope,
        # schema and tool version, is not a column)
        doc = json.loads(json.dumps(to_dict(analyzer.run(point))))
    except LoopmodelError as exc:
        return {"error": str(exc)}
    flat = flatten({n: v for n, v in doc.items() if n not in ENVELOPE})
    flat["error"] = None
    return flat


def lead_columns(kernel: str, machine: str, options) -> dict:
    """The columns a row starts with: ``kernel`` and ``machine`` as given, then ``options``
    (``(name, value as given)`` pairs; lists and mappings as JSON text)."""
    lead = {"kernel": kernel, "machine": machine}
    lead.update({n: json.dumps(v) if isinstance(v, (list, tuple, dict)) else v for n, v in options})
    return lead


# ---------------------------------------------------------------- the result cache


@functools.lru_cache(maxsize=64)
def cacheable(kernel_path: str, options: AnalyzeOptions) -> bool:
    """Whether the results of a task of this kernel with these options depend only on the key
    of :func:`chunk_key`: not when an external tool (llvm-mca, OSACA, a compiler) may take
    part, or ``options.no_cache`` is set."""
    models = model_names(options.pmodel)
    incore_default = peer_models(options.pmodel)[1]
    incore = "analytic" if options.scalar else options.incore or incore_default
    if options.no_cache or "RooflineASM" in models:
        return False
    return incore == "analytic" or kernel_path.lower().endswith(YAML_SUFFIXES) or set(models) <= {"LC"}


def chunk_key(chunk: Chunk) -> str:
    """The result cache's key of a task (:func:`loopmodel.cache.make_key`, which adds loopmodel's
    version and code): the kernel's path and the SHA-256 of its bytes, the machine's spec and
    the SHA-256 of its model, the task's :class:`AnalyzeOptions` (their ``repr``: every field
    by name with its value, str, int, float, bool, None or tuples of those, so the key is the
    same in every process and changes with any option value), the points (sorted
    ``(define, size)`` pairs) and the host's ISA."""
    k, m = chunk.kernel, chunk.machine
    return cache.make_key("sweep-chunk-v2", k.path, k.digest, m.spec, m.digest, chunk.analysis,
                          tuple(tuple(sorted(p.items())) for p in chunk.points), platform.machine())


# ---------------------------------------------------------------- running a study


def study_results(study: Study, client=None, use_cache: bool = True, stats: SweepStats | None = None,
                  advance=None):
    """Run every point of ``study``; yield ``(Chunk, RowBatch)`` in the order of :func:`chunks`.

    Tasks are made as they are sent, and at most a few per worker thread are in flight or
    done but waiting for an earlier one (:meth:`loopmodel.workflows.sweep_dask.Pool.capacity`), so the
    memory taken does not grow with the number of points. Tasks found in the result cache
    are read, not sent.

    Args:
        study: :class:`~loopmodel.workflows.study.Study`.
        client: a ``distributed.Client`` (its workers compute the tasks); a callable giving a
            context manager that yields one (e.g. ``lambda: dask_client(workers=2)``), entered
            when the first task is not in the cache; or None (or a context manager yielding
            None): compute the tasks in this process, one after the other.
        use_cache: read and write the per-user result cache (tasks whose results depend on
            nothing outside the key, :func:`chunk_key`).
        stats: :class:`SweepStats` to count in (``total`` is not set here).
        advance: called with a number of points each time that many are done (progress).

    Raises:
        SweepStopped: no Dask worker left, the scheduler lost, or a task that killed its
            workers (:class:`loopmodel.workflows.sweep_dask.Pool`).
        Exception: what a point raised other than a LoopmodelError (a bug, :func:`run_chunk`).
    """
    stats = SweepStats() if stats is None else stats
    keys = {}

    def cached(chunk):
        key = chunk_key(chunk) if use_cache and cacheable(chunk.kernel.path, chunk.analysis) else None
        hit = cache.load("sweep", key) if key else None
        keys[chunk.index] = key
        return hit if isinstance(hit, RowBatch) else None

    with contextlib.ExitStack() as stack:
        def pool():
            dask = stack.enter_context(client()) if callable(client) else client
            return _Here() if dask is None else stack.enter_context(sweep_dask.Pool(dask, run_chunk))

        for chunk, res, hit in _in_order(chunks(study), cached, pool):
            key = keys.pop(chunk.index)
            if key and not hit:
                cache.store("sweep", key, res)
            n = len(chunk.points)
            stats.points, stats.failed = stats.points + n, stats.failed + res.failures()
            stats.cached, stats.tasks = stats.cached + (n if hit else 0), stats.tasks + (0 if hit else 1)
            if advance:
                advance(n)
            yield chunk, res


def _in_order(tasks, cached, make_pool):
    """``(chunk, result, from_cache)`` in task order. ``cached(chunk)`` gives a cached result
    or None; the others go to the pool (``make_pool()``, called at the first of them), which
    is never given more than its ``capacity()`` tasks, counting those done and held back
    until the tasks before them are done."""
    held, nxt, pool, more = {}, 0, None, True
    tasks = iter(tasks)
    while True:
        busy = pool.busy if pool else 0
        if more and len(held) + busy < (pool.capacity() if pool else 1):
            chunk = next(tasks, None)
            if chunk is None:
                more = False
                continue
            hit = cached(chunk)
            if hit is not None:
                held[chunk.index] = (chunk, hit, True)
            else:
                pool = pool or make_pool()
                pool.submit(chunk)
        elif busy:
            held.update((chunk.index, (chunk, res, False)) for chunk, res in pool.collect())
        elif not held:
            return
        while nxt in held:
            yield held.pop(nxt)
            nxt += 1


class _Here:
    """The tasks computed in this process, each when it is submitted (one at a time)."""

    def __init__(self):
        self.done = []

    @property
    def busy(self) -> int:
        return len(self.done)

    def capacity(self) -> int:
        return 1

    def submit(self, chunk: Chunk) -> None:
        self.done.append((chunk, run_chunk(chunk)))

    def collect(self) -> list:
        done, self.done = self.done, []
        return done


def chunk_rows(chunk: Chunk, result: RowBatch) -> list:
    """A task's rows (flat dicts): its study columns (:func:`lead_columns`), its point's
    defines, then the point's result (a report field with an option's name holds the
    report's value)."""
    lead = lead_columns(chunk.kernel.given, chunk.machine.given, chunk.options)
    return [{**lead, **point, **row} for point, row in zip(chunk.points, result.dicts())]


def run_study(study: Study, client=None, use_cache: bool = True, advance=None) -> tuple:
    """Run every point of ``study`` into a table in memory (:func:`study_results`).

    Args:
        study, client, use_cache, advance: as for :func:`study_results`.

    Returns:
        ``(Table, SweepStats)``; rows in the order of :func:`chunks`.

    Raises:
        StudyError: the study has more than :data:`MAX_TABLE_ROWS` points (write it to a
            file with :func:`write_study` instead).
        SweepStopped: see :func:`study_results`.
    """
    total = study.points()
    if total > MAX_TABLE_ROWS:
        raise StudyError(f"{total} points: a table in memory holds at most {MAX_TABLE_ROWS} rows; write the "
                         "rows to a file as they are computed (loopmodel sweep -o FILE, or write_study)",
                         file=study.path)
    stats = SweepStats(total=total)
    table = Table(study.columns())
    for chunk, res in study_results(study, client, use_cache, stats, advance):
        for row in chunk_rows(chunk, res):
            table.add(row)
    return table, stats


def write_study(study: Study, path: str | None, client=None, use_cache: bool = True, advance=None,
                force: bool = False, on_rows=None) -> SweepStats:
    """Run every point of ``study`` and write its table to ``path`` (``.csv``, ``.parquet`` or
    ``.pq``; None: CSV on stdout), rows kept in a spool as they come and written at the end
    (:class:`loopmodel.fileio.result_file.ResultFile`): memory does not grow with the number of
    points, and the file appears whole or not at all.

    Args:
        study, client, use_cache, advance: as for :func:`study_results`.
        force: replace an existing ``path`` (atomically); else an existing file is an error.
        on_rows: called with each task's rows (a list of flat dicts), e.g. to keep what a plot needs.

    Returns:
        :class:`SweepStats`.

    Raises:
        DefineError: unknown extension, the file exists (not ``force``), or cannot be written.
        SweepStopped: no Dask worker left or the scheduler lost; SweepInterrupted: SIGINT, SIGTERM
            or SIGHUP. One line with the points done and what was written (nothing, for a file).
    """
    stats = SweepStats(total=study.points())
    out = ResultFile(path, study.columns(), force, metadata=parquet_metadata())
    try:
        with out, contextlib.closing(study_results(study, client, use_cache, stats, advance)) as results:
            for chunk, res in results:
                rows = chunk_rows(chunk, res)
                out.add(rows)
                if on_rows:
                    on_rows(rows)
            out.finish()
    except KeyboardInterrupt as exc:  # SIGINT, or SIGTERM and SIGHUP (errors.Stopped)
        reason, status = stop_reason(exc)
        raise SweepInterrupted(f"{reason}; {stats.done()}, {out.left()}", status) from None
    except SweepStopped as exc:
        raise SweepStopped(f"{exc.message}; {stats.done()}, {out.left()}") from None
    return stats


def parquet_metadata() -> dict:
    """A study's Parquet file's key-value metadata: the document envelope (``schema_version``,
    ``loopmodel_version``: :func:`loopmodel.report.schema.document`) as text."""
    return {k: str(v) for k, v in document({}).items()}


# ---------------------------------------------------------------- one kernel, machine and option set


@dataclass(frozen=True)
class SizeSweep:
    """The rows of a size sweep of one kernel, machine and option set (the Python API's
    ``loopmodel.sweep``), computed as they are read.

    Attributes:
        leading: the table's leading columns (kernel, machine, the defines, the options, error).
        count: the number of rows (counted, nothing computed).
        rows: an iterator of flat dicts, one per point, in the order of the ``-D`` sweep.
    """

    leading: tuple
    count: int
    rows: Iterator


def size_sweep(kernel, machine, options: AnalyzeOptions, given: Mapping) -> SizeSweep:
    """Prepare the sweep of ``options.define`` (:func:`loopmodel.workflows.analyze.run`); each
    row is a study table's row (:func:`lead_columns`, the point's defines, :func:`point_row`).

    Args:
        kernel, machine: as for :func:`loopmodel.workflows.analyze.run`; their columns hold
            ``str(kernel)`` and the ``-m`` name (:func:`loopmodel.workflows.inputs.machine_name`).
        options: :class:`AnalyzeOptions`.
        given: the options as the caller gave them (name -> value): their columns.

    Raises:
        LoopmodelError: a bad kernel, machine, size or option (one line).
    """
    run_ = analyze.run(kernel, machine, options)
    analyzer, points = run_.analyzer, run_.points
    names = list(points.values)
    lead = lead_columns(str(kernel), machine_name(machine), given.items())
    leading = FIXED_COLUMNS + tuple(names) + tuple(given) + ("error",)
    rows = ({**lead, **{n: point[n] for n in names}, **point_row(analyzer, point)} for point in points)
    return SizeSweep(leading, len(points), rows)


def write_rows(sweep: SizeSweep, path: str, option: str = "output") -> None:
    """Write the rows of ``sweep`` to ``path`` (``.csv``, ``.parquet`` or ``.pq``) as they are
    computed, :data:`CHUNK_POINTS` at a time (:class:`~loopmodel.fileio.result_file.ResultFile`;
    ``option`` names the path in messages).

    Raises:
        DefineError: an unknown extension, the file exists by now, or cannot be written.
    """
    with ResultFile(path, sweep.leading, option=option, metadata=parquet_metadata()) as out:
        while batch := list(itertools.islice(sweep.rows, CHUNK_POINTS)):
            out.add(batch)
        out.finish()


def table(sweep: SizeSweep) -> "Table":
    """The rows of ``sweep`` in a :class:`Table` (the caller bounds :attr:`SizeSweep.count`)."""
    out = Table(sweep.leading)
    for row in sweep.rows:
        out.add(row)
    return out


# ---------------------------------------------------------------- the table


class Table:
    """Results in columns: name -> list with one value per row (None where a row has no such
    field). Columns come in the order they first appear, after ``leading``.

    Attributes:
        columns: name -> list of values.
        n: number of rows.
    """

    def __init__(self, leading: tuple = ()):
        self.columns = {c: [] for c in leading}
        self.n = 0

    def add(self, row: dict) -> None:
        """Append one row (column -> value)."""
        for name in row:
            if name not in self.columns:
                self.columns[name] = [None] * self.n
        for name, col in self.columns.items():
            col.append(row.get(name))
        self.n += 1

    def rows(self) -> list:
        """The rows as flat dicts (every column, None where a row has no value)."""
        names = list(self.columns)
        return [dict(zip(names, vals)) for vals in zip(*self.columns.values())] if names else []
