"""Benchmark mode for OpenMP programs: the harness text, its output parsing with a fake runner,
and one small real run with gcc -fopenmp."""
from __future__ import annotations

import json
import shutil

import pytest

from loopmodel.errors import ToolError
from loopmodel.ir.omp import AffineAccess, LoopBound, OmpArray, OmpProgram, Phase, Repeat
from loopmodel.measure.omp_bench import harness_source, measure_program, parse_harness_output


def dot_program(n=4096, iterations=2):
    arrays = {"x": OmpArray("x", dims=(n,)), "y": OmpArray("y", dims=(n,))}
    w = (AffineAccess("x", "write", (("i", 1),)), AffineAccess("y", "write", (("i", 1),)))
    r = (AffineAccess("x", "read", (("i", 1),)), AffineAccess("y", "read", (("i", 1),)))
    init = Phase("sequential", (LoopBound("i", 0, n),), w, line=3,
                 code=f"for (int i = 0; i < {n}; ++i) {{ x[i] = 1.0; y[i] = 2.0; }}")
    dot = Phase("parallel", (LoopBound("i", 0, n),), r, line=5,
                code=f"s = 0.0;\n#pragma omp parallel for reduction(+:s)\nfor (int i = 0; i < {n}; ++i) s += x[i] * y[i];")
    rep = Repeat(iterations, (dot,), var="it", code_head=f"for (int it = 0; it < {iterations}; ++it)")
    return OmpProgram(arrays, (init, rep), scalars=(("s", "double"),))


def test_harness_declares_times_and_numbers_the_phases_in_execution_order():
    src = harness_source(dot_program())
    assert "static double x[4096] __attribute__((aligned(64)));" in src and "static double s;" in src
    assert "#define LM_PHASES 3" in src
    assert "lm_T[0] = lm_t1 - lm_t0" in src and "lm_T[1 + it * 1 + 0] = lm_t1 - lm_t0" in src
    assert "lm_flush(x, sizeof x);" in src and "for (int it = 0; it < 2; ++it) {" in src


def fake(seconds, threads=2, reps=3):
    out = {"threads": threads, "repetitions": reps, "checksum": 1.0, "seconds": seconds}
    calls = []

    def runner(cmd, timeout, env):
        calls.append((cmd, env))
        return "noise\n" + json.dumps(out) + "\n"
    return runner, calls


def test_fake_run_gives_min_median_spread_and_pins_the_team():
    runner, calls = fake([[3e-6, 2e-6, 4e-6], [1e-6, 1e-6, 2e-6], [1e-6, 1.5e-6, 1e-6]])
    m = measure_program(dot_program(), 2, (4, 6, 7), runner=runner)
    assert [p.seconds for p in m.phases] == [2e-6, 1e-6, 1e-6]
    assert m.phases[0].median_seconds == 3e-6 and m.phases[0].spread == pytest.approx(1.0)
    assert m.total_seconds == pytest.approx(min(5e-6, 4.5e-6, 7e-6))
    env = calls[0][1]
    assert env["OMP_NUM_THREADS"] == "2" and env["OMP_PLACES"] == "{4},{6}" and env["OMP_PROC_BIND"] == "close"
    assert m.cpus == (4, 6)


def test_bad_outputs_and_inputs_are_one_line_errors():
    with pytest.raises(ToolError, match="no result"):
        parse_harness_output("crash", 3, 2)
    with pytest.raises(ToolError, match="wrong number of phases"):
        parse_harness_output(json.dumps({"threads": 2, "repetitions": 1, "seconds": [[1.0]]}), 3, 2)
    with pytest.raises(ToolError, match="ran 1 threads instead of 2"):
        parse_harness_output(json.dumps({"threads": 1, "repetitions": 1, "seconds": [[1.0]] * 3}), 3, 2)
    runner, _ = fake([[1.0]] * 3)
    with pytest.raises(ToolError, match="only 1 usable CPUs"):
        measure_program(dot_program(), 2, (0,), runner=runner)
    p = dot_program()
    yaml_like = OmpProgram(p.arrays, (Phase("parallel", (LoopBound("i", 0, 8),), ()),))
    with pytest.raises(ToolError, match="YAML program"):
        measure_program(yaml_like, 1, (0,), runner=runner)


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_real_run_of_a_small_program():
    """Compile and run the harness (1 thread): every phase timed, a dot of 32 KiB in less than
    a millisecond, repetitions as asked."""
    import os
    cpu = sorted(os.sched_getaffinity(0))[0]
    m = measure_program(dot_program(), 1, (cpu,), min_repetitions=3, max_repetitions=5, min_time_s=0.001)
    assert len(m.phases) == 3 and 3 <= m.repetitions <= 5
    assert all(0 < p.seconds < 1e-3 for p in m.phases)
    assert "-fopenmp" in m.compiler_flags


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_real_run_of_the_cg_example_whose_names_could_clash_with_the_harness():
    """cg_banded.c has arrays r, p, q, x, b: the harness's own names must not clash; every
    executed phase (3 set-up + 3 x 5) is timed."""
    import os

    from loopmodel.fileio.omp_program import read_omp_program
    prog = read_omp_program("examples/omp/cg_banded.c", {"N": 2000})
    cpu = sorted(os.sched_getaffinity(0))[0]
    m = measure_program(prog, 1, (cpu,), min_repetitions=2, max_repetitions=3, min_time_s=0.001)
    assert len(m.phases) == 3 + 3 * 5 and all(p.seconds > 0 for p in m.phases)
