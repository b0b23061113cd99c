"""JSON Schemas of the ``--json`` documents, generated from their types.

Each command's document is declared once, as types (:mod:`loopmodel.report.doctypes`);
``python -m loopmodel.report.json_schema [DIR]`` writes ``DIR/<command>.schema.json``
(default ``docs/schema``) from them alone. The tests check that the committed files are what
it writes and that real output of every command conforms to the types
(:func:`loopmodel.report.doctypes.check`).
"""
from __future__ import annotations

import json
import os
import sys

from . import doctypes


def document_schema(command: str) -> dict:
    """The JSON Schema of ``command``'s document (:func:`loopmodel.report.doctypes.json_schema`)."""
    return doctypes.json_schema(command)


def schema_text(schema: dict) -> str:
    """``schema`` as the committed file holds it (one-space indent, a final newline)."""
    return json.dumps(schema, indent=1, sort_keys=False) + "\n"


def main(argv: list | None = None) -> int:
    """Write ``<DIR>/<command>.schema.json`` for every command of
    :data:`loopmodel.report.doctypes.DOCUMENTS`."""
    argv = sys.argv[1:] if argv is None else argv
    directory = argv[0] if argv else os.path.join("docs", "schema")
    os.makedirs(directory, exist_ok=True)
    for command in doctypes.DOCUMENTS:
        with open(os.path.join(directory, f"{command}.schema.json"), "w", encoding="utf-8") as fh:
            fh.write(schema_text(document_schema(command)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
