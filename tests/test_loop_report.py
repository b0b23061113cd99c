"""The compiled loop structure from gcc's optimisation report (:mod:`loopmodel.compiled.loop_report`).

* Parsing: each event of a recorded gcc 12 report lands on the loop whose ``for`` line it names
  (vector size of the main loop, then of its epilogue; versioning; unrolling, ``unrolled N
  times`` = N + 1 copies; a complete unroll after vectorisation is the remainder's, not the
  loop's); an interchange in a two-loop nest reverses the executed order, in a deeper nest it
  leaves the order open; events on other lines (the body, main()) are ignored.
* With gcc: the bundled kernels compiled with each x86 machine model's flags report vector sizes
  never wider than the width the analytic model takes from those flags
  (:func:`loopmodel.machine.vector_width.compiler_vector_width`, the one owner of the width); the
  column-wise stencil is reported interchanged; ``analyze --json`` carries the record.
"""
from __future__ import annotations

import json
import shutil

import pytest

from helpers import KERNELS, run_cli
from loopmodel.compiled import loop_report as LR
from loopmodel.compiled.codegen import MARK_END, MARK_START, generate_c
from loopmodel.compiled.compile import assembly_and_report, choose_compiler, single_core_source
from loopmodel.fileio.c_kernel import parse_kernel, parse_kernel_file
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.vector_width import compiler_vector_width

MARKS = (MARK_START, MARK_END)
SOURCE = """int main(void) {
  for (int r = 0; r < 10; ++r) {}
}
void k(void) {
  __asm__ volatile("# LOOPMODEL KERNEL START");
  for (int j = 1; j < M - 1; ++j)
    for (int i = 1; i < N - 1; ++i)
      b[j][i] = a[j][i];
  __asm__ volatile("# LOOPMODEL KERNEL END");
}"""
gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")


def _nest(report: str, indices=("j", "i")) -> LR.CompiledNest:
    return LR.read_report(report, "gcc", SOURCE, indices, MARKS)


def test_events_land_on_the_loop_of_their_line():
    nest = _nest("kernel.c:7:23: optimized: loop vectorized using 32 byte vectors\n"
                 "kernel.c:7:23: optimized:  loop versioned for vectorization because of possible aliasing\n"
                 "kernel.c:7:23: optimized: loop vectorized using 16 byte vectors\n"
                 "kernel.c:7:23: optimized: loop with 3 iterations completely unrolled (header execution count 9)\n"
                 "kernel.c:6:5: optimized: loop unrolled 3 times\n"
                 "kernel.c:8:7: optimized: basic block part vectorized using 32 byte vectors\n"
                 "kernel.c:2:3: optimized: loop vectorized using 64 byte vectors\n")
    outer, inner = nest.loops
    assert (inner.index, inner.vector_bytes, inner.epilogue_bytes, inner.versioned) == ("i", 32, 16, True)
    assert inner.completely_unrolled is None  # the remainder's, after vectorisation
    assert (outer.index, outer.vector_bytes, outer.unroll_factor) == ("j", None, 4)
    assert nest.vectorised is inner and not nest.interchanged and nest.order == ("j", "i")
    assert nest.describe(8) == ("compiled (gcc's report): loop j unrolled x4; loop i vectorised, 32-byte vectors "
                                "(VF 4), epilogue 16-byte vectors, versioned for aliasing")


def test_an_interchange_reverses_two_loops_and_leaves_deeper_nests_open():
    nest = _nest("kernel.c:6:21: optimized: loops interchanged in loop nest\n"
                 "kernel.c:7:23: optimized: loop vectorized using 32 byte vectors\n")
    assert nest.interchanged and nest.order == ("i", "j") and nest.loops[1].index == "j"
    assert nest.describe(8).startswith("compiled (gcc's report): loop order i, j (interchanged); loop j vectorised")
    three = SOURCE.replace("    for (int i", "    for (int k = 0; k < 4; ++k)\n    for (int i")
    deep = LR.read_report("kernel.c:6:21: optimized: loops interchanged in loop nest\n", "gcc", three,
                          ("j", "k", "i"), MARKS)
    assert deep.interchanged and deep.order == () and all(lp.index == "" for lp in deep.loops)
    assert "the report does not say which" in deep.describe(8) and "no loop vectorised" in deep.describe(8)


def test_a_loop_distributed_into_a_library_call_is_said_so_and_leaves_the_simd_assumption():
    """gcc replaces a copy loop with memcpy ("split to 0 loops and 1 library calls"): no loop is
    vectorised, yet the code is not scalar, so the analytic model keeps its assumption."""
    from loopmodel.workflows.executed_simd import executed_simd
    nest = _nest("kernel.c:7:23: optimized: Loop 2 distributed: split to 0 loops and 1 library calls.\n")
    inner = nest.loops[1]
    assert (inner.library_calls, inner.split_loops, nest.library_calls, nest.vectorised) == (1, 0, 1, None)
    text = nest.describe(8)
    assert "loop i replaced by 1 library call(s) (memcpy, memset" in text and "no loop vectorised" not in text
    kernel, _ = parse_kernel("double a[M][N], b[M][N];\nfor (int j = 1; j < M - 1; ++j)\n"
                             "  for (int i = 1; i < N - 1; ++i)\n    b[j][i] = a[j][i];\n", "k.c")
    assert executed_simd(nest, kernel, 32, True) is None
    assert executed_simd(_nest(""), kernel, 32, True).vector_bytes is None  # no library call: scalar code


