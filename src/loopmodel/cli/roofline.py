"""``loopmodel roofline``: measured Roofline points of one or more kernels, with the model's.

    loopmodel roofline A.c [B.c ...] -m MACHINE -D N=... [--repeat 10] [--cache warm|cold]
                       [--plot r.png] [--force] [--json]   (--cache warm|cold|both)

Each kernel takes the ``-D`` constants it declares and ignores the others. Parses the
options (:class:`loopmodel.workflows.roofline.RooflineOptions`), measures
(:func:`loopmodel.workflows.roofline.run`), renders a table or JSON and draws the picture with
``--plot`` (:mod:`loopmodel.report.roofline`). Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import roofline as rep
from ..workflows import roofline as workflow
from .commands import COMMANDS
from .arguments import add_options, console, options_from_args, plot_arguments


def add_parser(sub) -> None:
    """The ``roofline`` subcommand on ``sub``."""
    r = sub.add_parser("roofline", help=COMMANDS["roofline"].help)
    r.add_argument("kernels", nargs="+", metavar="KERNEL.c", help="C kernel files")
    r.add_argument("-m", "--machine", required=True, help="machine model of this host ('host' after a probe)")
    add_options(r, workflow.RooflineOptions)
    plot_arguments(r, "write the Roofline plot (PNG, SVG or PDF by extension)")
    r.add_argument("--json", action="store_true", help="print JSON: roofs and points")


def run(args) -> int:
    """Run ``roofline`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    options = options_from_args(workflow.RooflineOptions, args)
    workflow.check(options)
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    got = workflow.run(args.kernels, args.machine, options)
    if args.plot and got.points:
        rep.write_plot(got.points, got.roofs, args.plot, args.machine, options.cache)
    if args.json:
        json.dump(rep.document(got.roofs, got.points, got.notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(got.points, got.roofs, got.notes, console(140), args.plot)
    return 0
