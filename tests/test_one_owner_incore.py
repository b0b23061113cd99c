"""The SIMD width, reductions and split accesses of the in-core models, each decided in one place.

* Width: :func:`loopmodel.machine.vector_width.compiler_vector_width` from the compiler and its
  flags; the analysis, its lanes and its split-access figures use it (gcc 12 prefers 256-bit
  vectors on Intel's AVX-512 cores).
* Reductions: an integer one is vectorized whatever the floating-point flags and counts no FLOP;
  a vectorized one keeps one accumulator (gcc), bounded by its chain per SIMD group; a machine
  file without the chain's latency takes the micro-architecture's documented figure.
* Split accesses: :func:`loopmodel.models.split_access.split_accesses` (no peeling) is charged by
  the in-core model and read by the ``split-loads`` tag.

Property tests are seeded (``kernel_strategies.PROPERTY_SETTINGS``); counts and times in each
test's docstring.
"""
from __future__ import annotations

import dataclasses
import re
import shutil

import pytest
from hypothesis import assume, given, settings, strategies as st

import kernel_strategies as ks
from helpers import ROOT, SKX
from loopmodel.compiled.compile import resolve_compiler
from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.machine.vector_width import compiler_vector_width, register_width
from loopmodel.models.incore import chain_latency_table, full_simd_lanes
from loopmodel.models.split_access import simd_split_accesses
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings

KERNELS = ROOT / "benchmarks" / "results" / "one-owner" / "kernels"
PROBED = str(ROOT / "examples" / "machines" / "XeonKVM_2vCPU_probed.yml")


def _run(source: str, machine, defines: dict, **options):
    kernel = parse_kernel(source, "k.c")[0]
    m = load_machine(machine) if isinstance(machine, str) else machine
    options.setdefault("incore", "analytic")
    return Analyzer(kernel, m, AnalyzerSettings(models=("ECM",), **options)).run(defines)


# --- the width ------------------------------------------------------------------------------------

@pytest.mark.parametrize("command, flags, width", [
    ("gcc", "-O3 -march=skylake-avx512", 32),
    ("gcc", "-O3 -march=skylake-avx512 -mprefer-vector-width=512", 64),
    ("gcc", "-O3 -march=icelake-server", 32),
    ("gcc", "-O3 -march=skylake-avx512 -mtune=generic", 64),
    ("gcc", "-O3 -mavx512f", 64),
    ("gcc", "-O3 -march=knl", 64),
    ("gcc", "-O3 -march=core-avx2", 32),
    ("gcc", "-O3 -march=znver1", 16),
    ("gcc", "-O3 -march=znver1 -mprefer-vector-width=256", 32),
    ("gcc", "-O3", 16),
    ("gcc", "-O3 -march=native", 64),
    ("icc", "-O3 -xCORE-AVX512", 32),
    ("icc", "-O3 -xCORE-AVX512 -qopt-zmm-usage=high", 64),
    ("clang", "-O3 -march=skylake-avx512", 32),
])
def test_compiler_width_rules(command, flags, width):
    """The width each compiler and flag set vectorizes with on a 64 B machine."""
    assert compiler_vector_width("x86", 64, command, flags.split()).bytes == width


def test_width_limited_by_machine_and_sve_bits():
    assert compiler_vector_width("x86", 32, "gcc", ["-O3", "-mavx512f"]).bytes == 32
    assert compiler_vector_width("x86", 64, "gcc", None).bytes == 64  # no flags: the machine's
    assert compiler_vector_width("aarch64", 64, "gcc", ["-msve-vector-bits=256"]).bytes == 32
    assert compiler_vector_width("aarch64", 16, "gcc", ["-mcpu=thunderx2t99"]).bytes == 16
    assert register_width(["-O3", "-march=skylake-avx512", "-mno-avx512f"]) == 32


@pytest.mark.skipif(shutil.which("gcc") is None, reason="needs gcc")
@pytest.mark.parametrize("march", ["skylake-avx512", "icelake-server", "knl", "core-avx2", "corei7-avx", "znver1",
                                   "x86-64-v4"])
