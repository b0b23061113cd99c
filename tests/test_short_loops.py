"""Short inner loops: the pass-quantization and entry-overhead formula, its fit to probe
measurements, the machine-file fields, and how the analysis applies them (no hardware needed)."""
from __future__ import annotations

import dataclasses
import types

import pytest
from hypothesis import given, settings, strategies as st

import loopmodel.measure.probe as probe
from loopmodel.compiled.incore import CompiledInCore, whole_inner_loops
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_schema import validate_mapping
from loopmodel.fileio.machine_writer import machine_mapping
from loopmodel.measure.clock import ClockMeasurement
from loopmodel.models.short_loops import (LONG_LOOP_PASSES, block_iterations, fit_short_loop, is_short,
                                          quantization, short_loop_cy_per_it)
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings, short_loop_incore
from loopmodel.workflows.hostmodel import fit_short_loops

NEST = ("double a[M][N], b[M][N];\ndouble s;\n\nfor (int j = 0; j < M; ++j)\n"
        "    for (int i = 0; i < N; ++i)\n        a[j][i] = s * b[j][i];\n")


def test_quantization_of_whole_passes_and_remainders():
    assert quantization(16, 8, 0.5) == 1.0
    assert quantization(9, 8, 0.5) == pytest.approx(8 * (1 + 0.5) / 9)
    assert quantization(9, 8, 0.0) == pytest.approx(1.0)  # a remainder iteration costs at least t
    assert quantization(4, 8, 1.0) == pytest.approx(8.0)  # no full pass: 4 scalar iterations, each a pass
    with pytest.raises(ValueError):
        quantization(0, 8, 1.0)


def test_short_loop_time_adds_the_entry_overhead_per_iteration():
    assert short_loop_cy_per_it(0.25, 8, 8, 6.0, 1.0) == pytest.approx(0.25 + 6.0 / 8)
    assert short_loop_cy_per_it(0.25, 16 * 8, 8, 6.0, 1.0) == 0.25  # long: steady state
    assert is_short(127, 8) and not is_short(128, 8) and not is_short(0, 8)


@settings(max_examples=200, deadline=None)
@given(t=st.floats(0.01, 50), p=st.sampled_from([1, 2, 4, 8, 16, 24]), n=st.integers(1, 600),
       entry=st.floats(0, 40), r=st.floats(0, 3))
def test_never_below_the_steady_state_and_steady_for_long_loops(t, p, n, entry, r):
    got = short_loop_cy_per_it(t, n, p, entry, r)
    assert got >= t * (1 - 1e-12)
    if n >= LONG_LOOP_PASSES * p:
        assert got == t


@settings(max_examples=200, deadline=None)
@given(t=st.floats(0.01, 50), p=st.sampled_from([1, 2, 4, 8, 16]), k=st.integers(1, 40),
       rest=st.integers(0, 15), entry=st.floats(0, 40), r=st.floats(0, 3))
def test_non_increasing_as_the_loop_grows_by_whole_passes(t, p, k, rest, entry, r):
    rest %= p
    a = short_loop_cy_per_it(t, k * p + rest, p, entry, r)
    b = short_loop_cy_per_it(t, (k + 1) * p + rest, p, entry, r)
    assert b <= a * (1 + 1e-12)


def test_block_iterations_of_an_unrolled_inner_loop():
    assert block_iterations(8, 21, 23) == 8  # a real inner loop: unchanged
    assert block_iterations(23, 21, 23) == 21  # one row with halo per pass: 21 iterations, not 23
    assert block_iterations(24, 12, 12) == 24  # two rows without halo
    assert block_iterations(30, 12, 0) == 30  # no row known


def test_fit_recovers_entry_overhead_and_remainder_cost():
    pts = [(n, (n // 8) * 1.5 + (n % 8) * 0.6 * 1.5 + 7.0) for n in (8, 9, 11, 12, 16, 17, 24, 33, 48, 64)]
    fit = fit_short_loop(pts, 8)
    assert fit.entry_cy == pytest.approx(7.0) and fit.remainder_ratio == pytest.approx(0.6)
    assert fit.pass_cy == pytest.approx(1.5) and fit.residual < 1e-9
    with pytest.raises(ValueError):
        fit_short_loop([(8, 2.0), (16, 3.0)], 8)


def _machine(**fields):
    m = load_machine("SkylakeSP_Gold-6148")
    return dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, **fields)) if fields else m


def _ecm(machine, n):
    kernel, _ = parse_kernel(NEST)
    res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"M": 64, "N": n})
    return res.ecm.T_ECM["L1"], res.notes


