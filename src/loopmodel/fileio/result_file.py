"""A study's table as a file: rows spooled while they are computed, then written as CSV or Parquet.

Rows travel in batches (:class:`RowBatch`: the columns, the values every row of the batch
shares, the others per row), as the tasks of a sweep return them and as the spool keeps them.

The table has a column for every field any of its rows has, in the order they first appear,
and a Parquet column's type depends on all of its values (:meth:`Spool.arrow_type`): neither
is known before the last row. So :class:`ResultFile` keeps the rows as they come in a spool
(an anonymous temporary file beside the output, one line of JSON per batch: :class:`Spool`) along
with the columns and the kinds of values seen, and writes the file from it at the end: CSV
row by row, Parquet a row group (:data:`ROW_GROUP_ROWS` rows) at a time. Memory holds one
batch or one row group, however many rows there are; the disk holds the spool until the
file is written.

The file is written beside its path under a hidden temporary name and put in place when it
is whole (:func:`loopmodel.atomic.publish`): an interrupted or failed run leaves nothing
behind, and a file the user had is never replaced (with ``force``: replaced atomically).
pyarrow is imported only to write Parquet (:func:`pyarrow_modules`).
"""
from __future__ import annotations

from dataclasses import dataclass

import csv
import json
import os
import sys
import tempfile

from ..atomic import publish, temporary_path
from ..errors import DefineError

#: ``-o`` extensions -> format
FORMATS = {".csv": "csv", ".parquet": "parquet", ".pq": "parquet"}
#: rows per Parquet row group
ROW_GROUP_ROWS = 16384
_INT64 = (-(1 << 63), (1 << 63) - 1)


def output_format(path: str | None, option: str = "-o") -> str:
    """``"csv"`` or ``"parquet"`` by the extension of ``path`` (None: ``"csv"``, for stdout).

    Raises:
        DefineError: another extension (one line naming ``option`` and the path).
    """
    if path is None:
        return "csv"
    ext = os.path.splitext(str(path))[1].lower()
    if ext not in FORMATS:
        raise DefineError(f"{option} {path}: unknown format (use {', '.join(FORMATS)})")
    return FORMATS[ext]


@dataclass(frozen=True)
class RowBatch:
    """Rows, compactly (most fields are the same for every row of a sweep's task).

    Attributes:
        columns: the fields, in the order they first appear.
        shared: column -> value that every row has (kept once).
        rows: one tuple per row: the values of the other columns (in ``columns`` order),
            None where the row has no such field.
    """

    columns: tuple
    shared: dict
    rows: list

    @classmethod
    def of(cls, rows: list) -> "RowBatch":
        """From one flat dict per row."""
        columns = tuple(dict.fromkeys(c for r in rows for c in r))
        first = rows[0] if rows else {}
        shared = {c: v for c, v in first.items()
                  if all(c in r and type(r[c]) is type(v) and r[c] == v for r in rows)}
        rest = [c for c in columns if c not in shared]
        return cls(columns, shared, [tuple(r.get(c) for c in rest) for r in rows])

    def failures(self) -> int:
        """How many rows have an ``error`` (a value other than None)."""
        if "error" in self.shared:
            return len(self.rows) if self.shared["error"] is not None else 0
        if "error" not in self.columns:
            return 0
        at = [c for c in self.columns if c not in self.shared].index("error")
        return sum(1 for values in self.rows if values[at] is not None)

    def dicts(self):
        """One flat dict per row (every column of the batch, in ``columns`` order)."""
        rest = [c for c in self.columns if c not in self.shared]
        for values in self.rows:
            own = dict(zip(rest, values))
            yield {c: self.shared[c] if c in self.shared else own[c] for c in self.columns}


