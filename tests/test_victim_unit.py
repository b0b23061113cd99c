"""Victim caches without clean transfers, and the unit of work of strided and mixed-type kernels.

Victim caches: ``victim_clean: false`` places clean evictions in the victim cache without a
transfer on the link (cross-architecture-machine-models.txt Table 3, EPYC); the cache
simulator and layer conditions must agree on it, and Kerncraft-format files get an
evidence-based default. Unit of work: one cache line of the written array,
it/CL = CL / |address step per iteration in bytes| (kerncraft-tool-paper.txt §1.2.1).
"""
from __future__ import annotations

import json

import pytest
from cachesim_reference import ReferenceHierarchy
from helpers import SNB, analyze, reference_dir, run_cli

from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec
from loopmodel.errors import ModelError
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.kerncraft_machine import convert_kerncraft

ZEN = "Zen_EPYC-7451"

# --- the simulator: clean evictions into a victim cache without a counted transfer ----------------

_TRACE = [(0, "load"), (64, "load"), (0, "load"), (128, "store"), (0, "load")]


def _victim_hierarchy(victim_clean):
    return [LevelSpec("L1", 1, 1, 64), LevelSpec("L2", 1, 2, 64, kind="victim", victim_clean=victim_clean)]


@pytest.mark.parametrize("make", [Hierarchy, ReferenceHierarchy], ids=["compiled", "reference"])
def test_clean_evictions_are_placed_but_not_counted(make):
    h = make(_victim_hierarchy(False))
    for addr, kind in _TRACE:
        h.access(addr, 8, kind)
    s = h.stats()
    # 4 evictions from L1 (lines 0, 1, 0 clean; line 2 dirty): only the dirty one is a transfer
    assert s["L1"]["evicts"] == 4 and s["L1"]["store_lines"] == 1
    # the clean line 0 was placed all the same: found there twice (read-only data reused from L3)
    assert s["L2"]["hits"] == 2 and s["MEM"]["loads"] == 3
    assert h.contents(1) == [[(2, True), (1, False)]]


def test_victim_clean_true_counts_every_eviction():
    fast, ref = Hierarchy(_victim_hierarchy(True)), ReferenceHierarchy(_victim_hierarchy(True))
    for h in (fast, ref):
        for addr, kind in _TRACE:
            h.access(addr, 8, kind)
    assert fast.stats() == ref.stats()
    assert fast.stats()["L1"]["store_lines"] == 4


# --- layer conditions and simulation agree on the paper's EPYC model ------------------------------

@pytest.mark.parametrize("kernel", ["dot.c", "daxpy.c", "triad.c", "daxpby.c"])
def test_lc_and_simulation_agree_on_zen_in_memory(kernel):
    """Data in memory (32 MB or more against an 8 MiB L3): every link within 2 %."""
    lc = analyze(kernel, ZEN, {"N": 2_000_000}, cache_predictor="lc", incore="analytic")
    sim = analyze(kernel, ZEN, {"N": 2_000_000}, cache_predictor="sim", incore="analytic")
    assert lc.traffic.predictor == "LC" and sim.traffic.predictor == "SIM"
    for a, b in zip(lc.traffic.levels, sim.traffic.levels):
        assert b.loads_cl == pytest.approx(a.loads_cl, rel=0.02, abs=0.02), a.level
        assert b.stores_cl == pytest.approx(a.stores_cl, rel=0.02, abs=0.02), a.level


@pytest.mark.parametrize("predictor", ["lc", "sim"])
def test_zen_daxpby_in_memory_matches_table_3(predictor):
    """cross-architecture-machine-models.txt Table 3, EPYC, in memory: T_L2L3 = 0.25 cy/it (only the
    write-back of y), T_L2Mem = 1.23 cy/it, T_L3Mem = 0.62 cy/it; 8 it per CL."""
    r = analyze("daxpby.c", ZEN, {"N": 2_000_000}, cache_predictor=predictor, incore="analytic")
    it = r.traffic.iterations_per_unit
    mem = {c.name: c.cycles / it for c in r.ecm.by_location["MEM"]}
    assert it == 8
    assert mem["L2L3"] == pytest.approx(0.25)
    assert mem["L2MEM"] == pytest.approx(1.23, abs=0.01)
    assert mem["L3MEM"] == pytest.approx(0.62, abs=0.01)


