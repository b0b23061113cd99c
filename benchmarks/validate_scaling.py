"""Compare predicted and measured multicore scaling, to validate the multicore models.

For each measured host (``benchmarks/results/*``, written by ``measure_scaling.py``) and
kernel (daxpby, triad) this prints, per thread count, the measurement and three
predictions of the machine model built from that host's measured clock and memory
bandwidth (``examples/machines/*.yml``, see ``host_machine_file.py``):

* ``sat``: the saturation rule min(n P1, P_sat) of the model as it is;
* ``cont``: the contention model (p0 of the machine file, 0.5);
* ``cal``: the contention model after calibrating the two free parameters the paper also
  determines from measurement: a memory latency penalty per CL loaded (§3.1, Fig. 1c) so
  that the single-core prediction meets the single-thread measurement, and p0 (least
  squares over all thread counts).

Usage: python benchmarks/validate_scaling.py [--json OUT]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "src"))

from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings  # noqa: E402
from loopmodel.fileio.c_kernel import parse_kernel_file  # noqa: E402
from loopmodel.fileio.machine_files import load_machine  # noqa: E402
from loopmodel.models.scaling import fit_p0, scaling  # noqa: E402

HOSTS = {"device-xeon-16c": "XeonEMR_16vCPU.yml", "host-epyc-2c": "EpycZen4_2vCPU.yml"}


def _analysis(kernel_name, machine):
    k, _ = parse_kernel_file(os.path.join(ROOT, "examples", "kernels", f"{kernel_name}.c"))
    return Analyzer(k, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"N": 100_000_000})


def _calibrated(kernel_name, machine, measured_1):
    """Machine with a memory penalty per loaded CL such that T_ECM(1 core) matches."""
    res = _analysis(kernel_name, machine)
    it = res.traffic.iterations_per_unit
    t_meas = it * machine.clock / measured_1  # cy/CL
    extra = max(0.0, t_meas - res.ecm.T_ECM["MEM"])
    loaded = res.traffic.levels[-1].loads_cl
    links = list(machine.links)
    links[-1] = dataclasses.replace(links[-1], penalty_load=extra / loaded if loaded else 0.0)
    return dataclasses.replace(machine, links=links), extra


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--json")
    a = ap.parse_args()
    out = {}
    for host, mfile in HOSTS.items():
        machine = load_machine(os.path.join(ROOT, "examples", "machines", mfile))
        for kernel in ("daxpby", "triad"):
            path = os.path.join(ROOT, "benchmarks", "results", host, f"{kernel}.json")
            meas = {p["threads"]: p["it_s"] for p in json.load(open(path))["points"]}
            cores = sorted(meas)
            res = _analysis(kernel, machine)
            it = res.traffic.iterations_per_unit
            sat = scaling(res.ecm, machine, cores, it, "saturation")
            cont = scaling(res.ecm, machine, cores, it, "contention")
            cal_m, extra = _calibrated(kernel, machine, meas[1])
            cal_res = _analysis(kernel, cal_m)
            p0, _ = fit_p0(cal_res.ecm, cal_m, meas, it)
            cal = scaling(cal_res.ecm, cal_m, cores, it, "contention", p0)
            print(f"\n{host} {kernel}: T_ECM = {res.ecm.T_ECM['MEM']:.2f} cy/CL, T_Mem = {res.ecm.memory_busy:.2f} "
                  f"cy/CL at {machine.clock / 1e9:.3f} GHz; calibrated penalty {extra:.2f} cy/CL, p0 = {p0:.3f}")
            print(f"{'n':>3} {'measured':>10} {'sat':>10} {'err':>7} {'cont':>10} {'err':>7} {'cal':>10} {'err':>7}  Git/s")
            rows = []
            for i, n in enumerate(cores):
                m = meas[n]
                vals = [sat.points[i].it_per_s, cont.points[i].it_per_s, cal.points[i].it_per_s]
                errs = [v / m - 1 for v in vals]
                rows.append({"threads": n, "measured_it_per_s": m, "saturation_it_per_s": vals[0],
                             "contention_it_per_s": vals[1], "calibrated_it_per_s": vals[2],
                             "errors": errs})
                print(f"{n:>3} {m / 1e9:>10.3f} " + " ".join(f"{v / 1e9:>10.3f} {100 * e:>+6.1f}%"
                                                           for v, e in zip(vals, errs)))
            for j, name in enumerate(("sat", "cont", "cal")):
                mean = sum(abs(r["errors"][j]) for r in rows) / len(rows)
                print(f"    mean |error| {name}: {100 * mean:.1f} %")
            out[f"{host}/{kernel}"] = {"penalty_cy_per_cl": extra, "p0": p0, "rows": rows}
    if a.json:
        with open(a.json, "w") as fh:
            json.dump(out, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
