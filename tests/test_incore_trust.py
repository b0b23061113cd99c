"""Compiled in-core analysis: analyzer results that miss instructions are not used, the
compiler flags and the analyzer CPU are of the same SIMD level, and T_OL/T_nOL respect the
L1 data paths of the machine model (16 B per load port and cycle on Sandy/Ivy Bridge)."""
from __future__ import annotations
import re

import dataclasses
import json
import shutil

import pytest

from helpers import IVB, KERNELS, SKX, SNB, SNB_MCA_RESOURCES, analyze, reference_dir, requires_tool, run_cli, tool_version

from loopmodel.compiled import instructions, isa
from loopmodel.compiled.incore import CompiledInCore, data_path_bound, to_incore_result, unaccounted
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.compiled.ports import InstrPressure
from loopmodel.fileio.machine_files import load_machine

ZEN4 = KERNELS.parent / "machines" / "EpycZen4_2vCPU.yml"
#: AVX-512 code with zmm registers, whatever the host (the original failure used -march=native
#: on an AVX-512 host, which gcc 12 may also compile to 256-bit code)
ZMM_FLAGS = "-O3 -march=skylake-avx512 -mprefer-vector-width=512"
#: the triad block gcc 12 makes of ZMM_FLAGS (hand-checked)
ZMM_BLOCK = ("vmovapd\t(%r15,%rax), %zmm0\nvfmadd213pd\t(%r14,%rax), %zmm1, %zmm0\nvmovapd\t%zmm0, 0(%r13,%rax)\n"
             "addq\t$64, %rax\ncmpq\t$80000, %rax\njne\t.L7\n")
AVX_BLOCK = ("vmulpd\t(%r15,%rax), %ymm1, %ymm0\nvaddpd\t(%r14,%rax), %ymm0, %ymm0\nvmovapd\t%ymm0, 0(%r13,%rax)\n"
             "addq\t$32, %rax\ncmpq\t$80000, %rax\njne\t.L7\n")

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")
needs_mca = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                               reason="gcc and llvm-mca needed")


def _osaca():
    from loopmodel.compiled.osaca_backend import available
    return available()


needs_osaca = pytest.mark.skipif(shutil.which("gcc") is None or not _osaca(), reason="gcc and OSACA needed")
#: which instruction forms OSACA lacks is a fact of its 0.7.1 data files
osaca071 = requires_tool("osaca", "0.7.1", "instruction forms missing from OSACA 0.7.1's models")


def _mca_name():
    """How notes name the installed llvm-mca: 'llvm-mca <major>'."""
    return f"llvm-mca {(tool_version('llvm-mca') or '').split('.')[0]}"


def _info(analyzer, block, ports, u=4, unknown=(), instructions=(), store_ports=()):
    return CompiledInCore(analyzer, "x", "gcc", "12", ("-O3",), ".L7", block, u, 8 * u, ports,
                          max(ports.values(), default=0.0), max(ports.values(), default=0.0), "",
                          tuple(instructions), False, tuple(unknown), tuple(store_ports), "T")


# --- validity of an analyzer result (no analyzer needed) --------------------------------

def test_unknown_forms_of_a_synthetic_osaca_result_are_unaccounted():
    """OSACA 0.7.1 for ZEN3 on the AVX-512 triad: every memory instruction is an unknown form
    ("X", no port pressure), the load ports 8/9/10 (hypothetical port lists) show nothing."""
    m = load_machine(SNB)
    ports = {"0": 0.0, "1": 0.0, "2": 0.25, "3": 0.25, "2D": 0.0, "3D": 0.0, "4": 0.0, "5": 0.5}
    info = _info("osaca", ZMM_BLOCK, ports, unknown=("vfmadd213pd (%r14,%rax), %zmm1, %zmm0",))
    bad = unaccounted(info, m)
    # the unknown form, and both loads because the load-data ports 2D/3D carry nothing
    assert bad == ["vmovapd (%r15,%rax), %zmm0", "vfmadd213pd (%r14,%rax), %zmm1, %zmm0"]
    # with the analyzer CPU's SIMD level (AVX2 for znver3) the zmm store is unaccounted too
    assert unaccounted(info, m, "AVX2") == [" ".join(ln.split()) for ln in ZMM_BLOCK.split("\n")[:3]]
    # a complete result is accepted
    ok = _info("osaca", AVX_BLOCK, dict(ports, **{"2D": 1.0, "3D": 1.0, "4": 1.0}))
    assert unaccounted(ok, m, "AVX") == []


