"""In-core analysis of the compiled kernel with llvm-mca."""
from __future__ import annotations

import dataclasses
import json
import shutil
from pathlib import Path

import pytest

from helpers import IVB, KERNELS, SKX, SNB, SNB_MCA_RESOURCES, requires_tool, run_cli

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
#: blocks, unroll factors and port counts below were read from gcc 12 / llvm-mca 14 / OSACA 0.7.1 output
gcc12 = requires_tool("gcc", "12", "hand-checked gcc 12 assembly")
mca14 = requires_tool("llvm-mca", "14", "port pressure read from llvm-mca 14")
osaca071 = requires_tool("osaca", "0.7.1", "port pressure read from OSACA 0.7.1")
SIZES = {"triad.c": {"N": 1000}, "2d-5pt.c": {"M": 100, "N": 1000}, "3d-7pt.c": {"M": 50, "N": 100},
         "3d-long-range.c": {"M": 50, "N": 100}}


def _k(name):
    return parse_kernel_file(str(KERNELS / name))[0], (KERNELS / name).read_text()


@needs_tools
@gcc12
@pytest.mark.parametrize("machine", [SNB, SKX])
@pytest.mark.parametrize("name", sorted(SIZES))
def test_block_and_unroll_factor(machine, name):
    """Hand check of gcc 12 -O3 output for AVX (SNB) and AVX-512 machines (SKX, gcc prefers 256-bit
    vectors): the kernel loop advances its pointers by 32 B per pass ('addq $32, %rax'), i.e. 4
    iterations of 8 B; the block contains the kernel's vector arithmetic and ends with the back jump."""
    m = load_machine(machine)
    k, text = _k(name)
    asm = compile_to_assembly(generate_c(k, SIZES[name]), choose_compiler(m))
    b = find_kernel_block(asm, 8)
    assert b.iterations_per_pass == 4 and b.bytes_per_pass == 32
    assert b.lines[-1].startswith("jne") or b.lines[-1].startswith("jb")
    assert any(ln.startswith("addq\t$32") or ln.startswith("addq $32") for ln in b.lines)
    assert sum("pd" in ln.split()[0] for ln in b.lines) >= len(k.reads)  # packed double work inside


def _info(ports, u, thr=None, sim=None, block=""):
    return CompiledInCore("llvm-mca", "14", "gcc", "12", ("-O3",), ".L1", block, u, 8 * u, ports,
                          thr if thr is not None else max(ports.values()), sim if sim is not None else
                          max(ports.values()), "")


#: a reduction without partial sums: %xmm0 is read and written in every pass (a loop-carried chain)
ACCUMULATOR = "vaddsd (%rax), %xmm0, %xmm0\naddq $8, %rax\ncmpq %rax, %rdx\njne .L1\n"
#: no loop-carried chain: the only register carried between passes is the pointer %rax
STREAM = "vmovsd (%rax), %xmm1\nvmulsd %xmm2, %xmm1, %xmm1\nvmovsd %xmm1, (%rcx,%rax)\naddq $8, %rax\n" \
         "cmpq %rax, %rdx\njne .L1\n"


def test_unit_conversion_both_ways():
    """cy/CL = (cy per pass) / (iterations per pass) * (iterations per CL); never multiplied."""
    m = load_machine(SNB)
    r4 = to_incore_result(_info({"SBPort0": 5.0, "SBPort23": 3.0}, 4), m, 8)
    assert (r4.T_OL, r4.T_nOL) == (10.0, 6.0)  # 5 cy / 4 it * 8 it/CL; 3 cy / 4 it * 8 it/CL
    r16 = to_incore_result(_info({"SBPort0": 5.0, "SBPort23": 3.0}, 16), m, 8)
    assert (r16.T_OL, r16.T_nOL) == (2.5, 1.5)
    # and back: cy/it = cy/CL / it_per_CL = cy per pass / iterations per pass
    assert r4.T_OL / 8 == 5.0 / 4 and r16.T_nOL / 8 == 3.0 / 16


