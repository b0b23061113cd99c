"""Speed of the OpenMP coherence model: parsing examples/omp/cg_banded.c and predicting it for
T = 1..16 threads (a made-up 16-thread transition table of 33 sizes), as a user sweeping
thread counts and sizes would. Prints the median of 5 runs of each step.

    python benchmarks/omp_speed.py
"""
from __future__ import annotations

import os
import statistics
import time

from loopmodel.fileio.omp_program import read_omp_program
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.models.coherence_timing import Timing
from loopmodel.models.omp_program import predict_program

HERE = os.path.dirname(os.path.abspath(__file__))
CG = os.path.join(HERE, "..", "examples", "omp", "cg_banded.c")


def table(threads: int = 16) -> CoherenceTable:
    sizes = tuple(int(2 ** (12 + k / 2)) for k in range(33))
    secs = {k: {t: tuple(s / (20e9 / (1 + 0.1 * t)) for s in sizes) for t in range(1, threads + 1)}
            for k in TRANSITION_KEYS}
    return CoherenceTable(sizes, tuple(range(1, threads + 1)), secs)


def timed(fn, runs: int = 5) -> float:
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out)


def main() -> None:
    tm = Timing(table())
    for n in (20000, 2000000):
        parse = timed(lambda: read_omp_program(CG, {"N": n}))
        prog = read_omp_program(CG, {"N": n})
        phases = sum(1 for _ in prog.phases())
        pred = timed(lambda: [predict_program(prog, tm, t) for t in range(1, 17)])
        print(f"cg_banded N={n}: parse {1e3 * parse:.1f} ms; predict {phases} executed phases for T=1..16: "
              f"{1e3 * pred:.1f} ms ({1e3 * pred / 16:.2f} ms per thread count)")


if __name__ == "__main__":
    main()