def test_width_rule_is_what_gcc_emits(march):
    """gcc (12 here) compiles a streaming loop with the width the rule gives, on any host (-march
    names the target): the rule's evidence."""
    from loopmodel.measure.host_cpu import compiler_simd_width
    import platform
    if platform.machine() not in ("x86_64", "AMD64"):
        pytest.skip("x86 gcc")
    flags = ["-O3", f"-march={march}"]
    assert compiler_simd_width("gcc", flags) == compiler_vector_width("x86", 64, "gcc", flags).bytes


def test_float_triad_on_skylake_sp_uses_256_bit_vectors():
    """Regression: the analytic model assumed 16 float lanes (T_OL 1.5, T_nOL 1.0 cy/CL) where gcc
    -O3 -march=skylake-avx512 emits ymm code: 8 lanes, T_OL 3.0 (LDST), T_nOL 2.0 cy/CL."""
    res = _run((KERNELS / "triad-float.c").read_text(), SKX, {"N": 100000})
    assert res.incore.lanes == 8
    assert (res.incore.T_OL, res.incore.T_nOL) == pytest.approx((3.0, 2.0))
    assert any("SIMD width 32 B" in n for n in res.notes)
    wide = _run((KERNELS / "triad-float.c").read_text(), SKX, {"N": 100000},
                compiler_flags="-O3 -march=skylake-avx512 -mprefer-vector-width=512")
    assert wide.incore.lanes == 16 and wide.incore.T_nOL == pytest.approx(1.0)


def test_sixteen_element_rows_on_skylake_sp():
    """Regression: T_nOL 1.0 with 8 double lanes; gcc's 4 lanes give 2.0 cy/CL (by hand: 2 loads
    x 2 vectors per CL over 2 loads per cy)."""
    res = _run((KERNELS / "inner16.c").read_text(), SKX, {"M": 1000})
    assert res.incore.lanes == 4 and res.incore.T_nOL == pytest.approx(2.0)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(case=ks.kernels(), machine=ks.machines(), data=st.data())
def test_analysis_width_is_the_owners(case, machine, data):
    """40 examples, about 4 s: an analysis runs with the width the owner gives for the machine's
    compiler flags, and its analytic lanes are that width over the widest element, or 1."""
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    res = ks.analyze(case, machine, defines, models=("ECM",))
    s = resolve_compiler(machine)
    want = compiler_vector_width(machine.isa, machine.in_core.simd_width, s.command,
                                 s.flags if s.flags_from != "default" else None).bytes
    assert res.machine.in_core.simd_width == want
    assert res.incore.lanes in (1, full_simd_lanes(case.kernel, res.machine))


# --- reductions -----------------------------------------------------------------------------------

def test_long_sum_is_vectorized_and_has_no_flops():
    """Regression: ``long s += a[i]`` was an in-order FP chain (T_OL 32 cy/CL) with its adds
    counted as FLOPs (13.86 GFLOP/s); gcc vectorizes it (vpaddq, one accumulator): T_OL = 1 cy
    per 4 lanes x 8 it/CL = 2 cy/CL, 0 FLOP."""
    res = _run((KERNELS / "sum-long.c").read_text(), SKX, {"N": 100000})
    assert res.kernel.flops_per_iteration == 0
    assert res.incore.lanes == 4 and res.incore.T_OL == pytest.approx(2.0)


def test_float_sum_without_add_latency_takes_the_documented_one():
    """Regression: a Kerncraft-style model without in_core.latency had no T_OL for a float sum; the
    peer derives 16 it x 4 cy: the documented SKX ADD latency (4 cy), with a note."""
    skx = load_machine(SKX)
    bare = dataclasses.replace(skx, in_core=dataclasses.replace(skx.in_core, latency={}))
    res = _run((KERNELS / "sum-float.c").read_text(), bare, {"N": 100000})
    assert res.incore.T_OL == pytest.approx(64.0)
    assert any("documented for SKX" in n for n in res.notes)


def _integer(source: str) -> str:
    return re.sub(r"\b(double|float)\b", "long", source)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(case=ks.kernels(), machine=ks.machines(), data=st.data())
def test_integer_kernels_count_no_flops(case, machine, data):
    """40 examples, about 3 s: the generated kernels with every type made ``long`` (no sqrt, no
    division) report 0 FLOP, and an integer reduction never keeps its source order."""
    assume("sqrt" not in case.source and "/" not in case.source)
    kernel = parse_kernel(_integer(case.source), "k.c")[0]
    assert kernel.flops_per_iteration == 0
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run(defines)
    assert not any("kept in source order" in n for n in res.notes)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(case=ks.kernels(), machine=ks.machines(), reassociate=st.booleans(), data=st.data())
