"""The Kerncraft comparison harness (benchmarks/peer_suite.py, benchmarks/compare_peer.py).

Unit tests of the judging, table and summary logic need no peer. One test runs the
mapping of real peer test cases through loopmodel when the unpacked Kerncraft source
is named by the environment variable LOOPMODEL_PEER_SRC (skipped otherwise).
"""
from __future__ import annotations

import json
import math
import os
import stat
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

import compare_peer as cp  # noqa: E402
import peer_suite as ps  # noqa: E402

PEER_SRC = os.environ.get("LOOPMODEL_PEER_SRC")


def _doc(**over):
    """A minimal loopmodel JSON point with ECM contributions and layer conditions."""
    doc = {"defines": {"N": 1000, "M": 50},
           "ecm": {"contributions": [{"name": "L1L2", "time_cy_per_cl": 6.5, "busy_cy_per_cl": 6.0},
                                     {"name": "L2L3", "time_cy_per_cl": 6.0, "busy_cy_per_cl": 6.0},
                                     {"name": "L3MEM", "time_cy_per_cl": 13.1, "busy_cy_per_cl": 13.1}]},
           "layer_conditions": [{"level": "L1", "conditions": [
               {"dimension": 1, "hits_per_it": 2, "misses_per_it": 6, "evicts_per_it": 1, "max_size_exact": "inf"},
               {"dimension": 2, "hits_per_it": 4, "misses_per_it": 4, "evicts_per_it": 1, "max_size_exact": 683.3333333}]}]}
    doc.update(over)
    return doc


def _out(doc=None, rc=0, error=""):
    return ps.Outcome(rc, [doc] if doc else [], doc, error)


# ---------------------------------------------------------------- peer_suite: judging

@pytest.mark.parametrize("expected, actual, tol, holds", [
    (6, 6.083, ("rel", 0.05), True),        # within 5 %
    (10, 7, ("rel", 0.2), False),           # -30 % against 20 %
    (6, 12, ("rel", 0.05), False),          # a whole multiple off fails (the peer's % 1.0 would pass it)
    (0.0, 0.0004, ("places", 3), True),     # assertAlmostEqual(places=3)
    (0.0, 13.06, ("places", 2), False),
    (math.inf, math.inf, ("rel", 0.05), True),
    ("L2", "L2", ("eq",), True),
    ("8/0/0", "2/6/1", ("eq",), False),
    (None, None, ("rel", 1e-6), True),      # no size satisfies the condition, both agree
    (None, 6.7, ("rel", 1e-6), False),
])
def test_judge_uses_the_peer_tolerances(expected, actual, tol, holds):
    assert ps.judge(expected, actual, tol)[0] is holds


def test_judge_reports_the_relative_difference():
    assert ps.judge(10, 7, ("rel", 0.2)) == (False, "-30.0 %")


def test_n_max_is_the_largest_real_size():
    assert ps.n_max("3*N", 2050, {}) == pytest.approx(2050 / 3, rel=1e-9)
    assert ps.n_max("2*N**2 - N", 2048, {}) == pytest.approx((1 + math.sqrt(1 + 8 * 2048)) / 4, rel=1e-9)
    assert ps.n_max("M*N**2", 2048, {"M": 100}) == pytest.approx(math.sqrt(20.48), rel=1e-9)
    assert ps.n_max("2*M*N + N", 2048, {"M": 1224}) is None   # N < 1
    assert ps.n_max(None, 0, {}) == math.inf                    # the peer's "True"


def test_ecm_term_maps_peer_levels_to_contribution_busy_cycles():
    o = _out(_doc())
    assert [ps.ecm_term(lv)(o) for lv in ("L2", "L3", "MEM")] == [6.0, 6.0, 13.1]
    with pytest.raises(KeyError):
        ps.ecm_term("L4")(o)


def test_lc_condition_by_dimension_and_missing_whole_data_set():
    o = _out(_doc())
    assert ps._hme(ps.lc_condition("L1", 2))(o) == "4/4/1"
    assert ps._max_size(ps.lc_condition("L1", 1))(o) == math.inf
    with pytest.raises(ps.Missing):
        ps.lc_condition("L1", "all")(o)


def test_evaluate_gives_every_result_kind():
    case = ps.Case("t", "k.c", checks=(
        ps.Check("T_L1L2", 6, ("rel", 0.05), ps.ecm_term("L2")),
        ps.Check("T_L3Mem", 0.0, ("places", 2), ps.ecm_term("MEM")),
        ps.Check("whole", "8/0/0", ("eq",), ps._hme(ps.lc_condition("L1", "all"))),
        ps.Check("bench", "x", why="no such model"),
        ps.Check("json key", 1, ("eq",), ps.field("nope"))))
    results = [r[-1] for r in ps.evaluate(case, _out(_doc()))]
    assert results[0] == "holds"
    assert results[1] == "fails (diff +13.1)"
    assert results[2].startswith("fails (no whole-data-set condition")
    assert results[3] == "not mapped: no such model"
    assert results[4].startswith("error: reading loopmodel's JSON: KeyError")
    errors = ps.evaluate(case, _out(None, rc=2, error="k.c:10:1: statements outside the loop nest"))
    assert [r[-1] for r in errors][:2] == ["error: k.c:10:1: statements outside the loop nest"] * 2


