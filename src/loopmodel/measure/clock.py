"""Estimate of the core clock frequency (Hz) from a dependency chain of integer additions.

Method: a small C program runs a chain of dependent 64-bit integer additions written in
inline assembly (x86-64 ``add %reg, %reg``; AArch64 ``add x, x, x``), 1000 per pass of a
loop whose own counter runs in parallel to the chain. An integer add has a latency of one
cycle on every x86-64 and AArch64 core, so the chain advances one addition per cycle.
The program times the chain several times (``CLOCK_MONOTONIC``) after a warm-up pass; the
shortest time gives ``clock = additions / seconds``. The added value is a register, not an
immediate: some cores (e.g. Intel Golden Cove) fold chains of small immediate additions at
register rename, which would run faster than one per cycle.

Limits: the result is the clock of the one core that ran the program, at that moment:
with turbo or frequency scaling it is the single-core (turbo) clock, not the nominal
clock and not the clock under all-core load; a power-saving governor may lower it. In a
virtual machine, preemption by the hypervisor only lengthens the time (the best of several
runs is taken), so the estimate errs on the low side. Accuracy is about 1 % on an idle host.
"""
from __future__ import annotations

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

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    long passes = atol(argv[1]);
    int runs = atoi(argv[2]);
    unsigned long x = 0, one = 1;
    double best = 1e300;
    for (int r = 0; r <= runs; ++r) {  /* run 0 warms up (frequency ramp) */
        double t0 = now();
        for (long i = 0; i < passes; ++i)
            __asm__ volatile(".rept " STR(ADDS) "\n\t" ADD "\n\t.endr" : [x] "+r"(x) : [one] "r"(one));
        double t = now() - t0;
        if (r > 0 && t < best)
            best = t;
    }
    printf("%ld %.17g %lu\n", passes * (long)ADDS, best, x);
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


def measure_clock_hz(compiler: str = "gcc", passes: int = 100_000, runs: int = 5) -> float:
    """Core clock of this host in Hz, from the best of ``runs`` timings of
    ``passes * 1000`` dependent additions (about 35 ms each at 3 GHz).

    Raises:
        ToolError: host ISA other than x86-64 or AArch64, compiler missing, compilation or
            run failed, or an implausible result. One line each.
    """
    isa = _isa()
    toolchain.find_compiler(compiler)
    with tempfile.TemporaryDirectory(prefix="loopmodel-clock-") as d:
        exe = toolchain.compile_c(clock_source(isa), compiler, ("-O1",), "executable", "clock", d)
        out = toolchain.run_program([exe, str(passes), str(runs)], "the clock measurement", 120)
    try:
        adds_s, best_s, x_s = out.split()
        adds, best, x = int(adds_s), float(best_s), int(x_s)
    except ValueError:
        raise ToolError(f"clock measurement printed no result ({out.strip()[:60]!r})") from None
    if x != adds * (runs + 1) or not best > 0:
        raise ToolError(f"clock measurement is inconsistent (chain value {x}, expected {adds * (runs + 1)})")
    return adds / best
