"""``loopmodel scaling``: arguments -> :class:`~loopmodel.workflows.scaling.ScalingOptions` ->
:func:`loopmodel.workflows.scaling.run` -> a table, JSON or a plot of the predicted performance
per core count (ECM with the contention or saturation model)."""
from __future__ import annotations

import json
import sys

from ..errors import LoopmodelError
from ..fileio.output import check_new_output
from ..report import scaling as rep
from ..workflows import scaling as workflow
from ..workflows.analyze import AnalysisOptions
from ..workflows.options import names
from .arguments import add_options, console, kernel_and_machine, options_from_args


def add_parser(sub) -> None:
    """The ``scaling`` subcommand on ``sub``."""
    sc = sub.add_parser("scaling", help="predicted performance per core count (ECM + contention or saturation model)")
    kernel_and_machine(sc)
    add_options_around_json(sc, workflow.ScalingOptions, "print one JSON document; for -D ranges one document per "
                                                         "line as it is computed (JSON Lines)")
    sc.add_argument("--plot", metavar="PNG", help="write a scaling plot (matplotlib)")
    sc.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


def add_options_around_json(parser, cls, json_help: str) -> None:
    """The arguments of ``cls`` (a multicore command's Options) with ``--json`` (``json_help``)
    between the analysis options and the command's own, the order of ``--help``."""
    shared = names(AnalysisOptions)
    add_options(parser, cls, skip=tuple(n for n in names(cls) if n not in shared))
    parser.add_argument("--json", action="store_true", help=json_help)
    add_options(parser, cls, skip=shared)


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
        try:
            rep.plot(results, out.analysis, args.plot, out.measured)
        except OSError as exc:
            raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
    if args.json:
        json.dump(rep.to_dict(results, out.analysis, out.measured, out.fit), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(results, out.analysis, console(), out.measured, out.fit)
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0
