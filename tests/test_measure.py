"""Measurement package (loopmodel.measure): streaming benchmark, clock estimate, `measure` subcommand.

The benchmark really runs, with small sizes (16 MiB, 1 and 2 threads, 2 repetitions of
0.02 s), so the whole module takes a few seconds. Skipped without gcc.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess

import pytest

from loopmodel.errors import DefineError, LoopmodelError, ToolError
from loopmodel.cli import measure as cli_measure
from loopmodel.workflows.measure import parse_threads
from loopmodel.measure.stream import DEFAULT_FLAGS, KERNEL_NAMES, StreamPoint, StreamResult, run_stream
from loopmodel.measure.clock import ClockMeasurement, clock_source, measure_clock_hz
from loopmodel.measure.stream import KERNELS, make_point, parse_output, stream_source
from helpers import schema_errors

pytestmark = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")

MiB = 1024 ** 2
SIZE = 16 * MiB
THREADS = [1, 2] if (os.cpu_count() or 1) >= 2 else [1]
FAST = dict(repetitions=2, min_time_s=0.02)
MISSING_CC = "loopmodel-no-such-compiler"


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert msg and "\n" not in msg and "Traceback" not in msg
    return msg


@pytest.fixture(scope="module")
def measured(tmp_path_factory):
    """Both kernels, measured once, from an empty working directory (which must stay empty)."""
    cwd = tmp_path_factory.mktemp("cwd")
    old = os.getcwd()
    os.chdir(cwd)
    try:
        results = {k: run_stream(k, THREADS, SIZE, **FAST) for k in KERNEL_NAMES}
    finally:
        os.chdir(old)
    assert list(cwd.iterdir()) == [], "the benchmark must be built in a temporary directory"
    return results


# ----------------------------------------------------------------------------- library


@pytest.mark.parametrize("kernel,arrays", [("daxpby", 2), ("triad", 3)])
def test_result_structure(measured, kernel, arrays):
    r = measured[kernel]
    assert isinstance(r, StreamResult) and r.kernel == kernel
    assert r.n_elements == SIZE // (arrays * 8)
    assert r.size_bytes == arrays * 8 * r.n_elements and SIZE - arrays * 8 < r.size_bytes <= SIZE
    assert r.compiler == "gcc" and r.flags == ("-O3", "-march=native", "-fopenmp")
    assert r.compiler_version.startswith("gcc")
    assert r.repetitions == 2 and r.min_time_s == 0.02
    assert isinstance(r.host, str) and platform.machine() in r.host
    assert all(isinstance(p, StreamPoint) for p in r.points)
    # the thread count is the one the benchmark saw inside its parallel region
    assert [p.threads for p in r.points] == THREADS


@pytest.mark.parametrize("kernel,bpi,bpi_no_wa", [("daxpby", 24, 24), ("triad", 32, 24)])
def test_byte_counts_and_derived_rates(measured, kernel, bpi, bpi_no_wa):
    r = measured[kernel]
    assert (r.bytes_per_it, r.bytes_per_it_no_wa) == (bpi, bpi_no_wa)
    for p in r.points:
        assert (p.bytes_per_it, p.bytes_per_it_no_wa) == (bpi, bpi_no_wa)
        assert p.it_per_s == pytest.approx(r.n_elements / p.seconds_per_sweep, rel=1e-12)
        assert p.bytes_per_s == pytest.approx(p.it_per_s * bpi, rel=1e-12)
        assert p.bytes_per_s_no_wa == pytest.approx(p.it_per_s * bpi_no_wa, rel=1e-12)


@pytest.mark.parametrize("kernel", KERNEL_NAMES)
def test_plausible_values(measured, kernel):
    for p in measured[kernel].points:
        assert 0.1e9 < p.bytes_per_s < 1000e9, p
        assert 0 < p.seconds_per_sweep_min <= p.seconds_per_sweep <= p.seconds_per_sweep_max
        # every repetition ran at least min_time: sweeps_r >= min_time / t_r >= min_time / t_max
        assert p.sweeps * p.seconds_per_sweep_max >= FAST["repetitions"] * FAST["min_time_s"] * 0.999
        assert p.sweeps >= FAST["repetitions"]


def test_json_document_has_units_in_keys(measured):
    doc = json.loads(json.dumps(measured["triad"].to_dict()))
    assert doc["size_B"] == measured["triad"].size_bytes and doc["volume_B_per_it"] == 32
    assert doc["environment"] == {"OMP_PROC_BIND": "close", "OMP_PLACES": "cores", "OMP_DYNAMIC": "false"}
    pt = doc["points"][0]
    for key in ("threads", "time_median_s_per_sweep", "time_min_s_per_sweep", "time_max_s_per_sweep", "it_s",
                "bandwidth_B_s", "bandwidth_no_wa_B_s", "volume_B_per_it"):
        assert key in pt


def test_median_of_even_count_and_rates():
    p = make_point("triad", 1000, 2, [4e-6, 1e-6, 3e-6, 2e-6], [10, 20, 30, 40])
    assert p.seconds_per_sweep == pytest.approx(2.5e-6)
    assert (p.seconds_per_sweep_min, p.seconds_per_sweep_max, p.sweeps) == (1e-6, 4e-6, 100)
    assert p.it_per_s == pytest.approx(4e8) and p.bytes_per_s == pytest.approx(32 * 4e8)
    assert p.bytes_per_s_no_wa == pytest.approx(24 * 4e8)


def test_kernel_table_matches_names():
    assert tuple(KERNELS) == KERNEL_NAMES


def test_shipped_source_first_touch_and_static_schedule():
    src = stream_source()
    # init and sweep of both kernels, plus the result check
    assert src.count("#pragma omp parallel for schedule(static)") >= 5
    assert "posix_memalign" in src and "omp_get_wtime" in src


def test_benchmark_output_is_checked():
    good = ('{"kernel": "triad", "threads": 2, "n": 100, "repetitions": 2, "sweeps": [3, 4], '
            '"seconds_per_sweep": [1e-3, 2e-3], "median_s": 1.5e-3, "min_s": 1e-3, "max_s": 2e-3, "check": "ok"}')
    assert parse_output("noise\n" + good + "\n", "triad", 2, 100, 2)["times"] == [1e-3, 2e-3]
    with pytest.raises(ToolError) as e:
        parse_output(good, "triad", 4, 100, 2)
    assert "2 OpenMP threads instead of 4" in _one_line(e)
    for bad in (good.replace('"ok"', '"wrong"'), good.replace('"n": 100', '"n": 99'), "", "{not json",
                good.replace("1e-3, 2e-3", "0, 2e-3")):
        with pytest.raises(ToolError) as e:
            parse_output(bad, "triad", 2, 100, 2)
        _one_line(e)


# ----------------------------------------------------------------------------- errors


def test_unknown_kernel():
    with pytest.raises(ToolError) as e:
        run_stream("copy", [1], SIZE, **FAST)
    msg = _one_line(e)
    assert "copy" in msg and "daxpby" in msg and "triad" in msg


def test_too_many_threads_names_cpu_count():
    n = len(os.sched_getaffinity(0))
    with pytest.raises(ToolError) as e:
        run_stream("triad", [1, n + 1], SIZE, **FAST)
    msg = _one_line(e)
    assert str(n + 1) in msg and f"{n} CPU" in msg


@pytest.mark.parametrize("threads", [[0], [-1], []])
def test_bad_thread_counts(threads):
    with pytest.raises(ToolError) as e:
        run_stream("triad", threads, SIZE, **FAST)
    _one_line(e)


def test_size_too_small():
    with pytest.raises(ToolError) as e:
        run_stream("daxpby", [1], MiB - 1, **FAST)
    assert "1 MiB" in _one_line(e)


def test_missing_compiler():
    with pytest.raises(ToolError) as e:
        run_stream("triad", [1], SIZE, compiler=MISSING_CC, **FAST)
    assert MISSING_CC in _one_line(e) and "not found" in str(e.value)


def test_compile_failure_gives_first_error_line(tmp_path):
    with pytest.raises(ToolError) as e:
        run_stream("triad", [1], SIZE, flags="-O2 -fopenmp -floopmodel-bogus", **FAST)
    msg = _one_line(e)
    assert "floopmodel-bogus" in msg and "error" in msg


def test_flags_without_openmp_are_refused():
    with pytest.raises(ToolError) as e:
        run_stream("triad", [1], SIZE, flags="-O2", **FAST)
    assert "-fopenmp" in _one_line(e)


# ----------------------------------------------------------------------------- clock


def test_clock_estimate_is_plausible():
    hz = measure_clock_hz()
    assert 0.5e9 < hz < 6e9


def test_clock_from_thread_cpu_time_median_and_spread():
    from loopmodel.measure.clock import parse_clock_output
    # three runs of 1e9 additions: wall 0.5, 0.6 (preempted), 0.5 s; CPU 0.5, 0.5, 0.52 s
    m = parse_clock_output("1000000000 0.5 0.5 0.6 0.5 0.5 0.52 4000000000", 3)
    assert m.median_hz == pytest.approx(2e9)
    assert m.spread == pytest.approx((2e9 - 1e9 / 0.52) / 2e9)
    assert m.wall_hz == pytest.approx(2e9)
    d = m.to_dict()
    assert d["clock_Hz_median"] == pytest.approx(2e9) and d["runs"] == 3 and "thread CPU time" in d["method"]


@pytest.mark.parametrize("out,match", [("1000 0.5 0.5 999", "inconsistent"), ("1000 0.5 2000", "expected 2"),
                                       ("garbage", "no result"), ("1000 0 0.5 2000", "non-positive")])
def test_clock_output_errors_are_one_line(out, match):
    from loopmodel.measure.clock import parse_clock_output
    with pytest.raises(ToolError, match=match):
        parse_clock_output(out, 1)


def test_clock_missing_compiler():
    with pytest.raises(ToolError) as e:
        measure_clock_hz(MISSING_CC)
    assert MISSING_CC in _one_line(e)


def test_clock_unsupported_isa(monkeypatch):
    monkeypatch.setattr(platform, "machine", lambda: "riscv64")
    with pytest.raises(ToolError) as e:
        measure_clock_hz()
    assert "riscv64" in _one_line(e)


@pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None, reason="AArch64 cross compiler needed")
def test_clock_source_for_aarch64_assembles(tmp_path):
    src = tmp_path / "clock.c"
    src.write_text(clock_source("aarch64"))
    p = subprocess.run(["aarch64-linux-gnu-gcc", "-O1", "-S", "-o", str(tmp_path / "clock.s"), str(src)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    asm = (tmp_path / "clock.s").read_text()
    assert ".rept 1000" in asm
    chain = [ln.split() for ln in asm.splitlines() if ln.strip().startswith("add x")]
    # add xD, xD, xS: the destination is also the first source (a dependency chain)
    assert any(t[1].rstrip(",") == t[2].rstrip(",") for t in chain)


# ----------------------------------------------------------------------------- command line


def _parse(*argv):
    p = argparse.ArgumentParser(prog="loopmodel")
    sub = p.add_subparsers(dest="command")
    cli_measure.add_parser(sub)
    return p.parse_args(["measure", *argv])


FAST_ARGS = ("--threads", ",".join(map(str, THREADS)), "--size", "16 MiB", "--repetitions", "2", "--min-time", "0.02")


def test_parser_defaults():
    a = _parse("triad")
    assert a.command == "measure" and a.kernel == "triad" and a.threads is None
    assert (a.size, a.repetitions, a.min_time, a.compiler, a.flags) == ("512 MiB", 5, 0.1, "gcc", DEFAULT_FLAGS)
    assert not a.json and a.output is None and not a.clock
    with pytest.raises(SystemExit):
        _parse("copy")


@pytest.mark.parametrize("text,expected", [("1:4", [1, 2, 3, 4]), ("1,2,4", [1, 2, 4]), ("3", [3]),
                                           ("1:8:3", [1, 4, 7]), (" 2, 1 ,2", [2, 1])])
def test_parse_threads(text, expected):
    assert parse_threads(text) == expected


def test_parse_threads_default_and_errors():
    assert parse_threads(None) == list(range(1, len(os.sched_getaffinity(0)) + 1))
    for bad in ("a", "1:", "4:1", "1:4:0", "1,,2", ""):
        with pytest.raises(DefineError) as e:
            parse_threads(bad)
        assert "--threads" in _one_line(e)


def test_cli_json_and_output_file(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert cli_measure.run(_parse("daxpby", *FAST_ARGS, "--json", "--clock", "-o", str(out))) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(out.read_text()) == printed
    assert printed["kernel"] == "daxpby" and printed["size_B"] == SIZE and printed["volume_B_per_it"] == 24
    assert schema_errors(printed, "measure") == [] and 0.5e9 < printed["clock_Hz"] < 6e9
    assert [p["threads"] for p in printed["points"]] == THREADS
    for p in printed["points"]:
        assert p["bandwidth_B_s"] == pytest.approx(p["it_s"] * 24)
        assert p["time_median_s_per_sweep"] > 0


def test_cli_refuses_to_overwrite(tmp_path, capsys):
    out = tmp_path / "keep.json"
    out.write_text("precious")
    # refused before anything is compiled or measured (a missing compiler is not even noticed)
    with pytest.raises(LoopmodelError) as e:
        cli_measure.run(_parse("triad", *FAST_ARGS, "--compiler", MISSING_CC, "-o", str(out)))
    msg = _one_line(e)
    assert "keep.json" in msg and "overwrit" in msg
    assert out.read_text() == "precious"
    assert capsys.readouterr().out == ""


def test_cli_table(capsys):
    assert cli_measure.run(_parse("triad", *FAST_ARGS)) == 0
    text = capsys.readouterr().out
    for header in ("threads", "Mit/s", "GB/s", "without write-allocate", "ms per sweep"):
        assert header in text
    assert "a[i] = b[i] + s*c[i]" in text and "32 B/it" in text
    rows = [ln for ln in text.splitlines() if ln.startswith("│")]
    assert [int(r.split("│")[1]) for r in rows] == THREADS
    # GB/s column = Mit/s * 32 B / 1000, within the rounding of the two printed cells
    for r in rows:
        cells = [c.strip() for c in r.split("│")[1:-1]]
        tol = _half_ulp(cells[2]) + _half_ulp(cells[1]) * 32 / 1000
        assert float(cells[2]) == pytest.approx(float(cells[1]) * 32 / 1000, abs=tol * 1.0001)


def _half_ulp(cell: str) -> float:
    """Half a unit of the last printed digit of a number cell ('0.963' -> 0.0005, '27' -> 0.5)."""
    return 0.5 * 10.0 ** -(len(cell.split(".")[1]) if "." in cell else 0)


@pytest.mark.parametrize("argv,word", [(("--size", "1000"), "--size"), (("--size", "16 GHz"), "--size"),
                                       (("--threads", "x"), "--threads"), (("--repetitions", "0"), "--repetitions"),
                                       (("--min-time", "0"), "--min-time")])
def test_cli_bad_options(argv, word):
    with pytest.raises(DefineError) as e:
        cli_measure.run(_parse("triad", *argv))
    assert word in _one_line(e)


def test_cli_tool_errors_are_loopmodel_errors():
    with pytest.raises(ToolError) as e:
        cli_measure.run(_parse("triad", "--threads", str(os.cpu_count() + 1), "--size", "16 MiB"))
    assert isinstance(e.value, LoopmodelError) and e.value.exit_code == 2
    _one_line(e)


def test_output_written_exclusively(tmp_path):
    """A file that appears between the early check and the write is not replaced either."""
    from loopmodel.fileio.output import write_new_output

    out = tmp_path / "late.json"
    out.write_text("precious")
    with pytest.raises(DefineError) as e:
        write_new_output(str(out), "{}", "-o")
    assert "overwrit" in _one_line(e) and out.read_text() == "precious"
    new = tmp_path / "new.json"
    write_new_output(str(new), "{}\n", "-o")
    assert new.read_text() == "{}\n"


def test_clock_measurements_merge_into_one_set_of_runs():
    a = ClockMeasurement(1000, (1.0, 1.0), (1e-6, 1e-6))
    b = ClockMeasurement(1000, (1.0,), (2e-6,))
    m = a.merged(b)
    assert m.cpu_s == (1e-6, 1e-6, 2e-6) and m.median_hz == pytest.approx(1e9)
    assert a.merged(None) is a and a.merged(ClockMeasurement(5, (1.0,), (1.0,))) is a


@pytest.mark.parametrize("cpu", [-1, 100000])
def test_pinned_clock_on_a_cpu_the_process_may_not_use_is_one_line(cpu):
    from loopmodel.measure.clock import pinned_clock_hz
    with pytest.raises(ToolError, match=f"--cpu {cpu}: not a CPU this process may run on"):
        pinned_clock_hz(cpu)
