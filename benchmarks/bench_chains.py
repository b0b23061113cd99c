"""Parse time of kernels with chained temporaries (loop-carried dependency chains).

Each kernel carries a dependency ``a[i] = f(a[i-1])`` through ``n`` temporaries, each used
twice by the next one (``t1 = a[i-1]*s; t2 = t1*t1 + t1; t3 = t2*t2 + t2; ...``): 2^(n-1)
paths from ``a[i-1]`` to ``a[i]``. Enumerating the paths doubles the time with every
temporary; the longest path over the dependency graph grows with the graph's size.

Every size is parsed in its own interpreter with a time limit, so the script can measure
an implementation that enumerates paths (point ``--src`` at its ``src`` folder) without
waiting for it; a size over the limit prints ``> LIMIT s``.

Usage: python benchmarks/bench_chains.py [--src DIR] [--limit SECONDS] [N ...]
       (default sizes 18 24 40 100, limit 60 s, --src: this checkout's src)
"""
from __future__ import annotations

import argparse
import os
import pathlib
import subprocess
import sys

_CHILD = r"""
import sys, time
from loopmodel.fileio.c_kernel import parse_kernel
n = int(sys.argv[1])
body = ["t1 = a[i-1]*s;"] + [f"t{k} = t{k-1}*t{k-1} + t{k-1};" for k in range(2, n + 1)] + [f"a[i] = t{n};"]
text = ("double a[N];\ndouble s, " + ", ".join(f"t{k}" for k in range(1, n + 1)) + ";\n"
        + "for (int i = 1; i < N; ++i) {\n  " + "\n  ".join(body) + "\n}\n")
t0 = time.perf_counter()
k, _ = parse_kernel(text)
dt = time.perf_counter() - t0
print(f"{dt:.4f} {len(k.recurrences)}")
"""


def measure(n: int, src: str, limit: float) -> str:
    """Seconds to parse the ``n``-temporary kernel (best of 3 below 1 s), or ``> limit s``."""
    env = dict(os.environ, PYTHONPATH=src)
    best = None
    for _ in range(3):
        try:
            p = subprocess.run([sys.executable, "-c", _CHILD, str(n)], capture_output=True, text=True,
                               timeout=limit, env=env, check=True)
        except subprocess.TimeoutExpired:
            return f"> {limit:g} s"
        dt, recs = p.stdout.split()
        best = min(best or float(dt), float(dt))
        if best > 1.0:
            break
    return f"{best:.4f} s ({recs} recurrence)"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sizes", nargs="*", type=int, default=[18, 24, 40, 100])
    parser.add_argument("--src", default=str(pathlib.Path(__file__).resolve().parents[1] / "src"))
    parser.add_argument("--limit", type=float, default=60.0)
    args = parser.parse_args()
    print(f"loopmodel from {args.src}")
    for n in args.sizes:
        print(f"{n:4d} temporaries: {measure(n, args.src, args.limit)}", flush=True)


if __name__ == "__main__":
    main()
