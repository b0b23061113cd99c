"""llvm-mca and OSACA checked against the probe: the analyzer CPU per host and llvm-mca version, the
OSACA architecture map, the per-class check of a canned block, the throughput floor, and
``--incore auto``'s pick (canned analyzer output; real tools only where installed)."""
from __future__ import annotations

import dataclasses
import os
import shutil
from types import SimpleNamespace

import pytest

from helpers import SKX
from loopmodel.compiled import checked, instructions, llvm_mca, osaca_backend
from loopmodel.compiled.llvm_mca import InstrTiming
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.probe_section import probe_section
from loopmodel.workflows.analysis import Analyzer

HOST = os.path.join(os.path.dirname(__file__), "fixtures", "host-probe-xeon-kvm.yml")
SPR_ISA = ["sse2", "avx", "fma", "avx2", "avx512f", "avx512vl", "avx512_fp16"]


def _host(cpu="cooperlake", isa=SPR_ISA, model_name="Intel(R) Xeon(R) Processor", points=()):
    """A machine model as the probe writes it: gcc's CPU name, the probe's ISA flags and FP points."""
    m = load_machine(SKX)
    probe = {"topology": {"model_name": model_name, "isa": list(isa)}, "in_core": {"points": list(points)}}
    return dataclasses.replace(m, in_core=dataclasses.replace(m.in_core, llvm_mca_cpu=cpu), probe=probe_section(probe))


def _point(op, width, kind, cy):
    return {"op": op, "width_bytes": width, "kind": kind, "cy_per_instruction_min": cy}


@pytest.fixture
def cpus(monkeypatch):
    """llvm-mca's -mcpu=help list, faked: every CPU named here is known."""
    known = frozenset({"cooperlake", "sapphirerapids", "znver3", "znver4", "znver5", "icelake-server"})
    monkeypatch.setattr(llvm_mca, "known_cpus", lambda path: known)
    return known


@pytest.mark.parametrize("cpu,isa,name,version,want", [
    ("cooperlake", SPR_ISA, "Intel(R) Xeon(R) Processor", "19.1.7", "sapphirerapids"),  # KVM guest: flags decide
    ("cooperlake", SPR_ISA, "Intel(R) Xeon(R) Processor", "16.0.6", "cooperlake"),  # 16 knows the name, not the model
    ("cooperlake", SPR_ISA, "Intel(R) Xeon(R) Processor", "14.0.6", "cooperlake"),
    ("cooperlake", SPR_ISA[:-1], "Intel(R) Xeon(R) Gold 6348", "19.1.7", "cooperlake"),  # a real Cooper/Ice Lake
    ("icelake-server", ["avx512f"], "Intel(R) Xeon(R) Platinum 8480+", "17.0.1", "sapphirerapids"),
    ("icelake-server", ["avx512f"], "Intel(R) Xeon(R) Platinum 8592+", "18.1.0", "sapphirerapids"),  # Emerald R.
    ("znver3", ["avx2"], "AMD EPYC 9654 96-Core Processor", "19.1.7", "znver4"),
    ("znver3", ["avx2", "avx512f"], "AMD EPYC 9755 128-Core Processor", "19.1.7", "znver5"),
    ("znver3", ["avx2", "avx512f"], "AMD EPYC 9755 128-Core Processor", "18.1.8", "znver3"),  # znver5: LLVM 19
    ("znver3", ["avx2", "avx512f"], "AMD Ryzen 9 7950X", "17.0.6", "znver4"),
    ("znver3", ["avx2"], "AMD EPYC 7763 64-Core Processor", "19.1.7", "znver3"),  # a real Zen 3
])
def test_cpu_for_upgrades_by_host_and_llvm_version(cpus, cpu, isa, name, version, want):
    got, note = llvm_mca.cpu_for(_host(cpu, isa, name), "/x/llvm-mca", version)
    assert got == want
    if got != cpu:
        assert note.startswith(f"llvm-mca {version} -mcpu={want}: the host is a")
    elif llvm_mca.host_class(_host(cpu, isa, name))[0] is not None:
        assert "no scheduling model of it" in note and "apt-get install llvm-19" in note


