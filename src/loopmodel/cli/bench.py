"""``loopmodel bench``: measure a kernel on this host (benchmark mode).

    loopmodel bench KERNEL.c -D N=1000 [-D ...] [-m MACHINE] [--repeat 10] [--cache warm|cold] [--cpu 0]
                    [--threads N|1:N]
                    [--timeout 120] [--no-cache] [--json]

Parses the options, measures each size with :func:`loopmodel.measure.bench.run_bench` and
renders the results (a rich table, or JSON: one object per size, a list for a sweep).
Errors are one line.
"""
from __future__ import annotations

import dataclasses
import json
import sys


def add_parser(sub) -> None:
    """The ``bench`` subcommand on ``sub`` (from ``add_subparsers``)."""
    b = sub.add_parser("bench", help="measure a kernel on this host (pinned, min-of-K; s/it, cy/CL, it/s, FLOP/s)")
    b.add_argument("kernel", help="C kernel file")
    b.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                   help="size constant (value or start:stop[:step] for a sweep)")
    b.add_argument("-m", "--machine", help="machine model whose compiler and flags to use (default: the host's "
                                           "-O3 -march=native); 'host' for this host's probe")
    b.add_argument("--repeat", "-r", type=int, default=10, help="runs of >= 10 ms each (default 10; min-of-K)")
    b.add_argument("--cache", choices=("warm", "cold"), default="warm",
                   help="data warm (default: a warm-up call, then runs of calibrated calls) or cold (a buffer "
                        "of 4x the last cache streamed before each run of one call)")
    b.add_argument("--cpu", type=int, default=0, help="CPU to pin the benchmark to (default 0)")
    b.add_argument("--threads", "-t", metavar="N|1:N",
                   help="share the outermost loop among N OpenMP threads (OMP_PLACES=cores, OMP_PROC_BIND=close, "
                        "first touch in parallel); a range (1:N, 1,2,4) gives a scaling curve whose --json "
                        "'loopmodel scaling --measured' reads; default: one pinned thread")
    b.add_argument("--timeout", type=float, default=120, metavar="SECONDS", help="per size (default 120 s)")
    b.add_argument("--no-cache", action="store_true", help="measure again instead of reading the per-user cache")
    b.add_argument("--json", action="store_true", help="print JSON (units in the key names)")


