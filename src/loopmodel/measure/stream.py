"""Measured streaming bandwidth of daxpby and triad on this host, per OpenMP thread count.

The benchmark (``stream.c`` next to this file, shipped as package data) is compiled once
into a private temporary directory and run once per thread count with
``OMP_NUM_THREADS=n OMP_PROC_BIND=close OMP_PLACES=cores`` (and ``OMP_DYNAMIC=false``).
Arrays are page aligned and first-touched by the same ``schedule(static)`` loop as the
kernel. Each of ``repetitions`` repetitions runs the kernel until at least ``min_time_s``
seconds have passed; a point reports the median, minimum and maximum time per sweep over
the repetitions, and the rates derived from the median.

Data volume per iteration (double precision, the conventions used by the ECM/Roofline
literature and by Kerncraft's benchmark tables):

* ``daxpby``  ``y[i] = a*x[i] + b*y[i]``: **24 B/it** -- x and y read (16 B), y written
  back (8 B). No write-allocate: y is read anyway, its line is in the cache when stored.
  Without write-allocate it is the same, 24 B/it.
* ``triad``  ``a[i] = b[i] + s*c[i]``: **32 B/it** -- b and c read (16 B), the write-allocate
  of a (8 B: the line of a is loaded before it is written) and a written back (8 B).
  ``bytes_per_s_no_wa`` counts 24 B/it, the convention of McCalpin's STREAM, which does
  not count the write-allocate.

Units: seconds (``seconds_per_sweep``), iterations per second (``it_per_s``: array
elements updated per second, all threads together), bytes per second (``bytes_per_s``;
``GB/s`` in reports is 10^9 B/s). ``size_bytes`` is the total of all arrays.

Limits: a measurement on a shared or virtual machine is disturbed by other load; the
median over repetitions damps that, min/max show the spread. Whether data come from
memory or a cache depends on the size: choose a size well above the last-level cache to
measure memory bandwidth.
"""
from __future__ import annotations

from dataclasses import dataclass

import os
import platform
import shlex
import tempfile
from importlib import resources
from typing import Callable

from .. import gate, toolchain
from ..errors import ToolError
from .topology import allowed_cpus

#: default compiler flags of the streaming benchmark
DEFAULT_FLAGS = "-O3 -march=native -fopenmp"
#: kernel -> (arrays, B/it counted with write-allocate, B/it without write-allocate, formula)
KERNELS = {
    "daxpby": (2, 24, 24, "y[i] = a*x[i] + b*y[i]"),
    "triad": (3, 32, 24, "a[i] = b[i] + s*c[i]"),
}
#: kernels of the streaming benchmark
KERNEL_NAMES = tuple(KERNELS)
ELEMENT_SIZE = 8  # double
MIN_SIZE_BYTES = 1024 ** 2
OMP_ENVIRONMENT = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_DYNAMIC": "false"}


@dataclass(frozen=True)
class StreamPoint:
    """One thread count.

    Attributes:
        threads: OpenMP threads, as reported by the benchmark from inside a parallel region.
        seconds_per_sweep: median time of one sweep over all N elements, in s.
        seconds_per_sweep_min, seconds_per_sweep_max: fastest and slowest repetition, in s.
        it_per_s: iterations (elements) per second, ``n_elements / seconds_per_sweep``.
        bytes_per_s: ``it_per_s * bytes_per_it`` in B/s (with write-allocate where it applies).
        bytes_per_s_no_wa: ``it_per_s * bytes_per_it_no_wa`` in B/s (STREAM convention).
        bytes_per_it, bytes_per_it_no_wa: the byte counts used, in B per iteration.
        sweeps: timed sweeps in all repetitions together.
    """

    threads: int
    seconds_per_sweep: float
    seconds_per_sweep_min: float
    seconds_per_sweep_max: float
    it_per_s: float
    bytes_per_s: float
    bytes_per_s_no_wa: float
    bytes_per_it: int
    bytes_per_it_no_wa: int
    sweeps: int


@dataclass(frozen=True)
class StreamResult:
    """A measurement over several thread counts.

    Attributes:
        kernel: ``'daxpby'`` or ``'triad'``.
        n_elements: elements per array.
        size_bytes: total bytes of all arrays (``arrays * n_elements * 8``; the requested
            size rounded down to whole elements).
        compiler: compiler command; ``compiler_version`` its ``--version`` line
            (:func:`loopmodel.toolchain.tool_version`).
        flags: compiler flags (tuple of str).
        points: one :class:`StreamPoint` per thread count, in the order requested.
        host: CPU model and architecture of the measuring host.
        repetitions, min_time_s: the measurement parameters.
    """

    kernel: str
    n_elements: int
    size_bytes: int
    compiler: str
    flags: tuple
    points: tuple
    host: str
    compiler_version: str = ""
    repetitions: int = 0
    min_time_s: float = 0.0

    @property
    def bytes_per_it(self) -> int:
        return KERNELS[self.kernel][1]

    @property
    def bytes_per_it_no_wa(self) -> int:
        return KERNELS[self.kernel][2]

    def to_dict(self) -> dict:
        """JSON-ready dictionary; units are in the key names."""
        return {
            "kernel": self.kernel,
            "formula": KERNELS[self.kernel][3],
            "host": self.host,
            "compiler": self.compiler,
            "compiler_version": self.compiler_version,
            "flags": list(self.flags),
            "environment": dict(OMP_ENVIRONMENT),
            "n_elements": self.n_elements,
            "size_B": self.size_bytes,
            "repetitions": self.repetitions,
            "min_time_s": self.min_time_s,
            "volume_B_per_it": self.bytes_per_it,
            "volume_no_wa_B_per_it": self.bytes_per_it_no_wa,
            "points": [_point_dict(p) for p in self.points],
        }


