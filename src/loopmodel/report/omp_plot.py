"""``loopmodel omp --plot``: predicted (and measured) time vs threads, for the whole program and
for each of its top-level parts (a phase, or one iteration of a repeated block)."""
from __future__ import annotations

from ..ir.omp import Repeat
from .figures import finish, pyplot

_MAX_PARTS = 8


def _parts(program, phases) -> list:
    """``[(label, seconds), ...]``: each top-level phase, and each repeat's last iteration."""
    out = []
    for item, slices in program.item_slices():
        a, b = slices[-1]
        label = f"iteration (line {item.line})" if isinstance(item, Repeat) else f"line {item.line}: {item.label}"
        out.append((label, sum(phases[a:b])))
    return out


def plot(rows, program, path: str | None, title: str):
    """Time of one execution in seconds (log scale) vs thread count: the whole program
    (predicted, measured when there is one, ideal scaling) and, up to eight, its top-level
    parts (thin lines; measured as open markers).

    Returns:
        the figure when ``path`` is None, else None (the file is written).
    Raises:
        ToolError: matplotlib missing. LoopmodelError: the file cannot be written (one line,
            :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7, 4.5))
    ts = [r.threads for r in rows]
    pred = [r.prediction.total_seconds for r in rows]
    measured = rows[0].measured is not None
    ax.plot(ts, pred, "o-", color="C0", lw=2, label="program, predicted")
    if measured:
        ax.plot(ts, [r.measured.total_seconds for r in rows], "s--", color="C0", lw=2, label="program, measured")
    ax.plot(ts, [pred[0] * ts[0] / t for t in ts], ":", color="grey", label="ideal scaling")
    per_t = [_parts(program, [p.seconds for p in r.prediction.phases]) for r in rows]
    meas_t = [_parts(program, [p.seconds for p in r.measured.phases]) for r in rows] if measured else None
    if len(per_t[0]) > 1:
        for k, (label, _) in enumerate(per_t[0][:_MAX_PARTS]):
            color = f"C{k + 1}"
            ax.plot(ts, [p[k][1] for p in per_t], "-", lw=1, color=color, label=label[:40])
            if meas_t:
                ax.plot(ts, [p[k][1] for p in meas_t], "o", mfc="none", color=color)
    ax.set_xlabel("threads")
    ax.set_ylabel("time of one execution [s]")
    ax.set_yscale("log")
    ax.set_xticks(ts)
    return finish(fig, ax, title + (" (lines: predicted; open markers: measured)" if measured else ""),
                  "best", path)
