"""Load latency per working-set size on this host, from a pinned pointer chase.

The benchmark (``latency.c`` next to this file, package data) chases pointers through one
random cycle of cache lines, so every load waits for the previous one and prefetchers cannot
help: the time per load is the latency of the level that holds the working set. It is the
measurement behind the ECM latency penalty of a memory link (cross-architecture-machine-
models.txt §3.3) and behind the effective capacity of each cache (a step in the curve).

The program is compiled once (:func:`loopmodel.toolchain.compile_c`, ``-O2``), run once for
all sizes, pinned to one CPU; each size is repeated ``repetitions`` times, each repetition
lasting at least ``min_time_s``; a point keeps the minimum (the least disturbed run on a
shared machine), median and maximum.

Units: bytes (``size_bytes``), nanoseconds per load (``ns_*``); :meth:`LatencyPoint.cycles`
converts with a clock in Hz.
"""
from __future__ import annotations

from dataclasses import dataclass

import tempfile
from importlib import resources
from typing import Callable

from .. import toolchain
from ..errors import ToolError

FLAGS = ("-O2",)


@dataclass(frozen=True)
class LatencyPoint:
    """One working-set size.

    Attributes:
        size_bytes: bytes chased through (a whole number of cache lines).
        ns_min, ns_median, ns_max: nanoseconds per load over the repetitions.
        repetitions: how many repetitions the figures are taken over.
    """
    size_bytes: int
    ns_min: float
    ns_median: float
    ns_max: float
    repetitions: int

    def cycles(self, clock_hz: float) -> float:
        """Minimum latency in core cycles at ``clock_hz`` (Hz)."""
        return self.ns_min * 1e-9 * clock_hz

    @property
    def spread(self) -> float:
        """(max - min) / min: how much the repetitions disagree."""
        return (self.ns_max - self.ns_min) / self.ns_min if self.ns_min > 0 else 0.0


@dataclass(frozen=True)
class LatencyResult:
    """A latency curve.

    Attributes:
        points: :class:`LatencyPoint` per size, in the order measured.
        cpu: the CPU the chase ran on; ``pinned`` whether pinning succeeded.
        line_size: bytes per cache line used for the chase.
        compiler, compiler_version: how the benchmark was built.
        notes: what the figures cannot show (e.g. an unpinned run).
    """
    points: tuple
    cpu: int
    pinned: bool
    line_size: int
    compiler: str
    compiler_version: str
    notes: tuple = ()


def latency_source() -> str:
    """The C source of the benchmark."""
    return resources.files(__package__).joinpath("latency.c").read_text(encoding="utf-8")


def parse_output(stdout: str, sizes: list, repetitions: int) -> list:
    """``[(size_bytes, pinned, [ns per load per repetition])]`` from the program's lines.

    Raises:
        ToolError: a line is missing or malformed (one line, naming what was expected).
    """
    rows = []
    lines = [ln.split() for ln in stdout.splitlines() if ln.strip()]
    if len(lines) != len(sizes):
        raise ToolError(f"latency benchmark: {len(lines)} result lines for {len(sizes)} sizes")
    for words in lines:
        try:
            if words[0] != "size" or words[2] != "pinned" or words[4] != "ns":
                raise ValueError
            values = [float(w) for w in words[5:]]
            if len(values) != repetitions or min(values) <= 0:
                raise ValueError
            rows.append((int(words[1]), words[3] == "1", values))
        except (ValueError, IndexError):
            raise ToolError(f"latency benchmark: unreadable line {' '.join(words)!r}") from None
    return rows


def make_point(size_bytes: int, values: list) -> LatencyPoint:
    """A :class:`LatencyPoint` from the per-repetition nanoseconds per load."""
    s = sorted(values)
    mid = len(s) // 2
    median = s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
    return LatencyPoint(size_bytes, s[0], median, s[-1], len(s))


def run_latency(sizes: list, line_size: int = 64, repetitions: int = 5, min_time_s: float = 0.02,
                cpu: int = 0, compiler: str = "gcc",
                runner: Callable[[list, float], str] | None = None) -> LatencyResult:
    """Measure the load latency of each working-set size in ``sizes`` (bytes).

    Args:
        sizes: working sets in bytes, each at least two cache lines.
        line_size: bytes per cache line (the chase touches one word per line).
        repetitions: runs per size (min, median, max are taken over them).
        min_time_s: each repetition chases for at least this long.
        cpu: the CPU to pin the chase to.
        compiler: C compiler for the benchmark.
        runner: ``runner(command, timeout_s) -> stdout`` (default: run the program); tests
            pass a fake one.

    Returns:
        :class:`LatencyResult`.

    Raises:
        ToolError: bad arguments, compiler missing or failing, or a failed run (one line).
    """
    if not sizes or any(int(s) < 2 * line_size for s in sizes) or repetitions < 1 or min_time_s <= 0:
        raise ToolError(f"latency benchmark: sizes must be at least 2 lines of {line_size} B, "
                        "repetitions >= 1 and min_time_s > 0")
    version = toolchain.tool_version(toolchain.find_compiler(compiler))
    timeout = 60.0 + len(sizes) * repetitions * (min_time_s * 2 + 1.0)
    with tempfile.TemporaryDirectory(prefix="loopmodel-latency-") as d:
        exe = toolchain.compile_c(latency_source(), compiler, FLAGS, "executable", "latency", d)
        cmd = [exe, str(cpu), str(line_size), str(repetitions), repr(float(min_time_s)), *map(str, map(int, sizes))]
        stdout = (runner or _run)(cmd, timeout)
    rows = parse_output(stdout, list(sizes), repetitions)
    pinned = all(p for _, p, _ in rows)
    notes = () if pinned else (f"could not pin the chase to CPU {cpu}: figures may mix CPUs",)
    return LatencyResult(tuple(make_point(s, v) for s, _, v in rows), cpu, pinned, line_size, compiler, version, notes)


def _run(cmd: list, timeout: float) -> str:
    return toolchain.run_program(cmd, "the latency benchmark", timeout)
