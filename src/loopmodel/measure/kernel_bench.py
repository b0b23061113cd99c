"""Single-thread runtime of a loopmodel C kernel on this host, to check predictions against.

The kernel file is turned into a benchmark program (:func:`loopmodel.compiled.codegen.generate_c`
with ``timed=True``; OpenMP work-sharing pragmas removed, as for the single-core analysis,
:func:`loopmodel.compiled.compile.single_core_source`), compiled once per source and flags in
this process (:func:`loopmodel.toolchain.compile_c`) and run once per measurement. The program
pins itself to one CPU, first-touches the arrays there, calls the kernel once to warm the
caches (the data then sit in the level they fit in, as the repeated-sweeps layer conditions
assume; roofline-measurement-thesis.txt §2.3), calibrates the calls per run by doubling until
a run and the one after it both last ``min_time_s`` (a preempted run does not end it) and times
``runs`` runs in the same process (``CLOCK_MONOTONIC``).

Statistics (roofline-measurement-thesis.txt §3.4, "Handling the Variance"): disturbances on a
shared or virtual machine only lengthen a run, so the minimum over the runs (min-of-K, K =
``runs``) is the figure to compare with a model; the median, maximum, coefficient of variation
and interquartile range show how much the runs disagree.

Units: seconds per kernel call (``seconds_per_call``), seconds per iteration (``s/it``: one
execution of the innermost loop body), cycles per iteration (``cy/it``) and per cache line of
work (``cy/CL``: ``cy/it`` times the iterations per CL that the analysis reports,
``TrafficPrediction.iterations_per_unit``; kerncraft-tool-paper.txt §2.4) at a clock in Hz.
"""
from __future__ import annotations

import os
import platform
import shlex
import statistics
import tempfile
from dataclasses import dataclass, field
from typing import Callable

from .. import gate, toolchain
from ..compiled.codegen import generate_c
from ..compiled.compile import choose_compiler, resolve_compiler, single_core_source
from ..errors import DefineError, ToolError
from ..fileio.c_kernel import load_c_kernel
from .counters import available, count_per_call
from .stream import available_memory
from .topology import read_topology

#: link options of every benchmark program (the kernel may call sqrt, exp, ...)
LIBRARIES = ("-lm",)
#: most outer-loop iterations enumerated to count the iterations of a triangular nest
MAX_ENUMERATED = 10_000_000


def default_flags() -> tuple:
    """Flags without a machine model: ``-O3`` and the host's own instruction set
    (:func:`loopmodel.toolchain.native_arch_flag`). The generated kernel takes its arrays as
    ``restrict`` pointers, so no aliasing flag (icc's ``-fno-alias``) is needed."""
    return ("-O3", toolchain.native_arch_flag())


