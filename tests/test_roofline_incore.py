"""The Roofline's CPU roof is the in-core model's T_OL (the one ECM uses), its bandwidths those of the
cores asked, and where it is slower than ECM the report says which assumption differs
(docs/concepts/roofline.md "What holds between Roofline and ECM").

Regressions: ``a[i] = b[i] / c[i]`` (ECM 16 cy/CL, the Roofline printed 1.71 cy/CL "L1 bottleneck"
from the FLOP peak), PolyBench seidel-2d's inner loops (ECM 376, Roofline 12.36 cy/CL), an int32 triad
(the double-precision FLOP peak), and triad at N=10^7 (Roofline 31.31 / 8.81 cy/CL against ECM 22.74 /
5.74 with no note). Invariants over random kernels, machines, sizes and core counts.
"""
from __future__ import annotations

import dataclasses
import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import ROOT, run_main_inprocess

from loopmodel.errors import ModelError
from loopmodel.machine.bandwidth import choose_bandwidth
from loopmodel.models.roofline import TOL_SOURCE, slower_than_ecm
from loopmodel.units import format_fixed

SKX = "SkylakeSP_Gold-6148"
CASES = ROOT / "benchmarks" / "results" / "one-owner" / "kernels"
TRIAD = ROOT / "examples" / "kernels" / "triad.c"


def _case(path, n: int, cores: int = 1):
    source = path.read_text()
    return ks.analyze(ks.KernelCase(source, path.stem, 1, ("N",), (0,)), SKX, {"N": n},
                      models=("ECM", "Roofline"), cores=cores)


def _ecm_time(res) -> float:
    """ECM's aggregate cy/CL of the analysis' cores at its data location (the point's prediction)."""
    return res.prediction.cy_per_cl


def _ecm_notes(res) -> list:
    return [n for n in res.notes if n.startswith("Roofline ") and "slower than ECM" in n]


# --- regressions ----------------------------------------------------------------------------------

def test_division_is_cpu_bound_at_the_ecm_in_core_time():
    """Division throughput: T_OL 16 cy/CL; the CPU roof was the FLOP peak (76.8 GFLOP/s) and the
    Roofline said 1.71 cy/CL, L1 bottleneck."""
    res = _case(CASES / "div.c", 1000)
    r = res.roofline
    assert res.ecm.T_ECM["L1"] == pytest.approx(16.0)
    assert r.cpu_source == TOL_SOURCE.format(source="analytic") and r.bottleneck == "CPU"
    assert r.cpu_time == pytest.approx(16.0) and r.time == pytest.approx(16.0)
    assert r.cpu_performance == pytest.approx(8 * 2.4e9 / 16.0)  # 1 FLOP/it, 8 it/CL, 2.4 GHz


def test_seidel_2d_chain_is_cpu_bound():
    """The loop-carried chain of Gauss-Seidel (a[i][j-1] written the iteration before): T_OL 376 cy/CL;
    the Roofline said 12.36 cy/CL, MEM bottleneck."""
    source = (CASES / "seidel-2d.c").read_text()
    res = ks.analyze(ks.KernelCase(source, "seidel-2d", 2, ("N",), (1,)), SKX, {"N": 5000},
                     models=("ECM", "Roofline"))
    r = res.roofline
    assert res.ecm.T_OL == pytest.approx(376.0) and r.cpu_time == pytest.approx(376.0)
    assert r.bottleneck == "CPU" and r.time == pytest.approx(res.ecm.T_ECM["MEM"])
    assert not _ecm_notes(res)


def test_int32_kernel_has_no_flop_roof():
    """int a, b, c, s: no floating-point operation, so no FLOP peak (it had the DP peak, 76.8 GFLOP/s)
    and performance in it/s: the CPU roof is T_OL; the JSON's FLOP/s keys are null and the text says so."""
    res = _case(CASES / "int-triad.c", 10**7)
    r = res.roofline
    assert r.work_unit == "it" and r.cpu_source == TOL_SOURCE.format(source="analytic")
    assert r.cpu_time == pytest.approx(res.incore.T_OL)
    assert r.cpu_performance == pytest.approx(res.traffic.iterations_per_unit * 2.4e9 / r.cpu_time)
    assert all(lv.intensity is None for lv in r.levels)
    argv = ["analyze", str(CASES / "int-triad.c"), "-m", SKX, "-D", "N=10000000", "-p", "Roofline",
            "--incore", "analytic"]
    doc = json.loads(run_main_inprocess(argv + ["--json"], ROOT).stdout)["roofline"]
    assert doc["cpu_performance_flop_s"] is None and doc["performance_flop_s"] is None
    assert doc["performance_it_s"] == pytest.approx(r.performance)
    text = run_main_inprocess(argv, ROOT).stdout
    assert "no floating-point operations: no FLOP roof" in text and "Git/s due to MEM bottleneck" in text


@pytest.mark.parametrize("cores,roof,ecm,measured,implied", [(1, "31.31", "23.74", "19.62 GB/s", "25.88 GB/s"),
                                                             (4, "8.81", "7.34", "69.72 GB/s", "83.76 GB/s")])
