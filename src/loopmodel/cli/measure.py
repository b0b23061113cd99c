"""``loopmodel measure``: measured daxpby/triad bandwidth per thread count on this host.

    loopmodel measure {daxpby,triad} [--threads 1:N] [--size "512 MiB"] [--repetitions 5]
                      [--min-time 0.1] [--compiler gcc] [--flags "-O3 -march=native -fopenmp"]
                      [--json] [-o OUT.json] [--clock]

Wiring into the main parser (cli.py)::

    from .measure import cli_measure
    cli_measure.add_parser(sub)                # sub = p.add_subparsers(dest="command", ...)
    ...
    if args.command == "measure":
        return cli_measure.run(args)

Errors are :class:`~loopmodel.errors.LoopmodelError` subclasses with one-line messages
(bad option values: DefineError; compiler, benchmark and output file: ToolError /
DefineError), for cli.py to print. This module imports nothing heavy at import time.
"""
from __future__ import annotations

import sys

from ..errors import DefineError
from ..fileio.output import check_new_output, write_new_output
from ..measure.stream import DEFAULT_FLAGS, KERNEL_NAMES

DEFAULT_SIZE = "512 MiB"


def add_parser(subparsers):
    """Add the ``measure`` subcommand to ``subparsers`` (from ``add_subparsers``); returns it."""
    m = subparsers.add_parser(
        "measure", help="measure daxpby/triad bandwidth per thread count on this host (validates models)",
        description="Compile and run an OpenMP streaming benchmark (daxpby: y = a*x + b*y, 24 B/it; "
                    "triad: a = b + s*c, 32 B/it with write-allocate, 24 B/it without) once per thread count "
                    "with OMP_PROC_BIND=close OMP_PLACES=cores. GB/s = 10^9 B/s.")
    m.add_argument("kernel", choices=KERNEL_NAMES, help="streaming kernel")
    m.add_argument("--threads", "-t", metavar="LIST",
                   help="thread counts: 1:4 (range, stop included; 1:8:2 with step), 1,2,4 or 2 "
                        "(default 1:<number of CPUs>)")
    m.add_argument("--size", default=DEFAULT_SIZE,
                   help=f"total size of all arrays, e.g. '512 MiB', '2 GiB' (default '{DEFAULT_SIZE}'; "
                        "choose well above the last-level cache for memory bandwidth)")
    m.add_argument("--repetitions", "-r", type=int, default=5,
                   help="repetitions per thread count; median, min and max are reported (default 5)")
    m.add_argument("--min-time", type=float, default=0.1, metavar="SECONDS",
                   help="each repetition runs sweeps for at least this many seconds (default 0.1)")
    m.add_argument("--compiler", default="gcc", help="C compiler (default gcc)")
    m.add_argument("--flags", default=DEFAULT_FLAGS,
                   help=f"compiler flags, must enable OpenMP (default '{DEFAULT_FLAGS}'; a single flag: "
                        "--flags=-fopenmp)")
    m.add_argument("--json", action="store_true", help="print one JSON document (units in the key names)")
    m.add_argument("-o", "--output", metavar="OUT.json",
                   help="also write the JSON document here (refuses to overwrite an existing file)")
    m.add_argument("--clock", action="store_true",
                   help="also measure the core clock (single core, dependent integer additions)")
    return m


def parse_threads(text: str | None, default_max: int | None = None) -> list[int]:
    """``'1:4'`` -> [1, 2, 3, 4]; ``'1:8:2'`` -> [1, 3, 5, 7]; ``'1,2,4'``; ``'3'``; ``None`` -> 1..default_max.

    Duplicates are dropped, the order is kept. Range checks against the number of cores
    are done by :func:`~loopmodel.measure.stream.run_stream`.

    Raises:
        DefineError: unreadable or empty list.
    """
    from ..fileio.defines import count_list

    if text is None:
        from ..measure.topology import allowed_cpus

        return list(range(1, (default_max or len(allowed_cpus())) + 1))
    return count_list(text, "--threads")


def _parse_size(text: str) -> float:
    from ..units import UnitError, parse_quantity

    try:
        return parse_quantity(text, "size")
    except UnitError as exc:
        raise DefineError(f"--size: {exc}") from None


