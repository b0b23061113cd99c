"""loopmodel side by side with Kerncraft 0.8.18 on Kerncraft's reference machine files.

For every reference machine file (/work/shared/reference-machine-files/*.yml, read as
data) and example kernel (examples/kernels/*.c) this compares

(a) the layer-condition data-transfer terms of the ECM model in cy/CL: Kerncraft
    ``-p ECMData --cache-predictor LC`` (its result per hierarchy level, e.g. "L2", is
    the transfer time into that level from the one above, without penalties) against
    loopmodel ``-p ECM --incore analytic`` (its ECM contribution ending in that level,
    e.g. L1L2, busy cycles), at a size whose data are in memory and one whose data fit
    in L2 or L3; flagged where |relative difference| > 2 %;
(b) the in-core times in cy/CL: Kerncraft ``-p ECMCPU -i OSACA --compiler gcc`` T_comp
    and T_RegL1 against loopmodel ``--incore osaca --compiler gcc`` T_OL and T_nOL (both
    compile with the machine file's gcc flags); flagged where > 15 %. AArch64 machines
    are left out of (b): the peer compiles with the host's gcc.

It prints one table (machine, kernel, size, quantity, Kerncraft, loopmodel, difference,
status) and a summary: rows within tolerance among those both tools computed, leaving
out differences listed in DOCUMENTED (evidence-based modelling choices, with reasons).

Kerncraft is slow (sympy): its results are cached in a JSON file (default
/tmp/loopmodel-peer-cache.json) keyed by peer version, model, kernel and machine (name
and content hash) and sizes, so a re-run only re-runs loopmodel. At most ``--jobs``
(default 2) processes run at a time. Kerncraft runs on a copy of the kernel in a
temporary directory (it writes its intermediates next to the kernel file).

Usage (loopmodel from this checkout's src/):
    python benchmarks/compare_peer.py [--quick] [--out FILE]
        [--kerncraft /tmp/kc-venv/bin/kerncraft] [--machines-dir DIR] [--cache FILE]
        [--refresh-peer] [--jobs 2] [--peer-from TABLE]
"""
from __future__ import annotations

import argparse
import fnmatch
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peer_suite import ROOT, ecm_term, format_table, rel_diff, run_loopmodel  # noqa: E402

PEER_VERSION = "0.8.18"
TOL = {"data": 0.02, "incore": 0.15}
MACHINES_DIR = "/work/shared/reference-machine-files"
KERNELS_DIR = os.path.join(ROOT, "examples", "kernels")
QUICK_MACHINES = ("SandyBridgeEP_E5-2680", "SkylakeSP_Gold-6148", "Zen_EPYC-7451")
QUICK_KERNELS = ("2d-5pt", "3d-7pt", "3d-long-range", "triad", "dot")
AARCH64 = ("A64FX", "ARMv8")

#: Per kernel: sizes whose data (all arrays) are in memory (hundreds of MB) and whose
#: data fit in L2 or L3 of every reference machine (300-650 kB).
SIZES = {
    "2d-5pt": {"mem": {"M": 5000, "N": 5000}, "L2/L3": {"M": 200, "N": 200}},
    "3d-7pt": {"mem": {"M": 300, "N": 300}, "L2/L3": {"M": 30, "N": 30}},
    "3d-long-range": {"mem": {"M": 300, "N": 300}, "L2/L3": {"M": 25, "N": 25}},
    "daxpby": {"mem": {"N": 20000000}, "L2/L3": {"N": 25000}},
    "daxpy": {"mem": {"N": 20000000}, "L2/L3": {"N": 25000}},
    "dot": {"mem": {"N": 20000000}, "L2/L3": {"N": 25000}},
    "triad": {"mem": {"N": 20000000}, "L2/L3": {"N": 20000}},
    "matvec": {"mem": {"M": 8000, "N": 8000}, "L2/L3": {"M": 200, "N": 200}},
    "uxx": {"mem": {"N": 300}, "L2/L3": {"N": 20}},
}

#: Differences that are documented modelling choices, not defects:
#: (kernel, machine, size, quantity) patterns (fnmatch, "*" for any) -> reason.
_DATA_SET = ("whole-data-set condition: loopmodel counts the bytes the nest touches (the stencil "
             "radius leaves the outer planes of the written and coefficient arrays untouched: 203 kB "
             "at M=N=25), Kerncraft every declared array at full size (375 kB > 256 kB L2); the "
             "cache simulation agrees with loopmodel (L2-L3 0.2 cy/CL)")