def test_zen_daxpby_in_l3_finds_the_clean_lines_in_l3():
    """Table 3, EPYC, data in L3: T_L2L3 = 0.75 cy/it (x and y read from L3, y written back) and
    T_ECM = 0.75 cy/it: the clean x was placed in the L3 (no memory traffic), its eviction not counted."""
    r = analyze("daxpby.c", ZEN, {"N": 200_000}, cache_predictor="sim", incore="analytic")
    it = r.traffic.iterations_per_unit
    l2, l3 = r.traffic.level("L2"), r.traffic.level("L3")
    assert (l2.loads_cl, l2.stores_cl) == pytest.approx((2, 1))
    assert (l3.loads_cl, l3.stores_cl) == pytest.approx((0, 0))
    assert {c.name: c.cycles / it for c in r.ecm.by_location["L3"]}["L2L3"] == pytest.approx(0.75)
    assert r.ecm.T_ECM["L3"] / it == pytest.approx(0.75)


# --- Kerncraft-format files: the default of victim_clean and where it comes from -----------------

def _kerncraft_dict(model_name, osaca):
    """A minimal Kerncraft-format machine description with an L2 that sends its victims to the L3."""
    def cache(sets, ways, **extra):
        return {"sets": sets, "ways": ways, "cl_size": 64, "replacement_policy": "LRU",
                "write_allocate": True, "write_back": True, **extra}
    return {
        "kerncraft version": "0.8.18", "model name": model_name, "clock": "2.3 GHz", "cores per socket": 8,
        "in-core model": [{"OSACA": osaca}], "cacheline size": "64 B",
        "memory hierarchy": [
            {"level": "L1", "cache per group": cache(64, 8), "cores per group": 1,
             "upstream throughput": ["architecture code analyzer", []]},
            {"level": "L2", "cache per group": cache(1024, 8, victims_to="L3"), "cores per group": 1,
             "upstream throughput": ["32 B/cy", "half-duplex"]},
            {"level": "L3", "cache per group": cache(8192, 16, write_allocate=False), "cores per group": 4,
             "upstream throughput": ["32 B/cy", "half-duplex"]},
            {"level": "MEM", "cores per group": 8, "upstream throughput": ["20 GB/s", "half-duplex"]},
        ],
    }


@pytest.mark.parametrize("model_name, osaca, clean", [
    ("AMD EPYC 7452 32-Core Processor", "ZEN2", False),
    ("AMD Ryzen 7 1700X Eight-Core Processor", "ZEN1", False),
    ("Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz", "SKX", True),
    ("CN9980", "TX2", True),
])
def test_converted_victim_cache_default_and_its_source(model_name, osaca, clean):
    out = convert_kerncraft(_kerncraft_dict(model_name, osaca), "x.yml")
    l3 = next(lv for lv in out["memory_hierarchy"] if lv["level"] == "L3")
    assert l3["type"] == "victim" and l3["victim_clean"] is clean
    assert f"victim_clean: {str(clean).lower()}" in l3["victim_clean_note"]
    assert "Hofmann et al., Bridging the Architecture Gap" in l3["victim_clean_note"]
    assert l3["victim_clean_note"] in out["sources"]
    # non-victim levels get no such setting
    assert all("victim_clean" not in lv for lv in out["memory_hierarchy"] if lv["level"] != "L3")


# Peer figures: Kerncraft 0.8.18, `kerncraft -p ECMData -m <reference file> dot.c -D N 10000000
# -P LC` (its layer conditions ignore `victims_to`: only written arrays are evicted) and `-P SIM`
# (its default; pycachesim forwards every evicted line, clean ones too, to `victims_to`), T_L3 in cy/CL:
PEER_DOT_L2L3 = {"Zen2_EPYC-7452.yml": (5.33, 10.67), "Zen_EPYC-7451.yml": (4.00, 8.00),
                 "Zen_Ryzen7-1700X.yml": (4.00, 8.00), "ARMv8_ThunderX2-CN9980.yml": (4.00, 8.00)}


@pytest.mark.parametrize("name", sorted(PEER_DOT_L2L3))
@pytest.mark.parametrize("predictor", ["lc", "sim"])
def test_dot_on_imported_victim_machines(name, predictor):
    """Zen family: no clean transfers, as the peer's layer conditions (Table 3 EPYC); others (TX2):
    clean evictions counted, as the peer's simulation (Table 3 TX2: 1 cy/it in L3, 0.5 in memory)."""
    path = reference_dir() / name
    r = analyze("dot.c", str(path), {"N": 10_000_000}, cache_predictor=predictor, incore="analytic")
    t = {c.name: c.cycles for c in r.ecm.by_location["MEM"]}["L2L3"]
    peer_lc, peer_sim = PEER_DOT_L2L3[name]
    assert t == pytest.approx(peer_sim if "ThunderX2" in name else peer_lc, abs=0.01)
    assert any(n.startswith("L3: victim cache from a Kerncraft file") for n in r.notes)