def test_machine_without_the_fields_keeps_the_prediction_with_a_note():
    plain, notes = _ecm(_machine(), 12)
    long_plain, long_notes = _ecm(_machine(), 512)
    assert any("inner loop of 12 iterations" in n and "not modelled" in n for n in notes)
    assert not any("inner loop of" in n for n in long_notes)
    fitted, fitted_notes = _ecm(_machine(inner_loop_entry_cy=0.0, inner_loop_remainder_ratio=0.0), 16)
    assert fitted == pytest.approx(_ecm(_machine(), 16)[0])  # whole passes, no overhead: the steady state
    assert plain > 0 and long_plain > 0


def test_machine_with_the_fields_adds_entry_and_remainder():
    plain, _ = _ecm(_machine(), 12)
    more, notes = _ecm(_machine(inner_loop_entry_cy=6.0, inner_loop_remainder_ratio=1.0), 12)
    assert more > plain
    assert any("inner loop of 12 iterations" in n and "measured on this host" in n for n in notes)
    long_more, _ = _ecm(_machine(inner_loop_entry_cy=6.0, inner_loop_remainder_ratio=1.0), 512)
    assert long_more == pytest.approx(_ecm(_machine(), 512)[0])


def test_compiled_block_spanning_whole_inner_loops_is_counted_by_its_real_iterations():
    """A block whose pointer advances by a row of 12 elements while the inner loop runs 10: one
    whole inner loop per pass, 10 iterations (not 12), so T_OL and T_nOL per CL, which divide
    the block's cycles by its iterations, come out 12/10 larger; the short-loop model then
    leaves them alone (entry and remainder are in the block)."""
    kernel12, _ = parse_kernel(NEST.replace("a[M][N], b[M][N]", "a[M][12], b[M][12]"))
    block = CompiledInCore("llvm-mca", "14", "gcc", "12", (), ".L3", "", 12.0, 96.0, {"0": 12.0}, 12.0, 12.0, "")
    out, notes = whole_inner_loops(block, kernel12, {"M": 64, "N": 10})
    assert out.iterations_per_pass == 10 and out.whole_inner_loops == 1
    assert block.iterations_per_pass / out.iterations_per_pass == pytest.approx(12 / 10)
    assert len(notes) == 1 and "unrolled into the compiled block .L3" in notes[0] and "10 iterations (not 12" in notes[0]
    assert whole_inner_loops(dataclasses.replace(block, iterations_per_pass=8.0), kernel12, {"M": 64, "N": 10}) == (
        dataclasses.replace(block, iterations_per_pass=8.0), [])  # a real inner loop: unchanged
    machine = _machine(inner_loop_entry_cy=5.0, inner_loop_remainder_ratio=0.5)
    res = Analyzer(kernel12, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"M": 64, "N": 10})
    assert short_loop_incore(kernel12, machine, res.incore, out, {"M": 64, "N": 10},
                             res.traffic.iterations_per_unit) is res.incore


def test_machine_file_round_trip_of_the_fields():
    m = _machine(inner_loop_entry_cy=5.5, inner_loop_remainder_ratio=0.75)
    d = machine_mapping(m)
    assert d["in_core"]["inner_loop_entry_cy"] == 5.5
    assert validate_mapping(d, "<test>") == m
    assert "inner_loop_entry_cy" not in machine_mapping(_machine())["in_core"]


def test_probe_step_and_fit_with_fake_measurements(monkeypatch):
    def kernel(path, defines, *a, **k):  # 1.5 cy per 8-iteration pass, 0.6 of it per remainder, 7 cy per entry
        n = defines["N"]
        cy = (n // 8) * 1.5 + (n % 8) * 0.9 + 7.0
        return types.SimpleNamespace(seconds_per_it_min=cy / n / 3e9)
    monkeypatch.setattr(probe, "measure_kernel", kernel)
    monkeypatch.setattr(probe, "measure_clock", lambda *a, **k: ClockMeasurement(int(3e9), (1.0,), (1.0,)))
    steps = probe._Steps(None)
    opts = probe.ProbeOptions((1,), True, 3, 0.004, "gcc")
    pts = probe.short_loop_step({"L1": 48 * 1024}, "-O3", opts, steps)
    assert [p["n"] for p in pts] == list(probe.SHORT_LOOP_TRIPS_QUICK) and pts[0]["rows"] >= 4
    mapping, report = fit_short_loops({"in_core": {"simd_width": "64 B"}}, types.SimpleNamespace(short_loops=pts), [])
    assert mapping["in_core"]["inner_loop_entry_cy"] == pytest.approx(7.0, abs=1e-3)
    assert mapping["in_core"]["inner_loop_remainder_ratio"] == pytest.approx(0.6, abs=1e-3)
    assert report["iterations_per_pass"] == 8 and len(report["points"]) == len(pts)
    notes = []
    same, _ = fit_short_loops({"in_core": {"simd_width": "64 B"}}, types.SimpleNamespace(short_loops=pts[:2]), notes)
    assert "inner_loop_entry_cy" not in same["in_core"] and "not fitted" in notes[0]
