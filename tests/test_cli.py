"""The real command line: text and JSON output, sweeps, options. All commands of this module
run once, side by side, as separate processes (module fixture); tests look at their output."""
from __future__ import annotations

import json
import math
import re

import pytest

from helpers import IVB, KERNELS, REFERENCE_MACHINES, run_cli_batch

LR = str(KERNELS / "3d-long-range.c")
FIVE = str(KERNELS / "2d-5pt.c")
UNITS = ("cy/CL", "cy/it", "it/s", "FLOP/s", "LUP/s")

COMMANDS = {
    "readme": ["analyze", LR, "-m", IVB, "-D", "M=130", "-D", "N=1015"],
    "readme_json": ["analyze", LR, "-m", IVB, "-D", "M=130", "-D", "N=1015", "--json"],
    "kerncraft_D": ["analyze", LR, "-m", IVB, "-D", "M", "130", "-D", "N", "1015", "--json"],
    "cores4_json": ["analyze", LR, "-m", IVB, "-D", "M=130", "-D", "N=1015", "--json", "--cores", "4",
                    "--multicore-model", "saturation"],
    "cores4_text": ["analyze", LR, "-m", IVB, "-D", "M=130", "-D", "N=1015", "--cores", "4", "-p", "ECM"],
    "sweep_json": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=100:300:100", "--json"],
    "sweep_text": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=100:300:100"],
    "sweep_widening": ["analyze", FIVE, "-m", "SkylakeSP_Gold-6148", "-D", "M=1000", "-D", "N=10:36010:12000",
                       "-p", "LC", "-p", "ECM", "--incore", "analytic"],
    "sweep_lc": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000:1100:100", "-p", "LC"],
    "sweep_product": ["analyze", FIVE, "-m", IVB, "-D", "M=10:20:10", "-D", "N=100:300:100", "--json"],
    "ecm_only": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-p", "ECM"],
    "ecm_only_json": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-p", "ECM", "--json"],
    "lc_only": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-p", "LC"],
    "roofline_only": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-p", "Roofline"],
    "verbose": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-v"],
    "dot_strict": ["analyze", str(KERNELS / "dot.c"), "-m", IVB, "-D", "N=100000", "--no-reassociation", "--json"],
    # the paper's code was compiled with icc, which reassociates reductions by default (-fp-model fast=1)
    "dot": ["analyze", str(KERNELS / "dot.c"), "-m", IVB, "-D", "N=100000", "--json", "--compiler", "icc"],
    "scalar": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "--scalar", "--json"],
    "cache_half": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "--cache-factor", "0.5", "--json"],
    "lc_var_M": ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "--lc-variable", "M", "--json"],
    "version": ["--version"],
    "no_command": [],
    "machine_no_sub": ["machine"],
}
for _u in UNITS:
    COMMANDS[f"unit {_u}"] = ["analyze", FIVE, "-m", IVB, "-D", "M=100", "-D", "N=1000", "-p", "ECM", "--unit", _u,
                              "--sweeps", "single"]  # data from memory: four different T_ECM
if (REFERENCE_MACHINES / f"{IVB}.yml").is_file():
    COMMANDS["kerncraft_file"] = ["analyze", LR, "-m", REFERENCE_MACHINES / f"{IVB}.yml", "-D", "M=130",
                                  "-D", "N=1015", "-p", "LC"]