_ALIAS = ("the code differs, not the analyzers: Kerncraft passes the arrays as plain pointers, "
          "so gcc needs more run-time alias checks than its limit (vect-max-version-for-alias-"
          "checks) and leaves the long-range loop scalar; loopmodel passes them as restrict "
          "pointers because the kernel declares distinct arrays (Kerncraft's own machine files "
          "use icc with -fno-alias for the same reason), and gcc vectorizes it")
DOCUMENTED: dict = {
    ("3d-long-range", "SandyBridgeEP_E5-2680", "L2/L3", "T_L2L3"): _DATA_SET,
    ("3d-long-range", "*", "mem", "T_*"): _ALIAS,
}


@dataclass(frozen=True)
class Job:
    """One comparison point: kind "data" (a) or "incore" (b), kernel and machine names,
    size label and sizes."""

    kind: str
    kernel: str
    machine: str
    size: str
    defines: tuple

    def kernel_path(self, kernels_dir):
        return os.path.join(kernels_dir, self.kernel + ".c")

    def machine_path(self, machines_dir):
        return os.path.join(machines_dir, self.machine + ".yml")


def jobs_for(machines, kernels) -> list:
    """Every (a) job at both sizes and one (b) job per kernel and x86 machine (in-core
    times do not depend on the sizes)."""
    jobs = []
    for m in machines:
        for k in kernels:
            for label, sizes in SIZES[k].items():
                jobs.append(Job("data", k, m, label, tuple(sorted(sizes.items()))))
            if not m.startswith(AARCH64):
                jobs.append(Job("incore", k, m, "mem", tuple(sorted(SIZES[k]["mem"].items()))))
    return jobs


def _sha(path) -> str:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()[:12]


def cache_key(job: Job, kernels_dir, machines_dir) -> str:
    """Peer version, model, kernel and machine (name and content hash) and sizes."""
    defines = ",".join(f"{k}={v}" for k, v in job.defines)
    return "|".join([PEER_VERSION, job.kind, job.kernel, _sha(job.kernel_path(kernels_dir)),
                     job.machine, _sha(job.machine_path(machines_dir)), defines])


# ---------------------------------------------------------------- running the two tools

def _message(text: str, tmp: str) -> str:
    """The line that says what went wrong (the last error line, else the last line)."""
    lines = [ln.strip() for ln in text.replace(tmp + os.sep, "").splitlines() if ln.strip()]
    errs = [ln for ln in lines if "Error" in ln or "failed" in ln]
    return ((errs or lines or ["no output"])[-1])[:160]


def peer_command(job: Job, kerncraft: str, kernel: str, machine: str, out: str) -> list:
    cmd = [kerncraft, "-m", machine]
    if job.kind == "data":
        cmd += ["-p", "ECMData", "--cache-predictor", "LC"]
    else:
        cmd += ["-p", "ECMCPU", "-i", "OSACA", "--compiler", "gcc", "--unit", "cy/CL"]
    for name, value in job.defines:
        cmd += ["-D", name, str(value)]
    return cmd + ["--json", out, kernel]


