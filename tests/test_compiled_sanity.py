"""Compiled loop blocks that cannot be the kernel's inner loop are refused, not analysed.

A block is refused when it calls a function (the analyzers time the call instruction, not
the called code), when its iterations per pass exceed SIMD lanes x MAX_UNROLL, or when the
compiler vectorized across an outer loop; a pointer that advances by a row stride counts
one iteration per pass, not (row bytes / element bytes). With ``--incore auto`` the next
analyzer or the analytic model is used with a note saying why; an analyzer named
explicitly is a one-line error with exit status 2. OpenMP work-sharing pragmas do not change
the analysed block (the single-core analysis compiles the loop, not gcc's outlined copy).
"""
from __future__ import annotations

import json
import shutil
from collections import Counter

import pytest
from helpers import SKX, run_cli

from loopmodel.compiled.asm import (MAX_UNROLL, KernelShape, address_steps, calls, find_kernel_block, implausible,
                                    iterations_per_pass)
from loopmodel.compiled.instructions import packed_bytes
from loopmodel.compiled.compile import single_core_source
from loopmodel.compiled.llvm_mca import find_llvm_mca
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure.corpus import corpus_kernels
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings

needs_tools = pytest.mark.skipif(shutil.which("gcc") is None or find_llvm_mca() is None,
                                 reason="gcc and llvm-mca needed")

MATMUL = """double A[N][N], B[N][N], C[N][N];
for (int i = 0; i < N; ++i)
  for (int j = 0; j < N; ++j)
    for (int k = 0; k < N; ++k)
      C[i][j] += A[i][k]*B[k][j];
"""
CALLS = """double x[N], y[N];
for (int i = 0; i < N; ++i)
  y[i] = exp(-x[i])*sqrt(x[i]);
"""
TRIAD = """double a[N], b[N], c[N];
{pragma}for (int i = 0; i < N; ++i)
  a[i] = b[i] + 2.5*c[i];
"""
#: the scalar ijk block gcc 12 makes with -O2 -fno-tree-vectorize (hand-checked): %rax walks
#: B[k][j] down a column (+16000 B = one row of N=2000 doubles), %rdx walks A[i][k] (+8 B)
SCALAR_MATMUL_BLOCK = """.L3:
    vmovsd  (%rdx), %xmm1
    addq    $16000, %rax
    vfmadd231sd -16000(%rax), %xmm1, %xmm0
    addq    $8, %rdx
    cmpq    %rax, %rcx
    jne .L3
"""
#: the block gcc 12 makes of the same kernel with -O3 -march=skylake-avx512: it vectorizes the
#: j loop, C[i][j..j+3] in %ymm0, while k runs (one pass = one k for four j)
OUTER_VECTOR_BLOCK = SCALAR_MATMUL_BLOCK.replace("vmovsd  (%rdx), %xmm1", "vbroadcastsd (%rdx), %ymm1").replace(
    "vfmadd231sd -16000(%rax), %xmm1, %xmm0", "vfmadd231pd -16000(%rax), %ymm1, %ymm0")
#: strides of the ijk kernel's moving accesses (N=2000): A[i][k] 8 B, B[k][j] 16000 B per k
MATMUL_SHAPE = KernelShape((8.0, 16000.0), 8, 8, 64, 8)
SCALAR_FLAGS = "-O2 -march=skylake-avx512 -fno-tree-vectorize"


def _kernel(tmp_path, text, name="k.c"):
    p = tmp_path / name
    p.write_text(text)
    return p


def _lines(block):
    return [ln.strip() for ln in block.split("\n") if ln.strip() and not ln.strip().endswith(":")]


# --- iterations per pass: a row-stride pointer is one iteration, not N ---------------------

def test_row_stride_pointer_is_one_iteration_per_pass():
    """%rax advances 16000 B (a row of B) and %rdx 8 B (A's element) per pass: one k iteration.
    Matching 16000 B to A's 8 B stride gave 2000 iterations per pass."""
    block = find_kernel_block(SCALAR_MATMUL_BLOCK, 8.0, strides=(16000.0,))
    assert block.iterations_per_pass == 1.0
    assert (block.bytes_per_pass, block.register) == (8.0, "rdx")


