"""Numbers from the papers (kerncraft-tool-paper §1.2.2, §2.4.2, Listings 4/5; ecm-model-slides;
cross-architecture-machine-models §5), asserted exactly or with tight tolerances."""
from __future__ import annotations

import json
import re

import pytest

from helpers import IVB, KERNELS, SKX, SNB, analyze, run_cli
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.predictors.layer_conditions import LayerConditionAnalysis, transition_size
from loopmodel.ir.poly import Poly

LONG_RANGE = {"M": 130, "N": 1015}
LISTING5 = {2: {"L1": 216, "L2": 1725, "L3": 172463}, 3: {"L1": 19, "L2": 55, "L3": 546}}


@pytest.fixture(scope="module")
def long_range():
    return analyze("3d-long-range.c", IVB, LONG_RANGE)


@pytest.fixture(scope="module")
def seven_point():
    return analyze("3d-7pt.c", IVB, {"M": 800, "N": 800}, memory_bandwidth=63.4e9)


@pytest.fixture(scope="module")
def five_point_snb():
    return analyze("2d-5pt.c", SNB, {"M": 10000, "N": 10000})


def _transitions(res, dim):
    """Per level: transition size of the dimension-``dim`` state with the largest reuse distance."""
    out = {}
    for lv in res.lc_levels:
        states = [s for s in lv.states if s.dimension == dim]
        best = max(states, key=lambda s: s.distance.asymptotic_key())
        out[lv.level] = transition_size(best.max_size)
    return out


def _contrib(res):
    return {c.name: c.cycles for c in res.ecm.contributions}


# --- 3D long-range stencil, Listing 5 -------------------------------------------------------------

@pytest.mark.parametrize("dim", [2, 3])
def test_long_range_transition_sizes_library(long_range, dim):
    assert _transitions(long_range, dim) == LISTING5[dim]


def test_long_range_transition_sizes_are_integers(long_range):
    for dim in (2, 3):
        for v in _transitions(long_range, dim).values():
            assert type(v) is int