def run_peer(job: Job, kerncraft: str, kernels_dir: str, machines_dir: str,
             timeout: float = 900.0) -> dict:
    """Kerncraft's result for ``job``: {"terms": [[level, cy/CL], ...]} (a) or
    {"T_comp": cy/CL, "T_RegL1": cy/CL} (b); {"error": line} if it failed ("transient":
    True for a time-out, which is not cached)."""
    with tempfile.TemporaryDirectory(prefix="kc-peer-") as tmp:
        kernel = os.path.join(tmp, job.kernel + ".c")
        shutil.copy(job.kernel_path(kernels_dir), kernel)
        out = os.path.join(tmp, "result.json")
        cmd = peer_command(job, kerncraft, kernel, job.machine_path(machines_dir), out)
        try:
            p = subprocess.run(cmd, cwd=tmp, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            return {"error": f"timed out after {timeout:.0f} s", "transient": True}
        except OSError as e:  # no such kerncraft
            return {"error": f"cannot run {kerncraft}: {e.strerror}", "transient": True}
        if p.returncode != 0 or not os.path.exists(out):
            return {"error": _message(p.stderr + "\n" + p.stdout, tmp)}
        with open(out) as f:
            results = next(iter(json.load(f).values()))
    if job.kind == "data":
        return {"terms": [[str(lvl), float(cy)] for lvl, cy in results["cycles"]]}
    return {"T_comp": float(results["T_comp"]), "T_RegL1": float(results["T_RegL1"])}


def fetch_peer(jobs, a, kernels_dir) -> dict:
    """Kerncraft results per job: from the cache file, else run (``a.jobs`` at a time)
    and written back to the cache after each."""
    cache = {}
    if os.path.exists(a.cache) and not a.refresh_peer:
        with open(a.cache) as f:
            cache = json.load(f)
    keys = {job: cache_key(job, kernels_dir, a.machines_dir) for job in jobs}
    todo = [job for job in jobs if keys[job] not in cache]
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        futures = {pool.submit(run_peer, job, a.kerncraft, kernels_dir, a.machines_dir): job
                   for job in todo}
        for n, fut in enumerate(as_completed(futures), 1):
            job, res = futures[fut], fut.result()
            print(f"kerncraft {n}/{len(todo)}: {job.kind} {job.kernel} {job.machine} "
                  f"{job.size}: {res.get('error', 'ok')}", file=sys.stderr)
            if res.get("transient"):
                continue
            cache[keys[job]] = res
            with open(a.cache + ".tmp", "w") as f:
                json.dump(cache, f, indent=1, sort_keys=True)
            os.replace(a.cache + ".tmp", a.cache)
    return {job: cache.get(keys[job], {"error": "not run (time-out or no kerncraft)"})
            for job in jobs}


def run_lm(job: Job, kernels_dir: str, machines_dir: str):
    """loopmodel's Outcome for ``job`` (ECM with analytic in-core for (a), OSACA for (b))."""
    incore = ["--incore", "analytic"] if job.kind == "data" else ["--incore", "osaca",
                                                                  "--compiler", "gcc"]
    defines = [t for name, value in job.defines for t in ("-D", f"{name}={value}")]
    return run_loopmodel(job.kernel_path(kernels_dir), job.machine_path(machines_dir),
                         ["-p", "ECM", *incore, *defines])


# ---------------------------------------------------------------- table and summary

def documented(job: Job, quantity: str):
    """The reason DOCUMENTED gives for this row's difference, or None."""
    row = (job.kernel, job.machine, job.size, quantity)
    for key, reason in DOCUMENTED.items():
        if all(fnmatch.fnmatchcase(v, pattern) for v, pattern in zip(row, key)):
            return reason
    return None


PART = {"data": "a", "incore": "b"}
HEADER = ("part", "machine", "kernel", "size", "quantity [cy/CL]", "Kerncraft", "loopmodel",
          "diff", "status")


def compare(job: Job, quantity: str, peer_value: float, get, out) -> tuple:
    """One row (see HEADER); diff is (loopmodel - Kerncraft) / |Kerncraft|."""
    head = (PART[job.kind], job.machine, job.kernel, job.size, quantity, peer_value)
    if out.rc != 0 or out.doc is None:
        return head + ("", "", f"loopmodel error: {out.error}")
    try:
        value = get(out)
    except (KeyError, IndexError, TypeError, ValueError) as e:
        return head + ("", "", f"loopmodel error: no {quantity} in its JSON ({e})")
    d = 0.0 if abs(value - peer_value) <= 1e-9 else rel_diff(value, peer_value)
    diff = "n/a (peer 0)" if abs(d) == float("inf") else f"{100 * d:+.1f} %"
    status = "ok" if abs(d) <= TOL[job.kind] else "FLAG"
    documented_ = status == "FLAG" and documented(job, quantity)
    return head + (value, diff, "documented (see below)" if documented_ else status)


def rows_for(job: Job, peer: dict, out) -> list:
    """Rows of one job: the data terms the peer reports per level (a), T_OL/T_nOL (b)."""
    if "error" in peer:
        what = "ECM data terms" if job.kind == "data" else "T_OL, T_nOL"
        return [(PART[job.kind], job.machine, job.kernel, job.size, what, "", "", "",
                 f"peer error: {peer['error']}")]
    if job.kind == "incore":
        return [compare(job, "T_OL (peer T_comp)", peer["T_comp"],
                        lambda o: o.doc["incore"]["T_OL_cy_per_cl"], out),
                compare(job, "T_nOL (peer T_RegL1)", peer["T_RegL1"],
                        lambda o: o.doc["incore"]["T_nOL_cy_per_cl"], out)]
    rows, upper = [], "L1"
    for level, cycles in peer["terms"]:
        rows.append(compare(job, f"T_{upper}{level}", cycles, ecm_term(level), out))
        upper = level
    return rows


def summary_lines(rows) -> list:
    """Per part: rows within tolerance among those compared (documented ones left out)."""
    lines = []
    for part, label in (("a", "(a) LC data terms, 2 %"), ("b", "(b) in-core T_OL/T_nOL, 15 %")):
        st = [r[-1].split(":")[0].split(" (")[0] for r in rows if r[0] == part]
        n_ok, n_flag = st.count("ok"), st.count("FLAG")
        pct = f" ({100 * n_ok / (n_ok + n_flag):.0f} %)" if n_ok + n_flag else ""
        lines.append(f"{label}: {n_ok} of {n_ok + n_flag} compared within tolerance{pct}; "
                     f"{n_flag} flagged, {st.count('documented')} documented choices left "
                     f"out, {st.count('peer error')} peer errors, "
                     f"{st.count('loopmodel error')} loopmodel errors")
    return lines


def report(rows, quick: bool) -> str:
    head = [f"loopmodel vs Kerncraft {PEER_VERSION} on Kerncraft's reference machine files"
            + (" (--quick subset)" if quick else ""),
            "(a) Kerncraft -p ECMData --cache-predictor LC vs loopmodel -p ECM --incore "
            "analytic, flag > 2 %",
            "(b) Kerncraft -p ECMCPU -i OSACA --compiler gcc vs loopmodel --incore osaca "
            "--compiler gcc, flag > 15 %",
            "sizes: " + "; ".join(f"{k} mem {_d(v['mem'])}, L2/L3 {_d(v['L2/L3'])}"
                                  for k, v in SIZES.items()), ""]
    docs = [f"  {' '.join(k)}: {v}" for k, v in DOCUMENTED.items()] or ["  (none)"]
    return "\n".join(head + [format_table(HEADER, rows), "", "Documented differences:"]
                     + docs + [""] + summary_lines(rows)) + "\n"


def _d(sizes: dict) -> str:
    return ",".join(f"{k}={v}" for k, v in sizes.items())


def peer_from_table(path: str) -> dict:
    """Kerncraft's figures per job, read back from a table this script wrote (``--out``): the
    peer's numbers do not change with loopmodel, so a re-run needs no Kerncraft. Rows the peer
    failed on are left out."""
    peer: dict = {}
    with open(path) as f:
        for line in f:
            cols = [c.strip() for c in line.split("|")]
            if len(cols) < 9 or cols[0] not in ("a", "b") or not cols[5]:
                continue
            part, machine, kernel, size, quantity, value = cols[:6]
            kind = "data" if part == "a" else "incore"
            job = Job(kind, kernel, machine, size, tuple(sorted(SIZES[kernel][size].items())))
            got = peer.setdefault(job, {"terms": []} if kind == "data" else {})
            if kind == "incore":
                got["T_comp" if quantity.startswith("T_OL") else "T_RegL1"] = float(value)
            else:  # T_<upper><level>, in order from L1
                upper = got["terms"][-1][0] if got["terms"] else "L1"
                got["terms"].append((quantity[2 + len(upper):], float(value)))
    return peer


def select(names, wanted, what: str):
    missing = [w for w in wanted if w not in names]
    if missing:
        raise SystemExit(f"compare_peer: no {what} {', '.join(missing)}")
    return list(wanted)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true",
                    help=f"{len(QUICK_MACHINES)} machines x {len(QUICK_KERNELS)} kernels")
    ap.add_argument("--kerncraft", default="/tmp/kc-venv/bin/kerncraft")
    ap.add_argument("--machines-dir", default=MACHINES_DIR)
    ap.add_argument("--cache", default="/tmp/loopmodel-peer-cache.json")
    ap.add_argument("--refresh-peer", action="store_true", help="ignore cached peer results")
    ap.add_argument("--jobs", type=int, default=2, choices=(1, 2))
    ap.add_argument("--out", help="also write the table to this file")
    ap.add_argument("--peer-from", metavar="TABLE",
                    help="take Kerncraft's figures from a table written by --out (no Kerncraft run)")
    a = ap.parse_args(argv)
    machines = sorted(os.path.basename(p)[:-4] for p in glob.glob(
        os.path.join(a.machines_dir, "*.yml")))
    kernels = sorted(k for k in SIZES if os.path.exists(os.path.join(KERNELS_DIR, k + ".c")))
    if a.quick:
        machines = select(machines, QUICK_MACHINES, "reference machine file")
        kernels = select(kernels, QUICK_KERNELS, "example kernel")
    if not machines:
        print(f"compare_peer: no machine files in {a.machines_dir}", file=sys.stderr)
        return 2
    if a.peer_from:
        peer = peer_from_table(a.peer_from)
        jobs = list(peer)
    else:
        jobs = jobs_for(machines, kernels)
        peer = fetch_peer(jobs, a, KERNELS_DIR)
    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        outs = list(pool.map(lambda j: run_lm(j, KERNELS_DIR, a.machines_dir), jobs))
    rows = [r for job, out in zip(jobs, outs) for r in rows_for(job, peer[job], out)]
    text = report(rows, a.quick)
    print(text, end="")
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
