"""Rendering of energy-to-solution predictions (text table, JSON, Z-plot).

Units: clock in Hz (GHz in tables), power in W, performance in it/s, energy per unit of
work in J/it (nJ/it in tables); ``saving`` and ``slowdown`` are fractions. The Z-plot is
ecm-model-slides.txt's "Energy to solution vs. performance on the socket": energy per unit
of work over performance, one line per clock, one point per core count.
"""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from ..fileio.machine_writer import power_mapping
from ..units import format_si
from . import label_layout
from .figures import finish, pyplot
from .schema import document


def point_dict(p, unit: str) -> dict:
    """One operating point as JSON (units in the key names)."""
    return {"cores": p.cores, "clock_Hz": p.clock_hz, "power_W": p.power_w, "it_s": p.it_per_s,
            "energy_J_per_unit": p.energy_j_per_unit, "work_unit": unit, "limit": p.limit}


def to_dict(result, context: dict) -> dict:
    """One JSON document: ``context`` (kernel, machine, defines, data location, the power model
    as :func:`power_dict`), the points, both optima, the saving and the notes."""
    return document({**context, "model": result.model,
            "points": [point_dict(p, result.unit) for p in result.points],
            "optimum": point_dict(result.energy_optimum, result.unit),
            "performance_optimum": point_dict(result.performance_optimum, result.unit),
            "saving": {"energy_fraction": result.saving, "slowdown_fraction": result.slowdown,
                       "energy_J_per_unit": (result.performance_optimum.energy_j_per_unit
                                             - result.energy_optimum.energy_j_per_unit),
                       "vs_all_cores_highest_clock_fraction": result.reference_saving},
            "reference": point_dict(result.reference, result.unit) if result.reference else None,
            "notes": list(result.notes)})


def power_dict(power) -> dict:
    """The power model in use (:class:`~loopmodel.machine.power.PowerSection`) for the JSON
    document, base units in the keys (:mod:`loopmodel.report.schema`): ``W0_W``,
    ``W1_W_per_Hz``, ``W2_W_per_Hz2``, ``per_core_W`` and ``at_clock_Hz`` (a probe at one
    clock), ``clock_min_Hz``, ``clock_max_Hz``, ``clock_step_Hz``; null where not given."""
    return {"W0_W": power.w0, "W1_W_per_Hz": power.w1, "W2_W_per_Hz2": power.w2, "per_core_W": power.per_core,
            "at_clock_Hz": power.at_clock, "clock_min_Hz": power.clock_min, "clock_max_Hz": power.clock_max,
            "clock_step_Hz": power.clock_step, "source": power.source, "notes": list(power.notes)}


def context(kernel: str, machine: str, defines: dict, data_in: str, power) -> dict:
    """The ``context`` of :func:`to_dict`: the kernel and machine as named, the sizes, the
    memory level the data are in and the power model (:func:`power_dict`)."""
    return {"kernel": kernel, "machine": machine, "defines": dict(defines), "data_in": data_in,
            "power": power_dict(power)}


def power_line(power) -> str:
    """``'power model W = W0 + (W1·f + W2·f²)·n: W0 = 23.6 W, ... (source: ...)'``: the
    coefficients of the power model in use as its section writes them."""
    pm = power_mapping(power)
    return ("power model W = W0 + (W1·f + W2·f²)·n: "
            + ", ".join(f"{k} = {pm[k]}" for k in ("W0", "W1", "W2", "per core", "at clock") if k in pm)
            + (f" (source: {pm['source']})" if pm.get("source") else ""))


def _nj(e: float) -> str:
    return f"{e * 1e9:.3f}"


def describe(p, unit: str) -> str:
    """``'4 cores at 1.6 GHz: 35.2 W, 1.24 Git/s, 28.4 nJ/it'``."""
    return (f"{p.cores} core{'s' if p.cores != 1 else ''} at {p.clock_hz / 1e9:g} GHz: {p.power_w:.1f} W, "
            f"{format_si(p.it_per_s, unit + '/s')}, {_nj(p.energy_j_per_unit)} nJ/{unit}")


def render(result, title: str, console, power_line: str) -> None:
    """The table of every operating point, then both optima and the saving."""
    console.print(escape(title))
    console.print(escape(power_line))
    u = result.unit
    t = Table(title=f"Energy to solution per operating point ({result.model} model)", title_justify="left")
    for col in ("clock [GHz]", "cores", "power [W]", f"performance [{u}/s]", f"energy [nJ/{u}]", "limit", "optimum"):
        t.add_column(escape(col), justify="left" if col in ("limit", "optimum") else "right", no_wrap=True)
    for p in result.points:
        mark = " ".join(name for name, o in (("energy", result.energy_optimum),
                                             ("performance", result.performance_optimum)) if o == p)
        style = "bold" if mark else None
        t.add_row(f"{p.clock_hz / 1e9:g}", str(p.cores), f"{p.power_w:.1f}", format_si(p.it_per_s, ""),
                  _nj(p.energy_j_per_unit), p.limit, mark, style=style)
    console.print(t)
    console.print(f"energy-optimal:      {describe(result.energy_optimum, u)}")
    console.print(f"performance-optimal: {describe(result.performance_optimum, u)}")
    console.print(f"saving: {100 * result.saving:.1f} % energy per {u} at the energy-optimal point, "
                  f"{100 * result.slowdown:.1f} % slower than the performance-optimal point")
    if result.reference is not None and result.reference not in (result.energy_optimum, result.performance_optimum):
        console.print(f"all cores at the highest clock: {describe(result.reference, u)}; the energy-optimal point "
                      f"saves {100 * result.reference_saving:.1f} % of its energy")
    for n in result.notes:
        console.print(escape(f"note: {n}"))


