"""How far a model's predictions are from measurement on a host: the distribution of |error|
per data location and per regime, as ``validate --corpus`` measures it and as a probed machine
model stores it (``probe.validation``, typed by :class:`~loopmodel.machine.probe_section.AccuracySummary`
when the file is read) for ``analyze`` to report.

The relative error of one case is predicted / measured (min-of-K) - 1, as in
``loopmodel validate`` (roofline-measurement-thesis.txt §3.4: the minimum of repeated runs is
the measurement least disturbed by the host); the statistics are over |error|: the median,
the 90th percentile (nearest rank) and the maximum. The cross-architecture study reports
model errors below 10 %, and below 5 % within one ccNUMA domain, for its hand-built machine
models (cross-architecture-machine-models.txt §5.2); these statistics say where a host stands.
"""
from __future__ import annotations

import math

from ..machine.probe_section import AccuracySummary, ErrorStats

#: fewest cases a statistic needs before ``analyze`` quotes it for a regime
MIN_CASES = 5


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