def test_count_explaining_most_registers_wins():
    """Hand-made votes: two registers at 64 B (unit stride, 8 it) and one at 8 x 800 B: 8 it."""
    steps = Counter({(64.0, "rax"): 3, (64.0, "rbx"): 1, (6400.0, "rcx"): 1})
    assert iterations_per_pass(steps, (8.0, 800.0))[0] == 8.0
    # one stride only: the most used register over it, as before
    assert iterations_per_pass(Counter({(32.0, "rax"): 2}), (8.0,)) == (4.0, 32.0, "rax")
    assert iterations_per_pass(Counter(), (8.0,)) == (None, None, None)


def test_address_steps_count_index_scale():
    steps = address_steps(["vmovupd (%r15,%rax,8), %ymm0", "addq $4, %rax", "jne .L2"])
    assert steps == Counter({(32.0, "rax"): 1})


@needs_tools
def test_scalar_ijk_matmul_is_analysed_at_one_iteration_per_pass(tmp_path):
    """The scalar ijk block: 1 it per pass, 8 B pointer increment; T_OL is the FMA latency chain on
    C[i][j] (4 cy per k on Skylake-SP), not 0.0 as with '2000 it per pass'."""
    k = _kernel(tmp_path, MATMUL)
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "llvm-mca",
                "--compiler-flags", SCALAR_FLAGS, "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)["incore"]
    assert doc["compiled"]["iterations_per_pass"] == 1.0
    assert doc["compiled"]["pointer_increment_B_per_pass"] == 8.0
    assert doc["T_OL_cy_per_cl"] == pytest.approx(4.0, abs=0.1)


# --- refusals ---------------------------------------------------------------------------------

def test_outer_loop_vectorization_is_refused():
    """A packed 32 B load through a register that moves 16000 B per k: the vector runs over j."""
    why = implausible(_lines(OUTER_VECTOR_BLOCK), 1.0, MATMUL_SHAPE)
    assert why is not None and "outer loop" in why and "rax" in why and "16000 B" in why
    assert implausible(_lines(SCALAR_MATMUL_BLOCK), 1.0, MATMUL_SHAPE) is None


def test_packed_access_within_one_iteration_is_plausible():
    """a[i][0..3] of double a[N][8] in one 32 B ymm load per iteration (SLP; the pointer moves 64 B):
    accepted when the kernel touches 32 B of a contiguously per iteration, refused when only 8 B."""
    block = ["vmovupd (%rax), %ymm0", "vmulpd %ymm1, %ymm0, %ymm0", "vmovupd %ymm0, (%rdx)", "addq $64, %rax",
             "addq $64, %rdx", "cmpq %rax, %rcx", "jne .L2"]
    assert implausible(block, 1.0, KernelShape((64.0,), 8, 8, 32, 32)) is None
    assert "outer loop" in implausible(block, 1.0, KernelShape((64.0,), 8, 8, 32, 8))


def test_strided_inner_vectorization_is_plausible():
    """a[i] = b[i] + s*c[i] on floats with i += 2: gcc loads 16 B (four floats, two iterations) and
    shuffles; the pointer moves 8 B per iteration, less than the load, so it is inner-loop SIMD."""
    block = ["vmovups (%rdx,%rax), %xmm6", "vmovups 16(%rdx,%rax), %xmm7", "vshufps $136, %xmm7, %xmm6, %xmm0",
             "vmovss %xmm0, (%rcx,%rax)", "addq $32, %rax", "cmpq %rax, %rsi", "jne .L2"]
    assert implausible(block, 4.0, KernelShape((8.0,), 4, 4, 32, 4)) is None


def test_iterations_beyond_simd_lanes_times_unroll_are_refused():
    """2000 it per pass on 64 B registers with 8 B elements: more than 8 lanes x 32."""
    why = implausible(_lines(SCALAR_MATMUL_BLOCK), 2000.0, MATMUL_SHAPE)
    assert why is not None and "2000 iterations per pass exceed 8 SIMD lanes" in why
    assert implausible(_lines(SCALAR_MATMUL_BLOCK), 8 * MAX_UNROLL, KernelShape((8.0,), 8, 8, 64)) is None


def test_calls_are_found():
    assert calls(["vmovsd (%rax), %xmm0", "call exp@PLT", "call *%rbx", "callq exp@PLT"]) == ["exp", "*%rbx"]
    assert calls(["ldr d0, [x1], #8", "bl exp", "blr x3", "b.ne .L2"], aarch64=True) == ["exp", "x3"]
    why = implausible(["vmovsd (%rbp,%rbx), %xmm0", "call exp@PLT", "addq $8, %rbx", "jne .L2"], 1.0,
                      KernelShape((8.0,), 8, 8, 64))
    assert why.startswith("the loop block calls exp: the cost of a function call is not modelled")