class Spool:
    """Rows kept in an anonymous temporary file (gone when closed, or when the process ends
    however it ends), one line of JSON per batch (values are None, booleans, numbers and
    text, which JSON gives back as they were), with what writing them needs: ``columns`` (in the order they
    first appear, after the leading ones), the types of the values of each column, ``n`` rows.

    Args:
        leading: the columns that come first.
        folder: where the temporary file lives (None: the system's temporary folder).
    """

    def __init__(self, leading: tuple, folder: str | None = None):
        self.file = tempfile.TemporaryFile(dir=folder, prefix=".loopmodel-spool-")
        self.columns = {c: set() for c in leading}  # column -> types of its values (None left out)
        self.wide = set()  # columns with an int outside int64
        self.huge = set()  # columns with an int too large for a float
        self.n = 0

    def close(self) -> None:
        self.file.close()

    def add(self, rows: list) -> None:
        """Keep a batch of rows (flat dicts; a missing column is None)."""
        batch = RowBatch.of(rows)
        for c in batch.columns:
            self.columns.setdefault(c, set())
        for c, v in batch.shared.items():
            self._see(c, v)
        rest = [c for c in batch.columns if c not in batch.shared]
        for values in batch.rows:
            for c, v in zip(rest, values):
                self._see(c, v)
        self.file.write(json.dumps([batch.columns, batch.shared, batch.rows]).encode() + b"\n")
        self.n += len(rows)

    def _see(self, column: str, value) -> None:
        if value is None:
            return
        kind = type(value)
        self.columns[column].add(kind)
        if kind is int and not _INT64[0] <= value <= _INT64[1]:
            self.wide.add(column)
            try:
                float(value)
            except OverflowError:
                self.huge.add(column)

    def batches(self):
        """The batches kept, in order, each a list of flat dicts (the batch's columns), read
        back from the file one at a time."""
        self.file.flush()
        self.file.seek(0)
        for line in self.file:
            columns, shared, rows = json.loads(line)
            yield list(RowBatch(tuple(columns), shared, rows).dicts())

    def arrow_type(self, column: str) -> str:
        """The Parquet type of a column: ``bool``, ``int64``, ``float64`` (integers and floats)
        or ``string`` (text, and any other mix: non-strings as JSON); an integer column with a
        value outside int64, or a float column with an integer beyond a double, is text too."""
        kinds = self.columns[column]
        if kinds and kinds <= {bool}:
            return "bool"
        if kinds and kinds <= {int}:
            return "string" if column in self.wide else "int64"
        if kinds and kinds <= {int, float}:
            return "string" if column in self.huge else "float64"
        return "string"


def write_csv(spool: Spool, fh) -> None:
    """The spool's rows as CSV on the text stream ``fh``: a header, then one line per row
    (None is an empty field)."""
    names = list(spool.columns)
    w = csv.writer(fh, lineterminator="\n")
    w.writerow(names)
    for batch in spool.batches():
        for row in batch:
            w.writerow(["" if row.get(c) is None else row[c] for c in names])


def pyarrow_modules() -> tuple:
    """``(pyarrow, pyarrow.parquet)``, imported here only, when a Parquet file is written:
    pyarrow is an optional dependency and takes a while to import, which no other command
    should pay for."""
    import pyarrow
    import pyarrow.parquet

    return pyarrow, pyarrow.parquet


def write_parquet(spool: Spool, path: str, metadata: dict | None = None) -> None:
    """The spool's rows as a Parquet file at ``path`` (:meth:`Spool.arrow_type` per column),
    row groups of about :data:`ROW_GROUP_ROWS` rows (whole batches). ``metadata`` (text keys
    and values) is the file's key-value metadata (a study's: the document envelope,
    ``schema_version`` and ``loopmodel_version``)."""
    pa, pq = pyarrow_modules()
    names = list(spool.columns)
    kinds = {c: spool.arrow_type(c) for c in names}
    types = {"bool": pa.bool_(), "int64": pa.int64(), "float64": pa.float64(), "string": pa.string()}
    schema = pa.schema([(c, types[kinds[c]]) for c in names], metadata=metadata or None)
    with pq.ParquetWriter(path, schema) as writer:
        group, rows = [], 0  # Arrow record batches: 8 bytes a number, not a Python object
        for batch in spool.batches():
            group.append(_record_batch(pa, batch, names, kinds, schema))
            rows += len(batch)
            if rows >= ROW_GROUP_ROWS:
                writer.write_table(pa.Table.from_batches(group, schema), row_group_size=rows)
                group, rows = [], 0
        if group or not spool.n:
            writer.write_table(pa.Table.from_batches(group, schema), row_group_size=max(rows, 1))


