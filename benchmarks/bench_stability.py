"""Do two ``loopmodel bench`` runs in a row agree, and is a disagreement reported? The same
kernel at the same size measured ``--times`` times one after the other in each mode, the modes
alternating run by run so that all see the same host:

* ``old``: three blocks back to back (``--spread-s 0``: 50 ms pauses), no comparison with an
  earlier run (the cache off: ``LOOPMODEL_NO_CACHE=1``) -- the behaviour before spreading;
* ``spread``: the defaults (blocks whose starts span ``--spread-s``, 0.5 s; each run compared
  with the one before it, through a per-user cache of its own, and measured once more where the
  two differ by more than 3 %);
* ``spread1``, ``spread2``: the same with ``--spread-s 1`` and ``2``;
* ``spread-only`` (the default spread, no comparison with an earlier run) and ``earlier-only``
  (``--spread-s 0``, compared with the run before): each of the two checks alone.

Run: python benchmarks/bench_stability.py [--times 8] [KERNEL.c] [-D N=60000] [--modes old spread]
Reports per mode: the min s/it of each run, the median and largest relative difference of two
runs in a row, how many pairs are within 3 %, how many pairs beyond 3 % the second run warned
of (its verdict ``disagree``), the verdicts and the seconds per run.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODES = {"old": (["--spread-s", "0"], {"LOOPMODEL_NO_CACHE": "1"}), "spread": ([], {}),
         "spread-only": ([], {"LOOPMODEL_NO_CACHE": "1"}), "earlier-only": (["--spread-s", "0"], {}),
         "spread1": (["--spread-s", "1"], {}), "spread2": (["--spread-s", "2"], {})}


def bench(kernel: str, defines: list, args: list, env: dict) -> tuple:
    argv = [sys.executable, "-m", "loopmodel", "bench", kernel, *[f"-D{d}" for d in defines], "--no-cache",
            "--json", *args]
    t0 = time.monotonic()
    out = subprocess.run(argv, capture_output=True, text=True, check=True, cwd=ROOT,
                         env={**os.environ, "PYTHONPATH": str(ROOT / "src"), **env}).stdout
    return json.loads(out)["points"][0]["measurement"], time.monotonic() - t0


def summary(name: str, ms: list, seconds: list, tolerance: float = 0.03) -> None:
    mins = [m["time_min_s_per_it"] for m in ms]
    steps = [abs(b / a - 1) for a, b in zip(mins, mins[1:])]
    beyond = [i + 1 for i, s in enumerate(steps) if s > tolerance]
    warned = [i for i in beyond if ms[i]["stability"]["verdict"] == "disagree"]
    verdicts = [m["stability"]["verdict"] for m in ms]
    print(f"{name}: min s/it " + ", ".join(f"{x:.3e}" for x in mins))
    print(f"    two runs in a row differ by: median {100 * statistics.median(steps):.1f} %, "
          f"max {100 * max(steps):.1f} %; {len(steps) - len(beyond)} of {len(steps)} pairs within "
          f"{100 * tolerance:g} %; all runs within {100 * (max(mins) / min(mins) - 1):.1f} %")
    print(f"    pairs beyond {100 * tolerance:g} % warned of by the second run: {len(warned)} of {len(beyond)}")
    print("    verdicts: " + ", ".join(f"{v} {verdicts.count(v)}" for v in sorted(set(verdicts)))
          + f"; runs per bench: {[m['repetitions'] for m in ms]}; "
          f"seconds per bench: median {statistics.median(seconds):.1f}, max {max(seconds):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("kernel", nargs="?", default="examples/kernels/triad.c")
    ap.add_argument("-D", dest="define", action="append", default=None)
    ap.add_argument("--times", type=int, default=8)
    ap.add_argument("--modes", nargs="+", default=["old", "spread"], choices=sorted(MODES))
    args = ap.parse_args()
    defines = args.define or ["N=60000"]
    runs = {m: ([], []) for m in args.modes}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.times):
            for mode, (ms, secs) in runs.items():
                extra, env = MODES[mode]
                m, s = bench(args.kernel, defines, extra, {"LOOPMODEL_CACHE_DIR": f"{tmp}/{mode}", **env})
                ms.append(m)
                secs.append(s)
    print(f"{args.kernel} {' '.join(defines)}: {args.times} bench runs in a row per mode, alternating")
    for mode, (ms, secs) in runs.items():
        summary(mode, ms, secs)


if __name__ == "__main__":
    main()
