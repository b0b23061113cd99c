"""``loopmodel validate``: the ECM prediction next to the measurement, per size.

    loopmodel validate KERNEL.c -m MACHINE -D N=start:stop:step [--repeat 10] [--cpu 0]
                       [--no-cache] [--json] [--plot FILE [--force]]

Parses the options (:class:`loopmodel.workflows.validate.ValidateOptions`), runs
:func:`loopmodel.workflows.validate.run` and renders a table with a summary per data location,
or JSON (one point per size), with :mod:`loopmodel.report.validation`. Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import validation as rep
from ..workflows import validate as workflow
from .commands import COMMANDS
from .arguments import add_options, console, options_from_args, plot_arguments


def add_parser(sub) -> None:
    """The ``validate`` subcommand on ``sub``."""
    v = sub.add_parser("validate", help=COMMANDS["validate"].help)
    v.add_argument("kernel", help="C kernel file")
    v.add_argument("-m", "--machine", required=True, help="machine model of this host (a probe: 'host' or a file)")
    add_options(v, workflow.ValidateOptions)
    v.add_argument("--json", action="store_true", help="print a JSON list, one row per size")
    plot_arguments(v, "write the ECM contributions over the size with the measured points (PNG, SVG or PDF by "
                      "extension)")


def run(args) -> int:
    """Run ``validate`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    got = workflow.run(args.kernel, args.machine, options_from_args(workflow.ValidateOptions, args))
    if args.plot:
        rep.write_plot(got.rows, args.plot, args.kernel, args.machine)
    if args.json:
        json.dump(rep.document(str(args.kernel), got.rows, got.notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(args.kernel, args.machine, got.rows, got.summary, got.notes, console(160))
    return 0
