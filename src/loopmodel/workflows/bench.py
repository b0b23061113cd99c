"""``bench``: a C kernel measured on this host (benchmark mode: pinned, min-of-K; one size, a
sweep of sizes, or the scaling curve of one size over OpenMP thread counts).

The measurement itself is :func:`loopmodel.measure.bench.run_bench` (kerncraft-tool-paper.txt
§2.6; statistics of roofline-measurement-thesis.txt §3.4).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses

from ..errors import DefineError
from ..fileio.c_kernel import parse_kernel_file
from ..fileio.defines import Sweep, define_name, sweep
from ..fileio.host_models import machine_notes
from ..fileio.kernel_yaml import YAML_SUFFIXES
from ..fileio.machine_files import load_machine
from ..measure import bench as measure_bench
from ..measure.stability import BLOCKS, ROUNDS, SPREAD_S, TOLERANCE
from .measure import parse_threads
from .inputs import kernel_reference, size_defines
from .options import function_option, include_option, option


@dataclass(frozen=True)
class BenchOptions:
    """``bench``'s options: sizes, the machine model whose compiler and flags to use, and how
    the kernel is run."""

    define: tuple = option((), "size constant (value or start:stop[:step] for a sweep)", "-D", "--define",
                           metavar="NAME=VALUE")
    function: str | None = function_option()
    include: tuple = include_option()
    machine: str | None = option(None, "machine model whose compiler and flags to use (default: the host's "
                                       "-O3 -march=native); 'host' for this host's probe", "-m", "--machine")
    repeat: int = option(10, "runs of >= 10 ms each (default 10; min-of-K)", "--repeat", "-r", type=int)
    cache: str = option("warm", "data warm (default: a warm-up call, then runs of calibrated calls) or cold (a "
                                "buffer of 4x the last cache streamed before each run of one call)", "--cache",
                        choices=("warm", "cold"))
    cpu: int = option(0, "CPU to pin the benchmark to (default 0)", "--cpu", type=int)
    threads: str | None = option(
        None, "share the outermost loop among N OpenMP threads (OMP_PLACES=cores, OMP_PROC_BIND=close, first touch "
              "in parallel); a range (1:N, 1,2,4) gives a scaling curve whose --json 'loopmodel scaling --measured' "
              "reads; default: one pinned thread", "--threads", "-t", metavar="N|1:N")
    timeout: float = option(120, "per size (default 120 s)", "--timeout", metavar="SECONDS", type=float)
    no_cache: bool = option(False, "measure again instead of reading the per-user cache", "--no-cache")
    blocks: int = option(BLOCKS, f"take the runs in N blocks spread over time (separate processes; default {BLOCKS}); "
                                 "when the fastest runs of the two fastest blocks differ by more than --tolerance, "
                                 f"measure the blocks again (up to {ROUNDS} rounds) and say whether the minimum is "
                                 "confirmed", "--blocks", metavar="N", type=int)
    tolerance: float = option(TOLERANCE, f"relative agreement asked of the two fastest blocks (default {TOLERANCE:g} "
                                         "= 3 %%)", "--tolerance", metavar="FRACTION", type=float)
    spread_s: float = option(SPREAD_S, "the starts of the first round's blocks span at least this many seconds (pauses "
                                       f"between blocks; default {SPREAD_S:g} s; 0: blocks back to back); a fresh "
                                       "measurement is also compared with the last one of the same case, and "
                                       "measured once more where the two differ by more than --tolerance",
                             "--spread-s", metavar="SECONDS", type=float)


@dataclass(frozen=True)
class BenchRun:
    """The measurements of ``bench``: one :class:`~loopmodel.measure.bench.BenchResult` per size
    and thread count (sizes outer), and whether they form a scaling curve (``curve``: several
    thread counts of one size)."""

    results: tuple
    curve: bool = False


def c_kernel_points(path: str, defines, command: str) -> Sweep:
    """The size points of a C kernel from ``-D`` texts, as a lazy
    :class:`~loopmodel.fileio.defines.Sweep` (``len``, indexing, iteration).

    Raises:
        DefineError: a YAML kernel description (no code to run), or a constant without a value.
        KernelError: an unreadable or unsupported kernel.
    """
    return kernel_points(path, defines, command)[0]


def kernel_points(path: str, defines, command: str, own_only: bool = False) -> tuple:
    """``(points, ignored)``: the size points of a C kernel from ``-D`` texts, as in
    :func:`c_kernel_points`; with ``own_only`` (commands taking several kernels) only the
    constants the kernel declares, ``ignored`` naming the others (in ``-D`` order, each once).

    Raises:
        DefineError, KernelError: as :func:`c_kernel_points`.
    """
    if str(path).lower().endswith(YAML_SUFFIXES):
        raise DefineError(f"{command} needs a C kernel to run; a YAML kernel description has no code", file=path)
    kernel, defaults = parse_kernel_file(path)
    defines, ignored = list(defines), ()
    if own_only:
        names = [define_name(d) for d in defines]
        ignored = tuple(dict.fromkeys(n for n in names if n not in kernel.constants))
        defines = [d for d, n in zip(defines, names) if n in kernel.constants]
    points = sweep(defines, defaults)
    missing = kernel.free_constants(points[0])  # every point gives the same constants
    if missing:
        raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size>", file=path)
    return points, ignored


def ignored_defines(defines, ignored: dict) -> list:
    """Notes on the ``-D`` names that kernels do not declare (``ignored``: kernel -> names, from
    :func:`kernel_points`), one per kernel.

    Raises:
        DefineError: a ``-D`` name that no kernel declares (a typo), naming it.
    """
    for text in defines:
        name = define_name(text)
        if ignored and all(name in names for names in ignored.values()):
            raise DefineError(f"-D {name}: no kernel declares '{name}'")
    return [f"{kernel}: does not declare {', '.join(names)}: -D ignored for it" for kernel, names in ignored.items()
            if names]


def thread_counts(text: str | None, n_points: int) -> list:
    """``[None]`` (one pinned thread) or the OpenMP thread counts of ``--threads`` (N, 1:N, 1,2,4).

    Raises:
        DefineError: a bad list, or a range of counts with more than one size.
    """
    if text is None:
        return [None]
    counts = parse_threads(text)
    if min(counts) < 1:
        raise DefineError(f"--threads must be >= 1, got {text}")
    if len(counts) > 1 and n_points > 1:
        raise DefineError("--threads with several counts takes one size (the scaling curve of one kernel)")
    return counts


def run(kernel: str, options: BenchOptions) -> BenchRun:
    """Measure the C kernel file ``kernel`` at each size of ``options.define`` (and each thread
    count of ``options.threads``).

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, ``--repeat`` < 1, ``--timeout`` <= 0,
            ``--blocks`` < 1, ``--tolerance`` outside (0, 1), ``--spread-s`` outside [0, 60], thread counts, machine, compiler, run).
    """
    kernel = kernel_reference(kernel, options)
    points = c_kernel_points(kernel, size_defines(options), "bench")
    if options.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {options.repeat}")
    if not options.timeout > 0:
        raise DefineError(f"--timeout must be > 0 s, got {options.timeout}")
    if options.blocks < 1:
        raise DefineError(f"--blocks must be >= 1, got {options.blocks}")
    if not 0 <= options.spread_s <= 60:
        raise DefineError(f"--spread-s must be between 0 and 60 s, got {options.spread_s}")
    if not 0 < options.tolerance < 1:
        raise DefineError(f"--tolerance must be a fraction in (0, 1) (0.03 = 3 %), got {options.tolerance}")
    counts = thread_counts(options.threads, len(points))
    machine = None if options.machine is None else load_machine(options.machine)
    results = [measure_bench.run_bench(kernel, pt, machine, options.repeat, 0.01, options.cpu, not options.no_cache,
                                       options.timeout, options.machine, cold=options.cache == "cold", threads=n,
                                       blocks=options.blocks, tolerance=options.tolerance, spread_s=options.spread_s)
               for pt in points for n in counts]
    extra = machine_notes(options.machine, machine)
    if extra:
        results = [dataclasses.replace(r, notes=extra + tuple(r.notes)) for r in results]
    return BenchRun(tuple(results), len(counts) > 1)