def test_packed_widths():
    assert packed_bytes("vfmadd231pd -16000(%rax), %ymm1, %ymm0") == 32
    assert packed_bytes("vmovapd %zmm0, (%r13,%rax)") == 64
    assert packed_bytes("vbroadcastsd (%rdx), %ymm1") == 0
    assert packed_bytes("vmovsd (%rdx), %xmm1") == 0
    assert packed_bytes("vaddpd %ymm1, %ymm0, %ymm0") == 0  # no memory operand
    assert packed_bytes("ldr q0, [x1], #16", aarch64=True) == 16
    assert packed_bytes("ld1 {v0.2d}, [x1]", aarch64=True) == 16
    assert packed_bytes("ldr d0, [x1], #8", aarch64=True) == 0


@needs_tools
def test_ijk_matmul_explicit_analyzer_is_an_error_auto_falls_back(tmp_path):
    """gcc 12 -O3 -march=skylake-avx512 vectorizes the ijk kernel across j. Where the analysis
    cannot follow that (a pragma keeps the nest as written), llvm-mca named is a one-line error
    (exit 2) and auto falls back to the analytic model with a note saying why; the plain kernel
    is analysed as the ikj nest gcc's code runs like, by llvm-mca, with the note."""
    k = _kernel(tmp_path, "#pragma GCC ivdep\n" + MATMUL)
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "llvm-mca", timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert len(p.stderr.strip().splitlines()) == 1 and "vectorized across an outer loop" in p.stderr
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "auto", "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["incore"]["source"] == "analytic" and "compiled" not in doc["incore"]
    assert "compiled in-core analysis not possible" in p.stdout and "vectorized across an outer loop" in p.stdout
    plain = _kernel(tmp_path, MATMUL, "plain.c")
    p = run_cli("analyze", plain, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "llvm-mca", "--json",
                timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert [lp["index"] for lp in doc["kernel"]["loops"]] == ["i", "k", "j"]
    assert any(n.startswith("analysed as compiled: gcc vectorises loop j around the inner loop k")
               for n in doc["notes"])


@needs_tools
def test_implausible_pointer_increment_option_is_an_error(tmp_path):
    """--pointer-increment 1000000 on the triad: 125000 it per pass; an option error, never a fallback."""
    k = _kernel(tmp_path, TRIAD.format(pragma=""))
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=1000", "-p", "ECM", "--incore", "auto",
                "--pointer-increment", "1000000", timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr
    assert "125000 iterations per pass exceed" in p.stderr and "--pointer-increment" in p.stderr


@needs_tools
def test_block_with_calls_is_refused(tmp_path):
    """exp() and sqrt() become 'call exp@PLT' / 'call sqrt@PLT' with the Skylake-SP file's flags
    (-ffreestanding): llvm-mca named is an error naming the functions; auto falls back, and the
    analytic model gives no T_OL (the machine model has no EXP figure) instead of a number."""
    k = _kernel(tmp_path, CALLS)
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "llvm-mca", timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr and len(p.stderr.strip().splitlines()) == 1
    assert "calls exp" in p.stderr and "cost of a function call is not modelled" in p.stderr
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=2000", "-p", "ECM", "--incore", "auto", "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["incore"]["source"] == "analytic" and doc["incore"]["T_OL_cy_per_cl"] is None
    assert "calls exp" in p.stdout and "function call is not modelled" in p.stdout


# --- OpenMP -------------------------------------------------------------------------------------

def test_single_core_source_removes_work_sharing_pragmas():
    src = "int x;\n#pragma omp parallel for schedule(static)\nfor(;;);\n  #pragma omp parallel for simd reduction(+:s)\n"
    out = single_core_source(src).split("\n")
    assert out[1] == "" and out[3] == "  #pragma omp simd reduction(+:s)"
    assert len(out) == len(src.split("\n"))
    assert single_core_source("#pragma omp declare simd\n") == "#pragma omp declare simd\n"
    assert single_core_source("#pragma GCC ivdep\n") == "#pragma GCC ivdep\n"


@needs_tools
def test_openmp_pragma_does_not_change_the_analysed_block(tmp_path):
    """The Skylake-SP flags have -fopenmp: with the pragma gcc would outline the loop into
    loopmodel_kernel._omp_fn.0 and the marked region holds no loop. The block analysed with the
    pragma must be the block analysed without it."""
    docs = []
    for pragma in ("", "#pragma omp parallel for\n"):
        k = _kernel(tmp_path, TRIAD.format(pragma=pragma), f"k{len(docs)}.c")
        p = run_cli("analyze", k, "-m", SKX, "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca", "--json",
                    timeout=120)
        assert p.returncode == 0, p.stderr
        docs.append(json.loads(p.stdout)["incore"])
    assert "-fopenmp" in docs[1]["compiled"]["flags"]
    assert docs[1]["compiled"]["block"] == docs[0]["compiled"]["block"]
    assert (docs[1]["T_OL_cy_per_cl"], docs[1]["T_nOL_cy_per_cl"]) == (docs[0]["T_OL_cy_per_cl"], docs[0]["T_nOL_cy_per_cl"])


COLUMN = """double a[N][N], b[N][N];
double s;
for (int j = 0; j < N; ++j)
  for (int i = 0; i < N; ++i)
    a[i][j] = s*b[i][j];
"""


@needs_tools
def test_size_dependent_stride_of_the_written_array_is_evaluated(tmp_path):
    """a[i][j] with i innermost moves a row (N x 8 B = 8000 B) per iteration: evaluated at -D N=1000,
    the scalar block's 8000 B pointer increment is one iteration per pass (it was an error asking for
    --pointer-increment); one store per iteration on Skylake-SP's port 4: T_OL = 1 cy/CL (1 it/CL)."""
    k = _kernel(tmp_path, COLUMN)
    p = run_cli("analyze", k, "-m", SKX, "-D", "N=1000", "-p", "ECM", "--incore", "llvm-mca",
                "--compiler-flags", SCALAR_FLAGS, "--json", timeout=120)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)["incore"]
    assert (doc["compiled"]["iterations_per_pass"], doc["compiled"]["pointer_increment_B_per_pass"]) == (1.0, 8000.0)
    assert doc["T_OL_cy_per_cl"] == pytest.approx(1.0, abs=0.05)


