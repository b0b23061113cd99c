"""Streaming bandwidth of Kerncraft's benchmark kernels per working-set size and thread count.

The kernels and their stream counts are those of the ``benchmarks`` section of a Kerncraft
machine description (kerncraft-tool-paper.txt §2.2 "Benchmarks"), measured with likwid-bench
semantics: a team of ``threads`` pinned OpenMP threads, each streaming through its **own**
arrays of ``bytes_per_thread`` bytes that it allocated and first-touched itself, so that an
in-cache working set stays in that core's caches and memory pages are local. Double precision,
8-byte elements:

=========  ===========================  ====  =====  ==========  ======  ====
kernel     loop body                    read  write  read+write  arrays  B/it
=========  ===========================  ====  =====  ==========  ======  ====
load       ``s += a[i]``                1     0      0           1       8
copy       ``a[i] = b[i]``              1     1      0           2       16
update     ``a[i] = s * a[i]``          1     1      1           1       16
triad      ``a[i] = b[i] + c[i]*d[i]``  3     1      0           4       32
daxpy      ``a[i] = a[i] + s*b[i]``     2     1      1           2       24
streams:K  ``s += a0[i] + .. + aK-1[i]``  K   0      0           K       8 K
=========  ===========================  ====  =====  ==========  ======  ====

As in Kerncraft's tables, an array that is read and written (``read+write``) is counted in
both ``read`` and ``write``. ``B/it`` is the data volume **without write-allocate**
(kerncraft-tool-paper.txt §2.2: the measured bandwidth is stored "without write-allocate"):
8 B per read stream plus 8 B per write stream. A model that predicts write-allocate traffic
divides its own volume by the bandwidth of the benchmark with the best-matching stream
counts; the distinction between the three counts is what lets it do so (ibid.).

``streams:K`` (K = 1 .. :data:`MAX_STREAMS`) reads K arrays at once, to measure what many
concurrent streams cost; ``offset`` moves every array start that many bytes from a 4096-byte
aligned allocation, to measure misaligned and cache-line-split streaming.

Why measured bandwidths per memory level: the Roofline model needs the attainable bandwidth
of every level and core count, the ECM model the saturated memory bandwidth, and the
bandwidths of caches that vendors do not document are found by comparing such measurements
with candidate values (cross-architecture-machine-models.txt §4.1.3).

The program (``bandwidth.c`` next to this file, package data) is compiled once per process
(:func:`build_bandwidth_program`) and run once per point (:func:`run_bandwidth`). Each
repetition runs S sweeps over every thread's arrays between two barriers; S is calibrated
once so that a repetition lasts at least ``min_time_s``. Cost of one point: process start and
first touch of the arrays, one warm-up sweep, calibration (about 1.5 ``min_time_s``) and
``repetitions`` times about 1.2 ``min_time_s`` (or one sweep, whichever is longer);
``min_time_s`` and ``repetitions`` are the levers on time. The calibration aims 20% above
``min_time_s``; a calibration trial slowed down by another process can still leave a
repetition slightly shorter than ``min_time_s``.

Units: bytes (``bytes_per_thread``, ``offset``), seconds, bytes per second (``bytes_per_s_*``;
GB/s in reports is 10^9 B/s).
"""
from __future__ import annotations

from dataclasses import dataclass

import atexit
import os
import shutil
import tempfile
from importlib import resources
from typing import Callable

from .. import gate, toolchain
from ..errors import ToolError
from .stream import available_memory
from .topology import allowed_cpus

#: kernel -> stream counts and flops per iteration (Kerncraft's benchmark kernels,
#: kerncraft-tool-paper.txt §2.2; a read+write stream is also counted as read and as write)
KERNELS = {
    "load": {"read_streams": 1, "write_streams": 0, "read_write_streams": 0, "flops_per_iteration": 0},
    "copy": {"read_streams": 1, "write_streams": 1, "read_write_streams": 0, "flops_per_iteration": 0},
    "update": {"read_streams": 1, "write_streams": 1, "read_write_streams": 1, "flops_per_iteration": 1},
    "triad": {"read_streams": 3, "write_streams": 1, "read_write_streams": 0, "flops_per_iteration": 2},
    "daxpy": {"read_streams": 2, "write_streams": 1, "read_write_streams": 1, "flops_per_iteration": 2},
}
#: loop body of each kernel (``streams:K`` sums K arrays)
FORMULAS = {"load": "s += a[i]", "copy": "a[i] = b[i]", "update": "a[i] = s * a[i]",
            "triad": "a[i] = b[i] + c[i] * d[i]", "daxpy": "a[i] = a[i] + s * b[i]"}