@dataclass(frozen=True)
class KernelMeasurement:
    """Measured runtime of one kernel at one set of sizes.

    Attributes:
        kernel: the kernel file's path.
        defines: size constant -> int.
        iterations: innermost-loop body executions of one kernel call (from the kernel IR).
        seconds_per_call: seconds per kernel call, one value per run (run time / calls per run).
        compiler: compiler command; ``flags``: its flags (tuple of str); ``flags_from``:
            ``"machine file (compiler.gcc)"``, ``"flags argument"`` or ``"default (host)"``.
        cpu: the CPU the program was pinned to (None: not pinned).
        reps_per_run: kernel calls per timed run (calibrated or given).
        pinned: whether pinning succeeded.
        compiler_version: the compiler's ``--version`` line.
        notes: what the figures cannot show (e.g. a failed pinning).
        counters: per iteration, from hardware counters (:mod:`.counters`): ``instructions``,
            ``loads``, ``stores``, ``memory_B``, ``flops``; None where not counted.
    """

    kernel: str
    defines: dict
    iterations: int
    seconds_per_call: tuple
    compiler: str
    flags: tuple
    cpu: int | None
    reps_per_run: int = 1
    pinned: bool = False
    flags_from: str = ""
    compiler_version: str = ""
    notes: tuple = field(default=())
    counters: dict | None = None

    def _per_it(self) -> list:
        return sorted(s / self.iterations for s in self.seconds_per_call)

    @property
    def seconds_per_it_min(self) -> float:
        """Fastest run, s/it (the figure to compare with a model, min-of-K)."""
        return self._per_it()[0]

    @property
    def seconds_per_it_median(self) -> float:
        return statistics.median(self._per_it())

    @property
    def seconds_per_it_max(self) -> float:
        return self._per_it()[-1]

    @property
    def cov(self) -> float:
        """Coefficient of variation of the runs: sample standard deviation / mean (no unit);
        0 for a single run."""
        v = self.seconds_per_call
        return statistics.stdev(v) / statistics.fmean(v) if len(v) > 1 else 0.0

    @property
    def iqr(self) -> float:
        """Interquartile range of the runs in s/it (third minus first quartile, inclusive
        quantiles); 0 for a single run."""
        v = self._per_it()
        if len(v) < 2:
            return 0.0
        q1, _, q3 = statistics.quantiles(v, n=4, method="inclusive")
        return q3 - q1

    def cy_per_it(self, clock_hz: float) -> tuple:
        """``(min, median, max)`` core cycles per iteration at ``clock_hz`` (Hz)."""
        return tuple(s * clock_hz for s in (self.seconds_per_it_min, self.seconds_per_it_median,
                                             self.seconds_per_it_max))

    def cy_per_cl(self, clock_hz: float, iterations_per_cl: float) -> tuple:
        """``(min, median, max)`` cycles per cache line of work: cy/it times ``iterations_per_cl``
        (the analysis' ``traffic.iterations_per_unit``)."""
        return tuple(c * iterations_per_cl for c in self.cy_per_it(clock_hz))

    def to_dict(self) -> dict:
        """JSON-ready dictionary; units in the key names (``_s``, ``_s_per_it``)."""
        return {
            "kernel": self.kernel, "defines": dict(self.defines), "iterations_per_call": self.iterations,
            "seconds_per_call_s": list(self.seconds_per_call), "runs": len(self.seconds_per_call),
            "reps_per_run": self.reps_per_run,
            "seconds_per_it_min_s_per_it": self.seconds_per_it_min,
            "seconds_per_it_median_s_per_it": self.seconds_per_it_median,
            "seconds_per_it_max_s_per_it": self.seconds_per_it_max,
            "iqr_s_per_it": self.iqr, "cov": self.cov,
            "compiler": self.compiler, "compiler_version": self.compiler_version, "flags": list(self.flags),
            "flags_from": self.flags_from, "cpu": self.cpu, "pinned": self.pinned, "notes": list(self.notes),
        }


def kernel_iterations(kernel, defines: dict) -> int:
    """Innermost-loop body executions of one call of ``kernel`` at ``defines``.

    Rectangular nests: the product of the trip counts; a loop whose inner loops' bounds
    depend on its index (triangular nest) is enumerated (at most :data:`MAX_ENUMERATED`
    iterations of such loops in all).

    Raises:
        DefineError: too many outer iterations to enumerate.
    """
    loops = kernel.loops
    budget = [MAX_ENUMERATED]

    def count(depth: int, env: dict) -> int:
        loop = loops[depth]
        if depth == len(loops) - 1:
            return loop.iterations(env)
        if not any(loop.index in (inner.start.symbols | inner.stop.symbols) for inner in loops[depth + 1:]):
            n = loop.iterations(env)
            return n * count(depth + 1, env) if n else 0
        total = 0
        start, stop = int(loop.start.evaluate(env)), int(loop.stop.evaluate(env))
        values = range(start, stop, loop.step)  # stop exclusive in the step's direction
        budget[0] -= len(values)
        if budget[0] < 0:
            raise DefineError(f"{kernel.source}: too many iterations of loop '{loop.index}' to count the "
                              "iterations of this triangular nest")
        for v in values:
            total += count(depth + 1, {**env, loop.index: v})
        return total

    return int(count(0, dict(defines)))


