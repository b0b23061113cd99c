"""The analytic in-core model follows the SIMD form gcc gave the inner loop (its optimisation report,
:mod:`loopmodel.workflows.executed_simd`).

* The record: a loop gcc did not vectorise is scalar code; only an outer loop vectorised leaves
  the assumption; the reported vector size stands where it differs from the flags'; a float
  reduction kept in source order in a vectorised loop is gcc's fold-left form, an integer one is not.
* The model: the fold-left form keeps the reduction's chain per iteration (the ADD latency) and
  counts the loads at the SIMD width, so T_nOL is the vector loads' (a lanes-th of scalar code's)
  and the dependency equals scalar code's.
* With gcc and no compiled analyzer: the analytic fallback of ``--incore auto`` on a float dot
  product follows the report (vector loads, the chain per iteration) and says so; ``--incore
  analytic`` (no compiler) keeps the flags' assumption (scalar code).
"""
from __future__ import annotations

import json
import shutil

import pytest

from helpers import run_cli
from loopmodel.compiled.loop_report import CompiledLoop, CompiledNest
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.incore import analytic_incore
from loopmodel.workflows.executed_simd import executed_simd

MACHINE = "SkylakeSP_Gold-6148"
DOT = "double a[N];\ndouble b[N];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s += a[i] * b[i];\n"
LONG_SUM = "long a[N];\nlong s;\nfor (int i = 0; i < N; ++i)\n  s += a[i];\n"


def _nest(*vector_bytes) -> CompiledNest:
    return CompiledNest("gcc", tuple(CompiledLoop(d, "ji"[d], vb) for d, vb in enumerate(vector_bytes)))


def _kernel(text: str):
    return parse_kernel(text, "k.c")[0]


def test_a_loop_gcc_did_not_vectorise_is_scalar_code():
    got = executed_simd(_nest(None), _kernel(DOT), 32, False)
    assert got.vector_bytes is None and not got.fold_left and "did not vectorise" in got.note


def test_an_outer_loop_vectorised_leaves_the_assumption():
    assert executed_simd(_nest(32, None), _kernel(DOT), 32, False) is None
    assert executed_simd(None, _kernel(DOT), 32, False) is None


def test_the_reported_size_stands_and_is_noted_where_it_differs():
    same = executed_simd(_nest(32), _kernel(DOT), 32, True)
    assert same.vector_bytes == 32 and same.note == "" and not same.fold_left
    wider = executed_simd(_nest(64), _kernel(DOT), 32, True)
    assert wider.vector_bytes == 64 and "SIMD width 64 B" in wider.note


def test_a_float_reduction_in_source_order_is_fold_left_an_integer_one_is_not():
    assert executed_simd(_nest(32), _kernel(DOT), 32, False).fold_left
    assert not executed_simd(_nest(32), _kernel(DOT), 32, True).fold_left  # partial sums allowed
    assert not executed_simd(_nest(32), _kernel(LONG_SUM), 32, False).fold_left


def test_fold_left_keeps_the_chain_and_counts_vector_loads():
    machine, kernel = load_machine(MACHINE), _kernel(DOT)
    scalar = analytic_incore(kernel, machine, 8, True, False)  # the dependency forces scalar code
    folded = analytic_incore(kernel, machine, 8, True, False, fold_left=True)
    assert scalar.lanes == 1 and folded.lanes == int(machine.in_core.simd_width // 8)
    assert folded.dependency == pytest.approx(scalar.dependency) and folded.dependency > 0
    assert folded.components["LD"] == pytest.approx(scalar.components["LD"] / folded.lanes)
    assert folded.T_OL == pytest.approx(scalar.T_OL)  # the chain bounds both


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_the_analytic_fallback_follows_gccs_report(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tmp_path / "no-such-llvm-mca"))
    src = tmp_path / "dot.c"
    src.write_text(DOT)
    docs = {}
    for incore in ("auto", "analytic"):
        p = run_cli("analyze", src, "-m", MACHINE, "-D", "N=1000", "--incore", incore, "--json", "--no-cache")
        assert p.returncode == 0, p.stderr
        docs[incore] = json.loads(p.stdout)
    auto, flags_only = docs["auto"], docs["analytic"]
    if auto["incore"]["source"] != "analytic":
        pytest.skip("a compiled analyzer (OSACA) ran")
    assert any("fold-left" in n and "the chain per iteration" in n for n in auto["notes"])
    assert auto["incore"]["T_nOL_cy_per_cl"] < flags_only["incore"]["T_nOL_cy_per_cl"]
    assert auto["incore"]["T_OL_cy_per_cl"] == pytest.approx(flags_only["incore"]["T_OL_cy_per_cl"])
