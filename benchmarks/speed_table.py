"""Before/after speed table of loopmodel, measured in one run on one machine.

Each tree (a ``src`` folder of a loopmodel checkout: the baseline first, then this one) runs the
same cases, alternating case by case so that both see the same machine state:

* ``warm analyze``: one ``loopmodel analyze`` process of the 3-D long-range stencil on
  IvyBridgeEP_E5-2690v2 (M=130, N=1015; LC, ECM, Roofline; ``--incore auto``, the compiled block
  read from the per-user cache, which one untimed run fills first); min of ``--k`` processes.
* ``analyze in-process``: the same analysis through the Python API (``loopmodel.analyze``) in a
  process that has run it once; min over 20 calls.
* ``sweep 1e4 JSON Lines``: ``analyze 2d-5pt.c -D M=1000 -D N=3:10002:1 -p LC -p ECM --incore
  analytic --json``; wall time and peak RSS (the process's own, ``os.wait4``), output bytes.
* ``sweep 1e5 JSON Lines`` (``--full``): the same, 10^5 points.
* ``sweep 1e4 / 1e6 compact`` (trees that have it): ``--json compact``.
* ``sim analysis`` and the peer: ``--cache-predictor sim -p ECM --incore analytic`` of the 3-D
  long-range stencil on IvyBridgeEP_E5-2690v2 (M=130, N=1015) against ``kerncraft -p ECMData
  --cache-predictor SIM`` on the reference machine file of the same machine (``--peer``; min of 3).

Every process gets a fresh ``LOOPMODEL_CACHE_DIR`` per tree, bytecode is compiled first, and
``PYTHONDONTWRITEBYTECODE`` is unset (a user's installed package has its bytecode).

    python benchmarks/speed_table.py BASE_SRC NEW_SRC [--k 7] [--full] [--peer /tmp/kc-venv/bin/kerncraft]
        [--python /tmp/sv/bin/python] [--out FILE.json]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "examples" / "kernels"
IVB = "IvyBridgeEP_E5-2690v2"
PEER_MACHINE = ROOT.parent / "shared" / "reference-machine-files" / "IvyBridgeEP_E5-2690v2.yml"
WARM = ["analyze", str(KERNELS / "3d-long-range.c"), "-m", IVB, "-D", "M=130", "-D", "N=1015"]
SWEEP = ["analyze", str(KERNELS / "2d-5pt.c"), "-m", IVB, "-D", "M=1000", "-p", "LC", "-p", "ECM",
         "--incore", "analytic"]
SIM = WARM + ["--cache-predictor", "sim", "-p", "ECM", "--incore", "analytic"]
API = ("import time, loopmodel\n"
       "args = dict(kernel={k!r}, machine={m!r}, defines={{'M': 130, 'N': 1015}})\n"
       "loopmodel.analyze(**args)\n"
       "best = min((lambda t: (loopmodel.analyze(**args), time.perf_counter() - t)[1])(time.perf_counter()) "
       "for _ in range(20))\n"
       "print(best)\n")


class Tree:
    """One loopmodel source tree and the environment its processes run in."""

    def __init__(self, src: str, python: str):
        self.src = os.path.abspath(src)
        self.python = python
        self.cache = tempfile.mkdtemp(prefix="loopmodel-speed-")
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        self.env = {**env, "PYTHONPATH": self.src, "LOOPMODEL_CACHE_DIR": self.cache}
        subprocess.run([python, "-m", "compileall", "-q", self.src], check=True, env=self.env,
                       stdout=subprocess.DEVNULL)

    def has_compact(self) -> bool:
        return (Path(self.src) / "loopmodel" / "report" / "sweep_compact.py").exists()

    def command(self, args: list) -> list:
        return [self.python, "-m", "loopmodel", *args]


def timed(cmd: list, env: dict, out=subprocess.DEVNULL) -> tuple:
    """``(wall s, peak RSS MiB)`` of one process (its own resource usage, ``os.wait4``)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=out, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode:
        raise subprocess.CalledProcessError(proc.returncode, cmd)
    return wall, usage.ru_maxrss / 1024


def sweep_case(tree: Tree, points: int, compact: bool) -> dict:
    """A sweep of ``points`` sizes written to a temporary file: wall s, peak RSS MiB, bytes."""
    args = SWEEP + ["-D", f"N=3:{points + 2}:1", "--json"] + (["compact"] if compact else [])
    with tempfile.NamedTemporaryFile("w", suffix=".json") as fh:
        wall, rss = timed(tree.command(args), tree.env, out=fh)
        size = os.path.getsize(fh.name)
    return {"s": wall, "rss_MiB": rss, "bytes": size, "points_s": points / wall}


