"""The chip power model, energy to solution and its optima (ecm-model-slides.txt, "A simple power
model for multicore chips"), the machine file's power section, ``loopmodel energy`` and
``machine probe --power`` with a fake sysfs tree."""
from __future__ import annotations

import json
import math
import os

import pytest
import yaml

from helpers import KERNELS, SNB, analyze, run_cli

from loopmodel.errors import MachineError, ToolError
from loopmodel.fileio.machine_writer import UNITS_COMMENT, machine_text, power_mapping
from loopmodel.machine.fields import power_section
from loopmodel.machine.power import PowerSection
from loopmodel.measure.probe import ProbeOptions
from loopmodel.models.power import chip_power, ecm_performance, energy_grid, operating_point, optima

GHz = 1e9
#: the example coefficients of the command line help (not a measured chip)
W = PowerSection(23.6, 1.9e-9, 1.2e-18)
TRIAD = str(KERNELS / "triad.c")
OPTS = ("--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2")


# --- the formula ---------------------------------------------------------------------------

def test_chip_power_by_hand():
    # 23.6 W + (1.9 W/GHz * 2 GHz + 1.2 W/GHz^2 * 4 GHz^2) * 4 = 23.6 + 8.6 * 4
    assert chip_power(W, 4, 2 * GHz) == pytest.approx(58.0)
    assert chip_power(W, 1, 1 * GHz) == pytest.approx(23.6 + 3.1)
    # 10 cores on 8-core chips: two chips pay W0
    assert chip_power(W, 10, 2 * GHz, cores_per_chip=8) == pytest.approx(2 * 23.6 + 86.0)
    with pytest.raises(ValueError):
        chip_power(W, 0, 2 * GHz)


def test_energy_is_power_over_performance():
    p = operating_point(W, 4, 2 * GHz, 1e9, "memory")
    assert p.power_w == pytest.approx(58.0)
    assert p.energy_j_per_unit == pytest.approx(58.0e-9)  # 58 W / 1e9 it/s
    with pytest.raises(ValueError):
        operating_point(W, 4, 2 * GHz, 0.0)


def test_per_core_power_only_at_its_clock():
    one = PowerSection(20.0, per_core=7.0, at_clock=2.2 * GHz)
    assert chip_power(one, 3, 2.2 * GHz) == pytest.approx(41.0)
    with pytest.raises(ValueError, match="2.2 GHz only"):
        chip_power(one, 3, 2.0 * GHz)


# --- optima --------------------------------------------------------------------------------

def test_optimum_on_a_small_grid_with_a_known_answer():
    perf = {(1, 1 * GHz): (1.0e9, "core"), (2, 1 * GHz): (2.0e9, "core"),
            (1, 2 * GHz): (2.0e9, "core"), (2, 2 * GHz): (3.0e9, "memory")}
    # W: 26.7, 29.8, 32.2, 40.8 W -> E: 26.7, 14.9, 16.1, 13.6 nJ/it
    r = energy_grid(perf, W)
    e = {(p.cores, p.clock_hz): p.energy_j_per_unit * 1e9 for p in r.points}
    assert e == pytest.approx({(1, GHz): 26.7, (2, GHz): 14.9, (1, 2 * GHz): 16.1, (2, 2 * GHz): 13.6})
    assert (r.energy_optimum.cores, r.energy_optimum.clock_hz) == (2, 2 * GHz)
    assert r.performance_optimum == r.energy_optimum and r.saving == 0 and r.slowdown == 0
    # a faster but costlier point: the performance optimum moves, the energy optimum stays
    perf[(3, 2 * GHz)] = (3.3e9, "memory")  # 49.4 W -> 14.97 nJ/it
    r = energy_grid(perf, W)
    assert (r.performance_optimum.cores, r.energy_optimum.cores) == (3, 2)
    assert r.saving == pytest.approx(1 - 13.6 / (49.4 / 3.3), rel=1e-6)
    assert r.slowdown == pytest.approx(1 - 3.0 / 3.3)


