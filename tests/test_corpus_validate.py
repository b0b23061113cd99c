"""``loopmodel validate --corpus``: the cases predicted and (fake or tiny real) measured, the
summary per data location, regime and family, the JSON document against its type, the plot,
skipped cases, one-line errors."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

import loopmodel.measure.bench as bench
from loopmodel.cli import main
from loopmodel.errors import KernelError
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.corpus import example_kernels
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.report.corpus_plot import plot
from loopmodel.workflows import corpus as workflow
from helpers import schema_errors

MACHINE = "SkylakeSP_Gold-6148"


@pytest.fixture
def tiny(monkeypatch):
    """The corpus reduced to the triad example (four cases on MACHINE)."""
    triad = [k for k in example_kernels() if k.name == "example-triad"]
    monkeypatch.setattr(workflow, "corpus_kernels", lambda seed=0, quick=False: tuple(triad))


@pytest.fixture
def fake_bench(monkeypatch):
    """A measurement of 1 cy/it at 3 GHz; the memory case fails to compile."""
    def run_bench(path, defines, machine=None, repeat=10, *a, **k):
        if defines["N"] > 10**6:
            raise KernelError("gcc failed", file=path)
        s = 1 / 3e9
        m = KernelMeasurement(path, dict(defines), 1000, (s * 1000, 1.1 * s * 1000), "gcc", ("-O3",), 0, 1, True)
        return BenchResult(path, dict(defines), m, 3e9, 8, 2, notes=("counters unavailable: time only",))
    monkeypatch.setattr(bench, "run_bench", run_bench)


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
