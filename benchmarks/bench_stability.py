"""Do two ``loopmodel bench`` runs in a row agree? The same kernel at the same size measured
``--times`` times one after the other, with its runs in one block (one process: the old
behaviour) and in blocks spread over time (``--blocks 3``, the default: measured again until
the two fastest blocks agree within 3 %), alternating, so that both see the same host.

Run: python benchmarks/bench_stability.py [--times 5] [KERNEL.c] [-D N=60000]
Reports per mode: the min s/it of each run, the largest and the median relative difference of
two runs in a row, and the verdicts (stable / unstable / unchecked).
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def bench(kernel: str, defines: list, blocks: int) -> dict:
    argv = [sys.executable, "-m", "loopmodel", "bench", kernel, *[f"-D{d}" for d in defines], "--no-cache",
            "--json", "--blocks", str(blocks)]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src")}).stdout
    return json.loads(out)["points"][0]["measurement"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel", nargs="?", default="examples/kernels/triad.c")
    ap.add_argument("-D", dest="define", action="append", default=None)
    ap.add_argument("--times", type=int, default=5)
    ap.add_argument("--blocks", type=int, nargs="+", default=[1, 3], help="the modes compared (default: 1 3)")
    args = ap.parse_args()
    defines = args.define or ["N=60000"]
    runs = {b: [] for b in args.blocks}
    for _ in range(args.times):
        for blocks in runs:
            runs[blocks].append(bench(args.kernel, defines, blocks))
    print(f"{args.kernel} {' '.join(defines)}: {args.times} bench runs in a row per mode, alternating")
    for blocks, ms in runs.items():
        mins = [m["time_min_s_per_it"] for m in ms]
        steps = [abs(b / a - 1) for a, b in zip(mins, mins[1:])]
        verdicts = [m["stability"]["verdict"] for m in ms]
        print(f"--blocks {blocks}: min s/it " + ", ".join(f"{x:.3e}" for x in mins))
        print(f"    two runs in a row differ by: median {100 * statistics.median(steps):.1f} %, "
              f"max {100 * max(steps):.1f} %; all runs within {100 * (max(mins) / min(mins) - 1):.1f} %")
        print("    verdicts: " + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
              + f"; repetitions per run: {[m['repetitions'] for m in ms]}")


if __name__ == "__main__":
    main()
