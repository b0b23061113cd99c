"""An OpenMP program predicted (and optionally measured) per thread count with the
coherence-aware model of benchmark-based-coherence-model.txt: the library side of
``loopmodel omp``.

:func:`analyse_omp` takes a program model and a machine model with a measured ``coherence``
section and returns one :class:`OmpRow` per thread count; :func:`to_json` renders them.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import ModelError
from ..ir.omp import OmpProgram
from ..machine.model import MachineModel
from ..models.coherence_timing import Timing
from ..models.omp_program import ProgramPrediction, measured_iterations, omp_notes, predict_program


@dataclass(frozen=True)
class OmpRow:
    """One thread count: ``prediction`` (:class:`~loopmodel.models.omp_program.ProgramPrediction`),
    ``measured`` (:class:`~loopmodel.measure.omp_bench.ProgramMeasurement` or None),
    ``speedup`` (predicted time on the smallest thread count / this one),
    ``measured_speedup`` (same for the measurement, or None)."""
    threads: int
    prediction: ProgramPrediction
    measured: object = None
    speedup: float = 1.0
    measured_speedup: float | None = None


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
    accumulator, so the reduction's latency chain bounds each SIMD-width group of iterations
    (dependency latency / lanes), and a multiply-add update becomes an FMA chain
    (``vfmadd231pd``: the FMA latency).
    """
    from .analysis import analytic_incore

    elem = kernel.largest_element_size
    per_cl = machine.cacheline_size / elem
    seq = analytic_incore(kernel, machine, per_cl, True, False, "OpenMP loop without simd: source order")
    if not phase.simd:
        return None if seq.T_OL is None else seq.T_OL / per_cl
    vec = analytic_incore(kernel, machine, per_cl, True, True, "OpenMP simd reduction")
    if vec.T_OL is None:
        return None
    chain = seq.dependency or 0.0
    if chain and vec.operations.get("FMA") and "FMA" in machine.in_core.latency:
        chain = max(chain, machine.in_core.latency["FMA"])  # the vector chain is contracted to FMAs
    return max(vec.T_OL / per_cl, chain / max(vec.lanes, 1))


def phase_core_seconds(program: OmpProgram, machine: MachineModel) -> tuple:
    """``(phase -> in-core seconds per iteration of its loop nest or None, notes)``: the
    analytic in-core model of each phase's loop nest (:func:`_core_per_iteration`) at the
    machine's clock. A phase without C code (YAML) or whose nest the kernel front end does not
    take (e.g. sibling inner loops) has None and a note: its time is its memory time alone."""
    from ..errors import LoopmodelError
    from ..fileio.c_kernel import parse_kernel

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
    if timing.table.cpus:
        return tuple(timing.table.cpus)
    from ..measure.topology import allowed_cpus

    return allowed_cpus()


def analyse_omp(program: OmpProgram, machine: MachineModel, threads, *, machine_name: str = "",
                measure: bool = False, compiler: str = "gcc", min_time_s: float = 0.2,
                measure_runner=None) -> tuple:
    """Predict ``program`` for every thread count in ``threads`` and, with ``measure``, run it.

    Args:
        program: :class:`~loopmodel.ir.omp.OmpProgram`.
        machine: a model with a ``coherence`` section (measured on this host for ``measure``).
        threads: thread counts (ints >= 1), each within the measured ones.
        measure: also run the program (:func:`loopmodel.measure.omp_bench.measure_program`),
            pinned to the CPUs the transitions were measured on.
    Returns:
        tuple of :class:`OmpRow`, in the order of ``threads``.
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
        from ..measure.omp_bench import build_harness, measure_program

        exe = None if measure_runner else build_harness(program, compiler)
        measured = [measure_program(program, t, _cpus(timing), min_time_s=min_time_s, compiler=compiler,
                                    executable=exe, runner=measure_runner) for t in threads]
    base = preds[0].total_seconds
    mbase = measured[0].total_seconds if measured[0] else None
    return tuple(OmpRow(p.threads, p, m, base / p.total_seconds if p.total_seconds else 1.0,
                        mbase / m.total_seconds if m and m.total_seconds else None)
                 for p, m in zip(preds, measured))


def _phase_json(ph, measured) -> dict:
    d = {"index": ph.index, "line": ph.line, "kind": ph.kind, "label": ph.label, "iteration": ph.iteration,
         "time_s": ph.seconds, "memory_time_s": ph.memory_seconds, "core_time_s": ph.core_seconds,
         "bound": ph.bound, "overhead_time_s": ph.overhead_seconds,
         "transitions": [{"transition": t.transition, "benchmark": t.benchmark, "time_s": t.seconds,
                          "share": t.share} for t in ph.transitions],
         "hints": list(ph.hints), "notes": list(ph.notes)}
    if measured is not None:
        m = measured.phases[ph.index]
        d["measured"] = {"time_s": m.seconds, "median_time_s": m.median_seconds, "spread": m.spread,
                         "error": ph.seconds / m.seconds - 1 if m.seconds > 0 else None}
    return d


def _repeats_json(pred, measured, program) -> list:
    out = [{"line": rp.line, "count": rp.count, "time_s_per_it": list(rp.seconds)} for rp in pred.repeats]
    if measured is not None:
        for d, m in zip(out, measured_iterations(program, measured)):
            d["measured_time_s_per_it"] = list(m)
    return out


def to_json(rows, program: OmpProgram, machine_name: str, extra_notes: tuple = ()) -> dict:
    """The JSON document of ``loopmodel omp --json``: ``{"schema_version", "loopmodel_version",
    "program", "machine", "notes", "threads": [{"threads", "total_time_s", "speedup", "phases": [...],
    "repeats", "measured"?}]}``; phases in execution order, times (``_s``) for one execution after
    the preceding phases; ``share`` a fraction; ``error`` = predicted / measured - 1; ``notes``
    those the table prints (:func:`omp_notes`)."""
    out = []
    for r in rows:
        p = r.prediction
        d = {"threads": r.threads, "total_time_s": p.total_seconds, "speedup": r.speedup,
             "phases": [_phase_json(ph, r.measured) for ph in p.phases],
             "repeats": _repeats_json(p, r.measured, program)}
        if r.measured is not None:
            m = r.measured
            d["measured"] = {"total_time_s": m.total_seconds, "speedup": r.measured_speedup,
                             "repetitions": m.repetitions, "cpus": list(m.cpus),
                             "compiler_flags": list(m.compiler_flags), "omp_wait_policy": m.wait_policy,
                             "error": p.total_seconds / m.total_seconds - 1 if m.total_seconds > 0 else None}
        out.append(d)
    from ..report.schema import document

    return document({"program": program.source, "machine": machine_name, "notes": omp_notes(rows, extra_notes),
                     "threads": out})
