"""In-core analysis of the compiled kernel with llvm-mca (issue #4, first part)."""
from __future__ import annotations

import dataclasses
import json
import shutil

import pytest

from helpers import IVB, KERNELS, SKX, SNB, run_cli

from loopmodel.compiled.asm import find_kernel_block
from loopmodel.compiled.codegen import generate_c
from loopmodel.compiled.compile import choose_compiler, compile_to_assembly
from loopmodel.compiled.incore import CompiledInCore, compiled_incore, to_incore_result
from loopmodel.compiled.llvm_mca import find_llvm_mca, parse
from loopmodel.errors import ToolError
from loopmodel.fileio.c_kernel import parse_kernel_file
from loopmodel.fileio.machine_files import load_machine

needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")
SIZES = {"triad.c": {"N": 1000}, "2d-5pt.c": {"M": 100, "N": 1000}, "3d-7pt.c": {"M": 50, "N": 100},
         "3d-long-range.c": {"M": 50, "N": 100}}


def _k(name):
    return parse_kernel_file(str(KERNELS / name))[0], (KERNELS / name).read_text()


@needs_tools
@pytest.mark.parametrize("machine", [SNB, SKX])
@pytest.mark.parametrize("name", sorted(SIZES))
def test_block_and_unroll_factor(machine, name):
    """Hand check of gcc 12 -O3 output for AVX (SNB) and AVX-512 machines (SKX, gcc prefers 256-bit
    vectors): the kernel loop advances its pointers by 32 B per pass ('addq $32, %rax'), i.e. 4
    iterations of 8 B; the block contains the kernel's vector arithmetic and ends with the back jump."""
    m = load_machine(machine)
    k, text = _k(name)
    asm = compile_to_assembly(generate_c(k, text, SIZES[name]), choose_compiler(m))
    b = find_kernel_block(asm, 8)
    assert b.iterations_per_pass == 4 and b.bytes_per_pass == 32
    assert b.lines[-1].startswith("jne") or b.lines[-1].startswith("jb")
    assert any(ln.startswith("addq\t$32") or ln.startswith("addq $32") for ln in b.lines)
    assert sum("pd" in ln.split()[0] for ln in b.lines) >= len(k.reads)  # packed double work inside


def _info(ports, u, thr=None, sim=None):
    return CompiledInCore("llvm-mca", "14", "gcc", "12", ("-O3",), ".L1", "", u, 8 * u, ports,
                          thr if thr is not None else max(ports.values()), sim if sim is not None else
                          max(ports.values()), "")


def test_unit_conversion_both_ways():
    """cy/CL = (cy per pass) / (iterations per pass) * (iterations per CL); never multiplied."""
    m = load_machine(SNB)
    r4 = to_incore_result(_info({"SBPort0": 2.0, "SBPort23": 3.0}, 4), m, 8)
    assert (r4.T_OL, r4.T_nOL) == (4.0, 6.0)
    r16 = to_incore_result(_info({"SBPort0": 2.0, "SBPort23": 3.0}, 16), m, 8)
    assert (r16.T_OL, r16.T_nOL) == (1.0, 1.5)
    # and back: cy/it = cy/CL / it_per_CL = cy per pass / iterations per pass
    assert r4.T_OL / 8 == 2.0 / 4 and r16.T_nOL / 8 == 3.0 / 16


def test_dependency_bound_block_becomes_t_ol():
    m = load_machine(SNB)
    r = to_incore_result(_info({"SBPort1": 1.0, "SBPort23": 0.5}, 4, thr=1.0, sim=12.0), m, 8)
    assert r.T_OL == 24.0 and r.dependency == 3.0
    assert any("latency-bound" in n for n in r.notes)


def test_parse_llvm_mca_report():
    text = """Iterations:        200
Instructions:      3000
Total Cycles:      1028
Total uOps:        3800

Dispatch Width:    4
Block RThroughput: 4.8


Resources:
[0]   - SBDivider
[1]   - SBFPDivider
[2]   - SBPort0
[3]   - SBPort1
[4]   - SBPort4
[5]   - SBPort5
[6.0] - SBPort23
[6.1] - SBPort23


Resource pressure per iteration:
[0]    [1]    [2]    [3]    [4]    [5]    [6.0]  [6.1]
 -      -     3.26   3.39   2.00   3.36   4.50   4.40
"""
    rep = parse(text)
    assert rep.ports == {"SBDivider": 0.0, "SBFPDivider": 0.0, "SBPort0": 3.26, "SBPort1": 3.39, "SBPort4": 2.0,
                         "SBPort5": 3.36, "SBPort23": 4.5}
    assert rep.block_throughput == 4.8 and rep.cycles_per_pass == 1028 / 200
    with pytest.raises(ToolError):
        parse("garbage")


@needs_tools
def test_reduction_without_fast_math_is_latency_bound():
    m = load_machine(SNB)
    k, text = _k("dot.c")
    r, info = compiled_incore(k, text, m, {"N": 1000}, 8, use_cache=False)
    assert r.dependency >= 2.9  # one vaddsd (3 cy) per iteration in order
    assert r.T_OL >= 8 * 2.9