def test_cpu_for_needs_the_cpu_in_llvm_mcas_list(monkeypatch):
    monkeypatch.setattr(llvm_mca, "known_cpus", lambda path: frozenset({"cooperlake"}))
    assert llvm_mca.cpu_for(_host(), "/x/llvm-mca", "19.1.7")[0] == "cooperlake"


def test_bundled_machine_files_keep_their_cpu(cpus):
    """No probe section: the file's CPU as it is, no note, and no OSACA upgrade either."""
    m = load_machine(SKX)
    assert llvm_mca.cpu_for(m, "/x/llvm-mca", "19.1.7") == (m.in_core.llvm_mca_cpu, "")
    assert osaca_backend.arch_for(m) == ("SKX", "")


def test_osaca_arch_for_a_probed_host():
    arch, note = osaca_backend.arch_for(_host())
    assert arch == "SPR" and "sapphirerapids" in note and "'cooperlake'" in note
    assert osaca_backend.arch_for(_host(isa=SPR_ISA[:-1]))[0] == "CSX"
    assert osaca_backend.arch_for(_host("znver3", ["avx2", "avx512f"], "AMD Ryzen 5 7600"))[0] == "ZEN4"
    with pytest.raises(Exception, match="no OSACA architecture for a znver5 host"):
        osaca_backend.arch_for(_host("znver3", ["avx2", "avx512f"], "AMD EPYC 9575F 64-Core Processor"))


@pytest.mark.skipif(not osaca_backend.available(), reason="OSACA not installed")
def test_osaca_arch_map_covers_every_model_osaca_ships():
    import glob
    import osaca
    import yaml
    shipped = set()
    for path in glob.glob(os.path.join(os.path.dirname(osaca.__file__), "data", "*.yml")):
        with open(path) as fh:
            head = yaml.safe_load(fh)
        shipped.add(os.path.basename(path)[:-4].upper())
        assert head.get("isa")
    assert shipped == set(osaca_backend.ARCH.values())


def test_find_llvm_mca_env_override(monkeypatch, tmp_path):
    tool = tmp_path / "my-llvm-mca"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tool))
    assert llvm_mca.find_llvm_mca() == str(tool)
    monkeypatch.setenv("LOOPMODEL_LLVM_MCA", str(tmp_path / "missing"))
    assert llvm_mca.find_llvm_mca() is None


@pytest.mark.parametrize("text,aarch64,want", [
    ("vaddsd (%rdi), %xmm0, %xmm0", False, ("ADD", 8)),
    ("subsd %xmm1, %xmm0", False, ("ADD", 8)),
    ("vmulss %xmm1, %xmm2, %xmm3", False, ("MUL", 4)),
    ("vaddpd %xmm1, %xmm2, %xmm3", False, ("ADD", 16)),
    ("vfmadd231pd (%rax,%rcx,8), %ymm1, %ymm2", False, ("FMA", 32)),
    ("vfnmadd213sd %xmm1, %xmm2, %xmm3", False, ("FMA", 8)),
    ("vdivpd %zmm1, %zmm2, %zmm3{%k1}", False, ("DIV", 64)),
    ("vsqrtpd %ymm4, %ymm6", False, ("SQRT", 32)),
    ("addq $8, %rax", False, None),
    ("vpaddd %ymm1, %ymm2, %ymm3", False, None),
    ("vmovsd (%rax), %xmm0", False, None),
    ("fadd d0, d0, d1", True, ("ADD", 8)),
    ("fmla v0.2d, v1.2d, v2.2d", True, ("FMA", 16)),
    ("fdiv s0, s1, s2", True, ("DIV", 4)),
    ("fmul z0.d, p0/m, z0.d, z1.d", True, None),
    ("ldr d0, [x1]", True, None),
])
def test_classify(text, aarch64, want):
    assert instructions.fp_class(text, aarch64) == want


def test_register_forms_replace_the_memory_operand():
    block = "vaddsd (%rdi), %xmm0, %xmm0\nvaddsd 8(%rdi), %xmm0, %xmm0\nvmulpd -64(%rax,%rcx,8){1to8}, %zmm1, %zmm2\n" \
            "vaddpd %ymm1, %ymm2, %ymm3\nvmovsd %xmm0, (%rax)"
    assert checked.register_forms(block) == ["vaddsd %xmm15, %xmm0, %xmm0", "vmulpd %zmm15, %zmm1, %zmm2"]
    assert checked.register_forms("fadd d0, d0, d1", aarch64=True) == []


