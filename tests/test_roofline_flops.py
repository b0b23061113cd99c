"""The Roofline CPU roof counts FLOPs from the kernel IR, whichever in-core analysis ran."""
from __future__ import annotations

import json
import shutil

import pytest

from helpers import IVB, KERNELS, run_cli


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("llvm-mca") is None, reason="gcc and llvm-mca needed")
def test_cpu_roof_is_the_t_ol_of_whichever_incore_analysis_ran():
    """2D 5-pt on IVB: the compiled in-core result carries no operation counts of its own, and the
    CPU roof printed "n/a"; the CPU roof is the T_OL of the in-core model ECM uses (compiled or
    analytic), in FLOP/s from the kernel IR's FLOPs."""
    for incore in ("analytic", "llvm-mca"):
        p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "N=2000", "-D", "M=2000", "-p", "Roofline",
                    "-p", "ECM", "--incore", incore, "--json", "--no-cache")
        assert p.returncode == 0, p.stderr
        doc = json.loads(p.stdout)
        r = doc["roofline"]
        assert r["cpu_time_cy_per_cl"] == pytest.approx(doc["ecm"]["T_OL_cy_per_cl"])
        assert r["cpu_roof_source"] == f"T_OL of the {incore} in-core model"
        assert r["cpu_performance_flop_s"] == pytest.approx(
            doc["kernel"]["flops_per_it"] * doc["iterations_per_cl"] * doc["machine"]["clock_Hz"] / r["cpu_time_cy_per_cl"])


def test_a_kernel_without_flops_has_no_flop_s_but_it_s(tmp_path):
    """A copy loop: the Roofline works in iterations; the *_flop_s keys are null (not it/s under a
    FLOP/s name) and performance_it_s = it/CL x clock / time."""
    k = tmp_path / "copy.c"
    k.write_text("#define N 100000\ndouble a[N], b[N];\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i];\n")
    p = run_cli("analyze", k, "-m", "SkylakeSP_Gold-6148", "-p", "Roofline", "-i", "analytic", "--json", "--no-cache")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    r, it, clock = doc["roofline"], doc["iterations_per_cl"], doc["machine"]["clock_Hz"]
    assert r["performance_flop_s"] is None and all(lv["performance_flop_s"] is None for lv in r["levels"])
    assert r["cpu_performance_flop_s"] is None
    assert r["performance_it_s"] == pytest.approx(it * clock / r["time_cy_per_cl"])
    assert r["levels"][0]["performance_it_s"] == pytest.approx(it * clock / r["levels"][0]["time_cy_per_cl"])
