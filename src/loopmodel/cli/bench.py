"""``loopmodel bench``: measure a kernel on this host (benchmark mode).

    loopmodel bench KERNEL.c -D N=1000 [-D ...] [-m MACHINE] [--repeat 10] [--cache warm|cold] [--cpu 0]
                    [--threads N|1:N] [--blocks 3] [--tolerance 0.03] [--spread-s 0.5]
                    [--timeout 120] [--no-cache] [--json]

Parses the options (:class:`loopmodel.workflows.bench.BenchOptions`), measures each size
(:func:`loopmodel.workflows.bench.run`) and renders the results (:mod:`loopmodel.report.bench`:
a rich table, or JSON: one document with a point per size and thread count). Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..report import bench as rep
from ..workflows import bench as workflow
from .commands import COMMANDS
from .arguments import add_options, console, options_from_args


def add_parser(sub) -> None:
    """The ``bench`` subcommand on ``sub`` (from ``add_subparsers``)."""
    b = sub.add_parser("bench", help=COMMANDS["bench"].help)
    b.add_argument("kernel", help="C kernel file")
    add_options(b, workflow.BenchOptions)
    b.add_argument("--json", action="store_true", help="print JSON (units in the key names)")


def run(args) -> int:
    """Run ``bench`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, machine, compiler, run).
    """
    got = workflow.run(args.kernel, options_from_args(workflow.BenchOptions, args))
    if args.json:
        json.dump(rep.document(list(got.results), got.curve), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(got.results, console(140))
    return 0
