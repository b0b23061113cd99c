"""Throughput of the compiled cache simulator and wall time of `analyze --cache-predictor sim`.

Run: python benchmarks/bench_cachesim.py
  * trace API: 3-level LRU hierarchy with IvyBridgeEP_E5-2690v2's organisation (L1 64x8, L2 512x8,
    L3 25600x16 sets x ways, 64 B lines), fed a pre-built list of 4 M addresses (5 passes) (C arrays, like the
    old library's list interface): M simulated accesses per second;
  * loop-nest driver: the 3D long-range stencil (M=130, N=1015) as the sim predictor runs it;
  * one `loopmodel analyze ... --cache-predictor sim` process (median of 5).
"""
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


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


if __name__ == "__main__":
    rate, st = trace_throughput()
    print(f"trace API, 3-level LRU, 5 passes over 4 M accesses: {rate:.0f} M accesses/s (target >= 100)  "
          f"L1 hits {st['L1']['hits']} misses {st['L1']['misses']}")
    dt, rate2, info = nest_throughput()
    print(f"loop-nest driver, long-range M=130 N=1015: {dt:.3f} s, {rate2:.0f} M accesses/s, "
          f"{info.simulated_iterations} iterations simulated ({info.warmup_iterations} warm-up, "
          f"{info.measured_iterations} measured)")
    victim = ROOT.parent / "shared" / "reference-machine-files" / "SkylakeSP_Gold-6148.yml"
    if victim.is_file():  # a victim L3: the warm-up fills it (it takes in far more lines than it keeps)
        dt, rate2, info = nest_throughput(str(victim), {"M": 100, "N": 300})
        print(f"loop-nest driver, long-range M=100 N=300, Skylake-SP reference file (victim L3): {dt:.3f} s, "
              f"{rate2:.0f} M accesses/s, {info.simulated_iterations} iterations simulated "
              f"({info.warmup_iterations} warm-up, {info.measured_iterations} measured)")
    med, mn = analyze_wall()
    print(f"loopmodel analyze --cache-predictor sim (long-range): median {med:.3f} s (min {mn:.3f} s)  target <= 1 s")
