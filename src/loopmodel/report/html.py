"""Results as HTML for notebooks (Jupyter's ``_repr_html_``): the text reports of
:mod:`loopmodel.report.text` (``analyze``), :mod:`loopmodel.report.scaling` and
:mod:`loopmodel.report.bench`, written by the same rendering functions to an
:class:`HtmlConsole` instead of a terminal, so that the HTML shows the figures the command
line prints, in the field's notation (ECM ``{ T_OL || T_nOL | T_L1L2 | T_L2L3 | T_L3Mem }
cy/CL``, layer conditions, traffic, Roofline, notes), with every table an HTML table.

Every piece of text is escaped (:func:`html.escape`): kernel and machine names, array
subscripts and notes can hold ``<``, ``&`` or quotes, and none of them becomes markup.
"""
from __future__ import annotations

import html
import re

from .bench import render as render_bench
from .plain import Table, markup_text
from .scaling import render as render_scaling
from .text import render as render_analysis

#: a section heading of the text reports (``----- ECM -----``)
_HEADING = re.compile(r"^-{3,} (.+?) -{3,}$")
#: at most this many rows of a compact sweep's pieces in its HTML (the DataFrame holds them all)
MAX_PIECE_ROWS = 40


def _text(markup, markup_on: bool = True) -> str:
    """The plain text of one printed object: rich markup resolved (``[bold]``, ``\\[``), or,
    where only rich could tell, the string as it is."""
    if not isinstance(markup, str):
        return str(markup)
    if not markup_on:
        return markup
    plain = markup_text(markup)
    return markup if plain is None else plain


def _cell(tag: str, text: str, justify: str) -> str:
    style = ' style="text-align:right"' if justify == "right" else ' style="text-align:left"'
    return f"<{tag}{style}>{html.escape(text)}</{tag}>"


def table_html(title: str | None, columns: list, rows: list) -> str:
    """An HTML table: ``columns`` ``(header, justify)`` (``"left"``/``"right"``), ``rows`` of
    cell texts (rich markup, resolved); the title as the caption. Escaped."""
    caption = f"<caption>{html.escape(_text(title))}</caption>" if title else ""
    head = "<tr>" + "".join(_cell("th", _text(h), j) for h, j in columns) + "</tr>"
    body = "".join("<tr>" + "".join(_cell("td", _text(c), j) for c, (_, j) in zip(row, columns)) + "</tr>"
                   for row in rows)
    return f"<table>{caption}<thead>{head}</thead><tbody>{body}</tbody></table>"


def _table_parts(obj) -> tuple | None:
    """``(title, columns, rows)`` of a :class:`~loopmodel.report.plain.Table` or of a rich
    ``Table`` (its ``columns`` with ``header``, ``justify`` and ``cells``), else None."""
    if isinstance(obj, Table):
        return obj.title, list(obj.columns), list(obj.rows)
    columns = getattr(obj, "columns", None)
    if not isinstance(columns, list) or not all(hasattr(c, "cells") and hasattr(c, "header") for c in columns):
        return None
    cells = [list(c.cells) for c in columns]
    rows = [tuple(col[i] for col in cells) for i in range(max((len(c) for c in cells), default=0))]
    return getattr(obj, "title", None), [(c.header, c.justify) for c in columns], rows