def test_equal_performance_prefers_less_energy():
    perf = {(4, 1 * GHz): (1e9, "memory"), (4, 2 * GHz): (1e9, "memory"), (8, 1 * GHz): (1e9, "memory")}
    r = energy_grid(perf, W)
    assert (r.performance_optimum.cores, r.performance_optimum.clock_hz) == (4, 1 * GHz)
    with pytest.raises(ValueError):
        optima(())


def _grid(perf_fn, cores, clocks):
    return {(n, f): (perf_fn(n, f), "") for n in cores for f in clocks}


def test_core_bound_all_cores_at_the_clock_of_least_energy():
    """P = n·f·c: E = W0/(n f c) + (W1 + W2 f)/c falls with n; least at f = sqrt(W0 / (W2 n))."""
    clocks = [round(1.0 + 0.1 * i, 1) * GHz for i in range(21)]  # 1.0 .. 3.0 GHz
    r = energy_grid(_grid(lambda n, f: 0.5 * n * f, range(1, 9), clocks), W)
    assert r.energy_optimum.cores == 8
    # E = W0/(n f) + W1 + W2 f per unit of work is least at f = sqrt(W0 / (W2 n)) = sqrt(23.6 / 9.6) GHz
    best = math.sqrt(W.w0 / (W.w2 * 8))
    assert best == pytest.approx(1.568 * GHz, rel=1e-3)
    assert r.energy_optimum.clock_hz == pytest.approx(1.6 * GHz)  # the grid clock nearest in E
    assert (r.performance_optimum.cores, r.performance_optimum.clock_hz) == (8, 3 * GHz)
    # a large baseline pushes the optimum to the highest clock ("race to idle")
    r = energy_grid(_grid(lambda n, f: 0.5 * n * f, range(1, 9), clocks), PowerSection(500.0, 1.9e-9, 1.2e-18))
    assert (r.energy_optimum.cores, r.energy_optimum.clock_hz) == (8, 3 * GHz)


def test_bandwidth_bound_optimum_at_the_saturation_point_of_the_lowest_clock_that_is_not_slower():
    """P = min(n·f·c, P_sat): the saturation point n_s(f) = P_sat / (f c) moves to fewer cores at a
    higher clock; the optimum is at n_s of the lowest clock whose cores still saturate."""
    c, p_sat = 0.5, 0.5 * 6 * GHz  # saturates at 6 cores at 1 GHz, 3 at 2 GHz, 2 at 3 GHz
    clocks = [1 * GHz, 1.5 * GHz, 2 * GHz, 3 * GHz]
    r = energy_grid(_grid(lambda n, f: min(n * f * c, p_sat), range(1, 9), clocks), W)
    e = r.energy_optimum
    assert e.it_per_s == pytest.approx(p_sat) and r.slowdown == pytest.approx(0)
    assert (e.cores, e.clock_hz) == (6, 1 * GHz)
    # the performance optimum among the equally fast points is the same
    assert r.performance_optimum == e
    # at every clock, the best point of that clock is its saturation point
    for f in clocks:
        best = min((p for p in r.points if p.clock_hz == f), key=lambda p: p.energy_j_per_unit)
        assert best.cores == math.ceil(p_sat / (f * c) - 1e-9)