def run(args) -> int:
    """Run ``bench`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, machine, compiler, run).
    """
    results, curve = bench_results(args)
    if args.json:
        json.dump(_document(results, curve), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    _render(results)
    return 0


def bench_results(args) -> tuple:
    """``bench``'s parsed arguments -> ``(results, curve)``: one
    :class:`~loopmodel.measure.bench.BenchResult` per size and thread count, and whether they
    form a scaling curve (several thread counts). The CLI and :func:`loopmodel.bench` both call it.

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, machine, compiler, run).
    """
    from ..measure.bench import run_bench

    points = c_kernel_points(args.kernel, args.define, "bench")
    _check(args)
    counts = _thread_counts(args.threads, len(points))
    machine = _machine(args.machine)
    results = [run_bench(args.kernel, pt, machine, args.repeat, 0.01, args.cpu, not args.no_cache, args.timeout,
                         args.machine, cold=args.cache == "cold", threads=n) for pt in points for n in counts]
    from ..fileio.host_models import machine_notes

    extra = machine_notes(args.machine, machine)
    if extra:
        results = [dataclasses.replace(r, notes=extra + tuple(r.notes)) for r in results]
    return results, len(counts) > 1


def document(results, curve: bool):
    """The JSON document of ``bench --json`` (see :func:`_document`)."""
    return _document(results, curve)


def _check(args) -> None:
    from ..errors import DefineError

    if args.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {args.repeat}")
    if not args.timeout > 0:
        raise DefineError(f"--timeout must be > 0 s, got {args.timeout}")


def _thread_counts(text: str | None, n_points: int) -> list:
    """``[None]`` (one pinned thread) or the OpenMP thread counts of ``--threads`` (N, 1:N, 1,2,4).

    Raises:
        DefineError: a bad list, or a range of counts with more than one size.
    """
    from ..errors import DefineError
    from .measure import parse_threads

    if text is None:
        return [None]
    counts = parse_threads(text)
    if min(counts) < 1:
        raise DefineError(f"--threads must be >= 1, got {text}")
    if len(counts) > 1 and n_points > 1:
        raise DefineError("--threads with several counts takes one size (the scaling curve of one kernel)")
    return counts


def _document(results, curve: bool):
    """JSON: one document of the same shape for one size, a sweep of sizes and a range of thread
    counts (``curve``, whose ``points`` (``threads``, ``it_s``) ``loopmodel scaling --measured``
    reads): ``{"schema_version", "loopmodel_version", "kernel", "points": [...]}``."""
    from ..report.schema import document

    del curve  # the same shape either way
    return document({"kernel": results[0].kernel,
                     "points": [{"threads": r.threads, "it_s": r.figures()["it_per_s"][0], **r.to_dict()}
                                for r in results],
                     "notes": bench_notes(results)})


def bench_notes(results) -> list:
    """The notes of the table and of the JSON document: how the kernel was run (runs, cache,
    threads, compiler), whether it came from the cache, then every point's own notes."""
    r0 = results[0]
    who = (f"{r0.threads} OpenMP threads (OMP_PLACES=cores, OMP_PROC_BIND=close)" if r0.openmp
           else f"1 thread pinned to CPU {r0.measurement.cpu}")
    notes = [f"{len(r0.measurement.seconds_per_call)} runs per size, data {r0.cache}, {who}; compiled with "
             f"{r0.measurement.compiler} {' '.join(r0.measurement.flags)}"]
    if any(r.cached for r in results):
        notes.append("from the per-user cache (--no-cache measures again)")
    return list(dict.fromkeys(notes + [n for r in results for n in r.notes]))


def c_kernel_points(path: str, defines: list, command: str, own_only: bool = False):
    """The size points of a C kernel from ``-D`` options (``own_only``: only the constants the
    kernel declares, for commands taking several kernels), as a lazy
    :class:`~loopmodel.fileio.defines.Sweep` (``len``, indexing, iteration).

    Raises:
        DefineError: a YAML kernel description (no code to run), or a constant without a value.
    """
    from ..errors import DefineError
    from ..fileio.c_kernel import parse_kernel_file
    from ..fileio.defines import sweep
    from ..fileio.kernel_yaml import YAML_SUFFIXES

    if str(path).lower().endswith(YAML_SUFFIXES):
        raise DefineError(f"{command} needs a C kernel to run; a YAML kernel description has no code", file=path)
    kernel, defaults = parse_kernel_file(path)
    if own_only:
        defines = [d for d in defines if d.split("=", 1)[0].strip() in kernel.constants]
    points = sweep(defines, defaults)
    missing = kernel.free_constants(points[0])  # every point gives the same constants
    if missing:
        raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size>", file=path)
    return points


def _machine(name):
    if name is None:
        return None
    from ..fileio.machine_files import load_machine

    return load_machine(name)


def _render(results) -> None:
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    t = Table(title="Measured (min-of-K; median and max of the runs)")
    for col in ("sizes", "cy/CL min", "median", "max", "cy/it", "s/it", "it/s", "FLOP/s", "CoV", "clock"):
        t.add_column(col, justify="left" if col == "sizes" else "right")
    for r in results:
        f, m = r.figures(), r.measurement
        t.add_row(" ".join(f"{k}={v}" for k, v in r.defines.items()), *(f"{x:.2f}" for x in f["cy_per_CL"]),
                  f"{f['cy_per_it'][0]:.3f}", f"{f['seconds_per_it'][0]:.3e}", f"{f['it_per_s'][0]:.3e}",
                  f"{f['FLOP_per_s'][0]:.3e}", f"{100 * m.cov:.1f} %", f"{r.clock_hz / 1e9:.3f} GHz")
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 140)
    console.print(t)
    for r in results:
        gbs = {k: v / 1e9 for k, v in r.to_dict()["measurement"]["model_traffic_B_s"].items()}
        if gbs:
            console.print(" ".join(f"{k}={v}" for k, v in r.defines.items()) + ": GB/s on each link (model traffic x "
                          "measured it/s): " + ", ".join(f"{k} {v:.1f}" for k, v in gbs.items()))
        c = r.measurement.counters
        if c:
            console.print(" ".join(f"{k}={v}" for k, v in r.defines.items()) + ": counters per iteration: " + ", ".join(
                f"{k.replace('_', ' ')} {v:.3g}" for k, v in c.items() if v is not None))
    for n in bench_notes(results):
        console.print(escape(f"note: {n}"))