def test_fewer_than_one_iteration_per_pass_is_refused():
    """The transposed 3-D stencil (inner loop i over the first index): gcc -O3 interchanges the
    nest, and its loop block advances by one row of the unit-stride index, 1/11 of the stride of
    an inner-loop iteration: read as 0.09 it per pass, it made T_OL 346 cy/CL where 3 cy/it
    were measured. A pass that does less than one iteration is not the kernel's loop."""
    block = ["vmovsd (%rax), %xmm0", "vaddsd 8(%rax), %xmm0, %xmm0", "vmovsd %xmm0, (%rdx)", "addq $88, %rax",
             "addq $88, %rdx", "cmpq %rax, %rcx", "jne .L5"]
    why = implausible(block, 88 / 968, KernelShape((968.0,), 8, 8, 64, 8))
    assert why is not None and "fewer than one" in why and "interchanged" in why
    assert implausible(block, 1.0, KernelShape((88.0,), 8, 8, 64, 8)) is None


@needs_tools
@pytest.mark.parametrize("name", ["stencil3d-r1-T-double", "stencil2d-r3-T-float", "matvec-columns-double",
                                  "transpose-copy-double", "matmat-ijk-double", "strided-load-3-double"])
def test_an_accepted_compiled_block_does_at_least_one_iteration_per_pass(name, tmp_path):
    """Invariant over the corpus's strided and transposed kernels (where compilers restructure
    nests): a compiled loop block taken as the kernel's inner loop does >= 1 iteration per pass,
    and T_ECM in L1 stays within 20x of the analytic in-core model's."""
    kernel = next(k for k in corpus_kernels(0) if k.name == name)
    parsed, _ = parse_kernel(kernel.source)
    sizes = {s: 24 for s in ("N", "M") if f"[{s}]" in kernel.source}
    machine = load_machine(SKX)
    res = Analyzer(parsed, machine, AnalyzerSettings(models=("ECM",), incore="auto", kernel_text=kernel.source)).run(sizes)
    if res.compiled is not None:
        assert res.compiled.iterations_per_pass >= 1
    analytic = Analyzer(parsed, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run(sizes)
    assert res.ecm.T_ECM["L1"] <= 20 * analytic.ecm.T_ECM["L1"]