def _point_dict(p: StreamPoint) -> dict:
    """One thread count as JSON (naming rule: :mod:`loopmodel.report.schema`)."""
    return {"threads": p.threads, "time_median_s_per_sweep": p.seconds_per_sweep,
            "time_min_s_per_sweep": p.seconds_per_sweep_min, "time_max_s_per_sweep": p.seconds_per_sweep_max,
            "it_s": p.it_per_s, "bandwidth_B_s": p.bytes_per_s, "bandwidth_no_wa_B_s": p.bytes_per_s_no_wa,
            "volume_B_per_it": p.bytes_per_it, "volume_no_wa_B_per_it": p.bytes_per_it_no_wa, "sweeps": p.sweeps}


def host_description() -> str:
    """``'<CPU model> (<architecture>, <n> CPUs)'`` from /proc/cpuinfo where available."""
    model = None
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("model name", "Model", "cpu model", "Hardware") and value.strip():
                    model = value.strip()
                    break
    except OSError:
        pass
    model = model or platform.processor() or "unknown CPU"
    return f"{model} ({platform.machine() or 'unknown architecture'}, {os.cpu_count()} CPUs)"


def stream_source() -> str:
    """The C source of the benchmark."""
    return resources.files(__package__).joinpath("stream.c").read_text(encoding="utf-8")


