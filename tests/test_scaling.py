"""Multicore scaling: contention model, saturation rule, ccNUMA, shared caches, clock."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import analyze, run_cli

from loopmodel.models.scaling import P0_MAX, fit_p0, scaling, utilization

SNC = "SkylakeSP_Gold-6148_SNC"
EPYC = "Zen_EPYC-7451"


def _eq5_utilization(n, t_ecm, t_mem, p0=0.5):
    """u(n) written from the prose of cross-architecture-machine-models.txt §3.4.4 (eq. 5), as the
    peer Kerncraft 0.8.18 evaluates it (models/ecm.py, p0 fixed at 1/2): no core busy before the
    first, then for each added core k the bus time of k cores over the runtime plus the conflict
    time p0 * u(k-1) * (k-1) * T_Mem; a bus cannot be busier than all the time."""
    busy = 0.0
    for k in range(1, n + 1):
        conflict = p0 * busy * (k - 1) * t_mem
        busy = k * t_mem / (t_ecm + conflict)
        if busy > 1.0:
            busy = 1.0
    return busy


def test_utilization_matches_the_peer_loop_over_a_grid():
    """Independent evaluation of eq. 5 on T_Mem/T_ECM from 0.01 to 1, p0 = 1/2 (the peer's value)
    and up to 64 cores."""
    for t_ecm in (1.0, 7.3, 19.54, 100.0):
        for frac in (0.01, 0.05, 0.1, 0.2, 0.36, 0.5, 0.75, 0.9, 1.0):
            t_mem = frac * t_ecm
            for n in range(1, 65):
                assert utilization(n, t_ecm, t_mem, 0.5) == pytest.approx(
                    _eq5_utilization(n, t_ecm, t_mem), rel=1e-12, abs=1e-15), (t_ecm, t_mem, n)


@settings(max_examples=300, deadline=None)
@given(r=st.floats(0.001, 1.0), p0=st.floats(0.001, P0_MAX), n=st.integers(1, 80))
def test_utilization_monotone_capped_and_eq5(r, p0, n):
    u_prev = utilization(n, 1.0, r, p0)
    u_next = utilization(n + 1, 1.0, r, p0)
    assert 0 < u_prev <= 1 and 0 < u_next <= 1
    assert u_next >= u_prev - 1e-12
    assert u_prev == pytest.approx(_eq5_utilization(n, 1.0, r, p0), rel=1e-12)
    assert utilization(1, 1.0, r, p0) == pytest.approx(r)  # u(1) = T_Mem / T_ECM


def test_utilization_by_hand():
    """T_ECM = 10, T_Mem = 4 cy/CL, p0 = 1/2: u(1) = 4/10 = 0.4; u(2) = 8 / (10 + 0.5*0.4*1*4) = 8/10.8;
    u(3) = 12 / (10 + 0.5*(8/10.8)*2*4) = 12/12.963; u(4) = 16 / (10 + 0.5*0.92571*3*4) = 16/15.554 > 1 -> 1."""
    assert [utilization(n, 10.0, 4.0, 0.5) for n in (1, 2, 3, 4, 5)] == pytest.approx(
        [0.4, 0.740741, 0.925714, 1.0, 1.0], abs=1e-6)
    assert utilization(200, 1.0, 0.05, 0.75) == 1.0  # p0 < 1: n r / (1 + p0 (n-1) r) passes 1
    assert utilization(3, 1.0, 0.05, 0.75) < 0.2


@pytest.fixture(scope="module")
def snc():
    return analyze("daxpby.c", SNC, {"N": 100_000_000}, models=("ECM",), incore="analytic")


#: daxpby on SKL (SNC mode), cross-architecture-machine-models.txt §5.2.1 Table 3 and Table 1:
#: T_ECM = 2.4425 cy/it, T_Mem = 0.88 cy/it, f = 2.2 GHz (60 GB/s = 27.3 B/cy)
PAPER_T_ECM_CY_PER_IT, PAPER_T_MEM_CY_PER_IT, PAPER_CLOCK_HZ = 2.4425, 0.88, 2.2e9
P1_IT_PER_S = PAPER_CLOCK_HZ / PAPER_T_ECM_CY_PER_IT  # 0.9007 G it/s
PSAT_IT_PER_S = PAPER_CLOCK_HZ / PAPER_T_MEM_CY_PER_IT  # 2.5 G it/s per SNC domain


def test_single_core_point_is_the_ecm_prediction(snc):
    it = snc.traffic.iterations_per_unit
    assert snc.ecm.T_ECM["MEM"] == pytest.approx(PAPER_T_ECM_CY_PER_IT * 8)
    for model in ("contention", "saturation"):
        r = scaling(snc.ecm, snc.machine, [1], it, model)
        assert r.points[0].it_per_s == pytest.approx(P1_IT_PER_S)


def test_saturation_rule_and_numa_domains(snc):
    e, it, m = snc.ecm, snc.traffic.iterations_per_unit, snc.machine
    r = scaling(e, m, list(range(1, 21)), it, "saturation")
    assert r.saturated_it_per_s == pytest.approx(PSAT_IT_PER_S)
    # first SNC domain: n P(1) for n = 1, 2, then P_sat (3 P(1) = 2.7 G it/s > 2.5)
    got = [p.it_per_s for p in r.points]
    assert got[:10] == pytest.approx([P1_IT_PER_S, 2 * P1_IT_PER_S] + [PSAT_IT_PER_S] * 8)
    assert {p.domains for p in r.points[:10]} == {1}
    assert r.points[10].domains == 2
    assert got[10:12] == pytest.approx([PSAT_IT_PER_S + P1_IT_PER_S, PSAT_IT_PER_S + 2 * P1_IT_PER_S])
    assert got[-1] == pytest.approx(2 * PSAT_IT_PER_S)  # second domain doubles it (paper §5.2.2)
    assert r.saturation_cores == 3  # ceil(19.54 / 7.04) = ceil(2.78)
    one = scaling(e, m, [20], it, "saturation", placement="one-domain")
    assert one.points[0].it_per_s == pytest.approx(PSAT_IT_PER_S)


def test_contention_below_saturation_rule_and_converges(snc):
    e, it, m = snc.ecm, snc.traffic.iterations_per_unit, snc.machine
    c = scaling(e, m, list(range(1, 11)), it, "contention", p0=0.5)
    s = scaling(e, m, list(range(1, 11)), it, "saturation")
    for pc, ps in zip(c.points, s.points):
        assert pc.it_per_s <= ps.it_per_s * (1 + 1e-12)
    # P(n) = u(n) P_sat with u from eq. 5 for T_ECM = 19.54, T_Mem = 7.04 cy/CL (peer loop above):
    # u(1) = 0.36029, u(2) = 14.08 / (19.54 + 0.5*0.36029*7.04) = 0.67666, u(3) = 0.86900, u(4) = 0.98061
    assert [p.utilization for p in c.points[:5]] == pytest.approx([0.36029, 0.67666, 0.86900, 0.98061, 1.0],
                                                                  abs=1e-5)
    assert [p.it_per_s for p in c.points] == pytest.approx(
        [_eq5_utilization(n, 19.54, 7.04) * PSAT_IT_PER_S for n in range(1, 11)])
    assert c.points[1].it_per_s < s.points[1].it_per_s  # contention bends the curve before n_s
    assert c.points[-1].it_per_s == pytest.approx(PSAT_IT_PER_S)  # P(n) -> P_sat


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
    # per CL of work (8 it) between L2 and L3: b, c and the write-allocate of a in (192 B), a out
    # (64 B): 256 B / 32 B/cy = 8 cy/CL, one core's T_ECM(L3) as well; f = 2.3 GHz (paper Table 1):
    # one core 2.3e9 * 8 / 8 = 2.3 G it/s, and the CCX's shared link caps three cores at the same
    r = scaling(e, m, [1, 2, 3, 4, 6], it, "saturation", location="L3")
    per = {p.cores: p for p in r.points}
    assert [per[n].it_per_s for n in (1, 2, 3, 4, 6)] == pytest.approx([2.3e9, 2.3e9, 2.3e9, 4.6e9, 4.6e9])
    assert per[3].limit == "shared L2L3" and per[3].it_per_s < 3 * per[1].it_per_s


def test_clock_override_scales_memory_cycles_only():
    base = analyze("daxpby.c", SNC, {"N": 100_000_000}, models=("ECM",), incore="analytic")
    import dataclasses

    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from helpers import KERNELS
    k, _ = parse_kernel_file(str(KERNELS / "daxpby.c"))
    fast = Analyzer(k, dataclasses.replace(base.machine, clock=4.4e9), AnalyzerSettings(models=("ECM",), incore="analytic")).run(
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
    assert pts[0]["measured_it_s"] == 0.9e9
    assert pts[0]["relative_error"] == pytest.approx(pts[0]["it_s"] / 0.9e9 - 1)
    assert 0 < doc["fitted_p0"] <= 0.75


def _device_validation_points():
    """The stored measurement of the 16-vCPU Xeon (benchmarks/results/device-xeon-16c) against the
    machine model built from its measured clock and bandwidth (examples/machines/XeonEMR_16vCPU.yml)."""
    from helpers import ROOT
    meas = str(ROOT / "benchmarks/results/device-xeon-16c/daxpby.json")
    p = run_cli("scaling", "examples/kernels/daxpby.c", "-m", "examples/machines/XeonEMR_16vCPU.yml",
                "-D", "N=100000000", "--incore", "analytic", "--model", "saturation", "--measured", meas, "--json")
    assert p.returncode == 0, p.stderr
    pts = json.loads(p.stdout)["curves"][0]["points"]
    assert len(pts) == 16
    return pts


def test_validation_data_on_the_16_core_device():
    """Saturated region (13-16 threads): within 10 % (the bandwidth is measured)."""
    for pt in _device_validation_points()[12:]:
        assert abs(pt["relative_error"]) < 0.10, pt


@pytest.mark.xfail(strict=True, reason="the machine model has no latency penalty for this Xeon: one core is "
                   "predicted at 1.381 G it/s against 0.837 measured (+65 %, benchmarks/results/validation.txt)")
def test_validation_single_core_on_the_16_core_device():
    """One core: the prediction should meet the measured 0.837 G it/s within 10 %, as the saturated
    region does; the model without a latency penalty over-predicts it (+65 %)."""
    one = _device_validation_points()[0]
    assert one["measured_it_s"] == pytest.approx(0.837e9, rel=0.01)
    assert abs(one["relative_error"]) < 0.10, one