def test_select_point_picks_the_sweep_point_or_says_which_is_missing():
    docs = [_doc(defines={"N": n, "M": 50}) for n in (1000, 10000)]
    out = ps.Outcome(0, docs, docs[0])
    assert ps.select_point(out, (("N", 10000), ("M", 50))).doc is docs[1]
    missing = ps.select_point(out, (("N", 4096), ("M", 50)))
    assert missing.doc is None and missing.error == "no sweep point with N=4096, M=50 in loopmodel's output"


def test_summary_counts_per_peer_test_file():
    rows = [("test_copy_ECMData", "q", 1, 1, "holds"), ("test_copy_ECMData", "q", 1, 2, "fails (+100.0 %)"),
            ("test_2d5pt_ECM", "q", 1, "", "error: x"), ("test_2d5pt_Benchmark", "q", 1, "", "not mapped: y"),
            ("test_3d_7pt", "q", 1, 1, "holds"), ("test_space_log2", "q", [1], [1], "holds")]
    assert ps.summary_lines(rows) == [
        "test_kerncraft.py -D ranges: 1 of 1 mapped expectations hold (100 %); 0 fail, 0 error, 0 not mapped",
        "test_kerncraft.py models: 1 of 3 mapped expectations hold (33 %); 1 fail, 1 error, 1 not mapped",
        "test_layer_condition.py: 1 of 1 mapped expectations hold (100 %); 0 fail, 0 error, 0 not mapped",
        "all: 3 of 5 mapped expectations hold (60 %); 1 fail, 1 error, 1 not mapped",
        "peer tests whose every mapped expectation holds: 2 of 4"]


def test_format_table_aligns_and_renders_values():
    text = ps.format_table(("a", "b"), [("x", 4.72e9), ("long name", list(range(23, 43)))])
    lines = text.splitlines()
    assert lines[0] == "a         | b"
    assert lines[2] == "x         | 4.72e+09"
    assert lines[3] == "long name | [23, 24, ..., 42] (20 values)"


def test_strip_swap_removes_only_swap_statements(tmp_path):
    src, dst = tmp_path / "src", tmp_path / "dst"
    src.mkdir(), dst.mkdir()
    (src / "k.c").write_text("double a[N], b[N];\nfor (int i=0; i<N; ++i)\n    a[i] = b[i];\n\nswap(a, b);\n")
    (src / "m.yml").write_text("not a kernel\n")
    ps.stripped_copies(str(src), str(dst))
    assert (dst / "k.c").read_text() == "double a[N], b[N];\nfor (int i=0; i<N; ++i)\n    a[i] = b[i];\n\n"
    assert not (dst / "m.yml").exists()


def test_bad_source_path_exits_2(tmp_path, capsys):
    assert ps.main(["--kerncraft-src", str(tmp_path)]) == 2
    assert "no Kerncraft test files" in capsys.readouterr().err


# ---------------------------------------------------------------- compare_peer

JOB = cp.Job("data", "triad", "SandyBridgeEP_E5-2680", "mem", (("N", 20000000),))


def test_compare_flags_beyond_tolerance_and_honours_documented(monkeypatch):
    out = _out(_doc())
    ok = cp.compare(JOB, "T_L1L2", 6.1, ps.ecm_term("L2"), out)
    assert ok == ("a", "SandyBridgeEP_E5-2680", "triad", "mem", "T_L1L2", 6.1, 6.0, "-1.6 %", "ok")
    assert cp.compare(JOB, "T_L3MEM", 12.0, ps.ecm_term("MEM"), out)[-2:] == ("+9.2 %", "FLAG")
    assert cp.compare(JOB, "T_L2L3", 0.0, ps.ecm_term("L3"), out)[-2:] == ("n/a (peer 0)", "FLAG")
    monkeypatch.setattr(cp, "DOCUMENTED", {("tri*", "*", "mem", "T_L3MEM"): "reason"})
    assert cp.compare(JOB, "T_L3MEM", 12.0, ps.ecm_term("MEM"), out)[-1] == "documented (see below)"
    assert cp.documented(JOB, "T_L3MEM") == "reason"
    assert cp.documented(cp.Job("data", "triad", "X", "L2/L3", ()), "T_L3MEM") is None  # other size
    assert cp.compare(JOB, "T_L1L2", 6.0, ps.ecm_term("L2"), _out(None, 2, "bad"))[-1] == "loopmodel error: bad"


