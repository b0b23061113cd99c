"""One compile-C path and one tool-version probe (loopmodel.toolchain) for every user:
the compiled in-core analysis, the measurements and the SIMD-level check of compiler flags."""
from __future__ import annotations

import json
import os
import shutil

import pytest

from helpers import KERNELS, SNB, run_main_inprocess

from loopmodel import toolchain
from loopmodel.compiled import isa
from loopmodel.compiled.compile import CompilerChoice, compile_to_assembly
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.errors import ToolError
from loopmodel.measure.stream import run_stream
from loopmodel.measure.clock import measure_clock_hz

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")
MISSING_CC = "loopmodel-no-such-compiler"
FAST = dict(repetitions=1, min_time_s=0.005)


def _one_line(exc) -> str:
    msg = str(exc.value)
    assert msg and "\n" not in msg and "Traceback" not in msg
    return msg


def _fake_probe(monkeypatch, tmp_path, text):
    """Every ``--version`` question answered with ``text``, in an empty per-user cache."""
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    asked = []

    def probe(path):
        asked.append(os.path.basename(path))
        return text
    monkeypatch.setattr(toolchain, "_ask_version", probe)
    return asked


# ----------------------------------------------------------------------------- version probe


@needs_tools
def test_analyze_and_measure_report_the_compiler_version_of_one_probe(monkeypatch, tmp_path):
    """The compiler version in ``analyze --json`` (compiled in-core) and in ``measure``'s result,
    and llvm-mca's version, all come from the one ``--version`` probe: replacing it changes all."""
    fake = "gcc (Probe Test) 99.1.0\nCopyright nobody\nLLVM version 77.0.1\n"
    asked = _fake_probe(monkeypatch, tmp_path, fake)
    p = run_main_inprocess(["analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=1000", "-p", "ECM",
                            "--incore", "llvm-mca", "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    compiled = json.loads(p.stdout)["incore"]["compiled"]
    assert compiled["compiler_version"] == "gcc (Probe Test) 99.1.0"
    assert compiled["analyzer_version"] == "77.0.1"
    measured = run_stream("triad", [1], 1024 ** 2, **FAST)
    assert measured.compiler_version == "gcc (Probe Test) 99.1.0"
    assert measured.to_dict()["compiler_version"] == "gcc (Probe Test) 99.1.0"
    assert "gcc" in asked and any(a.startswith("llvm-mca") for a in asked)


@needs_gcc
def test_version_is_asked_once_per_executable_and_again_after_an_upgrade(monkeypatch, tmp_path):
    asked = _fake_probe(monkeypatch, tmp_path, "mycc 1.0\n")
    exe = tmp_path / "mycc"
    exe.write_text("#!/bin/sh\n")
    assert toolchain.tool_version(str(exe)) == "mycc 1.0"
    assert toolchain.tool_version(str(exe)) == "mycc 1.0"
    assert toolchain.tool_version(str(exe), r"(\d+\.\d+)") == "1.0"
    assert len(asked) == 1  # cached per user: a warm analysis starts no --version process
    exe.write_text("#!/bin/sh\n# upgraded\n")
    toolchain.tool_version(str(exe))
    assert len(asked) == 2


def test_version_of_a_tool_that_cannot_run_is_unknown(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    assert toolchain.tool_version(str(tmp_path / "nothing-here")) == "unknown"
    assert toolchain.package_version("loopmodel_no_such_package") == "not installed"


# ----------------------------------------------------------------------------- compile path


@needs_gcc
def test_every_compilation_goes_through_the_one_compile_path(monkeypatch, tmp_path):
    """Kernel to assembly, the clock and stream benchmarks and the flags' SIMD level all run
    the compiler through :func:`toolchain.compile_c` (one timeout, one error format)."""
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    seen = []

    def refuse(cmd, compiler, flags, name, directory, source=""):
        seen.append(name)
        raise ToolError(f"{compiler} refused for {name}.c")
    monkeypatch.setattr(toolchain, "_run_compiler", refuse)
    with pytest.raises(ToolError, match="kernel.c"):
        compile_to_assembly("int x;\n", CompilerChoice("gcc", ("-O1",), "gcc"))
    with pytest.raises(ToolError, match="clock.c"):
        measure_clock_hz("gcc")
    with pytest.raises(ToolError, match="stream.c"):
        run_stream("triad", [1], 1024 ** 2, **FAST)
    assert isa.flags_isa("gcc", ("-O1", "-S"), "gcc probe-test") is None
    assert seen == ["kernel", "clock", "stream", "flags"]


def test_missing_compiler_is_named_in_one_line_on_every_path():
    """A compiler that is not there (or vanished after it was chosen) is a one-line ToolError
    naming it, for the kernel's assembly as for the benchmark programs."""
    for call in (lambda: compile_to_assembly("int x;\n", CompilerChoice(MISSING_CC, ("-O1",), "?")),
                 lambda: measure_clock_hz(MISSING_CC),
                 lambda: run_stream("triad", [1], 1024 ** 2, compiler=MISSING_CC, **FAST)):
        with pytest.raises(ToolError) as e:
            call()
        assert f"compiler '{MISSING_CC}' not found" in _one_line(e)


@needs_gcc
def test_compile_failure_gives_compiler_flags_and_first_error_with_file_and_line():
    bad = "int f(void)\n{\n    return undeclared_name;\n}\n"
    with pytest.raises(ToolError) as e:
        compile_to_assembly(bad, CompilerChoice("gcc", ("-O1",), "gcc"))
    msg = _one_line(e)
    assert msg.startswith("gcc failed on kernel.c (flags: -O1): kernel.c:3:12: error:"), msg
    assert "undeclared_name" in msg and "/tmp" not in msg


@needs_gcc
def test_compiler_given_as_relative_path_builds_the_benchmarks(tmp_path, monkeypatch):
    """``--compiler ./cc`` names a file relative to where the user is, not to the private
    directory the program is built in."""
    os.symlink(shutil.which("gcc"), tmp_path / "cc")
    monkeypatch.chdir(tmp_path)
    assert 0.1e9 < measure_clock_hz("./cc", passes=2000, runs=1) < 10e9
