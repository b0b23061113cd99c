"""Import time of ``loopmodel`` (the package: public names load on first use), ``loopmodel.api``,
``loopmodel.cli`` (what every command line pays before it parses its arguments), of a whole
``loopmodel --version`` and of a whole ``loopmodel analyze`` (import and analysis).

Run: python benchmarks/import_time.py [--k K] [SRC ...]
Each SRC is a ``src`` folder of a loopmodel checkout (default: this one's); several compare trees
in one run (e.g. a baseline worktree and this one), on one CPU, alternating, so that both see
the same machine. Per tree and case: K fresh interpreters (default 15), the wall time of
``python -c "import X"`` minus that of ``python -c "pass"`` (min-of-K; median and max kept for
the spread), and the cumulative microseconds of the package from ``python -X importtime``
(min of 5).
"""
from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = {
    "import loopmodel": "import loopmodel",
    "import loopmodel.api": "import loopmodel.api",
    "import loopmodel.cli": "import loopmodel.cli",
    "loopmodel --version": "import sys; sys.argv=['loopmodel','--version']; import loopmodel.cli as c; c.main()",
    # a whole analysis: what a user waits for, import included (no per-user cache)
    "loopmodel analyze (whole)": ("import sys, loopmodel.cli as c; c.main(['analyze', 'examples/kernels/triad.c', '-m', "
                                  "'SkylakeSP_Gold-6148', '-D', 'N=1000000', '--incore', 'analytic', '--no-cache'])"),
}


def wall(code: str, src: str) -> float:
    env = {**os.environ, "PYTHONPATH": src, "LOOPMODEL_NO_CACHE": "1"}
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL, check=False, cwd=ROOT)
    return time.perf_counter() - t0


def importtime_us(module: str, src: str) -> int:
    """Cumulative import time (us) of ``module`` from ``-X importtime``."""
    env = {**os.environ, "PYTHONPATH": src}
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", f"import {module}"], env=env,
                         capture_output=True, text=True, check=True).stderr
    line = next(x for x in err.splitlines() if re.search(rf"\|\s*{re.escape(module)}\s*$", x))
    return int(line.split("|")[1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("src", nargs="*", default=[str(ROOT / "src")])
    ap.add_argument("--k", type=int, default=15)
    args = ap.parse_args()
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    times = {(s, c): [] for s in args.src for c in ["pass", *CASES]}
    for _ in range(args.k):  # alternate trees and cases, so that drift hits all alike
        for s in args.src:
            times[(s, "pass")].append(wall("pass", s))
            for case, code in CASES.items():
                times[(s, case)].append(wall(code, s))
    print(f"{sys.version.split()[0]} on {os.uname().machine}, one CPU, {args.k} runs per case (min-of-K)")
    for s in args.src:
        base = min(times[(s, "pass")])
        print(f"\n{s}\n  python -c pass: min {base * 1e3:.1f} ms")
        for case in CASES:
            t = times[(s, case)]
            print(f"  {case:22s} min {(min(t) - base) * 1e3:6.1f} ms  median {(statistics.median(t) - base) * 1e3:6.1f}"
                  f" ms  max {(max(t) - base) * 1e3:6.1f} ms  (minus python -c pass)")
        for module in ("loopmodel", "loopmodel.cli"):
            print(f"  -X importtime {module}: {min(importtime_us(module, s) for _ in range(5))} us (min of 5)")


if __name__ == "__main__":
    main()