def test_rows_follow_the_peer_levels_and_summary_counts():
    out = _out(_doc(incore={"T_OL_cy_per_cl": 9.0, "T_nOL_cy_per_cl": 6.0}))
    rows = cp.rows_for(JOB, {"terms": [["L2", 6.0], ["L3", 6.0], ["MEM", 12.0]]}, out)
    assert [r[4] for r in rows] == ["T_L1L2", "T_L2L3", "T_L3MEM"]
    inc = cp.Job("incore", "triad", "SandyBridgeEP_E5-2680", "mem", JOB.defines)
    rows += cp.rows_for(inc, {"T_comp": 10.0, "T_RegL1": 8.0}, out)
    rows += cp.rows_for(JOB, {"error": "ValueError: x"}, out)
    assert rows[-1][-1] == "peer error: ValueError: x"
    assert cp.summary_lines(rows) == [
        "(a) LC data terms, 2 %: 2 of 3 compared within tolerance (67 %); 1 flagged, 0 documented choices left out, "
        "1 peer errors, 0 loopmodel errors",
        "(b) in-core T_OL/T_nOL, 15 %: 1 of 2 compared within tolerance (50 %); 1 flagged, 0 documented choices "
        "left out, 0 peer errors, 0 loopmodel errors"]


def test_jobs_leave_aarch64_out_of_the_incore_part():
    jobs = cp.jobs_for(["A64FX_qpace4", "SkylakeSP_Gold-6148"], ["triad"])
    assert [(j.kind, j.machine, j.size) for j in jobs] == [
        ("data", "A64FX_qpace4", "mem"), ("data", "A64FX_qpace4", "L2/L3"),
        ("data", "SkylakeSP_Gold-6148", "mem"), ("data", "SkylakeSP_Gold-6148", "L2/L3"),
        ("incore", "SkylakeSP_Gold-6148", "mem")]


def _fake_kerncraft(tmp_path):
    """A stand-in for the peer: writes a result JSON and counts its runs."""
    script = tmp_path / "kerncraft"
    script.write_text(f"""#!{sys.executable}
import json, sys
a = sys.argv
open({str(tmp_path / 'runs')!r}, 'a').write(a[a.index('-p') + 1] + ' ' + a[-1] + '\\n')
res = {{"cycles": [["L2", 3.0], ["MEM", "4.5"]], "T_comp": 10.0, "T_RegL1": 8.0}}
json.dump({{"key": res}}, open(a[a.index('--json') + 1], 'w'))
""")
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    return script


def test_peer_results_are_cached_and_kernel_is_copied(tmp_path):
    machines = tmp_path / "machines"
    machines.mkdir()
    (machines / "SandyBridgeEP_E5-2680.yml").write_text("machine facts\n")
    args = type("A", (), dict(cache=str(tmp_path / "cache.json"), refresh_peer=False, jobs=2,
                             kerncraft=str(_fake_kerncraft(tmp_path)), machines_dir=str(machines)))
    jobs = cp.jobs_for(["SandyBridgeEP_E5-2680"], ["triad"])
    first = cp.fetch_peer(jobs, args, cp.KERNELS_DIR)
    assert first[jobs[0]] == {"terms": [["L2", 3.0], ["MEM", 4.5]]}
    assert first[jobs[2]] == {"T_comp": 10.0, "T_RegL1": 8.0}
    runs = (tmp_path / "runs").read_text().splitlines()
    assert len(runs) == 3 and all(not r.split()[1].startswith(str(cp.KERNELS_DIR)) for r in runs)
    assert cp.fetch_peer(jobs, args, cp.KERNELS_DIR) == first       # from the cache: no new run
    assert len((tmp_path / "runs").read_text().splitlines()) == 3
    (machines / "SandyBridgeEP_E5-2680.yml").write_text("changed facts\n")  # new content, new key
    cp.fetch_peer(jobs, args, cp.KERNELS_DIR)
    assert len((tmp_path / "runs").read_text().splitlines()) == 6
    assert len(json.loads((tmp_path / "cache.json").read_text())) == 6


# ---------------------------------------------------------------- with the peer's source

@pytest.mark.skipif(not PEER_SRC, reason="LOOPMODEL_PEER_SRC (unpacked Kerncraft 0.8.18 source) not set")
def test_peer_cases_map_through_loopmodel():
    test_files = os.path.join(PEER_SRC, "tests", "test_files")
    cases = [c for c in ps.all_cases() if c.name in ("test_copy_ECMData_LC", "test_constantdim")]
    rows = ps.run_cases(cases, test_files, test_files)
    by = {(r[0], r[1]): r for r in rows}
    assert by["test_copy_ECMData_LC", "T_L1L2 [cy/CL] (peer 'L2')"][3:] == (3.0, "holds")
    assert by["test_copy_ECMData_LC", "T_L2L3 [cy/CL] (peer 'L3')"][3:] == (6.0, "holds")
    assert by["test_constantdim", "L1 [3*N <= 2050] hits/misses/evicts per CL"][3:] == ("4/4/1", "holds")
    assert by["test_constantdim", "L2 [2*M*N + N <= 16384] largest N (at M=1224)"][-1] == "holds"
    assert not [r for r in rows if r[-1].startswith("error")]
