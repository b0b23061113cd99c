"""``loopmodel measure``: measured daxpby/triad bandwidth per thread count on this host.

    loopmodel measure {daxpby,triad} [--threads 1:N] [--size "512 MiB"] [--repetitions 5]
                      [--min-time 0.1] [--compiler gcc] [--flags "-O3 -march=native -fopenmp"]
                      [--json] [-o OUT.json] [--clock]

Parses the options (:class:`loopmodel.workflows.measure.MeasureOptions`), measures
(:func:`loopmodel.workflows.measure.run`, showing progress on a terminal's stderr) and renders
the table or the JSON document (:mod:`loopmodel.report.measure`), also written to ``-o``.
Errors are :class:`~loopmodel.errors.LoopmodelError` subclasses with one-line messages (bad
option values: DefineError; compiler, benchmark and output file: ToolError / DefineError).
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output, write_new_output
from ..measure.stream import KERNEL_NAMES
from ..report import measure as rep
from ..workflows import measure as workflow
from ..workflows.options import fields
from .commands import COMMANDS
from .arguments import add_option, add_options, console, options_from_args


def add_parser(subparsers):
    """Add the ``measure`` subcommand to ``subparsers`` (from ``add_subparsers``); returns it."""
    m = subparsers.add_parser(
        "measure", help=COMMANDS["measure"].help,
        description="Compile and run an OpenMP streaming benchmark (daxpby: y = a*x + b*y, 24 B/it; "
                    "triad: a = b + s*c, 32 B/it with write-allocate, 24 B/it without) once per thread count "
                    "with OMP_PROC_BIND=close OMP_PLACES=cores. GB/s = 10^9 B/s.")
    m.add_argument("kernel", choices=KERNEL_NAMES, help="streaming kernel")
    add_options(m, workflow.MeasureOptions, skip=("clock",))
    m.add_argument("--json", action="store_true", help="print one JSON document (units in the key names)")
    m.add_argument("-o", "--output", metavar="OUT.json",
                   help="also write the JSON document here (refuses to overwrite an existing file)")
    add_option(m, next(f for f in fields(workflow.MeasureOptions) if f.name == "clock"))  # --help lists it last
    return m


def _progress(kernel: str):
    """The progress line on stderr (a terminal only): each thread count as it is done."""
    if not sys.stderr.isatty():
        return None

    def progress(point):
        sys.stderr.write(f"\r{kernel}: {point.threads} thread(s) done ({point.bytes_per_s / 1e9:.2f} GB/s)\033[K")
        sys.stderr.flush()
    return progress


def run(args) -> int:
    """Run ``loopmodel measure`` for parsed ``args``; returns the exit status (0).

    Raises:
        LoopmodelError: one-line user errors (DefineError, ToolError).
    """
    if args.output:
        check_new_output(args.output, "-o")
    progress = _progress(args.kernel)
    got = workflow.run(args.kernel, options_from_args(workflow.MeasureOptions, args), progress)
    if progress is not None:
        sys.stderr.write("\r\033[K")
    text = json.dumps(rep.document(got.stream, got.clock_hz), indent=1) + "\n"
    if args.output:
        write_new_output(args.output, text, "-o")
    if args.json:
        sys.stdout.write(text)
    else:
        rep.render(got.stream, got.clock_hz, console(120))
    return 0