@needs_tools
def test_cache_is_keyed_by_flags_and_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    k, text = _k("triad.c")
    snb = load_machine(SNB)
    _, a = compiled_incore(k, text, snb, {"N": 1000}, 8)
    _, a2 = compiled_incore(k, text, snb, {"N": 1000}, 8)
    assert a2 == a and len(list((tmp_path / "incore").iterdir())) == 1
    _, b = compiled_incore(k, text, snb, {"N": 1000}, 8, flags="-O2 -march=corei7-avx")
    assert b.flags == ("-O2", "-march=corei7-avx")
    ivb = dataclasses.replace(snb, in_core=dataclasses.replace(snb.in_core, llvm_mca_cpu="ivybridge"))
    compiled_incore(k, text, ivb, {"N": 1000}, 8)
    assert len(list((tmp_path / "incore").iterdir())) == 3


@needs_tools
@pytest.mark.parametrize("args,needle", [
    (["--compiler", "no-such-cc"], "compiler 'no-such-cc' not found"),
    (["--compiler-flags", "-O3 -fno-such-flag"], "gcc failed"),
    (["--asm-block", ".Lnowhere"], "--asm-block .Lnowhere"),
])
def test_compiled_errors_are_one_line(args, needle):
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=1000", "--incore", "llvm-mca", "--no-cache",
                *args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("loopmodel: ") and needle in p.stderr, p.stderr
    assert "Traceback" not in p.stderr


@needs_tools
def test_analyzer_failure_is_one_line(tmp_path):
    import yaml

    from loopmodel.fileio.machine_files import _builtin_path
    data = yaml.safe_load(_builtin_path(SNB).read_text())
    data["in_core"]["llvm_mca_cpu"] = "no-such-cpu"
    f = tmp_path / "m.yml"
    f.write_text(yaml.safe_dump(data))
    p = run_cli("analyze", KERNELS / "triad.c", "-m", f, "-D", "N=1000", "--incore", "llvm-mca", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "llvm-mca" in p.stderr, p.stderr


@needs_tools
def test_cli_llvm_mca_json():
    p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "N=1000", "-D", "M=1000", "--incore", "llvm-mca",
                "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["incore"]["source"] == "llvm-mca"
    assert doc["ecm"]["T_nOL"] == pytest.approx(9.0, abs=0.5)  # 18 loads of 16 B per CL on 2 ports: 9 cy
    assert any("in-core from llvm-mca" in n for n in doc["notes"])
    ci = doc["incore"]["compiled"]
    assert ci["iterations_per_pass"] == 4 and ci["pointer_increment_B"] == 32
    assert ci["block"].rstrip().split("\n")[-1].startswith("jne")
    # cy/CL from cy/pass: divide by iterations per pass, multiply by iterations per CL (8)
    assert doc["ecm"]["T_nOL"] == pytest.approx(max(ci["ports_cy_per_pass"]["SBPort23"], 0) / 4 * 8)


@needs_tools
def test_verbose_prints_port_table():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SKX, "-D", "N=1000", "--incore", "llvm-mca", "-p", "ECM", "-v")
    assert p.returncode == 0, p.stderr
    assert "Port pressure (llvm-mca" in p.stdout and "SKXPort0" in p.stdout and "loop block:" in p.stdout


def test_auto_falls_back_to_analytic_without_llvm_mca(monkeypatch):
    from helpers import analyze

    import loopmodel.compiled.llvm_mca as lm
    import loopmodel.compiled.osaca_backend as ob
    monkeypatch.setattr(lm, "find_llvm_mca", lambda: None)
    monkeypatch.setattr(ob, "available", lambda: False)
    k, text = _k("triad.c")
    r = analyze("triad.c", SNB, {"N": 1000}, incore="auto", kernel_text=text)
    assert r.incore.source == "analytic"
    assert any("llvm-mca not found" in n for n in r.notes)


needs_osaca = pytest.mark.skipif(shutil.which("gcc") is None or not __import__(
    "loopmodel.compiled.osaca_backend", fromlist=["x"]).available(), reason="gcc and OSACA needed")


@needs_osaca
def test_osaca_backend_ports():
    """2D 5-pt on SNB, AVX as 2x16 B halves: 9 loads of 16 B per pass -> 4.5 cy on the 2 AGUs and 3.5 cy
    on the load data ports 2D/3D ('non_overlapping' in the machine model) -> T_nOL = 3.5 / 4 * 8 = 7 cy/CL."""
    m = load_machine(SNB)
    k, text = _k("2d-5pt.c")
    r, info = compiled_incore(k, text, m, SIZES["2d-5pt.c"], 8, "osaca", use_cache=False)
    assert info.analyzer == "osaca" and info.iterations_per_pass == 4
    assert info.ports_cy_per_pass["2D"] == 3.5 and info.ports_cy_per_pass["2"] == 4.5
    assert r.T_nOL == 7.0 and r.T_OL == 9.0


def test_osaca_needs_a_known_architecture():
    from loopmodel.compiled.osaca_backend import arch_for
    m = load_machine(SNB)
    assert arch_for(m) == "SNB"
    odd = dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, llvm_mca_cpu="pentium4"))
    with pytest.raises(ToolError, match="no OSACA architecture"):
        arch_for(odd)
