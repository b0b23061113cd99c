"""``loopmodel sweep``: a design-space study (kernels x machines x sizes x options) on Dask.

    loopmodel sweep STUDY.yml [--dask SCHEDULER_ADDRESS | --workers N] [-o results.parquet|results.csv]
                    [--force] [--plot FILE] [--no-cache] [--no-progress]

Reads the study (:func:`loopmodel.sweep.read_study`), runs it on a local cluster of worker
processes or on a ``dask.distributed`` scheduler (:func:`loopmodel.sweep.run_study`) and writes
one row per point: Parquet or CSV by the ``-o`` extension, CSV on stdout without ``-o``. dask
and pyarrow are imported here only, when the command runs. Errors are one line.
"""
from __future__ import annotations

import os
import sys
import time

#: ``-o`` extensions -> format
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}


def add_parser(sub) -> None:
    """The ``sweep`` subcommand on ``sub``."""
    s = sub.add_parser("sweep", help="run a design-space study (kernels x machines x sizes x options) on Dask",
                       epilog="Study file (YAML): kernels (paths relative to the study file), machines (names or "
                              "paths), defines (name: value or range in the -D syntax; each kernel takes those it "
                              "declares), options (analyze option: list of values, e.g. cache_predictor: [lc, sim]). "
                              "One row per point: kernel, machine, the defines, the options, error, and the fields "
                              "of 'analyze --json' flattened with dots (lists as JSON text).")
    s.add_argument("study", help="study file (YAML), see examples/studies/")
    where = s.add_mutually_exclusive_group()
    where.add_argument("--dask", metavar="SCHEDULER_ADDRESS",
                       help="run on this dask.distributed scheduler (e.g. tcp://10.0.0.1:8786); its workers "
                            "need loopmodel and the study's files at the same paths")
    where.add_argument("--workers", "-w", type=int, metavar="N",
                       help="worker processes of the local cluster (default: the usable CPUs)")
    s.add_argument("-o", "--output", metavar="FILE", help="results.parquet or results.csv (default: CSV on stdout); "
                                                          "an existing file is kept unless --force")
    s.add_argument("--force", action="store_true", help="overwrite an existing -o or --plot file")
    s.add_argument("--plot", metavar="FILE", help="plot ecm.performance.cy_per_cl over the first define that varies "
                                                  "(PNG, SVG or PDF by extension)")
    s.add_argument("--no-cache", action="store_true", help="do not read or write the per-user result cache")
    s.add_argument("--no-progress", action="store_true", help="no progress bar")


def run(args) -> int:
    """Run ``sweep`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (study file, output files, scheduler).
    """
    from .errors import DefineError
    from .sweep import DEFAULT_Y, dask_client, read_study, run_study

    fmt = _output_format(args.output)
    if args.workers is not None and args.workers < 1:
        raise DefineError(f"--workers must be at least 1, got {args.workers}")
    for path, option in ((args.output, "-o"), (args.plot, "--plot")):
        if path:
            _check_output(path, option, args.force)
    plot_study = _plot_function() if args.plot else None
    study = read_study(args.study)
    x = study.varying_define()
    if args.plot and x is None:
        raise DefineError("--plot needs a define that takes several values (the x axis)", file=args.study)
    start = time.perf_counter()
    with _Progress(args, study.points()) as advance:  # the cluster starts only if a task is not cached
        table, stats = run_study(study, lambda: dask_client(args.dask, args.workers), not args.no_cache, advance)
    elapsed = time.perf_counter() - start
    _write(table, args.output, fmt, args.force)
    if args.plot:
        group = ("kernel", "machine", *(d for d in study.defines if d != x), *study.options)
        _plot(plot_study, table, args, x, DEFAULT_Y, group)
    sys.stderr.write(f"sweep: {stats.points} points ({stats.failed} failed, {stats.cached} from the cache) "
                     f"in {elapsed:.1f} s{f'; written to {args.output}' if args.output else ''}\n")
    return 0


def _output_format(path: str | None) -> str:
    from .errors import DefineError

    if path is None:
        return "csv"
    ext = os.path.splitext(path)[1].lower()
    if ext not in FORMATS:
        raise DefineError(f"-o {path}: unknown format (use {', '.join(FORMATS)})")
    return FORMATS[ext]


def _check_output(path: str, option: str, force: bool) -> None:
    """An existing file is refused unless ``--force``; the folder must be writable."""
    from .errors import DefineError
    from .fileio.output import check_new_output

    if os.path.lexists(path) and not force:
        raise DefineError(f"{option}: output file exists; not overwritten (use --force)", file=path)
    check_new_output(path, option, True)


def _plot_function():
    """:func:`loopmodel.report.study_plot.plot_study`, or a one-line error where it is missing."""
    from .errors import LoopmodelError

    try:
        from .report.study_plot import plot_study
    except ImportError:
        raise LoopmodelError("--plot: this installation has no study plot (loopmodel.report.study_plot)") from None
    return plot_study


def _plot(plot_study, table, args, x: str, y: str, group: tuple) -> None:
    from .errors import LoopmodelError

    title = f"{os.path.basename(args.study)}: {y} over {x}"
    try:
        plot_study(table.rows(), args.plot, x, y=y, title=title, group=group)
    except OSError as exc:
        raise LoopmodelError(f"cannot write the plot: {exc.strerror or exc}", file=args.plot) from None


def _write(table, path: str | None, fmt: str, force: bool) -> None:
    from .fileio.output import write_output
    from .sweep import csv_text, parquet_bytes

    if path is None:
        sys.stdout.write(csv_text(table))
        return
    write_output(path, parquet_bytes(table) if fmt == "parquet" else csv_text(table), "-o", force)


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
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeRemainingColumn

        self.bar = Progress("sweep", BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                            console=Console(stderr=True), transient=True)
        self.bar.__enter__()
        task = self.bar.add_task("sweep", total=self.total)
        return lambda n: self.bar.advance(task, n)

    def __exit__(self, *exc):
        if self.bar is not None:
            self.bar.__exit__(*exc)
        return False
