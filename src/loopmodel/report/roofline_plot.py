"""Roofline pictures on log-log axes, roofs labelled: the measured Roofline
(roofline-measurement-thesis.txt §4: each kernel a series over its sizes with an error bar over
the runs, the model's prediction as an open marker beside each measured point), and the model's
Roofline of one analysis (kerncraft-tool-paper.txt §1.2.1 and §2.2: one bandwidth roof per memory
level, the kernel's arithmetic intensity on each, the prediction the lowest of them and the CPU
roof).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError
from .figures import finish, pyplot


def plot(points, roofs, path: str | None, title: str):
    """Write the picture (PNG, SVG or PDF by extension); ``path`` None: return the matplotlib
    figure instead (tests inspect its artists).

    Raises:
        ToolError: matplotlib missing. LoopmodelError: the file cannot be written (one line,
            :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    finite = [p.intensity for p in points if 0 < p.intensity < float("inf")] or [0.1, 1.0]
    draw_roofs(ax, roofs, min(finite) / 4, max(finite) * 4)
    for kernel in dict.fromkeys((p.kernel, p.cache) for p in points):
        ser = [p for p in points if (p.kernel, p.cache) == kernel]
        name = f"{kernel[0].rsplit('/', 1)[-1]} ({kernel[1]})"
        x = [p.intensity for p in ser]
        best = [p.measured[0] for p in ser]
        err = [[b - p.measured[2] for b, p in zip(best, ser)], [0] * len(ser)]
        line = ax.errorbar(x, best, yerr=err, fmt="o-", ms=4, capsize=2, lw=1, label=f"{name} measured")
        ax.plot(x, [p.predicted for p in ser], "o", mfc="none", color=line[0].get_color(), ms=6,
                label=f"{name} model")
    _log_axes(ax, plt)
    return finish(fig, ax, title, "lower right", path)


def draw_roofs(ax, roofs, lo: float, hi: float) -> None:
    """The roofs between the intensities ``lo`` and ``hi`` (FLOP/B): a compute roof (``kind``
    ``"compute"``, ``value`` FLOP/s) as a black horizontal line, a bandwidth roof (``value``
    B/s) as a grey line of slope 1 up to the highest compute roof; each labelled."""
    peak = max((r.value for r in roofs if r.kind == "compute"), default=None)
    xs = [lo * (hi / lo) ** (k / 100) for k in range(101)]
    for r in roofs:
        if r.kind == "compute":
            ax.axhline(r.value, color="k", lw=1.2)
            ax.text(lo, r.value * 1.08, r.label, fontsize=7)
        else:
            ys = [min(x * r.value, peak) if peak else x * r.value for x in xs]
            ax.plot(xs, ys, color="grey", lw=0.9)
            ax.text(xs[8], ys[8] * 1.15, r.label, fontsize=6.5, color="dimgrey", rotation=20)


def _log_axes(ax, plt) -> None:
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("arithmetic intensity [FLOP/B]")
    ax.set_ylabel("performance [FLOP/s]")


@dataclass(frozen=True)
class ModelRoof:
    """A roof of the model's Roofline (:func:`draw_roofs`): ``kind`` ``"compute"`` (``value``
    FLOP/s) or ``"bandwidth"`` (``value`` B/s), and its label."""
    kind: str
    label: str
    value: float


def plot_model(roofline, title: str):
    """The Roofline of one analysis (:class:`~loopmodel.models.roofline.RooflineResult`): the CPU
    roof, one bandwidth roof per level (B/s of its benchmark kernel), on each the kernel's
    intensity for that level's traffic (FLOP/B) as a point at I x b, and the prediction (the
    lowest of them and the CPU roof, kerncraft-tool-paper.txt §2.2) as a red star. Returns the
    matplotlib figure (its lines: the roofs, then ``levels`` and ``prediction``, labelled).

    Raises:
        ModelError: the kernel does no floating-point work (no intensity to draw).
        ToolError: matplotlib is not installed.
    """
    levels = [lv for lv in roofline.levels if lv.intensity is not None and lv.bytes > 0]
    if not levels:
        raise ModelError("the Roofline picture needs arithmetic intensities: the kernel has no FLOPs or no traffic")
    plt = pyplot()
    roofs = [ModelRoof("bandwidth", f"{lv.level} {lv.bandwidth / 1e9:.4g} GB/s", lv.bandwidth) for lv in levels]
    if roofline.cpu_performance:
        roofs.insert(0, ModelRoof("compute", f"CPU {roofline.cpu_performance / 1e9:.4g} GFLOP/s "
                                             f"({roofline.cpu_source})", roofline.cpu_performance))
    intensities = [lv.intensity for lv in levels]
    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    draw_roofs(ax, roofs, min(intensities) / 8, max(intensities) * 8)
    ax.plot(intensities, [lv.intensity * lv.bandwidth for lv in levels], "o", color="tab:blue",
            label="kernel on each level's roof (I x b)")
    for lv in levels:
        ax.annotate(lv.level, (lv.intensity, lv.intensity * lv.bandwidth), textcoords="offset points",
                    xytext=(5, -10), fontsize=7)
    if roofline.performance is not None:
        where = next((lv.intensity for lv in levels if lv.level == roofline.bottleneck), min(intensities))
        ax.plot([where], [roofline.performance], "*", color="tab:red", ms=12,
                label=f"prediction {roofline.performance / 1e9:.4g} GFLOP/s ({roofline.bottleneck} bound)")
    _log_axes(ax, plt)
    return finish(fig, ax, title, "lower right", None)
