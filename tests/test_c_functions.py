"""Real code in: the C preprocessor (loopmodel.fileio.c_preprocess), the kernel function named with
--function, a function body as a sequence of perfect nests (fileio.c_nests, ir.sequence), their
analysis nest by nest and summed (workflows.sequence) and the whole-function cache simulation
(predictors.sequence_simulation).

Properties: a function split into nests and analysed equals the sum of the same nests analysed
one by one (times, iterations and runs); each nest's traffic equals the whole-function cache
simulation's where the function's data stay in a cache (none beyond it) and, for streams that
stay in L2, within a few percent at the L1 link."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import SKX, run_cli, schema_errors
from loopmodel.errors import KernelError
from loopmodel.fileio.c_kernel import parse_c
from loopmodel.fileio.kernel_file import load_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.ir.kernel import Kernel
from loopmodel.ir.kernel_source import KernelSource
from loopmodel.ir.sequence import NestSequence
from loopmodel.predictors.sequence_simulation import simulate_function
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.sequence import SequenceAnalyzer

#: a header in the style of PolyBench's (a size default, the data type, array and bound macros)
HEADER = """#ifndef MINI_H
# define MINI_H
# if !defined(NI)
#  define NI 40
#  define NJ 50
#  define NK 60
# endif
# define DATA_TYPE double
# define SCALAR_VAL(x) x
# define ARRAY_2D(var, d1, d2, dd1, dd2) var[d1 + 0][d2 + 0]
# define _PB_NI ni
# define _PB_NJ nj
# define _PB_NK nk
#endif
"""
#: a benchmark program around its kernel, as PolyBench ships them
GEMM = """#include <stdio.h>
#include <unistd.h>
#include <mini.h>
#include "gemm.h"

static void init_array(int ni, int nj, DATA_TYPE ARRAY_2D(C, NI, NJ, ni, nj))
{
  int i, j;
  for (i = 0; i < ni; i++)
    for (j = 0; j < nj; j++)
      C[i][j] = (DATA_TYPE) ((i*j+1) % ni) / ni;
}

static void kernel_gemm(int ni, int nj, int nk, DATA_TYPE alpha, DATA_TYPE beta,
                        DATA_TYPE ARRAY_2D(C, NI, NJ, ni, nj), DATA_TYPE ARRAY_2D(A, NI, NK, ni, nk),
                        DATA_TYPE ARRAY_2D(B, NK, NJ, nk, nj))
{
  int i, j, k;
#pragma scop
  for (i = 0; i < _PB_NI; i++) {
    for (j = 0; j < _PB_NJ; j++)
      C[i][j] *= beta;
    for (k = 0; k < _PB_NK; k++) {
      for (j = 0; j < _PB_NJ; j++)
        C[i][j] += alpha * A[i][k] * B[k][j];
    }
  }
#pragma endscop
}

int main(int argc, char **argv)
{
  return 0;
}
"""


@pytest.fixture
def gemm(tmp_path):
    """A PolyBench-style gemm: the kernel file, its header beside it, the suite's header in utilities/."""
    (tmp_path / "utilities").mkdir()
    (tmp_path / "utilities" / "mini.h").write_text(HEADER)
    (tmp_path / "gemm.h").write_text("#define GEMM_H 1\n")
    path = tmp_path / "gemm.c"
    path.write_text(GEMM)
    return path


def _parse(path, function=None, include=(), sizes=(), macros=()):
    source = KernelSource(str(path), function, tuple(map(str, include)), tuple(sizes), tuple(macros))
    return parse_c(path.read_text(), str(path), source)


# the preprocessor -------------------------------------------------------------------------------
def test_a_polybench_style_file_is_read_with_its_headers_and_function(gemm):
    parsed = _parse(gemm, "kernel_gemm", [gemm.parent / "utilities"])
    seq = parsed.kernel
    assert isinstance(seq, NestSequence)
    assert [[lp.index for lp in n.kernel.loops] for n in seq.nests] == [["i", "j"], ["i", "k", "j"]]
    assert seq.nests[0].kernel.operations == {"MUL": 1}
    assert {"ni", "nj", "nk"} <= seq.constants
    assert [str(d) for d in seq.arrays["C"].dims] == ["40", "50"]  # the header's macros expand
    assert any("init_array" in n and "left out" in n for n in parsed.notes)
    assert any("#pragma scop" in n for n in parsed.notes)


