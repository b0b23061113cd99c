"""--incore measured: the kernel benchmarked on this host with its data in L1 as the in-core time."""
from __future__ import annotations

import dataclasses
import json
import math
import shutil
import socket
from importlib import resources
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from helpers import BUILTINS, KERNELS, ROOT, run_cli
from loopmodel.errors import OptionError
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.ir.point import check_point
from loopmodel.models.ecm import ecm_model
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.models.incore import InCoreMeasurement
from loopmodel.report.doctypes import check
from loopmodel.workflows.incore_measured import L1_SHARE, data_set_bytes, fit_to_l1, l1_sizes, split_core_time

CLASSIC = ROOT / "benchmarks" / "incore_classic"
#: every C kernel shipped (examples and the in-core classics)
C_KERNELS = sorted(str(p) for p in [*KERNELS.glob("*.c"), *CLASSIC.glob("*.c")])
needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")


def _parsed(path):
    kernel, _ = parse_kernel_file(path)
    return kernel


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(C_KERNELS), st.data(), st.sampled_from([32768, 49152, 65536, 1 << 20]))
def test_l1_sizes_fit_and_keep_the_inner_loop_where_they_can(path, data, l1):
    """Invariants of the L1 sizing over every shipped kernel and random sizes: the data set fits
    in L1_SHARE of L1, no size grows, the kernel still runs, and the inner loop's sizes shrink
    only where the data set with them at the requested value does not fit (with the other sizes
    at their final, smallest tried, values)."""
    kernel = _parsed(path)
    defines = {c: data.draw(st.integers(16, 20000), label=c) for c in sorted(kernel.constants)}
    try:
        check_point(kernel, defines)
    except Exception:
        return  # sizes the kernel cannot run at are refused before any measurement
    try:
        fit = l1_sizes(kernel, defines, l1)
    except OptionError:
        return  # e.g. a long-range stencil whose halo alone exceeds half of L1
    assert data_set_bytes(kernel, fit.defines) <= L1_SHARE * l1
    assert fit.data_set_B == data_set_bytes(kernel, fit.defines)
    assert all(fit.defines[k] <= defines[k] for k in defines)
    check_point(kernel, fit.defines)
    if not fit.inner_kept:
        kept = {**fit.defines, **{k: defines[k] for k in fit.inner}}
        assert data_set_bytes(kernel, kept) > L1_SHARE * l1


def test_l1_sizes_keep_the_inner_loop_while_rows_fit():
    """A 2-D stencil keeps its inner size where a few rows of it fit, and shrinks the outer one."""
    kernel = _parsed(str(KERNELS / "2d-5pt.c"))
    fit = l1_sizes(kernel, {"M": 5000, "N": 120}, 49152)
    assert fit.defines["N"] == 120 and fit.defines["M"] < 5000 and fit.inner_kept
    assert fit.inner == ("N",)
    assert data_set_bytes(kernel, fit.defines) <= L1_SHARE * 49152
    assert "keeps its size (N=120)" in fit.note({"M": 5000, "N": 120})


def test_l1_sizes_shrink_the_inner_loop_where_three_rows_do_not_fit():
    """gs2d at N=100000: three rows need 2.3 MiB; the outer size goes to its smallest (3: one
    inner pass), the inner one to the largest that fits, keeping its remainder modulo 64."""
    kernel = _parsed(str(CLASSIC / "gs2d.c"))
    fit = l1_sizes(kernel, {"M": 100000, "N": 100000}, 49152)
    assert fit.defines["M"] == 3 and not fit.inner_kept
    n = fit.defines["N"]
    assert 3 * n * 8 <= 24576 < 3 * (n + 64) * 8 and n % 64 == 100000 % 64
    assert "shorter than requested (N=100000" in fit.note({"M": 100000, "N": 100000})


def test_l1_sizes_refuse_what_cannot_fit():
    kernel = _parsed(str(KERNELS / "triad.c"))
    with pytest.raises(OptionError, match="does not fit in 0.0078125 KiB"):
        l1_sizes(kernel, {"N": 1000}, 16)


@settings(max_examples=80, deadline=None)
@given(st.sampled_from(BUILTINS), st.floats(0.05, 500), st.floats(0, 500), st.integers(100, 10**6))
def test_the_split_makes_the_l1_composition_the_measured_time(name, t_core, t_nol, n):
    """Invariant: with T_OL = T_core and T_nOL the model's, capped (split_core_time, fit_to_l1),
    the ECM model (models.ecm) of every bundled machine, whatever its overlap rules and a
    write-through L1 (Power9: the stores' L1-L2 transfer counts with the data in L1), predicts
    T_core for data in L1, unless the model's transfers in L1 alone exceed it (then a note says
    so and the prediction is theirs); 0 <= T_nOL <= T_OL; no level is predicted below T_core."""
    machine = load_machine(name)
    kernel = _parsed(str(KERNELS / "triad.c"))
    res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"N": n})
    t_ol, t_nol_split = split_core_time(t_core, t_nol)
    assert (t_ol, t_nol_split) == (t_core, min(t_nol, t_core))
    meas = InCoreMeasurement({"N": 1000}, 24000.0, 32768.0, (t_core, t_core, t_core), 1, 0.0, 2e9, 1000,
                             model_t_nol=t_nol)
    incore = dataclasses.replace(res.incore, source="measured", T_OL=t_ol, T_nOL=t_nol_split, measurement=meas)
    fitted = fit_to_l1(incore, res.traffic, machine)
    ecm = ecm_model(res.traffic, fitted, machine)
    first = machine.memory_hierarchy[0].level
    assert fitted.T_OL == t_core and 0 <= fitted.T_nOL <= fitted.T_OL
    if any("alone exceed" in note for note in fitted.notes):
        assert ecm.T_ECM[first] > t_core
    else:
        assert ecm.T_ECM[first] == pytest.approx(t_core, rel=1e-9)
    assert all(ecm.T_ECM[lv] >= t_core * (1 - 1e-12) for lv in ecm.T_ECM)


