"""Where each figure of a machine model comes from: the machine file's ``provenance:`` section
(pure data, no I/O).

A model of a machine the user may not have is only as good as its sources. The section maps
a *figure* of the model (:func:`figure_keys`: the clock, the in-core throughputs, one cache
level, one link, the coherence table, ...) to its source (a vendor manual, an optimisation
guide, an LLVM scheduling model, OSACA's data, a published measurement with its reference)
and, where the figure is derived rather than measured or published, ``estimated: true`` with
the reasoning::

    provenance:
      clock: {source: 'AMD EPYC 9654 data sheet: base 2.4 GHz'}
      links.L3MEM: {source: '...', estimated: true, reason: '80 % of the 12 DDR5-4800 channels'}

``machine show`` prints it with the model; docs/machines.md is generated from it. A key that
names no figure of the model is an error (:func:`unknown_keys`, checked when the file is read);
a figure without a source is listed by :func:`unsourced` (every bundled model sources all of
its figures, a test checks it). The figure list follows the parts of a machine model in
cross-architecture-machine-models.txt §3.3: in-core part, memory hierarchy, links with their
bandwidths and penalties, overlap; plus the multicore contention (§3.4.4), the coherence table
(benchmark-based-coherence-model.txt §IV) and the power model (ecm-model-slides.txt, "A simple
power model for multicore chips").
"""
from __future__ import annotations

from dataclasses import dataclass

#: figures every model has (besides one per cache level and one per link), in the order the
#: documentation lists them
_ALWAYS = ("clock", "cores_per_socket", "numa_domains_per_socket", "in_core.simd_width", "in_core.throughput",
           "in_core.latency", "in_core.load", "in_core.store", "in_core.ports", "overlap", "contention_p0")

#: what each fixed figure covers, for the reference documentation
FIGURE_DOCS = {
    "clock": "the core clock",
    "cores_per_socket": "cores per socket (and sockets, SMT)",
    "numa_domains_per_socket": "ccNUMA domains per socket",
    "in_core.simd_width": "the SIMD width and the FLOPs per cycle",
    "in_core.throughput": "instruction throughputs per operation type",
    "in_core.latency": "instruction latencies per operation type",
    "in_core.load": "L1 load limits (instructions and bytes per cycle, with the load+store limit)",
    "in_core.store": "L1 store limits",
    "in_core.ports": "the port model: port groups, stores in T_OL or T_nOL, the llvm-mca/OSACA target "
                     "and its port lists",
    "overlap": "which ECM contributions overlap",
    "contention_p0": "the multicore contention parameter p0 (saturation behaviour)",
    "memory_hierarchy.<level>": "one cache level: size, sets, ways, sharing, inclusion or victim policy",
    "links.<upper><lower>": "one link: bandwidth per direction, duplex, latency penalties, sharing",
    "benchmarks": "the measured streaming bandwidths",
    "coherence": "the MESI transition table",
    "power": "the chip power model",
}

#: the ``provenance`` keys as a file writes them (the shape of the other sections' key tables in
#: :mod:`loopmodel.fileio.machine_reference`): one row per figure
PROVENANCE_KEY_DOCS = tuple((key, "mapping (FigureSource)", "", False, "", text) for key, text in FIGURE_DOCS.items())


@dataclass(frozen=True)
class FigureSource:
    """The source of one figure of a machine model.

    Attributes:
        source: where the figure comes from (citation with section, table or URL).
        estimated: True where the figure is derived (from other figures, a neighbouring part,
            a rule of thumb), not measured or published for this part.
        reason: how an estimated figure was derived; required with ``estimated``.
    """

    source: str
    estimated: bool = False
    reason: str = ""

    def __post_init__(self):
        if not isinstance(self.source, str) or not self.source.strip():
            raise ValueError("'source' must be a non-empty string")
        if not isinstance(self.estimated, bool):
            raise ValueError("'estimated' must be true or false")
        if not isinstance(self.reason, str):
            raise ValueError("'reason' must be a string")
        if self.estimated and not self.reason.strip():
            raise ValueError("'estimated: true' needs a 'reason' saying how the figure was derived")


def provenance_section(v) -> dict:
    """``provenance``: figure key -> :class:`FigureSource` (``{source: ..., estimated: ...,
    reason: ...}`` in a file).

    Raises:
        ValueError: the key of the section that is wrong and what is wrong (one line).
    """
    if v is None:
        return {}
    if not isinstance(v, dict):
        raise ValueError("must map figures (clock, links.L3MEM, ...) to {source: ..., estimated: ..., reason: ...}")
    out = {}
    for key, entry in v.items():
        if isinstance(entry, FigureSource):
            out[str(key)] = entry
            continue
        if not isinstance(key, str) or not isinstance(entry, dict):
            raise ValueError(f"'{key}': must be a mapping {{source: ..., estimated: ..., reason: ...}}")
        extra = sorted(set(entry) - {"source", "estimated", "reason"})
        if extra:
            raise ValueError(f"'{key}': unknown key '{extra[0]}' (known: source, estimated, reason)")
        if "source" not in entry:
            raise ValueError(f"'{key}': 'source' is missing")
        try:
            out[key] = FigureSource(entry["source"], entry.get("estimated", False), entry.get("reason", ""))
        except ValueError as exc:
            raise ValueError(f"'{key}': {exc}") from None
    return out


def figure_keys(model) -> tuple:
    """The figures of ``model`` a source can be given for, in documentation order: the fixed
    ones, ``memory_hierarchy.<level>`` per cache level, ``links.<upper><lower>`` per link, and
    ``benchmarks``, ``coherence``, ``power`` where the model has them.

    Args:
        model: a :class:`~loopmodel.machine.model.MachineModel`.
    """
    keys = list(_ALWAYS)
    keys += [f"memory_hierarchy.{lv.level}" for lv in model.memory_hierarchy[:-1]]
    keys += [f"links.{lk.between[0]}{lk.between[1]}" for lk in model.links]
    if model.benchmarks.measurements:
        keys.append("benchmarks")
    keys += [k for k in ("coherence", "power") if getattr(model, k) is not None]
    return tuple(keys)


def unknown_keys(model) -> list:
    """Keys of ``model.provenance`` that name no figure of the model (an error in a file)."""
    known = set(figure_keys(model))
    return [k for k in model.provenance if k not in known]


def unsourced(model) -> list:
    """The figures of ``model`` that its ``provenance`` section gives no source for."""
    return [k for k in figure_keys(model) if k not in model.provenance]


def estimated(model) -> list:
    """``[(figure, FigureSource), ...]`` of the figures marked ``estimated``, in figure order."""
    return [(k, model.provenance[k]) for k in figure_keys(model)
            if k in model.provenance and model.provenance[k].estimated]
