"""``loopmodel omp``: an OpenMP program predicted per thread count with the coherence-aware
model (benchmark-based-coherence-model.txt), optionally measured.

    loopmodel omp PROGRAM.c|PROGRAM.yml -m host --threads 1:N [-D N=...] [--json]
                  [--measure] [--plot FILE] [--force]
    loopmodel omp PROGRAM.c -m host --threads 1:N -D N=1000:10000000:1000 [--json]

A ``-D`` range is a size study (:mod:`loopmodel.workflows.omp_sizes`): one row per size point
(a table, or with ``--json`` one JSON document per line), streamed as the points are computed.

Arguments -> :class:`~loopmodel.workflows.omp.OmpOptions` -> :func:`loopmodel.workflows.omp.run`
-> a table (:mod:`loopmodel.report.omp_report`), JSON (:mod:`loopmodel.report.omp_json`) or a
plot (:mod:`loopmodel.report.omp_plot`). Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..errors import DefineError
from ..fileio.output import check_new_output
from ..report.omp_json import to_json
from ..report.omp_plot import plot
from ..report.omp_report import render
from ..report.omp_sizes import SizesPrinter, size_document
from ..workflows import omp as workflow
from .commands import COMMANDS
from .arguments import add_options, options_from_args, plot_arguments

#: the options given after ``--json`` (the order of ``--help``)
_MEASURING = ("measure", "min_time", "compiler")


def add_parser(sub) -> None:
    """The ``omp`` subcommand on ``sub``."""
    o = sub.add_parser("omp", help=COMMANDS["omp"].help)
    o.add_argument("program", help="OpenMP C file (loops with '#pragma omp parallel for', master, single) "
                                   "or a YAML program model")
    o.add_argument("-m", "--machine", required=True,
                   help="machine model with a coherence section ('host' after 'machine probe --coherence')")
    add_options(o, workflow.OmpOptions, skip=_MEASURING)
    o.add_argument("--json", action="store_true", help="print one JSON document (a -D range: one per size point, "
                                                       "one per line: JSON Lines)")
    add_options(o, workflow.OmpOptions, skip=("threads", "define"))
    plot_arguments(o, "write predicted (and measured) time vs threads (PNG, SVG or PDF by extension)")


def run(args) -> int:
    """Run ``omp`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    options = options_from_args(workflow.OmpOptions, args)
    workflow.check(options)
    points = workflow.size_points(options)
    if len(points) > 1:
        return _sizes(args, options, points)
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    result = workflow.run(args.program, args.machine, options)
    if args.plot:
        plot(result.rows, result.program, args.plot, f"{args.program.rsplit('/', 1)[-1]} on {args.machine}")
    if args.json:
        json.dump(to_json(result.rows, result.program, result.machine_name, result.notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    render(result.rows, result.program, args.program, result.machine_name, result.notes)
    return 0


def _sizes(args, options, points) -> int:
    """A ``-D`` range: each point's row (or JSON document, one per line) written and flushed as
    soon as it is computed, so that neither points nor results are held in memory."""
    if args.plot:
        raise DefineError("--plot draws the time per thread count of one size: give one value per size constant")
    study = workflow.sizes_workflow().prepare(args.program, args.machine, options, points)
    out = sys.stdout
    if args.json:
        for res in study.results():
            out.write(json.dumps(size_document(res, study.path, study.machine_name)) + "\n")
            out.flush()
        return 0
    title = (f"{args.program.rsplit('/', 1)[-1]} on {study.machine_name}: predicted time of one execution (s) "
             f"per thread count, {len(points)} size points")
    printer = SizesPrinter(out.write, out.flush, title, points.largest())
    for res in study.results():
        printer.add(res)
    first = ", ".join(f"{k}={v}" for k, v in points[0].items())
    printer.close(study.notes + tuple(f"at {first}: {n}" for n in study.program.notes))
    return 0
