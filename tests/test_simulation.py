"""Cache-simulation traffic predictor: agreement with layer conditions, associativity
conflicts, victim L3, write-through, non-temporal stores, array layout, CLI."""
from __future__ import annotations

import dataclasses
import json
import os
import pty
import subprocess
import sys

import pytest

from helpers import IVB, KERNELS, SKX, analyze

from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.predictors.layer_conditions import LayerConditionAnalysis
from loopmodel.predictors.simulation import SimulationPredictor, level_specs, place_arrays


def _kernel(name):
    return parse_kernel_file(str(KERNELS / name))[0]


def _with_caches(machine, **changes):
    """The machine with cache levels replaced: changes = {level: {field: value}}."""
    levels = [dataclasses.replace(lv, **changes.get(lv.level, {})) for lv in machine.memory_hierarchy]
    return dataclasses.replace(machine, memory_hierarchy=levels)


def _highly_associative():
    """IvyBridge capacities, but 64-way L1, 64-way L2 and 128-way L3: (almost) no conflict misses."""
    m = load_machine(IVB)
    return _with_caches(m, L1={"sets": 8, "ways": 64}, L2={"sets": 64, "ways": 64},
                        L3={"sets": 3200, "ways": 128, "type": "non-inclusive"})


# data sets larger than the L3 (so that neither predictor sees data survive between sweeps),
# sizes away from layer-condition transitions
AGREEMENT = [
    ("2d-5pt.c", {"M": 1000, "N": 4000}),
    ("3d-7pt.c", {"M": 40, "N": 300}),
    ("3d-long-range.c", {"M": 20, "N": 600}),
    ("triad.c", {"N": 4_000_000}),
    ("daxpy.c", {"N": 4_000_000}),
    ("daxpby.c", {"N": 4_000_000}),
    ("dot.c", {"N": 4_000_000}),
    ("matvec.c", {"M": 4000, "N": 2000}),
    ("uxx.c", {"N": 150}),
]


@pytest.mark.parametrize("name,defines", AGREEMENT, ids=[a[0] for a in AGREEMENT])
def test_simulation_agrees_with_layer_conditions(name, defines):
    m = _highly_associative()
    k = _kernel(name)
    lc, _ = LayerConditionAnalysis(k).predict(m, defines)
    sim, info = SimulationPredictor(k).predict(m, defines)
    assert info.measured_iterations >= 1000
    assert sim.iterations_per_unit == lc.iterations_per_unit
    # row ends: up to one partly used line per row and stream, which LC leaves out and the simulation
    # counts (per iteration): at most it_per_unit / inner trips more, relative, never less
    edge = sim.iterations_per_unit / k.loops[-1].iterations(defines)
    for a, b in zip(sim.levels, lc.levels):
        assert a.level == b.level
        for what in ("loads_cl", "stores_cl", "misses"):
            got, want = getattr(a, what), getattr(b, what)
            assert want * 0.99 - 0.02 <= got <= want * (1.01 + edge) + 0.02, (a.level, what)


def test_agreement_cases_exercise_different_layer_conditions():
    """The agreement test is not vacuous: its cases select different states and volumes."""
    m = _highly_associative()
    volumes = set()
    for name, d in AGREEMENT:
        tp, _ = LayerConditionAnalysis(_kernel(name)).predict(m, d)
        volumes.add(tuple(round(lv.loads_cl, 3) for lv in tp.levels))
    assert len(volumes) >= 5
    tp, _ = LayerConditionAnalysis(_kernel("3d-long-range.c")).predict(m, {"M": 20, "N": 600})
    assert tp.levels[0].loads_cl > tp.levels[2].loads_cl  # L1 and L3 in different states


def test_long_range_associativity_conflict_at_1792():
    """kerncraft-tool-paper §2.4.1/§3.1, Fig. 3: N = 1792 = 7*256 thrashes the 8-way L1 of Ivy Bridge."""
    m = load_machine(IVB)
    k = _kernel("3d-long-range.c")
    sim = SimulationPredictor(k)
    lc = LayerConditionAnalysis(k)
    s90 = sim.predict(m, {"M": 130, "N": 1790})[0].level("L1")
    s92 = sim.predict(m, {"M": 130, "N": 1792})[0].level("L1")
    l90 = lc.predict(m, {"M": 130, "N": 1790})[0].level("L1")
    l92 = lc.predict(m, {"M": 130, "N": 1792})[0].level("L1")
    assert s92.bytes > 1.3 * s90.bytes
    assert l92.bytes == l90.bytes
    assert s90.bytes == pytest.approx(l90.bytes, rel=0.02)  # no conflict at 1790


