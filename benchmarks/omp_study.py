"""Predicted vs measured OpenMP programs on this host (benchmark-based-coherence-model.txt §V):

* ``dot``: the paper's dot-product study (Figs. 5-7): x and y initialised by thread 0
  (``examples/omp/dot_thread0.c``) or by the computing threads (first touch,
  ``examples/omp/dot_firsttouch.c``), vector sizes from L1 to memory, every thread count; the
  dot phase predicted vs measured, error per point and the median |error|.
* ``krylov``: the CG iteration of ``examples/omp/cg_banded.c``: time per iteration predicted vs
  measured for every thread count and a few sizes.

Needs a host machine model with a coherence section (``loopmodel machine probe --coherence``).

    python benchmarks/omp_study.py dot [-m host] [--threads 1:2] [--out FILE.json]
    python benchmarks/omp_study.py krylov [-m host] [--sizes 20000,200000,2000000]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys

from loopmodel.fileio.defines import count_list
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.omp_program import read_omp_program
from loopmodel.models.omp_program import measured_iterations
from loopmodel.workflows.omp import analyse as analyse_omp

HERE = os.path.dirname(os.path.abspath(__file__))
EXAMPLES = os.path.join(HERE, "..", "examples", "omp")
# bytes per vector: 4 KiB .. 256 MiB, two points per octave
DOT_SIZES = [int(2 ** (12 + k / 2)) // 64 * 64 for k in range(0, 33)]


def dot_rows(machine, name, threads, sizes, min_time):
    rows = []
    for variant in ("dot_thread0", "dot_firsttouch"):
        path = os.path.join(EXAMPLES, variant + ".c")
        for size in sizes:
            n = size // 8
            prog = read_omp_program(path, {"N": n})
            res = analyse_omp(prog, machine, threads, machine_name=name, measure=True, min_time_s=min_time)
            for r in res:
                dot = len(r.prediction.phases) - 1
                p, m = r.prediction.phases[dot], r.measured.phases[dot]
                rows.append({"variant": variant, "bytes_per_vector": size, "threads": r.threads,
                             "predicted_s": p.seconds, "measured_s": m.seconds, "spread": m.spread,
                             "error": p.seconds / m.seconds - 1,
                             "dominant": p.transitions[0].transition if p.transitions else ""})
                print(f"{variant:15s} {size:>10d} B T={r.threads}  predicted {p.seconds:.3e} s  "
                      f"measured {m.seconds:.3e} s (spread {100 * m.spread:.0f} %)  "
                      f"error {100 * rows[-1]['error']:+6.1f} %  {rows[-1]['dominant']}", flush=True)
    return rows


def krylov_rows(machine, name, threads, sizes, min_time):
    rows = []
    path = os.path.join(EXAMPLES, "cg_banded.c")
    for n in sizes:
        prog = read_omp_program(path, {"N": n})
        for r in analyse_omp(prog, machine, threads, machine_name=name, measure=True, min_time_s=min_time):
            pred = r.prediction.repeats[0].seconds
            meas = measured_iterations(prog, r.measured)[0]
            rows.append({"N": n, "threads": r.threads, "predicted_s_per_iteration": list(pred),
                         "measured_s_per_iteration": list(meas),
                         "error_last_iteration": pred[-1] / meas[-1] - 1})
            print(f"N={n:>9d} T={r.threads}  per iteration predicted "
                  + ", ".join(f"{x:.3e}" for x in pred) + " s; measured " + ", ".join(f"{x:.3e}" for x in meas)
                  + f" s; error (last) {100 * rows[-1]['error_last_iteration']:+.1f} %", flush=True)
    return rows


def summary(rows, keys, err):
    groups = {}
    for r in rows:
        groups.setdefault(tuple(r[k] for k in keys), []).append(abs(r[err]))
    for k, v in groups.items():
        print(f"{k}: {len(v)} points, median |error| {100 * statistics.median(v):.1f} %, max {100 * max(v):.1f} %")
    allv = [abs(r[err]) for r in rows]
    print(f"all: {len(allv)} points, median |error| {100 * statistics.median(allv):.1f} %")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("study", choices=("dot", "krylov"))
    ap.add_argument("-m", "--machine", default="host")
    ap.add_argument("--threads", default=None)
    ap.add_argument("--sizes", default=None, help="dot: bytes per vector; krylov: N (comma list)")
    ap.add_argument("--min-time", type=float, default=0.2)
    ap.add_argument("--out", help="JSON file for the rows (must not exist)")
    a = ap.parse_args(argv)
    if a.out and os.path.exists(a.out):
        sys.exit(f"omp_study: {a.out} exists; not overwriting it")
    machine = load_machine(a.machine)
    top = machine.coherence.threads[-1]
    threads = count_list(a.threads, "--threads") if a.threads else list(range(1, top + 1))
    if a.study == "dot":
        sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else DOT_SIZES
        rows = dot_rows(machine, a.machine, threads, sizes, a.min_time)
        summary(rows, ("variant", "threads"), "error")
    else:
        sizes = [int(s) for s in a.sizes.split(",")] if a.sizes else [20000, 200000, 2000000]
        rows = krylov_rows(machine, a.machine, threads, sizes, a.min_time)
        summary(rows, ("threads",), "error_last_iteration")
    if a.out:
        with open(a.out, "x", encoding="utf-8") as fh:
            json.dump({"study": a.study, "machine": a.machine, "rows": rows}, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
