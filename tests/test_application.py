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


def _pcg_variant(tmp_path, old: str, new: str):
    """pcg.yml with one text replaced, next to copies of its kernels."""
    import shutil

    for c in PCG.parent.glob("*.c"):
        shutil.copy(c, tmp_path / c.name)
    path = tmp_path / "app.yml"
    text = PCG.read_text()
    assert old in text
    path.write_text(text.replace(old, new, 1))
    return path


@pytest.mark.parametrize("old,new,where,words", [
    ("{NN: M*N}", "{NN: M-N-N}", "kernels.1.defines.NN", ("M-N-N = -4000", "positive")),
    ("{NN: M*N}", "{NN: M-M}", "kernels.1.defines.NN", ("M-M = 0", "positive")),
    ("{M: 4000, N: 4000}", "{M: -4000, N: 4000}", "defines.M", ("positive",)),
    ("{M: 4000, N: 4000}", "{M: 4611686018427387905, N: 4000}", "defines.M", ("larger than 2**62",)),
    ("{NN: M*N}", "{NN: M*N*M*N*M*N*M*N*M*N*M*N}", "kernels.1.defines.NN", ("beyond 2**124",)),
    ("{NN: M*N}", "{NN: M*N*M*N*M*N}", "kernels.1.defines.NN", ("larger than 2**62",)),
    ("{NN: M*N}", "{NN: " + "(" * 300 + "M" + ")" * 300 + "}", "kernels.1.defines.NN", ()),
    ("count: 2,", "count: 100000000000000000000000,", "kernels.1.count", ("less than or equal",)),
])
def test_app_sizes_are_checked_as_d_values_are(tmp_path, old, new, where, words):
    """A size of an application file is refused where -D would refuse it: one line naming the file and key."""
    path = _pcg_variant(tmp_path, old, new)
    with pytest.raises(AppError) as exc:
        read_app(str(path))
    msg = str(exc.value)
    assert msg.startswith(f"{path}: {where}: ") and "\n" not in msg, msg
    for w in words:
        assert w in msg, msg


def test_app_count_is_closed_form(tmp_path):
    """10**12 invocations cost no more time than one: the time is count x the time of one call."""
    import time

    one = _pcg_variant(tmp_path, "count: 2,", "count: 1,")
    start = time.perf_counter()
    p1 = run_cli("app", one, "-m", SNC, "--cores", "1", "--incore", "analytic", "--json")
    many = _pcg_variant(tmp_path, "count: 2,", "count: 1000000000000,")
    pm = run_cli("app", many, "-m", SNC, "--cores", "1", "--incore", "analytic", "--json")
    assert time.perf_counter() - start < 60
    assert p1.returncode == 0 and pm.returncode == 0, (p1.stderr, pm.stderr)
    t1, tm = (json.loads(p.stdout)["kernels"][1]["time_s"]["1"] for p in (p1, pm))
    assert tm == pytest.approx(t1 * 1e12, rel=1e-9)