# This module checks the analytic in-core model (the paper's numbers); the default, --incore auto,
# would use llvm-mca or OSACA where installed (tests/test_compiled.py).
for _args in COMMANDS.values():
    if _args and _args[0] == "analyze":
        _args += ["--incore", "analytic"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("cli")
    return run_cli_batch({k: (v, cwd) for k, v in COMMANDS.items()})


def ok(runs, key):
    p = runs[key]
    assert p.returncode == 0, (key, p.stderr)
    assert "Traceback" not in p.stderr
    return p.stdout


def _strict_json(text):
    def no_special(c):
        raise AssertionError(f"non-standard JSON constant {c}")
    return json.loads(text, parse_constant=no_special)


def js(runs, key):
    return _strict_json(ok(runs, key))


# --- README main job -----------------------------------------------------------------------------------

def test_readme_text(runs):
    out = ok(runs, "readme")
    assert "2D Layer-Condition" in out and "3D Layer-Condition" in out
    # Listing 5's transition points 216, 1725, 172463, 19, 55, 546 (nearest integers) are in the
    # JSON (transition_size); the text prints the largest N keeping each condition
    for n, exact in ((215, 215.58), (1724, 1724.63), (172463, 172463.16), (19, 19.30), (54, 54.58), (545, 545.79)):
        assert re.search(rf"N <= {n}   \(exact {exact:.2f}\)", out), n
    assert "{ 52.0 || 54.0 | 40.0 | 24.0 | " in out
    assert "{ 54.0 \\ 94.0 \\ 118.0 \\ " in out
    assert re.search(r"saturating at \d+ cores", out)
    assert "----- Roofline -----" in out and "bottleneck" in out
    # rows of the traffic table: 19+1, 11+1, 11+1 CL
    assert re.search(r"L1-L2\s*│\s*19\s*│\s*1\s*│\s*1280", out)
    assert re.search(r"L3-MEM\s*│\s*11\s*│\s*1\s*│\s*768", out)


def test_readme_text_2d_before_3d(runs):
    out = ok(runs, "readme")
    assert out.index("2D Layer-Condition") < out.index("N <= 215") < out.index("3D Layer-Condition") \
        < out.index("N <= 19")


NUMBER = (int, float)


def _num(x):
    return isinstance(x, NUMBER) and not isinstance(x, bool) and math.isfinite(x)


def test_json_document_structure(runs):
    doc = js(runs, "readme_json")
    for key in ("kernel", "machine", "defines", "layer_conditions", "traffic", "ecm", "roofline"):
        assert key in doc
    assert doc["defines"] == {"M": 130, "N": 1015}
    assert doc["machine"]["name"] == IVB
    assert doc["kernel"]["flops_per_it"] == 41

    assert [lv["level"] for lv in doc["layer_conditions"]] == ["L1", "L2", "L3"]
    for lv in doc["layer_conditions"]:
        assert isinstance(lv["selected"], int) and 0 <= lv["selected"] < len(lv["conditions"])
        for c in lv["conditions"]:
            assert isinstance(c["condition"], str)
            for k in ("hits_per_it", "misses_per_it"):
                assert isinstance(c[k], int) and not isinstance(c[k], bool)
            assert _num(c["evicts_per_it"])
            assert c["hits_per_it"] + c["misses_per_it"] == 27
            assert c["evicts_per_it"] == 1
    sel = [lv["conditions"][lv["selected"]] for lv in doc["layer_conditions"]]
    assert [(c["hits_per_it"], c["misses_per_it"]) for c in sel] == [(8, 19), (16, 11), (16, 11)]

    assert [t["level"] for t in doc["traffic"]] == ["L1", "L2", "L3"]
    for t in doc["traffic"]:
        assert _num(t["loads_cl_per_cl"]) and _num(t["stores_cl_per_cl"]) and _num(t["volume_B_per_cl"])
        assert t["volume_B_per_cl"] == (t["loads_cl_per_cl"] + t["stores_cl_per_cl"]) * 64
    assert [(t["loads_cl_per_cl"], t["stores_cl_per_cl"]) for t in doc["traffic"]] == [(19, 1), (11, 1), (11, 1)]

    e = doc["ecm"]
    assert "unit" not in e  # units are in the keys (_cy_per_cl)
    assert _num(e["T_OL_cy_per_cl"]) and _num(e["T_nOL_cy_per_cl"])
    assert [c["name"] for c in e["contributions"]] == ["L1L2", "L2L3", "L3MEM"]
    assert all(_num(c["time_cy_per_cl"]) for c in e["contributions"])
    assert set(e["T_ECM_cy_per_cl"]) == {"L1", "L2", "L3", "MEM"}
    assert all(_num(v) for v in e["T_ECM_cy_per_cl"].values())
    assert isinstance(e["saturation_cores"], int) and e["saturation_cores"] == 4
    # T_nOL + transfers: 54.0 + 40.0 + 24.0 + 47.80 = 165.80 cy/CL (kerncraft-tool-paper.txt Listing 4:
    # 54.0 + 40.0 + 24.0 + 48.5 = 166.5 with the bandwidth measured there)
    assert [c["time_cy_per_cl"] for c in e["contributions"]] == pytest.approx([40.0, 24.0, 47.80], abs=0.01)
    assert e["T_nOL_cy_per_cl"] == pytest.approx(54.0) and e["T_ECM_cy_per_cl"]["MEM"] == pytest.approx(165.80, abs=0.01)

    r = doc["roofline"]
    assert [lv["level"] for lv in r["levels"]] == ["L1", "L2", "L3", "MEM"]
    assert r["bottleneck"] in ("CPU", "L1", "L2", "L3", "MEM")
    assert _num(r["performance_flop_s"]) and r["performance_flop_s"] > 0
    # MEM: 41 FLOP/it * 8 it / 768 B = 0.427 FLOP/B (Listing 4: 0.43) at the one-core triad bandwidth
    # 15.21 GB/s = 6.497 GFLOP/s, below the CPU (18.92) and the L1-L3 roofs (21.72, 13.59, 14.65 GFLOP/s)
    # (Listing 4: 7.65 GFLOP/s at its copy bandwidth 17.91 GB/s)
    mem = r["levels"][-1]
    assert mem["intensity_flop_per_B"] == pytest.approx(41 * 8 / 768) and mem["bandwidth_B_s"] == 15.2125e9
    assert r["performance_flop_s"] == pytest.approx(6.497e9, rel=1e-4)
    assert [r["cpu_performance_flop_s"]] + [lv["performance_flop_s"] for lv in r["levels"][:3]] == pytest.approx(
        [18.923e9, 21.715e9, 13.594e9, 14.654e9], rel=1e-4)
    assert r["bottleneck"] == "MEM"  # Listing 4: MEM bottleneck
    for lv in r["levels"]:
        assert _num(lv["performance_flop_s"]) and _num(lv["bandwidth_B_s"])


SIZE_FIELDS = {"max_size_exact", "transition_size", "largest_block_size"}


def _walk(node, path=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _walk(v, f"{path}.{k}")
    elif isinstance(node, list):
        for n, v in enumerate(node):
            yield from _walk(v, f"{path}[{n}]")
    else:
        yield path, node


def test_json_values_are_plain(runs):
    """Numbers are plain finite ints/floats; the only non-number stand-in is "inf" for sizes
    without a transition (JSON has no infinity)."""
    doc = js(runs, "readme_json")
    seen_numbers = 0
    for path, v in _walk(doc):
        assert v is None or isinstance(v, (str, bool, int, float)), (path, type(v))
        if isinstance(v, float):
            assert math.isfinite(v), path
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            seen_numbers += 1
        if v == "inf":
            assert path.rsplit(".", 1)[-1] in SIZE_FIELDS, path
    assert seen_numbers > 100


def test_json_transition_fields(runs):
    doc = js(runs, "readme_json")
    l1 = doc["layer_conditions"][0]
    by_dist = {c["reuse_distance_it"]: c for c in l1["conditions"]}
    c = by_dist["N"]
    assert c["transition_size"] == 216
    assert c["max_size_exact"] == pytest.approx(215.58, abs=0.01)
    assert c["largest_block_size"] == 215
    assert by_dist["N**2"]["transition_size"] == 19


def test_kerncraft_style_defines_same_result(runs):
    a, b = js(runs, "readme_json"), js(runs, "kerncraft_D")
    assert a == b


# --- sweeps ---------------------------------------------------------------------------------------------

def jsonl(runs, key):
    """A sweep's ``--json`` output: JSON Lines, one complete document per point."""
    return [_strict_json(line) for line in ok(runs, key).splitlines()]


def test_sweep_json_list(runs):
    docs = jsonl(runs, "sweep_json")
    assert isinstance(docs, list) and len(docs) == 3
    assert [d["defines"] for d in docs] == [{"M": 100, "N": n} for n in (100, 200, 300)]
    for d in docs:
        assert set(d["ecm"]["T_ECM_cy_per_cl"]) == {"L1", "L2", "L3", "MEM"}


def test_sweep_cartesian_product_json(runs):
    docs = jsonl(runs, "sweep_product")
    assert sorted((d["defines"]["M"], d["defines"]["N"]) for d in docs) == \
        [(m, n) for m in (10, 20) for n in (100, 200, 300)]


ROW = re.compile(r"^│\s*(\d+)\s*│\s*(\d+)\s*│")


def test_sweep_text_one_row_per_size(runs):
    out = ok(runs, "sweep_text")
    rows = [ROW.match(ln).groups() for ln in out.splitlines() if ROW.match(ln)]
    assert rows == [("100", "100"), ("100", "200"), ("100", "300")]
    assert "ECM MEM" in out


def test_sweep_table_borders_stay_aligned_as_the_ecm_notation_widens(runs):
    """A streamed sweep fixes its column widths at the first row; the ECM notation (the last
    column, open on the right) widens along this sweep ({ .. | 0.0 | 0.0 } at N=10, { .. | 16.0 |
    4.3 } at N=36010), and every border stays where the header put it."""
    lines = [ln for ln in ok(runs, "sweep_widening").splitlines() if ln[:1] in "┏┃┡│└"]
    borders = [[i for i, ch in enumerate(ln) if ch in "┏┳┃┡╇│└┴"] for ln in lines]
    notations = [ln.rsplit("│", 1)[1].strip() for ln in lines if ln.startswith("│")]
    assert len(notations) == 4 and len({len(n) for n in notations}) > 1
    assert all(b == borders[0] for b in borders)


def test_sweep_lc_state_changes(runs):
    """2D layer condition in L1 holds for N <= 1024 (32N-16 <= 32 KiB) and breaks above; the L3 holds the
    whole data set (1.6 MB) across repeated sweeps."""
    out = ok(runs, "sweep_lc")
    rows = {}
    for ln in out.splitlines():
        m = re.match(r"^│\s*100\s*│\s*(\d+)\s*│\s*(.*?)\s*│$", ln)
        if m:
            rows[int(m.group(1))] = m.group(2).split()
    assert rows == {1000: ["2D", "2D", "all"], 1100: ["1D", "2D", "all"]}


# --- model selection -----------------------------------------------------------------------------------

def test_ecm_only(runs):
    out = ok(runs, "ecm_only")
    assert "----- ECM -----" in out
    assert "----- LC -----" not in out and "Layer-Condition" not in out
    assert "----- Roofline -----" not in out
    doc = js(runs, "ecm_only_json")
    assert "ecm" in doc and "roofline" not in doc


def test_lc_only(runs):
    out = ok(runs, "lc_only")
    assert "----- LC -----" in out and "2D Layer-Condition" in out
    assert "----- ECM -----" not in out and "----- Roofline -----" not in out
    assert "cy/CL" not in out


def test_roofline_only(runs):
    out = ok(runs, "roofline_only")
    assert "----- Roofline -----" in out and "due to" in out
    assert "----- ECM -----" not in out and "----- LC -----" not in out


@pytest.mark.parametrize("unit", UNITS)
def test_units(runs, unit):
    out = ok(runs, f"unit {unit}")
    assert f"unit {unit}" in out
    # the prediction table: four values with the unit (SI prefix allowed for rates)
    vals = re.findall(rf"([\d.]+) ([kMGT]?){re.escape(unit.split('/')[0])}/{re.escape(unit.split('/')[1])}", out)
    assert len(vals) >= 4, out
    scale = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
    got = [float(v) * scale[p] for v, p in vals[:4]]
    # 2D 5-pt, IVB, N=1000: T_ECM = 8, 14, 20, 32.19 cy/CL; 8 it/CL, 4 FLOP/it, 3 GHz
    t = [8.0, 14.0, 20.0, 32.19]
    expect = {"cy/CL": t, "cy/it": [x / 8 for x in t], "it/s": [3e9 * 8 / x for x in t],
              "LUP/s": [3e9 * 8 / x for x in t], "FLOP/s": [4 * 3e9 * 8 / x for x in t]}[unit]
    assert got == pytest.approx(expect, rel=5e-3)  # printed with 2 decimals


def test_json_performance_units(runs):
    doc = js(runs, "ecm_only_json")
    perf = doc["ecm"]["performance"]
    assert set(perf) == {"cy_per_cl", "cy_per_it", "it_s", "lup_s", "flop_s"}
    # 2D 5-pt, IVB, M=100, N=1000: T_ECM,Mem = 20 cy/CL; 8 it/CL -> 2.5 cy/it; 3 GHz / 2.5 cy = 1.2 G it/s
    # (one lattice update per iteration), 4 FLOP/it -> 4.8 GFLOP/s
    assert doc["ecm"]["T_ECM_cy_per_cl"]["MEM"] == pytest.approx(20.0)
    assert perf == pytest.approx({"cy_per_cl": 20.0, "cy_per_it": 2.5, "it_s": 1.2e9, "lup_s": 1.2e9, "flop_s": 4.8e9})


def test_verbose_kernel_summary(runs):
    out = ok(runs, "verbose")
    assert "loops: j = 1 .. M - 1 (exclusive) step 1; i = 1 .. N - 1 (exclusive) step 1" in out
    assert "array a: double[M][N] (8 B/element)" in out
    assert "per iteration: 4 loads, 1 stores" in out
    assert "FMA candidates" in out
    # verbose also lists every layer-condition state
    assert "C_req = 32*N - 16 B" in out
    quiet = ok(runs, "ecm_only")
    assert "per iteration:" not in quiet


@pytest.mark.skipif("kerncraft_file" not in COMMANDS, reason="reference machine files not available")
def test_kerncraft_machine_file(runs):
    out = ok(runs, "kerncraft_file")
    for n in (215, 1724, 172463, 19, 54, 545):  # the largest N keeping each condition
        assert re.search(rf"N <= {n}\b", out), n


def test_cores_divide_shared_l3(runs):
    one, four = js(runs, "readme_json"), js(runs, "cores4_json")
    size1 = {lv["level"]: lv["cache_size_B"] for lv in one["layer_conditions"]}
    size4 = {lv["level"]: lv["cache_size_B"] for lv in four["layer_conditions"]}
    assert size1 == {"L1": 32768, "L2": 262144, "L3": 26214400}
    assert size4 == {"L1": 32768, "L2": 262144, "L3": 26214400 / 4}
    assert four["cores"] == 4 and one["cores"] == 1
    # the 3D layer condition in L3 moves with the effective size (88*N**2 <= C)
    t1 = {c["reuse_distance_it"]: c["transition_size"] for c in one["layer_conditions"][2]["conditions"]}
    t4 = {c["reuse_distance_it"]: c["transition_size"] for c in four["layer_conditions"][2]["conditions"]}
    assert t1["N**2"] == 546 and t4["N**2"] == round(math.sqrt(26214400 / 4 / 88))
    # multicore: P(n) = min(n P1, P_sat) -> max(T_ECM_MEM / n, T_L3MEM)
    e = four["ecm"]
    # max(165.80 / 4, 47.80) = max(41.45, 47.80): the memory interface is saturated at 4 cores
    assert e["multicore_model"] == "saturation" and e["data_location"] == "MEM"
    assert e["multicore_cy_per_cl"] == pytest.approx(47.80, abs=0.01)
    assert "4 cores, data in MEM" in ok(runs, "cores4_text")


def test_no_reassociation_makes_dot_latency_bound(runs):
    free, strict = js(runs, "dot"), js(runs, "dot_strict")
    assert free["kernel"]["recurrences"][0]["reassociable"] is True
    assert free["incore"]["dependency_cy_per_it"] == 3.0 / 4  # one vector accumulator: ADD chain per 4 lanes
    assert strict["incore"]["dependency_cy_per_it"] == 3.0  # ADD latency on IVB
    assert strict["incore"]["simd_lanes"] == 1
    assert strict["ecm"]["T_OL_cy_per_cl"] == pytest.approx(3.0 * 8)
    assert strict["ecm"]["T_OL_cy_per_cl"] > free["ecm"]["T_OL_cy_per_cl"]


def test_scalar_option(runs):
    assert js(runs, "scalar")["incore"]["simd_lanes"] == 1
    assert js(runs, "ecm_only_json")["incore"]["simd_lanes"] == 4


def test_cache_factor(runs):
    doc = js(runs, "cache_half")
    assert [lv["cache_size_B"] for lv in doc["layer_conditions"]] == [16384, 131072, 13107200]
    l1 = {c["reuse_distance_it"]: c for c in doc["layer_conditions"][0]["conditions"]}
    assert l1["N - 1"]["transition_size"] == 513  # 32*N - 16 <= 16384


def test_lc_variable(runs):
    doc = js(runs, "lc_var_M")
    assert all(lv["variable"] == "M" for lv in doc["layer_conditions"])
    assert js(runs, "ecm_only_json")["layer_conditions"][0]["variable"] == "N"


def test_version(runs):
    assert re.fullmatch(r"loopmodel \d+\.\d+\.\d+\n", ok(runs, "version"))


def test_no_command_prints_help_and_fails(runs):
    p = runs["no_command"]
    assert p.returncode == 2
    assert "usage: loopmodel" in p.stdout


def test_machine_without_subcommand_fails(runs):
    p = runs["machine_no_sub"]
    assert "usage: loopmodel machine" in p.stdout
    assert p.returncode == 2


def test_kernel_with_define_default_needs_no_D(tmp_path):
    from helpers import run_cli

    k = tmp_path / "copy.c"
    k.write_text("#define N 4096\ndouble a[N], b[N];\nfor (int i = 0; i < N; i++)\n  b[i] = a[i];\n")
    p = run_cli("analyze", k, "-m", IVB, "--json")
    assert p.returncode == 0, p.stderr
    doc = _strict_json(p.stdout)
    assert doc["defines"] == {"N": 4096}
    assert doc["kernel"]["flops_per_it"] == 0
    assert k.read_text().startswith("#define N 4096")


def test_a_cache_folder_others_may_write_to_is_not_used_and_the_note_says_so(tmp_path, monkeypatch):
    import os

    from helpers import ROOT, run_cli

    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o777)
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(shared))
    p = run_cli("analyze", KERNELS / "triad.c", "-m", IVB, "-D", "N=100000", "--incore", "analytic", cwd=ROOT)
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stderr and "ECM" in p.stdout
    note = (f"loopmodel: note: the cache folder {shared} is writable by others (mode 0777): results are not "
            f"cached; make it private (chmod 700 {shared}) or set LOOPMODEL_CACHE_DIR to a folder of your own\n")
    assert p.stderr.endswith(note) and p.stderr.count("loopmodel: note: the cache folder") == 1
    assert list(shared.iterdir()) == [] and shared.stat().st_mode & 0o7777 == 0o777
