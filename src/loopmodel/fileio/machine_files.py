"""Reading machine files: loopmodel YAML, Kerncraft YAML, and the built-in library.

``load_machine("SkylakeSP_Gold-6148")`` finds a built-in model by name;
``load_machine("my.yml")`` reads a file in loopmodel's schema
(:class:`~loopmodel.machine.model.MachineModel`) or in Kerncraft's format
(kerncraft-tool-paper.txt §2.2, Listing 2), which is converted on the fly by
:func:`loopmodel.fileio.kerncraft_machine.convert_kerncraft`. Errors name the file, the key path
and the problem.
"""
from __future__ import annotations

import importlib
import os
from pathlib import Path

from .. import cache
from ..errors import MachineError
from ..machine.model import MachineModel
from .host_models import HOST_NAME, resolve_host
from .reader import decode, read_bytes

# built-in models ship as package data (installed as plain files); paths as strings: a warm run
# needs no pathlib (a few ms of start-up)
_BUILTIN_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "machines")


def builtin_names() -> list:
    """Names of the built-in machine models (file stems)."""
    return sorted(f[:-4] for f in os.listdir(_BUILTIN_DIR)
                  if f.endswith(".yml") and not f.startswith(".") and os.path.isfile(os.path.join(_BUILTIN_DIR, f)))


def _builtin_path(name: str) -> str | None:
    """The built-in model file of that name, or None."""
    cand = os.path.join(_BUILTIN_DIR, f"{name}.yml")
    return cand if os.path.isfile(cand) else None


def _read_bytes(path) -> bytes:
    """The machine file's bytes (:func:`loopmodel.fileio.reader.read_bytes`: a regular file of
    at most :data:`~loopmodel.fileio.reader.DATA_MAX_BYTES`)."""
    if not os.path.lexists(path):
        raise MachineError("machine file not found (and no built-in model of that name; "
                           "see 'loopmodel machine list')", file=str(path))
    return read_bytes(path, "machine file", MachineError)


def read_yaml(path: str, raw: bytes | None = None) -> dict:
    """Load a YAML mapping (from ``raw`` if given) with :func:`loopmodel.fileio.yaml_reader.load_yaml`
    (safe, duplicate keys refused, bounded); errors carry ``file:line:col``."""
    text = decode(_read_bytes(path) if raw is None else raw, str(path), "machine file", MachineError)
    data = _parsing("yaml_reader").load_yaml(text, str(path), MachineError)
    if not isinstance(data, dict):
        raise MachineError("machine file must contain a YAML mapping", file=str(path))
    return data


def load_machine(name_or_path: str, overrides: dict | None = None) -> MachineModel:
    """Load a machine model by built-in name or file path.

    Args:
        name_or_path: built-in name (``loopmodel machine list``), YAML path, or ``host``: the
            last probe of this host (:mod:`loopmodel.fileio.host_models`).
        overrides: top-level keys replaced before validation.

    Returns:
        The validated :class:`MachineModel`. Validated models are cached per
        user (:mod:`loopmodel.cache`) keyed by the file's bytes, the overrides
        and loopmodel's source (:func:`loopmodel.cache.code_digest`), so an unchanged
        file is not re-validated.

    Raises:
        MachineError: missing file, YAML error, or schema violation (one line
            with file and key path).
    """
    name = str(name_or_path)
    if name == HOST_NAME and not os.path.isfile(HOST_NAME):  # a folder 'host' is no machine file
        name = str(resolve_host())
    is_yaml, exists = os.path.splitext(name)[1] in (".yml", ".yaml"), os.path.exists(name or ".")
    builtin = None if (is_yaml or exists) else _builtin_path(name)
    if builtin is None and not exists and not is_yaml:
        raise MachineError(f"unknown machine '{name}': not a built-in model "
                           f"({', '.join(builtin_names())}) and no such file")
    if builtin is not None:
        path, source = builtin, name
    else:
        path = Path(name)
        source = str(path)
    raw = _read_bytes(path)
    key = cache.make_key(raw, source, overrides)
    model = cache.load("machines", key)
    if isinstance(model, MachineModel):
        return model
    model = machine_from_dict(read_yaml(str(path), raw), source, overrides)
    cache.store("machines", key, model)
    return model


def is_kerncraft_format(data: dict) -> bool:
    return "memory hierarchy" in data or "kerncraft version" in data


def machine_from_dict(data: dict, source: str, overrides: dict | None = None) -> MachineModel:
    """Validate a machine mapping (either format); see :func:`load_machine`."""
    if is_kerncraft_format(data):
        data = _parsing("kerncraft_machine").convert_kerncraft(data, source)
    if overrides:
        data = {**data, **overrides}
    data.setdefault("name", Path(source).stem)
    return validate(data, source)


def validate(data: dict, source: str) -> MachineModel:
    """Validate a loopmodel-format mapping against the schema; returns the data model.

    The schema is the dataclasses of :mod:`loopmodel.machine.model`
    (:func:`loopmodel.fileio.machine_schema.validate_mapping`).

    Raises:
        MachineError: one line naming ``source``, the key path and the problem.
    """
    return _parsing("machine_schema").validate_mapping(data, source)


def _parsing(name: str):
    """The module ``name`` of this package that parses a machine file: :mod:`.yaml_reader`
    (PyYAML), :mod:`.kerncraft_machine` (Kerncraft's format) or :mod:`.machine_schema`
    (pydantic). Loaded here when a file is read and validated, not when this module is:
    :func:`load_machine` of an unchanged file takes the validated model from the cache and
    needs none of them (benchmarks/speed_check.py)."""
    return importlib.import_module(f"{__package__}.{name}")