def available_memory() -> int | None:
    """``MemAvailable`` of ``/proc/meminfo`` in bytes; None where it cannot be read."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    return None


def _check_arguments(kernel, threads, size_bytes, repetitions, min_time_s) -> list:
    if kernel not in KERNELS:
        raise ToolError(f"unknown kernel '{kernel}' (choose {' or '.join(KERNELS)})")
    threads = list(threads)
    if not threads:
        raise ToolError("no thread counts given")
    cores = len(allowed_cpus())
    for t in threads:
        if isinstance(t, bool) or not isinstance(t, int):
            raise ToolError(f"thread count {t!r} is not a whole number")
        if t < 1 or t > cores:
            raise ToolError(f"thread count {t} out of range: this process may run on {cores} "
                            f"{'CPU' if cores == 1 else 'CPUs'} (hardware threads), use 1 to {cores}")
    if not isinstance(repetitions, int) or isinstance(repetitions, bool) or repetitions < 1:
        raise ToolError(f"repetitions must be a whole number >= 1, got {repetitions!r}")
    if not isinstance(min_time_s, (int, float)) or not min_time_s > 0 or min_time_s == float("inf"):
        raise ToolError(f"minimum time per repetition must be > 0 s, got {min_time_s!r}")
    if size_bytes < MIN_SIZE_BYTES:
        raise ToolError(f"size {int(size_bytes)} B is too small: at least 1 MiB (all arrays together)")
    avail = available_memory()
    if avail is not None and size_bytes > 0.9 * avail:
        raise ToolError(f"size {size_bytes / 1024 ** 3:.2f} GiB exceeds 90% of the available memory "
                        f"({avail / 1024 ** 3:.2f} GiB); choose a smaller --size")
    return threads


def run_once(exe: str, kernel: str, n: int, threads: int, repetitions: int, min_time_s: float,
              timeout: float) -> dict:
    """One run of the built benchmark ``exe`` (``kernel``, ``n`` elements, ``threads`` OpenMP threads
    pinned close), its output line checked (:func:`parse_output`); ``timeout`` in s.

    Raises:
        ToolError: the program fails, times out or prints an unexpected result.
    """
    env = gate.program_env(OMP_NUM_THREADS=threads, **OMP_ENVIRONMENT)
    cmd = [exe, kernel, str(n), str(repetitions), repr(float(min_time_s))]
    stdout = toolchain.run_program(cmd, f"the stream benchmark ({kernel}, {threads} threads)", timeout, env)
    return parse_output(stdout, kernel, threads, n, repetitions)


def parse_output(stdout: str, kernel: str, threads: int, n: int, repetitions: int) -> dict:
    """The benchmark's JSON line, checked against what was asked for.

    Raises:
        ToolError: no result line, wrong kernel/size/repetitions, a thread count other than
            requested (OpenMP ignored ``OMP_NUM_THREADS``), a failed result check or
            non-positive times.
    """
    data = toolchain.json_result(stdout)
    if not isinstance(data, dict):
        raise ToolError(f"stream benchmark ({kernel}, {threads} threads) printed no result line")
    try:
        times = [float(t) for t in data["seconds_per_sweep"]]
        sweeps = [int(s) for s in data["sweeps"]]
        ok = (data["kernel"] == kernel and int(data["n"]) == n and len(times) == repetitions
              and len(sweeps) == repetitions and data["check"] == "ok")
        got_threads = int(data["threads"])
    except (KeyError, TypeError, ValueError):
        raise ToolError(f"stream benchmark ({kernel}, {threads} threads) printed a malformed result") from None
    if not ok:
        raise ToolError(f"stream benchmark ({kernel}, {threads} threads) result does not match the request "
                        f"(kernel {data.get('kernel')!r}, n {data.get('n')!r}, check {data.get('check')!r})")
    if got_threads != threads:
        raise ToolError(f"stream benchmark ran with {got_threads} OpenMP threads instead of {threads} "
                        f"(is OMP_NUM_THREADS honoured by this OpenMP runtime?)")
    if not all(t > 0 for t in times) or not all(s > 0 for s in sweeps):
        raise ToolError(f"stream benchmark ({kernel}, {threads} threads) reported non-positive times")
    return {"threads": got_threads, "times": times, "sweeps": sweeps}


def _median(values) -> float:
    v = sorted(values)
    k = len(v) // 2
    return v[k] if len(v) % 2 else 0.5 * (v[k - 1] + v[k])


def make_point(kernel: str, n: int, threads: int, times, sweeps) -> StreamPoint:
    """A :class:`StreamPoint` from the per-repetition times per sweep (s)."""
    _, bpi, bpi_no_wa, _ = KERNELS[kernel]
    median = _median(times)
    it_per_s = n / median
    return StreamPoint(threads=threads, seconds_per_sweep=median, seconds_per_sweep_min=min(times),
                       seconds_per_sweep_max=max(times), it_per_s=it_per_s, bytes_per_s=it_per_s * bpi,
                       bytes_per_s_no_wa=it_per_s * bpi_no_wa, bytes_per_it=bpi, bytes_per_it_no_wa=bpi_no_wa,
                       sweeps=int(sum(sweeps)))


def run_stream(kernel: str, threads: list[int], size_bytes: int, repetitions: int = 5, min_time_s: float = 0.1,
               compiler: str = "gcc", flags: str = DEFAULT_FLAGS,
               progress: Callable[[StreamPoint], None] | None = None) -> StreamResult:
    """Measure ``kernel`` with each thread count in ``threads``.

    Args:
        kernel: ``'daxpby'`` or ``'triad'``.
        threads: OpenMP thread counts, each 1 .. ``os.cpu_count()``; measured in this order.
        size_bytes: total bytes of all arrays (at least 1 MiB); each array gets
            ``size_bytes // (arrays * 8)`` elements.
        repetitions: repetitions per thread count (median, min and max are taken over them).
        min_time_s: each repetition runs sweeps until at least this many seconds have passed.
        compiler, flags: how to build the benchmark (flags are split like a shell would;
            they must enable OpenMP).
        progress: called with each :class:`StreamPoint` as soon as it is measured.

    Returns:
        :class:`StreamResult`.

    Raises:
        ToolError: unknown kernel, thread count out of range (the message says how many CPUs
            this process may run on), size below 1 MiB or above the available memory, compiler missing,
            compilation failed (first error line), or a run failed. One line each.
    """
    threads = _check_arguments(kernel, threads, size_bytes, repetitions, min_time_s)
    arrays = KERNELS[kernel][0]
    n = int(size_bytes) // (arrays * ELEMENT_SIZE)
    try:
        flag_list = tuple(shlex.split(flags))
    except ValueError as exc:
        raise ToolError(f"cannot split compiler flags {flags!r}: {exc}") from None
    version = toolchain.tool_version(toolchain.find_compiler(compiler))
    # generous: even at 0.1 GB/s, initialisation, warm-up and every repetition fit
    sweep_bound = arrays * n * ELEMENT_SIZE / 1e8
    timeout = 60.0 + (repetitions + 3) * (min_time_s + sweep_bound)
    points = []
    with tempfile.TemporaryDirectory(prefix="loopmodel-measure-") as d:
        exe = toolchain.compile_c(stream_source(), compiler, flag_list, "executable", "stream", d)
        for t in threads:
            out = run_once(exe, kernel, n, t, repetitions, min_time_s, timeout)
            point = make_point(kernel, n, out["threads"], out["times"], out["sweeps"])
            points.append(point)
            if progress is not None:
                progress(point)
    return StreamResult(kernel=kernel, n_elements=n, size_bytes=arrays * n * ELEMENT_SIZE, compiler=compiler,
                        flags=flag_list, points=tuple(points), host=host_description(),
                        compiler_version=version, repetitions=repetitions, min_time_s=float(min_time_s))