# --- the unit of work ------------------------------------------------------------------------------

def _kernel(body, decl="float a[N], b[N], c[N];\ndouble d[N], e[N];\nfloat s;\n"):
    return parse_kernel(decl + body)[0]


@pytest.mark.parametrize("body, it, array, basis", [
    ("for (int i = 2; i < N-2; i += 2)\n    a[i] = b[i] + s * c[i];\n", 8, "a", "written"),
    ("for (int i = 0; i < M; ++i)\n    a[2*i] = b[2*i];\n", 8, "a", "written"),
    ("for (int i = 0; i < N; ++i)\n    a[i] = b[i];\n", 16, "a", "written"),
    ("for (int i = N-1; i > 0; i -= 2)\n    d[i] = e[i];\n", 4, "d", "written"),
    ("for (int i = 0; i < N; ++i)\n    s += b[i] * d[i];\n", 8, "d", "read"),   # reduction, mixed types
    ("for (int i = 0; i < N; ++i) {\n    a[i] = b[i];\n    d[i] = e[i];\n}\n", 8, "d", "written"),
    ("for (int i = 0; i < M; ++i)\n    d[16*i] = e[i];\n", 1, "d", "written"),  # 128 B step: a CL per it
])
def test_iterations_per_cacheline(body, it, array, basis):
    u = _kernel(body).unit_of_work(64, {"N": 1000, "M": 50})
    assert (u.iterations, u.array, u.basis) == (it, array, basis)
    assert _kernel(body).iterations_per_cacheline(64, {"N": 1000, "M": 50}) == it


def test_size_dependent_stride_needs_its_value():
    k = _kernel("for (int j = 0; j < N; ++j)\n    for (int i = 0; i < N; ++i)\n        m[i][j] = 1.0;\n",
                decl="double m[N][N];\n")
    assert k.iterations_per_cacheline(64, {"N": 100}) == 1  # 800 B per iteration: a new CL each time
    with pytest.raises(ModelError, match="depends on N"):
        k.iterations_per_cacheline(64)


STRIDED = "float a[N], b[N], c[N];\nfloat s;\n\nfor (int i = 2; i < N-2; i += 2)\n    a[i] = b[i] + s * c[i];\n"
# Peer figures: Kerncraft 0.8.18, `kerncraft -p ECMData -vv -m SandyBridgeEP_E5-2680.yml (the reference
# file) strided.c -D N 10000000` (cache simulation; its layer conditions refuse step 2): per CL of a
# (8 it: 64 B / (4 B x 2)) 192 B loaded and 64 B stored on each of L1-L2, L2-L3, L3-MEM, and
# L2 = 8.00, L3 = 8.00, MEM = 17.41 cy/CL.
PEER_STRIDED = {"loads_cl": 3.0, "stores_cl": 1.0, "L1L2": 8.00, "L2L3": 8.00, "L3MEM": 17.41}


@pytest.fixture(scope="module")
def strided_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "strided.c"
    path.write_text(STRIDED)
    return path


@pytest.mark.parametrize("machine", [SNB, "reference"])
def test_strided_float_kernel_matches_the_peer(strided_file, machine):
    if machine == "reference":
        machine = str(reference_dir() / f"{SNB}.yml")
    r = analyze(str(strided_file), machine, {"N": 10_000_000}, cache_predictor="sim", incore="analytic")
    assert r.traffic.iterations_per_unit == 8
    for lt in r.traffic.levels:
        assert lt.loads_cl == pytest.approx(PEER_STRIDED["loads_cl"], rel=0.01), lt.level
        assert lt.stores_cl == pytest.approx(PEER_STRIDED["stores_cl"], rel=0.01), lt.level
    mem = {c.name: c.cycles for c in r.ecm.by_location["MEM"]}
    for name in ("L1L2", "L2L3", "L3MEM"):
        assert mem[name] == pytest.approx(PEER_STRIDED[name], rel=0.01), name