MCA_INFO = """Iterations:        100
Instructions:      300
Total Cycles:      402
Total uOps:        300

Dispatch Width:    6
uOps Per Cycle:    0.75
IPC:               0.75
Block RThroughput: 1.0


Instruction Info:
[1]: #uOps
[2]: Latency
[3]: RThroughput
[4]: MayLoad
[5]: MayStore
[6]: HasSideEffects (U)

[1]    [2]    [3]    [4]    [5]    [6]    Instructions:
 2      10    0.50    *                   vaddsd\t(%rdi), %xmm0, %xmm0
 1      14    1.00                        vdivsd\t%xmm4, %xmm5, %xmm5
 1      1     0.50                        jne\t.L2


Resources:
[0]   - SPRPort00
[1]   - SPRPort01


Resource pressure per iteration:
[0]    [1]    
1.50   0.50   

Resource pressure by instruction:
[0]    [1]    Instructions:
0.50   0.50   vaddsd\t(%rdi), %xmm0, %xmm0
1.00    -     vdivsd\t%xmm4, %xmm5, %xmm5
 -      -     jne\t.L2
"""

POINTS = [_point("ADD", 8, "latency", 2.0), _point("ADD", 8, "throughput", 0.5),
          _point("DIV", 8, "latency", 13.0), _point("DIV", 8, "throughput", 4.0)]


def _info(timings, block, analyzer="llvm-mca"):
    return SimpleNamespace(analyzer=analyzer, analyzer_version="19.1.7", target="sapphirerapids", aarch64=False,
                           timings=tuple(timings), block=block, check=None)


def test_llvm_mca_instruction_info_is_read():
    rep = llvm_mca.parse(MCA_INFO)
    assert rep.timings == (InstrTiming("vaddsd (%rdi), %xmm0, %xmm0", 10.0, 0.5),
                           InstrTiming("vdivsd %xmm4, %xmm5, %xmm5", 14.0, 1.0), InstrTiming("jne .L2", 1.0, 0.5))
    assert rep.ports == {"SPRPort00": 1.5, "SPRPort01": 0.5} and len(rep.instructions) == 3


def _canned_check():
    block = "vaddsd (%rdi), %xmm0, %xmm0\nvaddsd 8(%rdi), %xmm0, %xmm0\nvdivsd %xmm4, %xmm5, %xmm5\njne .L2"
    timings = llvm_mca.parse(MCA_INFO).timings + (InstrTiming("vaddsd %xmm15, %xmm0, %xmm0", 3.0, 0.5),)
    info = _info(timings, block)
    return info, checked.check_block(info, _host(points=POINTS))


def test_check_of_a_canned_block():
    info, check = _canned_check()
    rows = {(r.op, r.width, r.kind): r for r in check.rows}
    assert set(rows) == {("ADD", 8, "latency"), ("ADD", 8, "throughput"), ("DIV", 8, "latency"),
                         ("DIV", 8, "throughput")}
    add = rows["ADD", 8, "latency"]  # the register form's latency, not the memory form's 10 cy
    assert (add.analyzer_cy, add.probe_cy, add.agrees, add.count) == (3.0, 2.0, False, 2)
    assert rows["ADD", 8, "throughput"].agrees and rows["DIV", 8, "latency"].agrees  # 14 vs 13: within 15 %
    assert not rows["DIV", 8, "throughput"].agrees
    notes = check.notes()
    assert notes[0] == ("llvm-mca 19.1.7 sapphirerapids times vaddsd (ADD, 8 B) at 3 cy latency; the probe measured "
                        "2 cy on this host")
    assert len(notes) == 2 and "vdivsd (DIV, 8 B) at 1 cy per instruction" in notes[1]
    assert checked.score(check) == (2, pytest.approx(0.5 + 0.75))
    assert checked.analyzer_latency(info, "vaddsd\t(%rdi),  %xmm0, %xmm0") == 10.0
    assert checked.analyzer_latency(info, "vmulsd %xmm1, %xmm2, %xmm3") is None


