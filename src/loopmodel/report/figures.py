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


def finish(fig, ax, title: str, legend_loc: str, path: str | None, legend_outside: bool | str = False):
    """Title, grid and legend; then write ``path`` (format by extension) and return None, or
    return the figure when ``path`` is None (tests inspect its artists). ``legend_outside``: True,
    the legend right of the axes (its corner ``legend_loc`` at the axes' top right), off the
    data; ``"below"``: under the axes in two columns (for long labels).

    Raises:
        OSError: the file cannot be written (the caller makes it one line).
    """
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    if not ax.get_legend_handles_labels()[0]:
        pass  # nothing labelled: no empty legend box
    elif legend_outside == "below":
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, borderaxespad=0.0)
    elif legend_outside:
        ax.legend(fontsize=7, loc=legend_loc, bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(fontsize=7, loc=legend_loc)
    fig.tight_layout()
    if path is None:
        return fig
    fig.savefig(path, dpi=120)
    import matplotlib.pyplot as plt
    plt.close(fig)
    return None


#: picture formats ``--plot`` writes (by the file name's extension)
PICTURE_FORMATS = (".png", ".svg", ".pdf")


def check_picture_path(path: str, option: str = "--plot") -> None:
    """Fail before the work if ``path`` does not end in a format of :data:`PICTURE_FORMATS`.

    Raises:
        DefineError: one line naming the option and the formats.
    """
    import os

    ext = os.path.splitext(path)[1].lower()
    if ext not in PICTURE_FORMATS:
        from ..errors import DefineError

        raise DefineError(f"{option}: cannot tell the picture format from '{ext or path}' "
                          f"(end the name in {', '.join(PICTURE_FORMATS)})", file=path)