def test_a_size_given_with_D_is_defined_for_the_preprocessor_and_stays_a_symbol(gemm):
    seq = _parse(gemm, "kernel_gemm", [gemm.parent / "utilities"], sizes=(("NI", 7), ("NJ", 8), ("NK", 9))).kernel
    assert [str(d) for d in seq.arrays["C"].dims] == ["NI", "NJ"]
    assert {"NI", "NJ", "NK"} <= seq.constants


def test_a_size_default_of_the_file_itself_stays_a_symbol_that_D_overrides(tmp_path):
    path = tmp_path / "k.c"
    path.write_text("#ifndef N\n#define N 1000\n#endif\n#if N > 2000\n#define M 1\n#else\n#define M 2\n#endif\n"
                    "double a[N], b[N];\nfor (int i = M; i < N; ++i)\n  a[i] = b[i];\n")
    parsed = _parse(path)
    assert parsed.defaults == {"N": 1000, "M": 2}
    assert str(parsed.kernel.loops[0].start) == "M" and "N" in parsed.kernel.constants
    parsed = _parse(path, sizes=(("N", 4000),))
    assert parsed.defaults == {"M": 1} and "N" in parsed.kernel.constants


def test_a_macro_without_a_value_is_seen_by_the_preprocessor_only(tmp_path):
    path = tmp_path / "k.c"
    path.write_text("double a[100], b[100];\n#ifdef TUNED\nfor (int i = 0; i < 100; ++i) a[i] = 2.0 * b[i];\n"
                    "#else\nfor (int i = 0; i < 100; ++i) a[i] = b[i];\n#endif\n")
    assert _parse(path).kernel.operations == {}
    assert _parse(path, macros=("TUNED",)).kernel.operations == {"MUL": 1}


@pytest.mark.parametrize("directive, message", [
    ('#include "missing.h"', "'#include missing.h' not found"),
    ("#error stop here", "#error stop here"),
    ("#line 5", "not supported"),
])
def test_a_refused_directive_is_one_line_naming_the_file_and_line(tmp_path, directive, message):
    path = tmp_path / "k.c"
    path.write_text(f"double a[10];\n{directive}\nfor (int i = 0; i < 10; ++i) a[i] = 1.0;\n")
    with pytest.raises(KernelError) as err:
        _parse(path)
    text = str(err.value)
    assert message in text and str(path) in text and "\n" not in text


def test_standard_headers_are_skipped(tmp_path):
    path = tmp_path / "k.c"
    path.write_text('#include <unistd.h>\n#include <sys/time.h>\n#include "local.h"\ndouble a[N];\n'
                    "for (int i = 0; i < N; ++i) a[i] = 1.0;\n")
    (tmp_path / "local.h").write_text("#define N 64\n")
    assert str(_parse(path).kernel.arrays["a"].dims[0]) == "64"


def test_a_header_outside_the_kernel_folder_and_the_I_folders_is_not_read(tmp_path):
    (tmp_path / "secret.h").write_text("#define N 1\n")
    inner = tmp_path / "kernel"
    inner.mkdir()
    path = inner / "k.c"
    path.write_text('#include "../secret.h"\ndouble a[N];\nfor (int i = 0; i < N; ++i) a[i] = 1.0;\n')
    with pytest.raises(KernelError, match="outside the kernel's folder"):
        _parse(path)
    assert str(_parse(path, include=[tmp_path]).kernel.arrays["a"].dims[0]) == "1"


def test_an_absolute_or_linked_header_outside_the_folders_is_not_read(tmp_path):
    (tmp_path / "inner").mkdir()
    secret = tmp_path / "secret.h"
    secret.write_text("#define N 1\n")
    (tmp_path / "inner" / "link.h").symlink_to(secret)
    for include in (f'"{secret}"', '"link.h"'):
        path = tmp_path / "inner" / "k.c"
        path.write_text(f"#include {include}\ndouble a[N];\nfor (int i = 0; i < N; ++i) a[i] = 1.0;\n")
        with pytest.raises(KernelError, match="outside the kernel's folder"):
            _parse(path)


def test_a_macro_that_doubles_at_each_level_ends_in_one_line(tmp_path):
    lines = ["#define M0 x"] + [f"#define M{k} M{k - 1} M{k - 1}" for k in range(1, 40)]
    path = tmp_path / "k.c"
    path.write_text("\n".join(lines) + "\ndouble a[10];\nfor (int i = 0; i < 10; ++i) a[i] = M39;\n")
    with pytest.raises(KernelError, match="more than"):
        _parse(path)


