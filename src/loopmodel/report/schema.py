"""The envelope and the key-naming rule of every JSON document loopmodel prints.

Naming rule (all commands): keys are snake_case; a key whose value has a unit ends in
that unit, spelled as in the text and made identifier-safe: ``_Hz``, ``_B``, ``_s``,
``_W``, ``_J``, ``_cy``; a rate per second is ``_<unit>_s`` (``_B_s``, ``_flop_s``,
``_it_s``, ``_lup_s``); any other quotient is ``_<unit>_per_<unit>`` (``_cy_per_cl``,
``_cy_per_it``, ``_B_per_cy``, ``_flop_per_B``, ``_J_per_it``). Names of model
quantities keep the notation of the papers and take the suffix too (``T_OL_cy_per_cl``,
``T_ECM_cy_per_cl``). Dimensionless counts and ratios (cores, iterations, fractions,
relative errors) have no suffix. No object carries a separate ``unit`` field for its
keys. A mapping keyed by units (``performance``) uses the same spellings as keys
(``cy_per_cl``, ``it_s``, ...).

Every document (every line of JSON Lines) starts with ``schema_version`` (this module's
:data:`SCHEMA_VERSION`, raised when a key is renamed or removed) and ``loopmodel_version``.
JSON has no infinity and no NaN: a report writes an infinite figure (a performance for a
time of 0, a transition size no finite size reaches) as the string ``"inf"``
(:func:`finite`) and an undefined one as null; the tests check every sample document with
``json.dumps(..., allow_nan=False)``.
"""
from __future__ import annotations

import math

from ..version import __version__

#: version of the JSON output schema (docs/schema/<command>.schema.json)
SCHEMA_VERSION = "2"

#: the envelope keys every document starts with
ENVELOPE = ("schema_version", "loopmodel_version")


def document(body: dict) -> dict:
    """``body`` behind the envelope keys (``schema_version``, ``loopmodel_version``)."""
    return {"schema_version": SCHEMA_VERSION, "loopmodel_version": __version__, **body}


def finite(x):
    """A number for JSON: ``x`` itself, ``"inf"`` (``"-inf"``) where infinite, None where NaN or
    None (not applied to whole documents: a sweep writes thousands, and only a few figures can
    be infinite)."""
    if x is None:
        return None
    x = float(x)
    if math.isfinite(x):
        return x
    return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