def test_reduction_time_covers_its_chain(case, machine, reassociate, data):
    """40 examples, about 4 s: a reduction's T_OL is at least its chain latency x iterations per CL
    / lanes used (one accumulator per lane; lanes 1 in source order)."""
    assume(any(r.reassociable for r in case.kernel.recurrences))
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    res = ks.analyze(case, machine, defines, models=("ECM",), reassociate=reassociate)
    ic = res.incore
    assume(ic.T_OL is not None)
    for rec in case.kernel.recurrences:
        if rec.reassociable:  # the chain is at least its fastest operation, at the width it runs
            width = case.kernel.arrays.get(rec.variable, case.kernel.scalars.get(rec.variable)).element_size * ic.lanes
            table, _ = chain_latency_table(res.machine, rec.graph.operations(True), width, rec.variable)
            assert ic.T_OL >= min(table.values()) * res.traffic.iterations_per_unit / ic.lanes * (1 - 1e-9)


# --- split accesses -------------------------------------------------------------------------------

def test_copy_from_one_is_split_and_tagged():
    """Regression: ``for (i = 1; ...) a[i] = b[i]`` was charged 0.125 split loads per iteration
    (no peeling: gcc 12 starts its unaligned vectors at i = 1) but not tagged (the tag's rule took
    the loop as peeled to align the store); now both read the one figure."""
    res = _run((KERNELS / "copy-from1.c").read_text(), PROBED, {"N": 100000})
    assert res.incore.split.loads == pytest.approx(0.125)
    assert "split-loads" in res.confidence.tags
    shifted = _run((KERNELS / "copy-shift.c").read_text(), PROBED, {"N": 100000})
    assert shifted.incore.split.loads == pytest.approx(0.125) and "split-loads" in shifted.confidence.tags
    aligned = _run("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\n", PROBED, {"N": 100000})
    assert aligned.incore.split.loads == 0 and "split-loads" not in aligned.confidence.tags


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(case=ks.kernels(), data=st.data())
def test_split_charge_iff_tagged(case, data):
    """40 examples, about 4 s: on the probed machine (split loads cost 1.28 extra slots), the
    analytic model charges split loads (the ``split`` figure, the LD component above the plain
    one) exactly where the ``split-loads`` tag is set, and the figure is the owner's."""
    defines = data.draw(ks.sizes(case, 1e3, 1e6))
    res = ks.analyze(case, PROBED, defines, models=("ECM",))
    ic = res.incore
    charged = ic.split is not None and ic.split.loads > 0
    assert charged == ("split-loads" in res.confidence.tags)
    if ic.lanes > 1:
        assert ic.split == simd_split_accesses(case.kernel, defines, ic.lanes, 64)


@pytest.mark.parametrize("op", ["a[i] = b[i] / c[i];", "a[i] = sqrt(b[i]) + c[i];"])
def test_dividers_move_the_same_bytes_per_cycle_at_the_compilers_width(op):
    """A division or square root on gcc's 256-bit vectors (Skylake SP) costs what it costs at 512 bit: the
    machine file's DIV/SQRT throughput is per 64-byte instruction, and charging it to each 32-byte one
    doubled T_OL (32 cy/CL for ``b[i] / c[i]``, where vdivpd ymm takes 8 cy and zmm 16 cy)."""
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel
    from loopmodel.fileio.machine_files import load_machine

    source = f"double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n    {op}\n"
    kernel, _ = parse_kernel(source)
    m = load_machine("SkylakeSP_Gold-6148")
    times = {}
    for flags in ("-O3 -march=skylake-avx512", "-O3 -march=skylake-avx512 -mprefer-vector-width=512"):
        s = AnalyzerSettings(models=("ECM",), incore="analytic", compiler="gcc", compiler_flags=flags,
                             kernel_text=source)
        res = Analyzer(kernel, m, s).run({"N": 1000})
        times[flags] = {k: v for k, v in res.incore.components.items() if k in ("DIV", "SQRT")}
    narrow, wide = times.values()
    assert narrow and narrow == pytest.approx(wide)
