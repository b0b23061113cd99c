"""`loopmodel roofline`: roofs from the machine model, measured points (fake benchmark) with the
model's, each kernel taking its own -D constants, JSON and the plot."""
from __future__ import annotations

import json

import pytest

import loopmodel.measure.bench as bench
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.measure.roofline import roofs
from loopmodel.workflows.roofline import measure_points
from helpers import schema_errors

MACHINE = "IvyBridgeEP_E5-2690v2"


@pytest.fixture
def fake_bench(monkeypatch):
    calls = []

    def run_bench(path, defines, machine=None, repeat=10, *a, **k):
        calls.append((path, dict(defines), k.get("cold")))
        s = 1e-9  # 1 ns/it best, 2 ns/it worst
        m = KernelMeasurement(path, dict(defines), 1, (s, 1.5 * s, 2 * s), "gcc", ("-O3",), 0, 1, True)
        return BenchResult(path, dict(defines), m, 3e9, 8, 2, "cold" if k.get("cold") else "warm")
    monkeypatch.setattr(bench, "run_bench", run_bench)
    return calls


def test_roofs_are_peak_flops_and_single_core_bandwidths():
    m = load_machine(MACHINE)
    rs = roofs(m)
    assert rs[0].kind == "compute" and rs[0].value == pytest.approx(8 * 3.0e9)
    bw = {r.label.split()[0]: r.value for r in rs if r.kind == "bandwidth"}
    assert set(bw) == {"L1", "L2", "L3", "MEM"}
    mem = m.benchmarks.measurements["MEM"]
    assert bw["MEM"] == pytest.approx(max(v[mem.cores.index(1)] for v in mem.bandwidths.values()))


def test_points_have_intensity_measured_and_predicted_flops(fake_bench):
    m = load_machine(MACHINE)
    pts, notes = measure_points("examples/kernels/daxpy.c", m, [{"N": 1000}, {"N": 100_000_000}], repeat=3)
    l1, mem = pts
    assert (l1.level, mem.level) == ("L1", "MEM") and not notes
    assert l1.intensity == pytest.approx(2 / 24)  # 2 FLOP per 16 B loaded + 8 B stored
    assert mem.intensity == pytest.approx(2 / 24)  # x, y in; y out (y read: no write-allocate extra)
    assert mem.measured[0] == pytest.approx(2e9) and mem.measured[2] == pytest.approx(1e9)
    assert 0 < mem.predicted < l1.predicted


def test_kernel_without_flops_is_left_out_with_a_note(fake_bench, tmp_path):
    k = tmp_path / "copy.c"
    k.write_text("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i];\n")
    pts, notes = measure_points(str(k), load_machine(MACHINE), [{"N": 1000}])
    assert pts == [] and "no floating-point operations" in notes[0]


def test_roofline_command_each_kernel_takes_its_own_sizes(fake_bench, tmp_path, capsys):
    from loopmodel.cli import main
    out = tmp_path / "r.png"
    assert main(["roofline", "examples/kernels/daxpy.c", "examples/kernels/2d-5pt.c", "-m", MACHINE,
                 "-D", "N=1000", "-D", "M=100", "--cache", "cold", "--plot", str(out), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [c[1] for c in fake_bench] == [{"N": 1000}, {"N": 1000, "M": 100}] and all(c[2] for c in fake_bench)
    assert len(doc["points"]) == 2 and doc["points"][0]["cache"] == "cold"
    assert doc["roofs"][0]["peak_flop_s"] > 0 and schema_errors(doc, "roofline") == [] and out.read_bytes()[:4] == b"\x89PNG"
    assert main(["roofline", "examples/kernels/daxpy.c", "-m", MACHINE, "-D", "N=10", "--plot", str(out)]) == 2
    assert "exists" in capsys.readouterr().err


def test_roofline_missing_size_is_one_line(capsys):
    from loopmodel.cli import main
    assert main(["roofline", "examples/kernels/2d-5pt.c", "-m", MACHINE, "-D", "N=100"]) == 2
    err = capsys.readouterr().err
    assert "no value for M" in err and err.count("\n") == 1


def test_roofline_figure_has_roofs_series_and_model_markers(fake_bench):
    from loopmodel.report.roofline_plot import plot
    m = load_machine(MACHINE)
    pts, _ = measure_points("examples/kernels/daxpy.c", m, [{"N": 1000}, {"N": 100_000_000}])
    cold, _ = measure_points("examples/kernels/daxpy.c", m, [{"N": 1000}], cold=True)
    fig = plot(pts + cold, roofs(m), None, "t")
    ax = fig.axes[0]
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert sorted(labels) == ["daxpy.c (cold) measured", "daxpy.c (cold) model", "daxpy.c (warm) measured",
                              "daxpy.c (warm) model"]
    texts = [t.get_text() for t in ax.texts]
    assert any(t.startswith("peak DP") for t in texts) and sum("GB/s" in t for t in texts) == 4
    assert "FLOP/B" in ax.get_xlabel() and "FLOP/s" in ax.get_ylabel()


def test_roofline_both_caches_gives_two_series(fake_bench, capsys):
    from loopmodel.cli import main
    assert main(["roofline", "examples/kernels/daxpy.c", "-m", MACHINE, "-D", "N=1000", "--cache", "both",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [p["cache"] for p in doc["points"]] == ["warm", "cold"]


def test_cold_points_are_predicted_and_placed_for_data_in_memory(fake_bench):
    m = load_machine(MACHINE)
    warm, _ = measure_points("examples/kernels/daxpy.c", m, [{"N": 1000}])
    cold, _ = measure_points("examples/kernels/daxpy.c", m, [{"N": 1000}], cold=True)
    assert (warm[0].level, cold[0].level) == ("L1", "MEM")
    assert cold[0].predicted < warm[0].predicted


def test_a_figure_that_is_not_finite_is_null_in_the_document():
    """No traffic (an infinite intensity) is "inf" and no ECM time (a NaN prediction) is null, not
    the Infinity/NaN that JSON does not have."""
    from loopmodel.measure.roofline import RooflinePoint
    from loopmodel.report.roofline import document

    p = RooflinePoint("k.c", {"N": 10}, "L1", float("inf"), (2e9, 1.9e9, 1.8e9), float("nan"), "warm")
    doc = document(roofs(load_machine("SkylakeSP_Gold-6148")), [p], [])
    point = doc["points"][0]
    assert point["arithmetic_intensity_flop_per_B"] == "inf" and point["predicted_flop_s"] is None
    json.dumps(doc, allow_nan=False)
    assert schema_errors(doc, "roofline") == [] and doc["notes"][-1].startswith("counters unavailable")
