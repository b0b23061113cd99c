"""Latencies by operation and register width, as ``machine probe`` measured them on a host.

The machine model's ``in_core.latency`` holds one latency per operation, at the widest SIMD
width (cross-architecture-machine-models.txt §3.3); a dependency chain of scalar or narrower
instructions runs at the latency of its own width, which differs on some cores (on this
Sapphire-Rapids-class host the probe measured 2.0 cy for scalar, xmm and ymm additions and
3.6 cy for zmm). These accessors read the measured figures:

* :func:`op_latency`: ``in_core.latency_by_width`` (shared key ``{OP: {WIDTH_B: cy}}``,
  written by ``machine probe``) where the model has it, else the probe's raw points
  (``probe.in_core.points`` of the provenance, ``kind: latency``, the smallest
  ``cy_per_instruction_min``, as the probe writes ``in_core.latency``), validated here since
  the provenance is plain data;
* :func:`load_to_use`: the L1 load-to-use latency, the probe's pointer chase at the smallest
  size (``probe.latency``, ``cy_min``; measured by the probe);
* :func:`store_forward`: ``in_core.store_forward_latency`` (a store and the load of its
  address, store issue to load data, measured by the probe on a chain through memory).

All return None where the model holds no measured figure (bundled machine files).
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from .fields import OPS

#: register widths (bytes) the probe measures: 8 scalar double, 16/32/64 xmm/ymm/zmm (q/v on AArch64)
WIDTHS = (4, 8, 16, 32, 64)


@dataclass(frozen=True)
class Latency:
    """One latency and where it comes from.

    Attributes:
        cy: cycles.
        source: ``"probe, 8 B"`` (the width measured), ``"probe"``.
    """

    cy: float
    source: str


def _number(x) -> float | None:
    """``x`` as a latency in cy (0 < x <= 1000), else None: the provenance is a stranger's data."""
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        return None
    x = float(x)
    return x if math.isfinite(x) and 0 < x <= 1000 else None




def _by_width(machine, op: str, kind: str = "latency") -> dict:
    """width (B) -> cy (latency, or cy per instruction for ``kind="throughput"``) of ``op`` from
    ``in_core.latency_by_width`` / ``throughput_by_width``, else from the probe's points."""
    if kind not in ("latency", "throughput"):
        raise KeyError(kind)
    invert = kind == "throughput"  # the section's unit is instructions/cy
    table = (machine.in_core.throughput_by_width if invert else machine.in_core.latency_by_width) or {}
    out = {}
    for w, v in (table.get(op) or {}).items():
        cy = _number(1.0 / v if invert and _number(v) else v)
        if cy is not None and int(w) in WIDTHS:
            out[int(w)] = cy
    if out:
        return out
    for p in machine.probe.in_core_points if machine.probe else ():
        w, cy = p.width_bytes, _number(p.cy_per_instruction_min)
        if p.op == op and p.kind == kind and w in WIDTHS and cy is not None:
            out[w] = min(cy, out.get(w, cy))
    return out


def measured(machine, op: str, width: int, kind: str = "latency") -> float | None:
    """The probe's figure of ``op`` at exactly ``width`` B: latency in cy (``kind="latency"``) or
    cycles per instruction in a throughput loop (``kind="throughput"``); None where not measured.

    Raises:
        KeyError: an unknown ``kind``.
    """
    return _by_width(machine, op, kind).get(width)


def has_op_latencies(machine) -> bool:
    """Whether the model holds any measured latency by width (a probed host model)."""
    return any(_by_width(machine, op) for op in OPS)


