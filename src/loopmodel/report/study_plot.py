"""A parameter study as a picture: one report figure (``y``) over one size (``x``), one line per
kernel and machine (and per option combination).

The rows are flat dicts, one per evaluated point: ``kernel``, ``machine``, a column per size
constant (``N``), option columns (``cores``, ``cache_predictor``, ...) and flattened report fields
with dotted names (``ecm.performance.cy_per_cl``); a row with an ``error`` key is a point that failed
and is left out. Lines are the groups of rows that agree in every non-numeric column other than
the dotted report fields (which vary from point to point, e.g. ``ecm.notation``), so a study of two
kernels on two machines with two cache predictors draws eight lines, each labelled by what tells
it apart. Lines that coincide stay visible: each kernel and machine combination has its own
colour pair and open marker, and the values of an option (``cache_predictor=lc``, ``sim``) their
own line width, dashes and shade, the first wide and light under the others
(:func:`_line_styles`).
"""
from __future__ import annotations

import math
import os

from .ecm_plot import plain_log_x
from .figures import finish, pyplot

#: suffixes of flattened field names -> the unit they carry (loopmodel's JSON report: units in keys)
_SUFFIX_UNITS = (("_flop_s", "FLOP/s"), ("_it_per_s", "it/s"), ("_it_s", "it/s"), ("_cy_per_cl", "cy/CL"),
                 ("_lup_s", "LUP/s"), ("_cy_per_it", "cy/it"), ("_b_s", "B/s"), ("_b_per_cy", "B/cy"), ("_hz", "Hz"), ("_b", "B"),
                 ("_s", "s"), ("_seconds", "s"))
#: the last part of a dotted name that is a unit itself (``ecm.performance.cy_per_cl``); also ``unit`` values
_UNIT_NAMES = ("cy/CL", "cy/it", "it/s", "FLOP/s", "LUP/s", "B/s", "B/cy", "GB/s")
#: the last part of a dotted name that is a unit key (``ecm.performance.cy_per_cl``)
_UNIT_KEYS = {"cy_per_cl": "cy/CL", "cy_per_it": "cy/it", "it_s": "it/s", "flop_s": "FLOP/s", "lup_s": "LUP/s"}
#: columns that name no option (never split lines)
_NOT_OPTIONS = ("error",)


def unit_of(name: str) -> str | None:
    """The unit in a (flattened) field name: ``ecm.performance.cy_per_cl`` -> ``cy/CL``,
    ``roofline.performance_flop_s`` -> ``FLOP/s``, ``ecm.T_ECM_cy_per_cl.MEM`` -> ``cy/CL``, ``kernel.file`` -> None (unknown)."""
    for part in reversed(name.split(".")):  # ecm.T_ECM_cy_per_cl.MEM: the unit of the mapping
        unit = _part_unit(part)
        if unit:
            return unit
    return None


def _part_unit(last: str) -> str | None:
    if last in _UNIT_KEYS:
        return _UNIT_KEYS[last]
    for unit in _UNIT_NAMES:
        if last.lower() == unit.lower():
            return unit
    low = last.lower()
    return next((unit for suffix, unit in _SUFFIX_UNITS if low.endswith(suffix)), None)


def _number(value) -> float | None:
    """A finite float, or None (missing, null, ``"inf"``, text, bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def _group_columns(rows: list, x: str, y: str) -> list:
    """The columns whose values tell the lines apart: ``kernel`` and ``machine`` (when present),
    then every other non-numeric column without a dot that differs between rows."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    out = [k for k in ("kernel", "machine") if k in keys]
    for k in keys:
        if k in out or k in (x, y) or k in _NOT_OPTIONS or "." in k:
            continue
        values = [r.get(k) for r in rows]
        if all(v is None or isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            continue  # a numeric column: a size or a count, not an option name
        if len({repr(v) for v in values}) > 1:
            out.append(k)
    return out


def _short(column: str, value) -> str:
    """A group column's value as shown: kernel and machine files by their name."""
    return os.path.basename(str(value)) if column in ("kernel", "machine") else str(value)


def _label(named: dict) -> str:
    """``kernel on machine, col=value, ...`` of the columns in ``named`` (an empty dict: "")."""
    head = " on ".join(_short(k, named[k]) for k in ("kernel", "machine") if k in named)
    rest = ", ".join(f"{k}={v}" for k, v in named.items()
                     if k not in ("kernel", "machine") and v not in (None, "None", ""))
    return ", ".join(t for t in (head, rest) if t)


def study_lines(rows, x: str, y: str, group=None) -> tuple:
    """``(common, [(label, xs, ys), ...], places)``: the points of each group, sorted by x,
    labelled by the columns that differ between the groups; ``common`` labels what all groups
    share (for the title). ``group``: the columns that tell the lines apart (default: found from
    the rows, see :func:`_group_columns`). Rows with ``error``, or without a finite number in
    ``x`` or ``y``, are left out (a group left empty draws nothing). ``places``: per line
    ``(identity, option)``, its place among the kernel and machine combinations (with the
    columns that take one value per combination, e.g. a size constant only one kernel has) and
    among the values of the other columns that differ, the options (both 0 where none
    differ), for :func:`_line_styles`."""
    rows = [r for r in rows if not r.get("error")]
    columns = list(group) if group is not None else _group_columns(rows, x, y)
    groups: dict = {}
    for r in rows:
        xv, yv = _number(r.get(x)), _number(r.get(y))
        if xv is None or yv is None:
            continue
        groups.setdefault(tuple(str(r.get(c)) for c in columns), []).append((xv, yv))
    differ = [i for i, c in enumerate(columns) if len({key[i] for key in groups}) > 1]
    common = _label({c: v for i, (c, v) in enumerate(zip(columns, next(iter(groups), ()))) if i not in differ})
    lines = [(_label({columns[i]: key[i] for i in differ}) or "all points", [p[0] for p in sorted(pts)],
              [p[1] for p in sorted(pts)]) for key, pts in groups.items()]
    named = [i for i in differ if columns[i] in ("kernel", "machine")]
    values: dict = {}  # per kernel and machine combination, the values each other column takes
    for key in groups:
        for i in differ:
            values.setdefault((tuple(key[k] for k in named), i), set()).add(key[i])
    how = [i for i in differ if i not in named and any(len(v) > 1 for (_, c), v in values.items() if c == i)]
    who = [i for i in differ if i not in how]  # kernel, machine and what goes with them (a size constant)
    identities = list(dict.fromkeys(tuple(key[i] for i in who) for key in groups))
    options = list(dict.fromkeys(tuple(key[i] for i in how) for key in groups))
    places = [(identities.index(tuple(key[i] for i in who)), options.index(tuple(key[i] for i in how)))
              for key in groups]
    return common, lines, places


#: marker of each kernel and machine combination (open: coinciding markers of two lines both show)
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "<", ">", "*")
#: line style and marker size of each value of the option columns: the first wide (and light),
#: the others narrow (and dark), dashed, with smaller markers, drawn on top of it, so that lines
#: that coincide (a cache predictor that agrees with the other) both stay visible
_OPTION_STYLES = (dict(ls="-", lw=3.6, ms=9), dict(ls="--", lw=1.3, ms=4.5), dict(ls=":", lw=1.6, ms=3),
                  dict(ls="-.", lw=1.0, ms=2))
