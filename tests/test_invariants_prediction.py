"""One owner per fact: the :class:`~loopmodel.models.prediction.Prediction` of an analysis point and
every figure read from it, over random kernels, the bundled machines, sizes and core counts
(:mod:`kernel_strategies`), and the cases where two owners gave two answers.

* The data location is the level beyond the farthest link carrying loads or write-backs (a
  write-through level's stores do not count), and every consumer reads that one location.
* T_ECM of a level beyond the data location equals T_ECM there: the links beyond carry nothing
  (but a write-through level's stores, there in both columns), so the overlap rule cannot change
  (TX2's "all, if Mem involved" applied to a memory column without memory traffic gave 35 for 19).
* The JSON document, the text report, the confidence, ``validate``, ``scaling``'s row n, ``energy`` at
  the machine's clock and ``app`` give the Prediction's figures.
* ``compute-bound`` is T_OL above the data-transfer part of T_ECM at the data location (eq. 4 with
  the machine's overlap rules).
"""
from __future__ import annotations

import json

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import ROOT, run_main_inprocess

from loopmodel.models.application import predict as app_predict
from loopmodel.models.location import data_location
from loopmodel.models.power import ecm_performance
from loopmodel.report import json_report
from loopmodel.workflows.validate import ecm_at_data_level
from loopmodel.ir.application import AppKernel, AppSpec

KERNELS = ROOT / "benchmarks" / "results" / "one-owner" / "kernels"


@st.composite
def _points(draw, machine_names=ks.MACHINES):
    case = draw(ks.kernels(dims=(1, 2, 3)))
    machine = draw(st.sampled_from(machine_names))
    defines = draw(ks.sizes(case, small=1e2, large=1e9))
    m = ks.load(machine)
    cores = draw(st.integers(1, m.cores_per_socket * m.sockets))
    model = draw(st.sampled_from(("contention", "saturation")))
    sweeps = draw(st.sampled_from(("repeated", "single")))
    return case, m, defines, cores, model, sweeps


def _analyze(point):
    case, m, defines, cores, model, sweeps = point
    res = ks.analyze(case, m, defines, models=("ECM",), cores=cores, multicore_model=model, sweeps=sweeps)
    assume(res.ecm.unknown is None)
    return res


@settings(ks.PROPERTY_SETTINGS, max_examples=120)
@given(_points())
def test_the_data_location_is_the_farthest_level_that_serves_data(point):
    res = _analyze(point)
    hierarchy = res.machine.memory_hierarchy
    p = res.prediction
    assert p.location == res.ecm.location == res.location == data_location(res.traffic, hierarchy)
    k = [lv.level for lv in hierarchy].index(p.location)
    for j, lt in enumerate(res.traffic.levels):
        if j >= k:  # beyond the data location: no loads, no write-backs (write-through stores only)
            assert lt.loads_cl == 0 and (lt.stores_cl == 0 or not hierarchy[j].write_back), (j, lt)
    if k > 0:  # the link into the data location serves data
        lt = res.traffic.levels[k - 1]
        assert lt.loads_cl > 0 or (lt.stores_cl > 0 and hierarchy[k - 1].write_back)


@settings(ks.PROPERTY_SETTINGS, max_examples=120)
@given(_points())
def test_levels_beyond_the_data_location_predict_the_same_time(point):
    res = _analyze(point)
    e = res.ecm
    levels = list(e.T_ECM)
    for level in levels[levels.index(e.location):]:
        assert e.T_ECM[level] == pytest.approx(e.selected, rel=1e-12), (level, e.T_ECM)
        assert e.T_transfer[level] == pytest.approx(e.T_transfer[e.location], rel=1e-12)


@settings(ks.PROPERTY_SETTINGS, max_examples=80)
@given(_points())
def test_every_consumer_reads_the_prediction(point):
    res = _analyze(point)
    p = res.prediction
    doc = json_report.to_dict(res)["ecm"]
    assert doc["data_location"] == p.location and doc["multicore_model"] == res.options.multicore_model
    assert doc["selected_T_ECM_cy_per_cl"] == p.single_core_cy_per_cl == res.ecm.T_ECM[p.location]
    assert doc["multicore_cy_per_cl"] == pytest.approx(p.cy_per_cl, rel=1e-12)
    assert res.confidence.level == p.location
    assert ecm_at_data_level(res) == (p.location, p.single_core_cy_per_cl)
    assert p.point.location == p.location and p.point.cores == p.cores
    assert ("compute-bound" in res.confidence.tags) == (res.ecm.T_OL > res.ecm.T_transfer[p.location])
    if p.saturation.cores is not None:
        assert p.location == res.machine.memory_hierarchy[-1].level


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(_points())
def test_energy_and_app_read_the_n_core_prediction(point):
    """``energy`` at the machine's clock and ``app`` give the it/s of the prediction with n active cores."""
    case, m, defines, cores, model, sweeps = point
    res = _analyze(point)
    one = ks.analyze(case, m, defines, models=("ECM",), sweeps=sweeps)
    perf = ecm_performance(one.traffic, one.incore, m, [cores], [m.clock], model, per_cores={cores: res.traffic})
    assert perf[(cores, m.clock)][0] == pytest.approx(res.prediction.point.it_per_s, rel=1e-9)
    spec = AppSpec("app", (AppKernel("k", "k.c", 1, dict(defines)),), "app.yml")
    pred = app_predict(spec, [one], m, [cores], model, per_cores=[{cores: res.ecm}])
    row = pred.kernels[0].scaling.points[0]
    assert row.it_per_s == pytest.approx(res.prediction.point.it_per_s, rel=1e-12)
    assert row.location == res.prediction.location


