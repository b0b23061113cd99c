"""Measurements that check themselves over time (loopmodel.measure.stability): the blocks of one
round spread over ``spread_s`` seconds (pauses asked, their bound), and a fresh measurement
compared with the last one of the same case (a note and JSON where they disagree, silence where
they agree or nothing earlier exists, one more round at most). Clocks and measurements are fakes."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from loopmodel.measure.bench import run_bench
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.measure.stability import PAUSE_S, Stability, against_earlier, measure_in_blocks


class FakeTime:
    """A monotonic clock that moves only when a block runs (``block_s`` each, in turn) or a pause is taken."""

    def __init__(self, block_s=(0.1,)):
        self.t, self.block_s, self.pauses, self.starts = 100.0, list(block_s), [], []

    def now(self):
        return self.t

    def sleep(self, s):
        assert s >= 0
        self.pauses.append(s)
        self.t += s

    def block(self, minima):
        it = iter(minima)

        def measure_block(runs):
            self.starts.append(self.t)
            self.t += self.block_s[(len(self.starts) - 1) % len(self.block_s)]
            return KernelMeasurement("k.c", {"N": 1}, 10, (next(it) * 10,) * runs, "gcc", ("-O3",), 0)
        return measure_block


def test_blocks_start_spread_over_the_span_asked():
    ft = FakeTime([0.1])
    _, s = measure_in_blocks(ft.block([1e-9, 1.01e-9, 1.02e-9]), 9, spread_s=1.0, sleep=ft.sleep, now=ft.now)
    assert [round(t - ft.starts[0], 6) for t in ft.starts] == [0, 0.5, 1.0]
    assert ft.pauses == pytest.approx([0.4, 0.4])  # the pause fills the gap the block left
    assert s.span_s == pytest.approx(1.1) and s.verdict == "agree"
    assert "over 1.1 s" in s.text() and s.to_dict()["span_s"] == pytest.approx(1.1)


def test_rounds_measured_again_are_not_spread():
    ft = FakeTime([0.1])
    _, s = measure_in_blocks(ft.block([1e-9, 1.2e-9, 1.4e-9, 1e-9, 1.01e-9, 1.3e-9]), 3, spread_s=1.0,
                             sleep=ft.sleep, now=ft.now)
    assert s.rounds == 2 and ft.pauses == pytest.approx([0.4, 0.4, PAUSE_S, PAUSE_S, PAUSE_S])


def test_no_spread_pauses_the_shortest_pause_only():
    ft = FakeTime([0.1])
    measure_in_blocks(ft.block([1e-9, 1.01e-9, 1.02e-9]), 3, spread_s=0, sleep=ft.sleep, now=ft.now)
    assert ft.pauses == [PAUSE_S, PAUSE_S]


def test_blocks_longer_than_the_step_are_not_delayed_further():
    ft = FakeTime([0.8])
    measure_in_blocks(ft.block([1e-9, 1.01e-9, 1.02e-9]), 3, spread_s=1.0, sleep=ft.sleep, now=ft.now)
    assert ft.pauses == [PAUSE_S, PAUSE_S]


@settings(max_examples=60, deadline=None)
@given(block_s=st.lists(st.floats(0, 3), min_size=1, max_size=9), blocks=st.integers(1, 5),
       spread_s=st.floats(0, 5), minima=st.lists(st.floats(1e-10, 1e-8), min_size=15, max_size=15))
def test_pauses_are_bounded_and_starts_are_spread(block_s, blocks, spread_s, minima):
    ft = FakeTime(block_s)
    _, s = measure_in_blocks(ft.block(minima), 10, blocks=blocks, spread_s=spread_s, sleep=ft.sleep, now=ft.now)
    n = min(blocks, 10)
    step = spread_s / (n - 1) if n > 1 else 0
    assert all(PAUSE_S <= p <= max(PAUSE_S, step) + 1e-9 for p in ft.pauses)
    assert sum(ft.pauses) <= spread_s + s.rounds * n * PAUSE_S + 1e-9  # the bound on the time added
    starts = ft.starts[:n]  # in the first round, block i starts >= i * step after the first
    assert all(t - starts[0] >= i * step - 1e-9 for i, t in enumerate(starts))
    assert ft.pauses[n - 1:] == [PAUSE_S] * (len(ft.pauses) - n + 1)  # later rounds: the shortest pause


def _result(minimum, tolerance=0.03):
    m = KernelMeasurement("k.c", {"N": 1}, 10, (minimum * 10, minimum * 11), "gcc", ("-O3",), 0)
    return m, Stability((minimum, minimum * 1.01), 1, tolerance, 0.5)


def _again(*minima):
    asked = []

    def measure_again():
        asked.append(1)
        return _result(minima[len(asked) - 1])
    return measure_again, asked


def test_nothing_earlier_or_an_agreeing_run_says_nothing():
    again, asked = _again(1e-9)
    for earlier in (None, {"date": "d", "min_s_per_it": 1.02e-9}):
        m, s = against_earlier(_result(1e-9), earlier, again)
        assert s.earlier is None and s.earlier_note() is None and s.to_dict()["earlier"] is None
        assert s.verdict == "agree" and len(m.seconds_per_call) == 2
    assert asked == []


def test_a_disagreeing_earlier_run_is_measured_once_more_and_reported():
    again, asked = _again(1.3e-9)
    m, s = against_earlier(_result(1.3e-9), {"date": "2026-01-02T03:04:05+00:00", "min_s_per_it": 1e-9}, again)
    assert asked == [1] and len(m.seconds_per_call) == 4 and s.rounds == 2 and s.span_s == pytest.approx(1.0)
    assert s.verdict == "disagree" and s.agreement <= s.tolerance  # the blocks agree; the runs do not
    e = s.to_dict()["earlier"]
    assert e == {"date": "2026-01-02T03:04:05+00:00", "min_s_per_it": 1e-9,
                 "relative_difference": pytest.approx(0.3), "remeasured": True}
    note = s.earlier_note()
    assert "+30.0 %" in note and "runs seconds apart disagree" in note and "\n" not in note
    assert "+30.0 % against an earlier run (disagree)" in s.text()
    json.dumps(s.to_dict(), allow_nan=False)


def test_measuring_again_can_settle_the_difference():
    again, asked = _again(1.01e-9)
    m, s = against_earlier(_result(1.3e-9), {"date": "d", "min_s_per_it": 1e-9}, again)
    assert asked == [1] and m.seconds_per_it_min == pytest.approx(1.01e-9)
    assert s.verdict != "disagree" and s.earlier.relative_difference == pytest.approx(0.01)
    assert "after measuring again" in s.earlier_note() and "disagree" not in s.earlier_note()


def test_bench_compares_with_its_last_fresh_run_and_measures_once_more(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    speed, calls = [1e-9], []

    def measure(path, defines, **kw):
        calls.append(kw["runs"])
        return KernelMeasurement(path, dict(defines), 10, (speed[0] * 10,) * kw["runs"], "gcc", ("-O3",), 0)
    args = dict(repeat=6, measure=measure, clock=lambda cpu: 3e9, sleep=lambda t: None, use_cache=False)
    first = run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args)
    assert len(calls) == 3 and first.stability.earlier is None  # nothing earlier: silence
    assert not any("earlier run" in n for n in first.notes)
    speed[0] = 1.2e-9  # the host slows down between the runs, and stays slow
    second = run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args)
    assert len(calls) == 3 + 6  # one more round of three blocks, no more
    doc = second.to_dict()["measurement"]
    assert doc["stability"]["earlier"]["relative_difference"] == pytest.approx(0.2)
    assert doc["stability"]["verdict"] == "disagree" and doc["repetitions"] == 12
    assert any("runs seconds apart disagree" in n for n in second.notes)
    third = run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args)  # compared with the second: agree
    assert len(calls) == 9 + 3 and third.stability.earlier is None and third.stability.verdict == "agree"
