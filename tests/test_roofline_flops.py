"""The Roofline CPU roof counts FLOPs from the kernel IR, whichever in-core analysis ran."""
from __future__ import annotations

import json
import shutil

import pytest

from helpers import IVB, KERNELS, run_cli


@pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("llvm-mca") is None, reason="gcc and llvm-mca needed")
def test_cpu_roof_with_compiled_incore_equals_the_analytic_one():
    """2D 5-pt on IVB: the compiled in-core result carries no operation counts of its own, and the
    CPU roof printed "n/a"; the applicable peak now comes from the kernel IR's FLOPs (after FMA
    fusion, one helper with the analytic model), the same as on the analytic path."""
    docs = {}
    for incore in ("analytic", "llvm-mca"):
        p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "N=2000", "-D", "M=2000", "-p", "Roofline",
                    "--incore", incore, "--json", "--no-cache")
        assert p.returncode == 0, p.stderr
        docs[incore] = json.loads(p.stdout)["roofline"]
    assert docs["llvm-mca"]["cpu_performance_flop_s"] is not None
    assert docs["llvm-mca"]["cpu_performance_flop_s"] == docs["analytic"]["cpu_performance_flop_s"]
