"""The validation picture: ECM contributions over the size, the measurement on top.

Steps (the model changes where the data location does, not in between); stacked areas: the contributions that add up (T_nOL and the non-overlapping transfers, ECM
rules of cross-architecture-machine-models.txt eq. 4); a dashed line: T_OL (it overlaps);
one line each for the other overlapping transfers; a solid line: T_ECM; black points: the measured cy/CL (min-of-K) with bars from min to max
over the runs (roofline-measurement-thesis.txt §4: repetition spread shown, not hidden);
dotted vertical lines: where the data location changes (the layer-condition transitions).
The drawing of the contributions and of the transitions is shared with ``analyze --plot``
(:mod:`loopmodel.report.ecm_plot`).
"""
from __future__ import annotations

from .ecm_plot import draw_contributions, log_x_wanted, mark_transitions, plain_log_x
from .figures import finish, pyplot


def varying(rows) -> str | None:
    """The size constant that changes across ``rows`` (the first one), None if none does."""
    names = list(rows[0].defines)
    return next((n for n in names if len({r.defines[n] for r in rows}) > 1), None)


def plot(rows, path: str | None, title: str):
    """Write the picture of ``rows`` (:class:`~loopmodel.measure.validation.ValidationRow`) to ``path``
    (PNG, SVG or PDF by extension); ``path`` None: return the matplotlib figure instead.

    Raises:
        ToolError: matplotlib is not installed.
        LoopmodelError: the file cannot be written (one line, :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()

    var = varying(rows)
    xs = [r.defines[var] for r in rows] if var else list(range(len(rows)))
    fig, ax = plt.subplots(figsize=(8.4, 4.4))
    draw_contributions(ax, xs, [r.parts for r in rows], [r.predicted for r in rows], "T_ECM (prediction)")
    lo = [r.measured[0] for r in rows]
    hi = [r.measured[2] for r in rows]
    ax.errorbar(xs, lo, yerr=[[0] * len(rows), [h - m for h, m in zip(hi, lo)]], fmt="ko", ms=3.5, capsize=2,
                label="measured (min-of-K, bar to max)")
    if var and log_x_wanted(xs):
        plain_log_x(ax)
    ax.set_xlabel(var or "point")
    ax.set_ylabel("cy/CL")
    ax.set_ylim(0, ax.get_ylim()[1])
    place = mark_transitions(ax, [((xa + xb) / 2, f"{a.level}→{b.level}")
                                  for (xa, a), (xb, b) in zip(zip(xs, rows), zip(xs[1:], rows[1:])) if a.level != b.level])
    return finish(fig, ax, title, "upper left", path, legend_outside=True, after_layout=place)
