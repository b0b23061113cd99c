"""Wall-clock benchmarks of `loopmodel analyze` (issue #2, must-show 6).

Run: python benchmarks/bench_analyze.py
Measures (median of 5 runs, separate processes, as a user would call it):
  * one analysis of the 3D long-range stencil (LC, ECM, Roofline) on IvyBridgeEP_E5-2690v2;
  * a 1000-point sweep -D N=10:10000:10 of the same kernel.
"""
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNEL = str(ROOT / "examples" / "kernels" / "3d-long-range.c")
BASE = [sys.executable, "-m", "loopmodel.cli", "analyze", KERNEL, "-m", "IvyBridgeEP_E5-2690v2", "-D", "M=130"]


def wall(cmd, reps=5):
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


if __name__ == "__main__":
    py = wall([sys.executable, "-c", "pass"])
    single = wall(BASE + ["-D", "N=1015"])
    sweep = wall(BASE + ["-D", "N=10:10000:10", "--no-progress"], reps=3)
    print(f"python startup alone:           median {py[0]:.3f} s (min {py[1]:.3f} s)")
    print(f"single analysis (N=1015):       median {single[0]:.3f} s (min {single[1]:.3f} s)  target <= 0.3 s")
    print(f"1000-point sweep N=10:10000:10: median {sweep[0]:.3f} s (min {sweep[1]:.3f} s)  target <= 3 s")
