"""``loopmodel omp`` over a ``-D`` range: one JSON document per size point (JSON Lines, the
shape declared in :mod:`loopmodel.report.doctypes.omp`, ``omp-sizes``) or a streamed table,
one row per point, each written as soon as its point is computed.

The rows are :class:`~loopmodel.workflows.omp_sizes.SizeResult` (read here by their attributes).
"""
from __future__ import annotations

from .omp_json import MODEL_NOTE
from .schema import document


def size_document(result, program: str, machine: str) -> dict:
    """The JSON document of one size point: ``program``, ``machine``, ``defines`` (the point's
    ``-D`` values) and per thread count ``total_time_s``, ``speedup``, ``phase_time_s`` (every
    executed phase, in the order of ``omp --json``'s ``phases``) and ``repeats``."""
    return document({
        "program": program, "machine": machine, "defines": dict(result.defines),
        "threads": [{"threads": r.threads, "total_time_s": r.total_seconds, "speedup": r.speedup,
                     "phase_time_s": list(r.phase_seconds),
                     "repeats": [{"line": line, "count": len(its), "time_s_per_it": list(its)}
                                 for line, its in zip(result.repeat_lines, r.repeat_seconds)]}
                    for r in result.rows]})


class SizesPrinter:
    """Streams a size study as a plain aligned table: the point's sizes, the predicted time of
    one execution per thread count (s) and the fastest thread count. The title and header are
    written with the first row; each row is flushed as it comes, so memory does not grow with
    the number of points.

    Args:
        write: ``str -> None``; flush: ``() -> None``; title: the table's title.
        widest: constant -> the widest value the study gives it (aligns the size columns).
    """

    def __init__(self, write, flush, title: str, widest: dict):
        self.write, self.flush, self.title, self.widest = write, flush, title, widest
        self.widths = None

    def add(self, result) -> None:
        """Write the row of one size point (title and header first)."""
        names = list(result.defines)
        cells = [str(result.defines[n]) for n in names] + [f"{r.total_seconds:.4e}" for r in result.rows]
        cells.append(str(min(result.rows, key=lambda r: r.total_seconds).threads))
        if self.widths is None:
            header = names + [f"T={r.threads}" for r in result.rows] + ["fastest T"]
            self.widths = [max(len(h), len(c), len(str(self.widest.get(h, "")))) for h, c in zip(header, cells)]
            self.write(f"{self.title}\n{self._line(header)}\n")
        self.write(self._line(cells) + "\n")
        self.flush()

    def close(self, notes) -> None:
        """The notes (nothing else if no row was written)."""
        for note in (*notes, MODEL_NOTE):
            self.write(f"note: {note}\n")
        self.flush()

    def _line(self, cells: list) -> str:
        return "  ".join(c.rjust(w) for c, w in zip(cells, self.widths))
