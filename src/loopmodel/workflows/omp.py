"""``omp``: an OpenMP program predicted (and optionally measured) per thread count with the
coherence-aware model of benchmark-based-coherence-model.txt.

:func:`run` reads the program and the machine (a model with a measured ``coherence``
section) and returns an :class:`OmpResult`: one :class:`~loopmodel.models.omp_program.OmpRow`
per thread count (:func:`analyse`), rendered by :mod:`loopmodel.report.omp_report` (table),
:mod:`loopmodel.report.omp_json` (JSON) and :mod:`loopmodel.report.omp_plot` (picture).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import importlib

from .. import toolchain
from ..errors import DefineError, LoopmodelError, ModelError
from ..fileio.c_kernel import parse_kernel
from ..fileio.defines import count_list, one_point, sweep
from ..fileio.host_models import machine_notes
from ..fileio.omp_program import read_omp_program
from ..ir.omp import OmpProgram
from ..machine.model import MachineModel
from ..measure.omp_bench import build_harness, measure_program
from ..measure.topology import allowed_cpus
from ..models.coherence_timing import Timing
from ..models.omp_program import OmpRow, predict_program
from .analysis import analytic_incore, compiler_machine
from .inputs import machine_model, machine_name
from .options import option


@dataclass(frozen=True)
class OmpOptions:
    """``omp``'s options."""

    threads: str | None = option(None, "thread counts, e.g. 1:4, 1,2,4 (default: the thread counts of the machine "
                                       "model's coherence table, measured or estimated)",
                                 "--threads", "-t", metavar="LIST")
    define: tuple = option((), "size constant; a range (e.g. N=1000:1000000:1000) is a size study: one row "
                                   "(or with --json one JSON document) per size point, streamed", "-D", "--define",
                           metavar="NAME=VALUE")
    measure: bool = option(False, "also compile and run the program (pinned, flushed, min-of-K per phase)",
                           "--measure")
    min_time: float = option(0.2, "--measure: repeat each thread count for at least this long (default 0.2 s)",
                             "--min-time", type=float, metavar="SECONDS")
    compiler: str = option("gcc", "C compiler for --measure (default gcc)", "--compiler")


@dataclass(frozen=True)
class OmpResult:
    """``omp``'s result: ``rows`` (:class:`~loopmodel.models.omp_program.OmpRow`, in the order of
    the thread counts), the ``program`` (:class:`~loopmodel.ir.omp.OmpProgram`), the ``machine``
    model and its ``machine_name`` (what ``-m`` named), and the machine's ``notes`` (which probe
    ``-m host`` rests on)."""
    rows: tuple
    program: OmpProgram
    machine: MachineModel
    machine_name: str
    notes: tuple


def check(options: OmpOptions) -> None:
    """The checks of ``options`` that need no input (before any output file is checked).

    Raises:
        DefineError: ``min_time`` not above 0 (one line).
    """
    if options.min_time <= 0:
        raise DefineError(f"--min-time must be > 0, got {options.min_time}")


def run(program: str, machine, options: OmpOptions) -> OmpResult:
    """Predict the OpenMP program of the file ``program`` (C or YAML) on ``machine`` (a name or
    path, a :class:`loopmodel.Machine` or a ``MachineModel``, with a ``coherence`` section) for
    ``options.threads`` (default: the thread counts of the section); with
    ``options.measure`` also compile and run it.

    Raises:
        DefineError: a bad ``min_time``, size or thread list. KernelError: an unreadable or
            unsupported program. MachineError: unknown machine. ModelError: no coherence
            section, or a thread count outside it. ToolError: compiler missing, or the
            measurement failed (one line each).
    """
    check(options)
    prog = read_omp_program(program, one_point(size_points(options), "omp"))
    model = machine_model(machine)
    name = machine_name(machine)
    if options.measure:
        toolchain.chosen_compiler(options.compiler)
    threads = thread_counts(model, name, options.threads)
    rows = analyse(prog, model, threads, machine_name=name, measure=options.measure, compiler=options.compiler,
                   min_time_s=options.min_time)
    return OmpResult(rows, prog, model, name, machine_notes(name, model) + coherence_notes(model))