def test_llvm_mca_load_without_pressure_is_unaccounted():
    m = load_machine(SNB)
    rows = [InstrPressure("vmulpd\t(%r15,%rax), %ymm1, %ymm0", {"SBPort0": 1.0, "SBPort23.0": 1.0}),
            InstrPressure("vaddpd\t(%r14,%rax), %ymm0, %ymm0", {}),
            InstrPressure("vmovapd\t%ymm0, 0(%r13,%rax)", {"SBPort4": 1.0, "SBPort23.1": 1.0})]
    info = _info("llvm-mca", AVX_BLOCK, {"SBPort0": 1.0, "SBPort23": 1.0, "SBPort4": 1.0}, instructions=rows)
    assert unaccounted(info, m, "AVX") == ["vaddpd (%r14,%rax), %ymm0, %ymm0"]


def test_simd_level_of_instructions_flags_and_cpus():
    assert [instructions.isa_level(ln) for ln in ZMM_BLOCK.split("\n")[:4]] == ["AVX-512"] * 3 + ["SSE"]
    assert instructions.isa_level("vfmadd231pd\t%ymm1, %ymm2, %ymm3") == "AVX2"
    assert instructions.isa_level("vpaddd\t%ymm1, %ymm2, %ymm3") == "AVX2"
    assert instructions.isa_level("vaddpd\t%ymm1, %ymm2, %ymm3") == "AVX"
    assert instructions.isa_level("vperm2f128\t$3, %ymm1, %ymm1, %ymm2") == "AVX"  # a vp- mnemonic of AVX
    assert instructions.isa_level("vaddpd\t%xmm17, %xmm2, %xmm3") == "AVX-512"
    assert instructions.isa_level("vaddpd\t(%rax){1to8}, %zmm2, %zmm3{%k1}") == "AVX-512"
    assert instructions.isa_level("addpd\t%xmm1, %xmm2") == "SSE"
    assert instructions.isa_level("fmla\tz0.d, p0/m, z1.d, z2.d", aarch64=True) == "SVE"
    assert instructions.isa_level("fmla\tv0.2d, v1.2d, v2.2d", aarch64=True) == "NEON"
    assert isa.level_from_macros("#define __AVX__ 1\n#define __AVX2__ 1\n") == "AVX2"
    assert isa.level_from_macros("#define __ARM_NEON 1\n#define __ARM_FEATURE_SVE 1\n", aarch64=True) == "SVE"
    # every CPU our built-in x86/AArch64 machine models and the Kerncraft converter name is tabulated
    from loopmodel.compiled.osaca_backend import ARCH
    from loopmodel.fileio.machine_files import builtin_names
    cpus = {load_machine(n).in_core.llvm_mca_cpu for n in builtin_names()} | set(ARCH)
    assert {c for c in cpus if isa.cpu_isa(c) is None} <= {"pwr9"}
    assert (isa.cpu_isa("sandybridge"), isa.cpu_isa("haswell"), isa.cpu_isa("znver3"),
            isa.cpu_isa("skylake-avx512"), isa.cpu_isa("a64fx")) == ("AVX", "AVX2", "AVX2", "AVX-512", "SVE")


@needs_gcc
def test_simd_level_of_compiler_flags():
    levels = {f: isa.flags_isa("gcc", tuple(f.split()), "t") for f in
              ("-O3", "-O3 -march=corei7-avx", "-O3 -march=znver3", "-O3 -march=skylake-avx512")}
    assert list(levels.values()) == ["SSE", "AVX", "AVX2", "AVX-512"]


# --- the original failure: AVX-512 code, znver3 analyzer CPU -----------------------------

