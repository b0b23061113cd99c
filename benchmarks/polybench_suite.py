"""PolyBench/C 4.2.1 as shipped, through ``loopmodel analyze``: how many of its 30 kernels are
analysed, and for each one that is not, the one line that says why.

    python benchmarks/polybench_suite.py POLYBENCH_ROOT [-m MACHINE] [--dataset LARGE] [--json OUT]

POLYBENCH_ROOT is an unpacked PolyBench/C 4.2.1 (its files unchanged; not vendored here: its
licence binds users to an indemnity). Each kernel runs as a user would run it:

    loopmodel analyze FILE --function kernel_NAME -I utilities -I KERNELDIR -m MACHINE
        --incore analytic -D n=... (the function's integer parameters at the dataset's sizes)

The sizes are read from the kernel's header (``# ifdef LARGE_DATASET`` block), the parameter
names from the kernel function's signature (PolyBench's convention: parameter ``nj`` is the
size ``NJ``). Prints one row per kernel: nests, total cycles per call and time, or the refusal.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import re
import subprocess
import sys
import time

from loopmodel.fileio.kernel_file import load_kernel
from loopmodel.ir.kernel_source import KernelSource


def dataset_sizes(header: str, dataset: str) -> dict:
    """``NAME -> value`` of the ``#ifdef <dataset>_DATASET`` block of a PolyBench header."""
    text = open(header, encoding="utf-8").read()
    m = re.search(rf"#\s*ifdef {dataset}_DATASET(.*?)#\s*endif", text, re.S)
    return {k: int(v) for k, v in re.findall(r"#\s*define\s+(\w+)\s+(\d+)", m.group(1))} if m else {}


def kernel_call(path: str, dataset: str) -> tuple:
    """``(function, {parameter: size})`` of a PolyBench kernel file."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"void\s+(kernel_\w+)\s*\(([^)]*)\)", text, re.S)
    params = re.findall(r"\bint\s+(\w+)", m.group(2))
    sizes = dataset_sizes(path[:-2] + ".h", dataset)
    return m.group(1), {p: sizes[p.upper()] for p in params if p.upper() in sizes}


def run_one(root: str, path: str, machine: str, dataset: str) -> dict:
    function, sizes = kernel_call(path, dataset)
    cmd = [sys.executable, "-m", "loopmodel", "analyze", os.path.relpath(path, root), "--function", function,
           "-I", "utilities", "-I", os.path.relpath(os.path.dirname(path), root), "-m", machine,
           "--incore", "analytic", "--json"]
    for name, value in sizes.items():
        cmd += ["-D", f"{name}={value}"]
    start = time.perf_counter()
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True)
    row = {"kernel": os.path.basename(path)[:-2], "command": " ".join(cmd[2:]), "seconds": time.perf_counter() - start}
    if proc.returncode != 0:
        row["refusal"] = (proc.stderr.strip().splitlines() or ["(no message)"])[-1]
        return row
    doc = json.loads(proc.stdout)
    if "nests" in doc:
        row.update(nests=len(doc["nests"]), cycles=doc["total_time_per_call_cy"], time_s=doc["total_time_per_call_s"])
        return row
    # one nest: the classic document; its time per call is T_ECM per iteration x the nest's iterations
    source = KernelSource(path, function, (os.path.join(root, "utilities"), os.path.dirname(path)))
    kernel = load_kernel(source, use_cache=False)[0]
    t_ecm = (doc.get("ecm") or {}).get("selected_T_ECM_cy_per_cl")
    cycles = None if t_ecm is None else t_ecm / doc["iterations_per_cl"] * kernel.total_iterations(
        {k: v for k, v in {**sizes, **doc["defines"]}.items() if k in kernel.constants})
    row.update(nests=1, cycles=cycles, time_s=None if cycles is None else cycles / doc["machine"]["clock_Hz"])
    return row


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("root")
    ap.add_argument("-m", "--machine", default="SkylakeSP_Gold-6148")
    ap.add_argument("--dataset", default="LARGE")
    ap.add_argument("--json", help="write the rows to this file (a new file)")
    ap.add_argument("--only", nargs="*", help="these kernels only (names such as gemm jacobi-2d)")
    args = ap.parse_args()
    files = sorted(f for f in glob.glob(os.path.join(args.root, "**", "*.c"), recursive=True)
                   if "utilities" not in f and not f.endswith(".orig.c"))
    if args.only:
        files = [f for f in files if os.path.basename(f)[:-2] in args.only]
    rows = []
    for f in files:
        r = run_one(args.root, f, args.machine, args.dataset)
        rows.append(r)
        if "refusal" in r:
            print(f"{r['kernel']:16s} NOT ANALYSED: {r['refusal']}", flush=True)
        else:
            total = "n/a" if r.get("cycles") is None else f"{r['cycles']:.4g} cy = {r['time_s'] * 1e3:.4g} ms"
            print(f"{r['kernel']:16s} analysed: {r['nests']:2d} nest(s), {total}  ({r['seconds']:.1f} s)", flush=True)
    ok = [r for r in rows if "refusal" not in r]
    print(f"{len(ok)} of {len(rows)} analysed (machine {args.machine}, {args.dataset}_DATASET, --incore analytic)")
    if args.json:
        with open(args.json, "x", encoding="utf-8") as fh:
            json.dump(rows, fh, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
