"""In-core figures a machine file lacks, filled from llvm-mca's scheduling model
(loopmodel.compiled.incore_fill): DIV throughputs and latencies of reduction chains."""
from __future__ import annotations

import dataclasses
import json
import re
import shutil

import pytest

from helpers import KERNELS, analyze, reference_dir, run_cli
from loopmodel.fileio.machine_files import load_machine
from loopmodel.compiled import incore_fill
from loopmodel.compiled.incore_fill import instruction_form, missing_figure

needs_mca = pytest.mark.skipif(shutil.which("llvm-mca") is None and not any(
    shutil.which(f"llvm-mca-{v}") for v in range(10, 30)), reason="llvm-mca not installed")

DIVIDE = "double a[N], b[N];\n\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i] / a[i];\n"


def _without(machine, throughput=(), latency=(), arch=None):
    ic = machine.in_core
    ic = dataclasses.replace(ic, throughput={k: v for k, v in ic.throughput.items() if k not in throughput},
                             latency={k: v for k, v in ic.latency.items() if k not in latency})
    return dataclasses.replace(machine, in_core=ic, micro_architecture=arch or machine.micro_architecture)


def test_instruction_forms_by_isa_and_width():
    assert instruction_form("x86", "ADD", 32) == "vaddpd %ymm1, %ymm2, %ymm0"
    assert instruction_form("x86", "DIV", 64) == "vdivpd %zmm1, %zmm2, %zmm0"
    assert instruction_form("x86", "ADD", 8) == "vaddsd %xmm1, %xmm2, %xmm0"
    assert instruction_form("x86", "SQRT", 16) == "vsqrtpd %xmm1, %xmm0"
    assert instruction_form("aarch64", "ADD", 16) == "fadd v0.2d, v1.2d, v2.2d"
    assert instruction_form("AArch64", "DIV", 8) == "fdiv d0, d1, d2"
    assert instruction_form("aarch64", "FMA", 8) == "fmadd d0, d1, d2, d3"
    assert instruction_form("aarch64", "FMA", 64) == "fmla z0.d, p0/m, z1.d, z2.d"
    assert instruction_form("x86", "LOG", 32) is None and instruction_form("ppc64le", "ADD", 16) is None


def test_documented_latency_comes_first_and_no_form_says_why():
    """The model reads the documented latency itself: nothing is missing, nothing is filled."""
    from loopmodel.compiled.incore_fill import filled_machine
    from loopmodel.fileio.c_kernel import parse_kernel_file
    skx = _without(load_machine("SkylakeSP_Gold-6148"), latency=("ADD",))
    kernel, _ = parse_kernel_file(str(KERNELS / "dot.c"))
    assert filled_machine(kernel, skx) == (skx, ())
    none = missing_figure(skx, "throughput", "LOG")
    assert none.value is None and "no single instruction of LOG" in none.source
    with pytest.raises(KeyError):
        missing_figure(skx, "bandwidth", "ADD")


def test_missing_llvm_mca_keeps_the_note_and_says_why(monkeypatch):
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", "/nonexistent/llvm-mca")
    m = _without(load_machine("SandyBridgeEP_E5-2680"), throughput=("DIV",))
    got = missing_figure(m, "throughput", "DIV")
    assert got.value is None and "llvm-mca not found" in got.source


@needs_mca
def test_llvm_mca_fills_div_throughput_once_per_process(monkeypatch):
    monkeypatch.delenv("LOOPMODEL_LLVM_MCA", raising=False)
    m = _without(load_machine("SkylakeSP_Gold-6148"), throughput=("DIV",))
    incore_fill._timing.cache_clear()
    got = missing_figure(m, "throughput", "DIV")
    assert got.value is not None and 0 < got.value < 1  # a divider: well under one per cycle
    assert re.match(r"llvm-mca [\d.]+'s skylake-avx512 model \(vdivpd %zmm1, %zmm2, %zmm0\)", got.source)
    again = missing_figure(m, "throughput", "DIV")
    assert again == got and incore_fill._timing.cache_info().hits >= 1


