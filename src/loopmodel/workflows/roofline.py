"""``roofline``: measured Roofline points of one or more C kernels on this host, with the
model's (roofline-measurement-thesis.txt §2, §4): for each kernel and size, the arithmetic
intensity from the model's traffic to the level the data come from, the measured FLOP/s with
the spread over the runs, and the model's predicted FLOP/s at the same intensity; the roofs
from the machine model (:func:`loopmodel.measure.roofline.roofs`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import DefineError
from ..fileio.host_models import machine_notes
from ..fileio.machine_files import load_machine
from ..measure import bench as measure_bench
from ..measure.roofline import RooflinePoint, roofs
from .bench import ignored_defines, kernel_points
from .options import option
from .validate import data_level, kernel_analyzer


@dataclass(frozen=True)
class RooflineOptions:
    """``roofline``'s options: the sizes (each kernel takes the ones it declares, the others are
    ignored for it with a note; one that no kernel declares is an error) and how the kernels are
    run."""

    define: tuple = option((), "size constant (value or start:stop[:step]); each kernel takes the ones it declares",
                           "-D", "--define", metavar="NAME=VALUE")
    repeat: int = option(10, "runs per size (default 10)", "--repeat", "-r", type=int)
    cache: str = option("warm", "data warm (default), cold, or both (two series per kernel, shown apart)", "--cache",
                        choices=("warm", "cold", "both"))
    cpu: int = option(0, "CPU to pin the benchmark to (default 0)", "--cpu", type=int)
    no_cache: bool = option(False, "measure again instead of reading the per-user cache", "--no-cache")


@dataclass(frozen=True)
class RooflineRun:
    """The result of ``roofline``: the measured
    :class:`~loopmodel.measure.roofline.RooflinePoint` s (kernels in order, warm before cold),
    the roofs of the machine model, the notes of the measurement, and the machine model."""

    points: tuple
    roofs: tuple
    notes: tuple
    machine: object


def check(options: RooflineOptions) -> None:
    """The checks of ``options`` that come before anything else (so before the output files).

    Raises:
        DefineError: ``--repeat`` < 1 (one line).
    """
    if options.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {options.repeat}")


def measure_points(path: str, machine, points, repeat: int = 10, cpu: int | None = 0, use_cache: bool = True,
                   machine_file: str | None = None, cold: bool = False) -> tuple:
    """``(RooflinePoint list, notes)`` for a kernel at each set of sizes (``machine``: the model).

    Raises:
        LoopmodelError: a kernel the model or the benchmark cannot take (one line).
    """
    # cold: one sweep from memory (the caches flushed), so the single-sweep traffic
    kernel, analyzer = kernel_analyzer(path, machine, machine_file, use_cache, "single" if cold else "repeated")
    if not kernel.flops_per_iteration:
        return [], (f"{path}: no floating-point operations, so no arithmetic intensity: left out",)
    names = [lv.level for lv in machine.memory_hierarchy]
    out = []
    for pt in points:
        res = analyzer.run(pt)
        level = names[-1] if cold else data_level(res)  # cold: every line comes from memory
        d = names.index(level)
        if d == 0:  # data in L1: the bytes loaded and stored by the core
            per_it = kernel.bytes_loaded_per_iteration() + kernel.bytes_stored_per_iteration()
        else:
            per_it = res.traffic.levels[d - 1].bytes / res.traffic.iterations_per_unit
        flops = kernel.flops_per_iteration
        b = measure_bench.run_bench(path, pt, machine, repeat, 0.01, cpu, use_cache, machine_file=machine_file,
                                    cold=cold)
        t_ecm = res.ecm.T_ECM.get(level)
        predicted = flops * res.traffic.iterations_per_unit * machine.clock / t_ecm if t_ecm else float("nan")
        ai = flops / per_it if per_it > 0 else float("inf")
        out.append(RooflinePoint(path, dict(pt), level, ai, b.figures()["FLOP_per_s"], predicted, b.cache))
    return out, ()


def run(kernels, machine: str, options: RooflineOptions) -> RooflineRun:
    """Measure each C kernel file of ``kernels`` at its sizes on this host, whose model is
    ``machine`` (a name, a file or ``"host"``), warm, cold or both (``options.cache``).

    Raises:
        LoopmodelError: one-line user errors (``--repeat``, a kernel, its sizes, the machine, the
            compiler, a run).
    """
    check(options)
    plan = [(k, kernel_points(k, options.define, "roofline", own_only=True)) for k in kernels]
    skipped = ignored_defines(options.define, {k: ignored for k, (_, ignored) in plan})
    plan = [(k, pts) for k, (pts, _) in plan]
    model = load_machine(machine)
    points, notes = [], list(machine_notes(machine, model)) + skipped
    modes = (False, True) if options.cache == "both" else (options.cache == "cold",)
    for path, pts in plan:
        for cold in modes:
            got, why = measure_points(path, model, pts, options.repeat, options.cpu, not options.no_cache, machine,
                                      cold)
            points += got
            notes += [n for n in why if n not in notes]
    return RooflineRun(tuple(points), tuple(roofs(model)), tuple(notes), model)
