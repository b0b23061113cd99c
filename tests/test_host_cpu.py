"""The compiler's name for the host CPU and the llvm-mca model that fits it (fake tool output;
one real query where gcc is installed)."""
from __future__ import annotations

import shutil

import pytest

from loopmodel.measure import host_cpu

MCA_HELP = """Available CPUs for this target:

  alderlake      - Select the alderlake processor.
  icelake-server - Select the icelake-server processor.
  sapphirerapids - Select the sapphirerapids processor.
  znver3         - Select the znver3 processor.

Available features for this target:

  avx512f        - Enable AVX-512 instructions.
"""


def test_llvm_mca_cpu_list_parsed(monkeypatch):
    monkeypatch.setattr(host_cpu.toolchain, "tool_output", lambda path, args: MCA_HELP)
    assert host_cpu.llvm_mca_cpus("llvm-mca") == {"alderlake", "icelake-server", "sapphirerapids", "znver3"}


@pytest.mark.parametrize("name,cpu,older", [
    ("sapphirerapids", "sapphirerapids", False),  # known: itself, no note
    ("graniterapids", "sapphirerapids", True),    # one generation back
    ("znver5", "znver3", True),                   # two generations back (znver4 unknown too)
    ("raptorlake", "alderlake", True),
    ("pentium-x", None, False),                   # no line to fall back on
])
def test_llvm_mca_cpu_falls_back_to_an_older_generation(name, cpu, older):
    known = frozenset({"alderlake", "icelake-server", "sapphirerapids", "znver3"})
    got, note = host_cpu.llvm_mca_cpu_for(name, known)
    assert got == cpu
    assert (note is not None and "an older generation, is used" in note) == older
    if cpu is None:
        assert "knows no model" in note


@pytest.mark.parametrize("aarch64,output,name", [
    (False, "The following options are target specific:\n  -march=                     \t\tznver4\n"
            "  -mtune=                     \t\tznver4\n", "znver4"),
    (True, "  -mcpu=                      \t\tneoverse-v1\n", "neoverse-v1"),
    (False, "  -march=                     \t\tnative\n", None),  # the compiler could not resolve it
    (False, "", None),                                              # the query failed
])
def test_native_cpu_from_the_compiler(monkeypatch, aarch64, output, name):
    monkeypatch.setattr(host_cpu.toolchain, "find_compiler", lambda c: "/usr/bin/" + c)
    monkeypatch.setattr(host_cpu.toolchain, "tool_output", lambda path, args: output)
    assert host_cpu.native_cpu("gcc", aarch64) == name


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
def test_real_gcc_names_this_cpu():
    name = host_cpu.native_cpu("gcc")
    assert name is None or (name and " " not in name and name != "native")
