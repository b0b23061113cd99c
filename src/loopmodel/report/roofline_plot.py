"""The measured Roofline picture (roofline-measurement-thesis.txt §4): log-log axes, roofs
labelled, each kernel a series over its sizes with an error bar over the runs, the model's
prediction as an open marker beside each measured point."""
from __future__ import annotations

from .figures import finish, pyplot


def plot(points, roofs, path: str | None, title: str):
    """Write the picture (PNG, SVG or PDF by extension); ``path`` None: return the matplotlib
    figure instead (tests inspect its artists).

    Raises:
        ToolError: matplotlib missing. OSError: the file cannot be written.
    """
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(7.0, 4.8))
    finite = [p.intensity for p in points if 0 < p.intensity < float("inf")] or [0.1, 1.0]
    lo, hi = min(finite) / 4, max(finite) * 4
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
    for kernel in dict.fromkeys((p.kernel, p.cache) for p in points):
        ser = [p for p in points if (p.kernel, p.cache) == kernel]
        name = f"{kernel[0].rsplit('/', 1)[-1]} ({kernel[1]})"
        x = [p.intensity for p in ser]
        best = [p.measured[0] for p in ser]
        err = [[b - p.measured[2] for b, p in zip(best, ser)], [0] * len(ser)]
        line = ax.errorbar(x, best, yerr=err, fmt="o-", ms=4, capsize=2, lw=1, label=f"{name} measured")
        ax.plot(x, [p.predicted for p in ser], "o", mfc="none", color=line[0].get_color(), ms=6,
                label=f"{name} model")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.xaxis.set_minor_formatter(plt.NullFormatter())
    ax.set_xlabel("arithmetic intensity [FLOP/B]")
    ax.set_ylabel("performance [FLOP/s]")
    return finish(fig, ax, title, "lower right", path)
