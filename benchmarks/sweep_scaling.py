"""Wall time of ``loopmodel sweep`` studies on local Dask clusters of 1, 2 and 4 worker processes.

Two studies, written to a temporary folder:

* LC: 10^4 points = 2 kernels (daxpy, 2d-5pt with M=500) x 2 machines x 2500 sizes N,
  ``cache_predictor: [lc]``, ``incore: [analytic]``, analyze's default models (LC, ECM, Roofline);
* sim: 500 points = 2 kernels x 2 machines x 125 sizes, ``cache_predictor: [sim]``.

Each is run in this process without Dask (the serial baseline), then on a ``LocalCluster`` of
1, 2 and 4 worker processes (``--workers``; one thread each), min of ``--repeat`` runs (spread = max - min),
the result cache off (:func:`loopmodel.workflows.sweep.run_study` with ``use_cache=False``) so the
figures are compute. ``start`` is the cluster's start-up, ``run`` the study on the running
cluster (tasks sent, results received, table built). Finally each study is run with the
cache twice in a fresh ``LOOPMODEL_CACHE_DIR``: the second run reads every task from the
cache and starts no cluster. The process (and so its workers) is pinned to the CPUs it may
use; on 2 vCPUs, 4 worker processes cannot be faster than 2 (they show that nothing assumes
one process).

    PYTHONPATH=src python benchmarks/sweep_scaling.py [--repeat 3] [--workers 1,2,4] [--studies lc,sim]
        [--json out.json]

Each configuration reports points/s per worker (points / run time / workers).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import loopmodel.workflows.study as st  # noqa: E402
import loopmodel.workflows.sweep as sw  # noqa: E402
import loopmodel.workflows.sweep_dask as sweep_dask  # noqa: E402

KERNELS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "examples", "kernels")
STUDIES = {
    "lc": ("1000:25990:10", "lc"),    # 2500 sizes -> 2 x 2 x 2500 = 10^4 points
    "sim": ("100:2580:20", "sim"),    # 125 sizes -> 500 points
}


def write_study(folder: str, name: str) -> str:
    sizes, predictor = STUDIES[name]
    path = os.path.join(folder, f"{name}.yml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(f"kernels: [{os.path.abspath(KERNELS)}/daxpy.c, {os.path.abspath(KERNELS)}/2d-5pt.c]\n"
                 "machines: [SkylakeSP_Gold-6148, HaswellEP_E5-2695v3]\n"
                 f"defines: {{N: '{sizes}', M: 500}}\n"
                 f"options: {{cache_predictor: [{predictor}], incore: [analytic]}}\n")
    return path


def _spin(n: int) -> float:
    t0 = time.perf_counter()
    s = 0
    for i in range(n):
        s += i
    return time.perf_counter() - t0


def host_parallelism(n: int = 10_000_000) -> float:
    """How much faster 2 processes do 2 pure-Python loops than 1 process does one after the
    other (2.0 on two idle cores; lower where the vCPUs share a core or the host is busy)."""
    from concurrent.futures import ProcessPoolExecutor

    one = min(_spin(n) for _ in range(3))
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(_spin, [n // 10] * 2))  # start both processes
        t0 = time.perf_counter()
        list(pool.map(_spin, [n, n]))
        both = time.perf_counter() - t0
    return 2 * one / both


def run_once(study, workers: int | None, use_cache: bool = False) -> dict:
    """One run: ``workers`` None = in this process. Returns seconds (start, run, total) and stats."""
    t0 = time.perf_counter()
    if workers is None:
        table, stats = sw.run_study(study, None, use_cache=use_cache)
        t1 = t0
    else:
        with sweep_dask.dask_client(workers=workers) as client:
            t1 = time.perf_counter()
            table, stats = sw.run_study(study, client, use_cache=use_cache)
    t2 = time.perf_counter()
    assert stats.failed == 0 and table.n == study.points()
    return {"start_s": t1 - t0, "run_s": t2 - t1, "total_s": t2 - t0, "points": stats.points}


def min_of(study, workers, repeat: int) -> dict:
    runs = [run_once(study, workers) for _ in range(repeat)]
    best = min(runs, key=lambda r: r["total_s"])
    return {**best, "spread_s": max(r["total_s"] for r in runs) - best["total_s"], "runs": len(runs)}


def cache_rerun(study) -> dict:
    """First run (fills a fresh cache) and a re-run, both as the CLI runs them (the cluster is
    started only when a task is not in the cache)."""
    with tempfile.TemporaryDirectory() as cache_dir:
        os.environ["LOOPMODEL_CACHE_DIR"] = cache_dir
        out = {}
        for label in ("first_s", "rerun_s"):
            t0 = time.perf_counter()
            table, stats = sw.run_study(study, lambda: sweep_dask.dask_client(workers=2))
            out[label] = time.perf_counter() - t0
            out[label.replace("_s", "_cached_points")] = stats.cached
        return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3, help="runs per configuration (min reported)")
    ap.add_argument("--studies", default="lc,sim")
    ap.add_argument("--workers", default="1,2,4", help="worker counts of the local clusters (comma-separated)")
    ap.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    a = ap.parse_args()
    cpus = sorted(os.sched_getaffinity(0))
    os.sched_setaffinity(0, cpus)  # the workers inherit it
    results = {"cpus": len(cpus), "host_parallelism_2_processes": host_parallelism()}
    print(f"{len(cpus)} CPUs; 2 processes of pure Python run {results['host_parallelism_2_processes']:.2f}x "
          "as fast as 1 (the most 2 workers can gain here)", flush=True)
    with tempfile.TemporaryDirectory() as folder:
        for name in a.studies.split(","):
            study = st.read_study(write_study(folder, name))
            res = {"points": study.points(), "serial": min_of(study, None, a.repeat)}
            res["worker_counts"] = [int(w) for w in a.workers.split(",")]
            for workers in res["worker_counts"]:
                res[f"workers_{workers}"] = min_of(study, workers, a.repeat)
            res["cache"] = cache_rerun(study)
            results[name] = res
            report(name, res)
    if a.json:
        with open(a.json, "w", encoding="utf-8") as fh:
            json.dump(results, fh, indent=1)
    return 0


def report(name: str, res: dict) -> None:
    base = res["workers_1"]["total_s"]
    print(f"{name}: {res['points']} points; serial (no Dask) {res['serial']['total_s']:.2f} s "
          f"(spread {res['serial']['spread_s']:.2f} s, {res['points'] / res['serial']['total_s']:.0f} points/s)")
    for w in res["worker_counts"]:
        r = res[f"workers_{w}"]
        print(f"  {w} worker(s): total {r['total_s']:.2f} s (start {r['start_s']:.2f} s + run {r['run_s']:.2f} s; "
              f"spread {r['spread_s']:.2f} s), speed-up vs 1 worker {base / r['total_s']:.2f}x "
              f"(run only {res['workers_1']['run_s'] / r['run_s']:.2f}x), "
              f"{res['points'] / r['run_s'] / w:.0f} points/s per worker")
    c = res["cache"]
    print(f"  with the result cache (2 workers): first run {c['first_s']:.2f} s, re-run {c['rerun_s']:.2f} s "
          f"({c['rerun_cached_points']} points from the cache, {c['first_s'] / c['rerun_s']:.0f}x faster)", flush=True)


if __name__ == "__main__":
    sys.exit(main())
