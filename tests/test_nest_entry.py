"""The cost of entering and leaving a nest once per execution: its fit to the probe's loop at four
lengths, the machine-file field, the probe step (faked measurements) and how the analysis adds
it (no hardware needed)."""
from __future__ import annotations

import dataclasses
import types

import pytest
from hypothesis import given, settings, strategies as st

import loopmodel.measure.probe as probe
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_schema import validate_mapping
from loopmodel.fileio.machine_writer import machine_mapping
from loopmodel.measure.clock import ClockMeasurement
from loopmodel.models.nest_entry import entry_cy_per_it, fit_nest_entry
from loopmodel.workflows.analysis import NEST_ENTRY_MIN_FRACTION, Analyzer, AnalyzerSettings
from loopmodel.workflows.hostmodel import fit_nest_entry_cy

TRIAD = "double a[N], b[N], c[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i] + s * c[i];\n"
#: a triad in L1 on a Zen 4 guest: cy per call at N (benchmarks/results/nest-entry/)
ZEN4 = [(152, 51.6), (304, 92.7), (608, 176.1), (1216, 341.4)]


def _machine(**in_core):
    m = load_machine("SkylakeSP_Gold-6148")
    return dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, **in_core))


def test_the_zen4_measurement_is_a_line_of_10_cy_per_call():
    fit = fit_nest_entry(ZEN4)
    assert fit.entry_cy == pytest.approx(10.1, abs=0.1) and fit.per_it_cy == pytest.approx(0.272, abs=0.001)
    assert fit.residual < 0.01


@settings(max_examples=50, deadline=None)
@given(st.floats(0, 50), st.floats(0.05, 5))
def test_the_fit_recovers_any_line(entry, per_it):
    fit = fit_nest_entry([(n, entry + per_it * n) for n in (128, 256, 512, 1024)])
    assert fit.entry_cy == pytest.approx(entry, abs=1e-6 + 1e-6 * per_it * 1024)
    assert fit.per_it_cy == pytest.approx(per_it, rel=1e-6)


def test_too_few_points_are_refused():
    with pytest.raises(ValueError):
        fit_nest_entry(ZEN4[:2])
    assert entry_cy_per_it(10.0, 0) == 0.0 and entry_cy_per_it(10.0, 100) == 0.1


def test_the_analysis_adds_the_entry_per_iteration_where_it_counts():
    kernel, _ = parse_kernel(TRIAD, "t.c")
    plain = Analyzer(kernel, _machine(), AnalyzerSettings(models=("ECM",), incore="analytic"))
    entered = Analyzer(kernel, _machine(nest_entry_cy=10.0), AnalyzerSettings(models=("ECM",), incore="analytic"))
    short, also = plain.run({"N": 304}), entered.run({"N": 304})
    it_per_cl = short.traffic.iterations_per_unit
    assert also.incore.T_OL == pytest.approx(short.incore.T_OL + 10.0 / 304 * it_per_cl)
    assert also.incore.T_nOL == pytest.approx(short.incore.T_nOL + 10.0 / 304 * it_per_cl)
    assert any(n.startswith("nest entered and left once per execution: +0.0329 cy/it") for n in also.notes)
    big = 10 ** 7  # the entry below NEST_ENTRY_MIN_FRACTION of the in-core time: left out
    assert 10.0 / big * it_per_cl < NEST_ENTRY_MIN_FRACTION * short.incore.core_time
    assert entered.run({"N": big}).incore.T_OL == plain.run({"N": big}).incore.T_OL


def test_machine_file_round_trip_of_the_field():
    m = _machine(nest_entry_cy=10.1)
    d = machine_mapping(m)
    assert d["in_core"]["nest_entry_cy"] == 10.1 and validate_mapping(d, "<test>") == m
    assert "nest_entry_cy" not in machine_mapping(_machine())["in_core"]


def test_probe_step_and_fit_with_fake_measurements(monkeypatch):
    def kernel(path, defines, *a, **k):  # 0.25 cy/it and 12 cy per call
        n = defines["N"]
        assert "M" not in defines
        return types.SimpleNamespace(seconds_per_it_min=(12.0 + 0.25 * n) / n / 3e9)
    monkeypatch.setattr(probe, "measure_kernel", kernel)
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: ClockMeasurement(int(3e9), (1.0,), (1.0,)))
    opts = probe.ProbeOptions((1,), True, 3, 0.004, "gcc")
    pts = probe.nest_entry_step("-O3", opts, probe._Steps(None))
    assert [p["n"] for p in pts] == list(probe.NEST_ENTRY_TRIPS) and all(p["rows"] == 1 for p in pts)
    mapping, report = fit_nest_entry_cy({"in_core": {}}, types.SimpleNamespace(nest_entry=pts), [])
    assert mapping["in_core"]["nest_entry_cy"] == pytest.approx(12.0, abs=1e-3)
    assert report["per_it_cy"] == pytest.approx(0.25, abs=1e-4) and len(report["points"]) == 4
    notes = []
    same, _ = fit_nest_entry_cy({"in_core": {}}, types.SimpleNamespace(nest_entry=pts[:2]), notes)
    assert "nest_entry_cy" not in same["in_core"] and "not fitted" in notes[0]
