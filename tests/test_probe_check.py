"""The probe's self-check with fake measurements: thresholds and verdicts, the re-run policy
(bound per step, time bound, the better measurement kept), the refusal to write or store an
uncertain model without --force, and ``machine show`` of its verdicts (no hardware needed)."""
from __future__ import annotations

import dataclasses
import types

import pytest
import yaml

from helpers import SNB, run_main_inprocess

import loopmodel.measure.probe as probe
import loopmodel.workflows.probe as workflow_probe
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import machine_mapping
from loopmodel.measure import probe_check
from loopmodel.measure.bandwidth import BandwidthPoint
from loopmodel.measure.clock import ClockMeasurement
from loopmodel.measure.latency import LatencyPoint, LatencyResult
from loopmodel.measure.probe import ProbeData, ProbeOptions, fastest_of, remeasure
from loopmodel.measure.probe_check import (CACHE_SPREAD_MAX, CLOCK_SPREAD_MAX, EXTRA_ATTEMPTS, LINK_RESIDUAL_MAX,
                                           MEMORY_SPREAD_MAX, self_check)
from loopmodel.workflows.hostmodel import HostModel, build_checked_host_model

OPTIONS = ProbeOptions((1, 2), True, 3, 0.004, "gcc")


def clock(spread: float) -> ClockMeasurement:
    """Three runs at 3 GHz with (max - min) / median = ``spread``."""
    adds = int(3e9)
    return ClockMeasurement(adds, (1.0,) * 3, (1.0, adds / (3e9 * (1 + spread)), adds / (3e9 * (1 - 1e-12))))


def point(kernel="copy", threads=1, spread=0.0, reps=5, base=1e-3) -> BandwidthPoint:
    """A point whose slowest repetition is ``spread`` (as (max - min) / max) above its fastest."""
    slow = base / (1 - spread)
    return BandwidthPoint(kernel, threads, 16384, 0, (base,) + (slow,) * (reps - 1), 10, 1024)


def data(clock_spread=0.02, l1_spread=0.02, mem_spread=0.04, latency=0.01) -> ProbeData:
    lat = LatencyResult((LatencyPoint(12288, 1.0 - latency, 1.0, 1.0, 3),), 0, True, 64, "gcc", "12")
    return ProbeData({"duration_s": 30.0, "compiler_flags": "-O3"}, None, clock(clock_spread), None, lat,
                     tables={"L1": {"copy": [point(spread=l1_spread)]}, "MEM": {"copy": [point(spread=mem_spread)]}},
                     options=OPTIONS)


def by_name(check) -> dict:
    return {c.name: c for c in check.checks}


# ----------------------------------------------------------------------------- checks


def test_one_slow_repetition_does_not_make_a_bandwidth_point_uncertain():
    """The model takes the fastest run: a point is judged by whether a second run reproduces
    it, not by its slowest run (one hypervisor exit among K)."""
    slow_one = BandwidthPoint("copy", 1, 16384, 0, (1e-3, 1.01e-3, 3e-3), 10, 1024)
    assert probe_check.bandwidth_spread(slow_one) == pytest.approx(0.01 / 1.01)
    lucky_one = BandwidthPoint("copy", 1, 16384, 0, (1e-3, 1.5e-3, 1.5e-3), 10, 1024)
    assert probe_check.bandwidth_spread(lucky_one) > CACHE_SPREAD_MAX
    assert probe_check.bandwidth_spread(BandwidthPoint("copy", 1, 16384, 0, (1e-3,), 10, 1024)) == 0.0
    assert CACHE_SPREAD_MAX < MEMORY_SPREAD_MAX and CLOCK_SPREAD_MAX < LINK_RESIDUAL_MAX and EXTRA_ATTEMPTS >= 1


def test_quiet_measurements_pass_every_check():
    check = self_check(data(), 0.15)
    assert check.ok and check.uncertain == ()
    assert set(by_name(check)) == {"clock spread", "link fit residual", "cache bandwidth repetitions",
                                   "memory bandwidth repetitions", "latency repetitions"}
    assert check.to_mapping()["verdict"] == "ok"


@pytest.mark.parametrize("clock_spread, verdict", [(0.09, "ok"), (0.11, "uncertain"), (0.47, "uncertain")])
def test_clock_spread_against_its_threshold(clock_spread, verdict):
    c = by_name(self_check(data(clock_spread=clock_spread), None))["clock spread"]
    assert c.figure == pytest.approx(clock_spread, rel=1e-6) and c.verdict == verdict and c.step == "clock"


def test_an_uncertain_clock_is_explained_in_words():
    check = self_check(data(clock_spread=0.31), 0.1, {"clock": 3})
    assert not check.ok
    assert check.uncertain == ("clock: spread 31 % after 3 attempts (threshold 10 %): cy figures (in-core, cy/CL, "
                               "latencies) may be off by that much",)


