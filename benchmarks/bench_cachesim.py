"""Throughput of the compiled cache simulator and wall time of `analyze --cache-predictor sim`,
and the simulation-based analysis side by side with the peer tool's (Kerncraft with pycachesim).

Run: python benchmarks/bench_cachesim.py [--peer-k 3] [--no-peer | --peer-only] [--tree NAME=SRC ...]
                                         [--kerncraft PATH] [--machines-dir DIR]
  * trace API: 3-level LRU hierarchy with IvyBridgeEP_E5-2690v2's organisation (L1 64x8, L2 512x8,
    L3 25600x16 sets x ways, 64 B lines), fed a pre-built list of 4 M addresses (5 passes) (C arrays, like the
    old library's list interface): M simulated accesses per second;
  * loop-nest driver: the 3D long-range stencil (M=130, N=1015) as the sim predictor runs it;
  * one `loopmodel analyze ... --cache-predictor sim` process (median of 5);
  * the peer table (PEER_CASES: kernels at sizes in memory on Ivy Bridge, Skylake-SP with its victim L3
    and Zen): per case, `loopmodel analyze -p ECM --incore analytic --cache-predictor sim` (3 K times)
    and `kerncraft -p ECMData --cache-predictor SIM` (K times; on the reference machine file, each
    time on a fresh copy of the kernel in a temporary folder: it writes its intermediates, the
    simulation's result among them, next to the kernel and reads them back in a later run),
    alternately: the least wall and CPU (user + system) time of each and their ratios (peer /
    loopmodel); then the simulation alone (SimulationPredictor.predict in a fresh interpreter, least
    of K): its CPU time, the accesses it accounts for per second (inner iterations the runs account
    for, jumped ones included, x accesses per iteration) and the share of the iterations
    simulated access by access (the rest jumped over by fast-forwards, RunOptions.fast_forward).
    The loopmodel processes run this interpreter with this environment, on this interpreter's
    ``loopmodel``, or with ``--tree NAME=SRC`` (repeated) on each tree's ``src`` folder in turn
    (PYTHONPATH=SRC; its extension built in place), alternately with each other and the peer in
    every round, the simulation alone in a fresh interpreter per tree: a before/after comparison
    in one run, e.g. ``--peer-only --peer-k 5 --tree before=/tmp/base/src --tree after=src``.
"""
import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
KERNCRAFT = "/tmp/kc-venv/bin/kerncraft"
MACHINES_DIR = ROOT.parent / "shared" / "reference-machine-files"
#: loopmodel processes per peer process in the peer table (they are short: their least time is noisier)
LOOPMODEL_RUNS = 3
#: (kernel, machine, sizes): data sets in memory; the machine is built in (loopmodel) and a
#: reference machine file of the same name (the peer)
PEER_CASES = (
    ("3d-long-range", "IvyBridgeEP_E5-2690v2", {"M": 130, "N": 1015}),
    ("3d-long-range", "SkylakeSP_Gold-6148", {"M": 130, "N": 1015}),
    ("2d-5pt", "SkylakeSP_Gold-6148", {"M": 5000, "N": 5000}),
    ("3d-long-range", "Zen_EPYC-7451", {"M": 130, "N": 1015}),
    ("2d-5pt", "Zen_EPYC-7451", {"M": 5000, "N": 5000}),
    ("3d-long-range", "SkylakeSP_Gold-6148", {"M": 300, "N": 300}),
)


def trace_throughput(n=4_000_000, passes=5, reps=3):
    from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec

    levels = [LevelSpec("L1", 64, 8), LevelSpec("L2", 512, 8), LevelSpec("L3", 25600, 16, kind="inclusive")]
    h = Hierarchy(levels)
    # 3D 7-point-like stream: 7 loads at row/plane offsets and one store, N = 500, 8-byte elements
    N = 500
    offs = [0, 8, -8, N * 8, -N * 8, N * N * 8, -N * N * 8]
    base_a, base_b = 1 << 40, (1 << 40) + (1 << 31)
    per_it = len(offs) + 1
    start = N * N + N + 1
    its = range(start, start + n // per_it)
    addr_list, kind_list = [], []
    for it in its:
        addr_list.extend(base_a + it * 8 + o for o in offs)
        addr_list.append(base_b + it * 8)
        kind_list.extend((0,) * len(offs) + (1,))
    m = len(addr_list)
    packed = h.pack_trace(addr_list, kind_list, [8] * m)
    best = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(passes):
            h.trace(packed)
        best.append(time.perf_counter() - t0)
    return m * passes / min(best) / 1e6, h.stats()


def nest_throughput(machine="IvyBridgeEP_E5-2690v2", defines=None):
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.predictors.simulation import SimulationPredictor

    k, _ = parse_kernel_file(str(ROOT / "examples" / "kernels" / "3d-long-range.c"))
    m = load_machine(machine)
    p = SimulationPredictor(k)
    t0 = time.perf_counter()
    tp, info = p.predict(m, defines or {"M": 130, "N": 1015})
    dt = time.perf_counter() - t0
    acc = info.simulated_iterations * (len(k.reads) + len(k.writes))
    return dt, acc / dt / 1e6, info


def analyze_wall(reps=5):
    env = {**os.environ, "LOOPMODEL_CACHE_DIR": tempfile.mkdtemp()}
    cmd = [sys.executable, "-m", "loopmodel", "analyze", str(ROOT / "examples" / "kernels" / "3d-long-range.c"),
           "-m", "IvyBridgeEP_E5-2690v2", "-D", "M=130", "-D", "N=1015", "--cache-predictor", "sim"]
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)  # fill the machine cache
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, env=env)
        times.append(time.perf_counter() - t0)
    return statistics.median(times), min(times)


