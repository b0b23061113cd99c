"""Multicore scaling (issue #5): contention model, saturation rule, ccNUMA, shared caches, clock."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import analyze, run_cli

from loopmodel.models.scaling import P0_MAX, fit_p0, scaling, utilization

SNC = "SkylakeSP_Gold-6148_SNC"
EPYC = "Zen_EPYC-7451"


@settings(max_examples=300, deadline=None)
@given(r=st.floats(0.001, 1.0), p0=st.floats(0.001, P0_MAX), n=st.integers(1, 80))
def test_utilization_monotone_and_capped(r, p0, n):
    u_prev = utilization(n, 1.0, r, p0)
    u_next = utilization(n + 1, 1.0, r, p0)
    assert 0 < u_prev <= 1 and 0 < u_next <= 1
    assert u_next >= u_prev - 1e-12
    assert utilization(1, 1.0, r, p0) == pytest.approx(r)  # u(1) = T_Mem / T_ECM


def test_utilization_reaches_one():
    """p0 < 1: u(n) -> n r / (1 + p0 (n-1) r) > 1 for large n, so the cap is reached: P(n) -> P_sat."""
    assert utilization(200, 1.0, 0.05, 0.75) == 1.0
    assert utilization(3, 1.0, 0.05, 0.75) < 0.2


@pytest.fixture(scope="module")
def snc():
    return analyze("daxpby.c", SNC, {"N": 100_000_000}, models=("ECM",), incore="analytic")


def test_single_core_point_is_the_ecm_prediction(snc):
    e, it = snc.ecm, snc.traffic.iterations_per_unit
    for model in ("contention", "saturation"):
        r = scaling(e, snc.machine, [1], it, model)
        assert r.points[0].it_per_s == pytest.approx(it * snc.machine.clock / e.T_ECM["MEM"])


def test_saturation_rule_and_numa_domains(snc):
    e, it, m = snc.ecm, snc.traffic.iterations_per_unit, snc.machine
    r = scaling(e, m, list(range(1, 21)), it, "saturation")
    p1 = r.points[0].it_per_s
    psat = it * m.clock / e.memory_busy
    assert r.saturated_it_per_s == pytest.approx(psat)
    for p in r.points[:10]:  # first SNC domain
        assert p.it_per_s == pytest.approx(min(p.cores * p1, psat))
        assert p.domains == 1
    assert r.points[10].domains == 2
    assert r.points[-1].it_per_s == pytest.approx(2 * psat)  # second domain doubles it (paper §5.2.2)
    assert r.saturation_cores == 3  # ceil(19.54 / 7.04)
    one = scaling(e, m, [20], it, "saturation", placement="one-domain")
    assert one.points[0].it_per_s == pytest.approx(psat)


def test_contention_below_saturation_rule_and_converges(snc):
    e, it, m = snc.ecm, snc.traffic.iterations_per_unit, snc.machine
    c = scaling(e, m, list(range(1, 11)), it, "contention", p0=0.5)
    s = scaling(e, m, list(range(1, 11)), it, "saturation")
    for pc, ps in zip(c.points, s.points):
        assert pc.it_per_s <= ps.it_per_s * (1 + 1e-12)
    assert c.points[1].it_per_s < s.points[1].it_per_s  # contention bends the curve before n_s
    assert c.points[-1].it_per_s == pytest.approx(s.saturated_it_per_s)  # P(n) -> P_sat
    perf = [p.it_per_s for p in c.points]
    assert perf == sorted(perf)


def test_p0_is_validated(snc):
    with pytest.raises(ValueError, match="p0 must be in"):
        scaling(snc.ecm, snc.machine, [1, 2], snc.traffic.iterations_per_unit, "contention", p0=1.5)


def test_fit_p0_recovers_a_synthetic_measurement(snc):
    e, it, m = snc.ecm, snc.traffic.iterations_per_unit, snc.machine
    truth = scaling(e, m, list(range(1, 9)), it, "contention", p0=0.3)
    measured = {p.cores: p.it_per_s for p in truth.points}
    p0, err = fit_p0(e, m, measured, it)
    assert p0 == pytest.approx(0.3, rel=0.05) and err < 1e-3


def test_non_scalable_ccx_l3_caps_data_in_l3():
    """EPYC, data in L3: the 3 cores of a CCX share 32 B/cy of L2-L3 bandwidth (paper §5.2.2)."""
    res = analyze("triad.c", EPYC, {"N": 200_000}, models=("ECM",), incore="analytic")
    e, it, m = res.ecm, res.traffic.iterations_per_unit, res.machine
    l2l3 = {c.name: c for c in e.by_location["L3"]}["L2L3"].busy
    r = scaling(e, m, [1, 2, 3, 4, 6], it, "saturation", location="L3")
    per = {p.cores: p for p in r.points}
    cap = it * m.clock / l2l3
    assert per[3].it_per_s == pytest.approx(min(3 * per[1].it_per_s, cap))
    assert per[3].limit == "shared L2L3" and per[3].it_per_s < 3 * per[1].it_per_s
    assert per[6].it_per_s == pytest.approx(2 * per[3].it_per_s)  # second CCX scales


def test_clock_override_scales_memory_cycles_only():
    base = analyze("daxpby.c", SNC, {"N": 100_000_000}, models=("ECM",), incore="analytic")
    import dataclasses

    from loopmodel.analysis import Analyzer, Options
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from helpers import KERNELS
    k, _ = parse_kernel_file(str(KERNELS / "daxpby.c"))
    fast = Analyzer(k, dataclasses.replace(base.machine, clock=4.4e9), Options(models=("ECM",))).run(
        {"N": 100_000_000})
    b = {c.name: c for c in base.ecm.contributions}
    f = {c.name: c for c in fast.ecm.contributions}
    assert f["L1L2"].cycles == b["L1L2"].cycles and f["L2L3"].cycles == b["L2L3"].cycles  # cy invariant
    assert f["L3MEM"].cycles == pytest.approx(2 * b["L3MEM"].cycles)  # same GB/s, twice the cycles
    assert fast.ecm.T_nOL == base.ecm.T_nOL


def test_cli_scaling_json_plot_and_errors(tmp_path):
    png = tmp_path / "s.png"
    args = ["scaling", "examples/kernels/daxpby.c", "-m", SNC, "-D", "N=100000000", "--incore", "analytic",
            "--cores", "1:12", "--model", "both"]
    p = run_cli(*args, "--json", "--plot", png)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [c["model"] for c in doc["curves"]] == ["contention", "saturation"]
    assert [pt["cores"] for pt in doc["curves"][0]["points"]] == list(range(1, 13))
    assert doc["curves"][1]["saturation_cores"] == 3
    assert png.stat().st_size > 1000 and png.read_bytes()[:4] == b"\x89PNG"
    again = run_cli(*args, "--plot", png)
    assert again.returncode != 0 and "not overwritten" in again.stderr and again.stderr.count("\n") == 1
    text = run_cli(*args, "--clock", "2.2 GHz")
    assert text.returncode == 0 and "saturation point: 3 cores per ccNUMA domain" in text.stdout
    for bad, needle in ((["--cores", "0:4"], "at least 1"), (["--cores", "1:99"], "has 40 cores"),
                        (["--p0", "2"], "--p0 2"), (["--clock", "fast"], "--clock")):
        q = run_cli(*args, *bad)
        assert q.returncode != 0 and needle in q.stderr and q.stderr.count("\n") == 1, (bad, q.stderr)


def test_cli_scaling_compares_with_measurement(tmp_path):
    meas = tmp_path / "m.json"
    meas.write_text(json.dumps({"kernel": "daxpby", "points": [{"threads": 1, "it_per_s": 0.9e9},
                                                               {"threads": 2, "it_per_s": 1.6e9}]}))
    p = run_cli("scaling", "examples/kernels/daxpby.c", "-m", SNC, "-D", "N=100000000", "--incore", "analytic",
                "--cores", "1:2", "--measured", meas, "--fit-p0", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    pts = doc["curves"][0]["points"]
    assert pts[0]["measured_it_per_s"] == 0.9e9
    assert pts[0]["relative_error"] == pytest.approx(pts[0]["it_per_s"] / 0.9e9 - 1)
    assert 0 < doc["fitted_p0"] <= 0.75


def test_validation_data_on_the_16_core_device():
    """The stored measurement of the 16-vCPU Xeon (benchmarks/results/device-xeon-16c) against the
    machine model built from its measured clock and bandwidth (examples/machines/XeonEMR_16vCPU.yml).
    Saturated region (13-16 threads): within 10 % (the bandwidth is measured); single core: the
    model without a latency penalty over-predicts (+65 %), as recorded in the issue's closing note."""
    from helpers import ROOT
    meas = str(ROOT / "benchmarks/results/device-xeon-16c/daxpby.json")
    p = run_cli("scaling", "examples/kernels/daxpby.c", "-m", "examples/machines/XeonEMR_16vCPU.yml",
                "-D", "N=100000000", "--incore", "analytic", "--model", "saturation", "--measured", meas, "--json")
    assert p.returncode == 0, p.stderr
    pts = json.loads(p.stdout)["curves"][0]["points"]
    assert len(pts) == 16
    for pt in pts[12:]:
        assert abs(pt["relative_error"]) < 0.10, pt
    assert 0.5 < pts[0]["relative_error"] < 0.8
