"""Measurements that check themselves (loopmodel.measure.stability): the runs in blocks spread
over time, measured again while the two fastest blocks disagree, and a verdict in text and JSON."""
from __future__ import annotations

import json

import pytest

from loopmodel.measure.bench import run_bench
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.measure.stability import Stability, block_sizes, measure_in_blocks


def _blocks(*minima_per_block, iterations=100):
    """A measure_block that returns blocks whose fastest run is the next of ``minima_per_block``
    (s/it; the other runs 10 % slower), and the list of the runs it was asked for."""
    asked, it = [], iter(minima_per_block)

    def measure_block(runs):
        asked.append(runs)
        fastest = next(it)
        calls = (fastest * iterations,) + (1.1 * fastest * iterations,) * (runs - 1)
        return KernelMeasurement("k.c", {"N": 1}, iterations, calls, "gcc", ("-O3",), 0, notes=(f"block {len(asked)}",))
    return measure_block, asked


def test_runs_are_shared_among_the_blocks():
    assert block_sizes(10, 3) == [4, 3, 3] and block_sizes(3, 3) == [1, 1, 1]
    assert block_sizes(2, 3) == [1, 1] and block_sizes(1, 3) == [1] and block_sizes(5, 1) == [5]


def test_agreeing_blocks_are_one_round():
    block, asked = _blocks(1.00e-9, 1.02e-9, 1.20e-9)
    pauses = []
    m, s = measure_in_blocks(block, 10, sleep=pauses.append)
    assert asked == [4, 3, 3] and len(pauses) == 2  # a pause between blocks, none before the first
    assert s.rounds == 1 and s.verdict == "agree" and s.agreement == pytest.approx(0.02)
    assert s.spread == pytest.approx(0.2) and m.seconds_per_it_min == pytest.approx(1e-9)
    assert len(m.seconds_per_call) == 10 and m.notes == ("block 1", "block 2", "block 3")
    assert s.note() is None and "(agree)" in s.text()


def test_disagreeing_blocks_are_measured_again_until_two_agree():
    block, asked = _blocks(1.00e-9, 1.30e-9, 1.50e-9, 1.01e-9, 1.40e-9, 1.40e-9)
    m, s = measure_in_blocks(block, 6, sleep=lambda t: None)
    assert asked == [2] * 6 and s.rounds == 2 and s.verdict == "agree"
    assert s.agreement == pytest.approx(0.01) and len(m.seconds_per_call) == 12  # every run of both rounds


def test_blocks_that_never_agree_disagree_with_a_note_after_the_last_round():
    block, asked = _blocks(*(1e-9 * (1 + 0.1 * i) for i in range(9)))
    _, s = measure_in_blocks(block, 3, rounds=3, sleep=lambda t: None)
    assert len(asked) == 9 and s.rounds == 3 and s.verdict == "disagree"
    note = s.note()
    assert "10.0 %" in note and "3 round(s)" in note and "\n" not in note


def test_one_block_is_unchecked_and_says_so():
    block, asked = _blocks(1e-9)
    _, s = measure_in_blocks(block, 1, sleep=lambda t: None)
    assert asked == [1] and s.verdict == "unchecked" and s.agreement is None
    assert "not checked" in s.note() and s.to_dict()["agreement"] is None


def test_the_tolerance_decides():
    assert Stability((1.0, 1.05), 1, tolerance=0.03).verdict == "disagree"
    assert Stability((1.0, 1.05), 1, tolerance=0.06).verdict == "agree"
    d = Stability((1.05, 1.0, 1.2), 2).to_dict()
    assert d["verdict"] == "disagree" and d["spread"] == pytest.approx(0.2) and d["rounds"] == 2
    json.dumps(d, allow_nan=False)


def test_bench_records_the_stability_and_warns_when_unconfirmed(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    calls = []
    fastest = iter([1e-9 * (1 + 0.1 * i) for i in range(9)])  # no two blocks within 3 %

    def measure(path, defines, **kw):
        calls.append(kw)
        return KernelMeasurement(path, dict(defines), 10, (next(fastest) * 10,) * kw["runs"], "gcc", ("-O3",), 0)
    r = run_bench("examples/kernels/daxpy.c", {"N": 1000}, repeat=6, measure=measure, clock=lambda cpu: 3e9,
                  sleep=lambda t: None)
    assert len(calls) == 9 and [c["counters"] for c in calls] == [True] + [False] * 8  # counters once
    assert r.stability.verdict == "disagree" and r.stability.rounds == 3
    assert any(n.startswith("blocks disagree:") for n in r.notes)
    doc = r.to_dict()["measurement"]
    assert doc["stability"]["verdict"] == "disagree" and doc["repetitions"] == 18