def test_dependency_bound_block_becomes_t_ol():
    """Simulated time above the throughput bound with an accumulator chain: T_OL is the simulated time,
    and the note names the chain (register and instruction)."""
    m = load_machine(SNB)
    r = to_incore_result(_info({"SBPort1": 1.0, "SBPort23": 0.5}, 4, thr=1.0, sim=12.0, block=ACCUMULATOR), m, 8)
    assert r.T_OL == 24.0 and r.dependency == 3.0
    note = next(n for n in r.notes if "latency-bound" in n)
    assert "chain through %xmm0 (vaddsd (%rax), %xmm0, %xmm0)" in note
    assert r.origin["T_OL"].startswith("the loop-carried dependency chain through %xmm0")


def test_simulated_excess_without_a_chain_keeps_the_throughput_bound():
    """daxpby, triad, box27: llvm-mca's simulated cycles exceed its throughput bound with no
    loop-carried chain in the block; T_OL stays the port bound, no "latency-bound", a note says why."""
    m = load_machine(SNB)
    r = to_incore_result(_info({"SBPort1": 1.0, "SBPort23": 0.5}, 4, thr=1.0, sim=1.67, block=STREAM), m, 8)
    assert r.T_OL == 2.0 and r.dependency == 0.0
    assert not any("latency-bound" in n for n in r.notes)
    assert any("no loop-carried dependency chain" in n and "T_OL is the throughput bound" in n for n in r.notes)
    assert r.origin["T_OL"] == "SBPort1 (all instructions): 1.00 cy per pass x 2 passes per CL"