def test_ecm_performance_clock_scaling_and_saturation():
    """The ECM at clock f: core-bound work scales with f, memory bandwidth does not."""
    res = analyze("triad.c", SNB, {"N": 10_000_000})
    m = res.machine
    perf = ecm_performance(res.traffic, res.incore, m, list(range(1, 9)), [1.2 * GHz, 2.7 * GHz], "saturation")
    sat_lo, sat_hi = perf[(8, 1.2 * GHz)][0], perf[(8, 2.7 * GHz)][0]
    assert sat_lo == pytest.approx(sat_hi)  # saturated bandwidth in B/s: the same at both clocks
    assert perf[(1, 2.7 * GHz)][0] > perf[(1, 1.2 * GHz)][0]  # one core: faster at a higher clock
    assert perf[(1, 2.7 * GHz)][0] < 2.25 * perf[(1, 1.2 * GHz)][0]  # ...but less than f (memory time)
    r = energy_grid(perf, W, m.cores_per_socket, "saturation")
    from loopmodel.models.ecm import ecm_model
    import dataclasses
    mf = dataclasses.replace(m, clock=r.energy_optimum.clock_hz)
    ns = ecm_model(res.traffic, res.incore, mf).saturation.cores
    assert r.energy_optimum.cores == ns and r.energy_optimum.limit == "memory"
    # in L1 (core-bound): all cores
    core = ecm_performance(res.traffic, res.incore, m, list(range(1, 9)), [1.2 * GHz, 2.0 * GHz], location="L1")
    assert energy_grid(core, W, 8).energy_optimum.cores == 8


# --- machine file --------------------------------------------------------------------------

SECTION = {"W0": "23.6 W", "W1": "1.9 W/GHz", "W2": "1.2 W/GHz^2", "clock range": ["1.2 GHz", "2.7 GHz"],
           "clock step": "0.1 GHz", "source": "example", "notes": ["a note"]}


def _snb_mapping():
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.fileio.machine_writer import machine_mapping

    return machine_mapping(load_machine(SNB))


def test_power_section_reads_with_units_and_round_trips():
    s = power_section(SECTION)
    assert (s.w0, s.w1, s.w2) == pytest.approx((23.6, 1.9e-9, 1.2e-18))
    assert (s.clock_min, s.clock_max, s.clock_step) == pytest.approx((1.2e9, 2.7e9, 1e8))
    assert power_mapping(s) == SECTION and power_section(power_mapping(s)) == s
    one = power_section({"W0": "20 W", "per core": "7.13 W", "at clock": "2.2 GHz", "source": "probe"})
    assert not one.separable and power_section(power_mapping(one)) == one
    assert power_section({"W0": "20000 mW", "W1": "1900 W/MHz", "W2": "0 W/GHz^2"}).w1 == pytest.approx(1.9e-3)


def test_machine_file_with_power_section_round_trips_through_the_writer(tmp_path):
    from loopmodel.fileio.machine_files import load_machine

    assert load_machine(SNB).power is None  # existing files load unchanged
    d = _snb_mapping()
    d["power"] = SECTION
    text = machine_text(d, ["test", UNITS_COMMENT])
    path = tmp_path / "snb-power.yml"
    path.write_text(text)
    m = load_machine(str(path))
    assert m.power == power_section(SECTION)
    shown = run_cli("machine", "show", str(path))
    assert shown.returncode == 0 and yaml.safe_load(shown.stdout)["power"] == SECTION


@pytest.mark.parametrize("bad, message", [
    ({"W1": "1 W/GHz", "W2": "1 W/GHz^2"}, "'W0' is missing"),
    ({"W0": "23.6"}, "'W0': '23.6' has no unit"),
    ({"W0": "23.6 W", "W1": "1.9 W", "W2": "0 W/GHz^2"}, "'W1': cannot read '1.9 W' as a quantity in W/GHz"),
    ({"W0": "23.6 W", "W1": "1.9 W/GHz"}, "give both W1 and W2"),
    ({"W0": "-1 W", "W1": "1 W/GHz", "W2": "0 W/GHz^2"}, "must be zero or positive"),
    ({"W0": "1 W", "W1": "1 W/GHz", "W2": "0 W/GHz^2", "clock range": ["2 GHz"]}, "must be two clocks"),
    ({"W0": "1 W", "W1": "1 W/GHz", "W2": "0 W/GHz^2", "clock range": ["3 GHz", "2 GHz"]}, "must not exceed"),
    ({"W0": "1 W", "W1": "-1 W/GHz", "W2": "0 W/GHz^2", "clock range": ["1 GHz", "2 GHz"]}, "must be positive"),
    ({"W0": "1 W", "watts": 3}, "unknown key 'watts'"),
    ("23.6 W", "must be a mapping"),
])
def test_power_section_errors_are_one_line_naming_file_and_key(bad, message):
    from loopmodel.fileio.machine_schema import validate_mapping

    d = _snb_mapping()
    d["power"] = bad
    with pytest.raises(MachineError) as exc:
        validate_mapping(d, "my.yml")
    text = str(exc.value)
    assert "\n" not in text and text.startswith("my.yml: power") and message in text