def op_latency(machine, op: str, width: int) -> Latency | None:
    """The measured latency of operation ``op`` (ADD, MUL, FMA, DIV, SQRT) on registers of
    ``width`` bytes (module docstring for the sources).

    A width the probe did not measure takes the next wider one the same execution unit runs
    at that width on the cores we know: 4 B (float scalar) the 8 B figure, 8 B (scalar double)
    the 16 B one (scalar instructions execute in the low lane of the 128-bit unit); the
    source names the width taken (``"probe, 16 B"``).

    Returns:
        :class:`Latency`, or None without a measured figure for ``op`` at that width.
    """
    if op not in OPS:
        return None
    table = _by_width(machine, op)
    for w in {4: (4, 8, 16), 8: (8, 16)}.get(width, (width,)):
        if w in table:
            return Latency(table[w], f"probe, {w} B")
    return None


def load_to_use(machine) -> Latency | None:
    """The L1 load-to-use latency (cy): the probe's pointer chase at its smallest size, where that
    size fits in L1 (``probe.latency``: ``size_B``, ``cy_min``); None where not measured."""
    rows = machine.probe.latency if machine.probe else ()
    l1 = machine.memory_hierarchy[0].size if machine.memory_hierarchy and machine.memory_hierarchy[0].size else 0
    fits = [(r.size_B, _number(r.cy_min)) for r in rows if 0 < r.size_B <= l1]
    fits = [(s, cy) for s, cy in fits if cy is not None]
    return Latency(min(fits)[1], "probe, L1 pointer chase") if fits else None


def store_forward(machine) -> Latency | None:
    """Store-to-load forwarding latency (``in_core.store_forward_latency``: store issue to load
    data, measured by the probe on a chain through memory); None where not measured."""
    cy = _number(machine.in_core.store_forward_latency)
    return Latency(cy, "probe") if cy is not None else None


#: floating-point latencies (cy) of the vector ADD, MUL and FMA instructions by micro-architecture
#: short name (Kerncraft's OSACA/IACA codes, :attr:`~loopmodel.machine.model.MachineModel.micro_architecture`):
#: Intel 64 and IA-32 Architectures Optimization Reference Manual (Sandy Bridge to Ice Lake tables),
#: A. Fog, Instruction tables (Intel, AMD Zen 1/2), Marvell ThunderX2 (Vulcan) and Fujitsu A64FX
#: microarchitecture manuals; for machine files that give no ``in_core.latency`` (Kerncraft's)
DOCUMENTED_LATENCY = {
    "SNB": {"ADD": 3, "MUL": 5}, "IVB": {"ADD": 3, "MUL": 5},
    "HSW": {"ADD": 3, "MUL": 5, "FMA": 5}, "BDW": {"ADD": 3, "MUL": 3, "FMA": 5},
    "SKL": {"ADD": 4, "MUL": 4, "FMA": 4}, "SKX": {"ADD": 4, "MUL": 4, "FMA": 4},
    "CSX": {"ADD": 4, "MUL": 4, "FMA": 4}, "CLX": {"ADD": 4, "MUL": 4, "FMA": 4},
    "ICL": {"ADD": 4, "MUL": 4, "FMA": 4}, "ICX": {"ADD": 4, "MUL": 4, "FMA": 4},
    "ZEN": {"ADD": 3, "MUL": 3, "FMA": 5}, "ZEN1": {"ADD": 3, "MUL": 3, "FMA": 5},
    "ZEN2": {"ADD": 3, "MUL": 3, "FMA": 5},
    "TX2": {"ADD": 6, "MUL": 6, "FMA": 6}, "A64FX": {"ADD": 9, "MUL": 9, "FMA": 9},
}


def documented_latency(machine, op: str) -> Latency | None:
    """The documented latency of ``op`` (ADD, MUL, FMA) on the machine's micro-architecture
    (:data:`DOCUMENTED_LATENCY`), for a machine model without ``in_core.latency.<op>``; None
    where the micro-architecture or the operation is not tabulated."""
    arch = (machine.micro_architecture or "").upper()
    cy = DOCUMENTED_LATENCY.get(arch, {}).get(op)
    return Latency(float(cy), f"documented for {arch}") if cy is not None else None
