"""``loopmodel omp``: an OpenMP program predicted per thread count with the coherence-aware
model (benchmark-based-coherence-model.txt), optionally measured.

    loopmodel omp PROGRAM.c|PROGRAM.yml -m host --threads 1:N [-D N=...] [--json]
                  [--measure] [--plot FILE] [--force]

Parses the options, calls :func:`loopmodel.workflows.omp_analysis.analyse_omp` and renders a table
(:mod:`loopmodel.report.omp_report`), JSON or a plot. Errors are one line.
"""
from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    """The ``omp`` subcommand on ``sub``."""
    o = sub.add_parser("omp", help="predict an OpenMP program per thread count (MESI chunk states, "
                                   "benchmarked transitions)")
    o.add_argument("program", help="OpenMP C file (loops with '#pragma omp parallel for', master, single) "
                                   "or a YAML program model")
    o.add_argument("-m", "--machine", required=True,
                   help="machine model with a coherence section ('host' after 'machine probe --coherence')")
    o.add_argument("--threads", "-t", default=None, metavar="LIST",
                   help="thread counts, e.g. 1:4, 1,2,4 (default: 1..the largest measured)")
    o.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                   help="size constant (one value each)")
    o.add_argument("--json", action="store_true", help="print one JSON document")
    o.add_argument("--measure", action="store_true",
                   help="also compile and run the program (pinned, flushed, min-of-K per phase)")
    o.add_argument("--min-time", type=float, default=0.2, metavar="SECONDS",
                   help="--measure: repeat each thread count for at least this long (default 0.2 s)")
    o.add_argument("--compiler", default="gcc", help="C compiler for --measure (default gcc)")
    o.add_argument("--plot", metavar="FILE", help="write predicted (and measured) time vs threads "
                                                  "(PNG, SVG or PDF by extension)")
    o.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


def _defines(texts) -> dict:
    from ..fileio.defines import one_point, sweep

    return one_point(sweep(texts, {}), "omp")


def run(args) -> int:
    """Run ``omp`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    from ..errors import DefineError
    from ..fileio.defines import count_list
    from ..fileio.machine_files import load_machine
    from ..fileio.omp_program import read_omp_program
    from ..workflows.omp_analysis import analyse_omp, coherence_timing, to_json

    if args.min_time <= 0:
        raise DefineError(f"--min-time must be > 0, got {args.min_time}")
    if args.plot:
        from ..fileio.output import check_new_output
        check_new_output(args.plot, "--plot", args.force)
    program = read_omp_program(args.program, _defines(args.define))
    machine = load_machine(args.machine)
    if args.measure:
        from .. import toolchain
        toolchain.chosen_compiler(args.compiler)
    if args.threads:
        threads = count_list(args.threads, "--threads")
    else:
        threads = list(coherence_timing(machine, args.machine).table.threads)
        threads = list(range(1, threads[-1] + 1))
    rows = analyse_omp(program, machine, threads, machine_name=args.machine, measure=args.measure,
                       compiler=args.compiler, min_time_s=args.min_time)
    if args.plot:
        _plot(rows, program, args)
    from ..fileio.host_models import machine_notes

    notes = machine_notes(args.machine, machine)
    if args.json:
        json.dump(to_json(rows, program, args.machine, notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from ..report.omp_report import render

    render(rows, program, args.program, args.machine, notes)
    return 0


def _plot(rows, program, args) -> None:
    from ..errors import LoopmodelError
    from ..report.omp_plot import plot

    try:
        plot(rows, program, args.plot, f"{args.program.rsplit('/', 1)[-1]} on {args.machine}")
    except OSError as exc:
        raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