def test_a_write_through_l1_keeps_the_measured_time_in_l1():
    """Power9 (write-through L1): the stores' L1-L2 transfer counts with the data in L1; T_nOL is
    lowered by it so that T_ECM in L1 is still the measured time."""
    machine = load_machine("Power9_8335-GTX")
    kernel = _parsed(str(KERNELS / "triad.c"))
    res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"N": 1000})
    parts = ecm_model(res.traffic, res.incore, machine).by_location["L1"]
    assert parts  # the premise: a transfer with the data in L1
    t_core = 3 * sum(c.cycles for c in parts)
    meas = InCoreMeasurement({"N": 1000}, 24000.0, 32768.0, (t_core,) * 3, 1, 0.0, 2e9, 1000, model_t_nol=t_core)
    incore = dataclasses.replace(res.incore, source="measured", T_OL=t_core, T_nOL=t_core, measurement=meas)
    fitted = fit_to_l1(incore, res.traffic, machine)
    assert fitted.T_nOL < t_core and ecm_model(res.traffic, fitted, machine).T_ECM["L1"] == pytest.approx(t_core)
    assert "so that the ECM time in L1 is the measured time" in fitted.notes[-1]


def test_a_bundled_machine_is_refused():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "-p", "ECM",
                "--incore", "measured")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "model of this host" in p.stderr
    assert "'-m host'" in p.stderr


def test_a_yaml_kernel_is_refused():
    p = run_cli("analyze", KERNELS / "daxpy.yml", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "-p", "ECM",
                "--incore", "measured")
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "needs C code" in p.stderr


@pytest.fixture
def host_model(tmp_path) -> Path:
    """A stand-in model of this host: a bundled x86 model with a probe section naming this host
    and portable flags (the benchmark is real)."""
    data = yaml.safe_load(resources.files("loopmodel.machines").joinpath("SkylakeSP_Gold-6148.yml").read_text())
    data["probe"] = {"hostname": socket.gethostname()}
    data["compiler"] = {"gcc": "-O2"}
    path = tmp_path / "host.yml"
    path.write_text(yaml.safe_dump(data))
    return path


@needs_gcc
def test_measured_incore_is_the_l1_composition(host_model):
    """The real command on a (stand-in) model of this host: T_OL is the time measured with the
    data in L1, the ECM prediction for data in L1 equals it, the JSON says how it was measured
    and conforms to the document type."""
    p = run_cli("analyze", KERNELS / "triad.c", "-m", host_model, "-D", "N=100000", "-p", "ECM", "--incore",
                "measured", "--repeat", "2", "--json", timeout=180)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert check("analyze", d) == []
    ic = d["incore"]
    assert ic["source"] == "measured"
    t_ol, t_nol = d["ecm"]["T_OL_cy_per_cl"], d["ecm"]["T_nOL_cy_per_cl"]
    assert t_ol > 0 and t_nol <= t_ol
    assert d["ecm"]["by_location"]["L1"]["T_ECM_cy_per_cl"] == pytest.approx(t_ol)
    m = ic["measurement"]
    assert m["time_min_cy_per_cl"] == pytest.approx(t_ol)
    assert m["time_min_cy_per_cl"] <= m["time_median_cy_per_cl"] <= m["time_max_cy_per_cl"]
    assert m["spread"] == pytest.approx(m["time_max_cy_per_cl"] / m["time_min_cy_per_cl"] - 1)
    assert m["data_set_B"] == 24 * m["defines"]["N"] <= m["l1_B"] / 2 and m["repetitions"] >= 2
    assert m["flags"] == ["-O2"] and m["inner_trips"] == m["defines"]["N"]
    assert any("in-core time measured on this host" in n for n in d["notes"])
    assert any(f"in-core measured at N={m['defines']['N']}" in n for n in d["notes"])


@needs_gcc
def test_validate_shows_modelled_and_measured_incore(host_model):
    """validate: per size the modelled in-core time (T_ECM in L1) beside the time measured with
    the data in L1: the row's own measurement where its data are in L1, else the kernel at
    sizes scaled into L1."""
    p = run_cli("validate", KERNELS / "triad.c", "-m", host_model, "-D", "N=400", "-D", "N=300000",
                "--repeat", "2", "--json", timeout=240)
    assert p.returncode == 0, p.stderr
    d = json.loads(p.stdout)
    assert check("validate", d) == []
    small, large = d["points"]
    assert small["data_location"] == "L1" and large["data_location"] != "L1"
    assert small["incore_measured_cy_per_cl"] == small["measured_min_cy_per_cl"]
    assert small["incore_measured_defines"] == {"N": 400}
    assert small["incore_modelled_cy_per_cl"] == pytest.approx(small["predicted_cy_per_cl"])
    assert 0 < large["incore_measured_defines"]["N"] < 300000 and large["incore_measured_cy_per_cl"] > 0
    assert math.isfinite(large["incore_modelled_cy_per_cl"])
    assert any(n.startswith(f"in-core measured at N={large['incore_measured_defines']['N']} for N=300000")
               for n in d["notes"])


def test_sweep_measures_in_one_worker_only(tmp_path):
    study = tmp_path / "study.yml"
    study.write_text(f"kernels: [{KERNELS / 'triad.c'}]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {{N: 1000}}\n"
                     "options: {incore: [measured]}\n")
    p = run_cli("sweep", study, "-o", tmp_path / "out.parquet", "--workers", "2")
    assert p.returncode == 2 and "--workers 1" in p.stderr and p.stderr.count("\n") == 1
