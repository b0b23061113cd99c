"""``roofline``'s outputs: the JSON document (roofs and measured points), the table and the
picture (:mod:`loopmodel.report.roofline_plot`)."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .roofline_plot import plot
from .schema import document as envelope, finite

#: the note of every run with points: no counters on this path
COUNTERS_NOTE = "counters unavailable: time only; intensities are the model's traffic"


def point_dict(p) -> dict:
    """A :class:`~loopmodel.measure.roofline.RooflinePoint` in the ``--json`` document: no
    traffic (an infinite intensity) is ``"inf"``, no ECM time (a NaN prediction) is null
    (:func:`loopmodel.report.schema.finite`); FLOP/s."""
    return {"kernel": p.kernel, "defines": dict(p.defines), "data_location": p.level,
            "arithmetic_intensity_flop_per_B": finite(p.intensity), "measured_max_flop_s": p.measured[0],
            "measured_median_flop_s": p.measured[1], "measured_min_flop_s": p.measured[2],
            "predicted_flop_s": finite(p.predicted), "cache": p.cache}


def all_notes(notes, points) -> list:
    """The notes of the table and of the JSON document: the measurement's, and, with points,
    that the intensities are the model's (no counters on this path)."""
    return list(notes) + ([COUNTERS_NOTE] if points else [])


def document(top, points, notes) -> dict:
    """The ``--json`` document: the roofs ``top`` (``peak_flop_s`` or ``bandwidth_B_s``), the
    measured points (:func:`point_dict`) and the notes (:func:`all_notes`)."""
    return envelope({"roofs": [{"kind": r.kind, "label": r.label,
                                ("peak_flop_s" if r.kind == "compute" else "bandwidth_B_s"): r.value} for r in top],
                     "points": [point_dict(p) for p in points], "notes": all_notes(notes, points)})


def write_plot(points, top, path: str, machine: str, cache: str) -> None:
    """Write the Roofline picture of ``points`` under the roofs ``top`` to ``path`` (PNG, SVG or
    PDF by extension); ``cache`` is ``roofline --cache`` (warm, cold or both).

    Raises:
        LoopmodelError: the file cannot be written (one line); ToolError: no matplotlib.
    """
    plot(points, top, path, f"measured Roofline on {machine} "
         f"({'warm and cold' if cache == 'both' else cache} data, 1 core)")


def render(points, top, notes, console, plot_path: str | None = None) -> None:
    """The table of the points on ``console`` (rich; GFLOP/s), the roofs, the notes, and where
    the picture went (``plot_path``, when written)."""
    t = Table(title="Measured Roofline points (1 thread, min-of-K; FLOP/s best / worst run)")
    for col in ("kernel", "sizes", "cache", "data in", "FLOP/B", "measured GFLOP/s", "worst", "model GFLOP/s"):
        t.add_column(col, justify="left" if col in ("kernel", "sizes", "cache", "data in") else "right")
    for p in points:
        t.add_row(p.kernel.rsplit("/", 1)[-1], " ".join(f"{k}={v}" for k, v in p.defines.items()), p.cache, p.level,
                  f"{p.intensity:.3f}", f"{p.measured[0] / 1e9:.2f}", f"{p.measured[2] / 1e9:.2f}",
                  f"{p.predicted / 1e9:.2f}")
    console.print(t)
    console.print("roofs: " + "; ".join(r.label for r in top))
    for n in all_notes(notes, points):
        console.print(escape(f"note: {n}"))
    if plot_path and points:
        console.print(f"plot written to {plot_path}")
