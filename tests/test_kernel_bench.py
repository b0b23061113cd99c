"""Single-thread kernel benchmark: the timed program, the arithmetic with a fake runner (no
timing involved), errors, and one small real run."""
from __future__ import annotations

import json
import shutil
import subprocess

import pytest

from helpers import KERNELS

from loopmodel.compiled.codegen import TIMED_USAGE, generate_c
from loopmodel.errors import DefineError, LoopmodelError, MachineError, ToolError
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.kernel_bench import (KernelMeasurement, default_flags, kernel_iterations, measure_kernel,
                                            parse_output)

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
DAXPY = str(KERNELS / "daxpy.c")
ZEN4 = str(KERNELS.parent / "machines" / "EpycZen4_2vCPU.yml")


def _timed(name, defines):
    k, _ = parse_kernel_file(str(KERNELS / name))
    return generate_c(k, defines, timed=True)


def test_timed_program_contents():
    src = _timed("2d-5pt.c", {"N": 100, "M": 50})
    assert src.index("#define _GNU_SOURCE") < src.index("#include")
    for part in ("sched_setaffinity", "CLOCK_MONOTONIC", '\\"seconds\\": [', '\\"reps\\": %ld', "0x8040",
                 "REPS_PER_RUN RUNS CPU [MIN_TIME_S [FLUSH_BYTES]]", "# LOOPMODEL KERNEL START"):
        assert part in src, part
    main = src[src.index("int main("):]
    # pinning before the first touch, warm-up call before calibration and timed runs
    order = [main.index(s) for s in ("loopmodel_pin(loopmodel_cpu)", "aligned_alloc(", "/* warm-up",
                                     "loopmodel_probe *= 2", "loopmodel_seconds[loopmodel_run] = ")]
    assert order == sorted(order)
    # warm-up, calibration run, its confirmation (a preempted run does not end the doubling), timed runs
    assert main.count("loopmodel_kernel_call(") == 4 and "loopmodel_again < loopmodel_el ? loopmodel_again : loopmodel_el" in main
    assert TIMED_USAGE.split("\n")[0] in src


def test_untimed_program_is_unchanged_by_the_keyword():
    k, _ = parse_kernel_file(DAXPY)
    plain = generate_c(k, {"N": 100})
    assert generate_c(k, {"N": 100}, timed=False) == plain
    assert "sched_setaffinity" not in plain and "_GNU_SOURCE" not in plain and "printf" not in plain
    assert "long loopmodel_reps = loopmodel_argc > 1 ? atol(loopmodel_argv[1]) : 1;" in plain


