"""Invariants of the compiled in-core path (llvm-mca, OSACA) and of the in-core options.

* "latency-bound" appears only with a named loop-carried dependency chain: llvm-mca's simulated
  cycles above its throughput bound become T_OL only where the block has a chain
  (:mod:`loopmodel.compiled.deps`) whose register and instructions the note names; otherwise
  T_OL is the port (throughput) bound (kerncraft-tool-paper.txt §2.3).
* Every in-core source (auto, llvm-mca, osaca, analytic) x in-core option (--scalar,
  --reassociation, --no-reassociation, --compiler-flags, --asm-block, --pointer-increment,
  --assume-aligned) changes the result, or is a one-line error, or adds a note naming the option
  (that it has no effect here, or that the compiled analysis applied it).
* The verbose report says where T_OL and T_nOL come from (port, chain or L1 data path) and with
  which value.

Property tests draw kernels from :mod:`kernel_strategies` (derandomized); the compiled cases need
gcc and llvm-mca and skip without them.
"""
from __future__ import annotations

import re
import shutil

import pytest
from helpers import KERNELS, SKX, requires_tool, run_cli
from hypothesis import given, settings
from hypothesis import strategies as st
from kernel_strategies import PROPERTY_SETTINGS, kernels, load

from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.compiled.deps import loop_carried_chains
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.errors import LoopmodelError, OptionError, ToolError
from loopmodel.fileio.c_kernel import parse_kernel_file

TOOLS = shutil.which("gcc") is not None and find_llvm_mca() is not None
needs_tools = pytest.mark.skipif(not TOOLS, reason="gcc and llvm-mca needed")
#: figures below were read from gcc 12 / llvm-mca 14 output
gcc12 = requires_tool("gcc", "12", "hand-checked gcc 12 assembly")
mca14 = requires_tool("llvm-mca", "14", "port pressure read from llvm-mca 14")
EMR = str(KERNELS.parent / "machines" / "XeonEMR_16vCPU.yml")
ZEN4 = str(KERNELS.parent / "machines" / "EpycZen4_2vCPU.yml")


@pytest.fixture(autouse=True)
def _own_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))


def _chains(block: str, aarch64: bool = False) -> list:
    return loop_carried_chains(block.strip().split("\n"), aarch64)


# -- loop-carried chains of hand-written blocks ------------------------------------------------

def test_accumulator_is_a_chain_and_names_its_register():
    """gcc's in-order reduction of dot.c: four vaddsd through %xmm0/%xmm2, one chain through %xmm0."""
    block = """vmovupd (%rsi,%rax), %ymm4
vmulpd (%rcx,%rax), %ymm4, %ymm1
addq $32, %rax
vaddsd %xmm1, %xmm0, %xmm0
vunpckhpd %xmm1, %xmm1, %xmm2
vaddsd %xmm0, %xmm2, %xmm2
vextractf64x2 $1, %ymm1, %xmm0
valignq $3, %ymm1, %ymm1, %ymm1
vaddsd %xmm2, %xmm0, %xmm0
vaddsd %xmm1, %xmm0, %xmm0
cmpq $8000, %rax
jne .L2"""
    (chain,) = _chains(block)
    assert chain.registers == ("%xmm0",)
    assert [i.split()[0] for i in chain.instructions] == ["vaddsd"] * 4
    assert chain.describe().startswith("loop-carried dependency chain through %xmm0 (vaddsd %xmm1, %xmm0, %xmm0;")


def test_streams_and_induction_variables_are_no_chain():
    """daxpby's block, a rotating pointer (lea + mov), a zero idiom before an accumulation and a
    vector induction variable (vpaddd of an invariant register) carry nothing but increments."""
    daxpby = """vmulpd (%rsi,%rax), %ymm1, %ymm0
vfmadd231pd (%rdi,%rax), %ymm2, %ymm0
vmovupd %ymm0, (%rsi,%rax)
addq $32, %rax
cmpq $8000, %rax
jne .L2"""
    rotating = "leaq 32(%rdx), %rax\nmovq %rax, %rdx\nvmovupd (%rax), %ymm0\ncmpq %rdx, %rsi\njne .L2"
    zeroed = "vxorpd %xmm0, %xmm0, %xmm0\nvaddsd (%rax), %xmm0, %xmm0\nvmovsd %xmm0, (%rcx,%rax)\naddq $8, %rax\njne .L2"
    vector_i = "vpaddd %ymm5, %ymm2, %ymm2\nvcvtdq2pd %xmm2, %ymm0\nvmovupd %ymm0, (%rcx,%rax)\naddq $32, %rax\njne .L4"
    for block in (daxpby, rotating, zeroed, vector_i):
        assert _chains(block) == [], block


