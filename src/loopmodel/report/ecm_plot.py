"""The ECM contributions over a varied size (``analyze -D N=a:b:c --plot``), and the drawing
shared with the validation picture (:mod:`loopmodel.report.validation_plot`).

What is drawn, in cy/CL over the size (cross-architecture-machine-models.txt §3.4.2-3.4.4,
eq. 3-4; notation of ecm-model-slides.txt "ECM model - composition"):

* stacked areas (opaque): the contributions that add up -- T_nOL, the busy time of each
  non-overlapping transfer (T_L1L2, T_L2L3, T_L3MEM, ...) and, on top, their latency
  penalties (eq. 3: busy time plus penalty per cache line);
* a dashed line over a hatched area from zero, behind the stack: T_OL, which overlaps with all
  of them; the same, in their own line styles and hatchings, for the other overlapping
  contributions (machine data, Table 2). Where one is larger than the stack its hatching
  fills the room under T_ECM: the reader sees which contribution sets T_ECM there;
* a solid line: T_ECM = max(T_OL, sum of the stack, overlapping transfers) (eq. 4); where
  T_OL is unknown, eq. 4 without T_OL (a lower bound of T_ECM) instead, and the title says so;
* dotted vertical lines at the layer-condition transition sizes (kerncraft-tool-paper.txt
  §2.4.2 and Listing 5), labelled with the cache level whose condition breaks there
  (``L2 (data set)``: the level stops holding the whole data set across repeated sweeps);
  the labels stand in a band above the axes, spread apart with leader lines to their lines.

Steps: the model is constant between the sizes where the traffic changes.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..predictors.layer_conditions import transition_size
from . import label_layout
from .figures import finish, pyplot, rgb

#: line styles of overlapping contributions other than T_OL
_OVERLAP_STYLES = ("-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)))
#: hatching of the area under T_OL, and under the other overlapping contributions
_T_OL_HATCH = "\\\\\\\\"
_OVERLAP_HATCHES = ("////", "xx", "..", "--")
#: transition lines of one label nearer than this (display pixels) share one label
_LABEL_GAP_PX = 11
#: the gid of the transition labels (:func:`label_transitions` replaces its own)
_TRANSITION_GID = "lc-transition-label"
#: points between the axes' top edge and the transition labels (the leader lines' height)
_LEADER_PT = 10.0
#: font size of the transition labels (points)
_LABEL_FONT = 7


@dataclass(frozen=True)
class LevelState:
    """Layer conditions of one cache level at one size.

    Attributes:
        level: cache level name. selected: index of the condition the level is in.
        transitions: transition size of each condition (in the solved-for size
            variable; ``inf`` when it always holds, None when it never does).
        held: the level holds the whole data set across sweeps.
        data_set_transition: transition size of that whole-data-set condition (None: none).
    """

    level: str
    selected: int
    transitions: tuple
    held: bool = False
    data_set_transition: float | None = None


@dataclass(frozen=True)
class EcmPoint:
    """What the picture needs of one analysis (a few hundred bytes, so a sweep keeps them all).

    Attributes:
        x: the varied size. solved: the layer conditions were solved for that size
            (their transition sizes are positions on the x axis).
        parts: ``(name, cy/CL or None, overlapping)``: T_OL (None: unknown), T_nOL, each
            transfer's busy time, ``latency penalties`` (sum over the non-overlapping transfers).
        t_ecm: T_ECM for the data where the layer conditions put them, cy/CL (None: unknown).
        t_transfer: eq. 4 without T_OL, cy/CL. lc: :class:`LevelState` per cache level.
    """

    x: float
    solved: bool
    parts: tuple
    t_ecm: float | None
    t_transfer: float
    lc: tuple = ()


def ecm_point(res, variable: str) -> EcmPoint:
    """The :class:`EcmPoint` of an :class:`~loopmodel.workflows.analysis.AnalysisResult` with ECM, over
    the size constant ``variable``. The contributions are those of data in memory: with the
    layer-condition traffic a level that holds the data makes the links behind it carry
    nothing, so their sum is the prediction for the data location at every size
    (:attr:`~loopmodel.models.ecm.ECMResult.selected`)."""
    e = res.ecm
    parts = [("T_OL", e.T_OL, True), *contribution_parts(e.T_nOL, e.contributions, res.machine.overlap)]
    lc = tuple(LevelState(lv.level, lv.selected, tuple(transition_size(st.max_size) for st in lv.states),
                          lv.holds_data_set,
                          None if lv.data_set is None else transition_size(lv.data_set.max_size))
               for lv in res.lc_levels)
    return EcmPoint(float(res.defines[variable]), res.lc_variable == variable, tuple(parts),
                    e.selected, e.T_transfer.get(e.location, 0.0), lc)


def contribution_parts(t_nol: float, contributions, overlap) -> list:
    """``[(name, cy/CL, overlapping), ...]``: T_nOL, each transfer of ``contributions``
    (:class:`~loopmodel.models.ecm.Contribution`) -- an overlapping one (its name in the machine
    model's ``overlap``) with its whole time, the others with their busy time -- and
    ``latency penalties``, the sum of the others' penalties (eq. 3), where there are any."""
    over = set(overlap)
    parts = [("T_nOL", t_nol, "T_nOL" in over)]
    penalty = 0.0
    for c in contributions:
        if c.name in over:
            parts.append((f"T_{c.name}", c.cycles, True))
        else:
            parts.append((f"T_{c.name}", c.busy, False))
            penalty += c.penalty
    if penalty > 0:
        parts.append(("latency penalties", penalty, False))
    return parts


def lc_transitions(points) -> list:
    """``[(x, label), ...]`` sorted by x: between neighbouring points, each layer condition whose
    state changes (the conditions between the two selected ones), at its transition size when
    that lies between the two sizes, else half-way; labelled with its cache level."""
    out = []
    for a, b in zip(points, points[1:]):
        for la, lb in zip(a.lc, b.lc):
            lo, hi = sorted((la.selected, lb.selected))
            for i in range(lo + 1, hi + 1):
                out.append((_position(la.transitions[i], a, b), la.level))
            if la.held != lb.held:
                out.append((_position(la.data_set_transition, a, b), f"{la.level} (data set)"))
    return sorted(dict.fromkeys(out))


def _position(size, a: EcmPoint, b: EcmPoint) -> float:
    """Where to draw a transition between points ``a`` and ``b``: ``size`` if it is known, in the
    plotted variable and between them (one step of tolerance for the rounding), else half-way."""
    lo, hi = sorted((a.x, b.x))
    if a.solved and size is not None and math.isfinite(size) and lo - 1 <= size <= hi + 1:
        return float(size)
    return (a.x + b.x) / 2


def step_edges(xs: list, marks: list = ()) -> list:
    """Where the steps between neighbouring sizes change: the first ``(x, label)`` of ``marks``
    between the two sizes (a transition), else half-way. ``len(xs) - 1`` positions."""
    out = []
    for a, b in zip(xs, xs[1:]):
        lo, hi = sorted((a, b))
        out.append(next((x for x, _ in marks if lo <= x <= hi), (a + b) / 2))
    return out


def _steps(xs: list, edges: list, values: list) -> tuple:
    """``(x, y)`` of a step line holding each point's value from the edge before it to the edge
    after it (drawn with ``steps-post``)."""
    return [xs[0], *edges, xs[-1]], [*values, values[-1]]


def draw_contributions(ax, xs: list, parts: list, total: list, total_label: str, edges: list | None = None) -> None:
    """Stacked non-overlapping contributions, the overlapping ones (T_OL dashed, the others in
    their own line styles) as lines over hatched areas from zero, ``total`` (T_ECM) solid red,
    all as steps over ``xs`` (increasing).

    The stack is opaque and the hatched areas lie behind it: where an overlapping contribution
    is larger than the stack its hatching fills the room up to it, so the band under T_ECM
    shows which contribution puts T_ECM there (eq. 4: the largest of them); below the stack
    its line stays visible.

    Args:
        parts: per point ``(name, cy/CL or None, overlapping)`` tuples; a name missing at a
            point counts 0 there; T_OL None (unknown) at every point: no T_OL line.
        total: cy/CL per point (None: not drawn there).
        edges: where the value changes between neighbouring points (:func:`step_edges`;
            default half-way).
    """
    edges = step_edges(xs) if edges is None else edges
    sx = _steps(xs, edges, xs)[0]
    names = list(dict.fromkeys(n for p in parts for n, _, over in p if not over))
    stack = [_steps(xs, edges, [next((v for n, v, o in p if n == name and not o), 0.0) or 0.0 for p in parts])[1]
             for name in names]
    if names:
        ax.stackplot(sx, *stack, labels=names, colors=[_opaque(f"C{i}") for i in range(len(names))], step="post")
    t_ol = [next((v for n, v, _ in p if n == "T_OL"), None) for p in parts]
    if any(v is not None for v in t_ol):
        _overlapping(ax, sx, _steps(xs, edges, [math.nan if v is None else v for v in t_ol])[1], "T_OL",
                     dict(color="k", ls="--", lw=1), _T_OL_HATCH)
    overlapping = dict.fromkeys(n for p in parts for n, _, o in p if o and n != "T_OL")
    for k, (name, style) in enumerate(zip(overlapping, _OVERLAP_STYLES)):
        ys = [next((v for n, v, o in p if n == name and o), 0.0) for p in parts]
        _overlapping(ax, sx, _steps(xs, edges, ys)[1], f"{name} (overlapping)",
                     dict(color=f"C{len(names) + 1 + k}", ls=style, lw=1.2), _OVERLAP_HATCHES[k])
    if any(v is not None for v in total):
        ax.plot(sx, _steps(xs, edges, [math.nan if v is None else v for v in total])[1], "-", color="tab:red",
                lw=1.5, label=total_label, drawstyle="steps-post", zorder=3)


def _opaque(colour: str, alpha: float = 0.55) -> tuple:
    """``colour`` as it looks at ``alpha`` over white, opaque (RGB): the stack hides what is behind it."""
    return tuple(alpha * c + (1 - alpha) for c in rgb(colour))


def _overlapping(ax, sx: list, ys: list, label: str, line: dict, hatch: str) -> None:
    """One overlapping contribution: a hatched, lightly tinted area from zero to ``ys`` behind the
    stack and its line in front of the stack, under one label (one legend entry: the hatching
    with the line over it, :func:`~loopmodel.report.figures.legend_entries`). The area has no
    outline (its sides would stand where the x axis goes on past the data): the line is its top."""
    ax.fill_between(sx, ys, step="post", facecolor=(*rgb(line["color"]), 0.08), edgecolor=line["color"],
                    hatch=hatch, linewidth=0, zorder=0.8, label=label)
    ax.plot(sx, ys, drawstyle="steps-post", zorder=2.5, label=label, **line)


def mark_transitions(ax, marks: list):
    """A dotted vertical line at each ``(x, label)`` of ``marks``; returns what labels them, to
    be called once the figure is laid out (:func:`~loopmodel.report.figures.finish`'s
    ``after_layout``): :func:`label_transitions`. Call after the axis scales and limits are set."""
    for x, _ in marks:
        ax.axvline(x, color="grey", ls=":", lw=1)
    return lambda: label_transitions(ax, marks)


def label_transitions(ax, marks: list) -> None:
    """The labels of the transition lines, in a band above the axes, spread along x so that no
    two touch (:func:`~loopmodel.report.label_layout.spread`), each with a
    leader line to its transition on the axes' top edge; lines of one label closer than a few
    pixels share one label (``L1`` for the two L1 lines of Listing 5), and where the labels do not
    fit side by side the nearest are joined (``L1, L2``). The title moves up above the band.
    Earlier labels of this function are replaced (it runs after each layout)."""
    for t in [t for t in ax.texts if t.get_gid() == _TRANSITION_GID]:
        t.remove()
    if not marks:
        return
    fig = ax.figure
    renderer = fig.canvas.get_renderer()
    groups = _label_groups(ax, marks)
    texts = [", ".join(dict.fromkeys(lb for _, lb in g)) for g in groups]
    sizes = [label_layout.text_size(ax, t, renderer, fontsize=_LABEL_FONT) for t in texts]
    box = ax.get_window_extent(renderer)
    wanted = [_mean_px(ax, g) for g in groups]
    while len(groups) > 1 and sum(w for w, _ in sizes) + _LABEL_GAP_PX / 2 * (len(sizes) - 1) > box.width:
        k = min(range(len(groups) - 1), key=lambda i: wanted[i + 1] - wanted[i])  # the nearest two: one label
        groups[k:k + 2] = [groups[k] + groups[k + 1]]
        texts[k:k + 2] = [", ".join(dict.fromkeys(lb for _, lb in groups[k]))]
        sizes[k:k + 2] = [label_layout.text_size(ax, texts[k], renderer, fontsize=_LABEL_FONT)]
        wanted[k:k + 2] = [_mean_px(ax, groups[k])]
    centres = label_layout.spread(wanted, [w for w, _ in sizes], box.x0, box.x1, _LABEL_GAP_PX / 2)
    points = 72.0 / fig.dpi
    for text, group, centre in zip(texts, groups, centres):
        for n, (x, _) in enumerate(group):  # the first line of a group carries the text, the others a leader
            px = ax.transData.transform((x, 0))[0]
            ax.annotate(text if n == 0 else "", xy=(x, 1.0), xycoords=ax.get_xaxis_transform(),
                        xytext=((centre - px) * points, _LEADER_PT), textcoords="offset points", fontsize=_LABEL_FONT,
                        ha="center", va="bottom", color="dimgrey", gid=_TRANSITION_GID, annotation_clip=False,
                        arrowprops=dict(arrowstyle="-", color="grey", lw=0.6, shrinkA=1, shrinkB=0))
    band = max(h for _, h in sizes) * points + _LEADER_PT
    ax.set_title(ax.get_title(), fontsize=9, pad=band + 4)


def _mean_px(ax, group: list) -> float:
    """The mean display x (pixels) of the marks of ``group``."""
    return sum(ax.transData.transform((x, 0))[0] for x, _ in group) / len(group)


def _label_groups(ax, marks: list) -> list:
    """``[[(x, label), ...], ...]``: the marks sorted by x, those of one label less than
    :data:`_LABEL_GAP_PX` apart in one group, and marks at the same pixel in one group whatever
    their labels (their lines coincide)."""
    groups = []
    for x, label in sorted(marks):
        px = ax.transData.transform((x, 0))[0]
        if groups:
            first = ax.transData.transform((groups[-1][0][0], 0))[0]
            if px - first < 0.5 or (px - first < _LABEL_GAP_PX and label in {lb for _, lb in groups[-1]}):
                groups[-1].append((x, label))
                continue
        groups.append([(x, label)])
    return groups


def log_x_wanted(xs: list) -> bool:
    """A log x axis when the positive sizes span more than ``50``:1 (about two decades)."""
    pos = [x for x in xs if x > 0]
    return len(pos) == len(xs) and bool(pos) and max(pos) / min(pos) > 50


def plain_log_x(ax) -> None:
    """A log x axis with the sizes written as plain numbers (10, 100, 1000, not powers of ten)."""
    plt = pyplot()
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(plt.FuncFormatter(_size_tick))
    ax.xaxis.set_minor_formatter(plt.NullFormatter())


def _size_tick(value: float, _pos=None) -> str:
    """A size on a log axis: plain up to 10^5, a power of ten beyond."""
    if value < 1e5:
        return f"{value:g}"
    return f"$10^{{{round(math.log10(value))}}}$" if value > 0 else "0"


def plot(points, variable: str, path: str | None, title: str):
    """Write the picture of ``points`` (:class:`EcmPoint`, in sweep order) to ``path`` (PNG, SVG
    or PDF by extension); ``path`` None: return the matplotlib figure (tests inspect its artists).

    Raises:
        ToolError: matplotlib is not installed.
        LoopmodelError: the file cannot be written (one line, :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    points = sorted(points, key=lambda p: p.x)
    xs = [p.x for p in points]
    known = all(p.t_ecm is not None for p in points)
    fig, ax = plt.subplots(figsize=(7.6, 4.6))
    marks = lc_transitions(points)
    draw_contributions(ax, xs, [p.parts for p in points], [p.t_ecm if known else p.t_transfer for p in points],
                       "T_ECM" if known else "eq. 4 without T_OL (T_ECM ≥)", step_edges(xs, marks))
    if log_x_wanted(xs):
        plain_log_x(ax)
    ax.set_xlim(min(xs), max(xs))
    ax.set_ylim(0, ax.get_ylim()[1])
    ax.set_xlabel(variable)
    ax.set_ylabel("time per cache line of work [cy/CL]")
    place = mark_transitions(ax, marks)
    if not known:
        title += "\nT_OL unknown (machine model lacks in-core data): transfers only, T_ECM not drawn"
    return finish(fig, ax, title, "upper left", path, legend_outside=True, after_layout=place)
