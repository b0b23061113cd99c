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

import importlib
from typing import Annotated, Literal

from pydantic import ConfigDict, Field
from typing_extensions import NotRequired, TypedDict

from ..schema import SCHEMA_VERSION

__all__ = ["Strict", "Envelope", "Num", "NumOrInf", "Count", "NotRequired", "Annotated", "Field", "Literal",
           "DOCUMENTS", "document_type", "json_schema", "check"]

#: a number in the unit its key names; null where the input cannot support the figure
Num = float | None
#: a number that may be infinite: ``"inf"`` (:func:`loopmodel.report.schema.finite`; JSON has no
#: infinity), or null where unknown
NumOrInf = float | Literal["inf"] | None
#: a whole number (cores, threads, iterations, sizes in elements)
Count = int


class Strict(TypedDict):
    """Base of every document object: keys not declared are errors."""

    __pydantic_config__ = ConfigDict(extra="forbid")


class Envelope(Strict):
    """The two keys every document starts with."""

    schema_version: Annotated[Literal[SCHEMA_VERSION], Field(description="version of this schema: raised when a key is "
                                                              "renamed or removed")]
    loopmodel_version: Annotated[str, Field(description="the loopmodel release that wrote the document")]


#: command -> ``module:class`` of its document type (imported on first use)
DOCUMENTS = {
    "analyze": "analyze:AnalyzeDocument",
    "scaling": "multicore:ScalingDocument",
    "app": "multicore:AppDocument",
    "energy": "multicore:EnergyDocument",
    "omp": "omp:OmpDocument",
    "bench": "measured:BenchDocument",
    "validate": "measured:ValidateDocument",
    "measure": "measured:MeasureDocument",
    "roofline": "measured:RooflineDocument",
}


def document_type(command: str):
    """The TypedDict of ``command``'s document.

    Raises:
        KeyError: no document type for ``command``.
    """
    module, name = DOCUMENTS[command].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def _adapter(command: str):
    from pydantic import TypeAdapter

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
    from pydantic import ValidationError

    try:
        _adapter(command).validate_python(document, strict=True)
    except ValidationError as exc:
        return [f"$.{'.'.join(str(p) for p in e['loc'])}: {e['msg']}" for e in exc.errors()]
    return []
