"""Rendering of multicore scaling predictions (text table, JSON, plot).

Units: performance in it/s (and FLOP/s, LUP/s where the kernel defines them), times in
cy/CL; the measured comparison gives the relative error (predicted / measured - 1).
"""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ..units import format_si
from .figures import pyplot, save
from .schema import document


def to_dict(results: list, analysis, measured: dict | None = None, fit: tuple | None = None) -> dict:
    """One JSON document: the single-core ECM basis, one curve per model, the measurement."""
    k = analysis.kernel
    doc = {
        "kernel": k.source, "machine": analysis.machine.name, "defines": dict(analysis.defines),
        "clock_Hz": analysis.machine.clock,
        "single_core_T_ECM_cy_per_cl": results[0].single_core_cy_per_cl,
        "memory_busy_cy_per_cl": results[0].memory_busy_cy_per_cl,
        "iterations_per_cl": results[0].it_per_cl,
        "flops_per_it": k.flops_per_iteration,
        "cores_per_numa_domain": results[0].cores_per_domain,
        "curves": [],
    }
    for r in results:
        doc["curves"].append({
            "model": r.model, "placement": r.placement, "data_in": r.location, "p0": r.p0,
            "saturation_cores": r.saturation_cores, "saturated_per_domain_it_s": r.saturated_it_per_s,
            "points": [{"cores": p.cores, "numa_domains": p.domains, "data_in": p.location,
                        "T_ECM_cy_per_cl": p.core_cy_per_cl,
                        "memory_busy_cy_per_cl": p.memory_busy_cy_per_cl, "it_s": p.it_per_s,
                        "flop_s": p.it_per_s * k.flops_per_iteration, "rate_cl_per_cy": p.rate_cl_per_cy,
                        "utilization": p.utilization, "limit": p.limit,
                        **({"measured_it_s": measured[p.cores],
                            "relative_error": p.it_per_s / measured[p.cores] - 1}
                           if measured and p.cores in measured else {})} for p in r.points],
        })
    if fit is not None:
        doc["fitted_p0"], doc["fit_rms_relative_error"] = fit
    doc["notes"] = list(analysis.notes)  # the notes the table prints
    return document(doc)


def render(results: list, analysis, console, measured: dict | None = None, fit: tuple | None = None) -> None:
    """The single-core basis, the saturation point, the table of every core count (measured
    points and their error with ``measured``) and the notes."""
    k, m = analysis.kernel, analysis.machine
    r0 = results[0]
    e = analysis.ecm
    console.print(escape(f"{k.source} on {m.name} at {m.clock / 1e9:g} GHz, sizes "
                         + ", ".join(f"{n}={v}" for n, v in sorted(analysis.defines.items()))))
    console.print(f"single core: {e.notation()}; T_ECM({r0.location}) = {r0.single_core_cy_per_cl:.2f} cy/CL, "
                  f"T_Mem = {r0.memory_busy_cy_per_cl:.2f} cy/CL (memory interface busy)")
    if r0.saturation_cores:
        console.print(f"saturation point: {r0.saturation_cores} cores per ccNUMA domain "
                      f"({r0.cores_per_domain} cores each); P_sat = {format_si(r0.saturated_it_per_s, 'it/s')} "
                      "per domain")
    else:
        console.print(f"no memory traffic (data in {r0.location}): nothing to saturate")
    if fit is not None:
        console.print(f"p0 fitted to the measurement: {fit[0]:.3g} (rms relative error {100 * fit[1]:.1f} %)")
    t = Table(title="Predicted performance per core count", title_justify="left")
    t.add_column("cores", justify="right")
    t.add_column("domains", justify="right")
    t.add_column("data in")
    t.add_column("T_ECM \\[cy/CL]", justify="right")
    for r in results:
        label = r.model + (f" (p0={r.p0:.3g})" if r.model == "contention" else "")
        t.add_column(f"{label} \\[it/s]", justify="right")
        if r.model == "contention" and r.location == "MEM":
            t.add_column("u(n)", justify="right")
        t.add_column("limit")
    if measured:
        t.add_column("measured \\[it/s]", justify="right")
        t.add_column("error", justify="right")
    for i, p in enumerate(r0.points):
        row = [str(p.cores), str(p.domains), p.location, f"{p.core_cy_per_cl:.2f}"]
        for r in results:
            q = r.points[i]
            row.append(format_si(q.it_per_s, ""))
            if r.model == "contention" and r.location == "MEM":
                row.append(f"{q.utilization:.3f}" if q.utilization is not None else "-")
            row.append(q.limit)
        if measured:
            meas = measured.get(p.cores)
            row += [format_si(meas, "") if meas else "-",
                    f"{100 * (p.it_per_s / meas - 1):+.1f} %" if meas else "-"]
        t.add_row(*row)
    console.print(t)
    console.print("T_ECM: the time of one of the n cores for its data location, from the traffic with n active "
                  "cores (the data set and the shared caches split among them, as 'analyze --cores n')")
    for n in analysis.notes:
        console.print(f"[dim]{escape('note: ' + n)}[/dim]")


def plot(results: list, analysis, path: str | None, measured: dict | None = None):
    """Write a PNG: predicted it/s per core count (one line per model, ``<model> model``), the
    saturation point (a dotted vertical line), measured points; ``path`` None: return the
    matplotlib figure instead.

    Raises:
        ToolError: no matplotlib; LoopmodelError: the file cannot be written (one line,
            :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.4, 4.2))
    for r in results:
        xs = [p.cores for p in r.points]
        ax.plot(xs, [p.it_per_s / 1e9 for p in r.points], marker=".", label=f"{r.model} model")
    r0 = results[0]
    if r0.saturation_cores:
        ax.axvline(r0.saturation_cores, color="grey", ls=":", lw=1, label=f"saturation point ({r0.saturation_cores})")
    if measured:
        ks = sorted(measured)
        ax.plot(ks, [measured[c] / 1e9 for c in ks], "ks", ms=4, label="measured")
    ax.xaxis.set_major_locator(plt.MaxNLocator(integer=True))
    ax.set_xlabel("cores")
    ax.set_ylabel("performance [Git/s]")
    ax.set_title(f"{analysis.kernel.source.rsplit('/', 1)[-1]} on {analysis.machine.name}", fontsize=10)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    if path is None:
        return fig
    save(fig, path)
    return None
