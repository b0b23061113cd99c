"""Invariants of the multicore, Roofline and bandwidth figures, over random kernels, the bundled
machines and random sizes (:mod:`kernel_strategies`), and the cases that broke them.

* ``analyze --cores n`` equals row n of ``scaling`` (one function, :func:`loopmodel.models.scaling.core_point`,
  on the analysis with n active cores: the shared caches and the data set split among them).
* Roofline(n) never falls when a core is added and doubles from one socket's cores to both sockets'.
* ``--mem-bw`` is a bus bandwidth (write-allocate traffic included): the machine file's converted
  figure given as ``--mem-bw`` reproduces the default.
* The CPU roof says what it is (T_OL, or the peak at its precision where T_OL is unknown).
* T_ECM (eq. 4 with the machine's overlap rule) is at least each sum it is built from.
* ``--unit`` conversions round-trip.
"""
from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from helpers import ROOT, run_main_inprocess

import loopmodel
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.errors import ModelError
from loopmodel.machine.bandwidth import choose_bandwidth, write_allocate_factor
from loopmodel.models.roofline import PEAK_SOURCE, TOL_SOURCE, roofline_model
from loopmodel.models.scaling import scaling
from loopmodel.report.output_units import UNITS, convert

SKX = "SkylakeSP_Gold-6148"
FIVE = "examples/kernels/2d-5pt.c"
TRIAD = "examples/kernels/triad.c"
COPY = "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i];\n"


def _multicore(res):
    """The aggregate cy/CL of ``analyze --cores n`` for an analysis result (its prediction's)."""
    return res.prediction.cy_per_cl


def _json(*args) -> dict:
    p = run_main_inprocess(args, ROOT)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def _text(*args) -> str:
    p = run_main_inprocess(args, ROOT)
    assert p.returncode == 0, p.stderr
    return p.stdout


def _total(machine) -> int:
    return machine.cores_per_socket * machine.sockets


# --- analyze --cores n == scaling row n ------------------------------------------------------

def test_data_set_in_the_shared_l3_stays_there_in_analyze_cores_as_in_scaling():
    """2d-5pt, M=2000, N=500 (15.2 MiB) on Skylake SP: the data set fits the shared 27.5 MiB L3. ``analyze
    --cores 20`` compared it with one core's 1/20 of L3 (whole data set: L3 only up to N = 79) and
    predicted L3-MEM traffic and 4.46 Git/s; ``scaling`` said no memory traffic. Both now split the
    data set among the cores: at 10 cores it stays in L3, at 20 cores each core's 0.76 MiB part even
    in its private L2, and row n of ``scaling`` (either model: nothing saturates) is ``analyze --cores n``."""
    args = (FIVE, "-m", SKX, "-D", "M=2000", "-D", "N=500", "--incore", "analytic")
    sc = _json("scaling", *args, "--cores", "1:20", "--model", "both", "--json")
    for n in (10, 20):
        an = _json("analyze", *args, "--cores", str(n), "--json")
        mem = an["traffic"][-1]
        assert (mem["loads_cl_per_cl"], mem["stores_cl_per_cl"]) == (0, 0)
        l3 = next(lv for lv in an["layer_conditions"] if lv["level"] == "L3")
        assert l3["whole_data_set"]["held"] and l3["whole_data_set"]["max_size_exact"] > 500
        for curve in sc["curves"]:
            row = curve["points"][n - 1]
            assert row["cores"] == n
            assert row["it_s"] == pytest.approx(an["ecm"]["performance"]["it_s"], rel=1e-12)
            assert row["T_ECM_cy_per_cl"] == pytest.approx(an["ecm"]["selected_T_ECM_cy_per_cl"], rel=1e-12)
            assert row["data_in"] == an["ecm"]["data_location"]
    rows = sc["curves"][0]["points"]
    one = _json("analyze", *args, "--json")["ecm"]["T_ECM_cy_per_cl"]  # data in L3, in L3, in L2:
    assert [rows[n - 1]["T_ECM_cy_per_cl"] for n in (1, 10, 20)] == pytest.approx([one["L3"], one["L3"], one["L2"]])
    assert one["L2"] < one["L3"]
    text = " ".join(_text("analyze", *args, "--cores", "20", "-p", "LC").split())
    assert "L3: N <= 79 " not in text and "in the shares of 20 cores, each sweeping its part" in text


