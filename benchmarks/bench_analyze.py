"""Wall-clock benchmarks of `loopmodel analyze` (issue #2, must-show 6).

Run: python benchmarks/bench_analyze.py
Measures (median of 5 runs, separate processes, as a user would call it):
  * one analysis of the 3D long-range stencil (LC, ECM, Roofline) on IvyBridgeEP_E5-2690v2,
    cold (empty per-user cache: the machine file is validated with pydantic) and warm
    (validated machine model read from the cache, the normal case);
  * a 1000-point sweep -D N=10:10000:10 of the same kernel.
"""
import os
import shutil
import statistics
import subprocess
import tempfile
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = str(ROOT / "examples" / "kernels" / "3d-long-range.c")
BASE = [sys.executable, "-m", "loopmodel", "analyze", KERNEL, "-m", "IvyBridgeEP_E5-2690v2", "-D", "M=130"]


CACHE = tempfile.mkdtemp(prefix="loopmodel-bench-cache-")
ENV = {**os.environ, "LOOPMODEL_CACHE_DIR": CACHE}


def wall(cmd, reps=5, cold=False):
    times = []
    for _ in range(reps):
        if cold:
            shutil.rmtree(CACHE, ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=ENV)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


if __name__ == "__main__":
    py = wall([sys.executable, "-c", "pass"])
    cold = wall(BASE + ["-D", "N=1015"], cold=True)
    single = wall(BASE + ["-D", "N=1015"])
    sweep = wall(BASE + ["-D", "N=10:10000:10", "--no-progress"], reps=3)
    print(f"python startup alone:           median {py[0]:.3f} s (min {py[1]:.3f} s)")
    print(f"single analysis, cold cache:    median {cold[0]:.3f} s (min {cold[1]:.3f} s)")
    print(f"single analysis (N=1015), warm: median {single[0]:.3f} s (min {single[1]:.3f} s)  target <= 0.3 s")
    print(f"1000-point sweep N=10:10000:10: median {sweep[0]:.3f} s (min {sweep[1]:.3f} s)  target <= 3 s")
    shutil.rmtree(CACHE, ignore_errors=True)
