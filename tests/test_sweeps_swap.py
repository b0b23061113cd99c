"""Repeated or single sweeps (the whole-data-set condition of layer conditions, the sweep semantics
of the cache simulation) and Kerncraft's 'swap(x, y);' statements after the loop nest."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cachesim_reference import ReferenceHierarchy
from helpers import IVB, KERNELS, SKX, analyze, run_cli

from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
from loopmodel.errors import KernelError
from loopmodel.fileio.c_kernel import parse_kernel, parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.predictors import layer_conditions
from loopmodel.predictors.layer_conditions import LayerConditionAnalysis
from loopmodel.predictors.simulation import SimulationPredictor

BOX27 = {"L": 100}  # two grids of 100**3 doubles: 16 MB, inside the 25 MB L3 of Ivy Bridge

# a Jacobi-style sweep written as for Kerncraft: the grids trade places after every sweep
JACOBI_SWAP = """double a[M][N];
double b[M][N];
double s;

for (int j = 1; j < M-1; ++j)
    for (int i = 1; i < N-1; ++i)
        b[j][i] = (a[j][i-1] + a[j][i+1] + a[j-1][i] + a[j+1][i]) * s;

swap(a, b);
"""

# a copy whose source alternates between two arrays: c is touched only through the swap
COPY = "double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n  b[i] = a[i];\n"


def _kernel(name):
    return parse_kernel_file(str(KERNELS / name))[0]


def data_set(kernel):
    return layer_conditions.data_set(kernel)


def _traffic(tp):
    return [(lv.level, lv.loads_cl, lv.stores_cl) for lv in tp.levels]


def _memory_link(res):
    return {c.name: c.cycles for c in res.ecm.contributions}["L3MEM"]


# --- the whole-data-set condition: layer conditions and simulation agree -----------------------------

def test_box27_memory_link_repeated_and_single():
    """27-point box stencil, L = 100 on Ivy Bridge: data in the L3, so repeated sweeps cause no memory
    traffic (Kerncraft's LC and cache simulation say 0 cy/CL too); run once, 2 loads and 1 eviction per
    CL cross the memory link: 192 B at the copy benchmark's 15.75 GB/s (3 GHz) = 12.19 cy/CL."""
    rep_lc = analyze("box27.c", IVB, BOX27)
    one_lc = analyze("box27.c", IVB, BOX27, sweeps="single")
    rep_sim = analyze("box27.c", IVB, BOX27, cache_predictor="sim")
    one_sim = analyze("box27.c", IVB, BOX27, cache_predictor="sim", sweeps="single")
    assert _memory_link(rep_lc) == 0 and _memory_link(rep_sim) == 0
    assert _memory_link(one_lc) == pytest.approx(12.19, abs=0.01)
    # the simulation counts the edge planes of a (125 000 lines) and the partly written lines at the ends
    # of b's rows (120 148 lines, loaded and written back) per 98**3 / 8 CL of work: 3.105 CL, not 3
    assert _memory_link(one_sim) == pytest.approx(_memory_link(one_lc) * (125_000 + 2 * 120_148) / 98 ** 3 * 8 / 3,
                                                  rel=0.002)
    assert one_lc.traffic.level("L3").loads_cl == 2 and one_lc.traffic.level("L3").stores_cl == 1
    assert rep_lc.lc_levels[2].holds_data_set and not rep_lc.lc_levels[1].holds_data_set
    assert any("L3 holds the whole data set" in n for n in rep_lc.notes)


AGREE = [
    ("box27.c", BOX27, IVB),                    # in L3
    ("triad.c", {"N": 8000}, IVB),              # 192 kB: in L2
    ("triad.c", {"N": 400_000}, IVB),           # 9.6 MB: in L3
    ("2d-5pt.c", {"M": 100, "N": 100}, IVB),    # 160 kB: in L2
    ("triad.c", {"N": 83_333}, SKX),            # 2 MB: in L2 + victim L3 (see the cores=20 test)
]


@pytest.mark.parametrize("sweeps", ["repeated", "single"])
@pytest.mark.parametrize("name,defines,machine", AGREE, ids=[f"{a[0]}-{a[2]}-{list(a[1].values())[0]}" for a in AGREE])
def test_layer_conditions_and_simulation_agree_on_data_in_a_cache(name, defines, machine, sweeps):
    m = load_machine(machine)
    k = _kernel(name)
    lc, _ = LayerConditionAnalysis(k).predict(m, defines, sweeps=sweeps)
    sim, info = SimulationPredictor(k).predict(m, defines, sweeps=sweeps)
    assert info.sweep_mode == sweeps and info.cold == (sweeps == "single")
    # row ends: up to one partly used line per row and stream, which LC leaves out and the simulation
    # counts (per iteration): at most it_per_unit / inner trips more, relative
    edge = sim.iterations_per_unit / k.loops[-1].iterations(defines)
    for a, b in zip(sim.levels, lc.levels):
        for what in ("loads_cl", "stores_cl"):
            got, want = getattr(a, what), getattr(b, what)
            assert want * 0.97 - 0.03 <= got <= want * (1.03 + edge) + 0.03, (a.level, what)
    last = lc.levels[-1]
    if sweeps == "repeated":
        assert (last.loads_cl, last.stores_cl) == (0, 0)
    else:
        assert last.loads_cl >= 2 and last.stores_cl == 1


def test_data_set_is_the_bytes_the_nest_touches():
    total, parts = data_set(_kernel("box27.c"))
    assert total.evaluate(BOX27) == 8 * 100 ** 3 + 8 * 98 ** 3  # a whole, b without its boundary
    assert list(parts) == ["a", "b"]
    total, _ = data_set(_kernel("triad.c"))
    assert total.evaluate({"N": 1000}) == 24_000
    total, _ = data_set(_kernel("2d-5pt.c"))  # a[j][i-1] at i = 1 stays inside the row
    assert total.evaluate({"M": 10, "N": 20}) == 8 * 10 * 20 + 8 * 8 * 18


def test_whole_data_set_condition_per_level():
    m = load_machine(IVB)
    _, levels = LayerConditionAnalysis(_kernel("triad.c")).predict(m, {"N": 8000})
    assert [lv.holds_data_set for lv in levels] == [False, True, True]
    l2 = levels[1]
    assert l2.data_set.requirement_bytes == 192_000 and l2.capacity == 262_144
    assert l2.effective_state is l2.data_set and l2.data_set.misses == 0
    assert levels[0].effective_state is levels[0].states[levels[0].selected]
    _, single = LayerConditionAnalysis(_kernel("triad.c")).predict(m, {"N": 8000}, sweeps="single")
    assert all(lv.data_set is None and not lv.holds_data_set for lv in single)


def test_cores_split_the_data_set_and_cache_factor_shrinks_the_capacity():
    """9.6 MB fit in the 25 MB L3 alone, and with 4 cores sharing it, each sweeping its 2.4 MB part in
    its quarter; not with the C/4 rule. Four times the data set does not fit 4 cores' quarters."""
    m = load_machine(IVB)
    lc = LayerConditionAnalysis(_kernel("triad.c"))
    d = {"N": 400_000}
    assert lc.predict(m, d)[1][2].holds_data_set
    four = lc.predict(m, d, cores=4)[1][2]
    assert four.holds_data_set and four.cache_size == 26214400 / 4 and four.capacity == 26214400
    assert not lc.predict(m, d, cache_factor=0.25)[1][2].holds_data_set
    assert lc.predict(m, {"N": 1_600_000}, cores=4)[0].level("L3").loads_cl == 3


def test_victim_l3_adds_the_l2_capacity():
    """Skylake SP, 20 cores, 40 MB split among them: 1.38 MB of victim L3 per core alone cannot keep a
    core's 2 MB, L2 + L3 (exclusive) can; the simulation of that exclusive pair agrees."""
    m = load_machine(SKX)
    k = _kernel("triad.c")
    d = {"N": 20 * 83_333}  # 40.0 MB, 2.0 MB per core
    lc, levels = LayerConditionAnalysis(k).predict(m, d, cores=20)
    l2, l3 = levels[1], levels[2]
    own = m.caches[2].size / 20  # the L3 share of one core alone
    assert own < 2_000_000 < l3.capacity / 20 == l3.cache_size == own + l2.cache_size
    assert l3.holds_data_set and not l2.holds_data_set
    sim, _ = SimulationPredictor(k).predict(m, d, cores=20)
    assert lc.level("L3").loads_cl == 0 and sim.level("L3").loads_cl == pytest.approx(0, abs=0.01)
    assert sim.level("L2").loads_cl == pytest.approx(3, abs=0.01)


def test_victim_cache_without_counted_clean_transfers_still_keeps_clean_lines():
    """Zen's L3 (``victim_clean: false``) still receives clean L2 evictions, it only does not count
    them as transfers (Table 3, EPYC: x is read from L3): read-only data stay there between sweeps,
    in layer conditions and in the simulation alike."""
    m = load_machine("Zen_EPYC-7451")
    k = _kernel("triad.c")
    d = {"N": 50_000}  # 1.2 MB: more than L2, less than L2 + L3
    lc, levels = LayerConditionAnalysis(k).predict(m, d)
    assert levels[2].capacity == levels[2].cache_size == m.caches[2].size + levels[1].capacity
    assert levels[2].holds_data_set and not levels[1].holds_data_set
    sim, _ = SimulationPredictor(k).predict(m, d)
    assert lc.level("L3").loads_cl == 0 and sim.level("L3").loads_cl == pytest.approx(0, abs=0.01)
    assert lc.level("L2").loads_cl == pytest.approx(sim.level("L2").loads_cl, abs=0.05)


def test_write_through_level_holding_the_data_still_sends_its_stores():
    ivb = load_machine(IVB)
    m = dataclasses.replace(ivb, memory_hierarchy=[
        dataclasses.replace(lv, write_back=False, write_allocate=False) if lv.level == "L1" else lv
        for lv in ivb.memory_hierarchy])
    k = _kernel("triad.c")
    lc, levels = LayerConditionAnalysis(k).predict(m, {"N": 1000})  # 24 kB: in L1
    sim, _ = SimulationPredictor(k).predict(m, {"N": 1000})
    assert levels[0].holds_data_set
    assert _traffic(lc) == [("L1", 0, 1), ("L2", 0, 0), ("L3", 0, 0)]
    assert [x for lv in sim.levels for x in (lv.loads_cl, lv.stores_cl)] == pytest.approx([0, 1, 0, 0, 0, 0], abs=0.01)


def test_large_single_sweep_is_measured_in_steady_state():
    """A data set far beyond the L3 is not simulated whole in single-sweep mode."""
    tp, info = SimulationPredictor(_kernel("triad.c")).predict(load_machine(IVB), {"N": 8_000_000},
                                                               sweeps="single")
    assert not info.cold and info.simulated_iterations < 8_000_000
    assert [(round(lv.loads_cl, 2), round(lv.stores_cl, 2)) for lv in tp.levels] == [(3, 1)] * 3
    assert any("steady state" in n for n in tp.notes)


def test_bad_sweeps_value():
    m = load_machine(IVB)
    with pytest.raises(ValueError):
        LayerConditionAnalysis(_kernel("triad.c")).predict(m, {"N": 10}, sweeps="twice")
    with pytest.raises(ValueError):
        SimulationPredictor(_kernel("triad.c")).predict(m, {"N": 10}, sweeps="twice")


# --- the report says which sweeps were used ---------------------------------------------------------

def test_cli_reports_the_sweeps():
    args = ("analyze", KERNELS / "box27.c", "-m", IVB, "-D", "L=100", "--incore", "analytic")
    rep = run_cli(*args, "--json")
    one = run_cli(*args, "--json", "--sweeps", "single")
    text = run_cli(*args, "--sweeps", "single")
    assert rep.returncode == one.returncode == text.returncode == 0, rep.stderr + one.stderr + text.stderr
    rep, one = json.loads(rep.stdout), json.loads(one.stdout)
    assert rep["sweeps"] == "repeated" and one["sweeps"] == "single"
    assert rep["layer_conditions"][2]["whole_data_set"]["held"] is True
    assert one["layer_conditions"][2]["whole_data_set"] is None
    mem = {c["name"]: c["time_cy_per_cl"] for c in rep["ecm"]["contributions"]}["L3MEM"]
    assert mem == 0
    assert {c["name"]: c["time_cy_per_cl"] for c in one["ecm"]["contributions"]}["L3MEM"] == pytest.approx(12.19, abs=0.01)
    assert "--sweeps single" in text.stdout.splitlines()[0]
    assert "Whole data set" not in text.stdout
    rep_text = run_cli(*args)
    assert "--sweeps repeated" in rep_text.stdout.splitlines()[0]
    assert "Whole data set (repeated sweeps):" in rep_text.stdout
    assert "no memory traffic" in rep_text.stdout and "saturating at" not in rep_text.stdout


def test_cli_rejects_unknown_sweeps():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", IVB, "-D", "N=10", "--sweeps", "twice")
    assert p.returncode == 2 and p.stderr.count("\n") == 1
    assert "--sweeps: invalid choice: 'twice'" in p.stderr


# --- swap(x, y); after the loop nest ---------------------------------------------------------------

def test_swap_is_recorded(tmp_path):
    f = tmp_path / "jacobi.c"
    f.write_text(JACOBI_SWAP)
    k, _ = parse_kernel_file(str(f))
    assert k.swaps == (("a", "b"),)
    assert k.swap_period() == 2 and k.swap_groups() == (("a", "b"),)
    assert k.storage_at_sweep(0) == {"a": "a", "b": "b"}
    assert k.storage_at_sweep(1) == {"a": "b", "b": "a"}
    assert k.storage_at_sweep(2) == {"a": "a", "b": "b"}
    assert parse_kernel(JACOBI_SWAP.replace("swap(a, b);", ""))[0].swaps == ()


def test_three_swaps_rotate_with_period_three():
    text = ("double a[N], b[N], c[N];\nfor (int i = 1; i < N-1; ++i)\n  c[i] = a[i-1] + b[i+1];\n"
            "swap(a, b);\nswap(b, c);\n")
    k, _ = parse_kernel(text)
    assert k.swaps == (("a", "b"), ("b", "c"))
    assert k.swap_period() == 3
    assert k.storage_at_sweep(1) == {"a": "b", "b": "c", "c": "a"}


SWAP_ERRORS = [
    ("swap(a, c);", "6:1", "swap: 'a' (double[M][N]) and 'c' (double[N][M]) differ in type or dimensions"),
    ("swap(a, f);", "6:1", "swap: 'a' (double[M][N]) and 'f' (float[M][N]) differ in type or dimensions"),
    ("swap(a, s);", "6:9", "swap: 's' is a scalar; only declared arrays can be swapped"),
    ("swap(a, q);", "6:9", "swap: 'q' is not declared; only declared arrays can be swapped"),
    ("swap(a, a);", "6:1", "swap: 'a' is swapped with itself"),
    ("swap(a);", "6:1", "swap takes two array names: 'swap(x, y);'"),
    ("swap(a, b[0]);", "6:1", "swap takes two array names: 'swap(x, y);'"),
    ("swap(a, b);\ns = 1;", "7:1", "only 'swap(x, y);' calls (and a last 'return') may follow the loop nest"),
    ("swap(a, b);\nfor (int i = 0; i < N; ++i)\n  b[0][i] = 0;", "6:1",
     "'swap(x, y);' exchanges the arrays between the sweeps of one loop nest: it is not supported with several nests"),
]


@pytest.mark.parametrize("tail,where,message", SWAP_ERRORS, ids=[e[0].split("\n")[-1] for e in SWAP_ERRORS])
def test_swap_errors_name_the_place(tail, where, message):
    text = ("double a[M][N], b[M][N], c[N][M], s;\nfloat f[M][N];\n"
            "for (int j = 1; j < M-1; ++j)\n  for (int i = 1; i < N-1; ++i)\n    b[j][i] = a[j][i-1] * s;\n" + tail)
    with pytest.raises(KernelError) as err:
        parse_kernel(text, "k.c")
    assert str(err.value) == f"k.c:{where}: {message}"


def test_swap_before_the_loop_nest_is_rejected():
    with pytest.raises(KernelError, match="must follow the loop nest"):
        parse_kernel("double a[N], b[N];\nswap(a, b);\nfor (int i = 0; i < N; ++i)\n  b[i] = a[i];\n")


def test_cli_swap_error_is_one_line(tmp_path):
    f = tmp_path / "bad.c"
    f.write_text(JACOBI_SWAP.replace("swap(a, b);", "swap(a, t);"))
    p = run_cli("analyze", f, "-m", IVB, "-D", "M=100", "-D", "N=100")
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and f"{f}:9:9: swap: 't' is not declared" in p.stderr
    assert "Traceback" not in p.stderr


def test_swapped_array_counts_in_the_data_set():
    """b = a, then a and c trade places: over repeated sweeps the copy reads a and c in turn. 96 kB each:
    a and b alone (192 kB) would stay in the 256 kB L2, a, b and c (288 kB) do not; both predictors say so,
    and both say the L3 keeps all three."""
    m = load_machine(IVB)
    plain = parse_kernel(COPY)[0]
    swapped = parse_kernel(COPY + "swap(a, c);\n")[0]
    d = {"N": 12_000}
    assert data_set(plain)[0].evaluate(d) == 192_000 and data_set(swapped)[0].evaluate(d) == 288_000
    for k, l2_loads in ((plain, 0), (swapped, 2)):
        lc, _ = LayerConditionAnalysis(k).predict(m, d)
        sim, _ = SimulationPredictor(k).predict(m, d)
        assert lc.level("L2").loads_cl == l2_loads
        assert sim.level("L2").loads_cl > 0.9 if l2_loads else sim.level("L2").loads_cl == 0
        assert lc.level("L3").loads_cl == 0 and sim.level("L3").loads_cl == pytest.approx(0, abs=0.01)
    lc, _ = LayerConditionAnalysis(swapped).predict(m, d)
    assert any("swaps applied: swap(a, c)" in n for n in lc.notes)
    sim, info = SimulationPredictor(swapped).predict(m, d)
    assert info.sweeps == 4  # two sweeps to warm up, two measured: the places repeat every second sweep
    assert any("swaps applied: swap(a, c)" in n for n in sim.notes)
    single, _ = SimulationPredictor(swapped).predict(m, d, sweeps="single")
    assert any("no effect" in n for n in single.notes)


def test_swap_keeps_the_steady_state_of_large_data_sets(tmp_path):
    """Data far beyond the L3: exchanging the grids between sweeps changes no traffic per CL."""
    f = tmp_path / "jacobi.c"
    f.write_text(JACOBI_SWAP)
    m = load_machine(IVB)
    d = {"M": 2000, "N": 2000}
    with_swap, _ = SimulationPredictor(parse_kernel_file(str(f))[0]).predict(m, d)
    without, _ = SimulationPredictor(_kernel("2d-5pt.c")).predict(m, d)
    for a, b in zip(with_swap.levels, without.levels):
        assert a.loads_cl == pytest.approx(b.loads_cl, abs=0.02)
        assert a.stores_cl == pytest.approx(b.stores_cl, abs=0.02)


KERNCRAFT_KERNELS = Path("/tmp/kc/kerncraft-0.8.18")


@pytest.mark.skipif(not KERNCRAFT_KERNELS.is_dir(), reason="Kerncraft's sources are not unpacked here")
def test_every_kerncraft_kernel_parses():
    files = sorted(KERNCRAFT_KERNELS.glob("tests/test_files/*.c")) + sorted(
        KERNCRAFT_KERNELS.glob("examples/kernels/*.c"))
    assert files
    swapping = []
    for f in files:
        k, _ = parse_kernel_file(str(f))
        if k.swaps:
            swapping.append(f.name)
    assert "2d-5pt.c" in swapping and "3d-7pt-swapped.c" in swapping


# --- the simulator's flush, against the reference transcription -------------------------------------

@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_flush_matches_reference(data):
    n = data.draw(st.integers(1, 3))
    levels = [LevelSpec(f"L{i + 1}", data.draw(st.integers(1, 4)), data.draw(st.integers(1, 3)), 64,
                        data.draw(st.sampled_from(["LRU", "FIFO", "RANDOM"])), data.draw(st.booleans()),
                        data.draw(st.booleans()),
                        data.draw(st.sampled_from(["inclusive", "non-inclusive"] + (["victim"] if i else []))))
              for i in range(n)]
    trace = data.draw(st.lists(st.tuples(st.integers(0, 40), st.sampled_from(["load", "store"])),
                               min_size=1, max_size=80))
    fast, ref = Hierarchy(levels), ReferenceHierarchy(levels)
    for line, kind in trace:
        fast.access(line * 64, 8, kind)
        ref.access(line * 64, 8, kind)
    fast.flush()
    ref.flush()
    assert fast.stats() == ref.stats()
    assert all(fast.contents(i) == ref.contents(i) for i in range(n))
    assert all(not s for i in range(n) for s in fast.contents(i))


def test_flush_writes_back_dirty_lines_once():
    h = Hierarchy([LevelSpec("L1", 2, 2), LevelSpec("L2", 4, 4)])
    for line in range(3):
        h.access(line * 64, 8, "store")
    h.access(3 * 64, 8, "load")
    h.reset_stats()
    h.flush()
    st_ = h.stats()
    assert st_["L1"]["store_lines"] == 3 and st_["L2"]["store_lines"] == 3
    assert st_["MEM"]["stores"] == 3 and st_["L1"]["evicts"] == 4 and st_["L2"]["evicts"] == 4
