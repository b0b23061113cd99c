"""Column-wise kernels gcc interchanges: the prediction of the nest as written (a checkout of
loopmodel before it followed the interchange) and of the nest gcc runs (this checkout), against
one measurement on this host (``loopmodel validate``, this checkout), all in cy/it.

Usage (from the repository root; BEFORE: a checkout of the earlier tree with its extension built):
    python benchmarks/interchange_eval.py BEFORE [MACHINE_FILE]
"""
import datetime
import json
import os
import subprocess
import sys

BEFORE = sys.argv[1]
KERNELS = os.path.abspath("benchmarks/results/interchange/kernels")
M = sys.argv[2] if len(sys.argv) > 2 else "examples/machines/EpycZen4_2vCPU.yml"
def run(tree, *args):
    out = subprocess.run([sys.executable, "-m", "loopmodel", *args], cwd=tree,
                         env={**os.environ, "PYTHONPATH": f"{tree}/src"}, capture_output=True, text=True, timeout=900)
    return json.loads(out.stdout)
model = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
name = next(l.split(":", 1)[1].strip() for l in model.splitlines() if l.startswith("Model name"))
print(f"# host: {name}, {os.cpu_count()} CPUs; machine model {M}; {datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ}")
print("# prediction = T_ECM at the data location / it per CL of work of the nest analysed; measured = validate's min of 5 (cy/it)")
print(f"{'kernel':11} {'M=N':>5} | {'as written':>10} {'loc':>4} | {'as run':>7} {'loc':>4} | {'measured':>8} | {'err written':>11} {'err as run':>10}")
for k in ("colstencil", "colcopy"):
    for n in (200, 1000, 3000):
        d = ["-D", f"M={n}", "-D", f"N={n}"]
        old = run(BEFORE, "analyze", f"{KERNELS}/{k}.c", "-m", os.path.abspath(M), *d, "--json")
        new = run(os.getcwd(), "analyze", f"{KERNELS}/{k}.c", "-m", M, *d, "--json")
        val = run(os.getcwd(), "validate", f"{KERNELS}/{k}.c", "-m", M, *d, "--repeat", "5", "--json")["points"][0]
        po = old["ecm"]["selected_T_ECM_cy_per_cl"] / old["iterations_per_cl"]
        pn = new["ecm"]["selected_T_ECM_cy_per_cl"] / new["iterations_per_cl"]
        meas = val["measured_min_cy_per_cl"] / new["iterations_per_cl"]
        print(f"{k:11} {n:5} | {po:10.3f} {old['ecm']['data_location']:>4} | {pn:7.3f} {new['ecm']['data_location']:>4} | "
              f"{meas:8.3f} | {po / meas - 1:+11.1%} {pn / meas - 1:+10.1%}")
