"""The picture of ``validate --corpus``: the signed error of every case (predicted / measured
min - 1, in %; the axis linear within ±30 %, logarithmic beyond), one strip per data location
(left) and per regime tag, or per corpus family where the analysis gave no tags (right), with
the bands of ±5, ±12 and ±30 % shaded (the
targets of the model's accuracy: median within 5 %, p90 within 12 %, no case beyond 30 %
without a warning) and each strip's median marked.
"""
from __future__ import annotations

import statistics

from .figures import pyplot, save

#: the shaded bands, %
BANDS = (30, 12, 5)


def _strips(ax, groups: dict, xlabel: str) -> None:
    """One strip per group (name -> signed errors, fractions): points spread sideways by a
    fixed pattern (the same picture every time), a bar at the median."""
    for b, alpha in zip(BANDS, (0.08, 0.12, 0.18)):
        ax.axhspan(-b, b, color="tab:green", alpha=alpha, lw=0, label=f"±{b} %")
    ax.axhline(0, color="k", lw=0.6)
    for x, (name, errs) in enumerate(groups.items()):
        ys = [100 * e for e in errs]
        xs = [x + ((i * 0.618) % 1 - 0.5) * 0.5 for i in range(len(ys))]
        ax.scatter(xs, ys, s=12, color="tab:blue", alpha=0.75, zorder=3)
        med = statistics.median(ys)
        ax.plot([x - 0.3, x + 0.3], [med, med], color="tab:red", lw=2, zorder=4)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"{k}\n(n={len(v)})" for k, v in groups.items()], rotation=60, ha="right", fontsize=7)
    ax.set_xlim(-0.7, max(len(groups), 1) - 0.3)
    ax.set_xlabel(xlabel)
    ax.grid(alpha=0.3, axis="y")


def plot(run, path: str | None, title: str):
    """Write the picture of ``run`` (:class:`~loopmodel.workflows.corpus.CorpusRun`) to ``path``
    (PNG, SVG or PDF by extension); ``path`` None: return the matplotlib figure.

    Raises:
        ToolError: matplotlib is not installed.
        LoopmodelError: the file cannot be written (one line, :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    by_level, by_regime, by_family = {}, {}, {}
    for r in run.cases:
        by_level.setdefault(r.case.level, []).append(r.error)
        for tag in r.regimes:
            by_regime.setdefault(tag, []).append(r.error)
        for fam in r.case.kernel.families:
            by_family.setdefault(fam, []).append(r.error)
    right, label = (by_regime, "regime tag") if by_regime else (by_family, "corpus family (no regime tags)")
    fig, (left, other) = plt.subplots(1, 2, figsize=(11, 4.8), sharey=True,
                                      gridspec_kw={"width_ratios": [max(len(by_level), 1), max(len(right), 1)]})
    _strips(left, by_level, "data location")
    _strips(other, dict(sorted(right.items())), label)
    left.set_ylabel("error: predicted / measured min - 1 (%)")
    ys = [100 * abs(r.error) for r in run.cases]
    top = max([35.0, *ys]) * 1.2
    left.set_yscale("symlog", linthresh=30, linscale=2.5)  # linear within the ±30 % band, log beyond
    left.set_ylim(-top, top)
    ticks = [t for t in (-300, -100, -30, -12, -5, 0, 5, 12, 30, 100, 300, 1000, 3000, 10000, 30000) if abs(t) <= top]
    left.set_yticks(ticks)
    left.set_yticklabels([str(t) for t in ticks])
    left.legend(loc="lower left", fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    if path is None:
        return fig
    save(fig, path)
    return None