def test_padding_changes_layout_only_where_asked():
    k = _kernel("3d-long-range.c")
    d = {"M": 20, "N": 100}
    plain = place_arrays(k, d)
    padded = place_arrays(k, d, padding=128)
    assert list(plain) == ["U", "V", "ROC"]  # declaration order
    assert all(addr % 4096 == 0 for addr, _ in plain.values())
    assert [addr % 4096 for addr, _ in padded.values()] == [0, 128, 256]
    ends = [a + s for a, s in plain.values()]
    assert all(b[0] >= e for b, e in zip(list(plain.values())[1:], ends))
    odd = place_arrays(k, d, alignment=64)
    assert [a for a, _ in odd.values()][1] == [a for a, _ in plain.values()][0] + 20 * 100 * 100 * 8


def test_padding_removes_inter_array_conflicts():
    """Triad with arrays a multiple of the L1 way size apart: a[i], b[i], c[i] share one set of a
    2-way L1 and evict each other before the next element of the line is used; padding separates them."""
    m = _with_caches(load_machine(IVB), L1={"sets": 64, "ways": 2})
    sim = SimulationPredictor(_kernel("triad.c"))
    d = {"N": 512 * 1024}
    aligned = sim.predict(m, d)[0].level("L1")
    padded = sim.predict(m, d, padding=1088)[0].level("L1")
    assert padded.loads_cl == pytest.approx(3.0, abs=0.01)
    assert aligned.loads_cl > 4 * padded.loads_cl


def test_victim_l3_daxpy_skylake():
    """cross-architecture paper §5.2.1: daxpy in memory on SKX: 24 B L1-L2, 32 B L2-L3, 24 B L3-Mem per it;
    memory lines go to L2 directly, the L3 receives clean and dirty L2 evictions."""
    m = load_machine(SKX)
    tp, _ = SimulationPredictor(_kernel("daxpy.c")).predict(m, {"N": 20_000_000})
    per_it = [round(lv.bytes / tp.iterations_per_unit, 2) for lv in tp.levels]
    assert per_it == [24.0, 32.0, 24.0]
    l2, l3 = tp.level("L2"), tp.level("L3")
    assert l2.stores_cl == pytest.approx(2.0, abs=0.02)   # x (clean) and y (dirty) evicted into L3
    assert l3.hits == pytest.approx(0.0, abs=0.02)        # nothing re-used from the victim L3
    assert l3.loads_cl == pytest.approx(2.0, abs=0.02)    # memory -> L2, counted on the L3-MEM link
    assert l3.stores_cl == pytest.approx(1.0, abs=0.02)   # only y is dirty


def test_write_through_l1_sends_every_store():
    m = _with_caches(load_machine(IVB), L1={"write_back": False, "write_allocate": False})
    tp, _ = SimulationPredictor(_kernel("triad.c")).predict(m, {"N": 4_000_000})
    l1, l2 = tp.level("L1"), tp.level("L2")
    assert l1.loads_cl == pytest.approx(2.0, abs=0.01)   # b and c only: no write-allocate in L1
    assert l1.stores_cl == pytest.approx(1.0, abs=0.01)  # 8 stores of 8 B per CL of a
    assert l2.loads_cl == pytest.approx(3.0, abs=0.01)   # L2 write-allocates a
    assert l2.stores_cl == pytest.approx(1.0, abs=0.01)


def test_nontemporal_stores_bypass_the_caches():
    m = load_machine(IVB)
    k = _kernel("triad.c")
    normal, _ = SimulationPredictor(k).predict(m, {"N": 4_000_000})
    nt, _ = SimulationPredictor(k).predict(m, {"N": 4_000_000}, nt_stores=True)
    assert [round(lv.loads_cl, 2) for lv in normal.levels] == [3.0, 3.0, 3.0]
    assert [round(lv.loads_cl, 2) for lv in nt.levels] == [2.0, 2.0, 2.0]
    assert [round(lv.stores_cl, 2) for lv in nt.levels] == [0.0, 0.0, 1.0]
    assert "non-temporal" in " ".join(nt.notes)


def test_nt_stores_do_not_apply_to_read_arrays():
    m = load_machine(IVB)
    k = _kernel("daxpy.c")  # y is read and written: stays a normal store
    a, _ = SimulationPredictor(k).predict(m, {"N": 4_000_000})
    b, _ = SimulationPredictor(k).predict(m, {"N": 4_000_000}, nt_stores=True)
    assert [lv.loads_cl for lv in a.levels] == [lv.loads_cl for lv in b.levels]


