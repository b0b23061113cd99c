"""`loopmodel validate`: prediction next to a (fake) measurement per size, the data location,
the error and the per-level summary; one-line errors."""
from __future__ import annotations

import subprocess
import sys

import pytest

import loopmodel.measure.bench as bench
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.measure.validation import summary
from loopmodel.workflows.validate import measure_rows
from loopmodel.report.schema import SCHEMA_VERSION
from helpers import schema_errors

MACHINE = "IvyBridgeEP_E5-2690v2"


@pytest.fixture
def fake_bench(monkeypatch):
    """A measurement of exactly 10 cy/CL at 3 GHz (8 it/CL) for every size; the memory term's
    reference benchmark at its stored figure (no benchmark runs)."""
    from loopmodel.workflows import same_window
    calls = []
    monkeypatch.setattr(same_window, "reference", lambda term, machine: term.measured.reported)

    def run_bench(path, defines, machine=None, repeat=10, *a, **k):
        calls.append(dict(defines))
        s = 10 / 8 / 3e9
        m = KernelMeasurement(path, dict(defines), 1000, (s * 1000,) * repeat, "gcc", ("-O3",), 0, 1, True)
        return BenchResult(path, dict(defines), m, 3e9, 8, 2, notes=("counters unavailable: time only",))
    monkeypatch.setattr(bench, "run_bench", run_bench)
    return calls


def test_rows_give_location_prediction_measurement_and_error(fake_bench):
    machine = load_machine(MACHINE)
    rows = measure_rows("examples/kernels/daxpy.c", machine, [{"N": 1000}, {"N": 100_000_000}], repeat=3)
    # the MEM row's in-core time is measured too, at sizes that put the data in half of L1
    assert [r.level for r in rows] == ["L1", "MEM"] and fake_bench == [{"N": 1000}, {"N": 100_000_000}, {"N": 1024}]
    assert rows[0].measured[0] == pytest.approx(10.0)
    assert rows[0].incore_measured == rows[0].measured[0] and rows[0].incore_defines == {"N": 1000}
    assert rows[1].incore_measured == pytest.approx(10.0) and rows[1].incore_defines == {"N": 1024}
    assert rows[1].incore_modelled == pytest.approx(rows[0].incore_modelled)
    assert rows[0].error == pytest.approx(rows[0].predicted / 10 - 1)
    d = rows[1].to_dict()
    assert d["data_location"] == "MEM" and d["measured_min_cy_per_cl"] == pytest.approx(10.0)
    assert d["relative_error"] == pytest.approx(rows[1].predicted / 10 - 1)
    s = summary(rows)
    assert s["L1"]["points"] == 1 and s["MEM"]["max_abs_error"] == pytest.approx(abs(rows[1].error))


