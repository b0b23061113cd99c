"""What the pictures show is readable: labels that do not cover each other (the layer-condition
transitions of the ECM picture, the core counts of the Z-plot), overlapping ECM contributions
visible under T_ECM, and lines of a parameter study that coincide still told apart. Checked on
the rendered figure (``fig.canvas.draw()``: text extents and pixels)."""
from __future__ import annotations

import itertools

import matplotlib
import matplotlib.text
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from helpers import IVB, KERNELS, SKX, SNB

from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.power import energy_grid
from loopmodel.machine.power import PowerSection
from loopmodel.report import ecm_plot, label_layout
from loopmodel.report.energy import plot as zplot
from loopmodel.report.figures import finish, pyplot
from loopmodel.report.study_plot import plot_study
from loopmodel.workflows import energy as workflow_energy
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.options import from_values

matplotlib.use("Agg")


def _points(kernel: str, machine: str, var: str, sizes, fixed: dict | None = None) -> list:
    k, _ = parse_kernel_file(str(KERNELS / kernel))
    a = Analyzer(k, load_machine(machine), AnalyzerSettings(models=("LC", "ECM"), incore="analytic", use_cache=False))
    return [ecm_plot.ecm_point(a.run({**(fixed or {}), var: n}), var) for n in sizes]


