"""``loopmodel analyze``: arguments -> :class:`~loopmodel.workflows.analyze.AnalyzeOptions` ->
:func:`loopmodel.workflows.analyze.run` -> a text report, JSON, or JSON Lines for a ``-D`` range.

    loopmodel analyze KERNEL -m MACHINE [-D N=1000] [-p LC -p ECM -p Roofline -p RooflineASM] [--json]
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import sys

from ..errors import DefineError
from ..fileio.output import check_new_output, write_new_output
from ..report.figures import check_picture_path
from ..report.text import SweepPrinter, render
from ..workflows import analyze as workflow
from ..workflows.sequence import SequenceResult
from .commands import COMMANDS
from .arguments import (add_options_around_json, console, kernel_and_machine, options_from_args, plot_arguments,
                        progress_bar)

EPILOG = ("Kerncraft spellings accepted: -D/--define N 1000, -P/--cache-predictor LC|SIM, -i/--incore-model "
          "OSACA|LLVM-MCA, --unit cy/It|It/s|FLOP/s|cy/CL, -p ECMData (= ECM, data-transfer terms; analytic in-core "
          "unless -i is given), -p ECMCPU (= ECM, in-core part T_OL || T_nOL), -p RooflineFLOP (= Roofline), --json "
          "FILE (writes a new file; an existing one is not overwritten).")
JSON_HELP = ("print one JSON document; for -D ranges one document per line as it is computed (JSON Lines); "
             "'--json FILE' or '--json=FILE' (Kerncraft's spelling) writes that to FILE, a new file (an existing one "
             "is not overwritten), and prints the text report; the word after --json is FILE unless it starts with "
             "'-', ends in .c/.yml/.yaml, or names an existing file other than *.json; '--json compact': one "
             "document for the whole sweep, the points as columns (sizes, piece) and each piece's analysis once "
             "(points with the same figures form a piece; docs/schema/analyze-compact.schema.json)")


def _report(name: str):
    """``loopmodel.report.<name>``, loaded when the output asks for it: the JSON reports import the
    multicore model, which a text report does not need."""
    return importlib.import_module(f"{__package__.rsplit('.', 1)[0]}.report.{name}")


def add_parser(sub) -> None:
    """The ``analyze`` subcommand on ``sub`` (from ``add_subparsers``)."""
    a = sub.add_parser("analyze", help=COMMANDS["analyze"].help, epilog=EPILOG)
    kernel_and_machine(a)
    add_options_around_json(a, workflow.AnalyzeOptions, workflow.AnalysisOptions, JSON_HELP,
                            before_json=[(("--json-file",), {"metavar": "FILE", "help": argparse.SUPPRESS}),
                                         (("--json-compact",), {"action": "store_true", "help": argparse.SUPPRESS})])
    a.add_argument("-v", "--verbose", action="count", default=0)
    a.add_argument("--no-progress", action="store_true", help="no progress bar for sweeps")
    plot_arguments(a, "with a -D range: write the ECM contributions over the size, layer-condition transitions "
                      "marked (PNG, SVG or PDF by extension)")


def run(args) -> int:
    """Run ``analyze`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (kernel, machine, sizes, options, output files).
    """
    if args.json_file:
        check_new_output(args.json_file, "--json")
    if args.plot:
        check_picture_path(args.plot)
        check_new_output(args.plot, "--plot", args.force)
    if args.json_compact and args.plot:
        raise DefineError("--json compact writes the sweep's document only; --plot needs the per-point output "
                          "(give --json FILE or no --json)")
    prepared = workflow.run(args.kernel, args.machine, options_from_args(workflow.AnalyzeOptions, args))
    if args.json_compact:
        pieces, reason = prepared.pieces()
        _report("sweep_compact").write(pieces, reason, prepared.constants(), sys.stdout.write,
                                       (prepared.skipped.count, prepared.note()))
        return 0
    variable = plot_variable(prepared.points, prepared.models) if args.plot else None
    if len(prepared.points) > 1:
        return _analyze_sweep(args, prepared, variable)
    res = prepared.analyzer.run(prepared.points[0])
    if isinstance(res, SequenceResult):  # a kernel function of several loop nests
        return _one(args, res, lambda: _report("sequence_json").sequence_dict(res),
                    lambda: _report("sequence_text").render_sequence(res, console(), args.unit, args.verbose))
    return _one(args, res, lambda: _report("json_report").to_dict(res),
                lambda: render(res, console(), args.unit, args.verbose))


def _one(args, res, document, text_report) -> int:
    """Print one analysis: its JSON ``document()`` (on stdout, or to ``--json FILE`` with the text
    report too), else its ``text_report()``."""
    if args.json:
        text = json.dumps(document(), indent=1) + "\n"
        if not args.json_file:
            sys.stdout.write(text)
            return 0
        write_new_output(args.json_file, text, "--json")
    text_report()
    return 0


def _emitters(args, out, largest: dict) -> tuple:
    """``(emit, close)`` of a streamed sweep: text rows, JSON Lines on stdout, or text rows with
    the JSON Lines written to ``--json FILE`` at the end."""
    if args.json and not args.json_file:
        def emit(res):
            out.write(json.dumps(_report("json_report").to_dict(res)) + "\n")
            out.flush()
        return emit, None
    printer = SweepPrinter(out.write, out.flush, args.unit, largest)
    if not args.json_file:
        return printer.add, printer.close
    lines = []

    def emit_both(res):
        lines.append(json.dumps(_report("json_report").to_dict(res)) + "\n")
        printer.add(res)

    def close():
        printer.close()
        write_new_output(args.json_file, "".join(lines), "--json")
    return emit_both, close


def _analyze_sweep(args, prepared, variable: str | None) -> int:
    """A ``-D`` range, streamed: each point is written (and flushed) as soon as it is computed --
    a text row, or with ``--json`` one complete JSON document per line (JSON Lines) -- so that
    neither the points nor the results of the sweep are held in memory."""
    out = sys.stdout
    points = prepared.points
    plot_points = []
    emit, close = _emitters(args, out, points.largest())
    if args.plot:
        emit = _collecting(emit, plot_points, variable)
    # rows on a terminal show the progress themselves; the bar is for output sent elsewhere
    if not args.no_progress and sys.stderr.isatty() and not out.isatty():
        with progress_bar() as prog:
            task = prog.add_task("analyzing", total=len(points))
            for res in prepared.results():
                emit(res)
                prog.advance(task)
    else:
        for res in prepared.results():
            emit(res)
    if close:
        close()
    note = prepared.note()
    if note:  # JSON Lines on standard output: the note goes to standard error
        (sys.stderr.write(f"loopmodel: note: {note}\n") if args.json and not args.json_file
         else out.write(f"note: {note}\n"))
    if args.plot:
        _write_ecm_plot(args, variable, plot_points, prepared.analyzer, points[0])
        if not args.json or args.json_file:
            out.write(f"plot written to {args.plot}\n")
    return 0


def _collecting(emit, plot_points: list, variable: str):
    """``emit`` that also keeps the :class:`~loopmodel.report.ecm_plot.EcmPoint` of each result."""
    def both(res):
        emit(res)
        plot_points.append(_ecm_plot().ecm_point(res, variable))
    return both


def plot_variable(points, models: tuple) -> str:
    """The size constant ``analyze --plot`` draws over: the one ``-D`` range of ``points``.

    Raises:
        DefineError: no range, more than one, or no ECM among the models (one line).
    """
    ranged = [name for name, seq in points.values.items() if len(seq) > 1]
    if not ranged:
        raise DefineError("--plot needs a -D range (e.g. -D N=100:10000:100)")
    if len(ranged) > 1:
        raise DefineError(f"--plot draws over one size: {' and '.join(ranged)} both vary (give one -D range)")
    if "ECM" not in models:
        raise DefineError("--plot draws the ECM contributions: add -p ECM")
    return ranged[0]


def _write_ecm_plot(args, variable: str, plot_points: list, analyzer, first: dict) -> None:
    """Write the ECM picture of a sweep (:func:`loopmodel.report.ecm_plot.plot`) to ``args.plot``;
    the title names the kernel, the machine and the sizes that do not vary (``first``: a point).

    Raises:
        LoopmodelError: the file cannot be written (one line).
    """
    fixed = ", ".join(f"{n}={v}" for n, v in sorted(first.items()) if n != variable)
    title = f"{os.path.basename(str(args.kernel))} on {analyzer.machine.name}: single-core ECM contributions"
    title += f" ({fixed})" if fixed else ""
    _ecm_plot().plot(plot_points, variable, args.plot, title)


def _ecm_plot():
    """:mod:`loopmodel.report.ecm_plot`, loaded for ``--plot`` only (an analysis without a picture
    does not import it; benchmarks/speed_check.py)."""
    return importlib.import_module("loopmodel.report.ecm_plot")
