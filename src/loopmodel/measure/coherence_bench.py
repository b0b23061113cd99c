"""Measuring the MESI transition table of this host (the machine model's ``coherence:`` section).

benchmark-based-coherence-model.txt §III-B/§III-C: the time to load or store a chunk depends
on the chunk's coherence state (M, E, S held by the acting thread or by others, or I), its
size and stride and the number T of threads taking the same transition at once, each on a
chunk of its own; §IV-A: each benchmark first puts the buffer into the initial state, then
times the access. The program (``coherence.c`` next to this file, package data) does so for
a list of transitions (:data:`~loopmodel.machine.coherence.TRANSITION_KEYS`) and chunk sizes
with one pinned OpenMP team per thread count; see its header for the state set-up.

A repetition's figure is the slowest of the T threads' times; a point is the shortest over
the repetitions minus the timer's own overhead, and its spread (max - min) / min. Each T is
one process on the first max(T, 2) CPUs of ``cpus`` (three where a ``S other`` key needs a
third thread and the CPU exists; otherwise that key is left out with a note).

Units: bytes (sizes), seconds (times), GB/s in reports is 10^9 B/s.
"""
from __future__ import annotations

import atexit
import os
import platform
import shutil
import tempfile
from typing import Callable, Sequence

from .. import gate, toolchain
from ..errors import ToolError
from ..machine.coherence import TRANSITION_KEYS, CoherenceTable
from .bandwidth import team_program_source
from .stream import available_memory
from .topology import allowed_cpus

ELEMENT_SIZE = 8  # double
LINE_SIZE = 64
#: a timed point shorter than this many timer overheads is close to the clock's resolution
RESOLUTION_FACTOR = 3.0
#: spread above which a point is reported in the notes
NOISY_SPREAD = 0.5
_WHAT = "the coherence benchmark"
#: flags, best first; -fno-tree-loop-distribute-patterns keeps gcc from turning the store
#: loop into memset (which may use non-temporal stores)
_KEEP = "-fno-tree-loop-distribute-patterns"
#: (compiler path) -> (executable, flags)
_PROGRAMS: dict = {}
#: x86 and aarch64 flush cache lines with an instruction; elsewhere a buffer is written
_FLUSH_MACHINES = ("x86_64", "amd64", "i686", "i386", "aarch64", "arm64")


