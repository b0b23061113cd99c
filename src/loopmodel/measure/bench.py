"""Benchmark mode: one kernel measured on this host, in the units of ``analyze``.

Kerncraft's benchmark model (kerncraft-tool-paper.txt §2.6) compiles and runs the kernel;
here the program is loopmodel's own (:mod:`.kernel_bench`: pinned, warm caches for data and
code, calls per run calibrated to last >= ``min_time_s``, K runs in one process), and the
statistics are those of roofline-measurement-thesis.txt §3.4: min-of-K as the headline, with
median, max, interquartile range and coefficient of variation. Seconds become cycles with the
clock measured right before and after the runs (the clock of a shared host moves), and
per-CL figures use the kernel's unit of work (one cache line of the written array,
kerncraft-tool-paper.txt §1.2.1). Without hardware counters the result says so.

Results are kept in the per-user cache, keyed by the kernel text, sizes, compiler (its path,
version, size and modification time: another ``gcc`` first on the PATH is another key) and flags,
host and CPU, loopmodel's code and the options (the thesis' result cache, §3.5). The fastest
run of the last fresh measurement of each case is kept too (kind ``bench-earlier``, keyed
without the options that only decide how many runs are taken), and the next fresh measurement
of the case is compared with it (:func:`loopmodel.measure.stability.against_earlier`).
"""
from __future__ import annotations

import dataclasses
import datetime
import platform
import socket
import time
from dataclasses import dataclass, field

from .. import cache
from ..errors import LoopmodelError
from ..fileio.c_kernel import load_c_kernel
from ..fileio.host_models import host_cpu_model
from ..predictors.layer_conditions import LayerConditionAnalysis
from .clock import pinned_clock_hz
from .kernel_bench import choose_build, measure_kernel
from .probe import data_caches
from .stability import BLOCKS, SPREAD_S, TOLERANCE, Stability, against_earlier, measure_in_blocks
from .topology import read_topology
from ..toolchain import compiler_identity

COUNTERS_NOTE = "counters unavailable: time only"


@dataclass(frozen=True)
class BenchResult:
    """One benchmark.

    Attributes:
        kernel: the kernel file; defines: the sizes.
        measurement: :class:`~loopmodel.measure.kernel_bench.KernelMeasurement`.
        clock_hz: the clock during the runs (mean of the measurements before and after), Hz.
        iterations_per_cl: innermost iterations per CL of work.
        flops_per_iteration: FLOPs per innermost iteration (from the kernel IR).
        cache: ``"warm"`` (data and code warm: a warm-up call precedes the runs) or ``"cold"``
            (a buffer larger than the last-level cache is streamed before each timed call).
        cached: whether this result came from the per-user cache.
        notes: what the figures cannot show.
        threads: OpenMP threads sharing the outermost loop (1: one pinned thread); the
            figures are for all of them together. openmp: whether OpenMP threads ran it
            (``threads`` given, even 1) rather than one pinned thread.
        traffic: link name (``L1L2``, ...) -> bytes per iteration the model predicts on it
            at these sizes (with a machine model; empty without); times the measured it/s it
            gives each link's bandwidth.
        stability: :class:`~loopmodel.measure.stability.Stability` of the blocks of runs
            (None: not measured in blocks).
    """
    kernel: str
    defines: dict
    measurement: object
    clock_hz: float
    iterations_per_cl: float
    flops_per_iteration: float
    cache: str = "warm"
    cached: bool = False
    notes: tuple = field(default=())
    threads: int = 1
    openmp: bool = False
    traffic: dict = field(default_factory=dict)
    stability: Stability | None = None

    def figures(self) -> dict:
        """The measurement in every unit, min / median / max where the runs differ."""
        m, hz = self.measurement, self.clock_hz
        s = (m.seconds_per_it_min, m.seconds_per_it_median, m.seconds_per_it_max)
        return {"seconds_per_it": s, "cy_per_it": tuple(x * hz for x in s),
                "cy_per_CL": tuple(x * hz * self.iterations_per_cl for x in s),
                "it_per_s": tuple(1 / x for x in s), "FLOP_per_s": tuple(self.flops_per_iteration / x for x in s)}

    def to_dict(self) -> dict:
        """One point of the ``--json`` document (naming rule: :mod:`loopmodel.report.schema`):
        ``time_{min,median,max}_{s_per_it,cy_per_it,cy_per_cl}``, ``max_it_s``, ``max_flop_s``,
        ``model_traffic_B_s`` (the model's bytes per iteration per level at ``max_it_s``)."""
        f, m = self.figures(), self.measurement
        block = {}
        for key, unit in (("seconds_per_it", "s_per_it"), ("cy_per_it", "cy_per_it"), ("cy_per_CL", "cy_per_cl")):
            for stat, v in zip(("min", "median", "max"), f[key]):
                block[f"time_{stat}_{unit}"] = v
        block["model_traffic_B_s"] = {k: v * f["it_per_s"][0] for k, v in self.traffic.items()}
        block.update({"max_it_s": f["it_per_s"][0], "max_lup_s": f["it_per_s"][0],
                      "max_flop_s": f["FLOP_per_s"][0], "iqr_s_per_it": m.iqr, "cov": m.cov,
                      "repetitions": len(m.seconds_per_call), "calls_per_repetition": m.reps_per_run,
                      "cache": self.cache, "clock_Hz": self.clock_hz, "threads": self.threads, "openmp": self.openmp,
                      "counters": _per_it(m.counters),
                      "stability": self.stability.to_dict() if self.stability else None,
                      "compiler": m.compiler, "flags": list(m.flags), "cpu": m.cpu, "pinned": m.pinned})
        return {"kernel": self.kernel, "defines": dict(self.defines), "measurement": block,
                "cached": self.cached, "notes": list(self.notes)}


