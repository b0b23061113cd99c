"""``loopmodel roofline``: measured Roofline points of one or more kernels, with the model's.

    loopmodel roofline A.c [B.c ...] -m MACHINE -D N=... [--repeat 10] [--cache warm|cold]
                       [--plot r.png] [--force] [--json]   (--cache warm|cold|both)

Each kernel takes the ``-D`` constants it declares and ignores the others. Parses the
options, measures (:func:`loopmodel.workflows.roofline_measured.measure_points`), renders a table or
JSON, and draws the picture with ``--plot``. Errors are one line.
"""
from __future__ import annotations

import json
import sys


def add_parser(sub) -> None:
    """The ``roofline`` subcommand on ``sub``."""
    r = sub.add_parser("roofline", help="measured Roofline points of kernels on this host, with the model's")
    r.add_argument("kernels", nargs="+", metavar="KERNEL.c", help="C kernel files")
    r.add_argument("-m", "--machine", required=True, help="machine model of this host ('host' after a probe)")
    r.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                   help="size constant (value or start:stop[:step]); each kernel takes the ones it declares")
    r.add_argument("--repeat", "-r", type=int, default=10, help="runs per size (default 10)")
    r.add_argument("--cache", choices=("warm", "cold", "both"), default="warm",
                   help="data warm (default), cold, or both (two series per kernel, shown apart)")
    r.add_argument("--cpu", type=int, default=0, help="CPU to pin the benchmark to (default 0)")
    r.add_argument("--no-cache", action="store_true", help="measure again instead of reading the per-user cache")
    r.add_argument("--plot", metavar="FILE", help="write the Roofline plot (PNG, SVG or PDF by extension)")
    r.add_argument("--force", action="store_true", help="overwrite an existing --plot file")
    r.add_argument("--json", action="store_true", help="print JSON: roofs and points")


def run(args) -> int:
    """Run ``roofline`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    from ..errors import DefineError, LoopmodelError
    from ..fileio.machine_files import load_machine
    from ..fileio.output import check_new_output
    from ..workflows.roofline_measured import measure_points, roofs

    if args.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {args.repeat}")
    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    from .bench import c_kernel_points

    plan = [(k, c_kernel_points(k, args.define, "roofline", own_only=True)) for k in args.kernels]
    machine = load_machine(args.machine)
    from ..fileio.host_models import machine_notes

    points, notes = [], list(machine_notes(args.machine, machine))
    modes = (False, True) if args.cache == "both" else (args.cache == "cold",)
    for path, pts in plan:
        for cold in modes:
            got, why = measure_points(path, machine, pts, args.repeat, args.cpu, not args.no_cache, args.machine,
                                      cold)
            points += got
            notes += [n for n in why if n not in notes]
    top = roofs(machine)
    if args.plot and points:
        from ..report.roofline_plot import plot
        try:
            plot(points, top, args.plot, f"measured Roofline on {args.machine} "
                 f"({'warm and cold' if args.cache == 'both' else args.cache} data, 1 core)")
        except OSError as exc:
            raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
    if args.json:
        json.dump(document(top, points, notes), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    _render(points, top, notes, args)
    return 0


def document(top, points, notes) -> dict:
    """The ``--json`` document: the roofs (``peak_flop_s`` or ``bandwidth_B_s``), the measured
    :class:`~loopmodel.workflows.roofline_measured.RooflinePoint` s and the notes."""
    from ..report.schema import document as envelope

    return envelope({"roofs": [{"kind": r.kind, "label": r.label,
                                ("peak_flop_s" if r.kind == "compute" else "bandwidth_B_s"): r.value} for r in top],
                     "points": [p.to_dict() for p in points], "notes": all_notes(notes, points)})


def all_notes(notes, points) -> list:
    """The notes of the table and of the JSON document: the measurement's, and, with points,
    that the intensities are the model's (no counters on this path)."""
    return list(notes) + (["counters unavailable: time only; intensities are the model's traffic"] if points else [])


def _render(points, top, notes, args) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="Measured Roofline points (1 thread, min-of-K; FLOP/s best / worst run)")
    for col in ("kernel", "sizes", "cache", "data in", "FLOP/B", "measured GFLOP/s", "worst", "model GFLOP/s"):
        t.add_column(col, justify="left" if col in ("kernel", "sizes", "cache", "data in") else "right")
    for p in points:
        t.add_row(p.kernel.rsplit("/", 1)[-1], " ".join(f"{k}={v}" for k, v in p.defines.items()), p.cache, p.level,
                  f"{p.intensity:.3f}", f"{p.measured[0] / 1e9:.2f}", f"{p.measured[2] / 1e9:.2f}",
                  f"{p.predicted / 1e9:.2f}")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    console.print(t)
    console.print("roofs: " + "; ".join(r.label for r in top))
    for n in all_notes(notes, points):
        console.print(escape(f"note: {n}"))
    if args.plot and points:
        console.print(f"plot written to {args.plot}")
