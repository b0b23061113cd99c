"""The ECM contributions of one analysis per data location, as stacked bars (the composition
picture of ecm-model-slides.txt "ECM model - composition"; cross-architecture-machine-models.txt
§3.4.2-3.4.3, eq. 3-4):

* one bar per data location (``L1`` .. ``MEM``), stacking the contributions that add up: T_nOL,
  the busy time of each non-overlapping transfer (T_L1L2, T_L2L3, T_L3MEM, ...) and their
  latency penalties;
* a dashed line: T_OL, which overlaps with all of them; a short bar-wide mark per location for
  each other overlapping contribution (machine model ``overlap``);
* a red marker with its value: T_ECM = max(T_OL, sum of the stack, overlapping transfers)
  (eq. 4); where T_OL is unknown, eq. 4 without T_OL (a lower bound of T_ECM), and the title
  says so.

The contributions are those of :meth:`loopmodel.report.ecm_plot.ecm_point` (the same names and
colours as the picture over a varied size), in cy/CL.
"""
from __future__ import annotations

from .ecm_plot import contribution_parts
from .figures import finish, pyplot

#: half the width of a bar (the bars stand at 0, 1, 2, ...)
_HALF = 0.3


def location_parts(ecm, overlap) -> dict:
    """Data location -> :func:`~loopmodel.report.ecm_plot.contribution_parts` of an
    :class:`~loopmodel.models.ecm.ECMResult`'s ``by_location`` (``overlap``: the machine
    model's overlapping contribution names: ``T_OL``, ``T_nOL``, ``L1L2``, ...)."""
    return {level: contribution_parts(ecm.T_nOL, ecm.by_location.get(level, ()), overlap)
            for level in ecm.T_ECM or ecm.by_location}


def plot(ecm, overlap, title: str):
    """The picture of an :class:`~loopmodel.models.ecm.ECMResult` (see the module text), in
    cy/CL; ``overlap``: the machine model's overlapping contributions. Returns the matplotlib
    figure (its axes: one bar container per stacked contribution, the lines ``T_OL``,
    ``T_ECM`` and one per other overlapping contribution, labelled).

    Raises:
        ToolError: matplotlib is not installed.
    """
    plt = pyplot()
    parts = location_parts(ecm, overlap)
    levels = list(parts)
    xs = list(range(len(levels)))
    fig, ax = plt.subplots(figsize=(7.2, 4.2))
    bottom = [0.0] * len(levels)
    for name in dict.fromkeys(n for p in parts.values() for n, _, o in p if not o):
        heights = [sum(v or 0.0 for n, v, o in parts[lv] if n == name and not o) for lv in levels]
        ax.bar(xs, heights, 2 * _HALF, bottom=bottom, label=name, alpha=0.6)
        bottom = [b + h for b, h in zip(bottom, heights)]
    if ecm.T_OL is not None:
        ax.plot([-0.5, len(levels) - 0.5], [ecm.T_OL] * 2, "k--", lw=1.2, label="T_OL")
    for name in dict.fromkeys(n for p in parts.values() for n, _, o in p if o and n != "T_OL"):
        ys = [next((v for n, v, o in parts[lv] if n == name and o), float("nan")) for lv in levels]
        ax.plot(xs, ys, "_", ms=40, mew=2, label=f"{name} (overlapping)")
    known = ecm.T_OL is not None and all(ecm.T_ECM.get(lv) is not None for lv in levels)
    total = [ecm.T_ECM[lv] if known else ecm.T_transfer.get(lv, b) for lv, b in zip(levels, bottom)]
    ax.plot(xs, total, "o", color="tab:red", ms=6, label="T_ECM" if known else "eq. 4 without T_OL (T_ECM ≥)")
    for x, t in zip(xs, total):
        ax.annotate(f"{t:.3g}", (x, t), textcoords="offset points", xytext=(0, 6), ha="center", fontsize=8)
    ax.set_xticks(xs, [f"data in {lv}" for lv in levels])
    ax.set_xlim(-0.5, len(levels) - 0.5)
    top = max([*total, ecm.T_OL or 0.0, *bottom])
    ax.set_ylim(0, top * 1.24 if top > 0 else 1.0)  # room above the tallest bar for its T_ECM value
    ax.set_ylabel("time per cache line of work [cy/CL]")
    if not known:
        title += "\nT_OL unknown (machine model lacks in-core data): transfers only"
    return finish(fig, ax, title, "upper left", None, legend_outside=True)