def _text_boxes(fig, texts) -> list:
    """The pixel boxes of ``texts`` (the text alone: an annotation's extent includes its leader)."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    return [label_layout.box_of(matplotlib.text.Text.get_window_extent(t, renderer)) for t in texts]


def _apart(boxes, gap: float = 2.0) -> bool:
    """No two boxes closer than ``gap`` pixels."""
    return not any(label_layout.overlaps(a, b, gap) for a, b in itertools.combinations(boxes, 2))


def _transition_labels(ax) -> list:
    return [t for t in ax.texts if t.get_gid() == "lc-transition-label" and t.get_text()]


def _check_transition_labels(fig, marks) -> None:
    """Transition labels: apart from each other and from the title, inside the figure; every mark
    has a leader ending at its line, and its label names its level."""
    ax = fig.axes[0]
    labels = _transition_labels(ax)
    boxes = _text_boxes(fig, labels)
    assert _apart(boxes)
    title = label_layout.box_of(ax.title.get_window_extent(fig.canvas.get_renderer()))
    assert not any(label_layout.overlaps(b, title) for b in boxes)
    whole = label_layout.box_of(fig.bbox)
    assert all(label_layout.inside(b, whole) for b in boxes)
    top = ax.get_window_extent().y1
    assert all(b[1] > top for b in boxes)  # above the axes: no data covered
    ends = {}
    for t in ax.texts:
        if t.get_gid() == "lc-transition-label":
            ends.setdefault(t.xy[0], []).append(t)
    for x, label in marks:
        assert x in ends
    texts = " ".join(t.get_text() for t in labels)
    assert all(label in texts for _, label in marks)


#: kernels and machines whose transitions lie close together (the first: L3 (data set) at N=935
#: and L1 at 1025, whose labels collided)
ECM_CASES = [
    ("2d-5pt.c", SKX, "N", range(100, 4001, 25), {"M": 2000}),
    ("3d-long-range.c", IVB, "N", range(10, 1801, 10), {"M": 130}),
    ("daxpy.c", IVB, "N", [1000 * 2 ** k for k in range(14)], {}),
    ("triad.c", "Power9_8335-GTX", "N", [int(1000 * 1.25 ** k) for k in range(40)], {}),
    ("2d-5pt.c", "Zen_EPYC-7451", "N", range(100, 4001, 50), {"M": 1000}),
    ("3d-7pt.c", "HaswellEP_E5-2695v3", "N", range(10, 601, 5), {"M": 50}),
]


@pytest.mark.parametrize("kernel, machine, var, sizes, fixed", ECM_CASES)
def test_transition_labels_do_not_overlap(kernel, machine, var, sizes, fixed):
    pts = _points(kernel, machine, var, sizes, fixed)
    fig = ecm_plot.plot(pts, var, None, f"{kernel} on {machine}")
    marks = ecm_plot.lc_transitions(pts)
    assert marks
    _check_transition_labels(fig, marks)
    pyplot().close(fig)


_LEVELS = ("L1", "L2", "L3", "L1 (data set)", "L2 (data set)", "L3 (data set)", "L2→L3")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(st.floats(1.0, 1000.0), st.sampled_from(_LEVELS)), min_size=1, max_size=70),
       st.booleans())
def test_any_transitions_get_labels_apart(marks, log_x):
    """Any number of transitions, as close as they come: the labels stay apart (the nearest are
    joined into one label when they do not fit side by side), each line keeps a leader."""
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(7.6, 4.6))
    ax.plot([1, 1000], [0, 10], label="T_ECM")
    if log_x:
        ax.set_xscale("log")
    ax.set_xlim(1, 1000)
    place = ecm_plot.mark_transitions(ax, marks)
    finish(fig, ax, "a title", "upper left", None, legend_outside=True, after_layout=place)
    _check_transition_labels(fig, marks)
    plt.close(fig)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 500), st.floats(1, 60)), min_size=1, max_size=40), st.floats(0, 8))
def test_spread_keeps_order_room_and_bounds(items, gap):
    items.sort()
    centres, widths = [c for c, _ in items], [w for _, w in items]
    lo, hi = 0.0, 600.0
    out = label_layout.spread(centres, widths, lo, hi, gap)
    for (a, wa), (b, wb) in zip(zip(out, widths), zip(out[1:], widths[1:])):
        assert b - a >= (wa + wb) / 2 + gap - 1e-6
    if sum(widths) + gap * (len(widths) - 1) <= hi - lo:
        assert out[0] - widths[0] / 2 >= lo - 1e-6 and out[-1] + widths[-1] / 2 <= hi + 1e-6
    already = all(b - a >= (wa + wb) / 2 + gap for (a, wa), (b, wb) in zip(items, items[1:]))
    if already and centres[0] - widths[0] / 2 >= lo and centres[-1] + widths[-1] / 2 <= hi:
        assert out == pytest.approx(centres)  # nothing moves that need not


# --- ECM: overlapping contributions under T_ECM ----------------------------------------------

def _pixel_rgb(fig, ax, x, y) -> np.ndarray:
    """The rendered colour (0..1) of the data point ``(x, y)`` and the 6x6 pixels around it."""
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[:, :, :3] / 255.0
    px, py = ax.transData.transform((x, y))
    row = img.shape[0] - int(round(py))
    col = int(round(px))
    return img[row - 3:row + 3, col - 3:col + 3]


def test_overlapping_transfer_above_the_stack_is_drawn_under_t_ecm():
    """Power9, triad with the data in L3: the overlapping T_L2L3 (12 cy/CL) exceeds the stack
    (10 cy/CL) and sets T_ECM; the room between the stack and T_ECM is its hatched area (it was a
    white band), drawn behind the opaque stack."""
    pts = _points("triad.c", "Power9_8335-GTX", "N", [int(1000 * 1.25 ** k) for k in range(40)])
    inside = [p for p in pts if 30_000 < p.x < 300_000]
    assert inside and all(p.t_ecm == pytest.approx(12.0) for p in inside)
    assert all(sum(v for _, v, o in p.parts if not o) == pytest.approx(10.0) for p in inside)
    fig = ecm_plot.plot(pts, "N", None, "p9")
    ax = fig.axes[0]
    hatched = [c for c in ax.collections if c.get_hatch()]
    legend = [t.get_text() for t in ax.get_legend().get_texts()]
    assert {c.get_label() for c in hatched} == {"T_OL", "T_L2L3 (overlapping)"} and "T_L2L3 (overlapping)" in legend
    stack = [c for c in ax.collections if not c.get_hatch()]
    assert all(c.get_zorder() < min(s.get_zorder() for s in stack) for c in hatched)
    assert all(c.get_facecolor()[0][3] == 1.0 for c in stack)  # opaque: what is behind stays behind
    band = _pixel_rgb(fig, ax, 100_000, 11.0)
    assert band.min() < 0.8  # hatch lines, not white
    pyplot().close(fig)


def test_compute_bound_t_ol_fills_the_room_under_t_ecm():
    """Zen, dot product: T_OL above the stack sets T_ECM; its hatching fills the room under it."""
    pts = _points("dot.c", "Zen_EPYC-7451", "N", [2 ** k for k in range(8, 14)])
    p = pts[0]
    stack = sum(v for _, v, o in p.parts if not o)
    t_ol = p.parts[0][1]
    assert t_ol > stack + 1 and p.t_ecm == pytest.approx(t_ol)
    fig = ecm_plot.plot(pts, "N", None, "zen")
    ax = fig.axes[0]
    assert _pixel_rgb(fig, ax, pts[1].x, (stack + t_ol) / 2).min() < 0.8
    pyplot().close(fig)


# --- parameter study: coinciding lines ---------------------------------------------------------

def _coinciding_rows(sizes) -> list:
    """Two kernels on two machines with two cache predictors that agree: eight lines, two and two
    on top of each other."""
    rows = []
    for base, (kernel, machine) in enumerate(itertools.product(("daxpy.c", "2d-5pt.c"), (SKX, "HaswellEP"))):
        for cp in ("lc", "sim"):
            rows += [{"kernel": kernel, "machine": machine, "N": n, "cache_predictor": cp,
                      "ecm.performance.cy_per_cl": 2.0 + 5 * base + n / max(sizes)} for n in sizes]
    return rows


@pytest.mark.parametrize("sizes", [range(1000, 5001, 1000), range(100, 10001, 100)], ids=["markers", "lines-only"])
def test_coinciding_study_lines_all_show(sizes):
    """Every one of the eight lines leaves pixels of its own colour inside the axes (before,
    the lc and sim lines had one style and four of the eight were hidden)."""
    fig = plot_study(_coinciding_rows(list(sizes)), None, "N", title="study")
    ax = fig.axes[0]
    lines = ax.get_lines()
    assert len(lines) == 8
    fig.canvas.draw()
    img = np.asarray(fig.canvas.buffer_rgba())[:, :, :3] / 255.0
    box = ax.get_window_extent()
    h = img.shape[0]
    area = img[int(h - box.y1) + 2:int(h - box.y0) - 2, int(box.x0) + 2:int(box.x1) - 2].reshape(-1, 3)
    for line in lines:
        colour = np.array(matplotlib.colors.to_rgb(line.get_color()))
        assert (np.abs(area - colour).max(axis=1) < 0.04).sum() >= 20, line.get_label()
    styles = {(ln.get_color(), ln.get_linestyle(), ln.get_linewidth()) for ln in lines}
    assert len(styles) == 8
    pyplot().close(fig)


# --- Z-plot: core counts ----------------------------------------------------------------------

W = PowerSection(23.6, 1.9e-9, 1.2e-18)


def _zgrid(perf, cores, clocks):
    return energy_grid({(n, f): (perf(n, f), "") for n in cores for f in clocks}, W)


Z_CASES = [
    ("saturating", lambda n, f: min(0.25 * n * f, 1.24e9), range(1, 9), [(1.2 + 0.1 * i) * 1e9 for i in range(16)]),
    ("saturating-early", lambda n, f: min(0.5 * n * f, 1.0e9), range(1, 25), [(1.0 + 0.2 * i) * 1e9 for i in range(10)]),
    ("core-bound", lambda n, f: 0.5 * n * f, range(1, 17), [1e9, 2e9, 3e9]),
]


@pytest.mark.parametrize("name, perf, cores, clocks", Z_CASES, ids=[c[0] for c in Z_CASES])
def test_zplot_core_counts_inside_the_axes_and_apart(name, perf, cores, clocks):
    fig = zplot(_zgrid(perf, cores, clocks), name, None)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_gid() == "zplot-cores"]
    boxes = _text_boxes(fig, labels)
    frame = label_layout.box_of(ax.get_window_extent())
    assert len(labels) >= 4
    assert all(label_layout.inside(b, frame) for b in boxes)
    assert _apart(boxes)
    renderer = fig.canvas.get_renderer()
    optima = [label_layout.box_of(ln.get_window_extent(renderer)) for ln in ax.get_lines()
              if "optimum" in ln.get_label() or "highest clock" in ln.get_label()]
    assert not any(label_layout.overlaps(b, o) for b in boxes for o in optima)
    ends = {t.get_text() for t in labels}
    assert {"1", str(max(cores))} <= ends  # each line's first and last count are placed first
    pyplot().close(fig)


def test_zplot_of_the_command_line_example():
    """The SandyBridge triad of the command line help, 16 clocks: the counts that crowded the
    right edge are placed apart, inside the axes, the ends of both labelled lines among them."""
    options = from_values(workflow_energy.EnergyOptions, "energy", {
        "define": ["N=10000000"], "cores": "1:8", "clock": "1.2:2.7:0.1 GHz", "w0": "23.6 W", "w1": "1.9 W/GHz",
        "w2": "1.2 W/GHz^2", "incore": "analytic"})
    out = workflow_energy.run(str(KERNELS / "triad.c"), SNB, options)
    fig = zplot(out.result, out.title, None)
    ax = fig.axes[0]
    labels = [t for t in ax.texts if t.get_gid() == "zplot-cores"]
    boxes = _text_boxes(fig, labels)
    assert _apart(boxes) and all(label_layout.inside(b, label_layout.box_of(ax.get_window_extent())) for b in boxes)
    assert [t.get_text() for t in labels].count("8") == 2 and [t.get_text() for t in labels].count("1") == 2
    pyplot().close(fig)