# --- the cases, before and after (benchmarks/results/one-owner/) ------------------------------

def _run(*args) -> str:
    p = run_main_inprocess(args, ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def test_thunderx2_stencil_in_l3_is_not_given_the_memory_columns_time():
    """3d-7pt at M=N=100 on ThunderX2: no L3-MEM traffic, data in L3. The memory column took TX2's
    "no overlap if memory is involved" rule without memory traffic: 35 cy/CL for 19, and ``scaling``
    printed T_ECM(MEM) = 35 and 502.86 M it/s per core."""
    args = ("examples/kernels/3d-7pt.c", "-m", "ThunderX2_CN9980", "-D", "M=100", "-D", "N=100", "--incore",
            "analytic")
    doc = json.loads(_run("analyze", *args, "--json"))["ecm"]
    assert doc["data_location"] == "L3" and doc["selected_T_ECM_cy_per_cl"] == 19.0
    assert doc["T_ECM_cy_per_cl"]["MEM"] == 19.0 and doc["multicore_cy_per_cl"] == 19.0
    rows = json.loads(_run("scaling", *args, "--cores", "1,2", "--json"))["curves"][0]["points"]
    assert [r["data_in"] for r in rows] == ["L3", "L3"]
    assert rows[0]["it_s"] == pytest.approx(8 * 2.2e9 / 19.0, rel=1e-12)  # 926.3 M it/s


def test_analyze_cores_and_scaling_give_one_n_core_answer():
    """Triad, SkylakeSP, N=10^7, 4 cores: ``analyze --cores 4`` said 3.35 G it/s (saturation) and ``scaling``
    2.69 G (contention); both now use the contention model unless told otherwise, and say which (2.62 G
    now that the in-core time is gcc's 256-bit code)."""
    args = ("examples/kernels/triad.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=10000000", "--incore", "analytic")
    doc = json.loads(_run("analyze", *args, "--cores", "4", "--json"))["ecm"]
    row = json.loads(_run("scaling", *args, "--cores", "4", "--json"))["curves"][0]["points"][0]
    assert doc["multicore_model"] == "contention"
    assert doc["performance"]["it_s"] == pytest.approx(row["it_s"], rel=1e-12)
    assert row["it_s"] == pytest.approx(2.62e9, rel=0.01)
    text = _run("analyze", *args, "--cores", "4", "--multicore-model", "saturation")
    assert "4 cores, data in MEM: 5.93 cy/CL" in " ".join(text.split())


def test_write_through_stores_do_not_move_the_data_location():
    """A 3.2 KB triad on Power9 (write-through L1): the stores on the L1-L2 link made the data
    location L2 (bands, validation groups, tags); the data are in L1."""
    doc = json.loads(_run("analyze", str(KERNELS / "triad-small.c"), "-m", "Power9_8335-GTX", "-D", "N=100",
                          "--incore", "analytic", "--json"))
    assert doc["traffic"][0]["stores_cl_per_cl"] == 1 and doc["traffic"][0]["loads_cl_per_cl"] == 0
    assert doc["ecm"]["data_location"] == "L1" and doc["confidence"]["level"] == "L1"


def test_saturation_beyond_a_domain_is_not_called_saturating():
    """n_s = 30 on Skylake SP's 20-core domain: "saturating at 30 cores per ccNUMA domain" named a point
    the domain never reaches."""
    text = " ".join(_run("analyze", str(KERNELS / "many-div.c"), "-m", "SkylakeSP_Gold-6148", "-D",
                         "N=100000000", "--incore", "analytic").split())
    assert "no saturation within a ccNUMA domain (n_s = 30 > its 20 cores)" in text
    assert "saturating at 30" not in text


def test_in_place_sweeps_on_several_cores_say_what_the_figure_assumes():
    """``app`` scaled the Gauss-Seidel sweeps 1.98x on 2 cores despite the ``x[j-1][i]`` dependency, with
    no note; ``analyze --cores 2`` likewise."""
    app = _run("app", "examples/pcg/pcg.yml", "-m", "SkylakeSP_Gold-6148", "--cores", "1,2", "--incore", "analytic")
    flat = " ".join(app.split())
    assert "gs forward: values updated in the sweep feed later iterations" in flat
    assert "stencil: values updated" not in flat
    args = (str(KERNELS / "gauss-seidel.c"), "-m", "SkylakeSP_Gold-6148", "-D", "M=1000", "-D", "N=1000",
            "--incore", "analytic")
    assert "values updated in the sweep" in " ".join(_run("analyze", *args, "--cores", "2").split())
    assert "values updated in the sweep" not in " ".join(_run("analyze", *args).split())