def _record_batch(pa, rows: list, names: list, kinds: dict, schema):
    """One Arrow record batch of ``rows`` (``pa``: the pyarrow module)."""
    columns = []
    for c in names:
        values = [r.get(c) for r in rows]
        if kinds[c] == "float64":
            values = [None if v is None else float(v) for v in values]
        elif kinds[c] == "string":
            values = [v if v is None or isinstance(v, str) else json.dumps(v) for v in values]
        columns.append(pa.array(values, schema.field(c).type))
    return pa.RecordBatch.from_arrays(columns, schema=schema)


class ResultFile:
    """A study's rows on their way to ``path`` (CSV or Parquet by extension, :func:`output_format`)
    or, for None, to stdout as CSV. A context manager: :meth:`add` batches of rows as they
    come, :meth:`finish` writes the output; leaving without :meth:`finish` (an error, an
    interrupt) writes nothing and removes every temporary file.

    Args:
        path: the output file, or None (stdout).
        leading: the columns that come first (a study's :meth:`~loopmodel.workflows.study.Study.columns`).
        force: replace an existing ``path``.
        option: how messages name the output (``-o``, ``output``).
        metadata: a Parquet file's key-value metadata (text keys and values).

    Raises:
        DefineError: an unknown extension, or no temporary file can be made (one line).
    """

    def __init__(self, path: str | None, leading: tuple, force: bool = False, option: str = "-o",
                 metadata: dict | None = None):
        self.path, self.force, self.option, self.metadata = path, force, option, metadata
        self.fmt = output_format(path, option)
        folder = os.path.dirname(os.path.abspath(path)) if path else None
        try:
            self.spool = Spool(leading, folder)
        except OSError as exc:
            raise self._error("cannot create the temporary file for the rows", exc) from None
        self.partial = None
        self.started = False

    def _error(self, what: str, exc: OSError) -> DefineError:
        return DefineError(f"{self.option}: {what}: {exc.strerror or exc}", file=self.path)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.spool.close()
        if self.partial and os.path.lexists(self.partial):
            os.unlink(self.partial)
        return False

    def add(self, rows: list) -> None:
        """Keep a batch of rows (flat dicts) until :meth:`finish`.

        Raises:
            DefineError: the temporary file cannot be written (e.g. the disk is full; one line).
        """
        try:
            self.spool.add(rows)
        except OSError as exc:
            raise self._error("cannot keep the rows in a temporary file", exc) from None

    def finish(self) -> None:
        """Write every row kept: CSV on stdout, or the file, put in place whole
        (:func:`~loopmodel.atomic.publish`).

        Raises:
            DefineError: the file exists by now (not ``force``) or cannot be written (one line).
        """
        self.started = True
        if self.path is None:
            write_csv(self.spool, sys.stdout)
            return
        try:
            self.partial = temporary_path(self.path)
            with open(self.partial, "x", encoding="utf-8", newline="") as fh:
                if self.fmt == "csv":
                    write_csv(self.spool, fh)
            if self.fmt == "parquet":
                write_parquet(self.spool, self.partial, self.metadata)
            publish(self.partial, self.path, self.force, self.option)
        except OSError as exc:
            raise self._error("cannot write", exc) from None

    def left(self) -> str:
        """What the output holds when the run stops before :meth:`finish` is done."""
        if self.path is not None:
            return f"nothing written to {self.path}"
        return "the CSV on stdout is incomplete" if self.started else "nothing written"
