"""The picture of ``compare``: the single-core ECM prediction per data location, one group of
bars per level (core side first), one bar per machine model, in cy per iteration (cache lines
differ in size between machine models; cy/it compares the same work). The figures are those of
the JSON objects (:func:`loopmodel.report.compare_json.row_dict`)."""
from __future__ import annotations

from .compare_text import level_order
from .figures import finish, pyplot


def plot(doc: dict, path: str | None):
    """Write the grouped bar chart of ``doc`` (:func:`loopmodel.report.compare_json.to_dict`) to
    ``path`` (format by extension), or return the matplotlib figure when ``path`` is None. A
    machine model without a figure for a level (another depth, T_ECM unknown) has no bar there.

    Raises:
        ToolError: no matplotlib; LoopmodelError: the file cannot be written (one line).
    """
    plt = pyplot()
    rows = [r for r in doc["machines"] if r["ecm_per_location"]]
    levels = level_order(rows)
    fig, ax = plt.subplots(figsize=(max(6.4, 1.2 * len(levels) + 0.35 * len(rows)), 4.2))
    width = 0.8 / max(len(rows), 1)
    for i, r in enumerate(rows):
        xs, ys = [], []
        for j, lvl in enumerate(levels):
            fig_ = r["ecm_per_location"].get(lvl)
            if fig_ is not None and fig_["cy_per_it"] is not None:
                xs.append(j - 0.4 + width * (i + 0.5))
                ys.append(fig_["cy_per_it"])
        colour = plt.get_cmap("tab20")(i % 20) if len(rows) > 10 else f"C{i}"  # tab10 repeats after 10
        ax.bar(xs, ys, width=width, label=r["machine"], color=colour)
    ax.set_xticks(range(len(levels)))
    ax.set_xticklabels([f"data in {lvl}" for lvl in levels])
    ax.set_ylabel("T_ECM [cy/it], 1 core")
    ax.set_ylim(bottom=0)
    sizes = ", ".join(f"{n}={v}" for n, v in sorted(doc["defines"].items()))
    return finish(fig, ax, f"{doc['kernel'].rsplit('/', 1)[-1]} ({sizes}): ECM per data location", "upper left",
                  path, legend_outside=True)
