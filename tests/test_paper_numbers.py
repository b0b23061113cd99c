"""Paper conformance targets named in issue #2 (kerncraft-tool-paper Listing 5, §1.2.2; slides)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from loopmodel.analysis import Analyzer, Options
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.predictors.layer_conditions import transition_size

ROOT = Path(__file__).resolve().parents[1]
K = ROOT / "examples" / "kernels"


def run(kernel, machine, defines, **opt):
    k, _ = parse_kernel_file(str(K / kernel))
    return Analyzer(k, load_machine(machine), Options(**opt)).run(defines)


def _transitions(res, dim):
    out = {}
    for lv in res.lc_levels:
        states = [s for s in lv.states if s.dimension == dim]
        best = max(states, key=lambda s: s.distance.asymptotic_key())
        out[lv.level] = transition_size(best.max_size)
    return out


def test_long_range_transitions_listing5():
    res = run("3d-long-range.c", "IvyBridgeEP_E5-2690v2", {"M": 130, "N": 1015})
    assert _transitions(res, 2) == {"L1": 216, "L2": 1725, "L3": 172463}
    assert _transitions(res, 3) == {"L1": 19, "L2": 55, "L3": 546}


def test_3d7pt_ecm_paper_1_2_2():
    res = run("3d-7pt.c", "IvyBridgeEP_E5-2690v2", {"M": 800, "N": 800}, memory_bandwidth=63.4e9)
    assert [lv.states[lv.selected].dimension for lv in res.lc_levels] == [1, 2, 3]
    c = {x.name: x.cycles for x in res.ecm.contributions}
    assert c["L1L2"] == pytest.approx(14.0)
    assert c["L2L3"] == pytest.approx(10.0)
    assert round(c["L3MEM"], 1) == 9.1


def test_2d5pt_snb_slides():
    res = run("2d-5pt.c", "SandyBridgeEP_E5-2680", {"M": 10000, "N": 10000})
    c = {x.name: x.cycles for x in res.ecm.contributions}
    assert c["L1L2"] == pytest.approx(10.0)
    assert c["L2L3"] == pytest.approx(10.0)
    assert 12.9 < c["L3MEM"] < 13.2


def test_daxpy_victim_l3_bytes_per_iteration():
    res = run("daxpy.c", "SkylakeSP_Gold-6148", {"N": 10 ** 8})
    it = res.traffic.iterations_per_unit
    assert [lt.bytes / it for lt in res.traffic.levels] == [24, 32, 24]


def test_cli_json_and_text():
    cmd = [sys.executable, "-m", "loopmodel.cli", "analyze", str(K / "3d-long-range.c"),
           "-m", "IvyBridgeEP_E5-2690v2", "-D", "M", "130", "-D", "N=1015"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    assert "N <= 216" in out and "saturating at" in out and "{ " in out
    doc = json.loads(subprocess.run(cmd + ["--json"], capture_output=True, text=True, check=True).stdout)
    assert set(doc["ecm"]["T_ECM"]) == {"L1", "L2", "L3", "MEM"}
    assert doc["ecm"]["unit"] == "cy/CL"
    for key in ("kernel", "machine", "defines", "layer_conditions", "traffic", "roofline"):
        assert key in doc


def test_bad_kernel_one_line(tmp_path):
    f = tmp_path / "bad.c"
    f.write_text("double a[N];\nfor (int i=0; i<N; i++)\n  if (i) a[i] = 1.0;\n")
    p = subprocess.run([sys.executable, "-m", "loopmodel.cli", "analyze", str(f), "-m", "IvyBridgeEP_E5-2690v2",
                        "-D", "N=10"], capture_output=True, text=True)
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and "bad.c:3" in p.stderr and "Traceback" not in p.stderr