def _model_traffic(kernel, machine, defines: dict, cold: bool) -> dict:
    """Link -> bytes per iteration the layer conditions predict (cold: one sweep); {} without
    a machine model or where the predictor does not apply."""
    if machine is None:
        return {}

    try:
        traffic, _ = LayerConditionAnalysis(kernel).predict(machine, defines, 1, 1.0, None,
                                                            sweeps="single" if cold else "repeated")
    except LoopmodelError:
        return {}
    names = [lv.level for lv in machine.memory_hierarchy]
    return {f"{lt.level}{names[i + 1]}": lt.bytes / traffic.iterations_per_unit for i, lt in enumerate(traffic.levels)}


def _per_it(counted: dict | None) -> dict | None:
    """Counter figures with units in the keys (per innermost iteration)."""
    if counted is None:
        return None
    return {f"{k}_per_it": v for k, v in counted.items()}


def bench_key(text: str, defines: dict, compiler: str, flags, repeat: int, min_time_s: float, cpu,
              cold: bool = False, threads: int | None = None, blocks: tuple = (BLOCKS, TOLERANCE)) -> str:
    """The per-user cache key of one benchmark (everything that decides its result; ``blocks``:
    blocks per round and tolerance, :mod:`.stability`). The compiler counts by what it is, not
    its name (:func:`loopmodel.toolchain.compiler_identity`)."""
    return cache.make_key("bench", text, sorted(defines.items()), compiler_identity(compiler), tuple(flags),
                          repeat, min_time_s, cpu, cold, threads, tuple(blocks), socket.gethostname(),
                          host_cpu_model(), platform.machine())


def earlier_key(text: str, defines: dict, compiler: str, flags, cpu, cold: bool = False,
                threads: int | None = None) -> str:
    """The per-user cache key of the last fresh measurement of a case (kind ``bench-earlier``):
    kernel text, sizes, compiler and flags, CPU, cache mode, threads and host -- not the number
    of runs, blocks, tolerance or spread. The compiler counts as in :func:`bench_key`."""
    return cache.make_key("bench-earlier", text, sorted(defines.items()), compiler_identity(compiler),
                          tuple(flags), cpu, cold, threads, socket.gethostname(), host_cpu_model(),
                          platform.machine())