@needs_mca
def test_avx512_code_for_a_znver3_model_never_gives_zero_t_nol():
    """Triad (two loads per iteration) compiled to zmm code for a machine whose analyzer CPU is
    znver3: llvm-mca 14 rejects the block, OSACA 0.7.1 reports no pressure for its memory
    instructions; loopmodel printed { 1.0 || 0.0 | ... }. Now neither result is used: the
    analytic model gives T_nOL = 128 B per CL / 64 B/cy = 2 cy/CL, and the note names the
    instructions each analyzer could not time."""
    text = (KERNELS / "triad.c").read_text()
    r = analyze("triad.c", str(ZEN4), {"N": 10000}, incore="auto", kernel_text=text, compiler_flags=ZMM_FLAGS,
                models=("ECM",), use_cache=False, assume_aligned=64)
    assert r.incore.T_nOL >= 2.0 and r.incore.source == "analytic"
    note = next(n for n in r.notes if "analytic model used" in n)
    assert _mca_name() in note and re.search(r"vfmadd\d+pd [^;]*%zmm", note) and "AVX2 at most" in note
    if tool_version("osaca") == "0.7.1":  # its ZEN3 model lacks the zmm forms
        assert "osaca 0.7.1 (ZEN3)" in note and len(re.findall(r"vmovapd [^;]*%zmm", note)) >= 2


@needs_mca
def test_explicit_llvm_mca_with_unknown_instructions_is_one_line():
    p = run_cli("analyze", KERNELS / "triad.c", "-m", ZEN4, "-D", "N=10000", "--incore", "llvm-mca",
                "--compiler-flags", ZMM_FLAGS, "--assume-aligned", "64", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert p.stderr.startswith(f"loopmodel: {_mca_name()}") and "vfmadd213pd" in p.stderr and "Traceback" not in p.stderr


@needs_osaca
@osaca071
def test_explicit_osaca_with_unknown_forms_is_one_line():
    """OSACA 0.7.1's SKX model lacks the zmm forms of vmovapd: no SIMD-level mismatch (skylake-avx512
    has AVX-512), the unknown forms alone reject the result."""
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SKX, "-D", "N=10000", "--incore", "osaca",
                "--compiler-flags", ZMM_FLAGS, "--assume-aligned", "64", "--no-cache")
    assert p.returncode == 2 and p.stderr.count("\n") == 1, p.stderr
    assert "osaca 0.7.1 (SKX) has no model for 2 instruction(s)" in p.stderr
    assert re.search(r"vmovapd \(%r\w+,%rax\), %zmm0; vmovapd %zmm0, (0)?\(%r\w+,%rax\)", p.stderr), p.stderr
    p = run_cli("analyze", KERNELS / "triad.c", "-m", ZEN4, "-D", "N=10000", "--incore", "osaca",
                "--compiler-flags", ZMM_FLAGS, "--assume-aligned", "64", "--no-cache")
    assert p.returncode == 2 and "osaca 0.7.1 (ZEN3)" in p.stderr and "vfmadd213pd" in p.stderr


@needs_osaca
def test_auto_skips_llvm_mca_and_says_why_when_osaca_knows_the_block(monkeypatch):
    """llvm-mca rejected (made to flag the vfmadd as unsupported), OSACA complete: OSACA is used with a
    note naming llvm-mca's unknown instruction."""
    import loopmodel.compiled.llvm_mca as lm
    monkeypatch.setattr(lm, "unsupported", lambda text, *a, **k: [ln for ln in text.split("\n") if "vmulpd" in ln])
    text = (KERNELS / "triad.c").read_text()
    r = analyze("triad.c", SNB, {"N": 1000}, incore="auto", kernel_text=text, models=("ECM",), use_cache=False, assume_aligned=64)
    assert r.incore.source == "osaca"
    assert any(n.startswith(_mca_name()) and "vmulpd" in n and n.endswith("osaca used instead") for n in r.notes)


