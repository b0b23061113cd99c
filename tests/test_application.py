"""Application models: loop sequences, the paper's PCG, summed per-loop times."""
from __future__ import annotations

import json

import pytest

from helpers import ROOT, analyze, run_cli

from loopmodel.errors import DefineError
from loopmodel.fileio.app_file import AppError, evaluate, read_app
from loopmodel.fileio.machine_files import load_machine
from loopmodel.models.application import predict

PCG = ROOT / "examples" / "pcg" / "pcg.yml"
SNC = "SkylakeSP_Gold-6148_SNC"


def _analyses(spec, machine):
    return [analyze(k.path, machine, {n: v for n, v in k.defines.items() if n in ("M", "N", "NN")},
                    models=("ECM",), incore="analytic") for k in spec.kernels]


def test_pcg_file_lists_the_paper_kernels():
    spec = read_app(str(PCG))
    counts = {k.name: k.count for k in spec.kernels}
    assert counts == {"stencil": 1, "dot": 2, "daxpby": 3, "norm": 1, "gs forward": 1, "gs backward": 1}
    dot = next(k for k in spec.kernels if k.name == "dot")
    assert dot.defines["NN"] == 4000 * 4000


def test_pcg_is_the_sum_of_the_loops():
    spec = read_app(str(PCG))
    m = load_machine(SNC)
    res = _analyses(spec, SNC)
    pred = predict(spec, res, m, [1, 2, 10, 20], "saturation")
    # iterations counted by hand for M = N = 4000: stencil j, i = 1 .. 3998 (3998 each); dot, daxpby,
    # norm i = 0 .. M*N-1; gs forward j, i = 1 .. 3998; gs backward j, i = 3998 down to 1
    hand = {"stencil": 3998 * 3998, "dot": 16_000_000, "daxpby": 16_000_000, "norm": 16_000_000,
            "gs forward": 3998 * 3998, "gs backward": 3998 * 3998}
    assert {kp.kernel.name: kp.iterations for kp in pred.kernels} == hand
    expect = 0.0
    for k, r in zip(spec.kernels, res):  # seconds = count * iterations * cy/it / f, summed over the loops
        expect += k.count * hand[k.name] * (r.ecm.T_ECM["MEM"] / r.traffic.iterations_per_unit) / 2.2e9
    assert pred.total_seconds[1] == pytest.approx(expect, rel=1e-12)
    for n in (2, 10, 20):
        assert pred.total_seconds[n] == pytest.approx(sum(kp.seconds[n] for kp in pred.kernels), rel=1e-12)
        assert pred.total_seconds[n] < pred.total_seconds[1]
    # the stencil runs over the interior only: (M-2)(N-2) iterations
    assert pred.kernels[0].iterations == 3998 * 3998


def test_gauss_seidel_is_bound_by_its_critical_path():
    """gs forward: x[j][i-1] -> FMA -> MUL -> x[j][i]: 4 + 4 cy per iteration on SKL (paper Fig. 4)."""
    r = analyze(str(ROOT / "examples/pcg/gs_forward.c"), SNC, {"M": 4000, "N": 4000}, models=("ECM",),
                incore="analytic")
    assert r.incore.dependency == pytest.approx(8.0)
    assert r.incore.lanes == 1
    assert r.ecm.T_OL == pytest.approx(8.0 * r.traffic.iterations_per_unit)
    assert r.ecm.T_ECM["MEM"] == r.ecm.T_OL  # core bound, not data bound


def test_expressions_and_errors(tmp_path):
    assert evaluate("M*N - 2*(M+N) + 4", {"M": 10, "N": 20}) == 200 - 60 + 4
    for bad in ("M**2", "open('x')", "K*2", "1.5"):
        with pytest.raises(ValueError):
            evaluate(bad, {"M": 1})
    f = tmp_path / "a.yml"
    f.write_text("kernels:\n- {name: x, file: nowhere.c}\n")
    with pytest.raises(AppError, match=r"a.yml: kernels.0.file: kernel file 'nowhere.c' not found"):
        read_app(str(f))
    f.write_text("kernels: [\n")
    with pytest.raises(AppError, match="not valid YAML"):
        read_app(str(f))
    f.write_text("kernels: []\n")
    with pytest.raises(AppError, match="kernels"):
        read_app(str(f))
    with pytest.raises(DefineError, match="-D Q"):
        read_app(str(PCG), {"Q": 3})


def test_cli_app_json_and_overrides():
    p = run_cli("app", PCG, "-m", SNC, "--cores", "1,10", "--incore", "analytic", "-D", "N=2000", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["cores"] == [1, 10]
    assert [k["name"] for k in doc["kernels"]] == ["stencil", "dot", "daxpby", "norm", "gs forward", "gs backward"]
    assert doc["kernels"][1]["defines"]["NN"] == 4000 * 2000
    assert doc["total_s"]["1"] == pytest.approx(sum(k["time_s"]["1"] for k in doc["kernels"]))
    text = run_cli("app", PCG, "-m", SNC, "--cores", "1:2", "--incore", "analytic")
    assert text.returncode == 0, text.stderr
    assert "time [ms]" in text.stdout and "speedup" in text.stdout and "gs backward" in text.stdout
    bad = run_cli("app", PCG, "-m", SNC, "--cores", "1:99")
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1
