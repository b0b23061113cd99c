"""``validate``'s outputs: the JSON document, the table (ECM prediction next to the
measurement per size, then a summary per data location) and the picture
(:mod:`loopmodel.report.validation_plot`)."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ..measure.validation import validation_notes
from .schema import document as envelope
from .validation_plot import plot


def document(kernel: str, rows, notes=None) -> dict:
    """The ``--json`` document: one point per size
    (:meth:`~loopmodel.measure.validation.ValidationRow.to_dict`) and the notes the table prints
    (``notes``; default :func:`~loopmodel.measure.validation.validation_notes` of the rows)."""
    return envelope({"kernel": kernel, "points": [r.to_dict() for r in rows],
                     "notes": list(validation_notes(rows) if notes is None else notes)})


def write_plot(rows, path: str, kernel: str, machine: str) -> None:
    """Write the picture of ``rows`` to ``path`` (PNG, SVG or PDF by extension).

    Raises:
        LoopmodelError: the file cannot be written (one line); ToolError: no matplotlib.
    """
    plot(rows, path, f"{kernel.rsplit('/', 1)[-1]} on {machine}: ECM vs measured")


def render(kernel: str, machine: str, rows, summary: dict, notes, console) -> None:
    """The table of ``rows`` (cy/CL) on ``console`` (rich), the ``summary`` per data location
    (:func:`~loopmodel.measure.validation.summary`) and the notes."""
    t = Table(title=f"{kernel} on {machine}: ECM prediction vs measurement (cy/CL)")
    window = any(r.window is not None for r in rows)
    for col in ("sizes", "data in", "ECM", "predicted", "measured min", "median", "max", "error",
                "in-core model", "in-core measured") + (("same window", "error (window)") if window else ()):
        t.add_column(col, justify="left" if col in ("sizes", "data in", "ECM") else "right")
    bandwidths = []  # a line per size with a same-window prediction
    for r in rows:
        lo, med, hi = r.measured
        sizes, w = " ".join(f"{k}={v}" for k, v in r.defines.items()), r.window
        cells = [sizes, r.level, r.ecm, f"{r.predicted:.2f}", f"{lo:.2f}", f"{med:.2f}", f"{hi:.2f}",
                 f"{100 * r.error:+.1f} %", f"{r.incore_modelled:.2f}",
                 "-" if r.incore_measured is None else f"{r.incore_measured:.2f}"]
        if window:
            cells += ["-", "-"] if w is None else [f"{w.predicted_cy_per_cl:.2f}", f"{100 * r.window_error:+.1f} %"]
        t.add_row(*cells)
        if w is not None:
            bandwidths.append(f"same window ({sizes}): {w.kernel} with {w.cores} core(s) {w.before_B_s / 1e9:.2f} GB/s "
                              f"before and {w.after_B_s / 1e9:.2f} GB/s after the kernel's runs, "
                              f"{w.stored_B_s / 1e9:.2f} GB/s in the machine model")
    console.print(t)
    for line in bandwidths:
        console.print(escape(line))
    for level, s in summary.items():
        console.print(f"{level}: {s['points']} point(s), median |error| {100 * s['median_abs_error']:.1f} %, "
                      f"max {100 * s['max_abs_error']:.1f} %")
    for n in notes:
        console.print(escape(f"note: {n}"))
