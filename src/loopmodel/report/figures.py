"""Shared matplotlib plumbing of the pictures: the backend, and saving or returning a figure."""
from __future__ import annotations


def pyplot():
    """``matplotlib.pyplot`` on the file-only Agg backend.

    Raises:
        ToolError: matplotlib is not installed (one line).
    """
    try:
        import matplotlib
    except ImportError:
        from ..errors import ToolError
        raise ToolError("--plot needs matplotlib (pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def finish(fig, ax, title: str, legend_loc: str, path: str | None):
    """Title, grid and legend; then write ``path`` (format by extension) and return None, or
    return the figure when ``path`` is None (tests inspect its artists).

    Raises:
        OSError: the file cannot be written (the caller makes it one line).
    """
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc=legend_loc)
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, dpi=120)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return None