def test_recurrence_through_memory_is_a_chain():
    """a[i] = a[i-1] * s kept in memory: the store is read by the next pass's load; a copy of an
    earlier element into another array (no cycle) is not a chain."""
    rec = "vmovsd -8(%rax), %xmm0\nvmulsd %xmm1, %xmm0, %xmm0\nvmovsd %xmm0, (%rax)\naddq $8, %rax\njne .L2"
    (chain,) = _chains(rec)
    assert chain.registers == () and chain.memory == (("vmovsd %xmm0, (%rax)", "vmovsd -8(%rax), %xmm0", 1),)
    copy = ("vmovsd (%rsi,%rax,8), %xmm0\nvmovsd %xmm0, (%rdi,%rax,8)\nvmovsd -8(%rdi,%rax,8), %xmm1\n"
            "vmovsd %xmm1, (%rcx,%rax,8)\nincq %rax\njne .L2")
    assert _chains(copy) == []


def test_aarch64_chains():
    """AArch64: fmla into a fresh load is no chain; fadd d0, d0, d1 is; post-indexed loads are
    increments; a recurrence through memory is found with the base register's step."""
    assert _chains("ldr q1, [x1, x0]\nldr q0, [x2, x0]\nfmla v0.2d, v1.2d, v2.2d\nstr q0, [x3, x0]\n"
                   "add x0, x0, 16\ncmp x0, x4\nbne .L3", True) == []
    (acc,) = _chains("ldr d1, [x1], 8\nfadd d0, d0, d1\ncmp x1, x4\nbne .L3", True)
    assert acc.registers == ("d0",)
    (mem,) = _chains("ldr d1, [x1, -8]\nfmul d1, d1, d2\nstr d1, [x1]\nadd x1, x1, 8\ncmp x1, x4\nbne .L3", True)
    assert mem.memory and mem.memory[0][2] == 1


# -- the cases ---------------------------------------------------------------------------

def _cli_ecm(kernel, machine, *defines):
    argv = ["analyze", str(KERNELS / kernel), "-m", machine, *[a for d in defines for a in ("-D", d)],
            "--incore", "llvm-mca", "-p", "ECM", "--json"]
    p = run_cli(*argv, timeout=300)
    assert p.returncode == 0, p.stderr
    import json

    return json.loads(p.stdout)


@needs_tools
@gcc12
@mca14
@pytest.mark.parametrize("kernel, machine, defines, t_ol", [
    ("daxpby.c", SKX, ("N=1000000",), 3.0),  # was 3.33: llvm-mca's 1.67 cy per pass simulated
    ("triad.c", EMR, ("N=1000000",), 1.5),  # was 1.67
    ("daxpby.c", ZEN4, ("N=1000000",), 3.0),  # was 3.8: 1.90 cy per pass simulated
    ("box27.c", SKX, ("L=200",), 44.0),  # was 62 (31 cy per pass); ports 2/3: 22 cy per pass
])
def test_no_latency_bound_without_a_chain(kernel, machine, defines, t_ol):
    doc = _cli_ecm(kernel, machine, *defines)
    ic = doc["incore"]
    assert ic["T_OL_cy_per_cl"] == pytest.approx(t_ol, abs=0.005)
    assert ic["dependency_cy_per_it"] == 0
    assert not any("latency-bound" in n for n in doc["notes"])
    assert any("no loop-carried dependency chain" in n and "T_OL is the throughput bound" in n
               for n in doc["notes"])
    assert "chain" not in ic["origin"]["T_OL"]


@needs_tools
@gcc12
@mca14
def test_reduction_is_latency_bound_with_its_chain_named():
    doc = _cli_ecm("dot.c", SKX, "N=1000000")
    note = next(n for n in doc["notes"] if "latency-bound" in n)
    assert "loop-carried dependency chain through %xmm0 (vaddsd" in note
    assert doc["incore"]["T_OL_cy_per_cl"] == pytest.approx(32.0, abs=0.05)
    assert doc["incore"]["origin"]["T_OL"].startswith("the loop-carried dependency chain through %xmm0")


