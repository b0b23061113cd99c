"""``loopmodel compare``: arguments -> :class:`~loopmodel.workflows.compare.CompareOptions` ->
:func:`loopmodel.workflows.compare.run` -> one table (or JSON, or a bar chart) of a kernel on
several machine models.

    loopmodel compare KERNEL -m A -m B ... [-m all] -D N=10000000 [--incore analytic|auto]
                      [-o text|json] [--plot FILE.png]
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import compare_json, compare_plot, compare_text
from ..workflows import compare as workflow
from ..workflows.analyze import AnalysisOptions
from .arguments import add_options_around_json, console, options_from_args, plot_arguments
from .commands import COMMANDS


def add_parser(sub) -> None:
    """The ``compare`` subcommand on ``sub``."""
    c = sub.add_parser("compare", help=COMMANDS["compare"].help)
    c.add_argument("kernel", help="C kernel file, or a Kerncraft YAML kernel description (.yml/.yaml)")
    c.add_argument("-m", "--machine", action="append", required=True, dest="machines", metavar="MACHINE",
                   help="built-in machine name or machine YAML file (repeatable); 'all': every built-in model")
    add_options_around_json(c, workflow.CompareOptions, AnalysisOptions, "print one JSON document (same as -o json)",
                            before_json=((("-o", "--output"), {"choices": ("text", "json"), "default": "text",
                                                                "help": "output: the table (default) or one JSON "
                                                                        "document"}),))
    plot_arguments(c, "write a bar chart of T_ECM per data location [cy/it], one bar per machine model (PNG, SVG "
                      "or PDF by extension)", metavar="PNG")


def run(args) -> int:
    """Run ``compare`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (inputs, an unknown machine, options, the plot file).
    """
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    out = workflow.run(args.kernel, args.machines, options_from_args(workflow.CompareOptions, args))
    doc = compare_json.to_dict(out)
    if args.plot:
        compare_plot.plot(doc, args.plot)
    if args.json or args.output == "json":
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    compare_text.render(doc, console())
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0
