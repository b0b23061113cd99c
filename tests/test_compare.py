"""``loopmodel compare`` and ``loopmodel.compare``: one kernel on several machine models, every
figure read from the workflow that owns it (ECM per data location from ``analyze``, the socket
from the n-core prediction of ``scaling``'s row N, the energy from ``energy``), what a model
cannot give a footnote of its row, an unknown machine one line and a non-zero exit."""
from __future__ import annotations

import dataclasses
import json

import pytest

from helpers import ROOT, SKX, run_cli, run_main_inprocess, schema_errors

import loopmodel
from loopmodel.fileio.machine_files import builtin_names, load_machine
from loopmodel.machine.fields import power_section
from loopmodel.workflows import compare as workflow

TRIAD = "examples/kernels/triad.c"
ZEN = "Zen_EPYC-7451"
HSW = "HaswellEP_E5-2695v3"
SIZES = {"N": 10_000_000}
POWER = {"W0": "23.6 W", "W1": "1.9 W/GHz", "W2": "1.2 W/GHz^2", "clock range": ["1.2 GHz", "2.4 GHz"],
         "clock step": "0.4 GHz", "source": "test"}


@pytest.fixture(scope="module")
def report():
    return loopmodel.compare(ROOT / TRIAD, [SKX, ZEN, HSW], SIZES, incore="analytic")


def test_one_row_per_machine_in_the_order_named(report):
    assert [r.machine for r in report.rows] == [SKX, ZEN, HSW]
    assert all(r.analysis is not None for r in report.rows)


def test_ecm_per_location_is_what_analyze_gives(report):
    for row in report.rows:
        res = loopmodel.analyze(ROOT / TRIAD, row.machine, SIZES, incore="analytic")
        assert row.analysis.ecm.T_ECM == res.ecm.T_ECM
        assert row.analysis.prediction.location == res.prediction.location
        assert row.analysis.prediction.single_core_cy_per_cl == res.prediction.single_core_cy_per_cl
        assert row.analysis.prediction.saturation == res.prediction.saturation
        doc = next(m for m in report.to_dict()["machines"] if m["machine"] == row.machine)
        assert {lvl: f["cy_per_cl"] for lvl, f in doc["ecm_per_location"].items()} == res.ecm.T_ECM
        assert doc["saturation_cores"] == res.prediction.saturation.cores


def test_the_socket_is_row_n_of_scaling(report):
    for row in report.rows:
        n = row.analysis.machine.cores_per_socket
        curve = loopmodel.scaling(ROOT / TRIAD, row.machine, SIZES, incore="analytic", cores=n).curves[0]
        assert row.socket.cores == n
        assert row.socket.point.it_per_s == pytest.approx(curve.points[-1].it_per_s, rel=1e-12)


def test_energy_needs_a_power_section_else_a_footnote(report):
    for row in report.rows:
        assert row.energy is None
        assert [f.column for f in row.footnotes] == ["energy"]
    machine = load_machine(SKX)
    powered = dataclasses.replace(machine, power=power_section(POWER))
    got = loopmodel.compare(ROOT / TRIAD, [powered, ZEN], SIZES, incore="analytic")
    assert got.rows[0].energy is not None and not got.rows[0].footnotes
    doc = got.to_dict()
    e = doc["machines"][0]["energy"]
    assert e["energy_J_per_it"] == pytest.approx(got.rows[0].energy.energy_optimum.energy_j_per_unit)
    assert not schema_errors(doc, "compare")


def test_a_missing_roofline_is_a_footnote_not_an_error():
    res = loopmodel.analyze(ROOT / TRIAD, SKX, SIZES, incore="analytic")
    no_bw = dataclasses.replace(res.analysis, roofline=None,
                                notes=res.analysis.notes + (workflow.ROOFLINE_SKIPPED + "no bandwidths",))
    notes = workflow.analysis_footnotes(no_bw)
    assert notes == (workflow.Footnote("Roofline", "no bandwidths"),)


def test_json_validates_against_its_schema(report):
    doc = report.to_dict()
    assert list(doc)[:2] == ["schema_version", "loopmodel_version"]
    assert not schema_errors(doc, "compare")
    assert [m["machine"] for m in doc["machines"]] == [SKX, ZEN, HSW]
    json.dumps(doc, allow_nan=False)


def test_all_is_every_bundled_model():
    names = [n for n, _ in workflow.machine_names(["all", SKX])]
    assert names == list(builtin_names())


def test_cli_table_of_two_models():
    proc = run_cli("compare", TRIAD, "-m", SKX, "-m", ZEN, "-D", "N", "10000000", cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stdout.splitlines()
    for name in (SKX, ZEN):
        row = next(line for line in lines if f" {name} " in line)
        assert "MEM" in row
    assert "ECM per data location" in proc.stdout and "no power: section" in proc.stdout


def test_cli_json_equals_the_api(report, tmp_path):
    proc = run_main_inprocess(["compare", TRIAD, "-m", SKX, "-m", ZEN, "-m", HSW, "-D", "N=10000000", "-i",
                               "analytic", "-o", "json"], ROOT)
    assert proc.returncode == 0, proc.stderr
    cli = json.loads(proc.stdout)
    api = report.to_dict()
    assert [m["ecm_per_location"] for m in cli["machines"]] == [m["ecm_per_location"] for m in api["machines"]]
    assert not schema_errors(cli, "compare")


def test_plot_writes_a_png(tmp_path):
    png = tmp_path / "compare.png"
    proc = run_main_inprocess(["compare", TRIAD, "-m", SKX, "-m", ZEN, "-D", "N=10000000", "-i", "analytic",
                               "--plot", png], ROOT)
    assert proc.returncode == 0, proc.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot written to {png}" in proc.stdout


def test_unknown_machine_is_one_line_and_a_non_zero_exit():
    proc = run_main_inprocess(["compare", TRIAD, "-m", SKX, "-m", "NoSuchMachine", "-D", "N=1000"], ROOT)
    assert proc.returncode != 0
    assert len(proc.stderr.strip().splitlines()) == 1 and "NoSuchMachine" in proc.stderr
    assert "Traceback" not in proc.stderr and not proc.stdout


def test_bad_kernel_is_one_line_and_a_non_zero_exit():
    proc = run_main_inprocess(["compare", "examples/kernels/no-such-kernel.c", "-m", SKX, "-D", "N=1000"], ROOT)
    assert proc.returncode != 0 and len(proc.stderr.strip().splitlines()) == 1
    with pytest.raises(loopmodel.LoopmodelError):
        loopmodel.compare(ROOT / TRIAD, [SKX], {"Q": 3})