def test_triad_roofline_slower_than_ecm_says_why(cores, roof, ecm, measured, implied):
    """Triad in memory: the Roofline divides by the copy bandwidth measured with the cores asked, ECM
    adds its link model's transfers with the saturated memory bandwidth: both figures, the roof and
    the assumption that differs are in a note (there was none)."""
    res = _case(TRIAD, 10**7, cores)
    assert res.roofline.cores == cores and res.roofline.bottleneck == "MEM"
    assert f"{res.roofline.time:.2f}" == roof and f"{_ecm_time(res):.2f}" == ecm
    (note,) = _ecm_notes(res)
    assert note.startswith(f"Roofline {roof} cy/CL is slower than ECM {ecm} cy/CL (data in MEM, {cores} core")
    assert f"measured with {cores} core(s), {measured}, where ECM's figure implies {implied}" in note
    assert "saturated bandwidth 107.09 GB/s" in note


# --- invariants -----------------------------------------------------------------------------------

def _bench_machines() -> tuple:
    """Machines with measured bandwidths for every level (the Roofline's)."""
    return tuple(n for n in ks.MACHINES if all(ks.load(n).benchmarks.measurements.get(lv.level)
                                               for lv in ks.load(n).memory_hierarchy))


def _total(m) -> int:
    return m.sockets * m.numa_domains_per_socket * m.cores_per_numa_domain


def _drawn_analysis(case, machine: str, data) -> tuple:
    """``(machine model, cores n, ECM and Roofline analysis with n cores)`` at drawn sizes and core count."""
    m = ks.load(machine)
    n = data.draw(st.integers(1, _total(m)))
    try:
        return m, n, ks.analyze(case, m, data.draw(ks.sizes(case)), models=("ECM", "Roofline"), cores=n)
    except ModelError:
        assume(False)


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(ks.kernels(dims=(1, 2, 3)), st.sampled_from(_bench_machines()), st.data())
def test_cpu_roof_is_t_ol_and_bandwidths_are_those_of_the_cores_asked(case, machine, data):
    """CPU roof = T_OL / n of the in-core result ECM uses, Roofline time >= it; every bandwidth roof is
    the measurement for the kernel's stream mix at n cores (choose_bandwidth with cores=n), and the
    result's core count is n."""
    m, n, res = _drawn_analysis(case, machine, data)
    r = res.roofline
    assume(res.incore.T_OL is not None)
    assert r.cores == n and r.cpu_time == pytest.approx(res.incore.T_OL / n, rel=1e-12)
    assert r.cpu_time == pytest.approx(res.ecm.T_OL / n, rel=1e-12)
    assert r.time >= r.cpu_time and r.time == max([r.cpu_time] + [lv.time for lv in r.levels])
    wa = any(c.write_allocate for c in m.caches)
    for k, lv in enumerate(r.levels):
        if k == 0:
            reads, writes, corr = case.kernel.loads_per_iteration(), case.kernel.stores_per_iteration(), False
        else:
            t = res.traffic.levels[k - 1]
            reads, writes, corr = t.loads_cl, t.stores_cl, wa
        assert lv.bandwidth == choose_bandwidth(m, lv.level, reads, writes, cores=n,
                                                correct_write_allocate=corr).bandwidth


@settings(ks.PROPERTY_SETTINGS, max_examples=60)
@given(ks.kernels(dims=(1, 2, 3)), st.sampled_from(_bench_machines()), st.data())
def test_what_holds_between_roofline_and_ecm(case, machine, data):
    """docs/concepts/roofline.md: both are at least T_OL / n; a CPU-bound Roofline is never slower than
    ECM; a Roofline slower than ECM (by a bandwidth roof) carries exactly one note with both figures, and
    one that is not carries none."""
    m, n, res = _drawn_analysis(case, machine, data)
    assume(res.ecm.unknown is None)
    r, ecm = res.roofline, _ecm_time(res)
    assert r.time >= res.ecm.T_OL / n * (1 - 1e-12) and ecm >= res.ecm.T_OL / n * (1 - 1e-12)
    if r.bottleneck == "CPU":
        assert r.time <= ecm * (1 + 1e-9)
    notes = _ecm_notes(res)
    assert len(notes) == int(slower_than_ecm(r, ecm))
    if notes:
        assert r.bottleneck != "CPU"
        assert notes[0].startswith(f"Roofline {format_fixed(r.time, 2)} cy/CL is slower than ECM "
                                   f"{format_fixed(ecm, 2)} cy/CL")


def _integer_variant(case):
    """``case`` with every float and double declared int (no floating-point literal or call)."""
    source = case.source.replace("double ", "int ").replace("float ", "int ")
    return dataclasses.replace(case, source=source, name=case.name + "i")


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(ks.kernels(dims=(1, 2, 3)), st.sampled_from(_bench_machines()), st.data())
def test_no_flop_roof_without_floating_point_operations(case, machine, data):
    """An all-integer kernel: work in iterations (no FLOP/s, no intensity), the CPU roof T_OL in it/s."""
    assume("sqrt" not in case.source and ".0" not in case.source)
    icase = _integer_variant(case)
    m = ks.load(machine)
    try:
        res = ks.analyze(icase, m, data.draw(ks.sizes(icase)), models=("Roofline",))
    except ModelError:
        assume(False)
    r = res.roofline
    assume(r.cpu_time is not None)
    it = res.traffic.iterations_per_unit
    assert r.work_unit == "it" and all(lv.intensity is None for lv in r.levels)
    assert r.cpu_performance == pytest.approx(it * m.clock / r.cpu_time, rel=1e-12)
    assert r.performance == pytest.approx(it * m.clock / r.time, rel=1e-12)