def test_strided_kernel_with_layer_conditions_falls_back_with_the_same_unit(strided_file):
    """Layer conditions do not apply to step 2 (nor in the peer): the analysis says so and uses the
    simulation, with the same unit of work."""
    r = analyze(str(strided_file), SNB, {"N": 10_000_000}, cache_predictor="lc", incore="analytic")
    assert r.traffic.predictor == "SIM" and r.traffic.iterations_per_unit == 8
    assert any("layer conditions do not apply" in n for n in r.notes)


# Kerncraft 0.8.18, `kerncraft -p ECMCPU -p ECM -m SandyBridgeEP_E5-2680.yml (the reference file)
# strided.c -D N 10000000` (OSACA in-core on gcc -O3 code): T_comp = 21.0, T_RegL1 = 4.0 cy/CL,
# T_ECM = max(21.0, 4.0 + 8.0 + 8.0 + 17.4) = 37.41 cy/CL.
# The reference file does not say where stores count, so loopmodel's one rule applies (stores in
# T_nOL, cross-architecture-machine-models.txt §3.4.1 eq. 1): T_nOL = 8.0 (the loads' and stores'
# address and data ports 2, 3, 4) where the peer counts the loads alone (4.0), and T_ECM^MEM =
# 8.0 + 8.0 + 8.0 + 17.41. T_OL is the peer's: the shuffles on port 5, the stores' own shuffle
# (vextractf128 to memory) included.
PEER_STRIDED_ECM = {"T_OL": 21.0, "T_nOL": 8.0, "MEM": 41.41}


@pytest.mark.skipif(__import__("shutil").which("gcc") is None or not __import__(
    "loopmodel.compiled.osaca_backend", fromlist=["x"]).available(), reason="gcc and OSACA needed")
def test_strided_float_kernel_compiled_incore_matches_the_peer(strided_file):
    """The compiled in-core time per unit (8 it) and the whole ECM prediction, as the peer's but for
    where the stores count (see PEER_STRIDED_ECM)."""
    machine = str(reference_dir() / f"{SNB}.yml")
    r = analyze(str(strided_file), machine, {"N": 10_000_000}, cache_predictor="sim", incore="osaca",
                kernel_text=STRIDED)
    assert r.incore.source == "osaca"
    assert r.ecm.T_OL == pytest.approx(PEER_STRIDED_ECM["T_OL"], rel=0.01)
    assert r.ecm.T_nOL == pytest.approx(PEER_STRIDED_ECM["T_nOL"], rel=0.01)
    assert r.ecm.T_ECM["MEM"] == pytest.approx(PEER_STRIDED_ECM["MEM"], rel=0.01)


MIXED_MATVEC = ("float y[N];\ndouble A[N][N], x[N];\n\nfor (int i = 0; i < N; ++i)\n"
                "    for (int j = 0; j < N; ++j)\n        y[i] += A[i][j] * x[j];\n")


def test_mixed_types_lc_and_simulation_share_the_unit(tmp_path):
    """The float result stays in a register in the inner loop: the double A and x define the unit (8 it);
    both predictors count per that unit (one CL of A from memory, x in cache)."""
    path = tmp_path / "mv.c"
    path.write_text(MIXED_MATVEC)
    lc = analyze(str(path), SNB, {"N": 2000}, cache_predictor="lc", incore="analytic")
    sim = analyze(str(path), SNB, {"N": 2000}, cache_predictor="sim", incore="analytic")
    assert lc.traffic.iterations_per_unit == sim.traffic.iterations_per_unit == 8
    assert lc.traffic.level("L3").loads_cl == pytest.approx(1.0)
    assert sim.traffic.level("L3").loads_cl == pytest.approx(1.0, rel=0.02)


def test_unit_of_work_in_text_and_json(strided_file):
    args = ("analyze", strided_file, "-m", SNB, "-D", "N=100000", "-p", "ECM", "--incore", "analytic")
    text = run_cli(*args)
    assert text.returncode == 0, text.stderr
    assert "unit of work (CL of work): 1 CL of the written array 'a' = 8 it (64 B CL / 8 B address step per it)" in text.stdout
    doc = run_cli(*args, "--json")
    assert doc.returncode == 0, doc.stderr
    d = json.loads(doc.stdout)
    assert d["iterations_per_cl"] == 8
    assert d["unit_of_work"]["array"] == "a" and d["unit_of_work"]["iterations_per_cl"] == 8
    assert d["unit_of_work"]["address_step_B_per_it"] == 8