def test_parse_llvm_mca_report():
    text = """Iterations:        200
Instructions:      3000
Total Cycles:      1028
Total uOps:        3800

Dispatch Width:    4
Block RThroughput: 4.8


""" + SNB_MCA_RESOURCES + """ -      -     3.26   3.39   2.00   3.36   4.50   4.40
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
    r, info = compiled_incore(k, m, {"N": 1000}, 8, use_cache=False)
    assert r.dependency >= 2.9  # one vaddsd (3 cy) per iteration in order
    assert r.T_OL >= 8 * 2.9


@needs_tools
def test_cache_is_keyed_by_flags_and_machine(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    k, text = _k("triad.c")
    snb = load_machine(SNB)
    _, a = compiled_incore(k, snb, {"N": 1000}, 8)
    _, a2 = compiled_incore(k, snb, {"N": 1000}, 8)
    assert a2 == a and len(list((tmp_path / "incore").iterdir())) == 1
    _, b = compiled_incore(k, snb, {"N": 1000}, 8, flags="-O2 -march=corei7-avx")
    assert b.flags == ("-O2", "-march=corei7-avx")
    ivb = dataclasses.replace(snb, in_core=dataclasses.replace(snb.in_core, llvm_mca_cpu="ivybridge"))
    compiled_incore(k, ivb, {"N": 1000}, 8)
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
    data = yaml.safe_load(Path(_builtin_path(SNB)).read_text())
    data["in_core"]["llvm_mca_cpu"] = "no-such-cpu"
    f = tmp_path / "m.yml"
    f.write_text(yaml.safe_dump(data))
    p = run_cli("analyze", KERNELS / "triad.c", "-m", f, "-D", "N=1000", "--incore", "llvm-mca", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "llvm-mca" in p.stderr, p.stderr


@needs_tools
@gcc12
@mca14
def test_cli_llvm_mca_json():
    # hand-checked block of gcc's code for arrays known to be 32 B aligned (--assume-aligned 32)
    p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", IVB, "-D", "N=1000", "-D", "M=1000", "--incore", "llvm-mca",
                "--json", "--assume-aligned", "32")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["incore"]["source"] == "llvm-mca"
    # AVX split into 16 B halves: llvm-mca counts 7 load uops per pass (4 it), 14 per CL on 2 load ports:
    # 7 cy; but the 32 B operand of vaddpd is two 16 B transfers on IVB: 128 B per pass, 256 B per CL over
    # 2 x 16 B/cy = 8 cy (the L1 data-path bound; ecm-model-slides.txt, IVB 2D 5-pt: T_nOL = 8.0 cy)
    assert doc["ecm"]["T_nOL_cy_per_cl"] == pytest.approx(8.0, abs=0.05)
    assert any("in-core from llvm-mca" in n for n in doc["notes"])
    ci = doc["incore"]["compiled"]
    assert ci["iterations_per_pass"] == 4 and ci["pointer_increment_B_per_pass"] == 32
    assert ci["block"].rstrip().split("\n")[-1].startswith("jne")
    # cy/CL from cy/pass: divide by iterations per pass, multiply by iterations per CL (8); the ports give
    # 7 cy/CL, below the data-path bound that sets T_nOL
    assert ci["load_ports_cy_per_pass"]["SBPort23"] / 4 * 8 == pytest.approx(7.0, abs=0.05)
    # T_OL: the balanced ports carry 3.0, 3.0, 4.5, 2.0, 3.0 cy per pass (SBPort0, 1, 23, 4, 5); the
    # address ports SBPort23 (7 load + 2 store-address uops on 2 ports) count in T_OL as in Kerncraft's port
    # lists: 4.5 / 4 * 8 = 9.0 cy/CL, the T_OL of ecm-model-slides.txt's Kerncraft 2D 5-pt example (9.0 cy)
    over = {k: v for k, v in ci["balanced_ports_cy_per_pass"].items() if k.startswith("SBPort")}
    assert over == pytest.approx({"SBPort0": 3.0, "SBPort1": 3.0, "SBPort23": 4.5, "SBPort4": 2.0, "SBPort5": 3.0})
    assert doc["ecm"]["T_OL_cy_per_cl"] == pytest.approx(9.0)


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
@gcc12
@osaca071
def test_osaca_backend_ports():
    """2D 5-pt on SNB, arrays known to be 32 B aligned, AVX as 2x16 B halves where unaligned: 9 loads of
    16 B per pass -> 4.5 cy on the 2 AGUs and 3.5 cy on the load data ports 2D/3D ('non_overlapping' in
    the machine model) -> 3.5 / 4 * 8 = 7 cy/CL from the ports; OSACA's SNB model counts the 32 B operand
    of vaddpd as one 16 B transfer, so the L1 data paths (256 B per CL / 32 B/cy) set T_nOL = 8 cy/CL
    (ecm-model-slides.txt, IVB 2D 5-pt: T_nOL = 8.0 cy)."""
    m = load_machine(SNB)
    k, text = _k("2d-5pt.c")
    r, info = compiled_incore(k, m, SIZES["2d-5pt.c"], 8, "osaca", use_cache=False, assume_aligned=32)
    assert info.analyzer == "osaca" and info.iterations_per_pass == 4
    assert info.ports_cy_per_pass["2D"] == 3.5 and info.ports_cy_per_pass["2"] == 4.5
    assert r.components["2D"] == 7.0 and r.T_nOL == 8.0
    # address ports 2/3 count in T_OL (Kerncraft's lists): 4.5 / 4 * 8 = 9.0 cy/CL, the slides' T_OL = 9.0 cy
    assert r.T_OL == 9.0


def test_osaca_needs_a_known_architecture():
    from loopmodel.compiled.osaca_backend import arch_for
    m = load_machine(SNB)
    assert arch_for(m) == ("SNB", "")
    odd = dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, llvm_mca_cpu="pentium4"))
    with pytest.raises(ToolError, match="no OSACA architecture"):
        arch_for(odd)


def test_access_kind_x86_and_aarch64():
    from loopmodel.compiled.instructions import access_kind
    assert access_kind("vaddpd\t(%r11,%rax), %ymm0, %ymm0") == (True, False)
    assert access_kind("vmovupd\t%ymm0, (%rcx,%rax)") == (False, True)
    assert access_kind("vextractf128\t$0x1, %ymm0, 16(%rdx,%rax)") == (False, True)
    assert access_kind("addq\t%rax, 8(%rdx)") == (True, True)
    assert access_kind("leaq\t8(%rdx,%rax), %rcx") == (False, False)
    assert access_kind("cmpq\t$16000, %rax") == (False, False)
    assert access_kind("cmpq\t%rax, (%rdx)") == (True, False)
    assert access_kind("ldp\tq0, q1, [x1], 32", aarch64=True) == (True, False)
    assert access_kind("str\tq0, [x2, x3]", aarch64=True) == (False, True)
    assert access_kind("fmla\tv0.2d, v1.2d, v2.2d", aarch64=True) == (False, False)


def test_macro_fusion_drops_the_compare_only_before_a_conditional_jump():
    from loopmodel.compiled.ports import InstrPressure, fuse_compare_branch
    ins = [InstrPressure("addq\t$32, %rax", {"P0": 1.0}), InstrPressure("cmpq\t$8, %rax", {"P5": 1.0}),
           InstrPressure("jne\t.L7", {"P5": 1.0}), InstrPressure("cmpq\t$8, %rax", {"P1": 1.0}),
           InstrPressure("jmp\t.L7", {"P5": 1.0})]
    out = fuse_compare_branch(ins)
    assert [i.pressure for i in out] == [{"P0": 1.0}, {}, {"P5": 1.0}, {"P1": 1.0}, {"P5": 1.0}]


def test_balance_by_hand():
    """SNB triad as llvm-mca 14 schedules it: vmulpd on p0, vaddpd on p1, addq on p0 every time
    although p0/p1/p5 may take it, jne on p5. Optimal: addq goes to p5 ... all three ports at 1.0.
    A load uop (p23) never trades with an arithmetic port, and a divider keeps its pressure."""
    from loopmodel.compiled.ports import InstrPressure, balance, port_totals
    cls = lambda u: None if "Div" in u else (u.startswith("P23") and "mem" or "alu")  # noqa: E731
    ins = [InstrPressure("vmulpd", {"P0": 1.0, "P23.0": 1.0}, ("P0", "P23.0", "P23.1")),
           InstrPressure("vaddpd", {"P1": 1.0, "P23.1": 1.0}, ("P1", "P23.0", "P23.1")),
           InstrPressure("addq", {"P0": 1.0}, ("P0", "P1", "P5")),
           InstrPressure("jne", {"P5": 1.0}, ("P5",)),
           InstrPressure("vdivpd", {"P0": 1.0, "Div": 4.0}, ("P0", "Div"))]
    tot = port_totals(balance(ins, cls))
    assert tot["Div"] == 4.0 and tot["P23.0"] == pytest.approx(1.0) and tot["P23.1"] == pytest.approx(1.0)
    # 5 arithmetic uops (mul, add, addq, jne, div's p0 uop) over p0/p1/p5 with vmul/vdiv fixed on p0: p0 = 2
    assert tot["P0"] == pytest.approx(2.0) and tot["P1"] + tot["P5"] == pytest.approx(3.0)
    assert max(tot["P1"], tot["P5"]) == pytest.approx(1.5)
    assert sum(tot.values()) == pytest.approx(sum(sum(i.pressure.values()) for i in ins))


needs_both = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None or not __import__(
    "loopmodel.compiled.osaca_backend", fromlist=["x"]).available(), reason="gcc, llvm-mca and OSACA needed")


@needs_both
@gcc12
@pytest.mark.parametrize("machine", [SNB, SKX])
@pytest.mark.parametrize("name", sorted(SIZES))
def test_llvm_mca_and_osaca_agree_within_25_percent(machine, name):
    """T_OL and T_nOL from the two analyzers within 25 % of the larger (code for
    arrays known to be 32 B aligned: full-width AVX where the offsets allow)."""
    m = load_machine(machine)
    k, text = _k(name)
    a, ia = compiled_incore(k, m, SIZES[name], 8, "llvm-mca", use_cache=False, assume_aligned=32)
    b, ib = compiled_incore(k, m, SIZES[name], 8, "osaca", use_cache=False, assume_aligned=32)
    assert ia.block == ib.block and ia.iterations_per_pass == ib.iterations_per_pass == 4
    for x, y in ((a.T_OL, b.T_OL), (a.T_nOL, b.T_nOL)):
        assert abs(x - y) <= 0.25 * max(x, y) + 1e-9, (a.T_OL, a.T_nOL, b.T_OL, b.T_nOL)


@needs_tools
@gcc12
@mca14
def test_roofline_asm_cpu_roof_from_block():
    """RooflineASM: the CPU roof is max(T_OL, T_nOL) of the compiled block, per core."""
    p = run_cli("analyze", KERNELS / "3d-long-range.c", "-m", SNB, "-D", "M=50", "-D", "N=100", "-p", "RooflineASM",
                "-p", "Roofline", "--incore", "llvm-mca", "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    ra, r = doc["roofline_asm"], doc["roofline"]
    # the block: T_OL = 57.0 (SBPort23: 28.5 cy per 4 it), T_nOL = 54.0 cy/CL
    # -> 41 FLOP/it * 8 it/CL / 57 cy * 2.7 GHz = 15.54 GFLOP/s
    t_core = 57.0
    assert (doc["incore"]["T_OL_cy_per_cl"], doc["incore"]["T_nOL_cy_per_cl"]) == pytest.approx((57.0, 54.0))
    assert ra["cpu_time_cy_per_cl"] == pytest.approx(t_core) and ra["cpu_roof_source"].startswith("llvm-mca")
    assert ra["cpu_performance_flop_s"] == pytest.approx(15.54e9, rel=1e-3)
    # the Roofline's CPU roof is T_OL of the same in-core result (RooflineASM: max(T_OL, T_nOL))
    assert r["cpu_roof_source"] == "T_OL of the llvm-mca in-core model" and r["cpu_time_cy_per_cl"] == pytest.approx(t_core)
    assert [lv["time_cy_per_cl"] for lv in ra["levels"]] == [lv["time_cy_per_cl"] for lv in r["levels"]]
    # the slowest of 57.0 (core) and the levels 48.27, 43.90, 67.11, 0 cy/CL: L3
    assert [lv["time_cy_per_cl"] for lv in ra["levels"]] == pytest.approx([48.27, 43.90, 67.11, 0.0], abs=0.01)
    assert ra["time_cy_per_cl"] == pytest.approx(67.11, abs=0.01)
    text = run_cli("analyze", KERNELS / "3d-long-range.c", "-m", SNB, "-D", "M=50", "-D", "N=100",
                   "-p", "RooflineASM", "--incore", "analytic")
    assert text.returncode == 0, text.stderr
    assert "----- RooflineASM -----" in text.stdout and "block throughput" in text.stdout


def test_roofline_asm_without_any_analyzer_is_one_line(monkeypatch):
    import loopmodel.compiled.llvm_mca as lm
    import loopmodel.compiled.osaca_backend as ob
    from helpers import analyze

    from loopmodel.errors import ModelError
    monkeypatch.setattr(lm, "find_llvm_mca", lambda: None)
    monkeypatch.setattr(ob, "available", lambda: False)
    k, text = _k("triad.c")
    with pytest.raises(ModelError, match="RooflineASM needs llvm-mca or OSACA"):
        analyze("triad.c", SNB, {"N": 1000}, models=("RooflineASM",), kernel_text=text)


@needs_tools
def test_cli_default_is_the_first_available_analyzer_and_a_sweep_compiles_once(tmp_path):
    env_dir = tmp_path / "cache"
    import os
    import subprocess
    import sys
    env = dict(os.environ, LOOPMODEL_CACHE_DIR=str(env_dir))
    p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "2d-5pt.c"), "-m", SNB,
                        "-D", "M=100", "-D", "N=500:1000:100", "--json", "-p", "ECM"],
                       capture_output=True, text=True, env=env, timeout=120)
    assert p.returncode == 0, p.stderr
    docs = [json.loads(line) for line in p.stdout.splitlines()]  # a sweep prints JSON Lines
    assert len(docs) == 6 and {d["incore"]["source"] for d in docs} == {"llvm-mca"}
    assert len(list((env_dir / "incore").iterdir())) == 1  # one compilation for the whole sweep
    assert all(any("done once, at M=100, N=1000" in n for n in d["notes"]) for d in docs[:-1])


def _tx2_reference():
    from helpers import reference_dir
    return reference_dir() / "ARMv8_ThunderX2-CN9980.yml"


@pytest.mark.skipif(shutil.which("aarch64-linux-gnu-gcc") is None or find_llvm_mca() is None,
                    reason="cross compiler gcc-aarch64-linux-gnu and llvm-mca needed")
def test_aarch64_thunderx2_reference_file():
    """Hand check of aarch64-linux-gnu-gcc 12 -Ofast for ThunderX2: the triad loop is
    ldr q1 / ldr q0 / fmla v0.2d / str q0 / add x0, x0, 16 / cmp / bne: 16 B = 2 iterations per pass."""
    m = load_machine(str(_tx2_reference()))
    assert m.isa.lower() == "aarch64" and m.in_core.llvm_mca_cpu == "thunderx2t99"
    k, text = _k("triad.c")
    r, info = compiled_incore(k, m, {"N": 1000}, 8, use_cache=False)
    assert info.compiler == "aarch64-linux-gnu-gcc"
    assert info.iterations_per_pass == 2 and info.bytes_per_pass == 16
    assert info.block.split("\n")[-2].startswith("bne") and any("fmla" in ln for ln in info.block.split("\n"))
    assert sum(ln.startswith("ldr") for ln in info.block.split("\n")) == 2
    # 2 loads per pass on the 2 load ports (THX2T99P4/P5): 1 cy per pass, 4 passes per CL
    assert r.T_nOL == pytest.approx(4.0)
    assert r.T_OL > 0


def test_aarch64_without_cross_compiler_is_one_line(tmp_path):
    """With no aarch64-linux-gnu-gcc on PATH: one line saying which package to install."""
    import os
    import subprocess
    import sys
    ref = _tx2_reference()
    bindir = tmp_path / "bin"
    bindir.mkdir()
    env = dict(os.environ, PATH=str(bindir), LOOPMODEL_CACHE_DIR=str(tmp_path / "c"))
    p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "triad.c"), "-m", str(ref),
                        "-D", "N=1000", "--incore", "llvm-mca"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    # no llvm-mca either on that PATH: the first missing tool is named, in one line
    assert "llvm-mca not found" in p.stderr or "gcc-aarch64-linux-gnu" in p.stderr
    if (llvm := find_llvm_mca()) is not None:
        (bindir / os.path.basename(llvm)).symlink_to(llvm)
        p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "triad.c"), "-m", str(ref),
                            "-D", "N=1000", "--incore", "llvm-mca"], capture_output=True, text=True, env=env,
                           timeout=60)
        assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
        assert "compiler 'aarch64-linux-gnu-gcc' not found" in p.stderr and "gcc-aarch64-linux-gnu" in p.stderr
    # --incore auto degrades to the analytic model and says why
    p = subprocess.run([sys.executable, "-m", "loopmodel", "analyze", str(KERNELS / "triad.c"), "-m", str(ref),
                        "-D", "N=1000", "-p", "ECM", "--json"], capture_output=True, text=True, env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["incore"]["source"] == "analytic"
    assert any("aarch64" in n and "analytic model used" in n for n in doc["notes"])


@needs_tools
@gcc12
def test_fully_unrolled_loop_is_one_line():
    """N=4: gcc -O3 unrolls the triad loop completely; there is no loop block to analyze."""
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=4", "--incore", "llvm-mca", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "no loop found in the compiled kernel" in p.stderr and "Traceback" not in p.stderr


def test_osaca_not_installed_is_a_tool_error(monkeypatch):
    import loopmodel.compiled.osaca_backend as ob
    monkeypatch.setattr(ob, "available", lambda: False)
    k, text = _k("triad.c")
    with pytest.raises(ToolError, match=r"OSACA is not installed \(pip install 'loopmodel\[osaca\]'\)"):
        compiled_incore(k, load_machine(SNB), {"N": 1000}, 8, "osaca", use_cache=False)


@pytest.mark.skipif(shutil.which("powerpc64le-linux-gnu-gcc") is not None, reason="cross compiler installed")
def test_power9_without_cross_compiler_names_the_package():
    p = run_cli("analyze", KERNELS / "daxpby.c", "-m", "Power9_8335-GTX", "-D", "N=1000", "--incore", "llvm-mca",
                "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "powerpc64le-linux-gnu-gcc" in p.stderr and "gcc-powerpc64le-linux-gnu" in p.stderr


PI = """double s;
double dx;