def test_validate_command_json(fake_bench, capsys):
    import json

    from loopmodel.cli import main
    assert main(["validate", "examples/kernels/daxpy.c", "-m", MACHINE, "-D", "N=1000", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["schema_version"] == SCHEMA_VERSION and len(doc["points"]) == 1 and schema_errors(doc, "validate") == []
    assert doc["points"][0]["data_location"] == "L1" and "relative_error" in doc["points"][0]


@pytest.mark.parametrize("argv,message", [
    (["examples/kernels/daxpy.c", "-m", MACHINE], "no value for N"),
    (["examples/kernels/daxpy.yml", "-m", MACHINE, "-D", "N=100"], "needs a C kernel"),
    (["examples/kernels/daxpy.c", "-D", "N=100"], "required"),
])
def test_validate_bad_input_is_one_line(argv, message):
    p = subprocess.run([sys.executable, "-m", "loopmodel", "validate", *argv], capture_output=True, text=True,
                       timeout=120)
    assert p.returncode != 0 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_validate_plot_is_written_and_never_overwrites(fake_bench, tmp_path, capsys):
    from loopmodel.cli import main
    out = tmp_path / "v.png"
    argv = ["validate", "examples/kernels/daxpy.c", "-m", MACHINE, "-D", "N=1000:100000000:20000000"]
    assert main(argv + ["--plot", str(out)]) == 0
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(argv + ["--plot", str(out)]) == 2 and "exists" in capsys.readouterr().err
    assert main(argv + ["--plot", str(tmp_path / "v.svg"), "--force"]) == 0
    assert (tmp_path / "v.svg").read_text().lstrip().startswith("<?xml")


def test_rows_carry_the_contributions_the_plot_stacks(fake_bench):
    from loopmodel.report.validation_plot import varying
    rows = measure_rows("examples/kernels/daxpy.c", load_machine(MACHINE), [{"N": 1000}, {"N": 100_000_000}])
    names = [n for n, _, _ in rows[1].parts]
    assert names[:2] == ["T_OL", "T_nOL"] and "T_L3MEM" in names
    assert varying(rows) == "N"


def test_validation_figure_artists(fake_bench):
    from loopmodel.report.validation_plot import plot
    rows = measure_rows("examples/kernels/daxpy.c", load_machine(MACHINE),
                    [{"N": 1000}, {"N": 200_000}, {"N": 100_000_000}])
    fig = plot(rows, None, "t")
    ax = fig.axes[0]
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "T_ECM (prediction)" in labels and "T_OL" in labels and "measured (min-of-K, bar to max)" in labels
    assert "T_nOL" in labels and "T_L3MEM" in labels
    assert len(ax.collections) >= 3  # stacked areas (T_nOL, transfers) + error bars
    assert [t.get_text().strip() for t in ax.texts] == ["L1→L3", "L3→MEM"]  # data-location transitions
    assert ax.get_ylabel() == "cy/CL"


@pytest.fixture
def fake_reference(monkeypatch):
    """The reference benchmark of the memory term, measured at ``factor[0]`` x its stored figure
    (before and after the kernel's runs); the calls counted."""
    from loopmodel.workflows import same_window
    factor, calls = [1.0], []

    def reference(term, machine):
        calls.append(term.measured.kernel)
        return term.measured.reported * factor[0]
    monkeypatch.setattr(same_window, "reference", reference)
    return factor, calls


def test_memory_rows_carry_the_prediction_at_the_bandwidth_of_the_same_window(fake_bench, fake_reference):
    """In memory the reference is measured right before and after the kernel's runs: at the stored
    bandwidth the same-window prediction is the stored one; at half of it the memory term's busy
    time doubles and T_ECM (IVB: no transfer overlaps) grows by that term; in a cache, none."""
    factor, calls = fake_reference
    machine = load_machine(MACHINE)
    same = measure_rows("examples/kernels/daxpy.c", machine, [{"N": 100_000_000}, {"N": 1000}], repeat=3)
    assert same[0].window.predicted_cy_per_cl == pytest.approx(same[0].predicted) and same[1].window is None
    assert len(calls) == 2 and same[0].window.window_B_s == pytest.approx(same[0].window.stored_B_s)
    factor[0] = 0.5
    (half,) = measure_rows("examples/kernels/daxpy.c", machine, [{"N": 100_000_000}], repeat=3)
    memory = [cy for name, cy, _ in half.parts if name.endswith("MEM")][0]
    assert half.window.predicted_cy_per_cl == pytest.approx(half.predicted + memory)
    d = half.to_dict()["same_window"]
    assert d["window_B_s"] == pytest.approx(d["stored_B_s"] / 2) and d["reference_kernel"] == calls[-1]
    assert d["relative_error"] == pytest.approx(d["predicted_cy_per_cl"] / 10 - 1)


def test_no_same_window_prediction_from_a_cached_measurement(fake_bench, fake_reference, monkeypatch):
    import dataclasses

    real = bench.run_bench
    monkeypatch.setattr(bench, "run_bench", lambda *a, **k: dataclasses.replace(real(*a, **k), cached=True))
    (row,) = measure_rows("examples/kernels/daxpy.c", load_machine(MACHINE), [{"N": 100_000_000}], repeat=3)
    assert row.window is None and "came from the cache (--no-cache)" in row.window_note


@pytest.mark.skipif(__import__("shutil").which("gcc") is None, reason="needs gcc")
def test_a_nest_gcc_interchanges_is_validated_as_it_runs_with_a_note(fake_bench, tmp_path, monkeypatch):
    """The column-wise copy gcc interchanges: the prediction is for the interchanged nest, and the
    measurement (10/8 cy/it, in the written nest's unit of 1 it per CL) is read in its unit of
    work, 8 it per CL: 10 cy/CL; the notes say so."""
    import dataclasses

    from loopmodel.measure.validation import validation_notes
    real = bench.run_bench
    monkeypatch.setattr(bench, "run_bench", lambda *a, **k: dataclasses.replace(real(*a, **k), iterations_per_cl=1))
    kernel = tmp_path / "colcopy.c"
    kernel.write_text("double a[M][N];\ndouble b[M][N];\nfor (int i = 0; i < N; ++i)\n"
                      "  for (int j = 0; j < M; ++j)\n    b[j][i] = a[j][i];\n")
    (row,) = measure_rows(str(kernel), load_machine("SkylakeSP_Gold-6148"), [{"M": 1000, "N": 1000}], repeat=3)
    assert row.nest_note.startswith("analysed as compiled: gcc interchanges the loops")
    assert row.measured[0] == pytest.approx(10.0) and row.bench.iterations_per_cl == 8
    assert row.nest_note in validation_notes([row])