def test_shared_cache_split_among_cores():
    m = load_machine(IVB)
    one, _ = level_specs(m, cores=1)
    ten, _ = level_specs(m, cores=10)
    twenty, _ = level_specs(m, cores=20)
    assert (one[2].sets, ten[2].sets) == (25600, 2560)
    assert twenty[2].sets == 2560  # at most cores_per_group share one L3
    assert one[0].sets == ten[0].sets == 64  # private


def test_small_data_set_served_from_cache_when_repeated():
    """Steady state of a repeated sweep: a data set that fits in L2 causes no L2-L3 traffic."""
    m = load_machine(IVB)
    tp, info = SimulationPredictor(_kernel("triad.c")).predict(m, {"N": 4000})  # 96 KB
    assert info.sweeps >= 2
    assert tp.level("L1").loads_cl == pytest.approx(3.0, abs=0.01)
    assert tp.level("L2").loads_cl == pytest.approx(0.0, abs=0.01)
    assert tp.level("L3").loads_cl == pytest.approx(0.0, abs=0.01)


def test_short_rows_are_measured_as_whole_rows():
    """Rows shorter than the measurement: whole rows, counted per 8 iterations (one CL of work)."""
    tp, info = SimulationPredictor(_kernel("2d-5pt.c")).predict(load_machine(IVB), {"M": 500_000, "N": 12})
    assert info.measured_iterations >= 8000 * 8
    # rows of 96 B and 10 iterations: a and b stream through every level once, 96 B of each per 10
    # iterations = 1.2 CL per 8 iterations (the halo elements' lines are moved too)
    assert [(lv.loads_cl, lv.stores_cl) for lv in tp.levels] == [(2.4, 1.2)] * 3


def test_random_replacement_is_deterministic():
    m = _with_caches(load_machine(IVB), L1={"replacement": "RANDOM"}, L2={"replacement": "FIFO"})
    k = _kernel("2d-5pt.c")
    a, _ = SimulationPredictor(k).predict(m, {"M": 200, "N": 3000})
    b, _ = SimulationPredictor(k).predict(m, {"M": 200, "N": 3000})
    assert a == b


def test_analysis_uses_simulated_traffic_for_ecm():
    lc = analyze("3d-long-range.c", IVB, {"M": 130, "N": 1792})
    sim = analyze("3d-long-range.c", IVB, {"M": 130, "N": 1792}, cache_predictor="sim")
    assert lc.traffic.predictor == "LC" and sim.traffic.predictor == "SIM"
    assert sim.ecm.contributions[0].cycles > 2 * lc.ecm.contributions[0].cycles
    assert sim.lc_levels  # the layer-condition table is still reported
    assert sim.simulation.measured_iterations > 0


def _pty_run(args, timeout=120):
    """Run the CLI with stderr on a pseudo-terminal (so the progress bar is drawn); returns (rc, out, err)."""
    master, slave = pty.openpty()
    env = {**os.environ, "COLUMNS": "100", "TERM": "xterm"}
    p = subprocess.Popen([sys.executable, "-m", "loopmodel", *args], stdout=subprocess.PIPE, stderr=slave,
                         env=env, text=True)
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:
            break
        if not data:
            break
        chunks.append(data)
    out, _ = p.communicate(timeout=timeout)
    os.close(master)
    return p.returncode, out, b"".join(chunks).decode(errors="replace")


def test_cli_sweep_with_progress_bar():
    rc, out, err = _pty_run(["analyze", str(KERNELS / "2d-5pt.c"), "-m", IVB, "-D", "N=100:2000:100",
                             "-D", "M=100", "--cache-predictor", "sim"])
    assert rc == 0, err
    assert "analyzing" in err and "%" in err  # rich progress bar on the terminal
    rows = [ln for ln in out.splitlines() if ln.strip().startswith("│") and ln.split("│")[1].strip().isdigit()]
    assert len(rows) == 20
    assert [int(r.split("│")[2]) for r in rows] == list(range(100, 2001, 100))  # columns M, N


def test_cli_json_reports_simulation():
    p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "triad.c"), "-m", SKX,
                        "-D", "N=1000000", "--cache-predictor", "sim", "--array-padding", "64 B", "--json"],
                       capture_output=True, text=True, timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["traffic_predictor"] == "SIM"
    assert [lv["type"] for lv in doc["simulation"]["levels"]] == ["non-inclusive", "non-inclusive", "victim"]
    assert [a["address_B"] % 4096 for a in doc["simulation"]["arrays"].values()] == [0, 64, 128]
    assert {"hits_cl_per_cl", "misses_cl_per_cl", "evicts_cl_per_cl", "loads_cl_per_cl", "stores_cl_per_cl"} <= set(doc["traffic"][0])
