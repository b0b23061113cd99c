"""The ECM contributions over a varied size (``analyze -D N=a:b:c --plot``), and the drawing
shared with the validation picture (:mod:`loopmodel.report.validation_plot`).

What is drawn, in cy/CL over the size (cross-architecture-machine-models.txt §3.4.2-3.4.4,
eq. 3-4; notation of ecm-model-slides.txt "ECM model - composition"):

* stacked areas: the contributions that add up -- T_nOL, the busy time of each
  non-overlapping transfer (T_L1L2, T_L2L3, T_L3MEM, ...) and, on top, their latency
  penalties (eq. 3: busy time plus penalty per cache line);
* a dashed line: T_OL, which overlaps with all of them; one line each for other
  overlapping contributions (machine data, Table 2);
* a solid line: T_ECM = max(T_OL, sum of the stack, overlapping transfers) (eq. 4); where
  T_OL is unknown, eq. 4 without T_OL (a lower bound of T_ECM) instead, and the title says so;
* dotted vertical lines at the layer-condition transition sizes (kerncraft-tool-paper.txt
  §2.4.2 and Listing 5), labelled with the cache level whose condition breaks there
  (``L2 (data set)``: the level stops holding the whole data set across repeated sweeps).

Steps: the model is constant between the sizes where the traffic changes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..predictors.layer_conditions import transition_size
from .figures import finish, pyplot

#: line styles of overlapping contributions other than T_OL
_OVERLAP_STYLES = ("-.", ":", (0, (5, 1)), (0, (3, 1, 1, 1)))
#: labels of transition lines nearer than this (display pixels) are merged into one
_LABEL_GAP_PX = 11


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
    nothing, so T_ECM^MEM is the prediction at every size."""
    e = res.ecm
    parts = [("T_OL", e.T_OL, True), *contribution_parts(e.T_nOL, e.contributions, res.machine.overlap)]
    lc = tuple(LevelState(lv.level, lv.selected, tuple(transition_size(st.max_size) for st in lv.states),
                          lv.holds_data_set,
                          None if lv.data_set is None else transition_size(lv.data_set.max_size))
               for lv in res.lc_levels)
    return EcmPoint(float(res.defines[variable]), res.lc_variable == variable, tuple(parts),
                    e.T_ECM.get("MEM"), e.T_transfer.get("MEM", 0.0), lc)


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
    """Stacked non-overlapping contributions, T_OL dashed, other overlapping contributions as
    lines, ``total`` (T_ECM) solid red, all as steps over ``xs`` (increasing).

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
        ax.stackplot(sx, *stack, labels=names, alpha=0.55, step="post")
    t_ol = [next((v for n, v, _ in p if n == "T_OL"), None) for p in parts]
    if any(v is not None for v in t_ol):
        ax.plot(sx, _steps(xs, edges, [math.nan if v is None else v for v in t_ol])[1], "k--", lw=1, label="T_OL",
                drawstyle="steps-post")
    overlapping = dict.fromkeys(n for p in parts for n, _, o in p if o and n != "T_OL")
    for name, style in zip(overlapping, _OVERLAP_STYLES):
        ys = [next((v for n, v, o in p if n == name and o), 0.0) for p in parts]
        ax.plot(sx, _steps(xs, edges, ys)[1], ls=style, lw=1.2, label=f"{name} (overlapping)", drawstyle="steps-post")
    if any(v is not None for v in total):
        ax.plot(sx, _steps(xs, edges, [math.nan if v is None else v for v in total])[1], "-", color="tab:red",
                lw=1.5, label=total_label, drawstyle="steps-post")


def mark_transitions(ax, marks: list) -> None:
    """A dotted vertical line at each ``(x, label)`` of ``marks``, labelled (rotated) at the top;
    labels closer than a few pixels are written once (``L1`` for two L1 lines, ``L1, L2``
    for two levels). Call after the axis scales and limits are set."""
    if not marks:
        return
    top = ax.get_ylim()[1]
    groups = []
    for x, label in sorted(marks):
        ax.axvline(x, color="grey", ls=":", lw=1)
        px = ax.transData.transform((x, top))[0]
        if groups and px - groups[-1][1] < _LABEL_GAP_PX:
            groups[-1][2].append(label)
            continue
        groups.append([x, px, [label]])
    for x, _, labels in groups:
        ax.text(x, top * 0.98, " " + ", ".join(dict.fromkeys(labels)), fontsize=7, va="top", ha="right",
                rotation=90, color="dimgrey")


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
        OSError: the file cannot be written (the caller turns it into one line).
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
    ax.set_ylim(0, headroom(ax.get_ylim()[1]))
    ax.set_xlabel(variable)
    ax.set_ylabel("time per cache line of work [cy/CL]")
    mark_transitions(ax, marks)
    if not known:
        title += "\nT_OL unknown (machine model lacks in-core data): transfers only, T_ECM not drawn"
    return finish(fig, ax, title, "upper left", path, legend_outside=True)


def headroom(top: float) -> float:
    """The upper y limit: room above the data for the transition labels."""
    return top * 1.18 if top > 0 else 1.0
