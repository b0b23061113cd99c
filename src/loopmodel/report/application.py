"""Rendering of application (loop-sequence) predictions: seconds per application iteration."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .schema import document


def to_dict(pred) -> dict:
    """JSON document; times in seconds (``_s``), ECM in cy/CL."""
    return document({
        "application": pred.spec.name, "file": pred.spec.source, "machine": pred.machine.name,
        "clock_Hz": pred.machine.clock, "model": pred.model, "cores": list(pred.cores),
        "total_s": {str(n): t for n, t in pred.total_seconds.items()},
        "kernels": [{
            "name": kp.kernel.name, "file": kp.kernel.path, "count": kp.kernel.count,
            "defines": dict(kp.kernel.defines), "placement": kp.kernel.placement,
            "iterations_per_invocation": kp.iterations, "units_cl_per_invocation": kp.units,
            "incore_source": kp.analysis.incore.source, "T_OL_cy_per_cl": kp.analysis.ecm.T_OL,
            "T_nOL_cy_per_cl": kp.analysis.ecm.T_nOL, "dependency_cy_per_it": kp.analysis.incore.dependency,
            "data_location": kp.analysis.location, "selected_T_ECM_cy_per_cl": kp.analysis.ecm.selected,
            "notation": kp.analysis.ecm.notation(),
            "time_s": {str(n): t for n, t in kp.seconds.items()},
            "saturation_cores": kp.scaling.saturation_cores,
        } for kp in pred.kernels],
        "notes": list(pred.notes),
    })


def render(pred, console) -> None:
    m = pred.machine
    console.print(escape(f"{pred.spec.name} on {m.name} at {m.clock / 1e9:g} GHz ({pred.model} model)"))
    one = pred.cores[0]
    t = Table(title=f"Kernels ({one} core{'s' if one > 1 else ''}; times per application iteration)",
              title_justify="left")
    for col in ("kernel", "count", "it/call", "in-core", "ECM \\[cy/CL]", "data in", "T_ECM \\[cy/CL]",
                "time \\[ms]", "share"):
        t.add_column(col, justify="left" if col in ("kernel", "in-core", "ECM \\[cy/CL]") else "right")
    total = pred.total_seconds[one]
    for kp in pred.kernels:
        a = kp.analysis
        src = a.incore.source + (" (latency-bound)" if a.incore.dependency else "")
        t.add_row(kp.kernel.name, str(kp.kernel.count), f"{kp.iterations:.4g}", src, a.ecm.notation().replace(
            " cy/CL", ""), a.location, f"{a.ecm.selected:.2f}", f"{1e3 * kp.seconds[one]:.3f}",
            f"{100 * kp.seconds[one] / total:.1f} %" if total else "-")
    t.add_row("total", "", "", "", "", "", "", f"{1e3 * total:.3f}", "100 %")
    console.print(t)
    if len(pred.cores) > 1:
        s = Table(title="Runtime per application iteration \\[ms] by core count", title_justify="left")
        s.add_column("cores", justify="right")
        s.add_column("total", justify="right")
        s.add_column("speedup", justify="right")
        for kp in pred.kernels:
            s.add_column(kp.kernel.name, justify="right")
        for n in pred.cores:
            s.add_row(str(n), f"{1e3 * pred.total_seconds[n]:.3f}", f"{pred.total_seconds[one] / pred.total_seconds[n]:.2f}",
                      *[f"{1e3 * kp.seconds[n]:.3f}" for kp in pred.kernels])
        console.print(s)
    for n in pred.notes:
        console.print(escape(f"note: {n}"), style="dim")
