"""``loopmodel scaling``: arguments -> :class:`~loopmodel.workflows.scaling.ScalingOptions` ->
:func:`loopmodel.workflows.scaling.run` -> a table, JSON or a plot of the predicted performance
per core count (ECM with the contention or saturation model)."""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import scaling as rep
from ..workflows import scaling as workflow
from ..workflows.analyze import AnalysisOptions
from .commands import COMMANDS
from .arguments import add_options_around_json, console, kernel_and_machine, options_from_args, plot_arguments


def add_parser(sub) -> None:
    """The ``scaling`` subcommand on ``sub``."""
    sc = sub.add_parser("scaling", help=COMMANDS["scaling"].help)
    kernel_and_machine(sc)
    add_options_around_json(sc, workflow.ScalingOptions, AnalysisOptions, "print one JSON document; for -D ranges "
                            "one document per line as it is computed (JSON Lines)")
    plot_arguments(sc, "write a scaling plot (matplotlib)", metavar="PNG")


def run(args) -> int:
    """Run ``scaling`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (inputs, options, the plot file).
    """
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    out = workflow.run(args.kernel, args.machine, options_from_args(workflow.ScalingOptions, args))
    results = list(out.curves)
    if args.plot:
        rep.plot(results, out.analysis, args.plot, out.measured)
    if args.json:
        json.dump(rep.to_dict(results, out.analysis, out.measured, out.fit), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(results, out.analysis, console(), out.measured, out.fit)
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0