def plot(result, title: str, path: str | None):
    """The Z-plot: energy per unit of work (nJ/it) over performance (Git/s), one line per clock
    with a point per core count, both optima marked. The core counts of the lowest and the
    highest clock are written beside their points where a label fits without touching another
    label, a marked optimum or the axes' edge (:func:`_label_cores`). Writes ``path`` (format by
    extension); with ``path`` None returns the figure.

    Raises:
        ToolError: no matplotlib; LoopmodelError: the file cannot be written (one line,
            :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(9.0, 5.0))
    clocks = sorted({p.clock_hz for p in result.points})
    cmap = plt.get_cmap("viridis")
    u = result.unit
    labelled = []
    for i, f in enumerate(clocks):
        pts = sorted((p for p in result.points if p.clock_hz == f), key=lambda p: p.cores)
        colour = cmap(i / max(len(clocks) - 1, 1))
        ax.plot([p.it_per_s / 1e9 for p in pts], [p.energy_j_per_unit * 1e9 for p in pts], marker="o", ms=3,
                lw=1, color=colour, label=f"{f / 1e9:g} GHz" if len(clocks) <= 12 or i % 2 == 0 or i == len(clocks) - 1
                else None)
        if i in (0, len(clocks) - 1):  # core counts along the lowest and highest clock
            labelled.append((pts, colour))
    marks = [(result.energy_optimum, "*", "red", "energy optimum"),
             (result.performance_optimum, "D", "black", "performance optimum")]
    if result.reference is not None:
        marks.append((result.reference, "s", "grey", "all cores, highest clock"))
    optima = []
    for o, marker, colour, name in marks:
        optima += ax.plot([o.it_per_s / 1e9], [o.energy_j_per_unit * 1e9], marker=marker, ms=13 if marker == "*" else 9,
                          color=colour, ls="none", mfc=colour if marker == "*" else "none", mew=1.5,
                          label=f"{name}: {o.cores} cores, {o.clock_hz / 1e9:g} GHz")
    ax.set_xlabel(f"performance [G{u}/s]")
    ax.set_ylabel(f"energy to solution [nJ/{u}]")
    ax.set_ylim(bottom=0)
    ax.set_xlim(0, ax.get_xlim()[1] * 1.06)  # room for the core counts right of the fastest points
    ref = (f";\n{100 * result.reference_saving:.1f} % less than all cores at the highest clock"
           if result.reference is not None else "")
    text = (f"{title} (numbers: core counts)\nenergy optimum: {100 * result.saving:.1f} % less energy, "
            f"{100 * result.slowdown:.1f} % slower than the performance optimum{ref}")
    return finish(fig, ax, text, "upper left", path, legend_outside=True,
                  after_layout=lambda: _label_cores(ax, labelled, optima))


#: the gid of the core-count labels (:func:`_label_cores` replaces its own)
_CORES_GID = "zplot-cores"


def _label_cores(ax, labelled: list, optima: list) -> None:
    """The core count beside each point of ``labelled`` (``[(points, colour), ...]``), the ends
    of each line (1 core, all cores) first: the first place of
    :func:`~loopmodel.report.label_layout.beside` inside the axes that keeps clear of the labels
    already placed, the optimum markers ``optima`` (Line2D) and the labelled points; a label
    set apart from its point gets a leader line; a count with no such place is left out (the
    points of a saturated line lie close together). Runs after the layout (pixels of the final
    picture); earlier labels of this function are replaced."""
    for t in [t for t in ax.texts if t.get_gid() == _CORES_GID]:
        t.remove()
    renderer = ax.figure.canvas.get_renderer()
    frame = label_layout.box_of(ax.get_window_extent(renderer))
    taken = [label_layout.box_of(m.get_window_extent(renderer)) for m in optima]
    anchors = [(ax.transData.transform((p.it_per_s / 1e9, p.energy_j_per_unit * 1e9)), p.cores, colour)
               for pts, colour in labelled for p in pts]
    dots = [(x - 2.5, y - 2.5, x + 2.5, y + 2.5) for (x, y), _, _ in anchors]
    points = 72.0 / ax.figure.dpi
    for k in sorted(range(len(anchors)), key=lambda k: _label_rank(anchors, k)):
        (x, y), cores, colour = anchors[k]
        size = label_layout.text_size(ax, str(cores), renderer, fontsize=6)
        spot = label_layout.beside((x, y), size, taken + dots[:k] + dots[k + 1:], frame)
        if spot is None:
            continue
        dx, dy, box = spot
        taken.append(box)
        far = abs(dx) > size[0] + 4 or abs(dy) > size[1] + 4
        ink = _darker(colour)
        ax.annotate(str(cores), ax.transData.inverted().transform((x, y)), xytext=(dx * points, dy * points),
                    textcoords="offset points", fontsize=6, color=ink, ha="center", va="center", gid=_CORES_GID,
                    arrowprops=dict(arrowstyle="-", color=ink, lw=0.5, shrinkA=0, shrinkB=2) if far else None)


def _label_rank(anchors: list, k: int) -> tuple:
    """Placing order of the core-count labels: each line's first and last point, then the
    others in order of the core count."""
    cores = [a[1] for a in anchors]
    ends = {min(cores), max(cores)}
    return (anchors[k][1] not in ends, anchors[k][1], k)


def _darker(colour) -> tuple:
    """``colour`` (RGBA) at 70 % of its brightness: the yellow end of viridis readable on white."""
    return tuple(0.7 * c for c in colour[:3])