def run_bench(path: str, defines: dict, machine=None, repeat: int = 10, min_time_s: float = 0.01,
              cpu: int | None = 0, use_cache: bool = True, timeout_s: float = 120, machine_file=None,
              measure=None, clock=None, cold: bool = False, threads: int | None = None, blocks: int = BLOCKS,
              tolerance: float = TOLERANCE, sleep=None, spread_s: float = SPREAD_S, now=None,
              compiler: str = "gcc", flags=None) -> BenchResult:
    """Measure the kernel in ``path`` at ``defines`` (see the module docstring).

    Args:
        path: a C kernel file. defines: size constant -> int (all the kernel needs).
        machine: the machine model whose compiler and flags to use (None: the host's).
        repeat: runs (K >= 1); min_time_s: shortest run, s (warm only).
        cold: before each run, stream a buffer of 4 x the last cache (at least 256 MiB) and time
            one call (:func:`_flush_bytes`); else data and code warm.
        threads: None: one thread pinned to ``cpu``; N: the outermost loop shared among N
            OpenMP threads, placed with ``OMP_PLACES=cores OMP_PROC_BIND=close``, the data
            first-touched by them (figures are then for all threads together).
        blocks, tolerance, spread_s: the runs are taken in ``blocks`` blocks whose starts span
            ``spread_s`` seconds or more, measured again (up to three rounds) until the two
            fastest agree within ``tolerance``
            (:func:`loopmodel.measure.stability.measure_in_blocks`); then compared with the
            last fresh measurement of the case, and one more round measured where the two
            disagree (:func:`loopmodel.measure.stability.against_earlier`; also with
            ``use_cache=False``, which only skips reading the stored result).
        compiler, flags: the compiler and flags (str or tuple) to build with; ``flags`` None: the
            machine model's (the host's without one; :func:`~.kernel_bench.choose_build`).
        measure, clock, sleep, now: injectable ``measure_kernel``, ``() -> Hz``, the pause
            between blocks and the monotonic clock, for tests.
    Raises:
        LoopmodelError: bad kernel or sizes, compiler missing or failing, a crash or timeout
            (one line each).
    """
    parsed = load_c_kernel(path)
    kernel, text = parsed.kernel, parsed.text
    asked = dict(compiler=compiler, flags=flags)  # what the measurement resolves again
    compiler, flags, _ = choose_build(compiler, flags, machine, machine_file)
    text = f"{text}\0{kernel.code}"  # the file and the nest of it that runs (--function picks one of several)
    key = bench_key(text, defines, compiler, flags, repeat, min_time_s, cpu, cold, threads,
                    (blocks, tolerance, spread_s))
    hit = cache.load("bench", key) if use_cache else None
    if isinstance(hit, BenchResult):
        return dataclasses.replace(hit, cached=True)
    clock = clock or pinned_clock_hz
    before = clock(cpu)
    flush_bytes = _flush_bytes(machine) if cold else 0
    measure = measure or measure_kernel
    first = []

    def block(runs: int):  # hardware counters once, with the first block
        first.append(runs)
        return measure(path, defines, **asked, machine=machine, machine_file=machine_file, runs=runs,
                       min_time_s=min_time_s, cpu=cpu, timeout_s=timeout_s, reps_per_run=1 if cold else None,
                       flush_bytes=flush_bytes, threads=threads, counters=len(first) == 1)
    timing = dict(sleep=sleep or time.sleep, now=now or time.monotonic, spread_s=spread_s)
    ekey = earlier_key(text, defines, compiler, flags, cpu, cold, threads)
    m, stability = against_earlier(measure_in_blocks(block, repeat, blocks, tolerance, **timing),
                                   cache.load("bench-earlier", ekey),
                                   lambda: measure_in_blocks(block, repeat, blocks, tolerance, rounds=1, **timing))
    cache.store("bench-earlier", ekey, {"date": datetime.datetime.now().astimezone().isoformat(timespec="seconds"),
                                        "min_s_per_it": m.seconds_per_it_min})
    hz = (before + clock(cpu)) / 2
    notes_cold = (f"cold: before each run a {flush_bytes / 2**20:.0f} MiB buffer is read and written and one "
                  "call is timed (Roofline thesis (Steinmann) §3.3)",) if cold else ()
    unit = kernel.unit_of_work(machine.cacheline_size if machine else 64, defines)
    said = any(n.startswith(COUNTERS_NOTE) for n in m.notes)  # the measurement's note says why
    notes = parsed.notes + tuple(m.notes) + notes_cold + ((COUNTERS_NOTE,) if m.counters is None and not said else ())
    notes += tuple(n for n in (stability.note(), stability.earlier_note()) if n)
    res = BenchResult(str(path), dict(defines), m, hz, unit.iterations, kernel.flops_per_iteration,
                      "cold" if cold else "warm", notes=notes, threads=threads or 1,
                      openmp=threads is not None, traffic=_model_traffic(kernel, machine, defines, cold),
                      stability=stability)
    if use_cache:
        cache.store("bench", key, res)
    return res


def _flush_bytes(machine) -> int:
    """Bytes to stream between cold runs: 4 x the last cache of ``machine`` (this host's sysfs
    without one), at least 256 MiB and at most 1 GiB (a virtual machine may report a shared
    last-level cache of hundreds of MiB of which it holds far less)."""
    last = None
    if machine is not None:
        caches = [lv.size for lv in machine.memory_hierarchy if lv.size]
        last = caches[-1] if caches else None
    if last is None:
        caches = data_caches(read_topology())
        last = caches[-1].size if caches else None
    return int(min(max(4 * (last or 0), 256 * 2**20), 2**30))
