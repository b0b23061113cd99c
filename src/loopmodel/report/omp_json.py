"""The JSON document of ``loopmodel omp --json`` and the notes it shares with the table
(:mod:`loopmodel.report.omp_report`); the shape is declared in
:mod:`loopmodel.report.doctypes.omp`."""
from __future__ import annotations

from ..models.omp_program import measured_iterations
from .schema import document

#: what every ``loopmodel omp`` prediction rests on (benchmark-based-coherence-model.txt §III)
MODEL_NOTE = ("model: MESI states (M,E,S,I) of the cache lines tracked across phases, each phase's memory time by "
              "Algorithm 1 of Putigny et al. from the machine model's transition timings, overlapped with the in-core time "
              "of its loop (ECM T_OL); a parallel phase adds the measured fork/join overhead")


def omp_notes(rows, extra_notes: tuple = ()) -> list:
    """The notes of the table and of the JSON document: ``extra_notes`` (e.g. which probe ``-m
    host`` rests on), the predictions' notes, :data:`MODEL_NOTE` and, for a measurement, how
    it was made."""
    notes = [*extra_notes, *(n for r in rows for n in r.prediction.notes), MODEL_NOTE]
    if rows and rows[0].measured is not None:
        notes.append("measured: arrays flushed from the caches before each execution, phases timed one by one "
                     f"with omp_get_wtime, min over repetitions, OMP_WAIT_POLICY={rows[0].measured.wait_policy}; "
                     "error = predicted / measured - 1")
    return list(dict.fromkeys(notes))


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


def to_json(rows, program, machine_name: str, extra_notes: tuple = ()) -> dict:
    """The JSON document of ``loopmodel omp --json`` for ``rows``
    (:class:`~loopmodel.models.omp_program.OmpRow`) of ``program``
    (:class:`~loopmodel.ir.omp.OmpProgram`): ``{"schema_version", "loopmodel_version",
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
    return document({"program": program.source, "machine": machine_name, "notes": omp_notes(rows, extra_notes),
                     "threads": out})
