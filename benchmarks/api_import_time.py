"""Import time of ``import loopmodel`` (the Python API's package: public names load lazily).

Run: python benchmarks/api_import_time.py [K]
Measures, in K fresh interpreters each (default 20; pinned to one CPU), the wall time of
``python -c "import loopmodel"`` minus that of ``python -c "pass"`` (min-of-K of each, spread
reported), and from ``python -X importtime`` the cumulative microseconds of ``loopmodel``
itself. Budget: 0.1 s.
"""
import os
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ENV = {**os.environ, "PYTHONPATH": str(ROOT / "src")}


def wall(code: str, k: int) -> list:
    times = []
    for _ in range(k):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=ENV)
        times.append(time.perf_counter() - t0)
    return sorted(times)


def importtime_us() -> int:
    """Cumulative import time of the ``loopmodel`` package (us) from ``-X importtime``."""
    err = subprocess.run([sys.executable, "-X", "importtime", "-c", "import loopmodel"], check=True, env=ENV,
                         capture_output=True, text=True).stderr
    line = next(x for x in err.splitlines() if re.search(r"\|\s*loopmodel\s*$", x))
    return int(line.split("|")[1])


if __name__ == "__main__":
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    k = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    base, imp = wall("pass", k), wall("import loopmodel", k)
    us = min(importtime_us() for _ in range(5))
    print(f"python -c pass:             min {base[0] * 1e3:.1f} ms, median {base[k // 2] * 1e3:.1f} ms, "
          f"max {base[-1] * 1e3:.1f} ms ({k} runs)")
    print(f"python -c 'import loopmodel': min {imp[0] * 1e3:.1f} ms, median {imp[k // 2] * 1e3:.1f} ms, "
          f"max {imp[-1] * 1e3:.1f} ms")
    print(f"import loopmodel: {(imp[0] - base[0]) * 1e3:.1f} ms (difference of the minima); "
          f"-X importtime: {us} us (min of 5); budget 100 ms")
    lazy = "import loopmodel, loopmodel as lm; lm.analyze"
    t = wall(lazy, 5)
    print(f"first use of loopmodel.analyze (imports the library): min {(t[0] - base[0]) * 1e3:.0f} ms")