@needs_tools
@gcc12
@mca14
def test_verbose_port_table_shows_where_t_ol_comes_from():
    """2d-5pt on SkylakeSP with llvm-mca: T_OL 5 comes from the whole pressure of ports 2/3 (2.5 cy
    per pass, listed as both overlapping and load ports), which no row showed."""
    p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", SKX, "-D", "M=2000", "-D", "N=500", "--incore", "llvm-mca",
                "-p", "ECM", "-v", timeout=300)
    assert p.returncode == 0, p.stderr
    assert "T_OL = 5.00 cy/CL from SKXPort2, SKXPort3 (all instructions): 2.50 cy per pass x 2 passes per CL" \
        in p.stdout
    assert "T_nOL = 4.00 cy/CL from SKXPort2, SKXPort3 (loads): 2.00 cy per pass x 2 passes per CL" in p.stdout
    assert "T_nOL (loads) + T_OL (all)" in p.stdout


# -- property: "latency-bound" only with a named chain -----------------------------------------

def _compiled(case, machine, defines, **options):
    model = load(machine)
    try:
        return Analyzer(case.kernel, model, AnalyzerSettings(models=("ECM",), incore="llvm-mca", kernel_text=case.source,
                                                    **options)).run(defines)
    except ToolError:  # a block llvm-mca cannot time, or one that is not the kernel's loop: refused in one line
        return None


#: kernels whose compiled loop llvm-mca can time: gcc calls sqrt() for errno inside the loop
#: (refused: the call's cost is not modelled), and sizes large enough that the loop stays a loop
TIMED = kernels(dims=(1, 2)).filter(lambda case: "sqrt" not in case.source)


@needs_tools
@settings(PROPERTY_SETTINGS, max_examples=30)
@given(case=TIMED, machine=st.sampled_from((SKX, EMR)))
def test_latency_bound_only_with_a_named_chain(case, machine):
    """Over random kernels on SkylakeSP (port lists) and the Emerald Rapids example (none): a
    "latency-bound" note names a chain of the block (its register or memory dependency and
    instructions), and T_OL is then the simulated time; without one T_OL is at most the port bound
    or the L1 data path. A reduction compiled without -ffast-math always has a chain; a kernel that
    writes an array at the loop's own point and reads others never has one."""
    defines = {n: 1000 if case.dims == 1 else 200 for n in case.sizes}
    res = _compiled(case, machine, defines)
    if res is None:
        return
    ci, ic = res.compiled, res.incore
    chains = loop_carried_chains(ci.block.split("\n"), ci.aarch64)
    per_cl = ci.port_table.cy_per_cl_per_pass
    latency = [n for n in res.notes if "latency-bound" in n]
    if latency:
        assert chains and len(latency) == 1
        assert f"chain through {chains[0].through()} ({chains[0].instructions[0]}" in latency[0]
        assert ic.T_OL == pytest.approx(ci.cycles_per_pass * per_cl)
        assert ic.origin["T_OL"].startswith("the loop-carried dependency chain")
    else:
        bound = max(ci.port_table.T_OL * per_cl, ic.components.get("ST data path", 0.0))
        assert ic.T_OL <= bound + 1e-9
    if ic.dependency:
        assert chains
    reduction = "s = s +" in case.source
    assert bool(chains) == reduction, (case.source, ci.block)
    for name in ("T_OL", "T_nOL"):  # the origin the verbose report prints accounts for the value
        _check_origin(getattr(ic, name), ic.origin[name], ic.components, ci.cycles_per_pass * per_cl)


def _check_origin(value: float, origin: str, components: dict, simulated: float) -> None:
    """``origin`` (InCoreResult.origin) gives ``value``: ports' cy per pass x passes per CL, the L1
    data path's component, or the simulated time of a chain."""
    m = re.search(r": ([\d.]+) cy per pass x ([\d.]+) passes per CL$", origin)
    if m:
        assert value == pytest.approx(float(m.group(1)) * float(m.group(2)), abs=0.005 * float(m.group(2)) + 1e-9)
    elif origin.startswith("the L1 "):
        assert value == pytest.approx(components["LD data path" if " load " in origin else "ST data path"])
    elif origin.startswith("the loop-carried dependency chain"):
        assert value == pytest.approx(simulated)
    else:
        assert origin == "no port listed" and value == 0.0, origin


# -- in-core sources x options -----------------------------------------------------------------

SOURCES = ("auto", "llvm-mca", "osaca", "analytic")
#: option -> AnalyzerSettings fields (the compiled block's label and increment are filled in from a baseline run)
OPTIONS = {
    "--scalar": {"vectorize": False},
    "--reassociation": {"reassociate": True},
    "--no-reassociation": {"reassociate": False},
    "--compiler-flags": {"compiler_flags": "-O1"},
    "--asm-block": {"asm_block": None},
    "--pointer-increment": {"pointer_increment": None},
    "--assume-aligned": {"assume_aligned": 64},
}


