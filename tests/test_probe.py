"""The probe driver with fake benchmarks and a fake timer: which steps run, at which sizes,
how failures become notes, and the time budget of --quick (no hardware needed)."""
from __future__ import annotations

import dataclasses
import os
import types

import pytest

import loopmodel.measure.bandwidth as bandwidth
import loopmodel.measure.probe as probe
from loopmodel.errors import ToolError
from loopmodel.measure.bandwidth import BandwidthPoint
from loopmodel.measure.clock import ClockMeasurement
from loopmodel.measure.latency import LatencyPoint, LatencyResult
from loopmodel.measure.probe import ProbeOptions, level_sizes, run_probe, sweep_sizes
from loopmodel.measure.topology import read_topology

FIXTURE = os.path.join(os.path.dirname(__file__), "fixtures", "sysfs", "xeon-kvm-2c")
KiB, MiB = 1024, 1024 * 1024


def fake_bandwidth(kernel, threads, bytes_per_thread, repetitions=5, min_time_s=0.02, offset=0, cpus=None,
                   compiler="gcc", runner=None):
    """A host whose caches end at 48 KiB, 2 MiB and 32 MiB (shared): B/cy 64, 32, 16, 4 at 3 GHz."""
    bw = 192e9 if bytes_per_thread <= 48 * KiB else 96e9 if bytes_per_thread <= 2 * MiB else \
        48e9 if bytes_per_thread * threads <= 32 * MiB else 12e9 * min(threads, 1.5)
    k = bandwidth.kernel_info(kernel)
    arrays = k["arrays"]
    n = bytes_per_thread // (8 * arrays)
    t = k["bytes_per_iteration"] * n * threads / (bw / threads * threads)
    return BandwidthPoint(kernel, threads, n * 8 * arrays, offset, tuple(t * (1 + 0.01 * i) for i in range(repetitions)),
                          1, n)


@pytest.fixture
def fakes(monkeypatch):
    calls = {"bandwidth": [], "latency": []}

    def bw(*a, **k):
        calls["bandwidth"].append((a, k))
        return fake_bandwidth(*a, **k)

    def lat(sizes, line_size=64, repetitions=5, min_time_s=0.02, cpu=0, compiler="gcc", runner=None):
        calls["latency"].append(sizes)
        return LatencyResult(tuple(LatencyPoint(s, 1.0, 1.1, 1.2, repetitions) for s in sizes), cpu, True, line_size,
                             compiler, "12")
    monkeypatch.setattr(probe, "run_bandwidth", bw)
    monkeypatch.setattr(probe, "run_latency", lat)
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: ClockMeasurement(int(3e9), (1.0,), (1.0,)))
    monkeypatch.setattr(probe, "_incore", lambda *a, **k: None)

    def kernel(path, defines, *a, **k):
        calls.setdefault("training", []).append((open(path).read(), defines))
        return types.SimpleNamespace(seconds_per_it_min=1e-9 * defines["N"] / 1000)
    monkeypatch.setattr(probe, "measure_kernel", kernel)
    return calls


def test_quick_probe_runs_every_step_at_sizes_from_the_sweep(fakes):
    data = run_probe(ProbeOptions((1, 2), True, 3, 0.004, "gcc"), root=FIXTURE)
    assert set(data.sweep) == {"copy"}
    assert set(data.tables) == {"L1", "L2", "L3", "MEM"}
    assert all(len(pts) == 2 for per in data.tables.values() for pts in per.values())
    assert [p.kernel for p in data.streams] == ["streams:1", "streams:8", "streams:16"]
    assert len(data.offsets) == 4 and all(b.offset == 8 for _, _, _, b in data.offsets)
    # the latency chase is sized from the effective capacities (24 MiB L3 found, 480 MiB reported)
    assert sorted(fakes["latency"][0]) == [12 * KiB, MiB, 12 * MiB, 256 * MiB]
    l3 = [a for a, k in fakes["bandwidth"] if a[0] == "load" and 4 * MiB < a[2] * a[1] < 64 * MiB]
    assert len(l3) == 3 and all(a[2] * a[1] <= 12 * MiB for a in l3)  # inside it; 2 cores: measured twice
    assert data.host["hostname"] and data.host["duration_s"] >= 0