def coherence_sizes(max_bytes: int, min_bytes: int = 4096) -> tuple:
    """Chunk sizes from ``min_bytes`` to ``max_bytes``: the powers of two and the 1.5 x points
    between them (about two per octave), multiples of 64 B, ascending.

    Raises:
        ToolError: ``min_bytes`` below 64 B or above ``max_bytes``.
    """
    if isinstance(min_bytes, bool) or not isinstance(min_bytes, int) or min_bytes < LINE_SIZE:
        raise ToolError(f"smallest coherence chunk must be a whole number >= {LINE_SIZE} B, got {min_bytes!r}")
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int) or max_bytes < min_bytes:
        raise ToolError(f"largest coherence chunk {max_bytes!r} B is below the smallest ({min_bytes} B)")
    out, p = set(), LINE_SIZE
    while p <= max_bytes:
        for s in (p, p * 3 // 2):
            if min_bytes <= s <= max_bytes:
                out.add(s // LINE_SIZE * LINE_SIZE)
        p *= 2
    return tuple(sorted(out | {min_bytes // LINE_SIZE * LINE_SIZE}))


def coherence_source() -> str:
    """The C source of the benchmark."""
    return team_program_source("coherence.c")


def build_coherence_program(compiler: str = "gcc") -> tuple:
    """Compile the benchmark once per process: ``(executable path, flags)``.

    Flags tried in order: ``-O3 -march=native -fopenmp -fno-tree-loop-distribute-patterns``
    (``-mcpu=native`` off x86), then without the native flag.

    Raises:
        ToolError: compiler missing or no flag set compiles (the compiler's first error line).
    """
    key = toolchain.find_compiler(compiler)
    if key in _PROGRAMS and os.path.exists(_PROGRAMS[key][0]):
        return _PROGRAMS[key]
    directory = tempfile.mkdtemp(prefix="loopmodel-coherence-")
    atexit.register(shutil.rmtree, directory, True)
    flag_sets = (("-O3", toolchain.native_arch_flag(), "-fopenmp", _KEEP), ("-O3", "-fopenmp", _KEEP))
    _PROGRAMS[key] = toolchain.compile_first(coherence_source(), compiler, flag_sets, "coherence", directory)
    return _PROGRAMS[key]


def _team_cpus(cpus: list, threads: int, keys: tuple) -> list:
    """The CPUs of the team for ``threads`` timing threads: max(T, 2), or 3 for ``S other``."""
    want = max(threads, 3 if any(k.endswith("S other") for k in keys) else 2)
    return cpus[:max(min(want, len(cpus)), threads)]


def _check(cpus, sizes, threads, keys, repetitions) -> tuple:
    """Validated ``(cpus, sizes, threads, keys)`` as lists/tuples."""
    cpus, sizes, threads, keys = list(cpus), sorted(set(sizes)), sorted(set(threads)), tuple(keys)
    bad = [k for k in keys if k not in TRANSITION_KEYS]
    if bad or not keys:
        raise ToolError(f"unknown coherence transition {bad[0]!r} (known: {', '.join(TRANSITION_KEYS)})" if bad
                        else "no coherence transitions asked for")
    if not sizes or any(isinstance(s, bool) or not isinstance(s, int) or s < LINE_SIZE or s % LINE_SIZE
                        for s in sizes):
        raise ToolError(f"coherence chunk sizes must be whole multiples of {LINE_SIZE} B, got {sizes!r}")
    if not threads or any(isinstance(t, bool) or not isinstance(t, int) or t < 1 for t in threads):
        raise ToolError(f"coherence thread counts must be whole numbers >= 1, got {threads!r}")
    if isinstance(repetitions, bool) or not isinstance(repetitions, int) or not 1 <= repetitions <= 1000:
        raise ToolError(f"repetitions must be a whole number from 1 to 1000, got {repetitions!r}")

    allowed = allowed_cpus()
    wrong = [c for c in cpus if isinstance(c, bool) or not isinstance(c, int) or c not in allowed]
    if wrong:
        raise ToolError(f"CPU {wrong[0]!r} is not one this process may run on ({sorted(allowed)})")
    if len(set(cpus)) != len(cpus):
        raise ToolError(f"CPU list {cpus} names a CPU twice (one thread per CPU)")
    if len(cpus) < threads[-1]:
        raise ToolError(f"{len(cpus)} CPUs given for {threads[-1]} threads (one CPU per thread)")
    return cpus, sizes, threads, keys


def flush_bytes(llc_bytes: int | None, machine: str | None = None) -> int:
    """Bytes of the buffer written to push chunks out of the caches: 0 where the program
    flushes lines with an instruction (x86 ``clflush``, aarch64 ``dc civac``), else 2 x the
    last-level cache (``llc_bytes``; 64 MiB when unknown)."""
    if (machine or platform.machine()).lower() in _FLUSH_MACHINES:
        return 0
    return 2 * (llc_bytes or 32 * 1024 * 1024)


def _fitting_sizes(sizes: list, threads: int, flush: int, notes: list) -> list:
    """The sizes whose T chunks and flush buffer fit in half of the available memory."""
    avail = available_memory()
    if avail is None:
        return sizes
    keep = [s for s in sizes if threads * s + flush <= avail / 2]
    if len(keep) < len(sizes):
        notes.append(f"T={threads}: sizes above {keep[-1] if keep else 0} B left out ({threads} chunks and the "
                     f"flush buffer must fit in half of the available memory, {avail / 2 ** 30:.2f} GiB)")
    return keep


def _default_runner(timeout: float) -> Callable:
    return lambda cmd, env: toolchain.run_program(cmd, _WHAT, timeout, env)


def measure_coherence(cpus: Sequence[int], sizes: Sequence[int], threads: Sequence[int], *,
                      keys: Sequence[str] = TRANSITION_KEYS, repetitions: int = 5, compiler: str | None = None,
                      runner: Callable[[list, dict], str] | None = None, timeout_s: float = 1800.0,
                      llc_bytes: int | None = None) -> CoherenceTable:
    """The transition table of this host.

    Args:
        cpus: logical CPU ids, in order; T threads run on the first max(T, 2) (3 for the
            ``S other`` keys where given).
        sizes: chunk sizes per thread in bytes (multiples of 64).
        threads: thread counts T.
        keys: transitions (:data:`~loopmodel.machine.coherence.TRANSITION_KEYS`).
        repetitions: K, timings per point (min-of-K; small chunks are timed more often, see
            ``coherence.c``).
        compiler: C compiler with OpenMP (None: gcc).
        runner: ``runner(command, environment) -> stdout``; tests pass a fake (no compiler
            is run then).
        timeout_s: seconds one process (one T) may take.
        llc_bytes: last-level cache size in bytes, for the flush buffer where no flush
            instruction exists (:func:`flush_bytes`).

    Returns:
        :class:`~loopmodel.machine.coherence.CoherenceTable` (seconds rounded to 4 digits);
        missing keys, dropped sizes and anomalies are in ``notes``.

    Raises:
        ToolError: bad arguments, no size fits in memory, the compiler or a run fails, or a
            result is malformed (one line each).
    """
    cpus, sizes, threads, keys = _check(cpus, sizes, threads, keys, repetitions)
    notes: list = []
    flush = flush_bytes(llc_bytes)
    sizes = _fitting_sizes(sizes, threads[-1], flush, notes)
    if not sizes:
        raise ToolError(f"no coherence chunk size fits in memory for {threads[-1]} threads")
    exe = "coherence" if runner is not None else build_coherence_program(compiler or "gcc")[0]
    run = runner or _default_runner(timeout_s)
    seconds: dict = {}
    spread: dict = {}
    overhead: dict = {}
    for t in threads:
        team = _team_cpus(cpus, t, keys)
        cmd = [exe, ",".join(keys), str(t), ",".join(str(s) for s in sizes), str(repetitions),
               ",".join(str(c) for c in team)] + ([str(flush)] if flush else [])
        env = gate.program_env(OMP_NUM_THREADS=len(team), OMP_PROC_BIND="false", OMP_DYNAMIC="false",
                               OMP_WAIT_POLICY="active", OMP_PLACES=None)  # each thread pins itself
        data = parse_output(run(cmd, env), t, team, sizes, keys)
        overhead[t] = _r(data["region_overhead"])
        _collect(data, t, seconds, spread, notes)
    notes += _anomalies(seconds, sizes)
    return CoherenceTable(sizes=tuple(sizes), threads=tuple(threads), seconds=seconds, spread=spread,
                          region_overhead=overhead, element_size=ELEMENT_SIZE, stride=ELEMENT_SIZE,
                          cpus=tuple(_team_cpus(cpus, threads[-1], keys)), notes=tuple(dict.fromkeys(notes)))


def _r(x: float) -> float:
    return float(f"{x:.4g}")


def _collect(data: dict, t: int, seconds: dict, spread: dict, notes: list) -> None:
    """Min-of-K minus the timer overhead and the spread of each key and size, into the tables.

    A point at or below the timer overhead is kept at a tenth of it (the table holds positive
    times only); points within :data:`RESOLUTION_FACTOR` x the overhead and noisy points are
    counted in ``notes``.
    """
    timer = data["timer_overhead"]
    for key in data["missing"]:
        notes.append(f"'{key}' not measured at T={t}: its initial state needs another thread on a CPU of its "
                     f"own (three threads for 'S other'), and only {len(data['cpus'])} CPUs were given")
    near, noisy = [], []
    for key, rows in data["seconds"].items():
        mins, spreads = [], []
        for size, reps in zip(data["sizes"], rows):
            lo = min(reps) - timer
            if lo < RESOLUTION_FACTOR * timer:
                near.append(f"'{key}' at {size} B")
            mins.append(_r(max(lo, timer / 10)))
            spreads.append(_r((max(reps) - min(reps)) / max(min(reps) - timer, timer / 10)))
            if spreads[-1] > NOISY_SPREAD:
                noisy.append((spreads[-1], f"'{key}' at {size} B"))
        seconds.setdefault(key, {})[t] = tuple(mins)
        spread.setdefault(key, {})[t] = tuple(spreads)
    if near:
        notes.append(f"T={t}: {len(near)} points within {RESOLUTION_FACTOR:g} x the timer overhead "
                     f"({timer * 1e9:.0f} ns), e.g. {near[0]}: uncertain")
    if noisy:
        worst = max(noisy)
        notes.append(f"T={t}: the repetitions of {len(noisy)} points spread by more than {100 * NOISY_SPREAD:.0f} % "
                     f"(most: {worst[1]}, {100 * worst[0]:.0f} %)")


def _anomalies(seconds: dict, sizes: list) -> list:
    """Notes where the timings contradict the intended states (what can be seen without counters)."""
    out = []
    for t, own in seconds.get("L M own", {}).items():
        flushed = seconds.get("L I", {}).get(t)
        if flushed and flushed[0] < 1.5 * own[0]:
            out.append(f"T={t}: 'L I' at {sizes[0]} B is not clearly slower than 'L M own' "
                       f"({flushed[0]:.3g} s vs {own[0]:.3g} s): the flush may not have taken the chunk out "
                       "of the caches")
        other = seconds.get("L M other", {}).get(t)
        if other and other[0] < own[0]:
            out.append(f"T={t}: 'L M other' at {sizes[0]} B is faster than 'L M own' ({other[0]:.3g} s vs "
                       f"{own[0]:.3g} s): the other thread's copy did not cost a coherence miss")
    return out


def parse_output(stdout: str, threads: int, team: list, sizes: list, keys: tuple) -> dict:
    """The program's JSON line, checked against the request.

    Returns:
        ``{"seconds": {key: [[s per repetition] per size]}, "missing": [keys], "sizes",
        "cpus", "timer_overhead", "region_overhead"}``.

    Raises:
        ToolError: no result line, a malformed one, one that does not match the request
            (threads, CPUs, sizes, keys), or non-positive times; one line each.
    """
    data = toolchain.json_result(stdout)
    where = f"{_WHAT} (T={threads})"
    if not isinstance(data, dict):
        raise ToolError(f"{where} printed no result line")
    try:
        got = {"threads": int(data["threads"]), "team": int(data["team"]), "sizes": [int(s) for s in data["sizes"]],
               "cpus": [int(c) for c in data["cpus"]], "missing": [str(k) for k in data["missing"]],
               "timer_overhead": float(data["timer_overhead"]), "region_overhead": float(data["region_overhead"]),
               "seconds": {str(k): [[float(x) for x in reps] for reps in rows] for k, rows in data["seconds"].items()},
               "check": data["check"]}
    except (KeyError, TypeError, ValueError, AttributeError):
        raise ToolError(f"{where} printed a malformed result") from None
    if (got["threads"], got["team"], got["sizes"], got["check"]) != (threads, len(team), list(sizes), "ok"):
        raise ToolError(f"{where} result does not match the request: {got['threads']} threads in a team of "
                        f"{got['team']} (asked {threads} in {len(team)}), {len(got['sizes'])} sizes "
                        f"(asked {len(sizes)}), check {got['check']!r}")
    if got["cpus"] and got["cpus"] != list(team):
        raise ToolError(f"{where} ran on CPUs {got['cpus']} instead of {list(team)}")
    if set(got["seconds"]) | set(got["missing"]) != set(keys) or any(len(r) != len(sizes) for r in got["seconds"].values()):
        raise ToolError(f"{where} reported other transitions or sizes than asked for")
    times = [x for rows in got["seconds"].values() for reps in rows for x in reps]
    if any(not reps for rows in got["seconds"].values() for reps in rows) or not all(x > 0 for x in times) \
            or not got["timer_overhead"] >= 0 or not got["region_overhead"] > 0:
        raise ToolError(f"{where} reported non-positive or missing times")
    return got
