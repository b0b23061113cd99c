"""``loopmodel validate --corpus``: the cases predicted and (fake or tiny real) measured, the
summary per data location, regime and family, the JSON document against its type, the plot,
skipped cases, one-line errors."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

import loopmodel.measure.bench as bench
import loopmodel.workflows.same_window as same_window
from loopmodel.cli import main
from loopmodel.errors import KernelError
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.corpus import example_kernels
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.report.corpus_plot import plot
from loopmodel.workflows import corpus as workflow
from loopmodel.workflows.validate import ecm_at_data_level, kernel_analyzer
from helpers import schema_errors

MACHINE = "SkylakeSP_Gold-6148"


@pytest.fixture
def tiny(monkeypatch):
    """The corpus reduced to the triad example (four cases on MACHINE)."""
    triad = [k for k in example_kernels() if k.name == "example-triad"]
    monkeypatch.setattr(workflow, "corpus_kernels", lambda seed=0, quick=False: tuple(triad))


@pytest.fixture
def fake_window(monkeypatch):
    """The reference bandwidth measured at half the stored figure before a case, the stored one after."""
    calls = []

    def reference(term, machine):
        calls.append(term.measured.kernel)
        return term.measured.reported * (0.5 if len(calls) % 2 else 1.0)
    monkeypatch.setattr(same_window, "reference", reference)
    return calls


@pytest.fixture
def fake_bench(monkeypatch, fake_window):
    """A measurement of 1 cy/it at 3 GHz; the memory case fails to compile."""
    monkeypatch.setattr(bench, "run_bench", _fake_run_bench(fail_in_memory=True))


@pytest.fixture
def fake_bench_all(monkeypatch, fake_window):
    """A measurement of 1 cy/it at 3 GHz for every case."""
    monkeypatch.setattr(bench, "run_bench", _fake_run_bench(fail_in_memory=False))


def _fake_run_bench(fail_in_memory: bool):
    def run_bench(path, defines, machine=None, repeat=10, *a, **k):
        if fail_in_memory and defines["N"] > 10**6:
            raise KernelError("gcc failed", file=path)
        s = 1 / 3e9
        m = KernelMeasurement(path, dict(defines), 1000, (s * 1000, 1.1 * s * 1000), "gcc", ("-O3",), 0, 1, True)
        return BenchResult(path, dict(defines), m, 3e9, 8, 2, notes=("counters unavailable: time only",))
    return run_bench


def test_corpus_json_document(tiny, fake_bench, capsys):
    assert main(["validate", "--corpus", "--quick", "-m", MACHINE, "--json", "--repeat", "1"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert schema_errors(doc, "validate-corpus") == []
    assert [c["data_location"] for c in doc["cases"]] == ["L1", "L2", "L3"]
    assert doc["skipped"] == [{"name": "example-triad", "data_location": "MEM",
                               "reason": "example-triad.c: gcc failed"}]
    for c in doc["cases"]:
        assert c["measured_min_cy_per_it"] == pytest.approx(1.0)
        assert c["measured_max_cy_per_it"] == pytest.approx(1.1)
        assert c["relative_error"] == pytest.approx(c["predicted_cy_per_it"] - 1)
        assert c["families"] == ["example", "streaming"] and "streaming" in c["regimes"]
    errs = sorted(abs(c["relative_error"]) for c in doc["cases"])
    s = doc["summary"]
    assert s["count"] == 3 and s["max_abs_error"] == pytest.approx(errs[-1], rel=1e-3)
    assert s["median_abs_error"] == pytest.approx(errs[1], rel=1e-3)
    assert set(s["by_level"]) == {"L1", "L2", "L3"} and s["by_family"]["streaming"]["count"] == 3
    assert doc["quick"] is True and doc["repetitions"] == 1 and doc["seed"] == 0
    assert "[1/4] example-triad in L1" in out.err and "skipped: example-triad.c: gcc failed" in out.err
    assert any("1 skipped" in n for n in doc["notes"])


def test_memory_cases_are_also_judged_against_the_bandwidth_of_their_minutes(tiny, fake_bench_all, fake_window,
                                                                              capsys):
    """The reference benchmark runs around the memory case only; measured at 3/4 of the stored
    figure on average, the memory term's busy time grows by 4/3 and the prediction with it."""
    assert main(["validate", "--corpus", "--quick", "-m", MACHINE, "--json", "--repeat", "1"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert schema_errors(doc, "validate-corpus") == []
    by_level = {c["data_location"]: c for c in doc["cases"]}
    assert set(by_level) == {"L1", "L2", "L3", "MEM"} and len(fake_window) == 2
    assert all(by_level[lv]["same_window"] is None for lv in ("L1", "L2", "L3"))
    w = by_level["MEM"]["same_window"]
    assert w["window_B_s"] == pytest.approx(0.75 * w["stored_B_s"])
    assert w["predicted_cy_per_it"] > by_level["MEM"]["predicted_cy_per_it"]
    assert w["relative_error"] == pytest.approx(w["predicted_cy_per_it"] - 1)
    s = doc["summary"]["same_window"]
    assert s["stored"]["count"] == s["window"]["count"] == 1
    assert s["window"]["max_abs_error"] == pytest.approx(abs(w["relative_error"]), rel=1e-3)
    assert main(["validate", "--corpus", "--quick", "-m", MACHINE, "--repeat", "1"]) == 0
    assert "memory cases against the bandwidth of the same minutes: 1 case(s)" in capsys.readouterr().out


def test_corpus_text_and_plot(tiny, fake_bench, capsys, tmp_path):
    png = tmp_path / "corpus.png"
    assert main(["validate", "--corpus", "-m", MACHINE, "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    for line in ("|error| per data location", "|error| per corpus family", "largest |error|s",
                 "note: skipped example-triad in MEM"):
        assert line in text
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["validate", "--corpus", "-m", MACHINE, "--plot", str(png)]) == 2


def test_the_plot_has_a_strip_per_level_and_per_regime(tiny, fake_bench):
    got = workflow.run_corpus(load_machine(MACHINE), MACHINE, quick=True, repeat=1)
    fig = plot(got, None, "t")
    left, right = fig.axes
    assert [t.get_text().split("\n")[0] for t in left.get_xticklabels()] == ["L1", "L2", "L3"]
    tags = sorted({t for r in got.cases for t in r.regimes})
    assert "streaming" in tags
    assert sorted(t.get_text().split("\n")[0] for t in right.get_xticklabels()) == tags
    assert right.get_xlabel() == "regime tag"


def test_one_real_case(tiny, monkeypatch):
    """The triad in L1 measured for real, one run: a prediction and a measurement in cy/it."""
    real = workflow.corpus_cases
    monkeypatch.setattr(workflow, "corpus_cases", lambda *a, **k: (real(*a, **k)[0][:1], ()))
    got = workflow.run_corpus(load_machine(MACHINE), MACHINE, repeat=1, use_cache=False)
    assert len(got.cases) == 1 or got.skipped  # a host without gcc skips it, with the reason
    for r in got.cases:
        assert r.case.level == "L1" and r.measured[0] > 0 and r.predicted_cy_per_it > 0
        assert r.error == pytest.approx(r.predicted_cy_per_it / r.measured[0] - 1)


@pytest.mark.parametrize("argv,message", [
    (["examples/kernels/triad.c", "--corpus", "-m", MACHINE], "a kernel file or --corpus, not both"),
    (["-m", MACHINE], "give a kernel file or --corpus"),
])
def test_bad_choice_is_one_line(argv, message):
    p = subprocess.run([sys.executable, "-m", "loopmodel", "validate", *argv], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_corpus_options_go_together(capsys):
    assert main(["validate", "examples/kernels/triad.c", "-m", MACHINE, "-D", "N=100", "--seed", "3"]) != 0
    assert "--quick and --seed go with --corpus" in capsys.readouterr().err
    assert main(["validate", "--corpus", "-m", MACHINE, "-D", "N=100"]) != 0
    assert "-D is not used" in capsys.readouterr().err


COLUMN = ("double a[M][N];\ndouble b[M][N];\nfor (int i = 1; i < N - 1; ++i)\n  for (int j = 1; j < M - 1; ++j)\n"
          "    b[j][i] = (a[j][i - 1] + a[j][i + 1] + a[j - 1][i] + a[j + 1][i]) * 0.25;\n")


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_a_case_gcc_interchanges_is_predicted_for_the_nest_it_runs(fake_bench, tmp_path):
    """A column-wise stencil placed by the nest as written (L2 by its layer conditions at M=N=160)
    is predicted as gcc runs it, interchanged: its data location and prediction are those of the
    row-wise nest, with the analysis' note."""
    from loopmodel.measure.corpus import CorpusKernel
    from loopmodel.fileio.interchange import interchanged
    from loopmodel.fileio.c_kernel import parse_kernel
    machine = load_machine(MACHINE)
    column = CorpusKernel("column", COLUMN, ("stencil",), ("M", "N"))
    row = CorpusKernel("row", interchanged(parse_kernel(COLUMN, "c.c")[0])[1], ("stencil",), ("M", "N"))
    sizes = {"M": 160, "N": 160}
    placed = workflow.CorpusCase(column, "L2", sizes)
    got = workflow.measure_case(placed, str(tmp_path), machine, 1, 0, False, MACHINE)
    assert got.nest_note.startswith("analysed as compiled: gcc interchanges the loops")
    direct = workflow.measure_case(workflow.CorpusCase(row, got.case.level, sizes), str(tmp_path), machine, 1, 0,
                                   False, MACHINE)
    assert direct.nest_note == "" and got.predicted_cy_per_it == pytest.approx(direct.predicted_cy_per_it)
    _, analyzer = kernel_analyzer(str(tmp_path / "column.c"), machine, MACHINE, False)
    written = analyzer.run(sizes)  # the nest as written: strided, another prediction
    assert ecm_at_data_level(written)[1] / written.traffic.iterations_per_unit > 1.5 * got.predicted_cy_per_it