def array_bytes(kernel, defines: dict) -> int:
    """Bytes of all arrays the program allocates (declared sizes).

    Raises:
        DefineError: a size constant has no value, or an array dimension is not positive.
    """
    missing = kernel.free_constants(defines)
    if missing:
        raise DefineError(f"no value for {', '.join(missing)}: give a value for {missing[0]} "
                          f"(kernel {kernel.source})")
    total = 0
    for name, arr in kernel.arrays.items():
        dims = [int(d.evaluate(defines)) for d in arr.dims]
        if any(d < 1 for d in dims):
            sizes = ", ".join(f"{k}={v}" for k, v in sorted(defines.items()))
            raise DefineError(f"array '{name}' has a dimension {min(dims)} < 1 at {sizes} (kernel {kernel.source})")
        n = arr.element_size
        for d in dims:
            n *= d
        total += n
    return total


def parse_output(stdout: str, runs: int, reps: int | None = None) -> tuple:
    """``(seconds per run, calls per run, pinned)`` from the program's JSON line.

    Raises:
        ToolError: no result line, or one that does not match the request (one line).
    """
    data = toolchain.json_result(stdout)
    try:
        seconds = [float(s) for s in data["seconds"]]
        got_reps, pinned = int(data["reps"]), bool(data.get("pinned", False))
    except (TypeError, KeyError, ValueError):
        raise ToolError("kernel benchmark printed no result line") from None
    if len(seconds) != runs or got_reps < 1 or (reps is not None and got_reps != reps):
        raise ToolError(f"kernel benchmark result does not match the request ({len(seconds)} runs of {got_reps} "
                        f"calls for {runs} runs{f' of {reps} calls' if reps else ''})")
    if not all(s > 0 for s in seconds):
        raise ToolError("kernel benchmark reported non-positive times (a timer that does not advance?)")
    return seconds, got_reps, pinned


#: per process: one private directory for all benchmark programs, and
#: (source, compiler, flags) -> executable path
_BUILT = {"dir": None, "programs": {}}


#: placed before the user's flags (which win where they set it too): every loop starts on a 64 B
#: boundary, so a loop body shorter than 64 B is fetched from one line of code. Where the linker
#: happens to place a small loop across a 64 B boundary, its time on this Sapphire-Rapids-class
#: host rose by 40-60 % (same instructions, two placements); the in-core models assume fetch
#: does not limit, so the benchmark measures the placement they describe
CODE_ALIGNMENT = ("-falign-loops=64",)


def alignment_flags(compiler: str) -> tuple:
    """:data:`CODE_ALIGNMENT` for gcc and clang (names containing ``gcc``, ``clang``, or ``cc``),
    nothing for other compilers."""
    name = os.path.basename(compiler)
    return CODE_ALIGNMENT if ("gcc" in name or "clang" in name or name == "cc") else ()


def build_program(source: str, compiler: str, flags: tuple) -> str:
    """The executable of ``source`` compiled with ``compiler`` :func:`alignment_flags` ``flags``
    (linked with :data:`LIBRARIES`), built once per process into a private temporary directory.

    Raises:
        ToolError: compiler missing or failing (its first error line).
    """
    key = (source, compiler, tuple(flags))
    exe = _BUILT["programs"].get(key)
    if exe is not None and os.path.exists(exe):
        return exe
    if _BUILT["dir"] is None:
        _BUILT["dir"] = tempfile.TemporaryDirectory(prefix="loopmodel-kbench-")  # removed at exit
    name = f"kernel{len(_BUILT['programs'])}"
    exe = toolchain.compile_c(source, compiler, alignment_flags(compiler) + tuple(flags), "executable", name,
                              _BUILT["dir"].name, LIBRARIES)
    _BUILT["programs"][key] = exe
    return exe


def _flags_tuple(flags) -> tuple:
    if isinstance(flags, str):
        try:
            return tuple(shlex.split(flags))
        except ValueError as exc:
            raise ToolError(f"cannot split compiler flags {flags!r}: {exc}") from None
    return tuple(str(f) for f in flags)


