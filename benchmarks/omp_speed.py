"""Speed of the OpenMP coherence model on examples/omp/cg_banded.c with a made-up 16-thread
transition table of 33 sizes (on the SkylakeSP_Gold-6148 model, for its in-core figures):

1. one size: parsing the program, and one prediction per thread count (``predict_program``
   for T = 1..16) at N = 2*10^4 and 2*10^6 -- the per-size path; median and min of K runs.
2. a study of 10^4 sizes (N = 10^3 .. 10^7 in steps of 10^3, ``loopmodel omp -D
   N=1000:10000000:1000``), at T = 16 and at T = 1..16, the cases alternated, each run in a
   fresh process (wall and CPU time, peak RSS of that process, sizes/s; min and median of K):

   * after: the size study (``loopmodel.workflows.omp_sizes``: the program read once, the
     in-core analysis once per distinct access pattern, the sizes predicted a block at a time
     with numpy, the line states once per class of sizes);
   * previous (with ``--previous SRC``): the same size study run from another checkout's
     ``src`` directory (e.g. ``git worktree add /tmp/prev <commit>``), for a before/after of a
     change to it in one run;
   * before: the per-size path ``omp -D N=...`` takes at each size (read the program, analyse
     its in-core times, predict every thread count), timed on ``--sample`` sizes spread over the
     range and extrapolated to 10^4 sizes (all of them would take about 8 minutes at T = 16);
     its peak RSS is that of the sample's process (it keeps nothing between sizes).

    python benchmarks/omp_speed.py [--k 5] [--sample 40] [--quick] [--previous SRC] [--studies 16,1:16]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

import yaml

from loopmodel.fileio.defines import sweep
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import coherence_mapping, machine_text
from loopmodel.fileio.omp_program import read_omp_program
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.models.coherence_timing import Timing
from loopmodel.models.omp_program import predict_program
from loopmodel.workflows.omp import OmpOptions, analyse, sizes_workflow

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..")
CG = os.path.join(ROOT, "examples", "omp", "cg_banded.c")
#: the study: N = 10^3 .. 10^7 in steps of 10^3 (10^4 sizes)
STUDY = (1000, 10_000_000, 1000)


def table(threads: int = 16) -> CoherenceTable:
    sizes = tuple(int(2 ** (12 + k / 2)) for k in range(33))
    secs = {k: {t: tuple(s / (20e9 / (1 + 0.1 * t)) for s in sizes) for t in range(1, threads + 1)}
            for k in TRANSITION_KEYS}
    return CoherenceTable(sizes, tuple(range(1, threads + 1)), secs)


def machine_file(folder: str) -> str:
    """SkylakeSP_Gold-6148 with :func:`table` as its coherence section, written to ``folder``."""
    data = yaml.safe_load(open(os.path.join(ROOT, "src", "loopmodel", "machines", "SkylakeSP_Gold-6148.yml")))
    path = os.path.join(folder, "skx-coherence16.yml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(machine_text({**data, "coherence": coherence_mapping(table())}, ["benchmarks/omp_speed.py"]))
    return path


def timed(fn, runs: int = 5) -> tuple:
    """``(median, min)`` seconds of ``runs`` calls of ``fn``."""
    out = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return statistics.median(out), min(out)


def one_size(k: int) -> None:
    tm = Timing(table())
    for n in (20000, 2000000):
        parse = timed(lambda: read_omp_program(CG, {"N": n}), k)
        prog = read_omp_program(CG, {"N": n})
        phases = sum(1 for _ in prog.phases())
        pred = timed(lambda: [predict_program(prog, tm, t) for t in range(1, 17)], k)
        print(f"cg_banded N={n}: parse {1e3 * parse[0]:.1f} ms (min {1e3 * parse[1]:.1f}); predict {phases} "
              f"executed phases for T=1..16: {1e3 * pred[0]:.1f} ms (min {1e3 * pred[1]:.1f}), "
              f"{1e3 * pred[0] / 16:.2f} ms per thread count (min {1e3 * pred[1] / 16:.2f})", flush=True)


def _case(name: str, machine: str, threads: str, sample: int) -> dict:
    """Run one case in this process: ``{"wall_s", "cpu_s", "sizes", "rss_kB"}``."""
    lo, hi, step = STUDY
    t0 = time.perf_counter()
    c0 = time.process_time()
    if name == "after":
        points = sweep([f"N={lo}:{hi}:{step}"], {})
        study = sizes_workflow().prepare(CG, machine, OmpOptions(threads=threads), points)
        count = sum(1 for _ in study.results())
    else:
        model = load_machine(machine)
        ts = list(range(1, 17)) if threads == "1:16" else [int(threads)]
        total = (hi - lo) // step + 1
        ns = [lo + step * round(j * (total - 1) / (sample - 1)) for j in range(sample)]
        for n in ns:
            analyse(read_omp_program(CG, {"N": n}), model, ts, machine_name=machine)
        count = len(ns)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "cpu_s": time.process_time() - c0, "sizes": count,
            "rss_kB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss}


def _run(name: str, machine: str, threads: str, sample: int, previous: str | None) -> dict:
    """One case in a fresh process; ``previous`` the size study from that ``src`` directory."""
    env = dict(os.environ)
    if name == "previous":
        env["PYTHONPATH"] = os.pathsep.join([previous] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, os.path.abspath(__file__), "--case", "after" if name == "previous" else name,
           "--machine", machine, "--threads", threads, "--sample", str(sample)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def study(k: int, sample: int, machine: str, previous: str | None, counts: list) -> None:
    lo, hi, step = STUDY
    total = (hi - lo) // step + 1
    names = ("before",) + (("previous",) if previous else ()) + ("after",)
    for threads in counts:
        runs: dict = {name: [] for name in names}
        for _ in range(k):  # alternated, each in a fresh process
            for name in names:
                runs[name].append(_run(name, machine, threads, sample, previous))
        for name, rs in runs.items():
            wall = [r["wall_s"] / r["sizes"] * total for r in rs]
            cpu = [r["cpu_s"] / r["sizes"] * total for r in rs]
            rss = min(r["rss_kB"] for r in rs) / 1024
            how = f"extrapolated from {rs[0]['sizes']} sizes" if name == "before" else "measured"
            print(f"study of {total} sizes, T={threads}, {name}: wall min {min(wall):.2f} s, median "
                  f"{statistics.median(wall):.2f} s; CPU min {min(cpu):.2f} s ({how}); {total / min(wall):.0f} "
                  f"sizes/s; peak RSS {rss:.0f} MiB (K={k})", flush=True)
        after = min(r["wall_s"] / r["sizes"] for r in runs["after"])
        per_t = 16 if threads == "1:16" else 1
        for name in names[:-1]:
            other = min(r["wall_s"] / r["sizes"] for r in runs[name])
            print(f"study of {total} sizes, T={threads}: {other / after:.1f}x faster than {name}; per prediction "
                  f"(one size, one thread count, in-core analysis included): {name} {1e6 * other / per_t:.0f} us, "
                  f"after {1e6 * after / per_t:.0f} us", flush=True)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--k", type=int, default=5, help="runs per case (min and median over them)")
    ap.add_argument("--sample", type=int, default=40, help="sizes the per-size path is timed on")
    ap.add_argument("--quick", action="store_true", help="one size only (no study)")
    ap.add_argument("--previous", help="src directory of another checkout: its size study as a further case")
    ap.add_argument("--studies", default="16,1:16", help="the studies' thread counts, comma-separated (16, 1:16)")
    ap.add_argument("--case", choices=("before", "after"), help=argparse.SUPPRESS)
    ap.add_argument("--machine", help=argparse.SUPPRESS)
    ap.add_argument("--threads", default="16", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.case:
        print(json.dumps(_case(a.case, a.machine, a.threads, a.sample)))
        return 0
    if a.previous and not os.path.isdir(os.path.join(a.previous, "loopmodel")):
        sys.exit(f"omp_speed: {a.previous} has no loopmodel package (give a checkout's src directory)")
    one_size(a.k)
    if not a.quick:
        with tempfile.TemporaryDirectory() as tmp:
            study(a.k, a.sample, machine_file(tmp), a.previous, a.studies.split(","))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