def test_link_residual_above_its_threshold_is_uncertain_and_none_is_not_checked():
    assert by_name(self_check(data(), 0.23))["link fit residual"].ok
    assert not by_name(self_check(data(), 0.40))["link fit residual"].ok
    assert "link fit residual" not in by_name(self_check(data(), None))


def test_repetitions_have_a_tighter_threshold_in_the_caches_than_in_memory():
    check = by_name(self_check(data(l1_spread=0.08, mem_spread=0.08), None))
    cache, mem = check["cache bandwidth repetitions"], check["memory bandwidth repetitions"]
    assert not cache.ok and cache.points == ((("L1", "copy", 1), pytest.approx(0.08)),)
    assert mem.ok
    assert "L1 copy at 1 core" in cache.reason() and "1 point disagree by up to 8 %" in cache.reason()


def test_self_check_mapping_carries_figures_thresholds_verdicts_attempts():
    m = self_check(data(latency=0.3), 0.1, {"latency": 2}).to_mapping()
    lat = next(c for c in m["checks"] if c["name"] == "latency repetitions")
    assert lat == {"name": "latency repetitions", "step": "latency", "figure_percent": 30.0, "threshold_percent": 10.0,
                   "verdict": "uncertain", "attempts": 2, "points": [{"point": "12288 B", "spread_percent": 30.0}]}
    assert m["verdict"] == "uncertain" and len(m["uncertain"]) == 1


# ----------------------------------------------------------------------------- re-run policy


def fake_fit(residual=0.1):
    def fit(d):
        return HostModel({"probe": {"fits": {"links": {"chosen": {"residual_percent": 100 * residual}}}}}, None, ())
    return fit


@pytest.fixture
def no_validation(monkeypatch):
    monkeypatch.setattr("loopmodel.workflows.hostmodel.validate_mapping", lambda m, where: None)


def test_a_step_that_never_settles_is_rerun_at_most_the_bound(no_validation):
    calls = []

    def remeasure(d, step, points):
        calls.append((step, points))
        return d
    model = build_checked_host_model(data(clock_spread=0.3, l1_spread=0.5), remeasure, fake_fit())
    assert [s for s, _ in calls] == ["clock", "bandwidth tables"] * EXTRA_ATTEMPTS
    assert calls[1][1] == (("L1", "copy", 1),)  # only the point that disagrees
    check = model.self_check
    assert not check.ok and by_name(check)["clock spread"].attempts == 1 + EXTRA_ATTEMPTS
    assert model.mapping["probe"]["self_check"]["verdict"] == "uncertain"


def test_a_step_that_settles_is_rerun_once_and_ends_ok(no_validation):
    calls = []

    def remeasure(d, step, points):
        calls.append(step)
        return dataclasses.replace(d, clock=clock(0.01))
    model = build_checked_host_model(data(clock_spread=0.3), remeasure, fake_fit())
    assert calls == ["clock"] and model.self_check.ok
    assert by_name(model.self_check)["clock spread"].attempts == 2


def test_quiet_measurements_are_not_rerun(no_validation):
    model = build_checked_host_model(data(), lambda *a: pytest.fail("re-run"), fake_fit())
    assert model.self_check.ok and model.self_check.rerun_s >= 0


def test_a_bad_link_fit_reruns_its_inputs(no_validation):
    calls = []
    build_checked_host_model(data(), lambda d, s, p: calls.append(s) or d, fake_fit(0.4))
    assert calls == ["link fit"] * EXTRA_ATTEMPTS


def test_reruns_stop_at_the_time_bound(no_validation):
    t = iter(range(0, 1000, 15))
    model = build_checked_host_model(data(clock_spread=0.3), lambda d, s, p: d, fake_fit(), now=lambda: next(t))
    assert "time bound of 20 s" in model.self_check.stopped  # 30 s probe: max(20, 0.5 x 30)
    assert by_name(model.self_check)["clock spread"].attempts == 2


def test_the_faster_repetitions_of_all_attempts_are_kept():
    old = point(spread=0.5, base=2e-3)  # 2 ms, then 4 ms x 4
    new = dataclasses.replace(point(spread=0.05, base=1e-3), sweeps=20, elements_per_thread=512)  # same work
    kept = fastest_of(old, new)
    assert kept.sweeps == old.sweeps and len(kept.seconds) == 5
    assert min(kept.seconds) == pytest.approx(1e-3) and probe_check.bandwidth_spread(kept) < 0.06


