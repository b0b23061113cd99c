"""Estimate of the core clock frequency (Hz) from a dependency chain of integer additions.

Method: a small C program runs a chain of dependent 64-bit integer additions written in
inline assembly (x86-64 ``add %reg, %reg``; AArch64 ``add x, x, x``), 1000 per pass of a
loop whose own counter runs in parallel to the chain. An integer add has a latency of one
cycle on every x86-64 and AArch64 core, so the chain advances one addition per cycle.
The program times the chain several times after a warm-up pass, with both wall time
(``CLOCK_MONOTONIC``) and the thread's CPU time (``CLOCK_THREAD_CPUTIME_ID``); the clock of
a run is additions / thread CPU time (time preempted by the hypervisor does not count), and
the estimate is the median over runs, with the spread reported. The added value is a register, not an
immediate: some cores (e.g. Intel Golden Cove) fold chains of small immediate additions at
register rename, which would run faster than one per cycle.

Limits: the result is the clock of the one core that ran the program, at that moment:
with turbo or frequency scaling it is the single-core (turbo) clock, not the nominal
clock and not the clock under all-core load; a power-saving governor may lower it. In a
virtual machine, preemption by the hypervisor only lengthens the time (the best of several
runs is taken), so the estimate errs on the low side. Accuracy is about 1 % on an idle host.
"""
from __future__ import annotations

from dataclasses import dataclass

import os
import platform
import tempfile

from .. import toolchain
from ..errors import ToolError

ADDS_PER_PASS = 1000

_SOURCE = r"""
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define STR_(s) #s
#define STR(s) STR_(s)

static double seconds(clockid_t id)
{
    struct timespec t;
    clock_gettime(id, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long passes = atol(argv[1]);
    int runs = atoi(argv[2]);
    unsigned long x = 0, one = 1;
    printf("%ld", passes * (long)ADDS);
    for (int r = 0; r <= runs; ++r) {  /* run 0 warms up (frequency ramp) */
        double w0 = seconds(CLOCK_MONOTONIC), c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
        for (long i = 0; i < passes; ++i)
            __asm__ volatile(".rept " STR(ADDS) "\n\t" ADD "\n\t.endr" : [x] "+r"(x) : [one] "r"(one));
        double c = seconds(CLOCK_THREAD_CPUTIME_ID) - c0, w = seconds(CLOCK_MONOTONIC) - w0;
        if (r > 0)
            printf(" %.17g %.17g", w, c);
    }
    printf(" %lu\n", x);
    return 0;
}
"""

_ADD = {"x86_64": "add %[one], %[x]", "aarch64": "add %[x], %[x], %[one]"}


def _isa() -> str:
    m = platform.machine().lower()
    if m in ("x86_64", "amd64"):
        return "x86_64"
    if m in ("aarch64", "arm64"):
        return "aarch64"
    raise ToolError(f"cannot measure the clock on a '{platform.machine()}' host (x86-64 and AArch64 only)")


def clock_source(isa: str) -> str:
    """The C program for ``isa`` (``'x86_64'`` or ``'aarch64'``)."""
    return (f'#define ADD "{_ADD[isa]}"\n#define ADDS {ADDS_PER_PASS}\n' + _SOURCE)


