"""``loopmodel omp --plot``: predicted (and measured) time of the program vs threads."""
from __future__ import annotations

from .figures import finish, pyplot


def plot(rows, path: str | None, title: str):
    """Total time in seconds (log scale) vs thread count: the prediction, the measurement when
    there is one, and ideal scaling from the prediction on the fewest threads.

    Returns:
        the figure when ``path`` is None, else None (the file is written).
    Raises:
        ToolError: matplotlib missing. OSError: the file cannot be written.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6, 4))
    ts = [r.threads for r in rows]
    pred = [r.prediction.total_seconds for r in rows]
    ax.plot(ts, pred, "o-", label="predicted (coherence model)")
    if rows[0].measured is not None:
        ax.plot(ts, [r.measured.total_seconds for r in rows], "s--", label="measured (min of K)")
    ax.plot(ts, [pred[0] * ts[0] / t for t in ts], ":", color="grey", label="ideal scaling")
    ax.set_xlabel("threads")
    ax.set_ylabel("time of one execution [s]")
    ax.set_yscale("log")
    ax.set_xticks(ts)
    return finish(fig, ax, title, "best", path)