def choose_build(compiler: str, flags, machine, machine_file: str | None = None) -> tuple:
    """``(compiler, flags tuple, where the flags came from)`` for a measurement.

    With ``machine``: the machine model's compiler entry (:func:`~loopmodel.compiled.compile.
    resolve_compiler`; its flags pass the allow-list check of
    :func:`~loopmodel.compiled.compile.choose_compiler`) unless ``flags`` is given. Without:
    ``flags`` or :func:`default_flags`.

    Raises:
        ToolError: the machine model is for another ISA than this host's (its code cannot run
            here), or flags cannot be split. MachineError: flags the machine file may not give.
    """
    if machine is None:
        if flags is None:
            return compiler, default_flags(), "default (host)"
        return compiler, _flags_tuple(flags), "flags argument"

    text = None if flags is None else shlex.join(_flags_tuple(flags))
    setting = resolve_compiler(machine, compiler, text)
    if setting.cross:
        raise ToolError(f"machine model '{machine.name}' is for {machine.isa}: its code cannot run on this "
                        f"{platform.machine()} host")
    choice = choose_compiler(machine, compiler, text, machine_file=machine_file)
    return choice.command, tuple(choice.flags), "flags argument" if flags is not None else setting.flags_from


def _check_arguments(runs, min_time_s, reps_per_run, cpu, timeout_s) -> None:
    if isinstance(runs, bool) or not isinstance(runs, int) or runs < 1:
        raise ToolError(f"runs must be a whole number >= 1, got {runs!r}")
    if reps_per_run is None and not (isinstance(min_time_s, (int, float)) and 0 < min_time_s < 60):
        raise ToolError(f"min_time_s must be in (0, 60) s, got {min_time_s!r}")
    if reps_per_run is not None and (isinstance(reps_per_run, bool) or not isinstance(reps_per_run, int)
                                     or reps_per_run < 1):
        raise ToolError(f"reps_per_run must be a whole number >= 1, got {reps_per_run!r}")
    if cpu is not None and (isinstance(cpu, bool) or not isinstance(cpu, int) or cpu < 0):
        raise ToolError(f"cpu must be a CPU number >= 0 or None, got {cpu!r}")
    if not (isinstance(timeout_s, (int, float)) and timeout_s > 0):
        raise ToolError(f"timeout_s must be > 0 s, got {timeout_s!r}")