#: most arrays a ``streams:K`` kernel reads
MAX_STREAMS = 24
ELEMENT_SIZE = 8  # double
LINE_SIZE = 64  # every array holds whole cache lines of this many bytes
ALIGNMENT = 4096  # every allocation starts on a page; ``offset`` moves the array start from there
OMP_ENVIRONMENT = {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_DYNAMIC": "false"}
_WHAT = "the bandwidth benchmark"


def kernel_info(kernel: str) -> dict:
    """Stream counts of ``kernel`` (a name of :data:`KERNELS` or ``'streams:K'``).

    Returns:
        ``{"read_streams", "write_streams", "read_write_streams", "flops_per_iteration",
        "arrays", "bytes_per_iteration", "formula"}``; ``arrays`` is the number of distinct
        arrays (read + write - read_write), ``bytes_per_iteration`` the volume without
        write-allocate, 8 B x (read + write). ``streams:K`` counts no flops, like load (Kerncraft
        lists 0 FLOPs for load).

    Raises:
        ToolError: unknown kernel (one line naming the choices).
    """
    if kernel in KERNELS:
        info = dict(KERNELS[kernel], formula=FORMULAS[kernel])
    else:
        k = _streams_count(kernel)
        info = {"read_streams": k, "write_streams": 0, "read_write_streams": 0, "flops_per_iteration": 0,
                "formula": ("s += " + " + ".join(f"a{j}[i]" for j in range(k))) if k <= 3
                else f"s += a0[i] + ... + a{k - 1}[i]"}
    info["arrays"] = info["read_streams"] + info["write_streams"] - info["read_write_streams"]
    info["bytes_per_iteration"] = ELEMENT_SIZE * (info["read_streams"] + info["write_streams"])
    return info


def _streams_count(kernel) -> int:
    prefix, _, count = str(kernel).partition(":")
    if prefix == "streams" and count.isdigit() and 1 <= int(count) <= MAX_STREAMS and count == str(int(count)):
        return int(count)
    raise ToolError(f"unknown bandwidth kernel {kernel!r} (choose {', '.join(KERNELS)} "
                    f"or streams:K with K = 1 .. {MAX_STREAMS})")


def _median(values) -> float:
    v = sorted(values)
    k = len(v) // 2
    return v[k] if len(v) % 2 else 0.5 * (v[k - 1] + v[k])


@dataclass(frozen=True)
class BandwidthPoint:
    """One kernel, thread count and working-set size.

    Attributes:
        kernel: a name of :data:`KERNELS` or ``'streams:K'``.
        threads: OpenMP threads, each streaming through its own arrays.
        bytes_per_thread: working set of all arrays of one thread, in B (``arrays x
            elements_per_thread x 8``: the requested size rounded down to whole 64-B lines
            per array).
        offset: bytes every array start lies after its 4096-byte aligned allocation.
        seconds: wall time of each repetition (S sweeps of every thread), in s.
        sweeps: S, sweeps per repetition and thread.
        elements_per_thread: elements (doubles) of each array of one thread.
        cpus: the CPU each thread ran on when it started (``sched_getcpu``), by thread number.
    """

    kernel: str
    threads: int
    bytes_per_thread: int
    offset: int
    seconds: tuple
    sweeps: int
    elements_per_thread: int
    cpus: tuple = ()

    @property
    def bytes_per_iteration(self) -> int:
        """Data volume per iteration without write-allocate, in B (8 B per read and write stream)."""
        return kernel_info(self.kernel)["bytes_per_iteration"]

    @property
    def bytes_per_repetition(self) -> int:
        """Bytes moved by all threads in one repetition (no write-allocate), in B."""
        return self.threads * self.elements_per_thread * self.sweeps * self.bytes_per_iteration

    def _rates(self) -> list:
        return [self.bytes_per_repetition / s for s in self.seconds]

    @property
    def bytes_per_s_min(self) -> float:
        """Bandwidth of the slowest repetition, all threads together, in B/s (no write-allocate)."""
        return min(self._rates())

    @property
    def bytes_per_s_median(self) -> float:
        """Median bandwidth over the repetitions, in B/s."""
        return _median(self._rates())

    @property
    def bytes_per_s_max(self) -> float:
        """Bandwidth of the fastest repetition (the min-of-K time), in B/s."""
        return max(self._rates())

    @property
    def spread(self) -> float:
        """(max - min) / max of the bandwidth over the repetitions (0: all agree)."""
        hi = self.bytes_per_s_max
        return (hi - self.bytes_per_s_min) / hi if hi > 0 else 0.0

    def to_dict(self) -> dict:
        """JSON-ready dictionary; units are in the key names."""
        info = kernel_info(self.kernel)
        return {
            "kernel": self.kernel,
            "formula": info["formula"],
            "read_streams": info["read_streams"],
            "write_streams": info["write_streams"],
            "read_write_streams": info["read_write_streams"],
            "flops_per_iteration": info["flops_per_iteration"],
            "threads": self.threads,
            "cpus": list(self.cpus),
            "bytes_per_thread": self.bytes_per_thread,
            "elements_per_thread": self.elements_per_thread,
            "offset_bytes": self.offset,
            "bytes_per_iteration": self.bytes_per_iteration,
            "sweeps_per_repetition": self.sweeps,
            "seconds": list(self.seconds),
            "bytes_per_s_min": self.bytes_per_s_min,
            "bytes_per_s_median": self.bytes_per_s_median,
            "bytes_per_s_max": self.bytes_per_s_max,
            "spread": self.spread,
        }


def team_program_source(file_name: str) -> str:
    """The C source of a pinned-team benchmark program shipped in this package (``bandwidth.c``,
    ``coherence.c``) with the shared helpers of ``team_common.c`` appended (the program
    declares them; appended, not prepended, so compiler messages keep the file's line numbers)."""
    files = resources.files(__package__)
    return "\n".join(files.joinpath(name).read_text(encoding="utf-8") for name in (file_name, "team_common.c"))


def bandwidth_source() -> str:
    """The C source of the benchmark."""
    return team_program_source("bandwidth.c")


def flag_candidates(machine: str | None = None) -> list:
    """Compiler flags to try, best first: native code, then portable code.

    ``-march=native`` on x86 (``-mcpu=native`` elsewhere, e.g. aarch64);
    ``-fno-tree-loop-distribute-patterns`` keeps gcc from turning the copy loop into a
    ``memcpy`` call (which would measure the C library, not the loop).
    """
    native = toolchain.native_arch_flag(machine)
    keep = "-fno-tree-loop-distribute-patterns"
    return [("-O3", native, "-fopenmp", keep), ("-O3", "-fopenmp", keep), ("-O3", "-fopenmp")]


#: (compiler path, directory) -> (executable, flags): one build per process
_PROGRAMS: dict = {}


def build_bandwidth_program(compiler: str = "gcc", directory: str | None = None) -> str:
    """Compile the benchmark (once per process and directory); the executable's path.

    Args:
        compiler: C compiler command (with OpenMP support).
        directory: where the program goes; None: a private temporary directory removed when
            the process exits.

    Returns:
        Path of the executable. The flags it was built with: :func:`bandwidth_flags`.

    Raises:
        ToolError: compiler missing, or no flag set of :func:`flag_candidates` compiles (the
            last compiler error line).
    """
    return _build(compiler, directory)[0]


def bandwidth_flags(compiler: str = "gcc", directory: str | None = None) -> tuple:
    """The flags the program of :func:`build_bandwidth_program` was built with (building it if needed)."""
    return _build(compiler, directory)[1]


def _build(compiler: str, directory: str | None) -> tuple:
    key = (toolchain.find_compiler(compiler), directory)
    if key in _PROGRAMS and os.path.exists(_PROGRAMS[key][0]):
        return _PROGRAMS[key]
    if directory is None:
        directory = tempfile.mkdtemp(prefix="loopmodel-bandwidth-")
        atexit.register(shutil.rmtree, directory, True)
    _PROGRAMS[key] = toolchain.compile_first(bandwidth_source(), compiler, flag_candidates(), "bandwidth", directory)
    return _PROGRAMS[key]


def _check_arguments(kernel, threads, bytes_per_thread, repetitions, min_time_s, offset, cpus) -> int:
    """Validate; the elements per array (whole cache lines)."""
    info = kernel_info(kernel)

    usable = len(allowed_cpus())
    if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= usable:
        raise ToolError(f"thread count {threads!r} out of range: this process may use {usable} "
                        f"{'CPU' if usable == 1 else 'CPUs'}, use 1 to {usable}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= 1000:
        raise ToolError(f"repetitions must be a whole number from 1 to 1000, got {repetitions!r}")
    if isinstance(min_time_s, bool) or not isinstance(min_time_s, (int, float)) or not 0 < min_time_s <= 3600:
        raise ToolError(f"minimum time per repetition must be > 0 s and at most 3600 s, got {min_time_s!r}")
    if isinstance(offset, bool) or not isinstance(offset, int) or not 0 <= offset < ALIGNMENT or offset % ELEMENT_SIZE:
        raise ToolError(f"offset must be a multiple of {ELEMENT_SIZE} B from 0 to {ALIGNMENT - ELEMENT_SIZE} B, "
                        f"got {offset!r}")
    if isinstance(bytes_per_thread, bool) or not isinstance(bytes_per_thread, int):
        raise ToolError(f"bytes per thread must be a whole number, got {bytes_per_thread!r}")
    arrays = info["arrays"]
    n = bytes_per_thread // arrays // LINE_SIZE * (LINE_SIZE // ELEMENT_SIZE)
    if n < 1:
        raise ToolError(f"working set {bytes_per_thread} B per thread is too small for {kernel}: "
                        f"at least {arrays * LINE_SIZE} B (one {LINE_SIZE}-B line per array)")
    avail = available_memory()
    total = threads * arrays * (n * ELEMENT_SIZE + offset)
    if avail is not None and total > avail / 2:
        raise ToolError(f"working set {total / 1024 ** 3:.2f} GiB over all threads exceeds half of the "
                        f"available memory ({avail / 1024 ** 3:.2f} GiB)")
    if cpus is not None:
        _check_cpus(cpus, threads)
    return n


def _check_cpus(cpus, threads) -> None:
    cpus = list(cpus)

    allowed = allowed_cpus()
    if len(cpus) < threads:
        raise ToolError(f"{len(cpus)} CPUs given for {threads} threads (one CPU per thread)")
    used = cpus[:threads]
    bad = [c for c in used if isinstance(c, bool) or not isinstance(c, int) or c not in allowed]
    if bad:
        raise ToolError(f"CPU {bad[0]!r} is not one this process may run on ({sorted(allowed)})")
    if len(set(used)) != len(used):
        raise ToolError(f"CPU list {used} names a CPU twice (one thread per CPU)")


def parse_output(stdout: str, kernel: str, threads: int, n: int, offset: int, repetitions: int) -> dict:
    """The program's JSON line, checked against what was asked for.

    Returns:
        ``{"seconds": [s per repetition], "sweeps": S, "cpus": [cpu per thread]}``.

    Raises:
        ToolError: no result line, a malformed one, one that does not match the request, or
            non-positive times or sweeps (one line each).
    """
    data = toolchain.json_result(stdout)
    if not isinstance(data, dict):
        raise ToolError(f"{_WHAT} ({kernel}, {threads} threads) printed no result line")
    try:
        seconds = [float(t) for t in data["seconds"]]
        sweeps = int(data["sweeps"])
        cpus = [int(c) for c in data.get("cpus", [])]
        asked = (data["kernel"], int(data["threads"]), int(data["elements_per_thread"]), int(data["offset"]),
                 len(seconds), data["check"])
    except (KeyError, TypeError, ValueError):
        raise ToolError(f"{_WHAT} ({kernel}, {threads} threads) printed a malformed result") from None
    if asked[1] != threads and asked[0] == kernel:
        raise ToolError(f"{_WHAT} ran with {asked[1]} OpenMP threads instead of {threads} "
                        f"(does the OpenMP runtime limit threads, OMP_THREAD_LIMIT?)")
    if asked != (kernel, threads, n, offset, repetitions, "ok"):
        raise ToolError(f"{_WHAT} result does not match the request: got kernel {asked[0]!r}, {asked[1]} threads, "
                        f"{asked[2]} elements, offset {asked[3]}, {asked[4]} repetitions, check {asked[5]!r}")
    if sweeps < 1 or not all(t > 0 for t in seconds):
        raise ToolError(f"{_WHAT} ({kernel}, {threads} threads) reported non-positive times or sweeps")
    return {"seconds": seconds, "sweeps": sweeps, "cpus": cpus}


def _default_runner(cmd: list, timeout: float, env: dict) -> str:
    return toolchain.run_program(cmd, _WHAT, timeout, env)


def run_bandwidth(kernel: str, threads: int, bytes_per_thread: int, repetitions: int = 5,
                  min_time_s: float = 0.02, offset: int = 0, cpus: list | None = None,
                  compiler: str = "gcc", runner: Callable[[list, float, dict], str] | None = None) -> BandwidthPoint:
    """Measure one point: ``kernel`` with ``threads`` threads of ``bytes_per_thread`` B each.

    Args:
        kernel: ``load``, ``copy``, ``update``, ``triad``, ``daxpy`` or ``streams:K`` (K = 1 .. 24).
        threads: OpenMP threads (1 .. the CPUs this process may use).
        bytes_per_thread: working set of all arrays of one thread, in B; rounded down to whole
            64-B lines per array (the point reports the actual figure).
        repetitions: timed repetitions (1 .. 1000).
        min_time_s: each repetition is calibrated to last at least this long (aiming 20% above), in s.
        offset: bytes (a multiple of 8 below 4096) every array start lies after its
            4096-byte aligned allocation.
        cpus: CPU of each thread, by thread number (the first ``threads`` entries are used);
            None: ``OMP_PLACES=cores OMP_PROC_BIND=close`` places them.
        compiler: C compiler for the benchmark.
        runner: ``runner(command, timeout_s, environment) -> stdout``; tests pass a fake one.

    Returns:
        :class:`BandwidthPoint`.

    Raises:
        ToolError: unknown kernel, bad arguments, a working set over half the available
            memory, compiler missing or failing, a program that fails (exit status 3: wrong
            results), crashes or times out. One line each.
    """
    n = _check_arguments(kernel, threads, bytes_per_thread, repetitions, min_time_s, offset, cpus)
    arrays = kernel_info(kernel)["arrays"]
    exe = build_bandwidth_program(compiler) if runner is None else "bandwidth"
    cmd = [exe, kernel, str(threads), str(n), str(offset), str(repetitions), repr(float(min_time_s))]
    env = gate.program_env(OMP_NUM_THREADS=threads, **OMP_ENVIRONMENT)
    if cpus is not None:
        cmd.append(",".join(str(int(c)) for c in list(cpus)[:threads]))
        env = gate.program_env(env, OMP_PLACES=None, OMP_PROC_BIND="false")  # each thread pins itself
    total = threads * arrays * n * ELEMENT_SIZE
    # generous: setup, calibration and every repetition even at 0.1 GB/s
    timeout = 60.0 + 3.0 * (repetitions + 3) * min_time_s + (repetitions + 8) * total / 1e8
    out = parse_output((runner or _default_runner)(cmd, timeout, env), kernel, threads, n, offset, repetitions)
    return BandwidthPoint(kernel=kernel, threads=threads, bytes_per_thread=arrays * n * ELEMENT_SIZE, offset=offset,
                          seconds=tuple(out["seconds"]), sweeps=out["sweeps"], elements_per_thread=n,
                          cpus=tuple(out["cpus"]))
