"""The differential check of generated programs, longer than the suite runs it.

Draws kernel texts as tests/compile_fuzz.py does (a base kernel with one to three hostile inserts:
comments, line endings, splices, trigraphs, non-ASCII bytes, directives, pragmas with payloads),
with fresh seeds, and for each text the front-end accepts compares the kernel function of
``gcc -E`` on the generated program with what loopmodel printed, token for token, and runs the
program (every ``--run-every``-th text) looking for the payload's marker file.

Run: python benchmarks/fuzz_generated_programs.py [--texts N] [--workers N] [--seed S] [--run-every K]
Prints one line per worker (texts, refused, compiled, divergences, markers) and the first failure.
"""
from __future__ import annotations

import argparse
import multiprocessing
import random
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]


def _text(rng: random.Random) -> str:
    from compile_fuzz import BASES, insert
    return insert(rng.choice(BASES), lambda kind, options: rng.choice(list(options)))


def worker(job: tuple) -> dict:
    """``(seed, texts, run_every)`` -> counts and the first failure (every ``run_every``-th
    text accepted is built and run)."""
    from compile_fuzz import check
    seed, texts, run_every = job
    rng = random.Random(seed)
    out = {"seed": seed, "texts": 0, "refused": 0, "compiled": 0, "ran": 0, "divergences": 0, "markers": 0,
           "first": None}
    for _ in range(texts):
        text = _text(rng)
        run = out["compiled"] % run_every == 0
        with tempfile.TemporaryDirectory(prefix="loopmodel-fuzz-") as d:
            try:
                outcome = check(text, d, run=run)
            except AssertionError as exc:
                key = "markers" if "marker" in str(exc) else "divergences"
                out[key] += 1
                out["first"] = out["first"] or (text, str(exc)[:2000])
                continue
        out["texts"] += 1
        out[outcome] += 1
        out["ran"] += run and outcome == "compiled"
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--texts", type=int, default=2000, help="texts per worker")
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--run-every", type=int, default=5, help="build and run every K-th accepted text")
    args = ap.parse_args(argv)
    start = time.monotonic()
    jobs = [(args.seed + w, args.texts, args.run_every) for w in range(args.workers)]
    with multiprocessing.Pool(args.workers) as pool:
        results = pool.map(worker, jobs)
    failed = 0
    for r in results:
        print(f"seed {r['seed']}: {r['texts']} texts, {r['refused']} refused, {r['compiled']} compiled "
              f"({r['ran']} run), {r['divergences']} divergences, {r['markers']} markers")
        if r["first"]:
            failed += 1
            print("  first failure:", repr(r["first"][0]), "\n ", r["first"][1])
    total = {k: sum(r[k] for r in results) for k in ("texts", "refused", "compiled", "ran", "divergences", "markers")}
    print(f"total: {total['texts'] + total['divergences'] + total['markers']} texts tried, {total['refused']} refused, "
          f"{total['compiled']} compiled and preprocessed ({total['ran']} built and run), {total['divergences']} "
          f"divergences, {total['markers']} markers, in {time.monotonic() - start:.0f} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
