"""``validate --corpus``'s outputs: the JSON document, the text (|error| per data location, per
regime and per corpus family, the worst cases, the notes) and the picture
(:mod:`loopmodel.report.corpus_plot`).

The statistics are those of :mod:`loopmodel.models.accuracy` (median, nearest-rank p90 and
maximum of |predicted / measured min - 1|).
"""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .corpus_plot import plot
from .schema import document as envelope

#: worst cases the text lists
WORST = 10
_EMPTY = {"count": 0, "median_abs_error": None, "p90_abs_error": None, "max_abs_error": None}


def _stats(stats) -> dict:
    return stats.to_mapping() if stats is not None else dict(_EMPTY)


def case_row(r) -> dict:
    """One case of the document (:class:`~loopmodel.workflows.corpus.CorpusResult`; cy/it)."""
    lo, med, hi = r.measured
    return {"name": r.case.kernel.name, "families": list(r.case.kernel.families), "regimes": list(r.regimes),
            "data_location": r.case.level, "defines": dict(r.case.defines), "data_set_B": int(r.case.data_B),
            "predicted_cy_per_it": r.predicted_cy_per_it, "measured_min_cy_per_it": lo,
            "measured_median_cy_per_it": med, "measured_max_cy_per_it": hi, "relative_error": r.error,
            "ecm": r.ecm, "clock_Hz": r.bench.clock_hz, "same_window": _window(r),
            "analysed_as_compiled": r.nest_note or None}


def _window(r) -> dict | None:
    """The same-window prediction of one case (JSON, cy/it and B/s), None without one."""
    if r.window is None or r.window_cy_per_it is None:
        return None
    return {**r.window.bandwidths(), "predicted_cy_per_it": r.window_cy_per_it, "relative_error": r.window_error}


def document(machine: str, run) -> dict:
    """The ``--json`` document of a :class:`~loopmodel.workflows.corpus.CorpusRun`."""
    s = run.summary
    summary = {**_stats(s.overall), "by_level": {k: _stats(v) for k, v in s.by_level.items()},
               "by_regime": {k: _stats(v) for k, v in s.by_regime.items()},
               "by_family": {k: _stats(v) for k, v in run.by_family.items()},
               "same_window": None if run.same_window is None else
               {"stored": _stats(run.same_window[0]), "window": _stats(run.same_window[1])}}
    prov = s.provenance
    return envelope({"machine": str(machine), "seed": int(prov.get("seed", 0)), "quick": bool(prov.get("quick")),
                     "repetitions": int(prov.get("repeat", 0)), "duration_s": run.seconds, "summary": summary,
                     "cases": [case_row(r) for r in run.cases],
                     "skipped": [{"name": n, "data_location": lv, "reason": why} for n, lv, why in run.skipped],
                     "notes": list(run.notes)})


def write_plot(run, path: str, machine: str) -> None:
    """Write the picture of ``run`` to ``path`` (PNG, SVG or PDF by extension).

    Raises:
        LoopmodelError: the file cannot be written (one line); ToolError: no matplotlib.
    """
    plot(run, path, f"validation corpus on {machine}: ECM prediction vs measurement ({len(run.cases)} cases)")


def _pct(x) -> str:
    return "-" if x is None else f"{100 * x:.1f} %"


def stats_table(title: str, first: str, table: dict) -> Table:
    """A table of :class:`~loopmodel.machine.probe_section.ErrorStats` per group: count, median, p90,
    max |error|."""
    t = Table(title=title)
    for col in (first, "cases", "median |error|", "p90 |error|", "max |error|"):
        t.add_column(col, justify="left" if col == first else "right")
    for name, st in table.items():
        t.add_row(name, str(st.count), _pct(st.median), _pct(st.p90), _pct(st.max))
    return t


def worst_table(cases, n: int = WORST) -> Table:
    """The ``n`` cases of largest |error|."""
    t = Table(title=f"the {min(n, len(cases))} largest |error|s (cy/it)")
    for col in ("kernel", "data in", "sizes", "predicted", "measured min", "error", "regimes", "families"):
        t.add_column(col, justify="right" if col in ("predicted", "measured min", "error") else "left")
    for r in sorted(cases, key=lambda r: -abs(r.error))[:n]:
        t.add_row(r.case.kernel.name, r.case.level, " ".join(f"{k}={v}" for k, v in r.case.defines.items()),
                  f"{r.predicted_cy_per_it:.3g}", f"{r.measured[0]:.3g}", f"{100 * r.error:+.1f} %",
                  ", ".join(r.regimes) or "-", ", ".join(r.case.kernel.families))
    return t


def render(machine: str, run, console) -> None:
    """The text of ``validate --corpus`` on ``console`` (rich)."""
    s = run.summary
    if s.overall is None:
        console.print("no case was measured")
    else:
        console.print(f"validation corpus on {machine}: {s.overall.count} case(s), median |error| "
                      f"{_pct(s.overall.median)}, p90 {_pct(s.overall.p90)}, max {_pct(s.overall.max)} "
                      f"({run.seconds:.0f} s)")
        console.print(stats_table("|error| per data location", "data in", s.by_level))
        if run.same_window is not None:
            stored, window = run.same_window
            console.print(f"memory cases against the bandwidth of the same minutes: {window.count} case(s), median "
                          f"|error| {_pct(window.median)}, p90 {_pct(window.p90)}, max {_pct(window.max)} (from the "
                          f"stored model: {_pct(stored.median)}, {_pct(stored.p90)}, {_pct(stored.max)})")
        if s.by_regime:
            console.print(stats_table("|error| per regime (the analysis' tags)", "regime", s.by_regime))
        else:
            console.print("no regime tags: the analysis gave none for these cases")
        console.print(stats_table("|error| per corpus family", "family", run.by_family))
        console.print(worst_table(run.cases))
    for n in run.notes:
        console.print(escape(f"note: {n}"))
