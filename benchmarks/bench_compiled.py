"""Wall time of a full ECM analysis with the compiled in-core path.

Run: python benchmarks/bench_compiled.py
One `loopmodel analyze examples/kernels/2d-5pt.c -m SandyBridgeEP_E5-2680 -p ECM --incore llvm-mca`
process, cold (empty per-user cache: codegen + gcc + llvm-mca) and warm (cached analysis), median of 5.
Targets: cold <= 1.5 s, warm <= 0.3 s.
"""
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CMD = [sys.executable, "-m", "loopmodel", "analyze", str(ROOT / "examples" / "kernels" / "2d-5pt.c"),
       "-m", "SandyBridgeEP_E5-2680", "-D", "N=10000", "-D", "M=10000", "-p", "ECM", "--incore", "llvm-mca"]


def wall(cold, reps=5):
    cache = tempfile.mkdtemp(prefix="loopmodel-bench-")
    env = {**os.environ, "LOOPMODEL_CACHE_DIR": cache}
    subprocess.run(CMD, check=True, stdout=subprocess.DEVNULL, env=env)  # machine model validated once
    times = []
    for _ in range(reps):
        if cold:
            shutil.rmtree(os.path.join(cache, "incore"), ignore_errors=True)
        t0 = time.perf_counter()
        subprocess.run(CMD, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t0)
    shutil.rmtree(cache, ignore_errors=True)
    return statistics.median(times), min(times)


if __name__ == "__main__":
    c = wall(True)
    w = wall(False)
    print(f"2D 5-pt ECM with llvm-mca, cold: median {c[0]:.3f} s (min {c[1]:.3f} s)  target <= 1.5 s")
    print(f"2D 5-pt ECM with llvm-mca, warm: median {w[0]:.3f} s (min {w[1]:.3f} s)  target <= 0.3 s")