def test_a_single_precision_division_is_not_checked_against_the_probes_double():
    """The probe times vdivpd; vdivps of the same register width is cheaper (Zen 4: 6 vs 9 cy per
    zmm instruction), so only the double-precision division of the block is compared."""
    points = [_point("DIV", 64, "latency", 13.0), _point("DIV", 64, "throughput", 9.0)]
    block = "vdivps (%rdi,%rax), %zmm1, %zmm0\njne .L2"
    info = _info((InstrTiming("vdivps (%rdi,%rax), %zmm1, %zmm0", 18.0, 6.0),), block)
    assert checked.check_block(info, _host(points=points)).rows == ()
    block = "vdivpd (%rdi,%rax), %zmm1, %zmm0\njne .L2"
    info = _info((InstrTiming("vdivpd (%rdi,%rax), %zmm1, %zmm0", 18.0, 6.0),), block)
    (row,) = checked.check_block(info, _host(points=points)).rows
    assert (row.op, row.width, row.kind, row.probe_cy, row.agrees) == ("DIV", 64, "throughput", 9.0, False)


def test_no_check_without_probe_figures():
    info, _ = _canned_check()
    assert checked.check_block(info, load_machine(SKX)) is None
    assert checked.score(None) == (float("inf"), float("inf"))


def test_probe_figures_prefer_the_by_width_keys():
    m = _host(points=POINTS)
    assert checked.probe_latency(m, "ADD", 8) == 2.0 and checked.probe_rthroughput(m, "DIV", 8) == 4.0
    assert checked.probe_latency(m, "ADD", 64) is None
    ic = SimpleNamespace(latency_by_width={"ADD": {"8": 2.5}}, throughput_by_width={"DIV": {8: 0.2}})
    m2 = SimpleNamespace(in_core=ic, probe=m.probe)
    assert checked.probe_latency(m2, "ADD", 8) == 2.5 and checked.probe_rthroughput(m2, "DIV", 8) == 5.0


def test_throughput_floor_raises_t_ol_where_the_analyzer_is_too_fast():
    info, check = _canned_check()
    info.check = check
    t_ol, notes, source = checked.throughput_floor(info, 2.0, 8.0)  # 8 passes per CL
    assert t_ol == pytest.approx(1 * 4.0 * 8.0)  # one vdivsd per pass at 4 cy
    assert "T_OL raised to the probe's throughput of DIV (8 B)" in notes[0] and "DIV (8 B)" in source
    assert checked.throughput_floor(info, 40.0, 8.0)[0] == 40.0  # above the floor: unchanged


def test_throughput_floor_notes_an_analyzer_slower_than_the_probe():
    info, _ = _canned_check()
    slow = (InstrTiming("vdivsd %xmm4, %xmm5, %xmm5", 13.0, 8.0),)
    info = _info(slow, "vdivsd %xmm4, %xmm5, %xmm5")
    info.check = checked.check_block(info, _host(points=POINTS))
    t_ol, notes, source = checked.throughput_floor(info, 64.0, 8.0)
    assert t_ol == 64.0 and source == "" and "T_OL may be too high" in notes[0]


def test_auto_picks_the_analyzer_closer_to_the_probe():
    info, check = _canned_check()
    good = checked.BackendCheck("osaca", "0.7.1", "SPR", tuple(dataclasses.replace(r, analyzer_cy=r.probe_cy)
                                                                for r in check.rows))
    done = [("mca", SimpleNamespace(analyzer="llvm-mca", analyzer_version="19.1.7", target="sapphirerapids",
                                    check=check)),
            ("osaca", SimpleNamespace(analyzer="osaca", analyzer_version="0.7.1", target="SPR", check=good))]
    (res, _), notes = Analyzer._closest_to_probe(done)
    assert res == "osaca"
    assert notes[0].startswith("--incore auto: osaca used") and "0 of 4 figures" in notes[0] \
        and "2 of 4 figures" in notes[0]
    assert Analyzer._closest_to_probe(done[:1]) == (done[0], ())
    tie = [done[0], ("osaca", SimpleNamespace(analyzer="osaca", analyzer_version="0.7.1", target="SPR", check=check))]
    assert Analyzer._closest_to_probe(tie)[0][0] == "mca"  # a tie: llvm-mca, today's order