@needs_gcc
def test_timed_program_compiles_warning_free_and_runs(tmp_path):
    (tmp_path / "k.c").write_text(_timed("2d-5pt.c", {"N": 64, "M": 16}))
    cc = subprocess.run(["gcc", "-O2", "-Wall", "-Werror", "-o", str(tmp_path / "k"), str(tmp_path / "k.c"), "-lm"],
                        capture_output=True, text=True)
    assert cc.returncode == 0, cc.stderr
    run = subprocess.run([str(tmp_path / "k"), "5", "3", "-1"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 0, run.stderr
    data = json.loads(run.stdout)
    assert data["reps"] == 5 and data["runs"] == 3 and len(data["seconds"]) == 3 and data["pinned"] is False
    bad = subprocess.run([str(tmp_path / "k"), "0", "3", "-1"], capture_output=True, text=True, timeout=30)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1  # calibration needs MIN_TIME_S


@needs_gcc
def test_arithmetic_with_a_fake_runner():
    seen = {}

    def fake(cmd, timeout):
        seen["cmd"], seen["timeout"] = cmd, timeout
        return 'noise\n{"seconds": [0.2, 0.1, 0.3, 0.4], "reps": 100, "runs": 4, "cpu": 1, "pinned": true}\n'

    m = measure_kernel(DAXPY, {"N": 1000}, runs=4, min_time_s=0.02, cpu=1, runner=fake, timeout_s=7)
    assert seen["cmd"][1:] == ["0", "4", "1", "0.02"] and seen["timeout"] == 7.0
    assert m.iterations == 1000 and m.reps_per_run == 100 and m.pinned and m.notes == ()
    assert m.seconds_per_call == pytest.approx((0.002, 0.001, 0.003, 0.004))
    assert m.seconds_per_it_min == pytest.approx(1e-6)       # 0.1 s / 100 calls / 1000 it
    assert m.seconds_per_it_median == pytest.approx(2.5e-6)
    assert m.seconds_per_it_max == pytest.approx(4e-6)
    assert m.cy_per_it(2e9) == pytest.approx((2000, 5000, 8000))
    assert m.cy_per_cl(2e9, 8) == pytest.approx((16000, 40000, 64000))
    assert m.cov == pytest.approx(0.5164, abs=1e-4)          # stdev(1,2,3,4) / 2.5
    assert m.iqr == pytest.approx(1.5e-6)                    # quartiles 1.75 and 3.25 us/it
    assert m.flags == default_flags() and m.flags_from == "default (host)" and m.compiler == "gcc"
    d = m.to_dict()
    assert d["seconds_per_it_min_s_per_it"] == pytest.approx(1e-6) and d["iterations_per_call"] == 1000
    assert d["flags"] == list(default_flags()) and d["runs"] == 4 and json.dumps(d)


@needs_gcc
def test_given_reps_and_unpinned_run():
    out = '{"seconds": [0.5], "reps": 7, "pinned": false}'
    m = measure_kernel(DAXPY, {"N": 1000}, runs=1, reps_per_run=7, runner=lambda c, t: out)
    assert m.reps_per_run == 7 and "could not pin" in m.notes[0] and m.cov == 0 and m.iqr == 0
    with pytest.raises(ToolError, match="does not match"):
        measure_kernel(DAXPY, {"N": 1000}, runs=1, reps_per_run=8, runner=lambda c, t: out)
    m = measure_kernel(DAXPY, {"N": 1000}, runs=1, cpu=None, runner=lambda c, t: out.replace("7", "1"))
    assert m.cpu is None and m.notes == ()


@needs_gcc
def test_machine_model_flags_are_used_and_named():
    seen = {}

    def fake(cmd, timeout):
        seen["cmd"] = cmd
        return '{"seconds": [0.1, 0.1], "reps": 1, "pinned": true}'

    m = measure_kernel(DAXPY, {"N": 1000}, machine=load_machine(ZEN4), runs=2, runner=fake)
    assert m.flags == ("-O3", "-march=znver3", "-fopenmp", "-ffreestanding")
    assert m.flags_from == "machine file (compiler.gcc)"
    m = measure_kernel(DAXPY, {"N": 1000}, flags="-O2", machine=load_machine(ZEN4), runs=2, runner=fake)
    assert m.flags == ("-O2",) and m.flags_from == "flags argument"


def test_machine_of_another_isa_is_refused():
    with pytest.raises(ToolError, match="cannot run on this"):
        measure_kernel(DAXPY, {"N": 1000}, machine=load_machine("ThunderX2_CN9980"),
                       runner=lambda c, t: pytest.fail("ran"))


def test_machine_flags_pass_the_allow_list():
    import dataclasses

    m = load_machine(ZEN4)
    bad = dataclasses.replace(m, compiler={"gcc": "-O3 -fplugin=evil.so"})
    with pytest.raises(MachineError, match="not allowed"):
        measure_kernel(DAXPY, {"N": 1000}, machine=bad, runner=lambda c, t: pytest.fail("ran"))


@pytest.mark.parametrize("stdout", ["", "garbage\n", '{"seconds": [0.1], "reps": 1}',
                                    '{"seconds": [0.1, -1.0], "reps": 1}', '{"reps": 1}', '{"seconds": [0.1, 0.2]}'])
def test_malformed_output_is_one_line(stdout):
    with pytest.raises(ToolError) as e:
        parse_output(stdout, 2)
    assert "\n" not in str(e.value)


def test_iterations_from_the_ir(tmp_path):
    k, _ = parse_kernel_file(str(KERNELS / "2d-5pt.c"))
    assert kernel_iterations(k, {"N": 100, "M": 50}) == 98 * 48
    k, _ = parse_kernel_file(str(KERNELS / "uxx.c"))
    assert kernel_iterations(k, {"N": 20}) == 17 ** 3  # 2 <= i <= N-2
    tri = tmp_path / "tri.c"
    tri.write_text("double a[N][N];\ndouble s;\nfor (int j = 0; j < N; ++j)\n"
                   "  for (int i = j + 1; i < N; ++i)\n    a[j][i] = s * a[j][i];\n")
    k, _ = parse_kernel_file(str(tri))
    assert kernel_iterations(k, {"N": 10}) == 45


@needs_gcc
def test_real_small_run():
    """daxpy at N=1000 (16 KB, in L1): between 0.01 and 100 ns per iteration, pinned, calibrated."""
    m = measure_kernel(DAXPY, {"N": 1000}, runs=5, min_time_s=0.005, cpu=0)
    assert m.pinned and m.iterations == 1000 and len(m.seconds_per_call) == 5
    assert m.reps_per_run >= 2 and m.reps_per_run & (m.reps_per_run - 1) == 0  # doubled from 1
    assert 1e-11 < m.seconds_per_it_min <= m.seconds_per_it_median <= m.seconds_per_it_max < 1e-7
    assert m.seconds_per_call[0] * m.reps_per_run >= 0.005 * 0.5  # calibrated to about min_time_s


def test_error_on_a_missing_compiler():
    with pytest.raises(ToolError, match="not found") as e:
        measure_kernel(DAXPY, {"N": 1000}, compiler="/nonexistent/cc", runner=lambda c, t: pytest.fail("ran"))
    assert "\n" not in str(e.value)


@needs_gcc
def test_error_on_a_failed_compilation():
    with pytest.raises(ToolError, match="gcc failed on kernel") as e:
        measure_kernel(DAXPY, {"N": 1000}, flags=["-O3", "-fno-such-option"], runner=lambda c, t: pytest.fail("ran"))
    assert "\n" not in str(e.value)


def test_error_on_a_negative_array(tmp_path):
    k = tmp_path / "neg.c"
    k.write_text("double a[N-10];\ndouble s;\nfor (int i = 0; i < N; ++i)\n  s += a[i];\n")
    with pytest.raises(DefineError, match="dimension -5 < 1"):
        measure_kernel(str(k), {"N": 5}, runner=lambda c, t: pytest.fail("ran"))


@pytest.mark.parametrize("defines,match", [({"N": 1000, "Q": 3}, "no constant 'Q'"), ({}, "no value for N")])
def test_error_on_bad_sizes(defines, match):
    with pytest.raises(DefineError, match=match):
        measure_kernel(DAXPY, defines, runner=lambda c, t: pytest.fail("ran"))


@pytest.mark.parametrize("kw", [{"runs": 0}, {"min_time_s": 0}, {"cpu": -1}, {"reps_per_run": 0}, {"timeout_s": 0}])
def test_bad_arguments(kw):
    with pytest.raises(ToolError):
        measure_kernel(DAXPY, {"N": 1000}, runner=lambda c, t: pytest.fail("ran"), **kw)


@needs_gcc
def test_timeout_and_crash_are_one_line_errors(tmp_path):
    with pytest.raises(ToolError, match="did not finish") as e:
        measure_kernel(DAXPY, {"N": 2_000_000}, runs=10, min_time_s=0.05, timeout_s=0.05)
    assert "\n" not in str(e.value)

    from loopmodel import toolchain

    segv = toolchain.compile_c("#include <signal.h>\nint main(void) { raise(SIGSEGV); return 0; }\n", "gcc",
                               ["-O1"], "executable", "segv", str(tmp_path))

    def crash(cmd, timeout):
        return toolchain.run_program([segv], "the kernel benchmark", timeout)

    with pytest.raises(LoopmodelError, match="killed by signal 11"):
        measure_kernel(DAXPY, {"N": 1000}, runner=crash)


def test_measurement_is_a_frozen_dataclass():
    m = KernelMeasurement("k.c", {"N": 8}, 8, (1e-6,), "gcc", ("-O3",), 0)
    with pytest.raises(Exception):
        m.iterations = 9
    assert m.cy_per_cl(1e9, 8) == pytest.approx((1000.0,) * 3)


def _validation_script():
    import importlib.util

    path = KERNELS.parents[1] / "benchmarks" / "validate_host_model.py"
    spec = importlib.util.spec_from_file_location("validate_host_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_validation_sizes_and_data_levels():
    """The script's sizes put the data set at 40 % of each cache, and the analysis places it there."""
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.predictors.layer_conditions import data_set

    v = _validation_script()
    machine = load_machine(ZEN4)
    goal = v.targets(machine, None, quick=True)
    assert goal["L1"] == pytest.approx(0.4 * 32768) and goal["MEM"] == pytest.approx(4 * 32 * 2 ** 20)
    assert v.targets(machine, 16 * 2 ** 20, quick=False)["MEM"] >= 256 * 2 ** 20
    k, _ = parse_kernel_file(DAXPY)
    assert v.size_for(k, goal["L1"]) == {"N": 819}  # 2 arrays x 8 B x 819 <= 13107 B
    k2, _ = parse_kernel_file(str(KERNELS / "2d-5pt.c"))
    d = v.size_for(k2, goal["L2"])
    touched, _ = data_set(k2)  # bytes the nest touches (b only inside its border)
    assert d["M"] == d["N"] and touched.evaluate(d) <= goal["L2"] < touched.evaluate({"M": d["N"] + 1, "N": d["N"] + 1})
    an = Analyzer(k, machine, AnalyzerSettings(models=("ECM",), incore="analytic"))
    assert [v.data_level(an.run(v.size_for(k, goal[lv]))) for lv in goal] == ["L1", "L2", "L3", "MEM"]