for (int i = 0; i < N; ++i)
    s = s + 4.0 / (1.0 + ((i + 0.5) * dx) * ((i + 0.5) * dx));
"""


@pytest.mark.parametrize("text, trips, expected", [
    ("vaddsd %xmm0, %xmm1, %xmm1\naddl $1, %eax\ncmpl $1000, %eax\njne .L2", 1000, (1.0, "eax")),
    ("vaddpd %zmm0, %zmm1, %zmm1\naddl $1, %eax\ncmpl $62, %eax\njne .L2", 1000, (16.0, "eax")),
    ("vaddpd %zmm0, %zmm1, %zmm1\naddq $16, %rax\ncmpq $992, %rax\njne .L2", 1000, (16.0, "rax")),
    ("vaddsd %xmm0, %xmm1, %xmm1\naddl $1, %eax\ncmpl %edx, %eax\njne .L2", 1000, (None, None)),  # limit unknown
    ("vaddpd %zmm0, %zmm1, %zmm1\naddl $1, %eax\ncmpl $40, %eax\njne .L2", 100, (None, None)),  # 2.5 it: not whole
    ("fadd d0, d0, d1\nadd w0, w0, #1\ncmp w0, 1000\nb.ne .L2", 1000, (1.0, "w0")),
])
def test_counter_iterations(text, trips, expected):
    from loopmodel.compiled.asm import counter_iterations
    assert counter_iterations(text.split("\n"), trips, aarch64=text.startswith("fadd")) == expected


@needs_tools
def test_loop_without_arrays_is_analyzed_from_its_counter(tmp_path):
    """A loop on values in registers (numerical integration) has no pointer to read the
    iterations per pass from: the loop counter gives them, scalar (1 per pass) without
    reassociation and a whole vector per pass with -Ofast."""
    k = tmp_path / "pi.c"
    k.write_text(PI)
    kernel, text = parse_kernel_file(str(k))[0], PI
    machine = load_machine(SKX)
    for flags, per_pass in (("-O2 -march=skylake-avx512", 1), ("-Ofast -march=skylake-avx512 -mprefer-vector-width=512",
                                                                  8)):
        res, info = compiled_incore(kernel, machine, {"N": 1000}, 8, flags=flags, use_cache=False,
                                    trust_machine=True)
        assert info.iterations_per_pass % per_pass == 0 and info.bytes_per_pass == 0
        assert res.T_OL > 0 and any("from the loop counter" in n for n in res.notes)