@needs_mca
def test_llvm_mca_fills_an_untabulated_add_latency(monkeypatch):
    monkeypatch.delenv("LOOPMODEL_LLVM_MCA", raising=False)
    m = _without(load_machine("SkylakeSP_Gold-6148"), latency=("ADD",), arch="XYZ")
    got = missing_figure(m, "latency", "ADD", 32)
    assert got.value == pytest.approx(4.0) and "skylake-avx512 model (vaddpd %ymm1, %ymm2, %ymm0)" in got.source


@needs_mca
def test_analytic_model_uses_the_filled_figures(tmp_path, monkeypatch):
    monkeypatch.delenv("LOOPMODEL_LLVM_MCA", raising=False)
    src = tmp_path / "div.c"
    src.write_text(DIVIDE)
    m = _without(load_machine("SkylakeSP_Gold-6148"), throughput=("DIV",))
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel_file
    k, _ = parse_kernel_file(str(src))
    res = Analyzer(k, m, AnalyzerSettings(incore="analytic")).run({"N": 100000})
    assert res.incore.T_OL is not None and res.ecm.T_ECM["MEM"] is not None
    # gcc's 256-bit vectors on this core: the figure of the ymm form, not scaled from the zmm one
    tp = missing_figure(dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, simd_width=32)),
                        "throughput", "DIV").value
    assert any(n.startswith(f"DIV throughput {tp:.4g} instructions/cy") and "(vdivpd %ymm1, %ymm2, %ymm0)" in n
               and "the machine file gives none" in n for n in res.notes), res.notes
    assert not any("scaled by" in n for n in res.notes)


def _reference_hsw(tmp_path, arch: str | None = None):
    text = (reference_dir() / "HaswellEP_E5-2695v3.yml").read_text()
    if arch:
        text = text.replace("OSACA: HSW", f"OSACA: {arch}").replace("IACA: HSW", f"IACA: {arch}")
    path = tmp_path / "hsw.yml"
    path.write_text(text)
    return path


@needs_mca
def test_cli_reduction_and_division_on_a_reference_file(tmp_path):
    """The Kerncraft file gives no latencies and no DIV throughput: the ECM totals are there, each with
    the note naming its source (the documented ADD latency of HSW; llvm-mca for DIV, and for ADD
    where the micro-architecture is not tabulated)."""
    div = tmp_path / "div.c"
    div.write_text(DIVIDE)
    machine = _reference_hsw(tmp_path)
    base = ("-D", "N=10000000", "-p", "ECM", "--incore", "analytic", "--json")
    red = json.loads(run_cli("analyze", KERNELS / "dot.c", "-m", machine, *base, "--no-reassociation").stdout)
    assert red["ecm"]["T_ECM_cy_per_cl"]["MEM"] is not None
    assert any("documented for HSW" in n for n in red["notes"])
    d = json.loads(run_cli("analyze", div, "-m", machine, *base).stdout)
    assert d["incore"]["T_OL_cy_per_cl"] is not None
    assert any(n.startswith("DIV throughput") and "haswell model (vdivpd %ymm1, %ymm2, %ymm0)" in n for n in d["notes"])
    odd = _reference_hsw(tmp_path, "XYZ")
    red = json.loads(run_cli("analyze", KERNELS / "dot.c", "-m", odd, *base, "--no-reassociation").stdout)
    assert red["ecm"]["T_ECM_cy_per_cl"]["MEM"] is not None
    assert any("ADD latency 3 cy from llvm-mca" in n and "haswell model" in n for n in red["notes"]), red["notes"]


def test_cli_without_llvm_mca_keeps_todays_note(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", "/nonexistent/llvm-mca")
    div = tmp_path / "div.c"
    div.write_text(DIVIDE)
    p = run_cli("analyze", div, "-m", _reference_hsw(tmp_path), "-D", "N=10000000", "-p", "ECM", "--incore",
                "analytic", "--json")
    doc = json.loads(p.stdout)
    assert doc["incore"]["T_OL_cy_per_cl"] is None
    assert any("gives no throughput for DIV" in n and "llvm-mca not found" in n for n in doc["notes"])


def test_library_analysis_still_runs_on_bundled_models():
    res = analyze("dot.c", "SkylakeSP_Gold-6148", {"N": 100000}, reassociate=False)
    assert res.incore.T_OL is not None  # the bundled file gives its latencies: no fill
    assert not any("llvm-mca" in n and "machine file gives none" in n for n in res.notes)