@needs_mca
def test_flags_and_analyzer_cpu_of_different_simd_levels_give_a_note():
    text = (KERNELS / "triad.c").read_text()
    r = analyze("triad.c", SKX, {"N": 1000}, incore="llvm-mca", kernel_text=text, compiler_flags="-O3 -mavx",
                models=("ECM",), use_cache=False, assume_aligned=64)
    assert any("produce AVX code, below the AVX-512 of the llvm-mca CPU model" in n for n in r.notes)
    r = analyze("triad.c", SNB, {"N": 1000}, incore="llvm-mca", kernel_text=text, models=("ECM",), use_cache=False, assume_aligned=64)
    assert not any("produce" in n for n in r.notes)  # -march=corei7-avx and sandybridge: both AVX


# --- L1 data paths -----------------------------------------------------------------------

def test_data_path_bound_by_hand():
    """SNB triad as both analyzers count it: per pass (4 it) one port cycle per 32 B load on each of
    the two load ports and one on the store-data port 4. Per CL (8 it): 128 B loaded at 32 B/cy = 4 cy
    and 64 B stored at 16 B/cy = 4 cy (ECM slides, IVB: a 32 B AVX load takes 2 cy on its port)."""
    m = load_machine(SNB)
    info = _info("llvm-mca", AVX_BLOCK, {"SBPort0": 0.67, "SBPort1": 0.67, "SBPort5": 0.67, "SBPort23": 1.0,
                                         "SBPort4": 1.0}, store_ports=("SBPort23", "SBPort4"))
    plain = to_incore_result(info, m, 8)
    assert (plain.T_OL, plain.T_nOL) == (2.0, 2.0)
    r = to_incore_result(info, m, 8, (128.0, 64.0))
    assert (r.T_OL, r.T_nOL) == (4.0, 4.0)
    assert any(n.startswith("T_nOL set by the L1 load data paths: 128 B per CL / 32 B/cy = 4.00") for n in r.notes)
    assert any(n.startswith("T_OL set by the L1 store data path: 64 B per CL / 16 B/cy = 4.00") for n in r.notes)
    assert r.components["LD data path"] == 4.0 and r.components["ST data path"] == 4.0
    # Skylake-SP moves 64 B per port: the analyzer's value stands, no note
    skx_info = _info("llvm-mca", AVX_BLOCK, {"SKXPort0": 0.67, "SKXPort1": 0.67, "SKXPort5": 0.67, "SKXPort2": 1.0,
                                             "SKXPort3": 1.0, "SKXPort4": 1.0}, store_ports=("SKXPort4", "SKXPort7"))
    skx = to_incore_result(skx_info, load_machine(SKX), 8, (128.0, 64.0))
    assert (skx.T_OL, skx.T_nOL) == (2.0, 2.0) and not any("data path" in n for n in skx.notes)


def test_stores_bound_t_nol_where_the_store_ports_are_non_overlapping():
    """ThunderX2: load/store ports are non-overlapping (cross-architecture paper eq. 1), so the store
    data path bounds T_nOL: 64 B per CL / 16 B/cy = 4 cy."""
    t_ol, t_nol, notes, _ = data_path_bound(1.0, 2.0, (64.0, 64.0), load_machine("ThunderX2_CN9980"), False)
    assert (t_ol, t_nol) == (1.0, 4.0) and notes[-1].startswith("T_nOL set by the L1 store data path")


def test_machine_models_give_the_l1_data_paths():
    """B/cy of the L1 data paths: SNB/IVB 2 x 16 B load, 16 B store; HSW 2 x 32 / 32; SKX 2 x 64 / 64;
    built-in and converted from the Kerncraft reference files alike."""
    want = {SNB: (32, 16), IVB: (32, 16), "HaswellEP_E5-2695v3": (64, 32), SKX: (128, 64)}
    ref = reference_dir()
    for name, bw in want.items():
        for m in (load_machine(name), load_machine(str(ref / f"{name}.yml"))):
            assert (m.in_core.load.bytes_per_cycle, m.in_core.store.bytes_per_cycle) == bw, (name, m.description)


