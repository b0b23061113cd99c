"""Write a loopmodel machine file for a measured host, to validate the multicore models.

Takes a template (the micro-architecture's in-core and cache figures, written by hand in
``benchmarks/hosts/*.yml.in``) and the results of ``benchmarks/measure_scaling.py`` on that
host: the measured clock replaces ``clock`` and the measured daxpby/triad bandwidths per
thread count (without write-allocate traffic, GB/s) become ``benchmarks.measurements.MEM``,
from which the memory link (``bandwidth: measured``) takes its saturated bandwidth.

    python benchmarks/host_machine_file.py TEMPLATE RESULTS_DIR OUT.yml
"""
from __future__ import annotations

import json
import os
import sys


def main(template: str, results: str, out: str) -> int:
    if os.path.exists(out):
        sys.exit(f"{out} exists; not overwritten")
    clock = json.load(open(os.path.join(results, "clock.json")))["clock_Hz"]
    meas = {}
    for k in ("daxpby", "triad"):
        doc = json.load(open(os.path.join(results, f"{k}.json")))
        meas[k] = {p["threads"]: p["bandwidth_no_wa_B_s"] for p in doc["points"]}
    cores = sorted(meas["daxpby"])
    text = open(template).read().replace("@CLOCK@", f"{clock / 1e9:.3f} GHz")
    lines = ["benchmarks:", "  kernels:",
             "    daxpby: {read_streams: 2, write_streams: 1, read_write_streams: 1, flops_per_iteration: 3, "
             "element_size: 8 B}",
             "    triad: {read_streams: 2, write_streams: 1, read_write_streams: 0, flops_per_iteration: 2, "
             "element_size: 8 B}",
             "  measurements:", "    MEM:", f"      cores: {cores}"]
    for k in ("daxpby", "triad"):
        lines.append(f"      {k}: [" + ", ".join(f"{meas[k][c] / 1e9:.2f} GB/s" for c in cores) + "]")
    with open(out, "w") as fh:
        fh.write(text.rstrip("\n") + "\n" + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
