"""Every command on every bundled machine model: a table of model x command, each cell 'works'
(with what it printed that matters) or the one line the command gave.

    python benchmarks/machine_commands.py [--out FILE.md] [--models A,B]

Runs the real command line (``python -m loopmodel.cli``) on the bundled kernel
examples/kernels/triad.c (N = 10^7, data in memory) and, for ``omp``, on
examples/omp/dot_thread0.c; ``app`` on examples/pcg/pcg.yml; ``codegen`` compiles nothing.
The measuring commands (``bench``, ``validate``, ``measure``, ``roofline``) measure this host
and are left out: they take the host's own model (``machine probe``).
"""
from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TRIAD = str(ROOT / "examples" / "kernels" / "triad.c")
DOT = str(ROOT / "examples" / "kernels" / "dot.c")
OMP = str(ROOT / "examples" / "omp" / "dot_thread0.c")
APP = str(ROOT / "examples" / "pcg" / "pcg.yml")

#: command -> (argv after the machine is filled in, text in stdout that shows the figure worked)
COMMANDS = {
    "analyze -p ECM": (["analyze", TRIAD, "-m", "{m}", "-D", "N=10000000", "--incore", "analytic", "-p", "ECM"],
                       "T_ECM"),
    "analyze -p Roofline": (["analyze", TRIAD, "-m", "{m}", "-D", "N=10000000", "--incore", "analytic",
                             "-p", "Roofline"], "Roofline"),
    "analyze reduction": (["analyze", DOT, "-m", "{m}", "-D", "N=10000000", "--incore", "analytic", "-p", "ECM"],
                          "T_ECM"),
    "analyze --incore auto": (["analyze", TRIAD, "-m", "{m}", "-D", "N=10000000", "--incore", "auto",
                               "-p", "ECM"], "T_ECM"),
    "scaling": (["scaling", TRIAD, "-m", "{m}", "-D", "N=10000000", "--incore", "analytic"], "cores"),
    "energy": (["energy", TRIAD, "-m", "{m}", "-D", "N=10000000", "--incore", "analytic"], "J"),
    "omp": (["omp", OMP, "-m", "{m}", "-D", "N=1000000", "--threads", "4"], "s"),
    "app": (["app", APP, "-m", "{m}", "--incore", "analytic"], "cy"),
    "codegen": (["codegen", TRIAD, "-D", "N=1000"], "main"),
    "compare": (["compare", TRIAD, "-m", "{m}", "-m", "SkylakeSP_Gold-6148", "-D", "N=10000000",
                 "--incore", "analytic"], "{m}"),
}


def run(model: str, argv: list, expect: str) -> str:
    """One cell: 'works' or the first line of the error (exit status and stderr)."""
    args = [a.replace("{m}", model) for a in argv]
    t0 = time.perf_counter()
    try:
        p = subprocess.run([sys.executable, "-m", "loopmodel.cli", *args], capture_output=True, text=True,
                           timeout=300, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return "timed out (300 s)"
    dt = time.perf_counter() - t0
    if p.returncode != 0:
        line = (p.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"exit {p.returncode}: {line[:160]}"
    if expect.replace("{m}", model) not in p.stdout:
        notes = [ln.strip() for ln in p.stdout.splitlines() if "note" in ln.lower() or "skipped" in ln.lower()]
        return "ran, but " + (notes[0][:160] if notes else f"no '{expect}' in its output")
    return f"works ({dt:.1f} s{_incore_source(p.stdout)})"


def _incore_source(stdout: str) -> str:
    """For ``--incore auto``: which in-core model ran (the compiled analyzer, or the analytic
    model and why), from the analysis' notes."""
    text = " ".join(stdout.split())
    if "in-core from llvm-mca" in text:
        return "; compiled: llvm-mca"
    if "in-core from OSACA" in text or "in-core from osaca" in text:
        return "; compiled: OSACA"
    if "compiled in-core analysis not possible (" in text:
        why = text.split("compiled in-core analysis not possible (", 1)[1].split(")", 1)[0]
        return f"; analytic: compiled not possible ({why[:70]})"
    return ""


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out")
    ap.add_argument("--models")
    ap.add_argument("--commands")
    args = ap.parse_args()
    sys.path.insert(0, str(ROOT / "src"))
    from loopmodel.fileio.machine_files import builtin_names
    models = args.models.split(",") if args.models else builtin_names()
    commands = args.commands.split(",") if args.commands else list(COMMANDS)
    lines = ["| model | " + " | ".join(commands) + " |", "|---|" + "---|" * len(commands)]
    for m in models:
        cells = [run(m, *COMMANDS[c]) for c in commands]
        lines.append(f"| {m} | " + " | ".join(c.replace("|", "\\|") for c in cells) + " |")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