def test_a_nest_whose_for_lines_do_not_match_its_loops_has_no_record():
    assert _nest("", indices=("k", "j", "i")) is None
    assert LR.read_report("x" * 100 + "\n" * (2 * LR.MAX_REPORT_LINES), "gcc", SOURCE, ("j", "i"), MARKS).loops[1] \
        == LR.CompiledLoop(1, "i")


def _report(kernel, machine, defines):
    choice = choose_compiler(machine)
    src = single_core_source(generate_c(kernel, defines))
    return LR.read_report(assembly_and_report(src, choice)[1], "gcc", src, kernel.loop_indices, MARKS), choice


SIZES = {"N": 1000, "M": 1000, "L": 100}


@gcc
@pytest.mark.parametrize("machine", ["SkylakeSP_Gold-6148", "IvyBridgeEP_E5-2690v2", "HaswellEP_E5-2695v3", "Zen_EPYC-7451"])
@pytest.mark.parametrize("name", ["2d-5pt", "3d-7pt", "daxpy", "triad", "dot", "matvec", "uxx", "box27"])
def test_reported_vectors_are_never_wider_than_the_models_width(name, machine):
    kernel, _ = parse_kernel_file(str(KERNELS / f"{name}.c"))
    m = load_machine(machine)
    defines = {k: v for k, v in SIZES.items() if k in kernel.constants}
    nest, choice = _report(kernel, m, defines)
    width = compiler_vector_width(m.isa, m.in_core.simd_width, choice.command, choice.flags).bytes
    assert nest is not None and len(nest.loops) == len(kernel.loops)
    for lp in nest.loops:
        assert lp.vector_bytes is None or lp.vector_bytes <= width, (lp, width)
    if name in ("2d-5pt", "daxpy", "triad"):  # plain streaming inner loops: gcc vectorises them
        assert nest.vectorised is nest.loops[-1] and nest.vectorised.vector_bytes == width


@gcc
def test_a_column_wise_stencil_is_reported_interchanged():
    kernel, _ = parse_kernel("double a[M][N];\ndouble b[M][N];\nfor (int i = 1; i < N - 1; ++i)\n"
                             "  for (int j = 1; j < M - 1; ++j)\n    b[j][i] = (a[j][i - 1] + a[j][i + 1]) * 0.5;\n",
                             "col.c")
    nest, _ = _report(kernel, load_machine("SkylakeSP_Gold-6148"), {"M": 1000, "N": 1000})
    assert nest.interchanged and nest.order == ("j", "i") and nest.vectorised.index == "i"


@gcc
def test_analyze_reports_the_compiled_loops():
    p = run_cli("analyze", KERNELS / "2d-5pt.c", "-m", "SkylakeSP_Gold-6148", "-D", "M=1000", "-D", "N=1000",
                "--incore", "llvm-mca", "--json")
    if p.returncode != 0 and "llvm-mca" in p.stderr:
        pytest.skip("needs llvm-mca")
    doc = json.loads(p.stdout)
    loops = doc["incore"]["compiled"]["loops"]
    assert loops["compiler"] == "gcc" and loops["order"] == ["j", "i"] and not loops["interchanged"]
    assert [lp["vector_B"] for lp in loops["loops"]] == [None, 32]
    assert any(n.startswith("compiled (gcc's report): loop i vectorised, 32-byte vectors (VF 4)") for n in doc["notes"])


@gcc
def test_an_in_order_float_sum_is_said_to_vectorise_its_loads_only(tmp_path):
    """gcc 12 reports a float sum without -ffast-math "vectorized", and emits scalar vaddss with
    the loads folded in (fold-left): the note says the reduction stays in source order; with
    -ffast-math (reassociation allowed) it does not."""
    kernel = tmp_path / "fsum.c"
    kernel.write_text("float a[N];\nfloat s;\nfor (int i = 0; i < N; ++i)\n  s += a[i];\n")
    notes = {}
    for extra in ((), ("--compiler-flags=-O3 -march=skylake-avx512 -ffast-math",)):
        p = run_cli("analyze", kernel, "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "--incore", "llvm-mca", "--json",
                    *extra)
        if p.returncode != 0 and "llvm-mca" in p.stderr:
            pytest.skip("needs llvm-mca")
        notes[extra] = [n for n in json.loads(p.stdout)["notes"] if n.startswith("compiled (gcc's report)")]
    (strict,), (fast,) = notes.values()
    assert "vectorised" in strict and "'s' stays in source order (gcc's fold-left reduction" in strict
    assert "vectorised" in fast and "source order" not in fast