# --- the command ---------------------------------------------------------------------------

def test_energy_json_has_every_point_both_optima_and_the_saving():
    r = run_cli("energy", TRIAD, "-m", SNB, "-D", "N=10000000", "--cores", "1:4", "--clock", "1.2:2.7:0.5 GHz",
                *OPTS, "--model", "saturation", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert len(doc["points"]) == 4 * 4  # 1.2, 1.7, 2.2, 2.7 GHz
    p = doc["points"][0]
    assert set(p) >= {"cores", "clock_Hz", "power_W", "it_s", "energy_J_per_unit", "work_unit"} and p["work_unit"] == "it"
    assert p["power_W"] == pytest.approx(23.6 + 1.9 * 1.2 + 1.2 * 1.44)
    assert p["energy_J_per_unit"] == pytest.approx(p["power_W"] / p["it_s"])
    e, perf = doc["optimum"], doc["performance_optimum"]
    assert e["energy_J_per_unit"] == min(q["energy_J_per_unit"] for q in doc["points"])
    assert perf["it_s"] == pytest.approx(max(q["it_s"] for q in doc["points"]))
    assert doc["saving"]["energy_fraction"] == pytest.approx(1 - e["energy_J_per_unit"] / perf["energy_J_per_unit"])
    assert doc["notes"] and doc["power"]["W0_W"] == 23.6 and doc["power"]["W2_W_per_Hz2"] == pytest.approx(1.2e-18)
    ref = doc["reference"]  # all cores at the highest clock
    assert (ref["cores"], ref["clock_Hz"]) == (4, 2.7e9)
    assert doc["saving"]["vs_all_cores_highest_clock_fraction"] == pytest.approx(
        1 - e["energy_J_per_unit"] / ref["energy_J_per_unit"])


def test_energy_table_and_plot(tmp_path):
    png = tmp_path / "z.png"
    r = run_cli("energy", TRIAD, "-m", SNB, "-D", "N=10000000", "--cores", "1:8", "--clock", "1.2,2.0,2.7 GHz",
                *OPTS, "--plot", png)
    assert r.returncode == 0, r.stderr
    for text in ("energy [nJ/it]", "power [W]", "energy-optimal:", "performance-optimal:", "saving:", "W0 = 23.6 W"):
        assert text in r.stdout
    assert png.stat().st_size > 10_000 and png.read_bytes()[:4] == b"\x89PNG"
    again = run_cli("energy", TRIAD, "-m", SNB, "-D", "N=10000000", *OPTS, "--plot", png)
    assert again.returncode != 0 and "exists" in again.stderr and "Traceback" not in again.stderr


def test_zplot_has_one_line_per_clock_and_both_optima():
    from loopmodel.report.energy import plot

    clocks = [1 * GHz, 2 * GHz]
    r = energy_grid(_grid(lambda n, f: min(0.5 * n * f, 3e9), range(1, 5), clocks), W)
    fig = plot(r, "test", None)
    ax = fig.axes[0]
    labels = [ln.get_label() for ln in ax.get_lines()]
    assert "1 GHz" in labels and "2 GHz" in labels
    assert any(lb.startswith("energy optimum") for lb in labels)
    assert any(lb.startswith("performance optimum") for lb in labels)
    assert "[nJ/it]" in ax.get_ylabel() and "[Git/s]" in ax.get_xlabel()


def test_power_section_of_a_machine_file_is_the_default(tmp_path):
    d = _snb_mapping()
    d["power"] = {**SECTION, "clock range": ["1.2 GHz", "2.2 GHz"], "clock step": "0.5 GHz"}
    path = tmp_path / "snb.yml"
    path.write_text(machine_text(d, ["test"]))
    r = run_cli("energy", TRIAD, "-m", path, "-D", "N=10000000", "--cores", "1:2", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert sorted({p["clock_Hz"] for p in doc["points"]}) == [1.2e9, 1.7e9, 2.2e9]
    # an option replaces the file's coefficient
    r = run_cli("energy", TRIAD, "-m", path, "-D", "N=10000000", "--cores", "1", "--clock", "2 GHz", "--w0",
                "50 W", "--json")
    assert json.loads(r.stdout)["points"][0]["power_W"] == pytest.approx(50 + 3.8 + 4.8)


@pytest.mark.parametrize("args, message", [
    ((), "no power data: the machine model 'SandyBridgeEP_E5-2680' has no power: section; pass --w0, --w1 and --w2"),
    (("--w0", "23.6 W"), "pass --w0, --w1 and --w2"),
    (OPTS + ("--clock", "2.7:1.2:0.1 GHz"), "need start <= stop"),
    (OPTS + ("--clock", "1.2:2.7:0 GHz"), "need start <= stop and a step > 0"),
    (OPTS + ("--clock", "1.2:2.7"), "give clocks with a unit"),
    (OPTS + ("--clock", "a:b:c GHz"), "cannot read the numbers"),
    (("--w0", "23.6 W", "--w1", "1.9 W", "--w2", "1.2 W/GHz^2"), "--w1: 'W1': cannot read '1.9 W'"),
    (("--w0", "23.6", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2"), "--w0: 'W0': '23.6' has no unit"),
    (OPTS + ("--cores", "1:99"), "--cores 1:99"),
    (OPTS + ("--data-in", "L9"), "--data-in L9"),
])
def test_energy_errors_are_one_line(args, message):
    r = run_cli("energy", TRIAD, "-m", SNB, "-D", "N=10000000", *args)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and message in lines[0] and "Traceback" not in r.stderr


# --- probe --power with a fake sysfs tree --------------------------------------------------

def _fake_sysfs(root, packages=1, energy=(0,), max_range=2 ** 32, cpus=2, cpufreq=True,
                available="1200000 1800000 2400000"):
    for p in range(packages):
        d = os.path.join(root, "sys/class/powercap", f"intel-rapl:{p}")
        os.makedirs(os.path.join(d, "intel-rapl:%d:0" % p))
        for name, val in (("energy_uj", energy[p]), ("max_energy_range_uj", max_range), ("name", f"package-{p}")):
            with open(os.path.join(d, name), "w") as fh:
                fh.write(f"{val}\n")
    if cpufreq:
        for c in range(cpus):
            d = os.path.join(root, f"sys/devices/system/cpu/cpu{c}/cpufreq")
            os.makedirs(d)
            for name, val in (("scaling_max_freq", 2400000), ("scaling_available_frequencies", available)):
                with open(os.path.join(d, name), "w") as fh:
                    fh.write(f"{val}\n")


class FakeHost:
    """A chip obeying W = W0 + (W1 f + W2 f²) n: the runner adds its energy to the counters
    (with wrap-around) and advances a fake wall clock."""

    def __init__(self, root, w0=20.0, w1=2.0, w2=1.0, max_range=10 ** 9, fixed_clock=None):
        self.root, self.now, self.coef, self.max_range, self.fixed = root, 0.0, (w0, w1, w2), max_range, fixed_clock
        self.runs = []

    def clock_ghz(self) -> float:
        if self.fixed:
            return self.fixed
        with open(os.path.join(self.root, "sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq")) as fh:
            return int(fh.read()) / 1e6

    def runner(self, cores, seconds):
        f = self.clock_ghz()
        w0, w1, w2 = self.coef
        watts = w0 + (w1 * f + w2 * f * f) * cores
        path = os.path.join(self.root, "sys/class/powercap/intel-rapl:0/energy_uj")
        with open(path) as fh:
            e = int(fh.read())
        with open(path, "w") as fh:
            fh.write(f"{(e + round(watts * seconds * 1e6)) % self.max_range}\n")
        self.now += seconds
        self.runs.append((cores, f))

    def timer(self):
        return self.now


def test_rapl_counters_and_wrap_around(tmp_path):
    from loopmodel.measure.power_probe import energy_delta_uj, rapl_packages, read_energy_uj

    _fake_sysfs(str(tmp_path), packages=2, energy=(5, 7))
    doms = rapl_packages(str(tmp_path))
    assert [d.name for d in doms] == ["package-0", "package-1"]  # the sub-domains are left out
    assert read_energy_uj(doms) == (5, 7)
    assert energy_delta_uj(100, 350, 1000) == 250
    assert energy_delta_uj(900, 50, 1000) == 150  # wrapped once
    with pytest.raises(ToolError, match="no energy counters: /sys/class/powercap not readable"):
        rapl_packages(str(tmp_path / "nothing"))


def test_probe_power_fits_w0_w1_w2_at_settable_clocks_and_restores_the_clock(tmp_path):
    from loopmodel.measure.power_probe import probe_power

    root = str(tmp_path)
    _fake_sysfs(root, energy=(10 ** 9 - 5_000_000,), max_range=10 ** 9)  # the counter wraps during the runs
    host = FakeHost(root, max_range=10 ** 9)
    section, info = probe_power([1, 2], 2.0e9, root, host.runner, seconds=1.0, cpus=(0, 1), timer=host.timer)
    assert sorted(set(f for _, f in host.runs)) == [1.2, 1.8, 2.4]
    assert (section.w0, section.w1 * 1e9, section.w2 * 1e18) == pytest.approx((20.0, 2.0, 1.0), rel=1e-4)
    assert (section.clock_min, section.clock_max) == (1.2e9, 2.4e9)
    assert "fitted to 6 runs at 3 clocks" in " ".join(section.notes) and "RAPL" in section.source
    assert len(info["samples"]) == 6 and info["domains"] == ["package-0"]
    with open(os.path.join(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq")) as fh:
        assert fh.read().strip() == "2400000"  # put back
    # the section goes into a machine file and reads back
    d = _snb_mapping()
    d["power"] = power_mapping(section)
    from loopmodel.fileio.machine_schema import validate_mapping
    assert validate_mapping(yaml.safe_load(machine_text(d, ["t"])), "t").power == section


def test_probe_power_at_one_clock_stores_w0_and_the_power_per_core(tmp_path):
    from loopmodel.measure.power_probe import probe_power

    root = str(tmp_path)
    _fake_sysfs(root, cpufreq=False)
    host = FakeHost(root, fixed_clock=2.0)
    section, _ = probe_power([1, 2], 2.0e9, root, host.runner, seconds=0.5, cpus=(0, 1), timer=host.timer)
    assert not section.separable and section.w1 is None
    assert section.w0 == pytest.approx(20.0) and section.per_core == pytest.approx(2.0 * 2 + 1.0 * 4)
    assert section.at_clock == 2.0e9
    text = " ".join(section.notes)
    assert "scaling_max_freq not writable" in text and "W1 and W2 cannot be separated" in text
    with pytest.raises(ToolError, match="at least two core counts"):
        probe_power([2], 2.0e9, root, host.runner, seconds=0.5, cpus=(0, 1), timer=host.timer)


def test_energy_with_a_one_clock_power_section(tmp_path):
    d = _snb_mapping()
    d["power"] = {"W0": "20 W", "per core": "8 W", "at clock": "2.7 GHz", "source": "probe"}
    path = tmp_path / "host.yml"
    path.write_text(machine_text(d, ["t"]))
    r = run_cli("energy", TRIAD, "-m", path, "-D", "N=10000000", "--cores", "1:2", "--json")
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert {p["clock_Hz"] for p in doc["points"]} == {2.7e9} and doc["points"][1]["power_W"] == pytest.approx(36)
    assert any("not known separately" in n for n in doc["notes"])
    r = run_cli("energy", TRIAD, "-m", path, "-D", "N=10000000", "--clock", "2 GHz")
    assert r.returncode != 0 and len(r.stderr.strip().splitlines()) == 1 and "2.7 GHz only" in r.stderr


def test_probe_without_energy_counters_leaves_a_note_and_goes_on(tmp_path):
    from loopmodel.measure import probe
    from loopmodel.measure.probe import ProbeOptions, _Steps

    steps = _Steps(None)
    opts = ProbeOptions((1, 2), True, 3, 0.004, "gcc", power=True)
    assert probe._power(opts, 2e9, steps, str(tmp_path)) is None
    assert steps.notes == ["no energy counters: /sys/class/powercap not readable"]


def test_probe_cli_lists_power():
    r = run_cli("machine", "probe", "--help")
    assert "--power" in r.stdout


def test_unwritable_clock_means_one_clock(tmp_path):
    from loopmodel.measure.power_probe import settable_clocks

    root = str(tmp_path)
    _fake_sysfs(root)
    assert settable_clocks((0, 1), root)[0] == (1.2e9, 1.8e9, 2.4e9)
    assert settable_clocks((0, 1), root, count=2)[0] == (1.2e9, 2.4e9)
    os.chmod(os.path.join(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq"), 0o444)
    if os.access(os.path.join(root, "sys/devices/system/cpu/cpu1/cpufreq/scaling_max_freq"), os.W_OK):
        pytest.skip("running as root: file modes do not stop writes")
    assert settable_clocks((0, 1), root) == ((), {})


def test_host_model_keeps_the_power_section_and_its_provenance():
    import dataclasses

    from test_hostmodel import synthetic_probe

    from loopmodel.workflows.hostmodel import build_host_model

    section = PowerSection(20.0, per_core=8.0, at_clock=3e9, source="measured with RAPL", notes=("one clock",))
    info = {"domains": ["package-0"], "samples": [{"cores": 1, "clock_Hz": 3e9, "seconds": 1.0, "joules": 28.0,
                                                   "watts": 28.0}]}
    data = dataclasses.replace(synthetic_probe(), power=section, power_info=info,
                               options=ProbeOptions((1, 2), False, 5, 0.01, "gcc", power=True))
    built = build_host_model(data)
    assert built.machine.power == section
    assert built.mapping["power"]["per core"] == "8 W" and built.mapping["probe"]["power"]["domains"] == ["package-0"]
    assert "--power" in built.mapping["probe"]["command"]
    assert "power: one clock" in built.notes


def test_stream_runner_runs_the_real_triad_briefly():
    from loopmodel.measure.power_probe import stream_runner

    run = stream_runner("gcc", size_bytes=6 * 1024 * 1024)
    run(1, 0.05)  # raises ToolError if the program fails


@pytest.mark.parametrize("kwargs,words", [
    ({"w0": 1e300, "w1": 1e-9, "w2": 0.0}, "0 .. 100000 W"),
    ({"w0": 20.0, "per_core": 7.0, "at_clock": 1e-30}, "physical range"),
    ({"w0": 20.0, "w1": 1e-9, "w2": 0.0, "clock_min": 1e9, "clock_max": 1e300}, "physical range"),
    ({"w0": 20.0, "w1": float("inf"), "w2": 0.0}, "finite"),
])
def test_power_section_quantities_are_physical(kwargs, words):
    with pytest.raises(ValueError) as exc:
        PowerSection(**kwargs)
    assert words in str(exc.value)