@pytest.mark.skipif(not osaca_backend.available(), reason="OSACA not installed")
def test_osaca_gives_per_form_timings():
    rep = osaca_backend.run("vaddsd (%rdi), %xmm0, %xmm0\naddq $8, %rdi\ncmpq %rdi, %rax\njne .L2\n", "SPR")
    by = {t.text: t for t in rep.timings}
    assert by["vaddsd %xmm15, %xmm0, %xmm0"].latency > 0  # the register form, timed on its own
    assert by["vaddsd (%rdi), %xmm0, %xmm0"].rthroughput > 0


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca 19 not installed")
def test_llvm_mca_19_knows_sapphire_rapids():
    path = shutil.which("llvm-mca-19")
    llvm_mca.known_cpus.cache_clear()
    assert "sapphirerapids" in llvm_mca.known_cpus(path)
    assert llvm_mca.cpu_for(_host(), path, llvm_mca.version(path))[0] == "sapphirerapids"
    rep = llvm_mca.run("vaddsd (%rdi), %xmm0, %xmm0\naddq $8, %rdi\ncmpq %rdi, %rax\njne .L2\n", "sapphirerapids",
                       path)
    assert {t.text for t in rep.timings} >= {"vaddsd (%rdi), %xmm0, %xmm0", "vaddsd %xmm15, %xmm0, %xmm0"}


def _llvm_mca_knows_znver4() -> bool:
    tool = llvm_mca.find_llvm_mca()
    return tool is not None and shutil.which("gcc") is not None and "znver4" in llvm_mca.known_cpus(tool)


@pytest.mark.skipif(not _llvm_mca_knows_znver4(), reason="needs gcc and an llvm-mca with a znver4 model (LLVM 16+)")
def test_avx512_code_is_analysed_on_the_cpu_llvm_mca_runs(tmp_path):
    """A probed Zen 4 host whose file names gcc's 'znver3': llvm-mca runs as znver4 and takes the
    AVX-512 block; the SIMD check is of that CPU, not of the file's name (which has AVX2 at most)."""
    from loopmodel.compiled.incore import compiled_incore
    from loopmodel.fileio.c_kernel import load_c_kernel
    host = _host("znver3", ["avx2", "avx512f"], "AMD EPYC 9654 96-Core Processor")
    host = dataclasses.replace(host, in_core=dataclasses.replace(host.in_core, analyzer_ports={}))  # not Intel's
    kernel = load_c_kernel("examples/kernels/triad.c").kernel
    res, info = compiled_incore(kernel, host, {"N": 1000}, 8, "llvm-mca", "gcc",
                                "-O3 -march=x86-64-v4 -mprefer-vector-width=512", use_cache=False)
    assert info.target == "znver4" and "zmm" in info.block and res.T_OL > 0


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
def test_avx512_code_is_analysed_on_the_architecture_osaca_runs(monkeypatch):
    """OSACA's ZEN4 for a probed Zen 4 host whose file names gcc's 'znver3': the SIMD check is of
    ZEN4 (AVX-512), so an AVX-512 block is taken (OSACA itself faked: its ports only)."""
    from loopmodel.compiled import isa
    from loopmodel.compiled.incore import compiled_incore
    from loopmodel.fileio.c_kernel import load_c_kernel
    assert osaca_backend.cpu_of("ZEN4") == "znver4" and isa.cpu_isa(osaca_backend.cpu_of("ZEN4")) == "AVX-512"
    assert osaca_backend.cpu_of("nothing") is None
    host = _host("znver3", ["avx2", "avx512f"], "AMD EPYC 9654 96-Core Processor")
    host = dataclasses.replace(host, in_core=dataclasses.replace(host.in_core, analyzer_ports={}))
    monkeypatch.setattr(osaca_backend, "available", lambda: True)
    monkeypatch.setattr(osaca_backend, "version", lambda: "0.7.1")
    monkeypatch.setattr(osaca_backend, "run", lambda text, arch, aarch64=False: llvm_mca.PortReport(
        {"FP0": 1.0, "LD": 1.0}, 1.0, 1.0, ""))
    kernel = load_c_kernel("examples/kernels/triad.c").kernel
    res, info = compiled_incore(kernel, host, {"N": 1000}, 8, "osaca", "gcc",
                                "-O3 -march=x86-64-v4 -mprefer-vector-width=512", use_cache=False)
    assert info.target == "ZEN4" and "zmm" in info.block and res.T_OL > 0
