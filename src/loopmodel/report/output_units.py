"""Conversion of a time per unit of work (cy/CL) into the units users ask for.

cy/it = (cy/CL) / (iterations per CL); it/s = clock / (cy/it);
FLOP/s = it/s * FLOP/it; LUP/s = it/s (one lattice-site update per iteration).
"""
from __future__ import annotations

UNITS = ("cy/CL", "cy/it", "it/s", "FLOP/s", "LUP/s")


def convert(cy_per_cl: float | None, unit: str, iterations_per_cl: float, clock_hz: float,
            flops_per_it: float) -> float | None:
    """Convert ``cy_per_cl`` to ``unit`` (one of :data:`UNITS`); an unknown time (None) stays None."""
    if cy_per_cl is None:
        return None
    if unit == "cy/CL":
        return cy_per_cl
    cy_it = cy_per_cl / iterations_per_cl
    if unit == "cy/it":
        return cy_it
    it_s = clock_hz / cy_it if cy_it > 0 else float("inf")
    if unit in ("it/s", "LUP/s"):
        return it_s
    if unit == "FLOP/s":
        return it_s * flops_per_it
    raise ValueError(unit)


#: the JSON key of each unit (:mod:`loopmodel.report.schema`'s spelling)
UNIT_KEYS = {"cy/CL": "cy_per_cl", "cy/it": "cy_per_it", "it/s": "it_s", "FLOP/s": "flop_s", "LUP/s": "lup_s"}


def convert_all(cy_per_cl: float | None, res) -> dict:
    """All units for one time, keyed by :data:`UNIT_KEYS` (for JSON); values None for an unknown time."""
    it = res.traffic.iterations_per_unit
    return {UNIT_KEYS[u]: convert(cy_per_cl, u, it, res.machine.clock, res.kernel.flops_per_iteration)
            for u in UNITS}