def child_times(cmd, cwd=None, env=None):
    """Run ``cmd`` to its end: (wall s, CPU s: user + system of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def simulation_alone(kernel, machine, defines, reps):
    """The simulation predictor alone, in this process (least of ``reps``): (CPU seconds of this
    process, inner iterations simulated, of them jumped over, accesses per iteration)."""
    from loopmodel.cachesim import hierarchy
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.predictors.simulation import SimulationPredictor

    k, _ = parse_kernel_file(str(ROOT / "examples" / "kernels" / f"{kernel}.c"))
    m = load_machine(machine)
    runs = []
    run = hierarchy.Hierarchy.run

    def recording(self, nest, options):  # the driver's own record of what it jumped over
        res = run(self, nest, options)
        runs.append(res)
        return res

    hierarchy.Hierarchy.run = recording
    try:
        best = float("inf")
        for _ in range(reps):
            runs.clear()
            t0 = time.process_time()
            SimulationPredictor(k).predict(m, defines)
            best = min(best, time.process_time() - t0)
    finally:
        hierarchy.Hierarchy.run = run
    jumped = sum(getattr(r, "jumped_it", 0) for r in runs)
    simulated = sum(r.simulated_it for r in runs)
    return best, simulated, jumped, len(k.reads) + len(k.writes)


def simulation_alone_in(tree, kernel, machine, defines, reps):
    """:func:`simulation_alone` in a fresh interpreter on ``tree`` (a ``src`` folder; None: this
    process's ``loopmodel``): (seconds, M accesses per second, share of iterations simulated)."""
    sizes = ",".join(f"{n}={v}" for n, v in defines.items())
    env = {**os.environ, "PYTHONPATH": tree} if tree else None
    out = subprocess.run([sys.executable, __file__, "--sim-alone", kernel, machine, sizes, "--peer-k", str(reps)],
                         check=True, capture_output=True, text=True, env=env).stdout
    sim, its, jumped, per_it = json.loads(out.splitlines()[-1])
    return sim, its * per_it / sim / 1e6, 1 - jumped / its


def peer_table(k, kerncraft, machines_dir, trees):
    """Per PEER_CASES case: loopmodel processes of every tree (``trees``: name -> ``src`` folder, or
    None for this interpreter's ``loopmodel``) and the peer's, alternately, k rounds; then the
    simulation alone per tree."""
    caches = {name: tempfile.mkdtemp(prefix="loopmodel-bench-cache-") for name in trees}
    envs = {name: {**os.environ, "LOOPMODEL_CACHE_DIR": caches[name], **({"PYTHONPATH": src} if src else {})}
            for name, src in trees.items()}
    print(f"peer: {kerncraft} (-p ECMData --cache-predictor SIM), least of {k}; loopmodel: {sys.executable} "
          f"(-p ECM --incore analytic --cache-predictor sim), least of {LOOPMODEL_RUNS * k}; times in s, "
          "CPU = user + system; ratio = peer / loopmodel")
    for name, src in trees.items():
        print(f"  {name}: {src or 'this interpreter'}")
    head = "".join(f" {name + ' wall/CPU':>14s}  {'ratio':>10s}" for name in trees)
    tail = "".join(f" {name[:7] + ' sim':>11s} {'M acc/s':>7s} {'simd':>4s}" for name in trees)
    print(f"{'case':50s} {'peer wall/CPU':>14s}{head}{tail}")
    for kernel, machine, defines in PEER_CASES:
        src = ROOT / "examples" / "kernels" / f"{kernel}.c"
        ours = [sys.executable, "-m", "loopmodel", "analyze", str(src), "-m", machine, "-p", "ECM",
                "--incore", "analytic", "--cache-predictor", "sim"] + \
            [a for n, v in defines.items() for a in ("-D", f"{n}={v}")]
        for env in envs.values():
            subprocess.run(ours, check=True, stdout=subprocess.DEVNULL, env=env)  # fills the machine cache
        lm, kc = {name: [] for name in trees}, []
        peer = [kerncraft, "-p", "ECMData", "-m", str(Path(machines_dir) / f"{machine}.yml"), f"{kernel}.c",
                "--cache-predictor", "SIM"] + [a for n, v in defines.items() for a in ("-D", n, str(v))]
        for _ in range(k):
            for name, env in envs.items():
                lm[name] += [child_times(ours, env=env) for _ in range(LOOPMODEL_RUNS)]
            # a fresh copy each time: the peer keeps its simulation's result next to the kernel and a
            # second run in the same folder only reads it back
            with tempfile.TemporaryDirectory(prefix="kc-bench-") as tmp:
                shutil.copy(src, tmp)
                kc.append(child_times(peer, cwd=tmp))
        pw, pc = min(t[0] for t in kc), min(t[1] for t in kc)
        row = f"{kernel} {machine} " + " ".join(f"{n}={v}" for n, v in defines.items())
        row = f"{row:50s} {pw:6.2f}/{pc:6.2f} "
        for name in trees:
            lw, lc = min(t[0] for t in lm[name]), min(t[1] for t in lm[name])
            row += f" {lw:7.3f}/{lc:6.3f}  {pw / lw:4.1f}/{pc / lc:4.1f}x"
        for name, src_dir in trees.items():
            sim, rate, share = simulation_alone_in(src_dir, kernel, machine, defines, k)
            row += f" {sim:11.3f} {rate:7.0f} {share:4.0%}"
        print(row, flush=True)
    for cache in caches.values():
        shutil.rmtree(cache, ignore_errors=True)


def parse_trees(specs):
    """``NAME=SRC`` options into {name: src folder}; none given: {"loopmodel": None} (this
    interpreter's ``loopmodel``). Raises SystemExit on a malformed option or a missing folder."""
    if not specs:
        return {"loopmodel": None}
    trees = {}
    for spec in specs:
        name, sep, src = spec.partition("=")
        if not sep or not name or not (Path(src) / "loopmodel").is_dir():
            raise SystemExit(f"--tree {spec}: expected NAME=SRC with SRC/loopmodel a folder")
        trees[name] = src
    return trees


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peer-k", type=int, default=3, help="runs of each process per peer case (least taken)")
    ap.add_argument("--no-peer", action="store_true", help="leave out the peer table")
    ap.add_argument("--peer-only", action="store_true", help="only the peer table")
    ap.add_argument("--tree", action="append", metavar="NAME=SRC",
                    help="a loopmodel tree's src folder for the peer table (repeat: alternated in one run)")
    ap.add_argument("--kerncraft", default=KERNCRAFT)
    ap.add_argument("--machines-dir", default=str(MACHINES_DIR), help="the peer's reference machine files")
    ap.add_argument("--sim-alone", nargs=3, metavar=("KERNEL", "MACHINE", "SIZES"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.sim_alone:  # the child of simulation_alone_in: one JSON line
        kernel, machine, sizes = a.sim_alone
        defines = {n: int(v) for n, _, v in (s.partition("=") for s in sizes.split(","))}
        print(json.dumps(simulation_alone(kernel, machine, defines, a.peer_k)))
        return
    trees = parse_trees(a.tree)
    if not a.peer_only:
        driver_lines(a.machines_dir)
    if a.no_peer:
        return
    if not (os.access(a.kerncraft, os.X_OK) and Path(a.machines_dir).is_dir()):
        print(f"peer table left out: no {a.kerncraft} or no {a.machines_dir}")
        return
    peer_table(a.peer_k, a.kerncraft, a.machines_dir, trees)


def driver_lines(machines_dir):
    """The trace API's and the loop-nest driver's throughput and one analyze process (this tree)."""
    rate, st = trace_throughput()
    print(f"trace API, 3-level LRU, 5 passes over 4 M accesses: {rate:.0f} M accesses/s (target >= 100)  "
          f"L1 hits {st['L1']['hits']} misses {st['L1']['misses']}")
    dt, rate2, info = nest_throughput()
    print(f"loop-nest driver, long-range M=130 N=1015: {dt:.3f} s, {rate2:.0f} M accesses/s, "
          f"{info.simulated_iterations} iterations simulated ({info.warmup_iterations} warm-up, "
          f"{info.measured_iterations} measured)")
    victim = Path(machines_dir) / "SkylakeSP_Gold-6148.yml"
    if victim.is_file():  # a victim L3: the warm-up fills it (it takes in far more lines than it keeps)
        dt, rate2, info = nest_throughput(str(victim), {"M": 100, "N": 300})
        print(f"loop-nest driver, long-range M=100 N=300, Skylake-SP reference file (victim L3): {dt:.3f} s, "
              f"{rate2:.0f} M accesses/s, {info.simulated_iterations} iterations simulated "
              f"({info.warmup_iterations} warm-up, {info.measured_iterations} measured)")
    med, mn = analyze_wall()
    print(f"loopmodel analyze --cache-predictor sim (long-range): median {med:.3f} s (min {mn:.3f} s)  target <= 1 s")


if __name__ == "__main__":
    main()
