"""``loopmodel omp`` run as a user runs it: a machine file with a coherence section, the
example programs, the table, JSON and plot, --measure on a small size, and one-line errors."""
from __future__ import annotations

import json
import shutil

import pytest
import yaml

from helpers import run_cli
from loopmodel.fileio.machine_writer import coherence_mapping, machine_text
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.report.schema import SCHEMA_VERSION

SIZES = (4096, 65536, 1 << 20, 1 << 26)
RATE = {k: 50e9 for k in TRANSITION_KEYS}
RATE.update({"L M other": 5e9, "L E other": 8e9, "L I": 10e9, "S I": 5e9})


@pytest.fixture(scope="module")
def machine(tmp_path_factory):
    """A built-in model with a made-up coherence table (2 threads; 'S other' missing)."""
    secs = {k: {t: tuple(s / RATE[k] for s in SIZES) for t in (1, 2)} for k in TRANSITION_KEYS if "S other" not in k}
    table = CoherenceTable(SIZES, (1, 2), secs, region_overhead={1: 1e-7, 2: 5e-7}, cpus=(0, 1))
    data = yaml.safe_load(open("src/loopmodel/machines/SkylakeSP_Gold-6148.yml"))
    # 512-bit vectors (gcc prefers 256 on Skylake-SP): the dot's simd reduction stays memory-bound here
    data["compiler"] = {"gcc": data["compiler"]["gcc"] + " -mprefer-vector-width=512"}
    path = tmp_path_factory.mktemp("m") / "coh.yml"
    path.write_text(machine_text({**data, "coherence": coherence_mapping(table)}, ["test"]))
    return str(path)


def test_dot_thread0_json_names_the_remote_transition(machine):
    r = run_cli("omp", "examples/omp/dot_thread0.c", "-m", machine, "-D", "N=100000", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert [t["threads"] for t in d["threads"]] == [1, 2]
    two = d["threads"][1]
    init, dot = two["phases"]
    assert (init["kind"], dot["kind"]) == ("sequential", "parallel") and dot["line"] == 17
    assert dot["transitions"][0]["transition"] == "L_t from (M,{0})"
    assert dot["transitions"][0]["benchmark"] == "L M other" and 0 < dot["transitions"][0]["share"] <= 1
    assert dot["hints"] and "first touch" in dot["hints"][0]
    # thread 1 reads 2 x 400 kB from (M,{0}) at 5 GB/s (memory time; in-core time is smaller)
    assert dot["memory_time_s"] == pytest.approx(800e3 / 5e9, rel=1e-6)
    assert dot["time_s"] == pytest.approx(max(dot["memory_time_s"], dot["core_time_s"]) + 5e-7)
    assert two["total_time_s"] == pytest.approx(init["time_s"] + dot["time_s"])
    assert "units" not in d and d["schema_version"] == SCHEMA_VERSION  # units are in the keys (_s)


def test_first_touch_scales_and_the_table_renders(machine):
    r = run_cli("omp", "examples/omp/dot_firsttouch.c", "-m", machine, "-D", "N=100000", "--threads", "1,2")
    assert r.returncode == 0, r.stderr
    assert "L_t from (M,{t})" in r.stdout and "s += x[i] * y[i]" in r.stdout and "speed-up" in r.stdout
    assert "hint" not in r.stdout


def test_cg_repeats_report_time_per_iteration(machine):
    r = run_cli("omp", "examples/omp/cg_banded.c", "-m", machine, "--json", "-D", "N=20000")
    d = json.loads(r.stdout)
    rep = d["threads"][0]["repeats"][0]
    assert rep["count"] == 3 and len(rep["time_s_per_it"]) == 3
    phases = d["threads"][0]["phases"]
    assert [p["iteration"] for p in phases[-5:]] == [2] * 5
    assert sum(p["time_s"] for p in phases[-5:]) == pytest.approx(rep["time_s_per_it"][-1])


def test_yaml_program_and_plot(machine, tmp_path):
    png = tmp_path / "omp.png"
    r = run_cli("omp", "examples/omp/dot_mkl.yml", "-m", machine, "--plot", png)
    assert r.returncode == 0, r.stderr and png.stat().st_size > 1000
    assert "no C code" in r.stdout
    again = run_cli("omp", "examples/omp/dot_mkl.yml", "-m", machine, "--plot", png)
    assert again.returncode != 0 and "exists" in again.stderr
    measured = run_cli("omp", "examples/omp/dot_mkl.yml", "-m", machine, "--measure", "-D", "N=4096")
    assert measured.returncode == 2 and measured.stderr.count("\n") == 1
    assert "--measure needs an OpenMP C program (a YAML program has no code to run)" in measured.stderr


@pytest.mark.parametrize("args,message", [
    (["-m", "examples/machines/EpycZen4_2vCPU.yml"], "has no coherence section"),
    (["--threads", "3"], "covers 1..2 threads"),
    (["-D", "N=10:100:10", "--measure"], "--measure runs the program at one size"),
    (["--threads", "x"], "--threads: cannot read"),
])
def test_bad_options_are_one_line_errors(machine, args, message):
    argv = ["omp", "examples/omp/dot_thread0.c"] + (args if "-m" in args else ["-m", machine] + args)
    r = run_cli(*argv)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("source,message", [
    ("double x[100];\n#pragma omp parallel for schedule(dynamic)\nfor (int i = 0; i < 100; ++i) x[i] = 1.0;\n",
     "dynamic"),
    ("double x[100];\n#pragma omp parallel for num_threads(2)\nfor (int i = 0; i < 100; ++i) x[i] = 1.0;\n",
     "num_threads"),
    ("double x[100]; double y[100];\nfor (int i = 0; i < 100; ++i) x[i * i] = y[i];\n", "not affine"),
])
def test_bad_openmp_input_is_a_one_line_error_naming_the_line(machine, tmp_path, source, message):
    f = tmp_path / "bad.c"
    f.write_text(source)
    r = run_cli("omp", f, "-m", machine)
    assert r.returncode != 0 and message in r.stderr and "Traceback" not in r.stderr
    assert f"{f}:" in r.stderr and len(r.stderr.strip().splitlines()) == 1


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_measure_runs_the_program(machine):
    r = run_cli("omp", "examples/omp/dot_firsttouch.c", "-m", machine, "-D", "N=4096", "--threads", "1",
                "--measure", "--min-time", "0.01", "--json")
    assert r.returncode == 0, r.stderr
    t = json.loads(r.stdout)["threads"][0]
    assert t["measured"]["total_time_s"] > 0 and t["measured"]["omp_wait_policy"] == "active"
    assert all(p["measured"]["time_s"] > 0 for p in t["phases"])
