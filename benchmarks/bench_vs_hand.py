"""`loopmodel bench` against itself and against a hand-written C timing loop.

For daxpy, triad and the 2D 5-point stencil with their data sets at 16 KiB (L1), 512 KiB (L2),
16 MiB (L3) and 256 MiB (memory): two `loopmodel bench` runs in a row (min-of-K, cache off)
and the hand-written program of `benchmarks/hand_timing/` (same compiler and flags, pinned
with taskset to the same CPU, fastest of 10 runs of >= 10 ms), all in seconds per iteration
(clock-independent). Prints the differences and their median and largest value.

    python benchmarks/bench_vs_hand.py [--out FILE]
"""
from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from loopmodel.fileio.output import check_new_output, write_new_output  # noqa: E402
from loopmodel.measure.bench import run_bench  # noqa: E402
from loopmodel.measure.kernel_bench import default_flags  # noqa: E402

LEVELS = {"L1": 16 * 2**10, "L2": 512 * 2**10, "L3": 16 * 2**20, "MEM": 256 * 2**20}


def sizes(kernel: str, data_bytes: int) -> dict:
    if kernel == "daxpy":
        return {"N": data_bytes // 16}
    if kernel == "triad":
        return {"N": data_bytes // 24}
    n = int(math.sqrt(data_bytes / 16))
    return {"M": n, "N": n}


def hand(kernel: str, defines: dict, directory: str) -> float:
    exe = os.path.join(directory, f"{kernel}-{'-'.join(map(str, defines.values()))}")
    flags = [f"-D{k}={v}" for k, v in defines.items()]
    subprocess.run(["gcc", *default_flags(), *flags, "-o", exe, os.path.join(ROOT, "benchmarks", "hand_timing",
                                                                               f"{kernel}.c")], check=True)
    out = subprocess.run(["taskset", "-c", "0", exe], capture_output=True, text=True)
    return float(out.stdout.split()[0])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out")
    a = ap.parse_args(argv)
    if a.out:
        check_new_output(a.out, "--out")
    lines = [f"{'kernel':8s} {'level':5s} {'sizes':18s} {'bench 1':>10s} {'bench 2':>10s} {'1 vs 2':>7s} "
             f"{'hand':>10s} {'vs hand':>8s}   (s/it, min-of-K)"]
    rep, vs = [], []
    with tempfile.TemporaryDirectory() as d:
        for kernel in ("daxpy", "triad", "2d-5pt"):
            path = os.path.join(ROOT, "examples", "kernels", f"{kernel}.c")
            for level, b in LEVELS.items():
                pt = sizes(kernel, b)
                s1 = run_bench(path, pt, None, 10, 0.01, 0, use_cache=False).measurement.seconds_per_it_min
                s2 = run_bench(path, pt, None, 10, 0.01, 0, use_cache=False).measurement.seconds_per_it_min
                h = hand(kernel, pt, d)
                rep.append(abs(s2 / s1 - 1))
                vs.append(abs(s1 / h - 1))
                lines.append(f"{kernel:8s} {level:5s} {' '.join(f'{k}={v}' for k, v in pt.items()):18s} {s1:10.3e} "
                             f"{s2:10.3e} {100 * (s2 / s1 - 1):+6.1f}% {h:10.3e} {100 * (s1 / h - 1):+7.1f}%")
    lines.append(f"run to run: median {100 * statistics.median(rep):.1f} %, max {100 * max(rep):.1f} %; "
                 f"bench vs hand-written: median {100 * statistics.median(vs):.1f} %, max {100 * max(vs):.1f} %")
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        write_new_output(a.out, text, "--out")
    return 0


if __name__ == "__main__":
    sys.exit(main())