@needs_mca
@pytest.mark.parametrize("analyzer", ["llvm-mca", "osaca"])
def test_sandy_bridge_triad_moves_16_bytes_per_port_and_cycle(analyzer):
    """Triad on SNB with full-width (32 B aligned) AVX loads: both analyzers gave T_nOL = 2.0 cy/CL;
    128 B per CL over 2 x 16 B/cy need 4. (Without the alignment gcc splits each load into 16 B halves,
    which the analyzers count themselves.)"""
    if analyzer == "osaca" and not _osaca():
        pytest.skip("OSACA needed")
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SNB, "-D", "N=10000", "--incore", analyzer, "-p", "ECM",
                "--assume-aligned", "32", "--json", "--no-cache")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["ecm"]["T_nOL_cy_per_cl"] == pytest.approx(4.0) and doc["ecm"]["T_OL_cy_per_cl"] == pytest.approx(4.0)
    assert any("L1 load data paths" in n for n in doc["notes"])


def test_data_path_bound_needs_the_byte_counts():
    """Without byte counts (a caller that has no kernel) the analyzer's value is returned unchanged."""
    m = load_machine(IVB)
    info = _info("osaca", AVX_BLOCK, {"2D": 1.0, "3D": 1.0, "4": 1.0})
    assert to_incore_result(info, m, 8).T_nOL == 2.0
    assert to_incore_result(info, m, 8, (128.0, 64.0)).T_nOL == 4.0


# --- ports that are both overlapping and non-overlapping (Kerncraft's llvm-mca lists) -----

#: llvm-mca 14 -mcpu=sandybridge -iterations=100 -instruction-info=false on the triad block
#: Kerncraft 0.8.18 compiles for its Sandy Bridge file (a = b + c*d, unaligned: 16 B halves)
SNB_KC_TRIAD_REPORT = """\
Iterations:        100
Instructions:      1300
Total Cycles:      430
Total uOps:        1600

Dispatch Width:    4
uOps Per Cycle:    3.72
IPC:               3.02
Block RThroughput: 4.0


""" + SNB_MCA_RESOURCES + """ -      -     2.75   2.44   2.00   2.81   4.00   4.00   

Resource pressure by instruction:
[0]    [1]    [2]    [3]    [4]    [5]    [6.0]  [6.1]  Instructions:
 -      -      -      -      -      -     0.58   0.42   vmovupd	(%rdx,%rax), %xmm3
 -      -     0.55    -      -     0.45   0.67   0.33   vinsertf128	$1, 16(%rdx,%rax), %ymm3, %ymm0
 -      -      -      -      -      -     0.52   0.48   vmovupd	(%rcx,%rax), %xmm4
 -      -     0.61    -      -     0.39   0.75   0.25   vinsertf128	$1, 16(%rcx,%rax), %ymm4, %ymm1
 -      -     1.00    -      -      -      -      -     vmulpd	%ymm1, %ymm0, %ymm0
 -      -      -      -      -      -     0.46   0.54   vmovupd	(%rsi,%rax), %xmm5
 -      -     0.35    -      -     0.65   0.66   0.34   vinsertf128	$1, 16(%rsi,%rax), %ymm5, %ymm1
 -      -      -     1.00    -      -      -      -     vaddpd	%ymm1, %ymm0, %ymm0
 -      -      -      -     1.00    -     0.16   0.84   vmovupd	%xmm0, (%rdi,%rax)
 -      -      -      -     1.00    -     0.20   0.80   vextractf128	$1, %ymm0, 16(%rdi,%rax)
 -      -     0.07   0.73    -     0.20    -      -     addq	$32, %rax
 -      -     0.17   0.71    -     0.12    -      -     cmpq	%r10, %rax
 -      -      -      -      -     1.00    -      -     jne	.L5
"""
#: llvm-mca 14 -mcpu=skylake-avx512 on loopmodel's triad block for Skylake-SP (indexed store)
SKX_TRIAD_REPORT = """\
Iterations:        100
Instructions:      600
Total Cycles:      184
Total uOps:        900

Dispatch Width:    6
uOps Per Cycle:    4.89
IPC:               3.26
Block RThroughput: 1.5


Resources:
[0]   - SKXDivider
[1]   - SKXFPDivider
[2]   - SKXPort0
[3]   - SKXPort1
[4]   - SKXPort2
[5]   - SKXPort3
[6]   - SKXPort4
[7]   - SKXPort5
[8]   - SKXPort6
[9]   - SKXPort7


Resource pressure per iteration:
[0]    [1]    [2]    [3]    [4]    [5]    [6]    [7]    [8]    [9]    
 -      -     1.25   1.26   1.05   1.06   1.00   1.24   1.25   0.89   

Resource pressure by instruction:
[0]    [1]    [2]    [3]    [4]    [5]    [6]    [7]    [8]    [9]    Instructions:
 -      -     0.41   0.59   0.47   0.53    -      -      -      -     vmulpd	(%r15,%rax), %ymm1, %ymm0
 -      -     0.41   0.59   0.52   0.48    -      -      -      -     vaddpd	(%r14,%rax), %ymm0, %ymm0
 -      -      -      -     0.06   0.05   1.00    -      -     0.89   vmovapd	%ymm0, (%r13,%rax)
 -      -      -      -      -      -      -     0.90   0.10    -     addq	$32, %rax
 -      -     0.17   0.08    -      -      -     0.34   0.41    -     cmpq	$80000, %rax
 -      -     0.26    -      -      -      -      -     0.74    -     jne	.L7
"""


