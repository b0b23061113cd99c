"""How well two probes of one host agree: every measured bandwidth, the clock, the fitted
parameters, and how long each probe took.

    loopmodel machine probe -o a.yml --no-store
    loopmodel machine probe -o b.yml --no-store
    python benchmarks/probe_repeatability.py a.yml b.yml

Prints the bandwidth differences (largest first), their median, how many exceed 5 %, the
same for the cache levels in B/cy (a host whose clock moved between the probes runs its
in-core-bound cache kernels faster or slower in GB/s, not in B/cy), and the two probes'
clocks, link bandwidths, penalty and p0 side by side.
"""
from __future__ import annotations

import statistics
import sys

import yaml


def _gbs(text: str) -> float:
    return float(str(text).split()[0])


def bandwidth_differences(a: dict, b: dict) -> list:
    """``(|relative difference| in %, level, kernel, cores, GB/s in a, GB/s in b)`` per table entry."""
    out = []
    tb = b["benchmarks"]["measurements"]
    for level, table in a["benchmarks"]["measurements"].items():
        for kernel, values in table.items():
            if kernel == "cores" or level not in tb or kernel not in tb[level]:
                continue
            for n, x, y in zip(table["cores"], values, tb[level][kernel]):
                x, y = _gbs(x), _gbs(y)
                out.append((100 * abs(y / x - 1), level, kernel, n, x, y))
    return sorted(out, reverse=True)


def main(path_a: str, path_b: str) -> int:
    a, b = (yaml.safe_load(open(p, encoding="utf-8")) for p in (path_a, path_b))
    diffs = bandwidth_differences(a, b)
    print(f"{'|diff|':>7}  level kernel cores   GB/s a   GB/s b")
    for d, level, kernel, n, x, y in diffs:
        print(f"{d:6.1f}%  {level:5s} {kernel:6s} {n:5d} {x:8.2f} {y:8.2f}")
    print(f"{len(diffs)} bandwidths: median |difference| {statistics.median(d[0] for d in diffs):.1f} %, "
          f"max {diffs[0][0]:.1f} %, {sum(d[0] > 5 for d in diffs)} above 5 %")
    ca, cb = _gbs(a["clock"]), _gbs(b["clock"])
    per_cy = sorted((100 * abs((y / cb) / (x / ca) - 1), lv) for _, lv, _, _, x, y in diffs if lv != "MEM")
    if per_cy:
        print(f"cache levels in B/cy (each probe's own clock): median |difference| "
              f"{statistics.median(d for d, _ in per_cy):.1f} %, max {per_cy[-1][0]:.1f} %, "
              f"{sum(d > 5 for d, _ in per_cy)} of {len(per_cy)} above 5 %")
    for key in ("clock", "overlap", "contention_p0"):
        print(f"{key:14s} {a[key]!s:30s} {b[key]!s}")
    for la, lb in zip(a["links"], b["links"]):
        print(f"link {''.join(la['between']):9s} {la['bandwidth']!s:30s} {lb['bandwidth']!s}"
              f"   penalty {la.get('penalty_load', '-')} / {lb.get('penalty_load', '-')}")
    for p, doc in ((path_a, a), (path_b, b)):
        probe = doc.get("probe", {})
        print(f"{p}: {probe.get('command')} took {probe.get('duration_s')} s on {probe.get('date')}")
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2]))
