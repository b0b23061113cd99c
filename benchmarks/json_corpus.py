"""``analyze --json`` of every example kernel on every bundled machine, to a folder.

Run it before and after a change and compare the folders (``diff -r``): a change that
must not move a number leaves every file byte-identical.

Usage: ``python benchmarks/json_corpus.py OUT_DIR [--incore analytic] [--sim]``.
"""
from __future__ import annotations

import argparse
import glob
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = {"M": "100", "N": "1000", "L": "50"}
#: this checkout's package, whatever is installed
ENV = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--incore", default="analytic")
    ap.add_argument("--sim", action="store_true", help="also -P sim")
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    kernels = sorted(glob.glob(os.path.join(ROOT, "examples", "kernels", "*")))
    machines = sorted(glob.glob(os.path.join(ROOT, "src", "loopmodel", "machines", "*.yml"))
                      + glob.glob(os.path.join(ROOT, "examples", "machines", "*.yml")))
    for k in kernels:
        text = open(k, encoding="utf-8").read()
        defines = [a for n, v in SIZES.items() if n in text for a in ("-D", f"{n}={v}")]
        for m in machines:
            for pred in ("lc", "sim") if args.sim else ("lc",):
                name = f"{os.path.basename(k)}--{os.path.basename(m)}--{pred}--{args.incore}.json"
                cmd = [sys.executable, "-m", "loopmodel", "analyze", os.path.relpath(k, ROOT),
                       "-m", os.path.relpath(m, ROOT), *defines, "--json",
                       "--incore", args.incore, "-P", pred]
                p = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=ENV)
                with open(os.path.join(args.out, name), "w", encoding="utf-8") as fh:
                    fh.write(f"exit {p.returncode}\n{p.stdout}\n--stderr--\n{p.stderr.replace(ROOT, '<root>')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
