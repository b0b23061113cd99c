"""Where the pictures' labels go so that none covers another: a row of labels spread along one
axis (the layer-condition transitions above an ECM picture), and labels placed beside points
(the core counts of the Z-plot).

Both work in display pixels of the figure as it will be written, so they run after the layout
(:func:`loopmodel.report.figures.finish` calls them after ``tight_layout``); the artists they make
are positioned in offset points from their anchors and keep their place on any later change of
the figure's resolution (``savefig(dpi=...)``).
"""
from __future__ import annotations

#: pixels kept free between two labels
GAP_PX = 3.0
#: the offsets tried for a label beside a point, in multiples of the label's half size and a
#: few pixels: right-above, right-below, left-above, left-below, above, below, right, left,
#: then the same twice, three and five times as far (with a leader line to the point)
_DIRECTIONS = ((1, 1), (1, -1), (-1, 1), (-1, -1), (0, 1.6), (0, -1.6), (1.3, 0), (-1.3, 0))
_REACH = (1.0, 2.2, 3.4, 5.0)


def spread(centres: list, widths: list, lo: float, hi: float, gap: float = GAP_PX) -> list:
    """Centres for labels of ``widths`` wanted at ``centres`` (increasing), on one axis: in the
    same order, ``gap`` apart, inside ``[lo, hi]`` where they fit (else centred on it), each as
    near its wanted place as that allows (least squares: isotonic regression of the wanted
    centres less the room the labels before them take, pool-adjacent-violators).

    Args:
        centres, widths: pixels, one per label, ``centres`` sorted.
        lo, hi: the span the labels may take, pixels.
    Returns:
        the new centres (pixels), one per label.
    """
    if not centres:
        return []
    room = [0.0]
    for a, b in zip(widths, widths[1:]):
        room.append(room[-1] + (a + b) / 2 + gap)
    blocks = []  # [mean, count] of pooled values, non-decreasing means
    for c, r in zip(centres, room):
        blocks.append([c - r, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            (m1, n1), (m2, n2) = blocks.pop(-2), blocks.pop()
            blocks.append([(m1 * n1 + m2 * n2) / (n1 + n2), n1 + n2])
    least, most = lo + widths[0] / 2, hi - widths[-1] / 2 - room[-1]
    if least > most:  # wider than the span: centred on it
        least = most = (least + most) / 2
    shifted = [min(max(m, least), most) for m, n in blocks for _ in range(n)]
    return [z + r for z, r in zip(shifted, room)]


def overlaps(a, b, gap: float = 0.0) -> bool:
    """Whether two boxes ``(x0, y0, x1, y1)`` (pixels) come closer than ``gap``."""
    return a[0] < b[2] + gap and b[0] < a[2] + gap and a[1] < b[3] + gap and b[1] < a[3] + gap


def inside(box, bounds) -> bool:
    """Whether box ``(x0, y0, x1, y1)`` lies within ``bounds`` (same form)."""
    return box[0] >= bounds[0] and box[1] >= bounds[1] and box[2] <= bounds[2] and box[3] <= bounds[3]


def beside(anchor: tuple, size: tuple, taken: list, bounds: tuple) -> tuple | None:
    """Where a label of ``size`` (w, h pixels) goes beside the point ``anchor`` (x, y pixels):
    the first offset of :data:`_DIRECTIONS` (nearest first) whose box lies in ``bounds`` and
    keeps :data:`GAP_PX` from every box of ``taken``; None where none does.

    Returns:
        ``(dx, dy, box)``: the label's centre relative to the anchor (pixels) and its box.
    """
    w, h = size
    for reach in _REACH:
        for sx, sy in _DIRECTIONS:
            dx = sx * reach * (w / 2 + GAP_PX)
            dy = sy * reach * (h / 2 + GAP_PX)
            cx, cy = anchor[0] + dx, anchor[1] + dy
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            if inside(box, bounds) and not any(overlaps(box, t, GAP_PX) for t in taken):
                return dx, dy, box
    return None


def box_of(extent) -> tuple:
    """A matplotlib ``Bbox`` as ``(x0, y0, x1, y1)``."""
    return (extent.x0, extent.y0, extent.x1, extent.y1)


def text_size(ax, text: str, renderer, **style) -> tuple:
    """``(width, height)`` in pixels of ``text`` drawn on ``ax`` with ``style`` (``fontsize``,
    ``rotation``, ...): the text alone (an annotation's extent takes in its leader line too)."""
    probe = ax.text(0, 0, text, transform=None, **style)
    extent = probe.get_window_extent(renderer)
    probe.remove()
    return extent.width, extent.height
