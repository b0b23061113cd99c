"""The loop as compiled: gcc's report line for six kernels whose compiled form differs from the
source (a transposed stencil, a column-wise matrix-vector product, an ijk matrix-matrix product,
a float sum, a ``long`` sum, a short inner loop), the prediction of an earlier checkout (BEFORE,
the model of the loop as written) and of this one, against one measurement on this host
(``loopmodel validate``, this checkout: one pinned thread, warm data, min-of-5), all in cy/it.

Usage (from the repository root; BEFORE: a checkout of the earlier tree with its extension built):
    python benchmarks/compiled_structure.py BEFORE [-m MACHINE] [--before-machine FILE]
(``--before-machine``: the same model for the earlier tree, without the fields it does not know)
"""
import argparse
import datetime
import json
import os
import subprocess
import sys

KERNELS = os.path.abspath("benchmarks/results/compiled-structure/kernels")
#: kernel -> sizes (data in L1 or L2 of the hosts we measure, loops long enough to time)
CASES = {
    "transposed-stencil": {"M": 150, "N": 150},
    "column-matvec": {"M": 150, "N": 150},
    "matmat-ijk": {"N": 64},
    "float-sum": {"N": 16384},
    "long-sum": {"N": 8192},
    "short-inner-triad": {"M": 1000, "NI": 12},
}


def run(tree: str, *args) -> dict:
    out = subprocess.run([sys.executable, "-m", "loopmodel", *args], cwd=tree,
                         env={**os.environ, "PYTHONPATH": f"{tree}/src"}, capture_output=True, text=True, timeout=900)
    if out.returncode != 0:
        raise SystemExit(f"{tree}: loopmodel {' '.join(args)}: {out.stderr.strip()}")
    return json.loads(out.stdout)


def per_it(doc: dict) -> float:
    return doc["ecm"]["selected_T_ECM_cy_per_cl"] / doc["iterations_per_cl"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("before")
    ap.add_argument("-m", "--machine", default="host")
    ap.add_argument("--before-machine", default=None)
    a = ap.parse_args()
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    name = next(ln.split(":", 1)[1].strip() for ln in lscpu.splitlines() if ln.startswith("Model name"))
    print(f"# host: {name}, {os.cpu_count()} CPUs; machine model {a.machine}; "
          f"{datetime.datetime.now(datetime.timezone.utc):%Y-%m-%dT%H:%MZ}")
    print("# predicted = T_ECM at the data location / it per CL of work of the nest analysed; measured = validate's "
          "min of 5 (cy/it); before: the checkout at", a.before)
    rows = []
    for kernel, sizes in CASES.items():
        path = f"{KERNELS}/{kernel}.c"
        d = [x for k, v in sizes.items() for x in ("-D", f"{k}={v}")]
        old = run(a.before, "analyze", path, "-m", a.before_machine or a.machine, *d, "--json")
        new = run(os.getcwd(), "analyze", path, "-m", a.machine, *d, "--json")
        val = run(os.getcwd(), "validate", path, "-m", a.machine, *d, "--repeat", "5", "--json")["points"][0]
        meas = val["measured_min_cy_per_cl"] / new["iterations_per_cl"]
        line = next((n for n in new["notes"] if n.startswith("compiled (")), "no compiled-structure line")
        followed = next((n for n in new["notes"] if n.startswith("analysed as compiled")), "")
        simd = [n for n in new["incore"].get("notes", []) if "fold-left" in n or "optimisation report" in n]
        rows.append((kernel, sizes, per_it(old), old["ecm"]["data_location"], per_it(new),
                     new["ecm"]["data_location"], meas, line, followed, new["incore"]["source"], simd))
    print(f"{'kernel':19} {'sizes':16} | {'before':>7} {'loc':>4} | {'after':>7} {'loc':>4} | {'measured':>8} | "
          f"{'err before':>10} {'err after':>9} | in-core")
    for k, s, po, lo, pn, ln, meas, *_, src, _ in rows:
        sz = " ".join(f"{x}={v}" for x, v in s.items())
        print(f"{k:19} {sz:16} | {po:7.3f} {lo:>4} | {pn:7.3f} {ln:>4} | {meas:8.3f} | {po / meas - 1:+10.1%} "
              f"{pn / meas - 1:+9.1%} | {src}")
    for k, *_, line, followed, _, simd in rows:
        print(f"\n{k}: {line}")
        for extra in ([followed] if followed else []) + simd:
            print(f"  {extra}")


if __name__ == "__main__":
    main()
