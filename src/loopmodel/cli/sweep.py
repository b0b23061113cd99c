"""``loopmodel sweep``: arguments -> :class:`~loopmodel.workflows.sweep.SweepOptions` ->
:func:`loopmodel.workflows.sweep.run` -> the result file, a summary line, a plot.

    loopmodel sweep STUDY.yml [--dask SCHEDULER_ADDRESS | --workers N] [-o results.parquet|results.csv]
                    [--force] [--plot FILE] [--no-cache] [--no-progress]

Reads the study (:func:`loopmodel.workflows.study.read_study`), runs it on a local cluster of
worker processes or on a ``dask.distributed`` scheduler and writes one row per point as the
points are done: Parquet or CSV by the ``-o`` extension, CSV on stdout without ``-o``. dask and
pyarrow are imported only when the command runs (:mod:`loopmodel.workflows.sweep_dask`,
:mod:`loopmodel.fileio.result_file`). Errors are one line.

Exit status: 0 every point was computed; 1 some points failed with a one-line loopmodel error
(their rows hold the error, the file is written, the summary line counts them); 2 bad input,
or the run could not finish (no worker left, a task that killed its workers, the scheduler
not reached); 130 interrupted (SIGINT), 143 and 129 stopped by SIGTERM and SIGHUP. Any other
exception in a point is a bug in loopmodel, not a row: it stops the sweep with its traceback
(a bug report). A run that does not finish writes nothing to ``-o`` nor ``--plot``.
"""
from __future__ import annotations

import os
import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

from ..errors import DefineError
from ..fileio.output import check_new_output
from ..fileio.result_file import output_format
from ..report import study_plot
from ..workflows import sweep as workflow
from ..workflows.options import names
from ..workflows.study import read_study
from .commands import COMMANDS
from .arguments import add_options, options_from_args

#: most points ``--plot`` draws (what it draws of each row is kept in memory until the end)
PLOT_MAX_POINTS = 100_000

EPILOG = ("Study file (YAML): kernels (paths relative to the study file), machines (names or paths), defines (name: "
          "value or range in the -D syntax; each kernel takes those it declares), options (analyze option: list of "
          "values, e.g. cache_predictor: [lc, sim]). One row per point: kernel, machine, the defines, the options, "
          "error, and the fields of 'analyze --json' flattened with dots (lists as JSON text).")
#: where the study runs (one of them): options of the mutually exclusive group
WHERE = ("dask", "workers")


def add_parser(sub) -> None:
    """The ``sweep`` subcommand on ``sub``."""
    s = sub.add_parser("sweep", help=COMMANDS["sweep"].help,
                       epilog=EPILOG)
    s.add_argument("study", help="study file (YAML), see examples/studies/")
    add_options(s.add_mutually_exclusive_group(), workflow.SweepOptions,
                skip=tuple(n for n in names(workflow.SweepOptions) if n not in WHERE))
    s.add_argument("-o", "--output", metavar="FILE", help="results.parquet or results.csv (default: CSV on stdout); "
                                                          "an existing file is kept unless --force; written when "
                                                          "the run is done (nothing, if it does not finish)")
    s.add_argument("--force", action="store_true", help="overwrite an existing -o or --plot file")
    s.add_argument("--plot", metavar="FILE", help="plot ecm.performance.cy_per_cl over the first define that varies "
                                                  "(PNG, SVG or PDF by extension; at most 100000 points)")
    add_options(s, workflow.SweepOptions, skip=WHERE)
    s.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args) -> int:
    """Run ``sweep`` for parsed ``args``; returns the exit status (0, or 1 when some points failed).

    Raises:
        LoopmodelError: one-line user errors (study file, output files, scheduler); a run that
            could not finish (:class:`loopmodel.workflows.sweep_dask.SweepStopped`; exit status
            130 for SIGINT, 143 for SIGTERM, 129 for SIGHUP).
    """
    options = options_from_args(workflow.SweepOptions, args)
    output_format(args.output)
    workflow.check(options)  # a bad LOOPMODEL_DASK_TIMEOUT is an error before the work
    for path, option in ((args.output, "-o"), (args.plot, "--plot")):
        if path:
            _check_output(path, option, args.force)
    study = read_study(args.study, options.trust_machine_flags)
    plot = _PlotRows(study, args.study) if args.plot else None
    start = time.perf_counter()
    with _Progress(args, study.points()) as advance:  # the cluster starts only if a task is not cached
        stats = workflow.run(study, options, args.output, force=args.force, advance=advance,
                             on_rows=plot.add if plot else None)
    elapsed = time.perf_counter() - start
    if plot:
        _plot(plot.rows, args, plot.x, workflow.DEFAULT_Y, plot.group)
    for note in study.notes:
        sys.stderr.write(f"sweep: note: {note}\n")
    sys.stderr.write(f"sweep: {stats.points} points ({stats.failed} failed, {stats.cached} from the cache) "
                     f"in {elapsed:.1f} s{f'; written to {args.output}' if args.output else ''}\n")
    return 1 if stats.failed else 0


class _PlotRows:
    """What ``--plot`` draws, kept while the rows go to the output: per row the x define, y,
    the columns that tell the lines apart, and ``error``.

    Raises:
        DefineError: no define takes several values (no x axis), or the study has more than
            :data:`PLOT_MAX_POINTS` points (one line naming the study file).
    """

    def __init__(self, study, path: str):
        self.x = study.varying_define()
        if self.x is None:
            raise DefineError("--plot needs a define that takes several values (the x axis)", file=path)
        if study.points() > PLOT_MAX_POINTS:
            raise DefineError(f"--plot draws at most {PLOT_MAX_POINTS} points and the study has {study.points()}: "
                              "leave --plot out, and plot from the -o file", file=path)
        self.group = ("kernel", "machine", *(d for d in study.defines if d != self.x), *study.options)
        self.keep = tuple(dict.fromkeys((self.x, workflow.DEFAULT_Y, *self.group, "error")))
        self.rows = []

    def add(self, rows: list) -> None:
        """Keep the plotted columns of a batch of rows."""
        self.rows += [{c: r.get(c) for c in self.keep} for r in rows]


def _check_output(path: str, option: str, force: bool) -> None:
    """An existing file is refused unless ``--force``; the folder must be writable."""
    if os.path.lexists(path) and not force:
        raise DefineError(f"{option}: output file exists; not overwritten (use --force)", file=path)
    check_new_output(path, option, True)


def _plot(rows: list, args, x: str, y: str, group: tuple) -> None:
    title = f"{os.path.basename(args.study)}: {y} over {x}"
    study_plot.plot_study(rows, args.plot, x, y=y, title=title, group=group)


class _Progress:
    """A rich progress bar on stderr (a terminal, without ``--no-progress``) fed with points done;
    as a context manager it gives the ``advance(n)`` callback, or None without a bar."""

    def __init__(self, args, total: int):
        self.show = not args.no_progress and sys.stderr.isatty()
        self.total = total
        self.bar = None

    def __enter__(self):
        if not self.show:
            return None
        self.bar = Progress("sweep", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.__enter__()
        task = self.bar.add_task("sweep", total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False