def measure_kernel(path: str, defines: dict, compiler: str = "gcc", flags=None, machine=None,
                   runs: int = 10, min_time_s: float = 0.01, cpu: int | None = 0,
                   runner: Callable[[list, float], str] | None = None, timeout_s: float = 60,
                   reps_per_run: int | None = None, machine_file: str | None = None,
                   flush_bytes: int = 0, threads: int | None = None, counters: bool = False) -> KernelMeasurement:
    """Measure one call of the kernel in ``path`` at ``defines`` on this host (one thread).

    Args:
        path: a C kernel file (``examples/kernels/*.c``).
        defines: size constant -> int; ``#define`` defaults of the file fill the rest.
        compiler: compiler command.
        flags: compiler flags (str, shell-split, or a sequence); None: the machine model's
            (``machine`` given) or :func:`default_flags`.
        machine: :class:`~loopmodel.machine.model.MachineModel` whose compiler and flags to use.
        runs: timed runs (K of min-of-K).
        min_time_s: calibration: calls per run are doubled from 1 until two runs in a row last this long (s).
        cpu: CPU to pin the program to; None: not pinned.
        runner: ``runner(command, timeout_s) -> stdout`` (default: run the program); tests pass
            a fake one.
        timeout_s: seconds the program may run (initialisation, calibration, runs).
        reps_per_run: calls per run, skipping the calibration (None: calibrate).
        machine_file: the machine file's path, for error messages.
        flush_bytes: > 0: before each run, read and write a buffer this large (B), so the
            kernel's data are not in the caches (cold; use ``reps_per_run=1``).
        threads: None: one thread pinned to ``cpu``; N: the outermost loop shared among N
            OpenMP threads (``OMP_PLACES=cores OMP_PROC_BIND=close``, first touch in parallel,
            :func:`loopmodel.compiled.codegen.parallel_pragma`), ``-fopenmp`` added to the flags.
        counters: also count with hardware counters where the host allows it (else a note).

    Returns:
        :class:`KernelMeasurement`.

    Raises:
        KernelError: the kernel file cannot be read or parsed. DefineError: a size missing,
        unknown or making an array empty, or no iterations. ToolError: bad arguments, data
        larger than the available memory, compiler missing or failing, or the program crashed,
        timed out or printed no result. MachineError: flags the machine file may not give.
        All one line.
    """
    _check_arguments(runs, min_time_s, reps_per_run, cpu, timeout_s)
    parsed = load_c_kernel(path)
    kernel, defaults = parsed.kernel, parsed.defaults
    unknown = sorted(set(defines) - set(kernel.constants))
    if unknown:
        raise DefineError(f"the kernel has no constant '{unknown[0]}' (constants: "
                          f"{', '.join(sorted(kernel.constants)) or 'none'})", file=str(path))
    sizes = {**defaults, **{k: int(v) for k, v in defines.items()}}
    need = array_bytes(kernel, sizes)
    avail = available_memory()
    if avail is not None and need > 0.8 * avail:
        raise ToolError(f"kernel arrays of {need / 2 ** 30:.2f} GiB exceed 80% of the available memory "
                        f"({avail / 2 ** 30:.2f} GiB)")
    iterations = kernel_iterations(kernel, sizes)
    if iterations < 1:
        raise DefineError(f"the kernel does no iterations at {sizes}", file=str(path))
    command, flag_tuple, flags_from = choose_build(compiler, flags, machine, machine_file)
    version = toolchain.tool_version(toolchain.find_compiler(command))
    exe, flag_tuple = _program(kernel, sizes, command, flag_tuple, threads)
    pin = -1 if cpu is None or threads is not None else cpu  # threads: placed by OMP_PLACES/OMP_PROC_BIND
    cmd = [exe, str(reps_per_run or 0), str(runs), str(pin), repr(float(min_time_s))]
    if flush_bytes:
        cmd.append(str(int(flush_bytes)))
    if threads is not None:
        env = gate.program_env(OMP_NUM_THREADS=threads, OMP_PLACES="cores", OMP_PROC_BIND="close")
        stdout = (runner or _run)(cmd, float(timeout_s), env)
    else:
        stdout = (runner or _run)(cmd, float(timeout_s))
    seconds, reps, pinned = parse_output(stdout, runs, reps_per_run)
    notes = ()
    if cpu is not None and not pinned and threads is None:
        notes = (f"could not pin the benchmark to CPU {cpu}: runs may have moved between CPUs",)
    counted = None
    if counters:
        counted, why = _counters(cmd, reps, iterations, timeout_s, threads)
        notes += (why,) if why else ()
    return KernelMeasurement(str(path), dict(sizes), iterations, tuple(s / reps for s in seconds), command,
                             flag_tuple, cpu, reps, pinned, flags_from, version, notes, counted)


def _counters(cmd: list, reps: int, iterations: int, timeout_s: float, threads) -> tuple:
    """``(per-iteration counts or None, note)`` of the program ``cmd`` (:mod:`.counters`)."""
    ok, why = available()
    if not ok:
        return None, why

    def command_for(r):
        return [cmd[0], str(r), "1", *cmd[3:]]
    return count_per_call(command_for, reps, read_topology().vendor, iterations), ""


def _program(kernel, sizes: dict, command: str, flags: tuple, threads) -> tuple:
    """``(executable, flags)``: the timed program, single-core (OpenMP pragmas removed) or, with
    ``threads``, OpenMP (``-fopenmp`` added where the flags lack it)."""
    source = generate_c(kernel, sizes, timed=True, threads=threads is not None)
    if threads is None:
        source = single_core_source(source)
    elif not any(f in ("-fopenmp", "-qopenmp", "-fiopenmp") for f in flags):
        flags = flags + ("-fopenmp",)
    return build_program(source, command, flags), flags


def _run(cmd: list, timeout: float, env: dict | None = None) -> str:
    return toolchain.run_program(cmd, "the kernel benchmark", timeout, env)