def test_a_header_that_includes_itself_ends_in_one_line(tmp_path):
    (tmp_path / "loop.h").write_text('#include "loop.h"\n')
    path = tmp_path / "k.c"
    path.write_text('#include "loop.h"\ndouble a[10];\nfor (int i = 0; i < 10; ++i) a[i] = 1.0;\n')
    with pytest.raises(KernelError, match="#include files"):
        _parse(path)


# --function -------------------------------------------------------------------------------------
TWO = ("void first(double *restrict a, int n) { for (int i = 0; i < n; ++i) a[i] = 1.0; }\n"
       "void second(double *restrict b, const double *restrict c, int n) { for (int i = 0; i < n; ++i) b[i] = c[i]; }\n")


def test_several_functions_with_loops_are_listed_in_one_line(tmp_path):
    path = tmp_path / "two.c"
    path.write_text(TWO)
    with pytest.raises(KernelError, match=r"'first' \(line 1\), 'second' \(line 2\); name the kernel with --function"):
        _parse(path)
    parsed = _parse(path, "second")
    assert set(parsed.kernel.arrays) == {"b", "c"}
    assert any("'first'" in n for n in parsed.notes)
    with pytest.raises(KernelError, match="--function third: no function of that name"):
        _parse(path, "third")


# nests ------------------------------------------------------------------------------------------
ATAX = """void atax(int m, int n, double A[m][n], double x[n], double y[n], double tmp[m]) {
  for (int i = 0; i < n; i++)
    y[i] = 0;
  for (int i = 0; i < m; i++) {
    tmp[i] = 0.0;
    for (int j = 0; j < n; j++)
      tmp[i] = tmp[i] + A[i][j] * x[j];
    for (int j = 0; j < n; j++)
      y[j] = y[j] + A[i][j] * tmp[i];
  }
}
"""
JACOBI = """void jacobi(int tsteps, int n, double A[n][n], double B[n][n]) {
  for (int t = 0; t < tsteps; t++) {
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        B[i][j] = 0.2 * (A[i][j] + A[i][j-1] + A[i][1+j] + A[1+i][j] + A[i-1][j]);
    for (int i = 1; i < n - 1; i++)
      for (int j = 1; j < n - 1; j++)
        A[i][j] = 0.2 * (B[i][j] + B[i][j-1] + B[i][1+j] + B[1+i][j] + B[i-1][j]);
  }
}
"""


def test_statements_beside_inner_loops_become_nests_at_their_level(tmp_path):
    path = tmp_path / "atax.c"
    path.write_text(ATAX)
    seq = _parse(path).kernel
    assert [[lp.index for lp in n.kernel.loops] for n in seq.nests] == [["i"], ["i"], ["i", "j"], ["i", "j"]]
    assert [n.line for n in seq.nests] == [3, 5, 7, 9]


def test_a_time_loop_the_nests_do_not_use_multiplies_them(tmp_path):
    path = tmp_path / "jacobi.c"
    path.write_text(JACOBI)
    seq = _parse(path).kernel
    assert [[lp.index for lp in n.repeat] for n in seq.nests] == [["t"], ["t"]]
    assert [[lp.index for lp in n.kernel.loops] for n in seq.nests] == [["i", "j"], ["i", "j"]]
    assert seq.nests[0].repeats({"tsteps": 7, "n": 10}) == 7


def test_one_perfect_nest_stays_one_kernel(tmp_path):
    path = tmp_path / "copy.c"
    path.write_text("void copy(double *restrict a, const double *restrict b, int n) {\n"
                    "  for (int i = 0; i < n; ++i)\n    a[i] = b[i];\n}\n")
    assert isinstance(_parse(path).kernel, Kernel)


def test_statements_outside_every_loop_are_left_out_with_a_note(tmp_path):
    path = tmp_path / "k.c"
    path.write_text("void k(double *restrict a, double *restrict b, int n) {\n  a[0] = 1.0;\n"
                    "  for (int i = 1; i < n; ++i) a[i] = 2.0;\n  for (int i = 1; i < n; ++i) b[i] = a[i];\n}\n")
    parsed = _parse(path)
    assert len(parsed.kernel.nests) == 2
    assert any(n.startswith("line 2: statements outside every loop") for n in parsed.notes)