def _kerncraft_lists(machine, overlapping, non_overlapping):
    ports = dict(machine.in_core.analyzer_ports, **{"llvm-mca": {"overlapping": overlapping,
                                                                "non_overlapping": non_overlapping}})
    return dataclasses.replace(machine, in_core=dataclasses.replace(machine.in_core, analyzer_ports=ports))


def _from_report(text, u=4):
    from loopmodel.compiled.llvm_mca import parse
    rep = parse(text)
    block = "".join(i.text + "\n" for i in rep.instructions)
    return _info("llvm-mca", block, rep.ports, u, instructions=rep.instructions)


def test_shared_address_port_counts_store_addresses_in_t_ol():
    """Kerncraft's SNB file lists SBPort23 as overlapping and non-overlapping. Kerncraft's triad block:
    6 loads and 2 store-address uops per pass on SBPort23 -> 4 cy per pass, 8 cy/CL in T_OL (Kerncraft
    with OSACA: ports 2/3 = 8.0, T_comp = 8.0); the loads alone: 3 cy per pass, 6 cy/CL = T_nOL
    (Kerncraft: 2D/3D = 6.0, T_RegL1 = 6.0). Before, SBPort23 was load-only: T_OL 5.0, T_nOL 7.3."""
    m = _kerncraft_lists(load_machine(SNB), ["SBDivider", "SBFPDivider", "SBPort0", "SBPort1", "SBPort23", "SBPort4",
                                             "SBPort5"], ["SBPort23"])
    r = to_incore_result(_from_report(SNB_KC_TRIAD_REPORT), m, 8, (192.0, 64.0))
    assert r.T_OL == pytest.approx(8.0, abs=0.02) and r.T_nOL == pytest.approx(6.0, abs=0.02)


def test_indexed_store_address_is_not_on_port_7():
    """Skylake-SP, loopmodel's triad: llvm-mca puts the address of 'vmovapd %ymm0, (%r13,%rax)' on port 7,
    which takes only base+displacement addresses. With it on ports 2/3: 3 address uops per pass over
    2 ports -> 1.5 cy, 3.0 cy/CL in T_OL with Kerncraft's lists (OSACA: ports 2/3 = 3.0)."""
    m = _kerncraft_lists(load_machine(SKX), ["SKXDivider", "SKXFPDivider", "SKXPort0", "SKXPort1", "SKXPort2",
                                             "SKXPort3", "SKXPort4", "SKXPort5", "SKXPort6", "SKXPort7"],
                         ["SKXPort2", "SKXPort3"])
    r = to_incore_result(_from_report(SKX_TRIAD_REPORT), m, 8, (128.0, 64.0))
    assert r.T_OL == pytest.approx(3.0, abs=0.02) and r.T_nOL == pytest.approx(2.0, abs=0.02)
    from loopmodel.compiled.ports import InstrPressure, indexed_store_addresses
    simple = InstrPressure("vmovapd\t%ymm0, 32(%r13)", {"SKXPort4": 1.0, "SKXPort7": 1.0})
    assert indexed_store_addresses([simple]) == [simple]


