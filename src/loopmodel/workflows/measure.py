"""``measure``: the bandwidth of an OpenMP streaming kernel (daxpby: y = a*x + b*y, 24 B/it;
triad: a = b + s*c, 32 B/it with write-allocate) per thread count on this host, and
optionally the core clock (:mod:`loopmodel.measure.stream`, :mod:`loopmodel.measure.clock`).
"""
from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Callable

from .. import toolchain
from ..errors import DefineError
from ..fileio.defines import count_list
from ..measure.stream import DEFAULT_FLAGS
from ..measure.clock import measure_clock_hz
from ..measure.stream import StreamResult, run_stream
from ..measure.topology import allowed_cpus
from ..units import UnitError, parse_quantity
from .options import option

#: the total size of all arrays when ``--size`` is not given
DEFAULT_SIZE = "512 MiB"


@dataclass(frozen=True)
class MeasureOptions:
    """``measure``'s options (what is measured and how)."""

    threads: str | None = option(None, "thread counts: 1:4 (range, stop included; 1:8:2 with step), 1,2,4 or 2 "
                                       "(default 1:<number of CPUs>)", "--threads", "-t", metavar="LIST")
    size: str = option(DEFAULT_SIZE, f"total size of all arrays, e.g. '512 MiB', '2 GiB' (default '{DEFAULT_SIZE}'; "
                                     "choose well above the last-level cache for memory bandwidth)", "--size")
    repetitions: int = option(5, "repetitions per thread count; median, min and max are reported (default 5)",
                              "--repetitions", "-r", type=int)
    min_time: float = option(0.1, "each repetition runs sweeps for at least this many seconds (default 0.1)",
                             "--min-time", metavar="SECONDS", type=float)
    compiler: str = option("gcc", "C compiler (default gcc)", "--compiler")
    flags: str = option(DEFAULT_FLAGS, f"compiler flags, must enable OpenMP (default '{DEFAULT_FLAGS}'; a single "
                                       "flag: --flags=-fopenmp)", "--flags")
    clock: bool = option(False, "also measure the core clock (single core, dependent integer additions)", "--clock")


@dataclass(frozen=True)
class MeasureRun:
    """The result of ``measure``: the :class:`~loopmodel.measure.stream.StreamResult` and the
    measured core clock in Hz (None without ``--clock``)."""

    stream: StreamResult
    clock_hz: float | None = None


def parse_threads(text: str | None, default_max: int | None = None) -> list[int]:
    """``'1:4'`` -> [1, 2, 3, 4]; ``'1:8:2'`` -> [1, 3, 5, 7]; ``'1,2,4'``; ``'3'``; ``None`` -> 1..default_max
    (default: the CPUs this process may run on).

    Duplicates are dropped, the order is kept. Range checks against the number of cores
    are done by :func:`~loopmodel.measure.stream.run_stream`.

    Raises:
        DefineError: unreadable or empty list.
    """
    if text is None:
        return list(range(1, (default_max or len(allowed_cpus())) + 1))
    return count_list(text, "--threads")


def size_bytes(text: str) -> float:
    """``--size`` text (``'512 MiB'``) -> bytes.

    Raises:
        DefineError: not a size (one line naming ``--size``).
    """
    try:
        return parse_quantity(text, "size")
    except UnitError as exc:
        raise DefineError(f"--size: {exc}") from None


def run(kernel: str, options: MeasureOptions, progress: Callable | None = None) -> MeasureRun:
    """Measure ``kernel`` (``daxpby`` or ``triad``) at each thread count of ``options.threads``;
    ``progress`` is called with each :class:`~loopmodel.measure.stream.StreamPoint` measured.

    Raises:
        DefineError: a bad thread list, size, repetition count or minimum time (one line).
        ToolError: no compiler, or the benchmark failed (one line).
    """
    threads = parse_threads(options.threads)
    size = size_bytes(options.size)
    if options.repetitions < 1:
        raise DefineError(f"--repetitions must be >= 1, got {options.repetitions}")
    if not options.min_time > 0 or options.min_time == float("inf"):
        raise DefineError(f"--min-time must be a positive number of seconds, got {options.min_time}")
    toolchain.chosen_compiler(options.compiler)
    clock_hz = measure_clock_hz(options.compiler) if options.clock else None
    result = run_stream(kernel, threads, size, repetitions=options.repetitions, min_time_s=options.min_time,
                        compiler=options.compiler, flags=options.flags, progress=progress)
    return MeasureRun(result, clock_hz)
