"""Accuracy of a machine model on this host: ECM prediction vs measured single-thread cy/CL.

For each example kernel (daxpy, triad, daxpby, dot, 2d-5pt, 3d-7pt, uxx, matvec; one that does
not analyze is skipped with a note) the sizes are chosen so that the whole data set (the bytes
the loop nest touches, :func:`loopmodel.predictors.layer_conditions.data_set`) is 40 % of the
machine model's L1, L2 and L3 (or of ``--l3``), and for memory max(4 x the last cache,
256 MiB; ``--quick``: 4 x the last cache), at most 40 % of the available memory; every size
constant of a kernel gets the same value. At each size:

* prediction: the analysis ``loopmodel analyze KERNEL -m MACHINE -D ...`` runs
  (:class:`loopmodel.workflows.analysis.Analyzer`, default options: repeated sweeps, layer conditions,
  ``--incore auto``); the predicted cy/CL is T_ECM with the traffic the layer conditions give
  at that size (the last level's entry: every contribution at its size-dependent traffic),
  and the data sit in the level beyond the farthest link that carries traffic;
* measurement: :func:`loopmodel.measure.kernel_bench.measure_kernel` with the machine
  model's compiler flags (the code the in-core analysis saw), pinned to CPU 0, min-of-K
  (roofline-measurement-thesis.txt §3.4) converted to cy/CL with the comparison clock;
* error: predicted / measured (minimum) - 1.

Clock: the machine model's clock and the measured one (:func:`loopmodel.measure.clock.
measure_clock_hz`) are both reported; the clock is measured on the benchmark's CPU before and after the
measurements (the higher of the two: a disturbed measurement only reads lower). By default
(``--clock per-point``) each point's seconds are converted with the mean of two short clock
measurements taken right before and after it, because on a shared virtual host the clock
moves by 10 % within seconds; ``--clock auto`` uses one clock for all points: the machine
model's when the model was measured on this host (its model name names the host's CPU vendor
and its clock is within 5 % of the measured one), else the measured clock (``machine`` and
``measured`` force either). The load average at the start and end says whether other
processes competed for the CPUs.

Usage: python benchmarks/validate_host_model.py MACHINE.yml [--quick] [--out FILE] [--json FILE]
       [--l3 "16 MiB"] [--clock per-point|auto|machine|measured] [--cpu 0]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings  # noqa: E402
from loopmodel.errors import LoopmodelError  # noqa: E402
from loopmodel.fileio.c_kernel import parse_kernel_file, read_kernel_text  # noqa: E402
from loopmodel.fileio.machine_files import load_machine  # noqa: E402
from loopmodel.fileio.output import check_new_output, write_new_output  # noqa: E402
from loopmodel.measure.clock import pinned_clock_hz  # noqa: E402
from loopmodel.workflows.validate import data_level  # noqa: E402
from loopmodel.measure.kernel_bench import measure_kernel  # noqa: E402
from loopmodel.measure.topology import read_topology  # noqa: E402
from loopmodel.predictors.layer_conditions import data_set  # noqa: E402
from loopmodel.units import parse_quantity  # noqa: E402

KERNELS = ("daxpy", "triad", "daxpby", "dot", "2d-5pt", "3d-7pt", "uxx", "matvec")
FILL = 0.4                      # fraction of a cache the data set takes
MEMORY_MIN = 256 * 2 ** 20      # bytes: at least this much for the memory level


def _available_memory() -> int:
    with open("/proc/meminfo", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 2 ** 31


def targets(machine, l3: float | None, quick: bool) -> dict:
    """Level -> data-set bytes to aim at (40 % of each cache, memory as in the module docstring)."""
    out = {}
    for cache in machine.caches:
        size = l3 if (cache.level == "L3" and l3) else cache.size
        out[cache.level] = FILL * size
    last = l3 or machine.caches[-1].size
    mem = 4 * last if quick else max(4 * last, MEMORY_MIN)
    out["MEM"] = min(mem, 0.4 * _available_memory())
    return out


def size_for(kernel, target: float) -> dict:
    """Every size constant set to the largest common value whose data set is at most ``target``
    bytes (at least 8)."""
    total, _ = data_set(kernel)
    names = sorted(kernel.constants)

    def bytes_at(s: int) -> float:
        return float(total.evaluate({n: s for n in names}))

    lo, hi = 8, 16
    while bytes_at(hi) <= target:
        lo, hi = hi, hi * 2
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if bytes_at(mid) <= target else (lo, mid)
    return {n: lo for n in names}


def best_clock_hz(cpu: int, times: int = 3) -> float:
    """The clock of ``cpu`` (the benchmark's): the highest of ``times`` measurements of 20 runs
    each (a disturbed measurement only reads lower)."""
    return max(pinned_clock_hz(cpu, 100_000, 20) for _ in range(times))


def _clock_range(rows) -> str:
    hz = [r["clock_hz"] for r in rows if r.get("clock_hz")]
    return f": {min(hz) / 1e9:.3f} to {max(hz) / 1e9:.3f} GHz" if hz else ""


def load_average() -> str:
    """The 1-minute load average and the CPU count: other processes competing for the CPUs."""
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"


def choose_clock(machine, measured: float, how: str) -> tuple:
    """``(clock in Hz, reason)`` for converting seconds to cycles."""
    topo = read_topology()
    vendor = {"GenuineIntel": "intel", "AuthenticAMD": "amd"}.get(topo.vendor, topo.vendor.lower())
    named = bool(vendor) and vendor in f"{machine.model_name or ''} {machine.name}".lower()
    close = abs(machine.clock / measured - 1) <= 0.05
    if how == "machine" or (how == "auto" and named and close):
        return machine.clock, "machine model's clock" + ("" if how == "machine" else " (model of this host)")
    why = "" if how == "measured" else (
        f" (model not of this host: {'vendor ' + repr(topo.vendor) + ' not in its name' if not named else ''}"
        f"{'; ' if not named and not close else ''}{'clock differs by more than 5 %' if not close else ''})")
    return measured, "measured clock" + why


def run_point(path, analyzer, machine, defines, args) -> dict:
    """Prediction (cy/CL) and measurement (s/it) at one size."""
    res = analyzer.run(defines)
    predicted = res.ecm.T_ECM[list(res.ecm.T_ECM)[-1]] if res.ecm is not None else None
    if predicted is None:
        raise LoopmodelError("no ECM prediction (T_OL unknown)")
    before = pinned_clock_hz(args.cpu) if args.clock == "per-point" else None
    m = measure_kernel(path, defines, machine=machine, machine_file=args.machine, runs=args.runs,
                       min_time_s=args.min_time, cpu=args.cpu, timeout_s=300)
    hz = (before + pinned_clock_hz(args.cpu)) / 2 if before else None
    return {"clock_hz": hz, "defines": defines, "level": data_level(res), "data_set_B": float(data_set(res.kernel)[0].evaluate(defines)),
            "iterations_per_cl": res.traffic.iterations_per_unit, "predicted_cy_per_cl": predicted,
            "ecm": res.ecm.notation(), "measurement": m}


def with_cycles(row: dict, clock: float) -> dict:
    """``row`` with the measured cy/CL (min, median, max) at ``clock`` (Hz) and the error."""
    m = row["measurement"]
    cy = m.cy_per_cl(clock, row["iterations_per_cl"])
    return {**row, "measured_cy_per_cl_min": cy[0], "measured_cy_per_cl_median": cy[1], "measured_cy_per_cl_max": cy[2],
            "cov": m.cov, "error": row["predicted_cy_per_cl"] / cy[0] - 1, "measurement": m.to_dict()}


def measure_all(machine, goal: dict, a) -> tuple:
    """``(rows, notes)``: every kernel at every target level; a kernel that does not analyze
    (or whose measurement fails) is skipped with a note."""
    rows, notes = [], []
    for name in KERNELS:
        path = os.path.join(ROOT, "examples", "kernels", f"{name}.c")
        try:
            kernel, _ = parse_kernel_file(path)
            options = AnalyzerSettings(models=("ECM",), incore="auto", kernel_text=read_kernel_text(path), machine_file=a.machine)
            analyzer = Analyzer(kernel, machine, options)
            for level, target in goal.items():
                row = run_point(path, analyzer, machine, size_for(kernel, target), a)
                rows.append({"kernel": name, "target": level, **row})
                print(f"  {name} {level}: data in {row['level']}, predicted {row['predicted_cy_per_cl']:.2f} cy/CL, "
                      f"measured {row['measurement'].seconds_per_it_min * 1e9:.3f} ns/it", file=sys.stderr)
        except LoopmodelError as exc:
            notes.append(f"{name} skipped: {exc}")
    return rows, notes


def _fmt_bytes(b: float) -> str:
    for unit, f in (("GiB", 2 ** 30), ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= f:
            return f"{b / f:.1f} {unit}"
    return f"{b:.0f} B"


def table(rows: list) -> list:
    head = (f"{'kernel':<8} {'defines':<16} {'target':<6} {'data set':>10} {'level':<5} {'pred':>7} "
            f"{'meas min':>9} {'median':>8} {'cov':>6} {'error':>7}")
    lines = [head, "-" * len(head)]
    for r in rows:
        d = " ".join(f"{k}={v}" for k, v in sorted(r["defines"].items()))
        lines.append(f"{r['kernel']:<8} {d:<16} {r['target']:<6} {_fmt_bytes(r['data_set_B']):>10} {r['level']:<5} "
                     f"{r['predicted_cy_per_cl']:>7.2f} {r['measured_cy_per_cl_min']:>9.2f} "
                     f"{r['measured_cy_per_cl_median']:>8.2f} {100 * r['cov']:>5.1f}% {100 * r['error']:>+6.1f}%")
    lines += ["", "summary per data level (|predicted / measured min - 1|):"]
    for level in dict.fromkeys(r["level"] for r in rows):
        errs = [abs(r["error"]) for r in rows if r["level"] == level]
        lines.append(f"  {level:<4} {len(errs):>2} points: median {100 * statistics.median(errs):6.1f} %, "
                     f"max {100 * max(errs):6.1f} %")
    return lines


def _parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("machine")
    ap.add_argument("--quick", action="store_true", help="10 runs per point instead of 20, memory data set 4x the last cache (no 256 MiB floor)")
    ap.add_argument("--out", help="write the report to this new file")
    ap.add_argument("--json", help="write the rows as JSON to this new file")
    ap.add_argument("--l3", help="L3 size to aim at instead of the machine model's (e.g. '16 MiB')")
    ap.add_argument("--clock", choices=("per-point", "auto", "machine", "measured"), default="per-point",
                    help="seconds -> cycles: the clock measured right around each point (default), or one "
                         "clock for all: the machine model's if of this host (auto), the model's, the measured")
    ap.add_argument("--cpu", type=int, default=0)
    a = ap.parse_args(argv)
    a.runs, a.min_time = (10, 0.002) if a.quick else (20, 0.002)
    a.l3_bytes = parse_quantity(a.l3, "size") if a.l3 else None
    return a


def main(argv=None) -> int:
    a = _parse_args(argv)
    for path, option in ((a.out, "--out"), (a.json, "--json")):
        if path:
            check_new_output(path, option)
    start = time.time()
    machine = load_machine(a.machine)
    load_start, clock_start = load_average(), best_clock_hz(a.cpu)
    goal = targets(machine, a.l3_bytes, a.quick)
    rows, notes = measure_all(machine, goal, a)
    clock_end = best_clock_hz(a.cpu)
    if a.clock == "per-point":
        clock, why = None, "clock measured right before and after each point (per-point)"
        rows = [with_cycles(r, r["clock_hz"]) for r in rows]
    else:
        clock, why = choose_clock(machine, max(clock_start, clock_end), a.clock)
        rows = [with_cycles(r, clock) for r in rows]
    m0 = rows[0]["measurement"] if rows else {"compiler": "?", "flags": []}
    lines = [f"machine model {machine.name} ({a.machine}); host: {read_topology().model_name}",
             f"clock: machine model {machine.clock / 1e9:.3f} GHz, measured on CPU {a.cpu} {clock_start / 1e9:.3f} GHz "
             f"(start) and {clock_end / 1e9:.3f} GHz (end); comparison uses the {why}"
             + (f": {clock / 1e9:.3f} GHz" if clock else _clock_range(rows)),
             f"{load_start} at the start, {load_average()} at the end",
             "data-set targets: " + ", ".join(f"{lv} {_fmt_bytes(b)}" for lv, b in goal.items()),
             f"runs per point {a.runs}, min time per run {a.min_time} s, CPU {a.cpu}, compiled with "
             f"{m0['compiler']} {' '.join(m0['flags'])}", ""]
    lines += table(rows) + [""] + [f"note: {n}" for n in notes] + [f"total time {time.time() - start:.0f} s"]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out:
        write_new_output(a.out, text, "--out")
    if a.json:
        doc = {"machine": a.machine, "clock_machine_hz": machine.clock, "clock_measured_hz": [clock_start, clock_end],
               "clock_used_hz": clock, "rows": rows, "notes": notes}
        write_new_output(a.json, json.dumps(doc, indent=1) + "\n", "--json")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except LoopmodelError as exc:
        print(f"validate_host_model: {exc}", file=sys.stderr)
        sys.exit(2)