def test_long_range_transition_sizes_cli_json():
    import sympy

    p = run_cli("analyze", KERNELS / "3d-long-range.c", "-m", IVB, "-D", "M=130", "-D", "N=1015", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    syms = {"N": sympy.Symbol("N"), "M": sympy.Symbol("M")}
    big = {syms["N"]: 2 ** 40, syms["M"]: 2 ** 40}
    got = {2: {}, 3: {}}
    for lv in doc["layer_conditions"]:
        for dim in (2, 3):
            conds = [c for c in lv["conditions"] if c["dimension"] == dim]
            assert conds, f"no {dim}D condition for {lv['level']}"
            best = max(conds, key=lambda c: sympy.sympify(c["reuse_distance_it"], locals=syms).subs(big))
            got[dim][lv["level"]] = best["transition_size"]
    assert got == LISTING5


def test_long_range_ecm_listing4(long_range):
    """Listing 4: { 52.0 || 54.0 | 40.0 | 24.0 | ... } and { 54.0 \\ 94.0 \\ 118.0 \\ ... }, 4 cores."""
    e = long_range.ecm
    assert e.T_OL == pytest.approx(52.0)
    assert e.T_nOL == pytest.approx(54.0)
    c = _contrib(long_range)
    assert c["L1L2"] == pytest.approx(40.0)
    assert c["L2L3"] == pytest.approx(24.0)
    assert [e.T_ECM[k] for k in ("L1", "L2", "L3")] == pytest.approx([54.0, 94.0, 118.0])
    assert e.saturation_cores == 4


def test_long_range_traffic_per_cl(long_range):
    got = [(lt.level, lt.loads_cl, lt.stores_cl) for lt in long_range.traffic.levels]
    assert got == [("L1", 19, 1), ("L2", 11, 1), ("L3", 11, 1)]
    assert long_range.traffic.iterations_per_unit == 8


# --- 3D 7-point stencil, §1.2.2 -----------------------------------------------------------------

def test_3d7pt_selected_lc_dimensions(seven_point):
    sel = {lv.level: lv.states[lv.selected].dimension for lv in seven_point.lc_levels}
    assert sel == {"L1": 1, "L2": 2, "L3": 3}
    l1 = seven_point.lc_levels[0]
    assert not any(s.condition for s in l1.states if s.dimension == 2), "no 2D layer condition in L1 at N=800"


def test_3d7pt_ecm_contributions(seven_point):
    c = _contrib(seven_point)
    assert c["L1L2"] == pytest.approx(14.0, abs=1e-12)
    assert c["L2L3"] == pytest.approx(10.0, abs=1e-12)
    assert c["L3MEM"] == pytest.approx(9.1, abs=0.05)
    assert c["L3MEM"] == pytest.approx(192 * 3.0 / 63.4, rel=1e-9)
    assert f"{c['L3MEM']:.1f}" == "9.1"
    assert [x.source for x in seven_point.ecm.contributions][-1].startswith("--mem-bw: the memory bus bandwidth")


def test_3d7pt_ecm_cli_mem_bw():
    p = run_cli("analyze", KERNELS / "3d-7pt.c", "-m", IVB, "-D", "M=800", "-D", "N=800",
                "--mem-bw", "63.4 GB/s", "-p", "ECM", "--json")
    assert p.returncode == 0, p.stderr
    c = {x["name"]: x["time_cy_per_cl"] for x in json.loads(p.stdout)["ecm"]["contributions"]}
    assert c["L1L2"] == pytest.approx(14.0)
    assert c["L2L3"] == pytest.approx(10.0)
    assert c["L3MEM"] == pytest.approx(9.1, abs=0.05)
    assert c["L3MEM"] == pytest.approx(9.0852, abs=1e-4)


def test_3d7pt_traffic_per_cl(seven_point):
    got = [(lt.loads_cl, lt.stores_cl) for lt in seven_point.traffic.levels]
    assert got == [(6, 1), (4, 1), (2, 1)]


def test_3d7pt_saturation(seven_point):
    e = seven_point.ecm
    assert e.saturation_cores == 5  # ceil(45.09 / 9.09) = ceil(4.96)


# --- 2D 5-point stencil on Sandy Bridge (ecm-model-slides) ----------------------------------------

def test_2d5pt_snb_contributions(five_point_snb):
    c = _contrib(five_point_snb)
    assert c["L1L2"] == pytest.approx(10.0, abs=1e-12)
    assert c["L2L3"] == pytest.approx(10.0, abs=1e-12)
    assert 13.0 < c["L3MEM"] < 13.2


def test_2d5pt_snb_notation(five_point_snb):
    n = five_point_snb.ecm.notation()
    assert re.fullmatch(r"\{ \d+\.\d \|\| \d+\.\d \| 10\.0 \| 10\.0 \| 13\.[01] \} cy/CL", n), n


def test_2d5pt_requirement_paper_2_4_2():
    """§2.4.2: for reuse distance N-1 the 2D 5-pt stencil needs 32*N - 16 bytes; 3 hits, 2 misses."""
    k, _ = parse_kernel_file(str(KERNELS / "2d-5pt.c"))
    lc = LayerConditionAnalysis(k)
    n = Poly.symbol("N")
    idx = lc.candidates.index(n - 1)
    assert lc.requirements[idx] == 32 * n - 16
    res = analyze("2d-5pt.c", IVB, {"M": 100, "N": 1000})
    for lv in res.lc_levels:
        st = [s for s in lv.states if s.distance == n - 1]
        assert len(st) == 1
        assert (st[0].hits, st[0].misses) == (3, 2)
        assert st[0].requirement_bytes == 32 * 1000 - 16


# --- victim L3 (cross-architecture paper §5) ------------------------------------------------------

def test_skylake_victim_l3_daxpy_bytes_per_iteration():
    res = analyze("daxpy.c", SKX, {"N": 10 ** 8})
    it = res.traffic.iterations_per_unit
    assert [lt.bytes / it for lt in res.traffic.levels] == [24, 32, 24]


def test_skylake_victim_l3_daxpy_directions():
    """L2->L3 carries only evictions (2 CL: x clean, y dirty); memory lines enter L2 directly."""
    res = analyze("daxpy.c", SKX, {"N": 10 ** 8})
    l2 = res.traffic.level("L2")
    assert (l2.loads_cl, l2.stores_cl) == (2, 2)
    l3 = res.traffic.level("L3")
    assert (l3.loads_cl, l3.stores_cl) == (2, 1)


# --- notation and saturation ------------------------------------------------------------------------

NUM = r"(\d+\.\d)"


# n_s = ceil(T_ECM,Mem / T_L3MEM), worked out from the printed notation of each case
@pytest.mark.parametrize("kernel,machine,defines,n_s", [
    ("3d-long-range.c", IVB, LONG_RANGE, 4),  # ceil(165.8 / 47.8) = ceil(3.47)
    ("2d-5pt.c", SNB, {"M": 10000, "N": 10000}, 4),  # ceil(41.06 / 13.06) = ceil(3.14)
    ("3d-7pt.c", IVB, {"M": 800, "N": 800}, 4),  # ceil(48.19 / 12.19) = ceil(3.95)
    ("triad.c", SKX, {"N": 10 ** 7}, 5),  # ceil(23.74 / 5.74) = ceil(4.14): T_nOL = loads (Intel ECM), gcc's 4 lanes
])
def test_ecm_notation_strings(kernel, machine, defines, n_s):
    res = analyze(kernel, machine, defines)
    e = res.ecm
    m = re.fullmatch(rf"\{{ {NUM} \|\| {NUM} \| {NUM} \| {NUM} \| {NUM} \}} cy/CL", e.notation())
    assert m, e.notation()
    want = [e.T_OL, e.T_nOL] + [c.cycles for c in e.contributions]
    assert [float(x) for x in m.groups()] == [round(v, 1) for v in want]
    p = re.fullmatch(rf"\{{ {NUM} \\ {NUM} \\ {NUM} \\ {NUM} \}} cy/CL", e.prediction_notation())
    assert p, e.prediction_notation()
    assert [float(x) for x in p.groups()] == [round(e.T_ECM[k], 1) for k in ("L1", "L2", "L3", "MEM")]
    assert e.saturation_cores == n_s


def test_ecm_composition_intel(seven_point):
    """T_ECM^L1 = max(T_OL, T_nOL); T_ECM^Mem = max(T_OL, T_nOL + sum of transfers) (only T_OL overlaps)."""
    e = seven_point.ecm
    # { 14.0 || 12.0 | 14.0 | 10.0 | 9.0852 } (9.0852 = 192 B * 3.0 GHz / 63.4 GB/s) composed by hand:
    # L1 max(14, 12) = 14; L2 12 + 14 = 26; L3 26 + 10 = 36; MEM 36 + 9.0852 = 45.0852
    assert (e.T_OL, e.T_nOL) == pytest.approx((14.0, 12.0))
    assert [e.T_ECM[k] for k in ("L1", "L2", "L3", "MEM")] == pytest.approx([14.0, 26.0, 36.0, 45.0852], abs=1e-4)


def test_ecm_composition_of_the_papers_numbers():
    """kerncraft-tool-paper.txt §1.2.2: { 13.2 || 7 | 14 | 10 | 9.1 } cy for the 3D 7-pt stencil on IVB;
    T_ECM,Mem = max(13.2, 7 + 14 + 10 + 9.1) = 40.1 cy, and for data in L1/L2/L3 13.2, 21, 31 cy."""
    from types import SimpleNamespace

    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.models.ecm import combine
    m = load_machine(IVB)
    incore = SimpleNamespace(T_OL=13.2, T_nOL=7.0)
    parts = [SimpleNamespace(name=n, cycles=v) for n, v in (("L1L2", 14.0), ("L2L3", 10.0), ("L3MEM", 9.1))]
    got = [combine(incore, parts[:d], m) for d in range(4)]
    assert got == pytest.approx([13.2, 21.0, 31.0, 40.1])