@dataclass(frozen=True)
class ClockMeasurement:
    """The core clock from ``runs`` timings of one dependent-addition chain.

    Attributes:
        additions: additions per run (one per cycle).
        wall_s, cpu_s: per run, wall time (``CLOCK_MONOTONIC``) and the thread's CPU time
            (``CLOCK_THREAD_CPUTIME_ID``: time the thread actually ran, so preemption by the
            hypervisor or another process does not count), seconds.
    """
    additions: int
    wall_s: tuple
    cpu_s: tuple

    @property
    def samples_hz(self) -> tuple:
        """Clock of each run from its thread CPU time, Hz."""
        return tuple(self.additions / c for c in self.cpu_s)

    @property
    def median_hz(self) -> float:
        """Median over runs of additions / thread CPU time, Hz (the clock a probe uses)."""
        v = sorted(self.samples_hz)
        return (v[(len(v) - 1) // 2] + v[len(v) // 2]) / 2

    @property
    def spread(self) -> float:
        """(max - min) / median of the per-run clocks."""
        v = self.samples_hz
        return (max(v) - min(v)) / self.median_hz

    @property
    def wall_hz(self) -> float:
        """Clock from the shortest wall time, Hz (errs low when the thread was preempted)."""
        return self.additions / min(self.wall_s)

    def merged(self, other: "ClockMeasurement | None") -> "ClockMeasurement":
        """This measurement and ``other`` (taken later, same chain length) as one set of runs."""
        if other is None or other.additions != self.additions:
            return self
        return ClockMeasurement(self.additions, self.wall_s + other.wall_s, self.cpu_s + other.cpu_s)

    def to_dict(self) -> dict:
        return {"clock_Hz_median": self.median_hz, "clock_Hz_min": min(self.samples_hz),
                "clock_Hz_max": max(self.samples_hz), "spread": self.spread, "clock_Hz_wall_best": self.wall_hz,
                "method": "dependent integer additions (1/cy) over thread CPU time", "runs": len(self.cpu_s),
                "additions_per_run": self.additions}


def measure_clock(compiler: str = "gcc", passes: int = 100_000, runs: int = 5) -> ClockMeasurement:
    """Time ``runs`` chains of ``passes * 1000`` dependent additions (about 35 ms each at 3 GHz)
    with wall and thread CPU time.

    Raises:
        ToolError: host ISA other than x86-64 or AArch64, compiler missing, compilation or
            run failed, or an implausible result. One line each.
    """
    isa = _isa()
    toolchain.find_compiler(compiler)
    with tempfile.TemporaryDirectory(prefix="loopmodel-clock-") as d:
        exe = toolchain.compile_c(clock_source(isa), compiler, ("-O1",), "executable", "clock", d)
        out = toolchain.run_program([exe, str(passes), str(runs)], "the clock measurement", 120)
    return parse_clock_output(out, runs)


def parse_clock_output(out: str, runs: int) -> ClockMeasurement:
    """The program's line ``ADDS wall_1 cpu_1 ... wall_R cpu_R CHAIN`` as a :class:`ClockMeasurement`.

    Raises:
        ToolError: malformed output or a chain value that does not match (one line).
    """
    words = out.split()
    try:
        adds, x = int(words[0]), int(words[-1])
        times = [float(w) for w in words[1:-1]]
    except (ValueError, IndexError):
        raise ToolError(f"clock measurement printed no result ({out.strip()[:60]!r})") from None
    if len(times) != 2 * runs:
        raise ToolError(f"clock measurement printed {len(times)} times, expected {2 * runs}")
    if x != adds * (runs + 1):
        raise ToolError(f"clock measurement is inconsistent (chain value {x}, expected {adds * (runs + 1)})")
    wall, cpu = tuple(times[0::2]), tuple(times[1::2])
    if min(wall) <= 0 or min(cpu) <= 0:
        raise ToolError("clock measurement gave a non-positive time")
    return ClockMeasurement(adds, wall, cpu)


def measure_clock_hz(compiler: str = "gcc", passes: int = 100_000, runs: int = 5) -> float:
    """Core clock of this host in Hz: the median over ``runs`` of additions / thread CPU time
    (:func:`measure_clock`).

    Raises:
        ToolError: as :func:`measure_clock`.
    """
    return measure_clock(compiler, passes, runs).median_hz


def pinned_clock_hz(cpu: int | None, passes: int = 20_000, runs: int = 5, compiler: str = "gcc") -> float:
    """:func:`measure_clock_hz` with this process pinned to ``cpu`` meanwhile (the CPU a benchmark
    runs on; None: not pinned), the affinity restored afterwards. The default is short (5 runs
    of 2e7 additions, about 5 ms each): taken right before and after a measurement, because
    the clock of a shared virtual host may move by 10 % within seconds.

    Raises:
        ToolError: ``cpu`` is not one this process may run on, or as :func:`measure_clock`.
    """
    before = os.sched_getaffinity(0) if hasattr(os, "sched_getaffinity") and cpu is not None else None
    if before is not None and cpu not in before:
        raise ToolError(f"--cpu {cpu}: not a CPU this process may run on "
                        f"({', '.join(str(c) for c in sorted(before))})")
    try:
        if before is not None:
            os.sched_setaffinity(0, {cpu})
        return measure_clock_hz(compiler, passes, runs)
    finally:
        if before is not None:
            os.sched_setaffinity(0, before)
