"""The accuracy statistics of a validation corpus (:mod:`loopmodel.models.accuracy`): the
nearest-rank p90, the tables per data location and regime, restructured cases kept apart,
and the round trip through a machine file's ``probe.validation`` (junk reads as nothing)."""
from __future__ import annotations

from hypothesis import given, strategies as st

from loopmodel.machine.probe_section import from_mapping
from loopmodel.models.accuracy import APART, error_stats, summarize


def test_p90_is_the_nearest_rank():
    s = error_stats([0.01 * k for k in range(1, 11)])  # 1 % .. 10 %
    assert (s.count, s.median, s.p90, s.max) == (10, 0.055, 0.09, 0.1)
    assert error_stats([0.3]).p90 == 0.3 and error_stats([]) is None


@given(st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=60))
def test_median_p90_max_are_ordered_and_count_every_case(errors):
    s = error_stats(abs(e) for e in errors)
    assert s.count == len(errors) and 0 <= s.median <= s.p90 <= s.max == max(abs(e) for e in errors)


def test_tables_per_level_and_regime_with_restructured_cases_apart():
    assert APART == ("restructured",)
    cases = [("L1", ("streaming",), 0.05), ("L1", ("streaming", "stencil"), -0.10), ("L2", ("stencil",), 0.2),
             ("L1", ("stencil", "restructured"), 8.0)]
    s = summarize(cases, {"seed": 0})
    assert s.overall.count == 3 and s.overall.max == 0.2  # the restructured case is not in overall
    assert s.by_level["L1"].count == 2 and s.by_level["L2"].count == 1
    assert s.by_regime["stencil"].count == 2 and s.by_regime["stencil"].max == 0.2
    assert s.by_regime["restructured"].count == 1 and s.by_regime["restructured"].max == 8.0
    assert ("L1", "restructured") in s.by_level_regime and s.by_level_regime[("L1", "stencil")].count == 1
    assert summarize(cases, apart=()).overall.count == 4


def test_round_trip_and_junk():
    s = summarize([("L1", ("streaming",), 0.05), ("MEM", ("memory-noisy",), -0.3)], {"date": "d"})
    back = from_mapping(s.to_mapping())
    assert back.by_level.keys() == s.by_level.keys() and back.by_level_regime.keys() == s.by_level_regime.keys()
    assert back.overall.count == 2 and back.provenance == {"date": "d"}
    assert from_mapping("junk") is None and from_mapping([1]) is None
    odd = from_mapping({"overall": {"count": "x"}, "by_level": {"L1": 3, "L2": {"count": 1}}, "by_regime": [],
                        "by_level_regime": {"no-slash": s.overall.to_mapping()}})
    assert odd.overall is None and odd.by_level == {} and odd.by_regime == {} and odd.by_level_regime == {}