def _sizes_and_cores(machine_names=ks.MACHINES, strided=False, large=1e9):
    @st.composite
    def draw(d):
        case = d(ks.kernels(dims=(1, 2, 3), strided=strided))
        machine = d(st.sampled_from(machine_names))
        defines = d(ks.sizes(case, small=1e4, large=large))
        n = d(st.integers(1, _total(ks.load(machine))))
        return case, machine, defines, n
    return draw()


@settings(ks.PROPERTY_SETTINGS, max_examples=300)
@given(_sizes_and_cores(), st.sampled_from(("repeated", "single")))
def test_analyze_cores_n_equals_scaling_row_n(example, sweeps):
    """Through the public API: ``analyze(cores=n, multicore_model=m).performance`` (it/s) is row n of
    ``scaling --model m``, for both models; its data location and per-core T_ECM are the row's."""
    case, machine, defines, n = example
    opts = {"incore": "analytic", "sweeps": sweeps}
    for model in ("saturation", "contention"):
        an = loopmodel.analyze(case.source, machine, defines, models=("ECM",), cores=n, unit="it/s",
                               multicore_model=model, **opts)
        assume(an.analysis.ecm.unknown is None)
        sc = loopmodel.scaling(case.source, machine, defines, cores=[1, n], model=model, **opts)
        row, p = sc.curves[0].points[-1], an.analysis.prediction
        assert row.cores == n and row.location == p.location
        assert row.core_cy_per_cl == pytest.approx(p.single_core_cy_per_cl, rel=1e-12)
        assert row.it_per_s == pytest.approx(an.performance, rel=1e-12), model


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(_sizes_and_cores(machine_names=("IvyBridgeEP_E5-2690v2", SKX, "Zen_EPYC-7451"), strided=True, large=3e7))
def test_simulated_traffic_splits_the_data_set_as_the_layer_conditions(example):
    """With ``-P sim`` too, ``analyze --cores n`` is ``scaling``'s row n, and where a level holds the
    data set's parts of n cores by the layer conditions, the simulation of one core's part loads nothing
    from beyond it."""
    case, machine, defines, n = example
    m = ks.load(machine)
    one = ks.analyze(case, m, defines, models=("ECM",), cache_predictor="sim")
    assume(one.ecm.unknown is None and one.simulation is not None)
    at_n = Analyzer(case.kernel, m, AnalyzerSettings(models=("ECM",), incore="analytic", cache_predictor="sim",
                                             kernel_text=case.source)).run(defines, cores=n)
    row = scaling(one.ecm, m, [n], one.traffic.iterations_per_unit, "contention", per_cores={n: at_n.ecm}).points[0]
    assert 1.0 / row.rate_cl_per_cy == pytest.approx(_multicore(at_n), rel=1e-12)
    lc = ks.analyze(case, m, defines, models=("ECM",), cores=n)
    held = next((k for k, lv in enumerate(lc.lc_levels) if lv.holds_data_set), None)
    if held is not None and lc.lc_levels[held].data_set.requirement_bytes < 0.5 * lc.lc_levels[held].capacity:
        assert at_n.traffic.levels[held].loads_cl == pytest.approx(0, abs=0.05)


# --- Roofline and sockets --------------------------------------------------------------------

def test_roofline_doubles_across_two_sockets():
    """Triad on Skylake SP: 3.31 Git/s at 20 and at 40 cores (the 20-core measurement for 40 cores,
    no note) while the ECM multicore time halved. The bandwidths of the two sockets now add up."""
    args = (TRIAD, "-m", SKX, "-D", "N=10000000", "-p", "Roofline", "-p", "ECM", "--incore", "analytic", "--json")
    r20, r40 = (_json("analyze", *args, "--cores", str(n)) for n in (20, 40))
    assert r20["roofline"]["bottleneck"] == r40["roofline"]["bottleneck"] == "MEM"
    assert r40["roofline"]["performance_it_s"] == pytest.approx(2 * r20["roofline"]["performance_it_s"])
    assert r40["ecm"]["performance"]["it_s"] == pytest.approx(2 * r20["ecm"]["performance"]["it_s"])
    mem20, mem40 = (r["roofline"]["levels"][-1] for r in (r20, r40))
    assert mem40["measured_cores"] == 2 * mem20["measured_cores"]
    assert any("added over the 2 domains in use" in n for n in r40["notes"])
    assert not any("domains in use" in n for n in r20["notes"])


