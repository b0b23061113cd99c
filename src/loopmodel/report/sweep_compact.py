"""``analyze --json compact``: a sweep of sizes as one document, the figures once per piece.

A sweep evaluated piece by piece (:mod:`loopmodel.workflows.pieces`) has few distinct results:
the layer conditions, the traffic, the ECM and Roofline figures are the same for every point
of a piece. The compact document lists the points as columns (the varying sizes and the piece
of each point) and each piece's analysis once, as the JSON report of its first point
(:func:`loopmodel.report.json_report.to_dict`). Of that report, ``defines``, the byte counts
of the layer-condition requirements and of the data set (``requirement_B``, ``data_set_B``)
and the sizes named in its notes are the first point's; every other figure is every point's.

Keys (:class:`loopmodel.report.doctypes.compact.AnalyzeCompactDocument`): the envelope,
``format`` ("compact sweep"), ``points``, ``piecewise`` (false where the sweep had to be
analysed point by point: each point is then a piece, and ``piecewise_note`` says why),
``constants`` (the sizes the same at every point), ``varying`` (the swept sizes), ``columns``
(each varying size and ``piece``: one value per point, in the order of the sweep) and
``pieces`` (``first_point``, ``points``, ``result``). The points at which the kernel does
nothing (an empty loop, an array without elements) are left out of the columns: ``points``
counts the others, ``skipped_points`` and ``skipped_note`` say how many were left out and why.
"""
from __future__ import annotations

import json

from .json_report import to_dict
from .schema import document

#: points per line of a column in the written text (a million-point column is not one line)
COLUMN_LINE = 4096


def header(pieces, reason: str | None, constants: dict, skipped: tuple = (0, None)) -> dict:
    """The document without its columns and pieces (see the module docstring); ``skipped``: the
    number of points left out and the note saying why (:meth:`loopmodel.workflows.analyze.AnalyzeRun.note`)."""
    body = {"format": "compact sweep", "points": int(len(pieces.piece)), "piecewise": reason is None}
    if reason is not None:
        body["piecewise_note"] = f"analysed point by point: {reason}"
    if skipped[0]:
        body.update(skipped_points=skipped[0], skipped_note=skipped[1])
    body.update(constants=constants, varying=list(pieces.names))
    return document(body)


def write(pieces, reason: str | None, constants: dict, out, skipped: tuple = (0, None)) -> None:
    """Write the compact document of ``pieces`` (:class:`~loopmodel.workflows.pieces.Pieces`) with
    ``out`` (a text stream's ``write``), the columns in lines of :data:`COLUMN_LINE` values, so that
    no text of the whole sweep is held in memory; ``skipped`` as for :func:`header`."""
    head = json.dumps(header(pieces, reason, constants, skipped), indent=1)
    out(head[:-2] + ',\n "columns": {')
    columns = dict(pieces.columns, piece=pieces.piece)
    for k, (name, col) in enumerate(columns.items()):
        out(("," if k else "") + f"\n  {json.dumps(name)}: [")
        for start in range(0, len(col), COLUMN_LINE):
            values = ",".join(map(str, col[start:start + COLUMN_LINE].tolist()))
            out(("," if start else "") + "\n   " + values)
        out("]")
    out('\n },\n "pieces": [')
    counts = pieces.counts()
    for k, (first, res) in enumerate(zip(pieces.first, pieces.results)):
        piece = {"first_point": int(first), "points": int(counts[k]), "result": to_dict(res)}
        out(("," if k else "") + "\n  " + json.dumps(piece))
    out("\n ]\n}\n")