class HtmlConsole:
    """A stand-in for rich's ``Console`` that the text reports print to: each string becomes
    escaped text (consecutive lines in one ``<pre>`` block, as the terminal aligns them), a
    section heading (``----- LC -----``) an ``<h4>``, a table an HTML table (:func:`table_html`).
    :meth:`html` returns what was printed."""

    def __init__(self):
        self._parts, self._lines = [], []

    def print(self, *objects, markup: bool | None = None, highlight: bool | None = None, **more) -> None:
        """Print as rich's ``Console.print`` does (``highlight`` and the other keywords change
        nothing here)."""
        for obj in objects:
            parts = _table_parts(obj)
            if parts is not None:
                self._flush()
                self._parts.append(table_html(*parts))
                continue
            for line in _text(obj, markup is not False).split("\n"):
                heading = _HEADING.match(line.strip())
                if heading:
                    self._flush()
                    self._parts.append(f"<h4>{html.escape(heading.group(1))}</h4>")
                elif line.strip() or self._lines:
                    self._lines.append(line)

    def _flush(self) -> None:
        while self._lines and not self._lines[-1].strip():
            self._lines.pop()
        if self._lines:
            self._parts.append("<pre>" + html.escape("\n".join(self._lines)) + "</pre>")
        self._lines = []

    def html(self) -> str:
        """What was printed, as HTML."""
        self._flush()
        return "".join(self._parts)


def _summary(kernel: str, machine: str, sizes: str, ecm=None, performance: str = "") -> str:
    """``<p>``: kernel on machine (sizes), the ECM contributions and predictions in Kerncraft's
    notation (kerncraft-tool-paper.txt §2.3) and the predicted performance."""
    out = f"<p><b>{html.escape(kernel)}</b> on <b>{html.escape(machine)}</b> ({html.escape(sizes or 'no sizes')})"
    if ecm is not None:
        out += (f"<br>ECM <code>{html.escape(ecm.notation())}</code>, prediction "
                f"<code>{html.escape(ecm.prediction_notation())}</code>")
    if performance:
        out += f"<br>{html.escape(performance)}"
    return out + "</p>"


def analysis_html(res, unit: str = "cy/CL", performance: str = "") -> str:
    """An :class:`~loopmodel.workflows.analysis.AnalysisResult` as HTML: a summary line (the
    ECM notation and ``performance``, the prediction in the result's unit), then the report of
    ``loopmodel analyze`` (:func:`loopmodel.report.text.render` in ``unit``): layer conditions,
    traffic, ECM, Roofline, notes."""
    sizes = ", ".join(f"{k}={v}" for k, v in res.defines.items())
    console = HtmlConsole()
    render_analysis(res, console, unit)
    return _summary(str(res.kernel.source), res.machine.name, sizes, res.ecm, performance) + console.html()


def scaling_html(curves: list, analysis, measured: dict | None = None, fit: tuple | None = None) -> str:
    """The report of ``loopmodel scaling`` (:func:`loopmodel.report.scaling.render`) as HTML."""
    console = HtmlConsole()
    render_scaling(curves, analysis, console, measured, fit)
    return console.html()


def bench_html(results: list) -> str:
    """The report of ``loopmodel bench`` (:func:`loopmodel.report.bench.render`) as HTML."""
    console = HtmlConsole()
    render_bench(results, console)
    return console.html()


def compact_sweep_html(points: int, pieces: int, columns: list, rows: list, count: int, constants: dict,
                       note: str | None) -> str:
    """A compact sweep (``analyze --json compact``) as HTML: how many ``points`` and ``pieces``,
    the constant sizes, why it was analysed point by point (``note``), and a table of ``count``
    rows of which ``rows`` (dicts, cells in ``columns``' order; at most :data:`MAX_PIECE_ROWS`)
    are shown: floats with 4 significant digits."""
    fixed = ", ".join(f"{k}={v}" for k, v in constants.items()) or "none"
    out = (f"<p>{points} size points in {pieces} piece{'s' if pieces != 1 else ''} of equal figures "
           f"(constant sizes: {html.escape(fixed)})</p>")
    if note:
        out += f"<p>analysed point by point: {html.escape(note)}</p>"
    shown = rows[:MAX_PIECE_ROWS]
    out += table_html(None, [(c, "left" if c.endswith("notation") else "right") for c in columns],
                      [[_figure(r.get(c)) for c in columns] for r in shown])
    if count > len(shown):
        out += f"<p>... {count - len(shown)} more rows (every piece is in <code>.pieces</code>)</p>"
    return out


def _figure(value) -> str:
    """A table cell of a compact sweep: a float with 4 significant digits, None as ``-``."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