def _run(kernel, source, **options):
    path = KERNELS / kernel
    k, _ = parse_kernel_file(str(path))
    opts = AnalyzerSettings(models=("ECM",), incore=source, kernel_text=path.read_text(), **options)
    return Analyzer(k, load(SKX), opts).run({"N": 4000})


def _figures(res) -> tuple:
    return (res.incore.source, res.incore.T_OL, res.incore.T_nOL, tuple(res.ecm.T_ECM.values()))


@needs_tools
@pytest.mark.parametrize("kernel", ["triad.c", "dot.c"])
@pytest.mark.parametrize("source", SOURCES)
def test_every_incore_option_changes_the_result_errs_or_says_so(kernel, source):
    """Each option against the same run without it: different figures (T_OL, T_nOL, T_ECM, or the
    in-core source), a one-line OptionError, or a note naming the option ("no effect here" on the
    analytic model and for --reassociation on a compiled one; "applied to the compiled kernel" for
    an option the compiled analysis used). Triad has no reduction, dot has one."""
    try:
        base = _run(kernel, source)
    except ToolError as exc:  # OSACA not installed: every option fails the same way
        assert source == "osaca" and "OSACA" in exc.message
        return
    compiled = _run(kernel, "llvm-mca").compiled
    for flag, fields in OPTIONS.items():
        fields = {k: (v if v is not None else {"asm_block": compiled.block_label,
                                               "pointer_increment": int(compiled.bytes_per_pass)}[k])
                  for k, v in fields.items()}
        try:
            res = _run(kernel, source, **fields)
        except OptionError as exc:
            assert "\n" not in exc.message and flag.split("-")[-1] in exc.message, (flag, exc.message)
            continue
        named = [n for n in res.notes if re.match(re.escape(flag) + r"( \S+)?:", n) or
                 (n.startswith("applied to the compiled kernel:") and flag in n)]
        if not named and flag == "--scalar":  # --incore auto with --scalar: the analytic model, said so
            named = [n for n in res.notes if n.startswith("--scalar:")]
        assert _figures(res) != _figures(base) or named, (flag, source, res.notes)
        if named and _figures(res) == _figures(base) and res.compiled is None:
            assert "no effect here" in named[0] or "no effect on" in named[0], named


def test_scalar_with_an_explicit_compiled_analyzer_is_a_one_line_error():
    """--scalar used to replace --incore llvm-mca silently by the analytic model."""
    p = run_cli("analyze", KERNELS / "triad.c", "-m", SKX, "-D", "N=1000", "--scalar", "--incore", "llvm-mca")
    assert p.returncode != 0 and len(p.stderr.strip().splitlines()) == 1
    assert "--scalar" in p.stderr and "--incore llvm-mca" in p.stderr and "--compiler-flags" in p.stderr


def test_library_refuses_a_compiled_request_it_cannot_honour():
    """Analyzer with incore='llvm-mca' and no C source used to go analytic without a note."""
    k, _ = parse_kernel_file(str(KERNELS / "triad.c"))
    for opts, words in ((AnalyzerSettings(incore="llvm-mca"), "needs its C code"),
                        (AnalyzerSettings(incore="osaca", kernel_text="x", vectorize=False), "--scalar"),
                        (AnalyzerSettings(incore="analytic", asm_block=".L2"), "--asm-block .L2"),
                        (AnalyzerSettings(incore="auto", pointer_increment=32, vectorize=False), "--pointer-increment 32"),
                        (AnalyzerSettings(incore="iaca"), "--incore iaca")):
        with pytest.raises(OptionError, match=words.replace(".", r"\.")) as info:
            Analyzer(k, load(SKX), opts)
        assert isinstance(info.value, LoopmodelError) and "\n" not in info.value.message
    # RooflineASM compiles the kernel whatever the in-core source: the block options apply there
    Analyzer(k, load(SKX), AnalyzerSettings(models=("RooflineASM",), incore="analytic", asm_block=".L2",
                                   kernel_text=(KERNELS / "triad.c").read_text()))
    res = Analyzer(k, load(SKX), AnalyzerSettings(incore="auto")).run({"N": 1000})
    assert res.incore.source == "analytic" and any("no C code to compile" in n for n in res.notes)
