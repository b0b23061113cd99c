"""Fuzz the simulator's fast-forward against the full simulation, on many cores, with fresh seeds.

The test suite (tests/test_cachesim_fastforward.py) checks a fixed set of examples (derandomized)
that every run repeats; this draws new ones from the same strategies, many more, one process per
worker, each with its own seed: random nests on small hierarchies, 3-D stencils, and 2-D stencils on
hierarchies whose last level fills slowly (the last level's operations replayed). Each example runs
with and without ``RunOptions.fast_forward`` and must agree in everything (``_same`` there).

Run: python benchmarks/fuzz_fastforward.py [--workers N] [--examples N] [--seed S] [--out FILE]
  --examples: per worker and per strategy. Prints one line per worker and strategy as each ends
  (examples run, failures), then the first failing example of each; exits 1 on any failure.
"""
from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT / "src")]


def _strategies():
    """``{name: test body(data)}``: the suite's property tests without their settings (Hypothesis
    keeps the undecorated function as ``test.hypothesis.inner_test``)."""
    import test_cachesim_fastforward as t

    return {"random-nests": t.test_fast_forward_equals_the_full_simulation_on_random_nests,
            "3d-stencils": t.test_fast_forward_equals_the_full_simulation_on_3d_stencils,
            "large-last-level": t.test_fast_forward_equals_the_full_simulation_with_a_large_last_level}


def fuzz(job: tuple) -> dict:
    """One worker: ``(seed, examples, strategy name)`` -> ``{strategy, seed, examples, seconds, failure}``."""
    from hypothesis import HealthCheck, given, seed, settings
    from hypothesis import strategies as st

    seed_value, examples, name = job
    body = _strategies()[name].hypothesis.inner_test
    count = [0]

    @seed(seed_value)
    @settings(max_examples=examples, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck))
    @given(data=st.data())
    def run(data):
        count[0] += 1
        body(data)

    t0 = time.perf_counter()
    failure = None
    try:
        run()
    except Exception:  # the falsifying example and the assertion, for the report
        failure = traceback.format_exc(limit=3)[-4000:]
    return {"strategy": name, "seed": seed_value, "examples": count[0], "seconds": round(time.perf_counter() - t0, 1),
            "failure": failure}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--workers", type=int, default=multiprocessing.cpu_count())
    ap.add_argument("--examples", type=int, default=500, help="per worker and strategy")
    ap.add_argument("--seed", type=int, default=int(time.time()))
    ap.add_argument("--out", help="write the results as JSON here")
    args = ap.parse_args(argv)
    jobs = [(args.seed + w, args.examples, name) for w in range(args.workers) for name in _strategies()]
    results = []
    with multiprocessing.Pool(args.workers) as pool:
        for r in pool.imap_unordered(fuzz, jobs):  # each as it ends: a run cut short still reports
            results.append(r)
            print(f"{r['strategy']:18s} seed {r['seed']}: {r['examples']} examples in {r['seconds']} s, "
                  f"{'FAILED' if r['failure'] else 'all equal'}", flush=True)
    failed = [r for r in results if r["failure"]]
    for r in failed:
        print(f"\n{r['strategy']} seed {r['seed']}:\n{r['failure']}")
    total = sum(r["examples"] for r in results)
    print(f"\n{total} examples, {len(failed)} failing workers")
    if args.out:
        Path(args.out).write_text(json.dumps(results, indent=1))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
