"""``loopmodel validate``: the ECM prediction next to the measurement, per size.

    loopmodel validate KERNEL.c -m MACHINE -D N=start:stop:step [--repeat 10] [--cpu 0]
                       [--no-cache] [--json]

Parses the options, runs :func:`loopmodel.workflows.validation.validate` and renders a table with a
summary per data location, or JSON (a list with one row per size). Errors are one line.
"""
from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    """The ``validate`` subcommand on ``sub``."""
    v = sub.add_parser("validate", help="ECM prediction vs measurement on this host, per size")
    v.add_argument("kernel", help="C kernel file")
    v.add_argument("-m", "--machine", required=True, help="machine model of this host (a probe: 'host' or a file)")
    v.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                   help="size constant (value or start:stop[:step])")
    v.add_argument("--repeat", "-r", type=int, default=10, help="runs per size (default 10; min-of-K)")
    v.add_argument("--cpu", type=int, default=0, help="CPU to pin the benchmark to (default 0)")
    v.add_argument("--no-cache", action="store_true", help="measure again instead of reading the per-user cache")
    v.add_argument("--json", action="store_true", help="print a JSON list, one row per size")
    v.add_argument("--plot", metavar="FILE", help="write the ECM contributions over the size with the measured "
                                                  "points (PNG, SVG or PDF by extension)")
    v.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


def run(args) -> int:
    """Run ``validate`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    from ..workflows.validation import summary

    if args.plot:
        from ..fileio.output import check_new_output
        check_new_output(args.plot, "--plot", args.force)
    rows, machine = validation_rows(args)
    if args.plot:
        _plot(rows, args)
    from ..fileio.host_models import machine_notes

    notes = validation_notes(rows, machine_notes(args.machine, machine))
    if args.json:
        json.dump(document(str(args.kernel), rows, notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    _render(rows, summary(rows), args, notes)
    return 0


def validation_rows(args) -> tuple:
    """``validate``'s parsed arguments -> ``(rows, machine)``: one
    :class:`~loopmodel.workflows.validation.ValidationRow` per size and the machine model. The CLI and
    :func:`loopmodel.validate` both call it.

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, machine, compiler, run).
    """
    from .bench import c_kernel_points
    from ..errors import DefineError
    from ..fileio.machine_files import load_machine
    from ..workflows.validation import validate

    points = c_kernel_points(args.kernel, args.define, "validate")
    if args.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {args.repeat}")
    machine = load_machine(args.machine)
    rows = validate(args.kernel, machine, points, args.repeat, args.cpu, not args.no_cache, args.machine)
    return rows, machine


def document(kernel: str, rows: list, notes: list | None = None) -> dict:
    """The ``--json`` document: one point per size (:meth:`~loopmodel.workflows.validation.ValidationRow.to_dict`)
    and the notes the table prints (``notes``; default :func:`validation_notes` of the rows)."""
    from ..report.schema import document as envelope

    return envelope({"kernel": kernel, "points": [r.to_dict() for r in rows],
                     "notes": list(validation_notes(rows) if notes is None else notes)})


def validation_notes(rows: list, extra_notes: tuple = ()) -> list:
    """The notes of the table and of the JSON document: how the measurement was made, then
    ``extra_notes`` (e.g. which probe ``-m host`` rests on) and every size's benchmark notes."""
    first = ("measured with loopmodel bench (1 thread pinned, data warm, min-of-K), cy/CL at the clock measured "
             "around each size; error = predicted / measured min - 1")
    return list(dict.fromkeys([first, *extra_notes, *(n for r in rows for n in r.bench.notes)]))


def _plot(rows, args) -> None:
    from ..errors import LoopmodelError
    from ..report.validation_plot import plot

    try:
        plot(rows, args.plot, f"{args.kernel.rsplit('/', 1)[-1]} on {args.machine}: ECM vs measured")
    except OSError as exc:
        raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None


def _render(rows, summ: dict, args, notes: list) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title=f"{args.kernel} on {args.machine}: ECM prediction vs measurement (cy/CL)")
    for col in ("sizes", "data in", "ECM", "predicted", "measured min", "median", "max", "error"):
        t.add_column(col, justify="left" if col in ("sizes", "data in", "ECM") else "right")
    for r in rows:
        lo, med, hi = r.measured
        t.add_row(" ".join(f"{k}={v}" for k, v in r.defines.items()), r.level, r.ecm, f"{r.predicted:.2f}",
                  f"{lo:.2f}", f"{med:.2f}", f"{hi:.2f}", f"{100 * r.error:+.1f} %")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    console.print(t)
    for level, s in summ.items():
        console.print(f"{level}: {s['points']} point(s), median |error| {100 * s['median_abs_error']:.1f} %, "
                      f"max {100 * s['max_abs_error']:.1f} %")
    for n in notes:
        console.print(escape(f"note: {n}"))