def test_remeasure_reruns_only_the_named_points_and_keeps_the_better(monkeypatch):
    asked = []

    def bw(kernel, threads, size, reps, *a, **k):
        asked.append((kernel, threads, size, reps))
        return point(kernel, threads, spread=0.01, reps=reps, base=0.9e-3)
    monkeypatch.setattr(probe, "run_bandwidth", bw)
    d = data(l1_spread=0.5, mem_spread=0.5)
    out = remeasure(d, "bandwidth tables", (("L1", "copy", 1),))
    assert asked == [("copy", 1, 16384, 5)]
    assert probe_check.bandwidth_spread(out.tables["L1"]["copy"][0]) < 0.15
    assert out.tables["MEM"] == d.tables["MEM"]


def test_remeasure_clock_keeps_the_runs_that_agree_better(monkeypatch):
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: clock(0.5))
    d = data(clock_spread=0.2)
    assert remeasure(d, "clock", ()).clock is d.clock
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: clock(0.01))
    assert remeasure(d, "clock", ()).clock.spread == pytest.approx(0.01)


def test_a_failing_rerun_keeps_the_old_measurement_with_a_note(monkeypatch):
    def broken(*a, **k):
        raise probe.LoopmodelError("cannot pin")
    monkeypatch.setattr(probe, "run_bandwidth", broken)
    d = data(l1_spread=0.5)
    out = remeasure(d, "bandwidth tables", (("L1", "copy", 1),))
    assert out.tables == d.tables and any("cannot pin" in n for n in out.notes)


# ----------------------------------------------------------------------------- refusal and show


def uncertain_model() -> HostModel:
    machine = load_machine(SNB)
    check = self_check(data(clock_spread=0.31), 0.1, {"clock": 3})
    mapping = machine_mapping(machine)
    mapping["probe"] = {"fits": {}, "self_check": check.to_mapping()}
    return HostModel(mapping, machine, (), check)


@pytest.fixture
def fake_probe(monkeypatch):
    stored = []
    fake = types.SimpleNamespace(host={"hostname": "h", "date": "today", "duration_s": 1},
                                 topology=types.SimpleNamespace(model_name="cpu"))
    monkeypatch.setattr(workflow_probe.measure_probe, "run_probe", lambda *a, **k: fake)
    monkeypatch.setattr(workflow_probe, "build_checked_host_model", lambda d: uncertain_model())
    monkeypatch.setattr(workflow_probe, "store_host_model", lambda text: stored.append(text) or "/stored/host.yml")
    return stored


def test_an_uncertain_probe_is_refused_without_force(fake_probe, tmp_path):
    p = run_main_inprocess(["machine", "probe", "--quick", "-o", "out.yml"], tmp_path)
    assert p.returncode == 2 and p.stdout == ""
    assert not (tmp_path / "out.yml").exists() and fake_probe == []
    lines = p.stderr.splitlines()
    assert lines[0] == "self-check: uncertain"
    assert any(ln.startswith("  uncertain: clock: spread 31 % after 3 attempts") for ln in lines)
    assert lines[-1].startswith("loopmodel: the probe's self-check left 1 measurement(s) uncertain")
    assert "not written to out.yml nor stored for -m host" in lines[-1] and "--force" in lines[-1]


def test_force_writes_and_stores_the_model_marked_uncertain(fake_probe, tmp_path):
    p = run_main_inprocess(["machine", "probe", "--quick", "-o", "out.yml", "--force"], tmp_path)
    assert p.returncode == 0, p.stderr
    written = yaml.safe_load((tmp_path / "out.yml").read_text())
    assert written["probe"]["self_check"]["verdict"] == "uncertain"
    assert written["probe"]["self_check"]["uncertain"][0].startswith("clock: spread 31 %")
    assert len(fake_probe) == 1 and "self_check" in fake_probe[0]
    assert "self-check: uncertain" in p.stderr


def test_machine_show_prints_the_verdicts_and_what_stayed_uncertain(tmp_path):
    path = tmp_path / "host.yml"
    path.write_text(yaml.safe_dump(uncertain_model().mapping))
    p = run_main_inprocess(["machine", "show", path], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# self-check: uncertain\n")
    assert "#   clock spread: 31.0 % (threshold 10.0 %), uncertain, 3 attempts" in p.stdout
    assert "#   uncertain: clock: spread 31 % after 3 attempts" in p.stdout
    assert yaml.safe_load(p.stdout)["probe"]["self_check"]["verdict"] == "uncertain"  # still loads


def test_an_old_probed_file_without_self_check_loads_and_shows(tmp_path):
    mapping = machine_mapping(load_machine(SNB))
    mapping["probe"] = {"hostname": "old", "fits": {}}
    path = tmp_path / "old.yml"
    path.write_text(yaml.safe_dump(mapping))
    p = run_main_inprocess(["machine", "show", path], tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("# self-check: none")
    builtin = run_main_inprocess(["machine", "show", SNB], tmp_path)
    assert not builtin.stdout.startswith("#")
