"""Measure the MESI transition table on this host and print it in GB/s.

benchmark-based-coherence-model.txt §IV: the time for each of T pinned threads to load or
store its own chunk of doubles when the chunk starts in a coherence state (``L M other``: a
load of a chunk another thread's cache holds modified, ...). Prints one table per T (rows:
chunk size; columns: transitions; figures: chunk bytes / min-of-K seconds in GB/s, 10^9 B/s)
and writes the table as JSON to ``--out`` (refuses to overwrite an existing file).

    PYTHONPATH=src python benchmarks/coherence_table.py --cpus 0,1 --threads 1,2 \\
        --max-size-mib 256 --repetitions 5 --out /tmp/coherence.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from loopmodel.errors import LoopmodelError  # noqa: E402
from loopmodel.fileio.machine_writer import coherence_mapping  # noqa: E402
from loopmodel.machine.coherence import TRANSITION_KEYS  # noqa: E402
from loopmodel.measure.coherence_bench import coherence_sizes, measure_coherence  # noqa: E402


def _size(b: int) -> str:
    return f"{b // 2 ** 20} MiB" if b >= 2 ** 20 and b % 2 ** 20 == 0 else f"{b / 1024:g} KiB"


def table_text(table) -> str:
    """One GB/s table per thread count: rows sizes, columns the measured transitions."""
    keys = [k for k in TRANSITION_KEYS if k in table.seconds]
    lines = []
    for t in table.threads:
        lines.append(f"\nT = {t} (GB/s per thread; region overhead {table.region_overhead.get(t, 0) * 1e6:.2f} us)")
        lines.append(f"{'size':>10} " + " ".join(f"{k:>10}" for k in keys))
        for i, size in enumerate(table.sizes):
            row = [size / table.seconds[k][t][i] / 1e9 if t in table.seconds[k] else float("nan") for k in keys]
            lines.append(f"{_size(size):>10} " + " ".join(f"{x:10.1f}" for x in row))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="JSON file to write (must not exist)")
    ap.add_argument("--cpus", default="0,1", help="logical CPUs, comma-separated (default 0,1)")
    ap.add_argument("--threads", default="1,2", help="thread counts T, comma-separated (default 1,2)")
    ap.add_argument("--min-size-kib", type=int, default=4)
    ap.add_argument("--max-size-mib", type=int, default=256)
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--compiler", default="gcc")
    a = ap.parse_args()
    if os.path.lexists(a.out):
        print(f"{a.out}: exists; not overwritten", file=sys.stderr)
        return 2
    try:
        sizes = coherence_sizes(a.max_size_mib * 2 ** 20, a.min_size_kib * 1024)
        t0 = time.monotonic()
        table = measure_coherence([int(c) for c in a.cpus.split(",")], sizes,
                                  [int(t) for t in a.threads.split(",")], repetitions=a.repetitions,
                                  compiler=a.compiler)
        wall = time.monotonic() - t0
    except LoopmodelError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table_text(table))
    print(f"\nwall time {wall:.1f} s")
    for n in table.notes:
        print(f"note: {n}")
    with open(a.out, "x", encoding="utf-8") as fh:
        json.dump({"wall_s": round(wall, 1), "repetitions": a.repetitions, "coherence": coherence_mapping(table)},
                  fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
