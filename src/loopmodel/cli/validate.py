"""``loopmodel validate``: the ECM prediction next to the measurement, per size.

    loopmodel validate KERNEL.c -m MACHINE -D N=start:stop:step [--repeat 10] [--cpu 0]
                       [--no-cache] [--json] [--plot FILE [--force]]
    loopmodel validate --corpus [--quick] [--seed N] -m MACHINE [--repeat 10] [--json]
                       [--plot FILE [--force]]

Parses the options (:class:`loopmodel.workflows.validate.ValidateOptions`), runs
:func:`loopmodel.workflows.validate.run` and renders a table with a summary per data location,
or JSON (one point per size), with :mod:`loopmodel.report.validation`; with ``--corpus``,
:func:`loopmodel.workflows.corpus.run` and :mod:`loopmodel.report.corpus` (one progress line per
case on stderr). Errors are one line.
"""
from __future__ import annotations

import json
import sys

from ..fileio.output import check_new_output
from ..report import corpus as corpus_report
from ..report import validation as rep
from ..workflows import corpus as corpus_workflow
from ..workflows import validate as workflow
from .commands import COMMANDS
from .arguments import add_options, console, options_from_args, plot_arguments


def add_parser(sub) -> None:
    """The ``validate`` subcommand on ``sub``."""
    v = sub.add_parser("validate", help=COMMANDS["validate"].help)
    v.add_argument("kernel", nargs="?", help="C kernel file (or --corpus)")
    v.add_argument("-m", "--machine", required=True, help="machine model of this host (a probe: 'host' or a file)")
    add_options(v, workflow.ValidateOptions)
    v.add_argument("--json", action="store_true", help="print a JSON document, one row per size (per case with "
                                                       "--corpus)")
    plot_arguments(v, "write the ECM contributions over the size with the measured points (--corpus: the error "
                      "per data location and per regime) (PNG, SVG or PDF by extension)")


def run(args) -> int:
    """Run ``validate`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    options = options_from_args(workflow.ValidateOptions, args)
    workflow.check_choice(args.kernel, options)
    if options.corpus:
        return run_corpus(args, options)
    got = workflow.run(args.kernel, args.machine, options)
    if args.plot:
        rep.write_plot(got.rows, args.plot, args.kernel, args.machine)
    if args.json:
        json.dump(rep.document(str(args.kernel), got.rows, got.notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(args.kernel, args.machine, got.rows, got.summary, got.notes, console(160))
    return 0


def _progress(i: int, n: int, case, outcome) -> None:
    """One line per corpus case on stderr."""
    what = f"{100 * outcome.error:+.1f} %" if hasattr(outcome, "error") else f"skipped: {outcome}"
    sizes = " ".join(f"{k}={v}" for k, v in case.defines.items())
    sys.stderr.write(f"[{i}/{n}] {case.kernel.name} in {case.level} ({sizes}): {what}\n")
    sys.stderr.flush()


def run_corpus(args, options) -> int:
    """``validate --corpus``: run, then the JSON document or the text, and the plot."""
    got = corpus_workflow.run(args.machine, options, progress=_progress)
    if args.plot:
        corpus_report.write_plot(got, args.plot, args.machine)
    if args.json:
        json.dump(corpus_report.document(args.machine, got), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    corpus_report.render(args.machine, got, console(160))
    return 0