def test_a_failing_step_leaves_a_note_and_the_probe_goes_on(fakes, monkeypatch):
    def broken(*a, **k):
        raise ToolError("cannot pin")
    monkeypatch.setattr(probe, "run_latency", broken)
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: (_ for _ in ()).throw(ToolError("no gcc")))
    data = run_probe(ProbeOptions((1,), True, 3, 0.004, "gcc"), root=FIXTURE)
    assert data.latency is None and data.clock is None
    assert any("latency: not measured (cannot pin)" in n for n in data.notes)
    assert any("clock: not measured (no gcc)" in n for n in data.notes)
    assert data.tables  # the bandwidths were measured regardless


def test_probe_of_a_container_without_sysfs_says_so(fakes, tmp_path):
    data = run_probe(ProbeOptions((1,), True, 3, 0.004, "gcc"), root=str(tmp_path))
    assert data.notes and data.tables.get("MEM")


def test_progress_reports_every_step(fakes):
    seen = []
    run_probe(ProbeOptions((1,), True, 3, 0.004, "gcc"), progress=lambda w, d, t: seen.append(w), root=FIXTURE)
    text = " ".join(seen)
    for step in ("clock", "sweep", "latency", "L1 bandwidth", "MEM bandwidth", "streams", "misaligned"):
        assert step in text


def test_sweep_sizes_span_the_caches_and_stop_below_the_memory_cap():
    topo = read_topology(FIXTURE)
    full, quick = sweep_sizes(topo, False), sweep_sizes(topo, True)
    assert full[0] <= 12 * KiB and full[-1] >= 256 * MiB and full[-1] <= 1024 * MiB
    assert len(quick) < len(full) and set(quick) <= set(full) | set(quick)
    assert all(s % 4096 == 0 for s in full)


def test_probe_options_quick_uses_first_and_last_core_count():
    o = ProbeOptions.make((1, 2, 3, 4), quick=True)
    assert o.cores == (1, 4) and o.quick and o.repetitions == 3
    assert ProbeOptions.make((1, 2, 3), quick=False).cores == (1, 2, 3)


def test_level_sizes_for_private_and_shared_levels():
    eff = {"L1": 48 * KiB, "L2": 2 * MiB, "L3": 48 * MiB}
    s1, s2 = level_sizes(eff, {"L3": 2}, 1), level_sizes(eff, {"L3": 2}, 2)
    assert s1["L1"] == 16 * KiB and s1["L2"] == s2["L2"]
    assert s2["L3"] * 2 <= 24 * MiB and s1["L3"] <= 24 * MiB
    assert s1["MEM"] == 192 * MiB and s2["MEM"] == 96 * MiB


def test_multicore_cache_points_are_measured_twice_and_the_faster_kept(fakes, monkeypatch):
    calls = {}

    def slow_first(kernel, threads, size, *a, **k):
        key = (kernel, threads, size)
        calls[key] = calls.get(key, 0) + 1
        p = fake_bandwidth(kernel, threads, size, *a, **k)
        if threads > 1 and calls[key] == 1:  # a tenant on the sibling slows the first pass
            p = dataclasses.replace(p, seconds=tuple(2 * t for t in p.seconds))
        return p
    monkeypatch.setattr(probe, "run_bandwidth", slow_first)
    data = run_probe(ProbeOptions((1, 2), True, 3, 0.004, "gcc"), root=FIXTURE)
    two = next(p for p in data.tables["L1"]["copy"] if p.threads == 2)
    plain = fake_bandwidth("copy", 2, two.bytes_per_thread, 3)
    assert min(two.seconds) == pytest.approx(min(plain.seconds))  # the unhindered second pass
    assert len(data.tables["MEM"]["copy"]) == 2
    assert all(c == 2 for (k, n, s), c in calls.items() if n == 2 and s < 64 * MiB and not k.startswith("streams"))


def test_training_kernel_measured_in_l2_l3_and_memory_with_its_clock(fakes):
    data = run_probe(ProbeOptions((1,), True, 3, 0.004, "gcc"), root=FIXTURE)
    assert [t["level"] for t in data.training] == ["L2", "L3", "MEM"]
    src, defines = fakes["training"][0]
    assert src == probe.TRAINING_SOURCE and defines["N"] > 100
    assert all(t["clock_Hz"] == pytest.approx(3e9) for t in data.training)
    sizes = probe.training_sizes({"L1": 48 * KiB, "L2": 2 * MiB, "L3": 48 * MiB})
    assert 2 * 8 * sizes["L3"] ** 2 <= 0.4 * 48 * MiB < 2 * 8 * (sizes["L3"] + 1) ** 2
    assert 2 * 8 * sizes["MEM"] ** 2 >= 0.99 * 256 * MiB