#: the first option's line gets this much narrower per kernel and machine combination drawn
#: before it (four steps), so that the wide lines of two combinations that coincide both show
_NARROWER = 0.55


def _line_styles(places: list, many_points: bool) -> list:
    """The matplotlib keywords of each line of :func:`study_lines`' ``places``
    (``(identity, option)``): an open marker of :data:`_MARKERS` per kernel and machine
    combination; without option columns, colour ``C<i>`` per line; with them a colour pair of
    ``tab20`` per combination (light for the first option value, dark for the others) and
    :data:`_OPTION_STYLES` per option value. ``many_points``: more than 30 points on a line, no
    markers."""
    options = len({o for _, o in places}) > 1
    pairs = pyplot().get_cmap("tab20").colors
    out = []
    for identity, option in places:
        if options:
            style = dict(_OPTION_STYLES[option % len(_OPTION_STYLES)],
                         color=pairs[(2 * identity + (option == 0)) % len(pairs)])
            if option == 0:
                style["lw"] -= _NARROWER * (identity % 4)
        else:
            style = dict(ls="-", lw=1.3, ms=4.5, color=f"C{identity % 10}")
        style["marker"] = None if many_points else _MARKERS[identity % len(_MARKERS)]
        out.append(dict(style, mfc="none", mew=1.1))
    return out


def plot_study(rows, path, x, y="ecm.performance.cy_per_cl", title="", group=None):
    """Draw ``y`` over ``x`` for the study ``rows`` (flat dicts, see the module text).

    Args:
        rows: iterable of dicts; failed points carry an ``error`` key and are skipped.
        path: PNG, SVG or PDF file (format by extension), or None.
        x: the column on the x axis (a size constant, e.g. ``N``); log scale when its
            positive values span more than two decades.
        y: the column on the y axis; its unit comes from its name (:func:`unit_of`).
        title: the picture's title (default: ``y over x``).
        group: the columns that tell the lines apart (e.g. a study's kernel, machine and
            option columns); None: found from the rows.
    Returns:
        the matplotlib figure when ``path`` is None (tests inspect its artists), else None.
    Raises:
        ToolError: matplotlib missing. LoopmodelError: the file cannot be written (one line,
            :func:`~loopmodel.report.figures.save`).
    """
    plt = pyplot()
    common, lines, places = study_lines(list(rows), x, y, group)
    fig, ax = plt.subplots(figsize=(7.6, 4.6))
    styles = _line_styles(places, max((len(xs) for _, xs, _ in lines), default=0) > 30)
    for (label, xs, ys), style in zip(lines, styles):
        ax.plot(xs, ys, label=label, **style)
    xs_all = [v for _, xs, _ in lines for v in xs]
    if xs_all and min(xs_all) > 0 and max(xs_all) / min(xs_all) > 100:
        plain_log_x(ax)
    unit = unit_of(y)
    ax.set_xlabel(x if unit_of(x) is None else f"{x} [{unit_of(x)}]")
    last = y.rsplit('.', 1)[-1]
    ax.set_ylabel(f"{y.rsplit('.', 1)[0] if unit and ('/' in last or last in _UNIT_KEYS) else y}"
                  + (f" [{unit}]" if unit else ""))
    if not lines:
        ax.text(0.5, 0.5, "no points to draw (every row failed or lacks the columns)", ha="center",
                transform=ax.transAxes, fontsize=8)
    title = title or f"{y} over {x}"
    title += f" ({common})" if common else ""
    below = max((len(label) for label, _, _ in lines), default=0) > 32
    if below:
        fig.set_size_inches(7.6, 4.6 + 0.17 * ((len(lines) + 1) // 2))
    return finish(fig, ax, title, "upper left", path, legend_outside="below" if below else True)
