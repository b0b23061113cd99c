"""Measure streaming performance per thread count on this machine, to validate the multicore models.

Runs ``loopmodel.measure`` (stdlib only, so it also runs where loopmodel's dependencies are
not installed, e.g. ``PYTHONPATH=src python3 benchmarks/measure_scaling.py --out DIR``):
the core clock (dependent add chain), and the daxpby and triad OpenMP benchmarks with
1..N pinned threads on a data set far larger than the last-level cache. Writes
``clock.json``, ``daxpby.json``, ``triad.json`` (the ``loopmodel measure --json`` format,
read by ``loopmodel scaling --measured``) and ``lscpu.txt`` into ``--out``.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from loopmodel.measure.clock import measure_clock_hz  # noqa: E402
from loopmodel.measure.stream import run_stream  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--size-mib", type=int, default=2048, help="total array size (MiB)")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time", type=float, default=0.1)
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    try:
        info = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    except OSError:
        info = ""
    with open(os.path.join(a.out, "lscpu.txt"), "w") as fh:
        fh.write(info)
    clock = measure_clock_hz()
    with open(os.path.join(a.out, "clock.json"), "w") as fh:
        json.dump({"clock_Hz": clock}, fh)
    print(f"clock {clock / 1e9:.3f} GHz", flush=True)
    for kernel in ("daxpby", "triad"):
        res = run_stream(kernel, list(range(1, a.threads + 1)), a.size_mib << 20, a.repetitions, a.min_time)
        doc = res.to_dict()
        doc["clock_Hz"] = clock
        with open(os.path.join(a.out, f"{kernel}.json"), "w") as fh:
            json.dump(doc, fh, indent=1)
        for p in res.points:
            print(f"{kernel} {p.threads:3d} threads {p.it_per_s / 1e9:7.3f} Git/s {p.bytes_per_s / 1e9:7.2f} GB/s",
                  flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
