"""The example kernels with their arrays and scalars named after the generated program's old
locals (``q t r p run set el cpu seconds ...``), analysed with ``--incore llvm-mca``: one row per
kernel with the names it got and the ECM line (or the one-line error).

Usage: python benchmarks/harness_names.py [--src DIR] [--machine NAME]
  --src: the src folder of the loopmodel to run (another checkout's, for a before/after table).
"""
from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "src")]


def main(argv=None) -> int:
    from test_codegen_names import HOSTILE, renamed

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--src", default=os.path.join(ROOT, "src"))
    ap.add_argument("--machine", default="SkylakeSP_Gold-6148")
    args = ap.parse_args(argv)
    from loopmodel.fileio.c_kernel import parse_c
    kernels = os.path.join(ROOT, "examples", "kernels")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(args.src))
    with tempfile.TemporaryDirectory(prefix="harness-names-") as tmp:
        for name in sorted(f for f in os.listdir(kernels) if f.endswith(".c")):
            text = open(os.path.join(kernels, name), encoding="utf-8").read()
            k = parse_c(text, name).kernel
            own = list(k.arrays) + [s for s in k.scalars if s not in k.loop_indices]
            others = set(re.findall(r"[A-Za-z_]\w*", text)) - set(own)
            new = [w for w in HOSTILE if w not in others][:len(own)]
            path = os.path.join(tmp, name)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(renamed(text, own, new))
            sizes = [x for c in sorted(k.constants) for x in ("-D", f"{c}=1000")]
            p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", path, "-m", args.machine, *sizes,
                                "-p", "ECM", "--incore", "llvm-mca"], capture_output=True, text=True, env=env,
                               cwd=tmp, timeout=300)
            lines = (p.stdout + p.stderr).splitlines()
            ecm = next((ln.strip() for ln in lines if ln.strip().startswith("{") and "||" in ln),
                       lines[-1].strip() if lines else "")
            names = ", ".join(f"{a}->{b}" for a, b in zip(own, new))
            print(f"{name:18s} | exit {p.returncode} | {names:40s} | {ecm.replace(tmp, '<tmp>')[:140]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