def best_of(k: int, fn) -> dict:
    """Run ``fn`` ``k`` times: the run with the smallest ``s``, and the spread (max - min)."""
    runs = [fn() for _ in range(k)]
    best = min(runs, key=lambda r: r["s"])
    return {**best, "spread_s": max(r["s"] for r in runs) - best["s"], "k": k}


def cases(args) -> dict:
    """name -> (function of a Tree -> result dict, or None where the tree lacks the feature)."""
    def warm(tree):
        subprocess.run(tree.command(WARM), env=tree.env, stdout=subprocess.DEVNULL, check=True)  # fills the cache
        return best_of(args.k, lambda: dict(zip(("s", "rss_MiB"), timed(tree.command(WARM), tree.env))))

    def api(tree):
        code = API.format(k=str(KERNELS / "3d-long-range.c"), m=IVB)
        out = subprocess.run([tree.python, "-c", code], env=tree.env, capture_output=True, text=True, check=True)
        return {"s": float(out.stdout.split()[-1])}

    def sim(tree):
        return best_of(3, lambda: dict(zip(("s", "rss_MiB"), timed(tree.command(SIM), tree.env))))

    table = {
        "python -c pass": lambda tree: best_of(args.k, lambda: dict(zip(("s", "rss_MiB"), timed(
            [tree.python, "-c", "pass"], tree.env)))),
        "warm analyze (process)": warm,
        "analyze in-process (API)": api,
        "sweep 1e4, --json (JSON Lines)": lambda tree: sweep_case(tree, 10_000, False),
        "sweep 1e4, --json compact": lambda tree: sweep_case(tree, 10_000, True) if tree.has_compact() else None,
        "sweep 1e6, --json compact": lambda tree: sweep_case(tree, 1_000_000, True) if tree.has_compact() else None,
        "sim analysis (process)": sim,
    }
    if args.full:
        table["sweep 1e5, --json (JSON Lines)"] = lambda tree: sweep_case(tree, 100_000, False)
    return table


def peer_sim(kerncraft: str) -> dict:
    """The peer's simulation-based analysis of the same case (min of 3), each run on a fresh copy of
    the kernel (Kerncraft keeps a simulation's result next to the kernel and reads it back later)."""
    def once() -> dict:
        with tempfile.TemporaryDirectory() as tmp:
            kernel = shutil.copy(KERNELS / "3d-long-range.c", tmp)
            cmd = [kerncraft, "-p", "ECMData", "-m", str(PEER_MACHINE), kernel, "-D", "M", "130", "-D", "N", "1015",
                   "--cache-predictor", "SIM"]
            return dict(zip(("s", "rss_MiB"), timed(cmd, dict(os.environ))))
    return best_of(3, once)


def render(results: dict, names: list) -> str:
    lines = [f"{'case':34s}" + "".join(f"{n:>28s}" for n in names)]
    for case, per_tree in results.items():
        cells = []
        for n in names:
            r = per_tree.get(n)
            if r is None:
                cells.append(f"{'-':>28s}")
                continue
            extra = f" {r['rss_MiB']:.0f} MiB" if "rss_MiB" in r and "sweep" in case else ""
            cells.append(f"{r['s']:>16.3f} s{extra:>10s}")
        lines.append(f"{case:34s}" + "".join(cells))
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("trees", nargs="+", help="src folders: the baseline first")
    ap.add_argument("--k", type=int, default=7)
    ap.add_argument("--full", action="store_true", help="also the 10^5-point JSON Lines sweep")
    ap.add_argument("--peer", default=None, help="kerncraft executable for the peer's simulation")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    trees = [Tree(src, args.python) for src in args.trees]
    names = [f"{Path(t.src).parent.name}" for t in trees]
    results = {}
    for case, fn in cases(args).items():
        results[case] = {}
        for name, tree in zip(names, trees):
            results[case][name] = fn(tree)
            print(f"{case} [{name}]: {results[case][name]}", file=sys.stderr, flush=True)
    if args.peer:
        results["peer sim analysis (Kerncraft)"] = {names[0]: peer_sim(args.peer)}
    head = (f"# {platform.node()} {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, "
            f"Python {platform.python_version()}, {time.strftime('%Y-%m-%d %H:%M')}\n")
    print(head + render(results, names))
    if args.out:
        Path(args.out).write_text(json.dumps({"trees": dict(zip(names, args.trees)), "results": results}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
