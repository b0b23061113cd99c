"""Benchmark mode (`loopmodel bench`): units from a fake measurement and clock, the result
cache, the JSON document, the CLI (real small runs and one-line errors)."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest

from loopmodel.measure.bench import COUNTERS_NOTE, run_bench
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.report.schema import SCHEMA_VERSION
from helpers import schema_errors

HAVE_GCC = shutil.which("gcc") is not None


def fake_measure(seconds_per_it=(1e-9, 1.2e-9, 1.5e-9), iterations=1000):
    calls = []

    def measure(path, defines, **kw):  # one block of kw["runs"] runs: the figures in turn
        calls.append((path, defines, kw))
        runs = [seconds_per_it[i % len(seconds_per_it)] for i in range(kw["runs"])]
        return KernelMeasurement(path, dict(defines), iterations, tuple(s * iterations for s in runs),
                                 "gcc", ("-O3",), kw.get("cpu"), reps_per_run=1, pinned=True)
    return measure, calls


def test_units_from_seconds_and_the_clock(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    measure, calls = fake_measure()
    clocks = iter([2.0e9, 4.0e9])
    r = run_bench("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, measure=measure, clock=lambda cpu: next(clocks),
                  blocks=1)
    assert r.clock_hz == pytest.approx(3.0e9)  # mean of before and after
    f = r.figures()
    assert f["seconds_per_it"][0] == pytest.approx(1e-9)
    assert f["cy_per_it"][0] == pytest.approx(3.0) and f["cy_per_CL"][0] == pytest.approx(24.0)  # 8 it/CL
    assert f["FLOP_per_s"][0] == pytest.approx(2e9)  # daxpy: 2 FLOP/it
    doc = r.to_dict()["measurement"]
    assert doc["time_min_cy_per_cl"] == pytest.approx(24.0) and doc["counters"] is None and doc["cache"] == "warm"
    assert doc["repetitions"] == 3 and doc["threads"] == 1 and doc["clock_Hz"] == pytest.approx(3e9)
    assert COUNTERS_NOTE in r.notes and calls[0][2]["runs"] == 3 and len(calls) == 1  # one block of 3 runs
    assert r.stability.verdict == "unchecked" and doc["stability"]["verdict"] == "unchecked"


def test_results_are_cached_per_user_and_no_cache_measures_again(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    measure, calls = fake_measure()
    args = dict(repeat=3, measure=measure, clock=lambda cpu: 3e9, blocks=1)
    first = run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args)
    again = run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args)
    assert not first.cached and again.cached and len(calls) == 1
    other = run_bench("examples/kernels/daxpy.c", {"N": 2000}, **args)  # other sizes: another key
    fresh = run_bench("examples/kernels/daxpy.c", {"N": 1000}, use_cache=False, **args)
    assert not other.cached and not fresh.cached and len(calls) == 3


def _gcc_wrapper(folder, real_gcc: str):
    """An executable named ``gcc`` in ``folder`` that runs ``real_gcc`` (a wrapper such as one
    that adds flags): what ``gcc`` means once ``folder`` leads the PATH."""
    folder.mkdir()
    exe = folder / "gcc"
    exe.write_text(f'#!/bin/sh\nexec {real_gcc} "$@"\n')
    exe.chmod(0o755)
    return exe


def test_another_gcc_first_on_the_path_or_the_same_one_changed_is_measured_again(tmp_path, monkeypatch):
    import os

    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    real = shutil.which("gcc") or "/bin/true"  # the wrappers are only asked their version here
    one, two = _gcc_wrapper(tmp_path / "one", real), _gcc_wrapper(tmp_path / "two", real)  # same bytes
    measure, calls = fake_measure()
    args = dict(repeat=3, measure=measure, clock=lambda cpu: 3e9, blocks=1)
    path = os.environ.get("PATH", "")
    monkeypatch.setenv("PATH", f"{one.parent}{os.pathsep}{path}")
    assert not run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached
    assert run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached and len(calls) == 1
    monkeypatch.setenv("PATH", f"{two.parent}{os.pathsep}{path}")  # another gcc of the same name
    assert not run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached and len(calls) == 2
    assert run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached and len(calls) == 2
    st = two.stat()
    os.utime(two, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))  # the same gcc, changed in place
    assert not run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached and len(calls) == 3
    monkeypatch.setenv("PATH", f"{one.parent}{os.pathsep}{path}")  # the first one again: its result
    assert run_bench("examples/kernels/daxpy.c", {"N": 1000}, **args).cached and len(calls) == 3


def test_the_compiler_identity_is_its_path_version_size_and_mtime(tmp_path, monkeypatch):
    import os

    from loopmodel import toolchain

    exe = tmp_path / "bin" / "gcc"
    exe.parent.mkdir()
    exe.write_text('#!/bin/sh\necho "gcc (wrapper) 1.0"\n')
    exe.chmod(0o755)
    link = tmp_path / "bin" / "cc"
    link.symlink_to(exe)
    monkeypatch.setenv("PATH", str(exe.parent))
    st = exe.stat()
    assert toolchain.compiler_identity("gcc") == (str(exe), str(exe), "gcc (wrapper) 1.0\n", st.st_size,
                                                  st.st_mtime_ns)
    assert toolchain.compiler_identity("cc")[:2] == (str(link), str(exe))  # the name run, the file it is
    assert toolchain.compiler_identity("no-such-cc") == ("not found", "no-such-cc")
    assert toolchain.compiler_identity(str(exe)) == toolchain.compiler_identity("gcc")


def _cli(*argv):
    return subprocess.run([sys.executable, "-m", "loopmodel", *argv], capture_output=True, text=True, timeout=300)


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
def test_bench_command_measures_a_small_kernel_as_json(tmp_path):
    import os
    env_dir = str(tmp_path)
    p = subprocess.run([sys.executable, "-m", "loopmodel", "bench", "examples/kernels/daxpy.c", "-D", "N=2000",
                        "--repeat", "3", "--json"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "LOOPMODEL_CACHE_DIR": env_dir})
    assert p.returncode == 0, p.stderr
    out = json.loads(p.stdout)
    assert out["schema_version"] == SCHEMA_VERSION and len(out["points"]) == 1  # one size: the shape of a sweep
    assert schema_errors(out, "bench") == []
    doc = out["points"][0]
    m = doc["measurement"]
    assert doc["threads"] == 1 and doc["it_s"] == m["max_it_s"]
    assert m["time_min_s_per_it"] <= m["time_median_s_per_it"] <= m["time_max_s_per_it"]
    assert 0.05 < m["time_min_cy_per_cl"] < 500 and m["counters"] is None
    assert m["repetitions"] == 3 * m["stability"]["rounds"]  # 3 blocks of one run per round
    assert doc["notes"][0].startswith(COUNTERS_NOTE)  # and, where the blocks of runs disagree, that note
    assert all(n.startswith("blocks disagree:") for n in doc["notes"][1:])
    assert m["stability"]["verdict"] in ("agree", "disagree") and len(m["stability"]["block_min_s_per_it"]) >= 3


@pytest.mark.parametrize("argv,message", [
    (["examples/kernels/daxpy.c"], "no value for N"),
    (["examples/kernels/daxpy.c", "-D", "N=1000", "--repeat", "0"], "--repeat"),
    (["examples/kernels/daxpy.yml", "-D", "N=1000"], "needs a C kernel"),
    (["examples/kernels/daxpy.c", "-D", "N=1000", "-m", "no-such-machine"], "unknown machine"),
    (["examples/kernels/daxpy.c", "-D", "N=1000", "--spread-s", "-1"], "--spread-s"),
])
def test_bench_bad_input_is_one_line(argv, message):
    p = _cli("bench", *argv)
    assert p.returncode != 0 and message in p.stderr and p.stderr.count("\n") == 1, p.stderr


def test_cold_runs_stream_a_buffer_beyond_the_caches_and_time_one_call(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    measure, calls = fake_measure()
    r = run_bench("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, measure=measure, clock=lambda cpu: 3e9,
                  cold=True)
    kw = calls[0][2]
    assert kw["reps_per_run"] == 1 and kw["flush_bytes"] >= 256 * 2**20
    assert r.cache == "cold" and r.to_dict()["measurement"]["cache"] == "cold"
    assert any(n.startswith("cold:") for n in r.notes)
    warm = run_bench("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, measure=measure, clock=lambda cpu: 3e9)
    assert not warm.cached and warm.cache == "warm"  # cold and warm are cached apart


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
def test_cold_data_are_slower_than_warm_for_an_l1_sized_kernel(tmp_path):
    from loopmodel.measure.bench import run_bench as rb
    warm = rb("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, use_cache=False)
    cold = rb("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, use_cache=False, cold=True)
    assert cold.measurement.reps_per_run == 1
    assert cold.figures()["seconds_per_it"][0] > 1.5 * warm.figures()["seconds_per_it"][0]


def _kernel(text, name="k.c"):
    from loopmodel.fileio.c_kernel import parse_kernel
    return parse_kernel(text, name)[0]


def test_parallel_pragma_shares_the_outermost_loop_with_reductions():
    from loopmodel.compiled.codegen import parallel_pragma
    daxpy = open("examples/kernels/daxpy.c").read()
    assert parallel_pragma(_kernel(daxpy)) == "#pragma omp parallel for schedule(static)"
    dot = open("examples/kernels/dot.c").read()
    assert parallel_pragma(_kernel(dot)) == "#pragma omp parallel for schedule(static) reduction(+: s)"
    own = "double a[N];\n#pragma omp parallel for\nfor (int i = 0; i < N; ++i)\n    a[i] = 2.0 * a[i];\n"
    assert parallel_pragma(_kernel(own)) == ""


def test_parallel_pragma_refuses_a_dependence_between_iterations():
    from loopmodel.compiled.codegen import parallel_pragma
    from loopmodel.errors import DefineError
    gs = ("double a[N][N];\nfor (int j = 1; j < N-1; ++j)\n    for (int i = 1; i < N-1; ++i)\n"
          "        a[j][i] = (a[j-1][i] + a[j][i-1] + a[j][i+1] + a[j+1][i]) * 0.25;\n")
    with pytest.raises(DefineError, match="cannot be shared"):
        parallel_pragma(_kernel(gs))


def test_threaded_program_first_touches_in_parallel():
    from loopmodel.compiled.codegen import generate_c
    text = open("examples/kernels/daxpy.c").read()
    src = generate_c(_kernel(text), {"N": 100}, timed=True, threads=True)
    assert src.count("#pragma omp parallel for schedule(static)") == 3  # kernel, x and y first touch
    single = generate_c(_kernel(text), {"N": 100}, timed=True)
    assert "#pragma omp" not in single


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
def test_two_threads_share_a_real_kernel(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    r = run_bench("examples/kernels/dot.c", {"N": 20000}, repeat=3, threads=2)
    d = r.to_dict()["measurement"]
    assert d["threads"] == 2 and d["openmp"] and "-fopenmp" in d["flags"]
    assert d["time_min_s_per_it"] > 0


def test_bench_threads_must_be_positive():
    p = _cli("bench", "examples/kernels/daxpy.c", "-D", "N=1000", "--threads", "0")
    assert p.returncode == 2 and "--threads" in p.stderr and p.stderr.count("\n") == 1


def test_thread_range_gives_a_curve_scaling_reads(monkeypatch, tmp_path, capsys):
    import loopmodel.measure.bench as bench_mod
    from loopmodel.cli import main
    from loopmodel.workflows.inputs import read_measured
    from loopmodel.measure.bench import BenchResult

    def fake(path, defines, machine=None, repeat=10, *a, **k):
        n = k["threads"]
        m = KernelMeasurement(str(path), dict(defines), 1, (1e-9 / n,) * repeat, "gcc", ("-O3", "-fopenmp"), 0, 1,
                              False)  # path: the kernel's reference (file, function, -I, -D); str: its file
        return BenchResult(str(path), dict(defines), m, 3e9, 8, 2, threads=n, openmp=True)
    monkeypatch.setattr(bench_mod, "run_bench", fake)
    assert main(["bench", "examples/kernels/daxpy.c", "-D", "N=1000000", "--threads", "1:2", "--json"]) == 0
    out = tmp_path / "curve.json"
    out.write_text(capsys.readouterr().out)
    assert read_measured(str(out)) == {1: pytest.approx(1e9), 2: pytest.approx(2e9)}
    assert main(["bench", "examples/kernels/daxpy.c", "-D", "N=10:20:10", "--threads", "1:2"]) == 2
    assert "one size" in capsys.readouterr().err



def test_perf_csv_and_availability_with_a_fake_perf():
    from loopmodel.measure.counters import available, parse_perf_csv
    text = "12345,,instructions,100,100.00,,\n<not supported>,,cycles,0,100.00,,\n"
    assert parse_perf_csv(text) == {"instructions": 12345.0, "cycles": None}
    assert available("perf", runner=lambda cmd: text) == (True, "")
    ok, why = available("perf", runner=lambda cmd: "<not supported>,,instructions,0,100.00,,\n")
    assert not ok and why.startswith(COUNTERS_NOTE) and "virtual machine" in why
    assert available("/no/such/perf-xyz")[0] is False


def test_counts_per_iteration_from_two_call_counts():
    from loopmodel.measure.counters import count_per_call
    seen = []

    def runner(cmd):
        seen.append(cmd)
        r = int(cmd[cmd.index("--") + 2])  # program argv: EXE REPS 1 ...
        per_call = {"instructions": 3000, "L1-dcache-loads": 2000, "L1-dcache-stores": 1000,
                    "LLC-load-misses": 250, "fp_arith_inst_retired.256b_packed_double": 500}
        lines = [f"{500 + v * r},,{e},100,100.00,," for e, v in per_call.items()]  # 500: start-up
        lines += ["0,,fp_arith_inst_retired.scalar_double,100,100.00,,",
                  "0,,fp_arith_inst_retired.128b_packed_double,100,100.00,,",
                  "0,,fp_arith_inst_retired.512b_packed_double,100,100.00,,"]
        return "\n".join(lines)
    c = count_per_call(lambda r: ["exe", str(r), "1", "0"], 10, "GenuineIntel", 1000, perf="perf", runner=runner)
    assert c == {"instructions": 3.0, "loads": 2.0, "stores": 1.0, "memory_B": 16.0, "flops": 2.0}
    assert [cmd[cmd.index("--") + 2] for cmd in seen] == ["10", "20"]


def test_link_bandwidths_from_model_traffic_and_measured_rate(tmp_path, monkeypatch):
    from loopmodel.fileio.machine_files import load_machine
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    measure, _ = fake_measure(seconds_per_it=(1e-9, 1e-9, 1e-9))
    m = load_machine("IvyBridgeEP_E5-2690v2")
    r = run_bench("examples/kernels/daxpy.c", {"N": 100_000_000}, machine=m, repeat=3, measure=measure,
                  clock=lambda cpu: 3e9)
    bw = r.to_dict()["measurement"]["model_traffic_B_s"]
    assert bw["L3MEM"] == pytest.approx(24e9)  # 24 B/it (x, y in; y out) at 1 Git/s
    assert run_bench("examples/kernels/daxpy.c", {"N": 1000}, repeat=3, measure=measure,
                     clock=lambda cpu: 3e9).traffic == {}  # no machine model: no traffic


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
def test_a_kernel_that_runs_too_long_is_a_one_line_error(tmp_path):
    import os
    p = subprocess.run([sys.executable, "-m", "loopmodel", "bench", "examples/kernels/daxpy.c", "-D", "N=20000000",
                        "--timeout", "0.2", "--no-cache"], capture_output=True, text=True, timeout=300,
                       env={**os.environ, "LOOPMODEL_CACHE_DIR": str(tmp_path)})
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "0.2" in p.stderr, p.stderr