def coherence_notes(machine: MachineModel) -> tuple:
    """The note that the model's transition timings are estimated, not measured: from the file's
    ``provenance`` entry ``coherence`` where it has one, else from the table's own first note
    (an estimated table's notes start with ``ESTIMATED``,
    :mod:`loopmodel.models.coherence_estimate`); none for a measured table."""
    entry = machine.provenance.get("coherence")
    if entry is not None:
        return (f"coherence: the transition timings are estimated from the model's figures, not measured "
                f"({entry.reason})",) if entry.estimated else ()
    notes = machine.coherence.notes if machine.coherence is not None else ()
    return (notes[0],) if notes and notes[0].startswith("ESTIMATED") else ()


def sizes_workflow():
    """:mod:`loopmodel.workflows.omp_sizes` (``omp`` over a ``-D`` range), loaded when a range is
    given: it computes with numpy, whose import a single size need not pay for."""
    return importlib.import_module("loopmodel.workflows.omp_sizes")


def size_points(options: OmpOptions):
    """The size points of ``options.define`` (a :class:`~loopmodel.fileio.defines.Sweep`: one
    point, or the product of ``-D`` ranges).

    Raises:
        DefineError: a malformed ``-D`` (one line).
    """
    return sweep(list(options.define), {})


def thread_counts(machine: MachineModel, machine_name: str, text: str | None) -> list:
    """The thread counts of ``--threads`` (default: those of the coherence section, which a probe
    measures at 1..N and an estimate gives at 1, 2, 4, ... and the cores), each within the
    section's range.

    Raises:
        DefineError: an unreadable list. ModelError: no coherence section, or a count outside it.
    """
    threads = count_list(text, "--threads") if text else None
    table = coherence_timing(machine, machine_name).table
    top = table.threads[-1]
    threads = threads or list(table.threads)
    for t in threads:
        if not 1 <= t <= top:
            raise ModelError(f"--threads {t}: the coherence table of '{machine_name}' covers 1..{top} threads")
    return threads


def coherence_timing(machine: MachineModel, machine_name: str) -> Timing:
    """The timing functions of ``machine``'s ``coherence`` section.

    Raises:
        ModelError: the model has no ``coherence`` section (one line telling how to measure it).
    """
    if machine.coherence is None:
        raise ModelError(f"machine model '{machine_name}' has no coherence section (transition timings); "
                         "measure this host with `loopmodel machine probe --coherence` and use -m host")
    return Timing(machine.coherence, int(machine.cacheline_size))


def _declarations(program: OmpProgram) -> str:
    lines = [f"{a.ctype} {a.declarator};" for a in program.arrays.values()]
    return "\n".join(lines + [f"{ctype} {name};" for name, ctype in program.scalars]) + "\n"


def _core_per_iteration(phase, kernel, machine: MachineModel) -> float | None:
    """In-core cycles per iteration of ``kernel`` (the phase's loop nest), or None if unknown.

    The analytic in-core model (kerncraft-tool-paper.txt §2.3, ECM T_OL) of one iteration.
    A reduction is kept in source order (scalar, latency-bound) unless the loop has an OpenMP
    ``simd`` directive, which lets the compiler reassociate it; gcc then keeps one vector
    accumulator, whose latency chain bounds each SIMD-width group of iterations (the analytic
    model's bound of a reassociated reduction; a multiply-add update is an FMA chain).
    """
    elem = kernel.largest_element_size
    per_cl = machine.cacheline_size / elem
    seq = analytic_incore(kernel, machine, per_cl, True, False, "OpenMP loop without simd: source order")
    if not phase.simd:
        return None if seq.T_OL is None else seq.T_OL / per_cl
    vec = analytic_incore(kernel, machine, per_cl, True, True, "OpenMP simd reduction")
    return None if vec.T_OL is None else vec.T_OL / per_cl  # its one vector accumulator's chain included


