"""Machine-file validation: the YAML mapping against the machine-model dataclasses (I/O edge).

The schema is declared once, by the frozen dataclasses of :mod:`loopmodel.machine.model`
(field names are the YAML keys; constraints and unit conversions are their ``Annotated``
metadata). This module validates a mapping against them with a pydantic ``TypeAdapter``
(units and tables are converted here, when the file is read) and then checks what no
single field can: the hierarchy ends in ``MEM``, links join adjacent levels, the
overlap names exist, 'measured' has measurements, and a bandwidth in B/s lies in the
physical range per cycle at the machine's clock (:data:`~loopmodel.machine.fields.BANDWIDTH_CY`).
The result is what :mod:`loopmodel.fileio.machine_files` caches, so an analysis of an unchanged
machine file does not validate it again.

Sections follow cross-architecture-machine-models.txt §3.3 (in-core part, memory
hierarchy, links with bandwidth per direction and latency penalty, overlap) and
kerncraft-tool-paper.txt §2.2 (measured streaming bandwidths).
"""
from __future__ import annotations

import re
from functools import lru_cache

import pydantic

from ..errors import MachineError
from ..machine.fields import BANDWIDTH_CY
from ..machine.model import MachineModel
from ..machine.provenance import unknown_keys


@lru_cache(maxsize=1)
def _adapter():
    return pydantic.TypeAdapter(MachineModel)


def validate_mapping(data: dict, source: str) -> MachineModel:
    """Validate a loopmodel-format mapping; returns the data model.

    Args:
        data: the YAML mapping (top-level keys of :class:`MachineModel`).
        source: the file name used in error messages.

    Raises:
        MachineError: one line naming ``source``, the key path and the problem.
    """
    try:
        model = _adapter().validate_python(data)
    except pydantic.ValidationError as exc:
        err = exc.errors()[0]
        raise MachineError(_message(err), file=source, where=_loc(err.get("loc", ())) or None) from None
    problem = _inconsistency(model)
    if problem:
        raise MachineError(problem, file=source)
    return model


def _message(err: dict) -> str:
    """One line for a pydantic error: what is wrong (the key path is given separately)."""
    if err.get("type") == "missing":
        return "required key is missing"
    if err.get("type") in ("extra_forbidden", "unexpected_keyword_argument"):
        return "unknown key"
    return re.sub(r"^(Value error|Assertion failed), ", "", err.get("msg", "invalid value"))


def _loc(loc) -> str:
    """``('links', 0, 'bandwidth')`` -> ``links[0].bandwidth`` (pydantic's schema names dropped)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "list[", "dict[", "literal[")) or "[" in str(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


def _inconsistency(m: MachineModel) -> str | None:
    """The first cross-field problem of a model whose fields are each valid, or None."""
    for check in (_hierarchy_problem, _link_problem, _overlap_problem, _victim_problem, _provenance_problem):
        problem = check(m)
        if problem:
            return problem
    return None


def _hierarchy_problem(m: MachineModel) -> str | None:
    levels = m.memory_hierarchy
    names = [lv.level for lv in levels]
    if names[-1] != "MEM":
        return "memory_hierarchy: the last level must be MEM"
    if len(set(names)) != len(names):
        return "memory_hierarchy: level names must be unique"
    for i, lv in enumerate(levels[:-1]):
        if lv.size is None:
            return f"memory_hierarchy[{i}] ({lv.level}): size is required"
        if lv.sets and lv.ways and abs(lv.sets * lv.ways * m.cacheline_size - lv.size) > 0.5:
            return (f"memory_hierarchy[{i}] ({lv.level}): sets*ways*cacheline_size = "
                    f"{lv.sets * lv.ways * m.cacheline_size:.0f} B differs from size {lv.size:.0f} B")
    if levels[0].type == "victim":
        return "memory_hierarchy[0]: the first level cannot be a victim cache"
    return None


def _pairs(m: MachineModel) -> list:
    names = [lv.level for lv in m.memory_hierarchy]
    return [(names[i], names[i + 1]) for i in range(len(names) - 1)]


def _link_problem(m: MachineModel) -> str | None:
    names = [lv.level for lv in m.memory_hierarchy]
    pairs = _pairs(m)
    got = [tuple(lk.between) for lk in m.links]
    for i, p in enumerate(got):
        if p not in pairs:
            return f"links[{i}]: {list(p)} are not adjacent levels of memory_hierarchy ({', '.join(names)})"
    for p in pairs:
        if p not in got:
            return f"links: no link between {p[0]} and {p[1]}"
    for i, lk in enumerate(m.links):
        n = len(lk.bandwidth)
        if (lk.duplex == "full") != (n == 2):
            return f"links[{i}]: duplex '{lk.duplex}' needs {'two bandwidths' if lk.duplex == 'full' else 'one bandwidth'}"
        per_cycle = _bandwidth_at_clock(m, lk)
        if per_cycle:
            return f"links[{i}].bandwidth: {per_cycle}"
        if lk.measured:
            if lk.between[1] != "MEM":
                return f"links[{i}]: only the memory link can use 'measured'"
            mem = m.benchmarks.measurements.get("MEM")
            if mem is None or not mem.bandwidths:
                return (f"links[{i}].bandwidth: 'measured' needs measured bandwidths in "
                        "benchmarks.measurements.MEM (or give the bandwidth, e.g. '40 GB/s')")
    return None


def _bandwidth_at_clock(m: MachineModel, lk) -> str | None:
    """A B/s bandwidth of ``lk`` that is outside :data:`~loopmodel.machine.fields.BANDWIDTH_CY`
    per cycle at the machine's clock (what the models use), or None."""
    for bw in lk.bandwidth:
        if bw.unit == "B/s":
            try:
                BANDWIDTH_CY.check(bw.value / m.clock)
            except ValueError as exc:
                return f"{bw} at clock {m.clock:g} Hz: {exc}"
    return None


def _overlap_problem(m: MachineModel) -> str | None:
    names = [lv.level for lv in m.memory_hierarchy]
    valid = {"T_OL", "T_nOL"} | {f"{a}{b}" for a, b in _pairs(m)}
    valid |= {f"{a}MEM" for a in names[:-1]}  # memory bypass: L2MEM next to L3MEM
    for key in ("overlap", "overlap_unless_memory"):
        for item in getattr(m, key):
            if item not in valid:
                return f"{key}: unknown contribution '{item}' (valid: {', '.join(sorted(valid))})"
    return None


def _victim_problem(m: MachineModel) -> str | None:
    names = [lv.level for lv in m.memory_hierarchy]
    for i, lv in enumerate(m.memory_hierarchy[:-1]):
        if (lv.memory_bypass or not lv.victim_clean) and lv.type != "victim":
            return (f"memory_hierarchy[{i}] ({lv.level}): memory_bypass and victim_clean apply to "
                    "victim caches only")
    for lvl, table in m.benchmarks.measurements.items():
        if lvl not in names:
            return f"benchmarks.measurements: unknown level '{lvl}'"
        for kernel, values in table.bandwidths.items():
            for bps in values:
                try:
                    BANDWIDTH_CY.check(bps / m.clock)
                except ValueError as exc:
                    return f"benchmarks.measurements.{lvl}.{kernel}: {bps:g} B/s at clock {m.clock:g} Hz: {exc}"
    return None


def _provenance_problem(m: MachineModel) -> str | None:
    unknown = unknown_keys(m)
    if unknown:
        return (f"provenance: '{unknown[0]}' is not a figure of this model (figures: clock, in_core.throughput, "
                "memory_hierarchy.<level>, links.<upper><lower>, ...; see docs/machine-file.md)")
    return None
