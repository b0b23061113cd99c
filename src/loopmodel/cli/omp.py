"""``loopmodel omp``: an OpenMP program predicted per thread count with the coherence-aware
model (benchmark-based-coherence-model.txt), optionally measured.

    loopmodel omp PROGRAM.c|PROGRAM.yml -m host --threads 1:N [-D N=...] [--json]
                  [--measure] [--plot FILE] [--force]

Arguments -> :class:`~loopmodel.workflows.omp.OmpOptions` -> :func:`loopmodel.workflows.omp.run`
-> a table (:mod:`loopmodel.report.omp_report`), JSON (:mod:`loopmodel.report.omp_json`) or a
plot (:mod:`loopmodel.report.omp_plot`). Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..errors import LoopmodelError
from ..fileio.output import check_new_output
from ..report.omp_json import to_json
from ..report.omp_plot import plot
from ..report.omp_report import render
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
    o.add_argument("--json", action="store_true", help="print one JSON document")
    add_options(o, workflow.OmpOptions, skip=("threads", "define"))
    plot_arguments(o, "write predicted (and measured) time vs threads (PNG, SVG or PDF by extension)")


def run(args) -> int:
    """Run ``omp`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    options = options_from_args(workflow.OmpOptions, args)
    workflow.check(options)
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    result = workflow.run(args.program, args.machine, options)
    if args.plot:
        try:
            plot(result.rows, result.program, args.plot, f"{args.program.rsplit('/', 1)[-1]} on {args.machine}")
        except OSError as exc:
            raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
    if args.json:
        json.dump(to_json(result.rows, result.program, result.machine_name, result.notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    render(result.rows, result.program, args.program, result.machine_name, result.notes)
    return 0
