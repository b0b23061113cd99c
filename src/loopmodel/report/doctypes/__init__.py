"""The ``--json`` documents as types: one :class:`typing_extensions.TypedDict` per document and
per nested object, from which the JSON Schemas (``docs/schema/<command>.schema.json``) are
generated and against which the tests check real output.

Each command's document type (:data:`DOCUMENTS`) starts with the envelope
(:class:`Envelope`: ``schema_version``, ``loopmodel_version``, :mod:`loopmodel.report.schema`);
keys follow that module's naming rule (the unit is in the key). Every object forbids keys it
does not declare; a key the report writes only in some cases is ``NotRequired``; a number
the report cannot know is null (:data:`Num`). Mappings keyed by data (levels, ports, sizes,
define names) are ``dict[str, ...]``.

:func:`json_schema` returns a command's JSON Schema (draft 2020-12, written by pydantic from
the types); :func:`check` validates a document against its type (strict: no coercion of
strings to numbers) and returns the problems as ``'path: message'`` lines.
"""
from __future__ import annotations

from pydantic import TypeAdapter, ValidationError

from ..schema import SCHEMA_VERSION
from .analyze import AnalyzeDocument
from .base import Count, Envelope, Num, NumOrInf, Strict
from .compact import AnalyzeCompactDocument
from .compare import CompareDocument
from .measured import BenchDocument, CorpusDocument, MeasureDocument, RooflineDocument, ValidateDocument
from .multicore import AppDocument, EnergyDocument, ScalingDocument
from .omp import OmpDocument, OmpSizesDocument
from .sequence import AnalyzeFunctionDocument

__all__ = ["Strict", "Envelope", "Num", "NumOrInf", "Count", "DOCUMENTS", "document_type", "json_schema", "check"]

#: command -> the type of its document
DOCUMENTS = {
    "analyze": AnalyzeDocument,
    "analyze-compact": AnalyzeCompactDocument,
    "analyze-function": AnalyzeFunctionDocument,
    "scaling": ScalingDocument,
    "app": AppDocument,
    "energy": EnergyDocument,
    "compare": CompareDocument,
    "omp": OmpDocument,
    "omp-sizes": OmpSizesDocument,
    "bench": BenchDocument,
    "validate": ValidateDocument,
    "validate-corpus": CorpusDocument,
    "measure": MeasureDocument,
    "roofline": RooflineDocument,
}


def document_type(command: str):
    """The TypedDict of ``command``'s document.

    Raises:
        KeyError: no document type for ``command``.
    """
    return DOCUMENTS[command]


def _adapter(command: str):
    return TypeAdapter(document_type(command))


def json_schema(command: str) -> dict:
    """The JSON Schema (draft 2020-12) of ``command``'s document, from its type."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "$id": f"https://loopmodel/schema/{SCHEMA_VERSION}/{command}.schema.json"}
    schema.update(_untitled(_adapter(command).json_schema()))
    schema["title"] = f"loopmodel {command} --json (schema version {SCHEMA_VERSION})"
    return schema


def _untitled(node):
    """``node`` without the titles pydantic gives every property ("Clock Hz" for ``clock_Hz``):
    the key and its description say it; the titles of the object types stay."""
    if isinstance(node, list):
        return [_untitled(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {k: _untitled(v) for k, v in node.items()}
    if "properties" in out:
        out["properties"] = {k: {a: b for a, b in v.items() if a != "title"} for k, v in out["properties"].items()}
    return out


def check(command: str, document: dict) -> list:
    """Problems of ``document`` against ``command``'s type: ``['path: message', ...]``, empty
    when it conforms (strict: a number written as a string, a boolean for a number, an
    undeclared or a missing key are all problems)."""
    try:
        _adapter(command).validate_python(document, strict=True)
    except ValidationError as exc:
        return [f"$.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
    return []
