"""A probed host against the bundled model of its micro-architecture: every figure side by side
(``loopmodel machine diff``) and the |error| of each model on the quick validation corpus,
measured here, one after the other in the same run.

    python benchmarks/probed_vs_bundled.py PROBED.yml BUNDLED [--out FILE.md] [--repeat K]

The corpus places each kernel in every memory level *of the model it validates*, so the two
models are measured on slightly different sizes; the measurement is loopmodel bench (pinned,
min-of-K, cy/it at the clock measured around it), so the bundled model's nominal clock does not
enter the error.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cli(*args: str, timeout: int = 1800) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "loopmodel.cli", *args], capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def diff_table(probed: str, bundled: str) -> list:
    sys.path.insert(0, str(ROOT / "src"))
    from loopmodel.workflows.machine import diff
    lines = [f"| figure | probed ({Path(probed).name}) | bundled ({bundled}) | differs | sources |",
             "|---|---|---|---|---|"]
    for key, a, b, src in diff(probed, bundled):
        lines.append(f"| `{key}` | {a} | {b} | {'*' if a != b else ''} | {src} |")
    return lines


def corpus(model: str, repeat: int) -> dict:
    p = cli("validate", "--corpus", "--quick", "-m", model, "--json", "--repeat", str(repeat), "--no-cache")
    if p.returncode != 0:
        return {"error": (p.stderr.strip().splitlines() or ["?"])[-1]}
    return json.loads(p.stdout)


def _pct(x) -> str:
    return "—" if x is None else f"{100 * x:.1f} %"


def corpus_rows(name: str, doc: dict) -> list:
    if "error" in doc:
        return [f"| {name} | failed: {doc['error']} | | | | |"]
    s = doc["summary"]
    rows = [f"| {name} | all | {s['count']} | {_pct(s['median_abs_error'])} | {_pct(s['p90_abs_error'])} "
            f"| {_pct(s['max_abs_error'])} |"]
    for level, st in s["by_level"].items():
        rows.append(f"| {name} | {level} | {st['count']} | {_pct(st['median_abs_error'])} "
                    f"| {_pct(st['p90_abs_error'])} | {_pct(st['max_abs_error'])} |")
    return rows


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("probed")
    ap.add_argument("bundled")
    ap.add_argument("--out")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    lines = ["# Probed host against the bundled model", "", *diff_table(args.probed, args.bundled), "",
             "## Quick validation corpus, measured on this host", "",
             "| model | data location | cases | median abs error | p90 | max |", "|---|---|---|---|---|---|"]
    for name in (args.probed, args.bundled):
        doc = corpus(name, args.repeat)
        lines += corpus_rows(Path(name).name, doc)
        print("\n".join(lines[-6:]), flush=True)
    text = "\n".join(lines) + "\n"
    if args.out:
        Path(args.out).write_text(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
