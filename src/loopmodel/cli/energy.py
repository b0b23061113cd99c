"""``loopmodel energy``: arguments -> :class:`~loopmodel.workflows.energy.EnergyOptions` ->
:func:`loopmodel.workflows.energy.run` -> a table, JSON or the slides' Z-plot of energy to
solution and performance per operating point (cores, clock).

    loopmodel energy KERNEL.c -m MACHINE -D N=... [--cores 1:N] [--clock 1.2:2.7:0.1 GHz]
                     [--w0 "23.6 W" --w1 "1.9 W/GHz" --w2 "1.2 W/GHz^2"]
                     [--model contention|saturation] [--json] [--plot z.png]
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import energy as rep
from ..workflows import energy as workflow
from ..workflows.analyze import AnalysisOptions
from .commands import COMMANDS
from .arguments import add_options_around_json, console, kernel_and_machine, options_from_args, plot_arguments


def add_parser(sub) -> None:
    """The ``energy`` subcommand on ``sub``."""
    e = sub.add_parser("energy", help=COMMANDS["energy"].help)
    kernel_and_machine(e)
    add_options_around_json(e, workflow.EnergyOptions, AnalysisOptions,
                            "print one JSON document (points, optimum, saving, notes)")
    plot_arguments(e, "write the Z-plot: energy per iteration vs performance, one line per clock (PNG, SVG or PDF "
                      "by extension)", metavar="PNG")


def run(args) -> int:
    """Run ``energy`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (inputs, options, power data, the plot file).
    """
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    out = workflow.run(args.kernel, args.machine, options_from_args(workflow.EnergyOptions, args))
    if args.plot:
        rep.plot(out.result, out.title, args.plot)
    if args.json:
        ctx = rep.context(out.kernel, out.machine.name, out.analysis.defines, out.data_in, out.power)
        json.dump(rep.to_dict(out.result, ctx), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(out.result, out.title, console(), rep.power_line(out.power))
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0