def phase_core_seconds(program: OmpProgram, machine: MachineModel) -> tuple:
    """``(phase -> in-core seconds per iteration of its loop nest or None, notes)``: the
    analytic in-core model of each phase's loop nest (:func:`_core_per_iteration`) at the
    machine's clock. A phase without C code (YAML) or whose nest the kernel front end does not
    take (e.g. sibling inner loops) has None and a note: its time is its memory time alone."""
    machine = compiler_machine(machine)[0]  # the SIMD width gcc with the machine file's flags uses
    out, notes = {}, []
    decls = _declarations(program)
    for phase, _ in program.phases():
        if phase in out:
            continue
        out[phase] = None
        if not phase.loop_code:
            notes.append(f"line {phase.line}: no C code, so no in-core time: memory time only")
            continue
        try:
            kernel, _ = parse_kernel(decls + phase.loop_code, f"{program.source}:{phase.line}")
            cy = _core_per_iteration(phase, kernel, machine)
        except LoopmodelError as exc:
            notes.append(f"line {phase.line}: no in-core time ({exc.message}): memory time only")
            continue
        out[phase] = None if cy is None else cy / machine.clock
        if cy is None:
            notes.append(f"line {phase.line}: the machine model lacks an in-core figure: memory time only")
        elif phase.simd and kernel.recurrences:
            notes.append(f"line {phase.line}: the simd reduction is timed as gcc compiles it (one vector "
                         "accumulator: latency / SIMD lanes per iteration); compilers that keep several "
                         "partial sums run it faster in cache")
    return out, tuple(dict.fromkeys(notes))


def _cpus(timing: Timing) -> tuple:
    """The CPUs the transitions were measured on, else those this process may use."""
    return tuple(timing.table.cpus) if timing.table.cpus else allowed_cpus()


def analyse(program: OmpProgram, machine: MachineModel, threads, *, machine_name: str = "",
            measure: bool = False, compiler: str = "gcc", min_time_s: float = 0.2) -> tuple:
    """Predict ``program`` for every thread count in ``threads`` and, with ``measure``, run it.

    Args:
        program: :class:`~loopmodel.ir.omp.OmpProgram`.
        machine: a model with a ``coherence`` section (measured on this host for ``measure``).
        threads: thread counts (ints >= 1), each within the measured ones.
        machine_name: what ``-m`` named (for messages).
        measure: also run the program (:func:`loopmodel.measure.omp_bench.measure_program`),
            pinned to the CPUs the transitions were measured on, each thread count for at least
            ``min_time_s`` seconds.
    Returns:
        tuple of :class:`~loopmodel.models.omp_program.OmpRow`, in the order of ``threads``.
    Raises:
        ModelError: no coherence section, or a thread count outside the measured ones.
        ToolError: the measurement failed (compiler, run).
    """
    timing = coherence_timing(machine, machine_name)
    top = timing.table.threads[-1]
    for t in threads:
        if not 1 <= t <= top:
            raise ModelError(f"--threads {t}: the coherence table of '{machine_name}' covers 1..{top} threads")
    core, core_notes = phase_core_seconds(program, machine)
    preds = [predict_program(program, timing, t, core) for t in threads]
    preds = [dataclasses.replace(p, notes=p.notes + core_notes) for p in preds]
    measured = [None] * len(preds)
    if measure:
        exe = build_harness(program, compiler)
        measured = [measure_program(program, t, _cpus(timing), min_time_s=min_time_s, compiler=compiler,
                                    executable=exe) for t in threads]
    base = preds[0].total_seconds
    mbase = measured[0].total_seconds if measured[0] else None
    return tuple(OmpRow(p.threads, p, m, base / p.total_seconds if p.total_seconds else 1.0,
                        mbase / m.total_seconds if m and m.total_seconds else None)
                 for p, m in zip(preds, measured))
