"""Speed check for CI: loopmodel's operations against a reference workload measured in the same
job, compared with the ratios recorded in benchmarks/speed_reference.json; fails on a 2x regression.

Run:    python benchmarks/speed_check.py [--k K] [--only NAME ...] [--reference FILE]
Record: python benchmarks/speed_check.py --record   (on the machine the ratios stand for; with
        --only, only those cases' entries are replaced)

Each case is timed min-of-K (K fresh processes for a command line; K calls after one warm-up for
an in-process call), the rounds interleaved over the cases so that a drift of the machine's speed
hits all alike. The reference does not depend on loopmodel's code: a fresh interpreter that
imports a few standard modules (``python -c "import argparse, dataclasses, json, pickle"``: start-up
and unmarshalling, what a command line pays first) plus a fixed pure-Python loop in this process
(:func:`calibration_loop`: bytecode, dicts, floats, what the models do). A case's ratio is its
time over the reference's; a case whose ratio exceeds ``LIMIT`` times its recorded ratio fails,
one line each naming the ratios, and the script exits 1. A case without a recorded ratio fails too
(record it). The per-user cache is a temporary folder: a warm-up run fills it, so "warm" means
kernel, machine model and compiled in-core analysis read back from the cache, as on a user's
second run. Sources are byte-compiled first and ``PYTHONDONTWRITEBYTECODE`` is left out of the
children's environment, as an installed package runs.

Cases (add one to :data:`CASES`: a name, a description and a timer, with :func:`command` for a
command line or :func:`in_process` for a call; then record it with ``--record --only NAME``).
"""
from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
REFERENCE = ROOT / "benchmarks" / "speed_reference.json"
#: a case fails when its ratio to the reference exceeds this many times the recorded ratio
LIMIT = 2.0
KERNEL = str(ROOT / "examples" / "kernels" / "3d-long-range.c")
ANALYZE = ["analyze", KERNEL, "-m", "IvyBridgeEP_E5-2690v2", "-D", "M=130"]
#: the interpreter start of the reference: standard modules only
REFERENCE_START = "import argparse, dataclasses, json, pickle"