def test_a_conditional_expression_is_one_compare_and_select(tmp_path):
    path = tmp_path / "k.c"
    path.write_text("void k(double *restrict a, const double *restrict b, const double *restrict c, int n) {\n"
                    "  for (int i = 0; i < n; ++i)\n    a[i] = b[i] > c[i] ? b[i] : c[i] + 1.0;\n}\n")
    parsed = _parse(path)
    assert parsed.kernel.operations == {"ADD": 1, "FMAX": 1}
    assert any("compare-and-select" in n and "line 3" in n for n in parsed.notes)


# the analysis of a function ----------------------------------------------------------------------
def test_analyze_prints_a_row_per_nest_and_the_total(gemm):
    proc = run_cli("analyze", gemm, "--function", "kernel_gemm", "-I", gemm.parent / "utilities", "-m", SKX,
                   "--incore", "analytic", "-D", "ni=40", "-D", "nj=50", "-D", "nk=60")
    assert proc.returncode == 0, proc.stderr
    assert "2 loop nests" in proc.stdout and "line 22 (i,j)" in proc.stdout and "line 25 (i,k,j)" in proc.stdout
    assert "cy per call" in proc.stdout


def test_analyze_json_of_a_function_conforms_to_its_type(gemm):
    proc = run_cli("analyze", gemm, "--function", "kernel_gemm", "-I", gemm.parent / "utilities", "-m", SKX,
                   "--incore", "analytic", "-D", "ni=40", "-D", "nj=50", "-D", "nk=60", "--json")
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert schema_errors(doc, "analyze-function") == []
    assert [n["loops"] for n in doc["nests"]] == [["i", "j"], ["i", "k", "j"]]
    assert sum(n["time_per_call_cy"] for n in doc["nests"]) == pytest.approx(doc["total_time_per_call_cy"])
    assert sum(n["share"] for n in doc["nests"]) == pytest.approx(1.0)


def test_a_function_of_several_nests_refuses_a_range_in_one_line(gemm):
    proc = run_cli("analyze", gemm, "--function", "kernel_gemm", "-I", gemm.parent / "utilities", "-m", SKX,
                   "--incore", "analytic", "-D", "ni=40:80:40", "-D", "nj=50", "-D", "nk=60")
    assert proc.returncode != 0 and "one set of sizes" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


#: one-dimensional nests a generated function is made of: (statement, arrays it names)
NESTS = {
    "copy": "a[i] = b[i];",
    "scale": "b[i] = 3.0 * c[i];",
    "triad": "a[i] = b[i] + 2.5 * c[i];",
    "sum": "s += a[i] * b[i];",
    "div": "c[i] = a[i] / b[i];",
}


def _function(order: list, time_loop: bool) -> str:
    body = "".join(f"    for (int i = 0; i < n; ++i)\n      {NESTS[name]}\n" for name in order)
    if time_loop:
        body = f"  for (int t = 0; t < steps; ++t) {{\n{body}  }}\n"
    return ("void f(int n, int steps, double *restrict a, double *restrict b, double *restrict c) {\n"
            f"  double s = 0.0;\n{body}}}\n")


def _single(name: str) -> str:
    return ("void g(int n, double *restrict a, double *restrict b, double *restrict c) {\n  double s = 0.0;\n"
            f"  for (int i = 0; i < n; ++i)\n    {NESTS[name]}\n}}\n")


@settings(max_examples=12, deadline=None)
@given(order=st.lists(st.sampled_from(sorted(NESTS)), min_size=2, max_size=4),
       time_loop=st.booleans(), n=st.sampled_from([1000, 20000, 400000]), steps=st.integers(1, 5))
def test_a_function_analysed_equals_the_sum_of_its_nests_analysed_one_by_one(order, time_loop, n, steps):
    machine = load_machine(SKX)
    options = AnalyzerSettings(models=("ECM",), incore="analytic", use_cache=False)
    seq = parse_c(_function(order, time_loop), "f.c").kernel
    res = SequenceAnalyzer(seq, machine, options).run({"n": n, "steps": steps})
    runs = steps if time_loop else 1
    expected = 0.0
    for name in order:
        kernel = parse_c(_single(name), "g.c").kernel
        single = Analyzer(kernel, machine, options).run({"n": n})
        expected += runs * n * single.ecm.selected / single.traffic.iterations_per_unit
    assert res.total_cycles == pytest.approx(expected, rel=1e-9)
    assert [r.repeats for r in res.nests] == [runs] * len(order)


