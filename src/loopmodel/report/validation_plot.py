"""The validation picture: ECM contributions over the size, the measurement on top.

Steps (the model changes where the data location does, not in between); stacked areas: the contributions that add up (T_nOL and the non-overlapping transfers, ECM
rules of cross-architecture-machine-models.txt eq. 4); a dashed line: T_OL (it overlaps);
one line each for the other overlapping transfers; a solid line: T_ECM; black points: the measured cy/CL (min-of-K) with bars from min to max
over the runs (roofline-measurement-thesis.txt §4: repetition spread shown, not hidden);
dotted vertical lines: where the data location changes (the layer-condition transitions).
"""
from __future__ import annotations


def varying(rows) -> str | None:
    """The size constant that changes across ``rows`` (the first one), None if none does."""
    names = list(rows[0].defines)
    return next((n for n in names if len({r.defines[n] for r in rows}) > 1), None)


def plot(rows, path: str | None, title: str):
    """Write the picture of ``rows`` (:class:`~loopmodel.validation.ValidationRow`) to ``path``
    (PNG, SVG or PDF by extension); ``path`` None: return the matplotlib figure instead.

    Raises:
        ToolError: matplotlib is not installed.
        OSError: the file cannot be written (the caller turns it into one line).
    """
    from .figures import finish, pyplot

    plt = pyplot()

    var = varying(rows)
    xs = [r.defines[var] for r in rows] if var else list(range(len(rows)))
    names = list(dict.fromkeys(n for r in rows for n, _, over in r.parts if not over))
    fig, ax = plt.subplots(figsize=(7.0, 4.4))
    stack = [[next((v for n, v, o in r.parts if n == name and not o), 0.0) for r in rows] for name in names]
    ax.stackplot(xs, *stack, labels=names, alpha=0.55, step="mid")
    ax.plot(xs, [next(v for n, v, _ in r.parts if n == "T_OL") for r in rows], "k--", lw=1, label="T_OL",
            drawstyle="steps-mid")
    overlapping = dict.fromkeys(n for r in rows for n, _, o in r.parts if o and n != "T_OL")
    for name, style in zip(overlapping, ("-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)))):
        ax.plot(xs, [next((v for n, v, o in r.parts if n == name and o), 0.0) for r in rows], ls=style, lw=1.2,
                label=f"{name} (overlapping)", drawstyle="steps-mid")
    ax.plot(xs, [r.predicted for r in rows], "-", color="tab:red", lw=1.5, label="T_ECM (prediction)",
            drawstyle="steps-mid")
    lo = [r.measured[0] for r in rows]
    hi = [r.measured[2] for r in rows]
    ax.errorbar(xs, lo, yerr=[[0] * len(rows), [h - m for h, m in zip(hi, lo)]], fmt="ko", ms=3.5, capsize=2,
                label="measured (min-of-K, bar to max)")
    for a, b in zip(rows, rows[1:]):
        if a.level != b.level:
            x = (xs[rows.index(a)] + xs[rows.index(b)]) / 2
            ax.axvline(x, color="grey", ls=":", lw=1)
            ax.text(x, ax.get_ylim()[1] * 0.97, f" {a.level}→{b.level}", fontsize=7, va="top", color="grey")
    if var and max(xs) / max(min(xs), 1) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(var or "point")
    ax.set_ylabel("cy/CL")
    ax.set_ylim(bottom=0)
    return finish(fig, ax, title, "upper left", path)