def child_env(cache_dir: str) -> dict:
    """The environment of the timed processes: the temporary per-user cache, bytecode read
    (``PYTHONDONTWRITEBYTECODE`` left out), and this checkout's ``src`` on the path where
    ``import loopmodel`` finds no package (:func:`package_dir`)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "LOOPMODEL_NO_CACHE")}
    env["LOOPMODEL_CACHE_DIR"] = cache_dir
    if str(ROOT / "src") in sys.path and "PYTHONPATH" not in env:
        env["PYTHONPATH"] = str(ROOT / "src")
    return env


def package_dir() -> str:
    """The folder of the loopmodel this interpreter imports (installed, editable, or through
    ``PYTHONPATH``: to time a checkout's tree, set ``PYTHONPATH=src``), this checkout's ``src``
    put on the path where it finds none; the same for the timed processes (:func:`child_env`)."""
    code = "import loopmodel; print(loopmodel.__path__[0])"
    probe = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    if probe.returncode != 0:
        sys.path.insert(0, str(ROOT / "src"))
        return str(ROOT / "src" / "loopmodel")
    return probe.stdout.strip()


def command(*args: str, cold: bool = False):
    """A timer of the fresh process ``python -m loopmodel ARGS`` (output discarded); ``cold``: with
    an empty per-user cache of its own (machine file validated, kernel parsed, nothing read back).

    Raises:
        RuntimeError: the command fails (its standard error's last line).
    """
    def run(env: dict) -> float:
        own = tempfile.mkdtemp(prefix="loopmodel-speed-cold-") if cold else None
        try:
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, "-m", "loopmodel", *args], cwd=ROOT, text=True,
                                  env={**env, "LOOPMODEL_CACHE_DIR": own} if own else env,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            elapsed = time.perf_counter() - t0
        finally:
            if own:
                shutil.rmtree(own, ignore_errors=True)
        if proc.returncode != 0:
            raise RuntimeError(f"loopmodel {' '.join(args)}: exit {proc.returncode}: "
                               f"{(proc.stderr.strip().splitlines() or [''])[-1]}")
        return elapsed
    return run


def python_code(code: str):
    """A timer of the fresh process ``python -c CODE``."""
    def run(env: dict) -> float:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, check=True)
        return time.perf_counter() - t0
    return run


def in_process(call):
    """A timer of ``call()`` in this process (the cache folder set as the children's); the first
    call of a round of timings is a warm-up (imports, caches), made by :func:`measure`."""
    def run(env: dict) -> float:
        before = os.environ.get("LOOPMODEL_CACHE_DIR")
        os.environ["LOOPMODEL_CACHE_DIR"] = env["LOOPMODEL_CACHE_DIR"]
        try:
            t0 = time.perf_counter()
            call()
            return time.perf_counter() - t0
        finally:
            if before is None:
                del os.environ["LOOPMODEL_CACHE_DIR"]
            else:
                os.environ["LOOPMODEL_CACHE_DIR"] = before
    return run


def api_analyze() -> None:
    """One analysis through the Python API (``loopmodel.analyze``), defaults as the command line's
    (the package is imported by the warm-up call)."""
    import loopmodel

    loopmodel.analyze(KERNEL, "IvyBridgeEP_E5-2690v2", {"M": 130, "N": 1015}).to_dict()


def calibration_loop(n: int = 200_000) -> float:
    """A fixed pure-Python workload (no loopmodel code): dict and list traffic, float arithmetic
    and string formatting; about 0.05 s on the 2-vCPU guest the ratios were recorded on. Returns a checksum."""
    acc, table = 0.0, {}
    for i in range(n):
        key = i % 97
        table[key] = table.get(key, 0.0) + (i * 0.5) / (key + 1.0)
        if i % 1000 == 0:
            acc += float(f"{table[key]:.6g}") + len([k for k in table if k % 7 == 0])
    return acc + sum(table.values())


@dataclass(frozen=True)
class Case:
    """One timed operation: ``timer(env) -> seconds`` (:func:`command`, :func:`in_process`),
    run ``k`` times (None: the ``--k`` of the run); the min is compared."""

    name: str
    what: str
    timer: object
    k: int | None = None


#: the operations checked; a new one needs its ratio recorded (--record --only NAME)
CASES = (
    Case("import-loopmodel", "python -c 'import loopmodel' (public names load on first use)",
         python_code("import loopmodel")),
    Case("version", "loopmodel --version", command("--version")),
    Case("analyze-warm", "loopmodel analyze 3d-long-range (LC, ECM, Roofline; --incore auto), warm cache",
         command(*ANALYZE, "-D", "N=1015")),
    Case("analyze-warm-analytic", "the same with --incore analytic",
         command(*ANALYZE, "-D", "N=1015", "--incore", "analytic")),
    Case("analyze-warm-json", "the same (--incore auto) with --json", command(*ANALYZE, "-D", "N=1015", "--json")),
    Case("analyze-cold-analytic", "analyze --incore analytic with an empty cache (file validation, parsing)",
         command(*ANALYZE, "-D", "N=1015", "--incore", "analytic", cold=True), k=5),
    Case("analyze-sim", "analyze -p ECM --incore analytic --cache-predictor sim (the simulator's warm-up and window)",
         command(*ANALYZE, "-D", "N=1015", "-p", "ECM", "--incore", "analytic", "--cache-predictor", "sim"), k=5),
    Case("analyze-api", "loopmodel.analyze(...) in process (--incore auto), after a warm-up call",
         in_process(api_analyze)),
    Case("sweep-1000-analytic-json", "analyze -D N=10:10000:10 --incore analytic --json (1000 points)",
         command(*ANALYZE, "-D", "N=10:10000:10", "--incore", "analytic", "--json"), k=3),
    Case("sweep-1e6-compact", "analyze 2d-5pt -D M=1000 -D N=3:1000002:1 -p LC -p ECM --incore analytic --json "
         "compact (10^6 points, piece by piece)",
         command("analyze", str(ROOT / "examples" / "kernels" / "2d-5pt.c"), "-m", "IvyBridgeEP_E5-2690v2", "-D",
                 "M=1000", "-D", "N=3:1000002:1", "-p", "LC", "-p", "ECM", "--incore", "analytic", "--json",
                 "compact"), k=3),
)


def measure(cases, k: int, env: dict) -> tuple:
    """``(reference seconds, {case: seconds})``, each min-of-K over interleaved rounds, after one
    warm-up run of every case (which fills the cache)."""
    start, loop, times = [], [], {c.name: [] for c in cases}
    for c in cases:
        c.timer(env)
    for r in range(k):
        start.append(python_code(REFERENCE_START)(env))
        t0 = time.perf_counter()
        calibration_loop()
        loop.append(time.perf_counter() - t0)
        for c in cases:
            if r < (c.k or k):
                times[c.name].append(c.timer(env))
    return min(start) + min(loop), {name: min(t) for name, t in times.items()}


def regressions(ratios: dict, recorded: dict, limit: float = LIMIT) -> list:
    """One line per case whose ratio exceeds ``limit`` times its recorded one, or has none."""
    out = []
    for name, ratio in ratios.items():
        ref = recorded.get(name, {}).get("ratio")
        if ref is None:
            out.append(f"speed_check: {name}: ratio {ratio:.3f} x the reference, none recorded "
                       f"(python benchmarks/speed_check.py --record --only {name})")
        elif ratio > limit * ref:
            out.append(f"speed_check: {name}: ratio {ratio:.3f} x the reference, recorded {ref:.3f}: "
                       f"{ratio / ref:.2f} x slower (limit {limit:g} x)")
    return out


def record(path: Path, ref_s: float, times: dict, ratios: dict) -> None:
    """Write (or update) the recorded ratios in ``path``."""
    data = json.loads(path.read_text()) if path.exists() else {"cases": {}}
    data["recorded_on"] = (f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}, "
                           f"{time.strftime('%Y-%m-%d')}")
    data["reference_s"] = round(ref_s, 4)
    for name in times:
        data["cases"][name] = {"ratio": round(ratios[name], 4), "seconds": round(times[name], 4)}
    path.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--k", type=int, default=7, help="runs per case (min-of-K; default 7)")
    ap.add_argument("--only", nargs="+", metavar="NAME", choices=[c.name for c in CASES], help="these cases only")
    ap.add_argument("--reference", type=Path, default=REFERENCE, help="the recorded ratios (JSON)")
    ap.add_argument("--record", action="store_true", help="record the ratios instead of checking them")
    args = ap.parse_args(argv)
    cases = [c for c in CASES if not args.only or c.name in args.only]
    package = package_dir()
    compileall.compile_dir(package, quiet=1)
    cache_dir = tempfile.mkdtemp(prefix="loopmodel-speed-check-")
    try:
        ref_s, times = measure(cases, args.k, child_env(cache_dir))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    ratios = {name: t / ref_s for name, t in times.items()}
    recorded = json.loads(args.reference.read_text())["cases"] if args.reference.exists() else {}
    print(f"loopmodel from {package}; reference (python -c '{REFERENCE_START}' + calibration loop): "
          f"{ref_s:.3f} s, min-of-{args.k}")
    for c in cases:
        ref = recorded.get(c.name, {}).get("ratio")
        print(f"  {c.name:26s} {times[c.name]:7.3f} s  ratio {ratios[c.name]:6.3f}"
              + (f"  recorded {ref:6.3f}" if ref is not None else "  (not recorded)") + f"  {c.what}")
    if args.record:
        record(args.reference, ref_s, times, ratios)
        print(f"recorded in {args.reference}")
        return 0
    bad = regressions(ratios, recorded)
    for line in bad:
        print(line)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
