"""Cross-architecture ECM: Table 3 of cross-architecture-machine-models.txt.

daxpby (y[i] = a*x[i] + b*y[i]), single core, in cy/it, with the paper's intermediate
contributions; values are asserted to the precision the paper prints them with.
"""
from __future__ import annotations

import json

import pytest

from helpers import analyze, run_cli

MACHINES = {"SKL": "SkylakeSP_Gold-6148_SNC", "EPYC": "Zen_EPYC-7451", "TX2": "ThunderX2_CN9980",
            "PWR9": "Power9_8335-GTX"}
# Table 3: T_comp, T_LD/ST, T_L1L2, T_L2L3 (data in L3 / in memory), T_L2Mem, T_L3Mem,
# T_ECM for data in L1, L2, L3, Mem  [cy/it]
TABLE3 = {
    "SKL": (0.0625, 0.1875, 0.375, (1, 1), None, 0.88, (0.1875, 0.5625, 1.5625, 2.4425)),
    "EPYC": (0.25, 0.75, 0.5, (0.75, 0.25), 1.23, 0.62, (0.75, 0.75, 0.75, 2.1)),
    "TX2": (0.25, 0.75, 0.375, (1, 0.5), 0.29, 0.14, (0.75, 1.125, 1.125, 2.06)),
    "PWR9": (0.25, 0.75, 0.5, (1, 0.5), 0.36, 0.18, (1.25, 1.25, 1.25, 2.1)),
}


def _printed(x: float) -> int:
    """Decimal places the paper prints ``x`` with."""
    s = repr(float(x)).rstrip("0").rstrip(".")
    return len(s.split(".")[1]) if "." in s else 0


def _same(value, printed):
    assert round(value, _printed(printed)) == pytest.approx(printed, abs=1e-12), (value, printed)


@pytest.fixture(scope="module")
def results():
    return {cpu: analyze("daxpby.c", m, {"N": 100_000_000}, models=("ECM",), incore="analytic")
            for cpu, m in MACHINES.items()}


@pytest.mark.parametrize("cpu", sorted(MACHINES))
def test_table3_ecm_per_data_location(results, cpu):
    e = results[cpu].ecm
    it = results[cpu].traffic.iterations_per_unit
    for level, want in zip(("L1", "L2", "L3", "MEM"), TABLE3[cpu][6]):
        _same(e.T_ECM[level] / it, want)


@pytest.mark.parametrize("cpu", sorted(MACHINES))
def test_table3_intermediate_contributions(results, cpu):
    r = results[cpu]
    e, it = r.ecm, r.traffic.iterations_per_unit
    comp, ldst, l1l2, (l2l3_l3, l2l3_mem), l2mem, l3mem, _ = TABLE3[cpu]
    _same(e.T_OL / it, comp)
    _same(e.T_nOL / it, ldst)
    mem = {c.name: c for c in e.by_location["MEM"]}
    in_l3 = {c.name: c for c in e.by_location["L3"]}
    _same(mem["L1L2"].busy / it, l1l2)
    _same(in_l3["L2L3"].busy / it, l2l3_l3)
    _same(mem["L2L3"].busy / it, l2l3_mem)
    _same(mem["L3MEM"].busy / it, l3mem)
    if l2mem is None:
        assert "L2MEM" not in mem  # SKL: memory traffic counted on the L3-Mem link (paper §5.2.1)
    else:
        _same(mem["L2MEM"].busy / it, l2mem)


def test_penalty_is_reported_apart_from_the_transfer_time(results):
    mem = {c.name: c for c in results["PWR9"].ecm.by_location["MEM"]}
    assert mem["L2MEM"].penalty == pytest.approx(2 * 1.2)  # 2 CL loaded from memory per CL of work
    assert sum(c.penalty for c in mem.values()) == pytest.approx(2.4)


def test_write_through_l1_stores_cost_even_for_data_in_l1(results):
    """PWR9: every store of the write-through L1 goes to L2 (8 B/it at 16 B/cy), also with data in L1."""
    l1 = {c.name: c for c in results["PWR9"].ecm.by_location["L1"]}
    assert l1["L1L2"].bytes_in == 0 and l1["L1L2"].bytes_out == 64
    skl = {c.name for c in results["SKL"].ecm.by_location["L1"]}
    assert skl == set()  # write-back L1: no link carries anything for data in L1


def test_victim_clean_false_halves_epyc_eviction_traffic(results):
    """EPYC: only the dirty y is evicted into the victim L3 (x is dropped clean)."""
    tl = results["EPYC"].traffic.level("L2")
    assert (tl.loads_cl, tl.stores_cl) == (2, 1)
    assert results["TX2"].traffic.level("L2").stores_cl == 2


def test_verbose_prints_table3_contributions():
    p = run_cli("analyze", "examples/kernels/daxpby.c", "-m", "Zen_EPYC-7451", "-D", "N=100000000", "-p", "ECM",
                "--incore", "analytic", "--unit", "cy/it", "-v")
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "Contributions per data location" in out
    for needle in ("T_L2L3", "0.75", "0.25", "T_L2MEM", "1.231", "T_L3MEM", "0.6154", "2.096"):
        assert needle in out, needle
    j = run_cli("analyze", "examples/kernels/daxpby.c", "-m", "Zen_EPYC-7451", "-D", "N=100000000", "-p", "ECM",
                "--incore", "analytic", "--json")
    doc = json.loads(j.stdout)
    by = doc["ecm"]["by_location"]
    assert set(by) == {"L1", "L2", "L3", "MEM"}
    l3 = {c["name"]: c for c in by["L3"]["contributions"]}
    assert l3["L2L3"]["busy_cy_per_cl"] == pytest.approx(6.0) and by["L3"]["T_ECM_cy_per_cl"] == pytest.approx(6.0)


def test_write_allocate_reaches_memory_through_a_victim_l3():
    """Triad on Skylake-SP: the L2's write-allocate for a[] is read from memory although the victim
    L3 itself does not allocate on writes: 3 CL in, 1 CL out per CL of work on the memory link."""
    r = analyze("triad.c", "SkylakeSP_Gold-6148_SNC", {"N": 100_000_000}, models=("ECM",), incore="analytic")
    mem = r.traffic.level("L3")
    assert (mem.loads_cl, mem.stores_cl) == (3, 1)