def _bench_machines() -> tuple:
    """Machines with measured bandwidths for every level (the Roofline's)."""
    return tuple(n for n in ks.MACHINES if all(ks.load(n).benchmarks.measurements.get(lv.level)
                                               for lv in ks.load(n).memory_hierarchy))


@settings(ks.PROPERTY_SETTINGS, max_examples=300)
@given(ks.kernels(dims=(1, 2, 3)), st.sampled_from(_bench_machines()), st.data())
def test_roofline_never_falls_with_more_cores_and_doubles_over_sockets(case, machine, data):
    """For the same traffic per CL, the Roofline of n cores is non-decreasing in n (every roof is: the
    peak times n, the best bandwidth measured with at most each domain's active cores, added over the
    domains in use) and exactly doubles from the cores of one ccNUMA domain (socket) to twice as many."""
    m = ks.load(machine)
    defines = data.draw(ks.sizes(case))
    res = ks.analyze(case, m, defines, models=("ECM",))
    assume(res.incore.T_OL is not None)
    perf = [roofline_model(case.kernel, res.traffic, res.incore, m, n).performance for n in range(1, _total(m) + 1)]
    assert all(b >= a * (1 - 1e-12) for a, b in zip(perf, perf[1:]))
    per = m.cores_per_numa_domain
    for k in range(1, _total(m) // per):
        if per * 2 * k <= _total(m):
            assert perf[2 * k * per - 1] == pytest.approx(2 * perf[k * per - 1], rel=1e-12)


@settings(ks.PROPERTY_SETTINGS, max_examples=150)
@given(ks.kernels(dims=(1, 2, 3)), st.sampled_from(_bench_machines()), st.data())
def test_analyze_roofline_doubles_over_sockets_where_the_traffic_is_the_same(case, machine, data):
    """Through the analysis: where the traffic per CL of one domain's cores and of twice as many is the
    same (a data set far beyond the caches), the Roofline (and the ECM multicore rate) doubles."""
    m = ks.load(machine)
    assume(m.sockets * m.numa_domains_per_socket >= 2)
    defines = data.draw(ks.sizes(case, small=1e8, large=1e9))
    per = m.cores_per_numa_domain
    a, b = (ks.analyze(case, m, defines, models=("ECM", "Roofline"), cores=n) for n in (per, 2 * per))
    assume(a.roofline is not None and a.roofline.performance is not None)
    assume(all((x.loads_cl, x.stores_cl) == (y.loads_cl, y.stores_cl)
               for x, y in zip(a.traffic.levels, b.traffic.levels)))
    assert b.roofline.performance == pytest.approx(2 * a.roofline.performance, rel=1e-12)
    assert _multicore(a) == pytest.approx(2 * _multicore(b), rel=1e-12)


# --- --mem-bw: one meaning -------------------------------------------------------------------

def test_mem_bw_is_the_bus_bandwidth_and_the_converted_table_figure_reproduces_the_default(tmp_path):
    """Copy on Skylake SP: the machine file's copy figure (71.39 GB/s at 16 cores, as STREAM counts it)
    is used as 107.1 GB/s (x 1.5: the write-allocate load of each written line); ``--mem-bw`` was used
    as given, undocumented. It is the bus bandwidth: 107.1 GB/s reproduces the default, 71.39 GB/s is
    1.5x slower on the memory link, the help, the note and the JSON say so."""
    kernel = tmp_path / "copy.c"
    kernel.write_text(COPY)
    m = ks.load(SKX)
    ch = choose_bandwidth(m, "MEM", 2, 1)
    assert ch.kernel == "copy" and ch.reported == pytest.approx(71.39e9) and ch.cores == 16
    assert ch.bandwidth == pytest.approx(1.5 * 71.39e9) and write_allocate_factor(m.benchmarks.kernels["copy"]) == 1.5
    args = ("analyze", str(kernel), "-m", SKX, "-D", "N=100000000", "-p", "ECM", "--incore", "analytic", "--json")
    default = _json(*args)
    same = _json(*args, "--mem-bw", f"{ch.bandwidth / 1e9!r} GB/s")
    stream = _json(*args, "--mem-bw", "71.39 GB/s")

    def mem(doc):
        return next(c for c in doc["ecm"]["contributions"] if c["name"] == "L3MEM")
    assert same["ecm"]["T_ECM_cy_per_cl"] == pytest.approx(default["ecm"]["T_ECM_cy_per_cl"], rel=1e-12)
    assert mem(stream)["busy_cy_per_cl"] == pytest.approx(1.5 * mem(default)["busy_cy_per_cl"])
    assert "x 1.5 for write-allocate traffic" in mem(default)["bandwidth_source"]
    assert mem(same)["bandwidth_source"].startswith("--mem-bw: the memory bus bandwidth")
    assert any(n.startswith("--mem-bw 71.39 GB/s is the memory bus bandwidth") and "107.1 GB/s" in n
               for n in stream["notes"])
    helptext = " ".join(_text("analyze", "--help").split())
    assert "memory bus bandwidth" in helptext and "write-allocate traffic included" in helptext
    docs = " ".join((ROOT / "docs" / "concepts" / "ecm.md").read_text().split())
    assert "`--mem-bw BW` sets the ECM memory link to a *bus* bandwidth" in docs


def test_mem_bw_is_not_ignored_where_the_machine_file_gives_the_memory_bandwidth():
    """Zen's memory link has a bandwidth in the machine file, not ``measured``: ``--mem-bw`` was ignored."""
    args = ("analyze", TRIAD, "-m", "Zen_EPYC-7451", "-D", "N=100000000", "-p", "ECM", "--incore", "analytic",
            "--json")
    default, fast = _json(*args), _json(*args, "--mem-bw", "59.8 GB/s")  # twice the file's 29.9 GB/s
    assert fast["ecm"]["memory_busy_cy_per_cl"] == pytest.approx(default["ecm"]["memory_busy_cy_per_cl"] / 2)


@settings(ks.PROPERTY_SETTINGS, max_examples=300)
@given(ks.kernels(dims=(1, 2, 3)), ks.machines(), st.data())
def test_giving_the_default_bus_bandwidth_as_mem_bw_reproduces_the_default(case, machine, data):
    """For every machine and kernel: ``--mem-bw`` set to the bandwidth the default uses on the memory
    link (the converted benchmark figure, or the machine file's) changes no figure of the ECM model."""
    defines = data.draw(ks.sizes(case))
    try:
        default = ks.analyze(case, machine, defines, models=("ECM",))
    except ModelError:
        assume(False)
    mem = [c for c in default.ecm.contributions if c.name.endswith("MEM")]
    assume(mem and len({c.bandwidth for c in mem}) == 1 and len(set(mem[0].bandwidth)) == 1)
    bw = mem[0].bandwidth[0] * machine.clock
    given_bw = ks.analyze(case, machine, defines, models=("ECM",), memory_bandwidth=bw)
    assert given_bw.ecm.T_transfer == pytest.approx(default.ecm.T_transfer, rel=1e-12)
    assert given_bw.ecm.memory_busy == pytest.approx(default.ecm.memory_busy, rel=1e-12)
    assert given_bw.ecm.saturation_cores == default.ecm.saturation_cores


# --- the CPU roof says what it is -------------------------------------------------------------

def test_cpu_roof_of_a_kernel_without_flops_is_t_ol_and_says_so(tmp_path):
    """Copy has no FLOPs: the CPU roof is T_OL / cores, labelled 'peak FLOP/s' before."""
    kernel = tmp_path / "copy.c"
    kernel.write_text(COPY)
    doc = _json("analyze", str(kernel), "-m", SKX, "-D", "N=1000", "-p", "Roofline", "--incore", "analytic", "--json")
    r = doc["roofline"]
    assert r["cpu_roof_source"] == "T_OL of the analytic in-core model"
    assert r["cpu_time_cy_per_cl"] == pytest.approx(doc["incore"]["T_OL_cy_per_cl"])
    assert r["cpu_performance_it_s"] == pytest.approx(8 * 2.4e9 / r["cpu_time_cy_per_cl"])


@pytest.mark.parametrize("types,peak", [(("float", "float"), "SP"), (("double", "double"), "DP"),
                                        (("float", "double"), "DP")])
def test_cpu_roof_precision_follows_the_operand_types(types, peak):
    """The precision was the largest element size; a float kernel with a double coefficient computes in
    double (C's conversions), and a mixed kernel gets a note giving both figures."""
    src = f"{types[0]} a[N], b[N];\n{types[1]} s;\nfor (int i = 0; i < N; ++i)\n    a[i] = s * b[i] + b[i];\n"
    res = loopmodel.analyze(src, SKX, {"N": 1000}, models=("Roofline",), incore="analytic").analysis
    fpc = res.machine.in_core.flops_per_cycle[peak]
    assert res.roofline.cpu_source == TOL_SOURCE.format(source="analytic")
    # the peak is the CPU roof only where T_OL is unknown
    roof = roofline_model(res.kernel, res.traffic, dataclasses.replace(res.incore, T_OL=None), res.machine)
    assert roof.cpu_source == PEAK_SOURCE
    assert roof.cpu_performance == pytest.approx(fpc.FMA * res.machine.clock)
    mixed = [n for n in roof.notes if "mixes float and double" in n]
    assert bool(mixed) == (types == ("float", "double"))


# --- T_ECM and its sums -----------------------------------------------------------------------

@settings(ks.PROPERTY_SETTINGS, max_examples=500)
@given(ks.kernels(dims=(1, 2, 3)), ks.machines(), st.data())
def test_t_ecm_is_at_least_every_sum_it_is_built_from(case, machine, data):
    """Eq. 4 with the machine's overlap rule: T_ECM for data in each level is at least T_OL, at least
    the sum of T_nOL and every transfer that does not overlap, and at least each one that does. The
    "all, if Mem involved" rule (TX2) follows the memory traffic of the column, not its name: a MEM
    column without traffic into memory overlaps as a cache's does."""
    defines = data.draw(ks.sizes(case))
    n = data.draw(st.integers(1, _total(machine)))
    try:
        e = ks.analyze(case, machine, defines, models=("ECM",), cores=n).ecm
    except ModelError:
        assume(False)
    for level, parts in e.by_location.items():
        to_memory = any(c.name.endswith("MEM") and c.cycles > 0 for c in parts)
        overlap = set(machine.overlap) | (set() if to_memory else set(machine.overlap_unless_memory))
        items = [("T_nOL", e.T_nOL)] + [(c.name, c.cycles) for c in parts]
        lower = [sum(v for k, v in items if k not in overlap)] + [v for k, v in items if k in overlap]
        assert e.T_transfer[level] >= max(lower) * (1 - 1e-12)
        if e.T_OL is not None:
            assert e.T_ECM[level] >= max([e.T_OL] + lower) * (1 - 1e-12)
            assert e.T_ECM[level] == pytest.approx(max(e.T_OL, e.T_transfer[level]), rel=1e-12)


# --- --unit round trip ------------------------------------------------------------------------

def _back(value: float, unit: str, it_cl: float, clock: float, flops: float) -> float:
    """cy/CL from ``value`` in ``unit`` (the inverse of report.units.convert, from its docstring)."""
    if unit == "cy/CL":
        return value
    if unit == "cy/it":
        return value * it_cl
    it_s = value / flops if unit == "FLOP/s" else value
    return clock / it_s * it_cl


@settings(ks.PROPERTY_SETTINGS, max_examples=2000)
@given(st.floats(1e-3, 1e6), st.sampled_from(UNITS), st.sampled_from((0.25, 1, 2, 8, 16, 64, 1 / 3)),
       st.floats(1e8, 1e10), st.integers(0, 40))
def test_unit_conversions_round_trip(cy_cl, unit, it_cl, clock, flops):
    """cy/CL -> unit -> cy/CL gives the value back; it/s = LUP/s, FLOP/s = it/s x FLOP/it, cy/it x it/s = f."""
    assume(unit != "FLOP/s" or flops)
    value = convert(cy_cl, unit, it_cl, clock, flops)
    assert _back(value, unit, it_cl, clock, flops) == pytest.approx(cy_cl, rel=1e-12)
    it_s = convert(cy_cl, "it/s", it_cl, clock, flops)
    assert convert(cy_cl, "LUP/s", it_cl, clock, flops) == it_s
    assert convert(cy_cl, "FLOP/s", it_cl, clock, flops) == pytest.approx(it_s * flops, rel=1e-12)
    assert convert(cy_cl, "cy/it", it_cl, clock, flops) * it_s == pytest.approx(clock, rel=1e-12)


@settings(ks.PROPERTY_SETTINGS, max_examples=100)
@given(ks.kernels(dims=(1, 2)), st.sampled_from(ks.MACHINES), st.data())
def test_every_unit_of_analyze_is_the_same_prediction(case, name, data):
    """``analyze --unit U`` gives, for each U, the multicore ECM time in U; converted back to cy/CL all
    agree (the library's Result.performance, as the CLI's ``--unit`` and the JSON ``performance`` block)."""
    defines = data.draw(ks.sizes(case))
    n = data.draw(st.integers(1, _total(ks.load(name))))
    try:
        base = loopmodel.analyze(case.source, name, defines, models=("ECM",), incore="analytic", cores=n)
    except ModelError:
        assume(False)
    res = base.analysis
    assume(res.ecm.T_OL is not None)
    it_cl, flops = res.traffic.iterations_per_unit, res.kernel.flops_per_iteration
    for unit in UNITS:
        value = loopmodel.analyze(case.source, name, defines, models=("ECM",), incore="analytic", cores=n,
                                  unit=unit).performance
        if unit == "FLOP/s" and not flops:
            assert value == 0
            continue
        assert _back(value, unit, it_cl, res.machine.clock, flops) == pytest.approx(_multicore(res), rel=1e-12)
    assert math.isfinite(_multicore(res))


def test_energy_and_app_rows_are_scaling_rows():
    """``energy`` (at the machine's clock) and ``app`` take row n of ``scaling`` too: the same n-core
    analysis (2d-5pt of 15 MiB at 20 cores: in the L2s, not in L3 as for one core)."""
    args = ("-m", SKX, "--incore", "analytic")
    sc = _json("scaling", FIVE, *args, "-D", "M=2000", "-D", "N=500", "--cores", "10,20", "--model", "saturation",
               "--json")["curves"][0]["points"]
    en = _json("energy", FIVE, *args, "-D", "M=2000", "-D", "N=500", "--cores", "10,20", "--model", "saturation",
               "--clock", "2.4 GHz", "--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2", "--json")["points"]
    assert [p["it_s"] for p in en] == pytest.approx([p["it_s"] for p in sc], rel=1e-12)
    app = _json("app", "examples/pcg/pcg.yml", *args, "-D", "M=600", "-D", "N=600", "-c", "1,20", "--json")
    stencil = app["kernels"][0]
    defines = [x for k, v in stencil["defines"].items() for x in ("-D", f"{k}={v}")]
    rows = _json("scaling", stencil["file"], *args, *defines, "--cores", "1,20", "--json")["curves"][0]["points"]
    assert rows[1]["T_ECM_cy_per_cl"] < rows[0]["T_ECM_cy_per_cl"]  # 5.6 MB: in 20 L2s, not in one core's
    for row in rows:
        seconds = stencil["count"] * stencil["iterations_per_invocation"] / row["it_s"]
        assert stencil["time_s"][str(row["cores"])] == pytest.approx(seconds, rel=1e-12)