@needs_osaca
@pytest.mark.parametrize("name,sizes", [("triad.c", {"N": 10000}), ("2d-5pt.c", {"N": 1000, "M": 1000}),
                                        ("3d-7pt.c", {"N": 100, "M": 100})])
@pytest.mark.parametrize("machine", [SNB, SKX])
def test_both_analyzers_give_the_same_times_with_kerncraft_port_lists(machine, name, sizes):
    """Same block, Kerncraft's port lists (address ports in T_OL): llvm-mca and OSACA agree
    (2D 5-pt on SNB: llvm-mca gave T_OL 6.0, OSACA 9.0)."""
    from loopmodel.compiled.incore import compiled_incore
    from loopmodel.fileio.c_kernel import parse_kernel_file
    base = load_machine(machine)
    if machine == SNB:
        over = {"osaca": ["0", "0DV", "1", "2", "3", "4", "5"], "llvm-mca": ["SBDivider", "SBFPDivider", "SBPort0",
                "SBPort1", "SBPort23", "SBPort4", "SBPort5"]}
        non = {"osaca": ["2D", "3D"], "llvm-mca": ["SBPort23"]}
    else:
        over = {"osaca": ["0", "0DV", "1", "2", "3", "4", "5", "6", "7"], "llvm-mca": ["SKXDivider", "SKXFPDivider"] +
                [f"SKXPort{i}" for i in range(8)]}
        non = {"osaca": ["2D", "3D"], "llvm-mca": ["SKXPort2", "SKXPort3"]}
    ports = {a: {"overlapping": over[a], "non_overlapping": non[a]} for a in over}
    m = dataclasses.replace(base, in_core=dataclasses.replace(base.in_core, analyzer_ports=ports))
    k = parse_kernel_file(str(KERNELS / name))[0]
    text = (KERNELS / name).read_text()
    a, _ = compiled_incore(k, m, sizes, 8, "llvm-mca", use_cache=False)
    b, _ = compiled_incore(k, m, sizes, 8, "osaca", use_cache=False)
    assert (a.T_OL, a.T_nOL) == pytest.approx((b.T_OL, b.T_nOL), abs=0.05)


def test_llvm_mca_warning_about_unknown_input_refuses_the_result(tmp_path):
    """llvm-mca exits 0 but warns that it skipped or did not know something: its numbers are not used."""
    from loopmodel.compiled.llvm_mca import _call
    from loopmodel.errors import ToolError
    tool = tmp_path / "llvm-mca-99"
    tool.write_text("#!/bin/sh\necho 'Iterations: 1'\necho 'warning: unknown instruction skipped' >&2\n")
    tool.chmod(0o755)
    with pytest.raises(ToolError, match="llvm-mca result not used .*unknown instruction skipped"):
        _call(str(tool), "sandybridge", AVX_BLOCK, 10, False)


def test_macro_fused_compare_and_branch_need_only_one_known_half():
    """A compare and the conditional jump after it are one fused uop: OSACA 0.7.1's SNB model
    lacks ``jne`` and its ZEN1 model ``cmpq $imm, %reg``; the known half times the pair. When
    both halves are unknown, or the compare reads memory, nothing times them: unaccounted."""
    from loopmodel.compiled.osaca_backend import unknown_forms

    def form(line, known=True):
        return {"instruction": line.split()[0], "line": line, "flags": [] if known else ["tp_unknown"]}

    add = form("addq $32, %rax")
    assert unknown_forms([add, form("cmpq $160, %rax", False), form("jne .L2")]) == []
    assert unknown_forms([add, form("cmpq $160, %rax"), form("jne .L2", False)]) == []
    assert unknown_forms([add, form("cmpq $160, %rax", False), form("jne .L2", False)]) == [
        "cmpq $160, %rax", "jne .L2"]
    assert unknown_forms([add, form("cmpq (%rdx), %rax", False), form("jne .L2")]) == ["cmpq (%rdx), %rax"]
    assert unknown_forms([form("vunpckhpd %xmm0, %xmm0, %xmm0", False), form("jne .L2")]) == [
        "vunpckhpd %xmm0, %xmm0, %xmm0"]
