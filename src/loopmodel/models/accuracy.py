"""How far a model's predictions are from measurement on a host: the distribution of |error|
per data location and per regime, as ``validate --corpus`` measures it and as a probed machine
model stores it (``probe.validation``) for ``analyze`` to report.

The relative error of one case is predicted / measured (min-of-K) - 1, as in
``loopmodel validate`` (roofline-measurement-thesis.txt §3.4: the minimum of repeated runs is
the measurement least disturbed by the host); the statistics are over |error|: the median,
the 90th percentile (nearest rank) and the maximum. The cross-architecture study reports
model errors below 10 %, and below 5 % within one ccNUMA domain, for its hand-built machine
models (cross-architecture-machine-models.txt §5.2); these statistics say where a host stands.
"""
from __future__ import annotations

import math
from dataclasses import field

from ..record import record

#: fewest cases a statistic needs before ``analyze`` quotes it for a regime
MIN_CASES = 5


@record
class ErrorStats:
    """|relative error| over ``count`` cases (fractions: 0.05 is 5 %)."""

    count: int
    median: float
    p90: float
    max: float

    def to_mapping(self) -> dict:
        """``{"count", "median_abs_error", "p90_abs_error", "max_abs_error"}`` (plain numbers)."""
        return {"count": self.count, "median_abs_error": _round(self.median), "p90_abs_error": _round(self.p90),
                "max_abs_error": _round(self.max)}


@record
class AccuracySummary:
    """The error distribution of a validation corpus run.

    Attributes:
        overall: :class:`ErrorStats` over every case (None: no case).
        by_level: data location (``L1`` .. ``MEM``) -> :class:`ErrorStats`.
        by_regime: regime tag -> :class:`ErrorStats` over the cases carrying it.
        by_level_regime: ``(level, regime)`` -> :class:`ErrorStats`.
        provenance: where the figures come from (``date``, ``cases``, ``seed``, ``quick``...).
    """

    overall: ErrorStats | None
    by_level: dict
    by_regime: dict
    by_level_regime: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def to_mapping(self) -> dict:
        """Plain data for a machine file's ``probe.validation`` and for JSON documents."""
        return {"overall": self.overall.to_mapping() if self.overall else None,
                "by_level": {k: v.to_mapping() for k, v in self.by_level.items()},
                "by_regime": {k: v.to_mapping() for k, v in self.by_regime.items()},
                "by_level_regime": {f"{lv}/{rg}": v.to_mapping() for (lv, rg), v in self.by_level_regime.items()},
                "provenance": dict(self.provenance)}


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def error_stats(abs_errors) -> ErrorStats | None:
    """:class:`ErrorStats` of the |relative errors| ``abs_errors`` (None when empty). The 90th
    percentile is the nearest-rank one: the smallest value with at least 90 % of the cases at
    or below it."""
    xs = sorted(float(x) for x in abs_errors)
    if not xs:
        return None
    rank, mid = max(1, math.ceil(0.9 * len(xs))), len(xs) // 2
    median = xs[mid] if len(xs) % 2 else (xs[mid - 1] + xs[mid]) / 2  # statistics.median's definition
    return ErrorStats(len(xs), median, xs[rank - 1], xs[-1])


#: regimes whose cases count only in their own statistics: a ``restructured`` case's prediction
#: is for the loop as written while the compiler ran another loop nest, so its error says
#: nothing about the model's accuracy for the loops it does predict
APART = ("restructured",)


def summarize(cases, provenance: dict | None = None, apart: tuple = APART) -> AccuracySummary:
    """The :class:`AccuracySummary` of ``cases``: an iterable of ``(level, regimes, error)``
    with ``error`` = predicted / measured - 1 (signed fraction) and ``regimes`` a tuple of tags.
    A case carrying a tag of ``apart`` counts only in that tag's statistics (``by_regime`` and
    ``by_level_regime``), not in ``overall``, ``by_level`` or its other tags'."""
    cases = [(lv, tuple(rg), abs(float(e))) for lv, rg, e in cases]
    by_level, by_regime, by_pair = {}, {}, {}
    for lv, regimes, e in cases:
        kept = [rg for rg in regimes if rg in apart]
        if not kept:
            by_level.setdefault(lv, []).append(e)
        for rg in kept or regimes:
            by_regime.setdefault(rg, []).append(e)
            by_pair.setdefault((lv, rg), []).append(e)
    cases = [c for c in cases if not set(c[1]) & set(apart)]
    return AccuracySummary(error_stats(e for _, _, e in cases),
                           {k: error_stats(v) for k, v in by_level.items()},
                           {k: error_stats(v) for k, v in sorted(by_regime.items())},
                           {k: error_stats(v) for k, v in sorted(by_pair.items())}, dict(provenance or {}))


def _stats_from(mapping) -> ErrorStats | None:
    if not isinstance(mapping, dict):
        return None
    try:
        return ErrorStats(int(mapping["count"]), float(mapping["median_abs_error"]), float(mapping["p90_abs_error"]),
                          float(mapping["max_abs_error"]))
    except (KeyError, TypeError, ValueError):
        return None


def from_mapping(mapping) -> AccuracySummary | None:
    """The summary stored by :meth:`AccuracySummary.to_mapping` (a machine file's
    ``probe.validation``); None for anything that is not one (a stranger's file may hold
    anything: entries that do not read are left out)."""
    if not isinstance(mapping, dict):
        return None

    def table(key):
        got = mapping.get(key)
        return {k: s for k, v in got.items() if (s := _stats_from(v))} if isinstance(got, dict) else {}

    pairs = {tuple(k.split("/", 1)): v for k, v in table("by_level_regime").items() if "/" in k}
    prov = mapping.get("provenance")
    return AccuracySummary(_stats_from(mapping.get("overall")), table("by_level"), table("by_regime"), pairs,
                           dict(prov) if isinstance(prov, dict) else {})
