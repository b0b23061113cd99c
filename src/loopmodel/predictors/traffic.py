"""The data-traffic interface shared by all cache predictors.

A predictor (layer conditions, or cache simulation) returns a
:class:`TrafficPrediction`: for every cache level, how many cache lines per
unit of work enter that level from the next one (``loads_cl``, incl.
write-allocate) and leave it towards the next one (``stores_cl``: dirty
evictions, plus clean ones into a victim cache). ECM and Roofline only read
this structure, so they work with either predictor.
"""
from __future__ import annotations

from dataclasses import dataclass, field



@dataclass(frozen=True)
class LevelTraffic:
    """Traffic on the link between ``level`` and the next level away from the core.

    Attributes:
        level: cache level name (``L1`` means the L1<->L2 link).
        loads_cl: cache lines per unit of work moved toward the core over that link.
        stores_cl: cache lines per unit of work moved away from the core.
        hits, misses: demand lookups (loads and stores, one per accessed
            cache line per access) per unit of work that hit / miss in ``level``.
        cacheline_size: bytes per cache line.
        evicts_cl: cache lines per unit of work replaced in ``level`` (clean or dirty).
    """

    level: str
    loads_cl: float
    stores_cl: float
    hits: float = 0.0
    misses: float = 0.0
    cacheline_size: int = 64
    evicts_cl: float = 0.0

    @property
    def bytes(self) -> float:
        """Bytes per unit of work on this link (both directions)."""
        return (self.loads_cl + self.stores_cl) * self.cacheline_size

    @property
    def load_bytes(self) -> float:
        return self.loads_cl * self.cacheline_size

    @property
    def store_bytes(self) -> float:
        return self.stores_cl * self.cacheline_size


@dataclass(frozen=True)
class TrafficPrediction:
    """Per-level traffic for one kernel, machine and set of sizes.

    Attributes:
        predictor: ``"LC"`` or ``"SIM"``.
        iterations_per_unit: innermost iterations in one unit of work (one CL
            of the written array).
        levels: one :class:`LevelTraffic` per cache level, closest to the core first.
        notes: remarks for the report (e.g. ignored loop-invariant accesses).
    """

    predictor: str
    iterations_per_unit: float
    levels: tuple
    notes: tuple = field(default=())

    def level(self, name: str) -> LevelTraffic:
        for lv in self.levels:
            if lv.level == name:
                return lv
        raise KeyError(name)


def nt_stores_note(arrays, effect: str = "") -> str:
    """The report note of ``--nt-stores`` for either predictor: the write-only ``arrays`` whose stores
    bypass the caches and what that means to the predictor (``effect``), or that there is none."""
    if not arrays:
        return "--nt-stores: no array is only written, so no store is non-temporal"
    names = ", ".join(f"'{n}'" for n in arrays)
    return f"non-temporal stores (--nt-stores): the write-only array(s) {names} bypass the caches{effect}"
