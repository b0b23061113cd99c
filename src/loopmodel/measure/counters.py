"""Hardware counters through Linux perf_event (the ``perf`` tool), where the host allows them.

roofline-measurement-thesis.txt §3.2 measures the operation count and the traffic with
counters. Here ``perf stat -x,`` counts a benchmark program twice, with R and with 2R calls
per run (one run each); the difference divided by R is one call, free of start-up,
allocation and warm-up. Events: instructions, L1 data-cache loads and stores, last-level
cache load misses (memory bytes = misses x cache line, an estimate: prefetches and
write-backs are not in it), and the vendor's floating-point events (Intel
``fp_arith_inst_retired.*`` weighted by lanes; AMD ``fp_ret_sse_avx_ops.all``). Where perf
is missing, the kernel forbids counting (``perf_event_paranoid``) or the CPU (a virtual
machine) does not expose the counters, :func:`available` says why and nothing is counted.
"""
from __future__ import annotations

import os
import shutil

from .. import gate
from ..errors import ToolError

GENERIC = ("instructions", "L1-dcache-loads", "L1-dcache-stores", "LLC-load-misses")
#: FLOP events per vendor: event -> FLOPs per count (double precision)
FP_EVENTS = {
    "GenuineIntel": {"fp_arith_inst_retired.scalar_double": 1, "fp_arith_inst_retired.128b_packed_double": 2,
                     "fp_arith_inst_retired.256b_packed_double": 4, "fp_arith_inst_retired.512b_packed_double": 8},
    "AuthenticAMD": {"fp_ret_sse_avx_ops.all": 1},
}
UNAVAILABLE = "counters unavailable: time only"


def parse_perf_csv(text: str) -> dict:
    """``perf stat -x,`` output -> event -> count (None where not supported or not counted)."""
    out = {}
    for line in text.splitlines():
        parts = line.split(",")
        if len(parts) < 3 or not parts[2]:
            continue
        try:
            out[parts[2]] = float(parts[0])
        except ValueError:
            out[parts[2]] = None
    return out


def _run(cmd: list, timeout: float = 60) -> str:
    """``perf stat ... -- program``'s report (its stderr), through :func:`loopmodel.gate.run_counted`."""
    split = cmd.index("--")
    return gate.run_counted(cmd[0], cmd[1:split], cmd[split + 1:], "perf stat", timeout).stderr


def available(perf: str | None = None, runner=None) -> tuple:
    """``(True, "")`` where ``perf stat`` counts instructions here, else ``(False, reason)``."""
    perf = perf or shutil.which("perf")
    if perf is None:
        return False, f"{UNAVAILABLE} (no perf tool)"
    perf = os.path.abspath(perf)  # the gate runs tools by absolute path, as count_per_call does
    try:
        got = parse_perf_csv((runner or _run)([perf, "stat", "-x,", "-e", "instructions", "--", "true"]))
    except (OSError, ToolError):
        return False, f"{UNAVAILABLE} (perf stat failed)"
    if not got.get("instructions"):
        return False, f"{UNAVAILABLE} (perf_event gives no hardware counts here: a virtual machine or " \
                      "perf_event_paranoid)"
    return True, ""


def count_per_call(command_for, reps: int, vendor: str, iterations: int, line: float = 64.0, perf: str | None = None,
                   runner=None) -> dict:
    """Counts of one kernel call, per iteration: ``{"instructions", "loads", "stores",
    "memory_B" (LLC misses x line size), "flops"}`` (None where not counted).

    Args:
        command_for: ``reps -> argv`` of the benchmark program with one run of ``reps`` calls.
        reps: R (the program then runs R and 2R calls).
        vendor: ``GenuineIntel`` / ``AuthenticAMD`` (picks the FLOP events).
        iterations: innermost iterations of one call.
    """
    perf = os.path.abspath(perf or shutil.which("perf") or "perf")
    events = list(GENERIC) + list(FP_EVENTS.get(vendor, {}))
    counted = []
    for r in (reps, 2 * reps):
        counted.append(parse_perf_csv((runner or _run)([perf, "stat", "-x,", "-e", ",".join(events), "--",
                                                        *command_for(r)])))

    def per_it(event):
        a, b = counted[0].get(event), counted[1].get(event)
        return None if a is None or b is None else (b - a) / reps / iterations

    flops = [per_it(e) for e in FP_EVENTS.get(vendor, {})]
    flop = None if not flops or any(f is None for f in flops) else sum(
        f * w for f, w in zip(flops, FP_EVENTS[vendor].values()))
    misses = per_it("LLC-load-misses")
    return {"instructions": per_it("instructions"), "loads": per_it("L1-dcache-loads"),
            "stores": per_it("L1-dcache-stores"), "memory_B": None if misses is None else misses * line,
            "flops": flop}
