"""Shared matplotlib plumbing of the pictures: the backend, and saving or returning a figure."""
from __future__ import annotations

import os
import sys

from ..atomic import write_whole
from ..errors import DefineError, LoopmodelError, ToolError


def pyplot():
    """``matplotlib.pyplot`` (its ticker classes too, e.g. ``pyplot().NullFormatter``), on the
    file-only Agg backend unless pyplot was imported before or this is an IPython session (a
    notebook: the figures the Python API's ``.plot()`` methods return show inline there, and
    a backend the user chose is not switched, which would close their figures).

    The one place loopmodel imports matplotlib: an optional dependency, heavy to import, needed
    only when a picture is drawn, so it is imported here on first use.

    Raises:
        ToolError: matplotlib is not installed (one line).
    """
    try:
        import matplotlib
    except ImportError:
        raise ToolError("--plot needs matplotlib (pip install matplotlib)") from None
    if "matplotlib.pyplot" not in sys.modules and "IPython" not in sys.modules:
        matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def detached(fig):
    """``fig`` closed in pyplot and returned: the figure of an API ``.plot()`` call, which the
    caller shows (a notebook displays the returned figure once; pyplot would show it a second
    time) or saves (``fig.savefig``); pyplot keeps no reference to it, so drawing many does not
    accumulate open figures."""
    pyplot().close(fig)
    return fig


def rgb(colour) -> tuple:
    """A matplotlib colour (``"C1"``, ``"tab:red"``, ...) as ``(r, g, b)`` in 0..1."""
    return pyplot().matplotlib.colors.to_rgb(colour)


def finish(fig, ax, title: str, legend_loc: str, path: str | None, legend_outside: bool | str = False,
           after_layout=None):
    """Title, grid and legend; then write ``path`` (format by extension) and return None, or
    return the figure when ``path`` is None (tests inspect its artists). ``legend_outside``: True,
    the legend right of the axes (its corner ``legend_loc`` at the axes' top right), off the
    data; ``"below"``: under the axes in two columns (for long labels). ``after_layout``: a
    function of no arguments called once the layout is done (labels placed in the pixels of the
    final picture, :mod:`loopmodel.report.label_layout`), the layout done again after it.

    Raises:
        LoopmodelError: the file cannot be written (:func:`save`).
    """
    ax.set_title(title, fontsize=9)
    ax.grid(alpha=0.3, which="both")
    entries = legend_entries(ax)
    if not entries[0]:
        pass  # nothing labelled: no empty legend box
    elif legend_outside == "below":
        ax.legend(*entries, fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.14), ncol=2, borderaxespad=0.0)
    elif legend_outside:
        ax.legend(*entries, fontsize=7, loc=legend_loc, bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0)
    else:
        ax.legend(*entries, fontsize=7, loc=legend_loc)
    fig.tight_layout()
    if after_layout is not None:
        after_layout()
        fig.tight_layout()
    if path is None:
        return fig
    save(fig, path)
    return None


def save(fig, path: str, dpi: int = 120) -> None:
    """Write ``fig`` to ``path`` whole or not at all, and close it in pyplot: every picture a
    command writes is saved here. The format is the extension's (PNG, SVG, PDF; none:
    matplotlib's default), drawn into a temporary file beside ``path`` that takes its place
    once complete (:func:`loopmodel.atomic.write_whole`); on any failure, an interrupt
    included, the temporary file is removed and ``path`` is left as it was.

    Raises:
        LoopmodelError: the file cannot be written (one line naming it and the system's
            reason, e.g. ``out.png: cannot write the plot: No space left on device``).
    """
    plt = pyplot()
    fmt = os.path.splitext(path)[1][1:].lower() or plt.rcParams["savefig.format"]
    try:
        write_whole(path, lambda partial: fig.savefig(partial, format=fmt, dpi=dpi), True, "--plot")
    except OSError as exc:
        raise LoopmodelError(f"cannot write the plot: {exc.strerror or exc}", file=path) from None
    finally:
        plt.close(fig)


def legend_entries(ax) -> tuple:
    """``(handles, labels)`` of the labelled artists of ``ax``, those of one label drawn as one
    entry (a hatched area and the line on its top: both, one over the other), in the order of
    their first artist."""
    merged: dict = {}
    for handle, label in zip(*ax.get_legend_handles_labels()):
        merged.setdefault(label, []).append(handle)
    return [tuple(h) if len(h) > 1 else h[0] for h in merged.values()], list(merged)


#: picture formats ``--plot`` writes (by the file name's extension)
PICTURE_FORMATS = (".png", ".svg", ".pdf")


def check_picture_path(path: str, option: str = "--plot") -> None:
    """Fail before the work if ``path`` does not end in a format of :data:`PICTURE_FORMATS`.

    Raises:
        DefineError: one line naming the option and the formats.
    """
    ext = os.path.splitext(path)[1].lower()
    if ext not in PICTURE_FORMATS:
        raise DefineError(f"{option}: cannot tell the picture format from '{ext or path}' "
                          f"(end the name in {', '.join(PICTURE_FORMATS)})", file=path)