def to_document(result, clock_hz: float | None = None) -> dict:
    """The JSON document of ``loopmodel measure`` (naming rule: :mod:`loopmodel.report.schema`)."""
    from ..report.schema import document

    doc = result.to_dict()
    if clock_hz is not None:
        doc["clock_Hz"] = clock_hz
    return document(doc)


def run(args) -> int:
    """Run ``loopmodel measure`` for parsed ``args``; returns the exit status (0).

    Raises:
        LoopmodelError: one-line user errors (DefineError, ToolError).
    """
    import json

    from ..measure.stream import run_stream

    if args.output:
        check_new_output(args.output, "-o")
    threads = parse_threads(args.threads)
    size = _parse_size(args.size)
    if args.repetitions < 1:
        raise DefineError(f"--repetitions must be >= 1, got {args.repetitions}")
    if not args.min_time > 0 or args.min_time == float("inf"):
        raise DefineError(f"--min-time must be a positive number of seconds, got {args.min_time}")

    from .. import toolchain
    toolchain.chosen_compiler(args.compiler)
    clock_hz = None
    if args.clock:
        from ..measure.clock import measure_clock_hz

        clock_hz = measure_clock_hz(args.compiler)

    show_progress = sys.stderr.isatty()

    def progress(point):
        if show_progress:
            sys.stderr.write(f"\r{args.kernel}: {point.threads} thread(s) done ({point.bytes_per_s / 1e9:.2f} GB/s)"
                             "\033[K")
            sys.stderr.flush()

    result = run_stream(args.kernel, threads, size, repetitions=args.repetitions, min_time_s=args.min_time,
                        compiler=args.compiler, flags=args.flags, progress=progress)
    if show_progress:
        sys.stderr.write("\r\033[K")
    doc = to_document(result, clock_hz)
    text = json.dumps(doc, indent=1) + "\n"
    if args.output:
        write_new_output(args.output, text, "-o")
    if args.json:
        sys.stdout.write(text)
    else:
        render(result, clock_hz)
    return 0


def render(result, clock_hz: float | None = None, console=None) -> None:
    """The rich table of a :class:`~loopmodel.measure.stream.StreamResult`."""
    from rich.console import Console
    from rich.table import Table
    from rich.text import Text

    from ..units import format_bytes
    from ..measure.stream import KERNELS, OMP_ENVIRONMENT

    if console is None:
        console = Console(highlight=False, width=None if sys.stdout.isatty() else 120)
    arrays, bpi, bpi_no_wa, formula = KERNELS[result.kernel]
    table = Table(title=Text(f"{result.kernel}: {formula}   ({bpi} B/it; {bpi_no_wa} B/it without write-allocate)"))
    for header in ("threads", "Mit/s", "GB/s", "GB/s without write-allocate", "ms per sweep, median (min-max)"):
        table.add_column(Text(header), justify="right")
    for p in result.points:
        table.add_row(str(p.threads), f"{p.it_per_s / 1e6:.1f}", f"{p.bytes_per_s / 1e9:.2f}",
                      f"{p.bytes_per_s_no_wa / 1e9:.2f}",
                      f"{p.seconds_per_sweep * 1e3:.3g} ({p.seconds_per_sweep_min * 1e3:.3g}-"
                      f"{p.seconds_per_sweep_max * 1e3:.3g})")
    console.print(table)
    env = " ".join(f"{k}={v}" for k, v in OMP_ENVIRONMENT.items())
    console.print(f"N = {result.n_elements} elements per array, {format_bytes(result.size_bytes)} in {arrays} arrays; "
                  f"median of {result.repetitions} repetition(s) of at least {result.min_time_s:g} s; GB = 10^9 B",
                  markup=False)
    console.print(f"host: {result.host}", markup=False)
    console.print(f"compiler: {result.compiler_version or result.compiler}; flags: {' '.join(result.flags)}; {env}",
                  markup=False)
    if clock_hz is not None:
        console.print(f"core clock (measured on one core, dependent integer adds): {clock_hz / 1e9:.2f} GHz",
                      markup=False)