@settings(max_examples=8, deadline=None)
@given(order=st.lists(st.sampled_from(sorted(NESTS)), min_size=2, max_size=4), time_loop=st.booleans())
def test_each_nests_traffic_is_the_whole_function_simulations_where_the_data_stay_in_l1(order, time_loop):
    machine = load_machine(SKX)
    seq = parse_c(_function(order, time_loop), "f.c").kernel
    defines = {"n": 256, "steps": 2}  # 3 x 2 KiB: the function's data stay in L1
    res = SequenceAnalyzer(seq, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run(defines)
    for nest, simulated in zip(res.nests, (t.levels for t in simulate_function(seq, machine, defines))):
        for model, sim in zip(nest.result.traffic.levels, simulated):
            assert (model.loads_cl, model.stores_cl) == (0.0, 0.0)
            assert (sim.loads_cl, sim.stores_cl) == (0.0, 0.0)


@settings(max_examples=8, deadline=None)
@given(order=st.lists(st.sampled_from(sorted(NESTS)), min_size=2, max_size=4))
def test_each_nests_l1_traffic_is_close_to_the_whole_function_simulations_for_streams_in_l2(order):
    machine = load_machine(SKX)
    seq = parse_c(_function(order, False), "f.c").kernel
    defines = {"n": 20000, "steps": 1}  # 3 x 160 KiB: beyond L1, within L2
    res = SequenceAnalyzer(seq, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run(defines)
    model_total = sim_total = 0.0
    for nest, simulated in zip(res.nests, (t.levels for t in simulate_function(seq, machine, defines))):
        model, sim = nest.result.traffic.levels[0], simulated[0]
        assert sim.loads_cl == pytest.approx(model.loads_cl, rel=0.05, abs=0.05)  # each nest loads its streams
        assert (nest.result.traffic.levels[1].loads_cl, simulated[1].loads_cl) == (0.0, 0.0)
        model_total += model.loads_cl + model.stores_cl
        sim_total += sim.loads_cl + sim.stores_cl
    # a nest's dirty lines may be written back while the next runs: the function's sum is the same
    assert sim_total == pytest.approx(model_total, rel=0.05)


def test_load_kernel_reads_the_function_named(gemm):
    source = KernelSource(str(gemm), "kernel_gemm", (str(gemm.parent / "utilities"),))
    kernel, _, text, _ = load_kernel(source, use_cache=False)
    assert isinstance(kernel, NestSequence) and text == GEMM


def test_a_time_loop_gives_the_time_per_step(tmp_path):
    path = tmp_path / "jacobi.c"
    path.write_text(JACOBI)
    seq = _parse(path).kernel
    res = SequenceAnalyzer(seq, load_machine(SKX), AnalyzerSettings(models=("ECM",), incore="analytic")).run(
        {"tsteps": 10, "n": 200})
    assert res.outer[0] == "t" and res.outer[1] == pytest.approx(res.total_cycles / 10)
    assert [n.repeats for n in res.nests] == [10, 10] and [n.iterations for n in res.nests] == [198 * 198] * 2


def test_a_max_chain_takes_the_addition_latency_where_the_machine_model_has_none(tmp_path):
    """nussinov's table[i][j] = max(table[i][j], ...) along j: FMAX on a loop-carried chain; the bundled
    Skylake-SP model gives no FMAX latency, so the chain takes ADD's (a vector max is no slower)."""
    machine = load_machine(SKX)
    assert "FMAX" not in machine.in_core.latency
    kernel = parse_c("void k(double *restrict t, int n) {\n  for (int j = 1; j < n; ++j)\n"
                     "    t[j] = t[j-1] >= t[j] ? t[j-1] : t[j];\n}\n", "k.c").kernel
    res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic")).run({"n": 1000})
    assert res.ecm.selected is not None and res.incore.T_OL > 0
    assert any("FMAX taken as" in n and "ADD's latency" in n for n in res.notes)


def test_a_kernel_that_includes_a_header_of_its_own_with_angle_brackets_is_parsed_again(tmp_path, monkeypatch):
    """The parse cache keys the kernel file's text, not its headers': ``#include <mini.h>`` found in the
    kernel's folder is a header of its own, so an edited header is read again (not a stale parse)."""
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "mini.h").write_text("#define SIZE 64\n")
    path = tmp_path / "k.c"
    path.write_text("#include <mini.h>\n#include <math.h>\ndouble a[SIZE];\nfor (int i = 0; i < SIZE; ++i) a[i] = 1.0;\n")
    assert str(load_kernel(str(path))[0].arrays["a"].dims[0]) == "64"
    (tmp_path / "mini.h").write_text("#define SIZE 128\n")
    assert str(load_kernel(str(path))[0].arrays["a"].dims[0]) == "128"
