"""The kernel IR built by ``loopmodel.fileio.c_kernel`` for the example kernels and for the
supported C constructs."""
from __future__ import annotations

import pytest

from helpers import IVB, KERNELS, analyze
from loopmodel.errors import KernelError
from loopmodel.fileio.c_kernel import parse_kernel, parse_kernel_file
from loopmodel.ir.poly import Poly
from loopmodel.predictors.layer_conditions import transition_size

N, M, i, j = (Poly.symbol(s) for s in ("N", "M", "i", "j"))


def example(name):
    return parse_kernel_file(str(KERNELS / name))[0]


def src(text):
    return parse_kernel(text, "t.c")[0]


# --- example kernels --------------------------------------------------------------------------------

def test_3d7pt_ir():
    k = example("3d-7pt.c")
    assert len(k.reads) == 6 and len(k.writes) == 1
    assert {a.array for a in k.reads} == {"a"} and k.writes[0].array == "b"
    assert k.operations == {"ADD": 5, "MUL": 7}
    assert k.fma_candidates == 5
    assert k.flops_per_iteration == 12
    assert k.loop_indices == ("k", "j", "i")
    assert k.constants == frozenset({"M", "N"})
    assert k.arrays["a"].dims == (M, N, N)
    assert set(k.scalars) == {"coeffs_N", "coeffs_S", "coeffs_W", "coeffs_E", "coeffs_F", "coeffs_B", "s"}
    assert k.recurrences == ()
    offsets = {a.offset - (Poly.symbol("k") * N * N + j * N + i) for a in k.reads}
    assert offsets == {Poly.const(-1), Poly.const(1), -N, N, -N * N, N * N}


def test_long_range_ir():
    k = example("3d-long-range.c")
    assert len(k.reads) == 27
    assert sorted({a.array for a in k.reads}) == ["ROC", "U", "V"]
    assert sum(1 for a in k.reads if a.array == "V") == 25
    assert [a.array for a in k.writes] == ["U"]
    assert k.operations["ADD"] == 26 and k.operations["MUL"] == 15
    assert k.flops_per_iteration == 41
    assert set(k.scalars) >= {"lap", "c0", "c1", "c2", "c3", "c4"}
    # 'lap' is written then read in the same iteration: no loop-carried dependency
    assert k.recurrences == ()
    assert [(lp.start, lp.stop) for lp in k.loops] == [(Poly.const(4), M - 4), (Poly.const(4), N - 4),
                                                       (Poly.const(4), N - 4)]


def test_dot_reduction_recurrence():
    k = example("dot.c")
    assert k.writes == ()
    assert len(k.recurrences) == 1
    r = k.recurrences[0]
    assert (r.variable, r.distance, r.reassociable) == ("s", 1, True)
    assert r.graph.nodes == (("", ()), ("ADD", (0,))) and r.graph.root == 1  # one path: s -> ADD -> s
    assert k.iterations_per_cacheline(64) == 8  # one 64 B CL of 8 B elements


def test_matvec_recurrence_on_y():
    k = example("matvec.c")
    recs = {r.variable: r for r in k.recurrences}
    assert set(recs) == {"y"}
    assert recs["y"].reassociable and recs["y"].distance == 1
    # y[j] is invariant in the inner loop: kept in a register, no load/store per iteration
    assert k.loads_per_iteration() == 2 and k.stores_per_iteration() == 0
    assert k.is_inner_invariant(k.writes[0])


def test_uxx_pragma_and_div():
    k = example("uxx.c")
    assert k.pragmas == ("omp parallel for private(d) schedule(static)",)
    assert k.operations["DIV"] == 1
    assert len(k.reads) == 17 and [a.array for a in k.writes] == ["u1"]
    # k <= N-2 is normalised to k < N-1
    assert all(lp.stop == N - 1 for lp in k.loops)
    assert all(lp.start == Poly.const(2) for lp in k.loops)


@pytest.mark.parametrize("name,reads,writes,ops", [
    ("triad.c", 2, 1, {"ADD": 1, "MUL": 1}),
    ("daxpy.c", 2, 1, {"ADD": 1, "MUL": 1}),
    ("daxpby.c", 2, 1, {"ADD": 1, "MUL": 2}),
    ("2d-5pt.c", 4, 1, {"ADD": 3, "MUL": 1}),
])
def test_small_examples(name, reads, writes, ops):
    k = example(name)
    assert (len(k.reads), len(k.writes), dict(k.operations)) == (reads, writes, ops)


def test_daxpy_read_and_written_access_in_both_lists():
    k = example("daxpy.c")
    assert [a.array for a in k.writes] == ["y"]
    assert {a.array for a in k.reads} == {"x", "y"}


# --- constructs ---------------------------------------------------------------------------------------

def test_triangular_loop_accepted():
    k = src("double a[N][N], b[N][N];\nfor (int j = 0; j < N; j++)\n  for (int i = j; i < N; i++)\n"
            "    b[j][i] = a[j][i] * 2.0;\n")
    assert k.loops[1].start == j
    assert k.loops[1].stop == N
    assert k.loops[1].trip_count == N - j


def test_triangular_loop_analyses():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "tri.c"
        p.write_text("double a[N][N], b[N][N];\nfor (int j = 0; j < N; j++)\n  for (int i = j; i < N; i++)\n"
                     "    b[j][i] = a[j][i] + a[j][i+1];\n")
        res = analyze(str(p), IVB, {"N": 500})
    assert res.ecm.T_ECM["MEM"] > 0
    assert res.traffic.levels[0].loads_cl == 2  # a and the write-allocate of b


def test_less_equal_normalised():
    k = src("double a[N];\nfor (int i = 0; i <= N-1; i++)\n  a[i] = 1.0;\n")
    assert k.loops[0].stop == N
    assert k.loops[0].trip_count == N


def test_reversed_comparison_normalised():
    k = src("double a[N];\nfor (int i = 0; N > i; i++)\n  a[i] = 1.0;\n")
    assert k.loops[0].stop == N


def test_downward_loop():
    k = src("double a[N], b[N];\nfor (int i = N-1; i >= 0; i--)\n  b[i] = a[i] + a[i+1];\n")
    lp = k.loops[0]
    assert (lp.start, lp.stop, lp.step) == (N - 1, Poly.const(-1), -1)
    assert lp.trip_count == N


@pytest.mark.parametrize("step_text", ["i+=2", "i = i + 2", "i = 2 + i"])
def test_step_two(step_text):
    k = src(f"double a[N];\nfor (int i = 0; i < N; {step_text})\n  a[i] = 1.0;\n")
    assert k.loops[0].step == 2
    assert k.loops[0].trip_count == N.divide_exact(2)


def test_index_declared_outside_loop():
    k = src("double a[N];\nint i;\nfor (i = 0; i < N; ++i)\n  a[i] = 1.0;\n")
    assert k.loop_indices == ("i",)
    assert "i" not in k.scalars


def test_function_calls_are_own_operation_types():
    k = src("double a[N], b[N], c[N];\nfor (int i = 0; i < N; i++)\n"
            "  b[i] = sqrt(a[i]) + fabs(c[i]) * fmin(a[i], c[i]) - fmax(a[i], 1.0) + exp(c[i]);\n")
    assert k.operations == {"ADD": 3, "MUL": 1, "SQRT": 1, "FABS": 1, "FMIN": 1, "FMAX": 1, "EXP": 1}
    # FLOPs are ADD + MUL + DIV + SQRT only
    assert k.flops_per_iteration == 5


def test_float_function_names():
    k = src("float a[N], b[N];\nfor (int i = 0; i < N; i++)\n  b[i] = sqrtf(a[i]) + expf(a[i]);\n")
    assert k.operations == {"ADD": 1, "SQRT": 1, "EXP": 1}


def test_function_wrong_arity():
    with pytest.raises(KernelError, match="fmin"):
        src("double a[N];\nfor (int i = 0; i < N; i++)\n  a[i] = fmin(a[i]);\n")


def test_mixed_float_double():
    k = src("float a[N];\ndouble b[N];\nfloat s;\nfor (int i = 0; i < N; i++)\n  b[i] = a[i] * s;\n")
    assert (k.arrays["a"].ctype, k.arrays["a"].element_size) == ("float", 4)
    assert (k.arrays["b"].ctype, k.arrays["b"].element_size) == ("double", 8)
    assert k.scalars["s"].element_size == 4
    assert k.bytes_loaded_per_iteration() == 4
    assert k.bytes_stored_per_iteration() == 8
    assert k.iterations_per_cacheline(64) == 8  # one 64 B CL of 8 B elements


def test_mixed_float_double_traffic():
    import tempfile
    from pathlib import Path

    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "mixed.c"
        p.write_text("float a[N];\ndouble b[N];\nfor (int i = 0; i < N; i++)\n  b[i] = a[i] * 2.0;\n")
        res = analyze(str(p), IVB, {"N": 10 ** 7})
    # one CL of b (8 doubles) needs half a CL of float a, plus b's write-allocate and eviction
    l1 = res.traffic.levels[0]
    assert res.traffic.iterations_per_unit == 8
    assert (l1.loads_cl, l1.stores_cl) == (1.5, 1)


def test_pragma_recorded():
    k = src("double a[N], b[N];\n#pragma omp parallel for\nfor (int i = 0; i < N; i++)\n  b[i] = a[i];\n")
    assert k.pragmas == ("omp parallel for",)


def test_inner_pragma_recorded():
    k = src("double a[N][N];\nfor (int j = 0; j < N; j++) {\n#pragma omp simd\n  for (int i = 0; i < N; i++)\n"
            "    a[j][i] = 1.0;\n}\n")
    assert "omp simd" in k.pragmas


def test_include_and_comments_ignored():
    k = src("#include <math.h>\n// line comment\n/* block\n comment */\ndouble a[N];\n"
            "for (int i = 0; i < N; i++) /* trailing */\n  a[i] = sqrt(2.0);\n")
    assert k.operations == {"SQRT": 1}


def test_error_position_after_block_comment():
    with pytest.raises(KernelError) as ei:
        src("/* a\n   multi-line\n   comment */\ndouble a[N];\nfor (int i=0; i<N; i++)\n  if (i) a[i] = 1.0;\n")
    assert (ei.value.line, ei.value.col) == (6, 7)  # the condition 'i' (an 'if' restricts the iteration space)
    assert str(ei.value).startswith("t.c:6:7: ")


def test_define_defaults():
    k, d = parse_kernel("#define N 64\ndouble a[N];\nfor (int i=0;i<N;i++) a[i] = 1.0;\n", "t.c")
    assert d == {"N": 64}
    assert "N" in k.constants


def test_compound_assignment_reads_target():
    k = src("double a[N], b[N];\nfor (int i = 0; i < N; i++)\n  a[i] += b[i];\n")
    assert {x.array for x in k.reads} == {"a", "b"}
    assert k.operations == {"ADD": 1}


def test_array_recurrence_distance_and_chain():
    k = src("double a[N];\nfor (int i = 1; i < N; i++)\n  a[i] = a[i-1] * 0.5 + 1.0;\n")
    assert len(k.recurrences) == 1
    r = k.recurrences[0]
    assert (r.variable, r.distance, r.reassociable) == ("a", 1, False)
    assert r.graph.nodes == (("", ()), ("MUL", (0,)), ("ADD", (1,))) and r.graph.root == 2  # one path: MUL -> ADD


def test_array_recurrence_distance_two():
    k = src("double a[N];\nfor (int i = 2; i < N; i++)\n  a[i] = a[i-2] + 1.0;\n")
    assert [(r.variable, r.distance) for r in k.recurrences] == [("a", 2)]


def test_recurrence_through_temporary():
    k = src("double a[N];\ndouble t, c;\nfor (int i = 1; i < N; i++) {\n  t = a[i-1] * c;\n  a[i] = t + 1.0;\n}\n")
    assert [(r.variable, r.graph.nodes, r.graph.root) for r in k.recurrences] == [
        ("a", (("", ()), ("MUL", (0,)), ("ADD", (1,))), 2)]  # one path: MUL -> ADD


def test_no_recurrence_for_forward_read():
    k = src("double a[N];\nfor (int i = 0; i < N-1; i++)\n  a[i] = a[i+1] * 0.5;\n")
    assert k.recurrences == ()


def test_multiple_statements():
    k = src("double a[N], b[N], c[N];\nfor (int i = 0; i < N; i++) {\n  b[i] = a[i] + 1.0;\n"
            "  c[i] = a[i] * 2.0;\n}\n")
    assert len(k.reads) == 1 and len(k.writes) == 2
    assert k.operations == {"ADD": 1, "MUL": 1}


def test_symbolic_dimensions_and_strides():
    k = src("double a[M][N+2];\nfor (int j=0;j<M;j++) for (int i=0;i<N;i++) a[j][i] = 1.0;\n")
    arr = k.arrays["a"]
    assert arr.dims == (M, N + 2)
    assert arr.strides == (N + 2, Poly.const(1))
    assert arr.size_elements == M * N + 2 * M
    assert k.writes[0].offset == j * N + 2 * j + i


# --- flattened indexing -----------------------------------------------------------------------------

FLAT_5PT = """double a[M*N];
double b[M*N];
double s;

for (int j = 1; j < M-1; ++j)
    for (int i = 1; i < N-1; ++i)
        b[j*N+i] = (a[j*N+i-1] + a[j*N+i+1] + a[(j-1)*N+i] + a[(j+1)*N+i]) * s;
"""


@pytest.fixture()
def flat_kernel(tmp_path):
    p = tmp_path / "2d-5pt-flat.c"
    p.write_text(FLAT_5PT)
    return p


def _transitions(res):
    return {lv.level: [(st.dimension, transition_size(st.max_size)) for st in lv.states] for lv in res.lc_levels}


def test_flattened_same_offsets_as_2d(flat_kernel):
    k2 = example("2d-5pt.c")
    kf = parse_kernel_file(str(flat_kernel))[0]
    assert {a.offset for a in kf.reads} == {a.offset for a in k2.reads}
    assert {a.offset for a in kf.writes} == {a.offset for a in k2.writes}
    assert kf.arrays["a"].dims == (M * N,)


def test_flattened_same_transitions_with_explicit_variable(flat_kernel):
    d = {"M": 100, "N": 1000}
    two_d = analyze("2d-5pt.c", IVB, d)
    flat = analyze(str(flat_kernel), IVB, d, solve_for="N")
    assert _transitions(flat) == _transitions(two_d)
    assert [lv.selected for lv in flat.lc_levels] == [lv.selected for lv in two_d.lc_levels]
    assert [(t.loads_cl, t.stores_cl) for t in flat.traffic.levels] == \
        [(t.loads_cl, t.stores_cl) for t in two_d.traffic.levels]


def test_flattened_same_transitions_default_variable(flat_kernel):
    d = {"M": 100, "N": 1000}
    two_d = analyze("2d-5pt.c", IVB, d)
    flat = analyze(str(flat_kernel), IVB, d)
    assert flat.lc_variable == two_d.lc_variable == "N"
    assert _transitions(flat) == _transitions(two_d)


def _sum_kernel(terms: int) -> str:
    return ("double a[N];\ndouble b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = "
            + " + ".join(f"b[i]*{k}.0" for k in range(terms)) + ";\n")


def test_expressions_up_to_the_depth_limit_are_analysed(tmp_path):
    """At the depth limit the front ends and the models walk the tree without reaching
    Python's recursion limit (here under pytest's own frames): a kernel analysed with the
    cache simulation, an OpenMP program (whose front end copies and prints the tree)."""
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel
    from loopmodel.fileio.c_limits import MAX_EXPRESSION_DEPTH
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.fileio.omp_program import read_omp_program

    terms = MAX_EXPRESSION_DEPTH - 2  # the assignment and the last product are two more levels
    k, _ = parse_kernel(_sum_kernel(terms), "s.c")
    assert k.operations["ADD"] == terms - 1 and k.operations["MUL"] == terms
    res = Analyzer(k, load_machine("SkylakeSP_Gold-6148"), AnalyzerSettings(incore="analytic", cache_predictor="sim")).run(
        {"N": 1000})
    assert res.ecm.T_OL > 0
    omp = tmp_path / "o.c"
    omp.write_text("#define N 1000\ndouble x[N];\ndouble s;\n#pragma omp parallel for reduction(+:s) "
                   "schedule(static)\nfor (int i = 0; i < N; ++i)\n    s += "
                   + " + ".join(f"x[i]*{k}.0" for k in range(terms)) + ";\n")
    assert len(read_omp_program(str(omp)).items) == 1
    with pytest.raises(KernelError):
        parse_kernel(_sum_kernel(terms + 1), "s.c")


@pytest.mark.parametrize("terms,words", [(40000, "more than 10000 tokens"), (600, "nested more than 100")])
def test_huge_expressions_are_refused_promptly(terms, words):
    """A 40000-term statement (590 kB) is refused before pycparser reads it; a 600-term one
    (depth 600) before the recursive walkers see it (600 terms: 1000 exceeded Python's
    recursion limit)."""
    import time

    from loopmodel.errors import KernelError
    from loopmodel.fileio.c_kernel import parse_kernel

    start = time.perf_counter()
    with pytest.raises(KernelError) as exc:
        parse_kernel(_sum_kernel(terms), "s.c")
    assert time.perf_counter() - start < 5
    assert str(exc.value).startswith("s.c:4: ") and words in str(exc.value)


def test_a_deep_yaml_index_expression_is_refused():
    from loopmodel.errors import KernelError
    from loopmodel.fileio.c_kernel import KernelBuilder
    from loopmodel.fileio.kernel_yaml import read_expression

    with pytest.raises(KernelError) as exc:
        read_expression(KernelBuilder("k.yml"), " + ".join(["N"] * 700), ("i",), "index")
    assert "nested more than 100" in str(exc.value)


def test_division_by_a_power_of_two_is_a_multiplication():
    """Compilers emit ``x / 2.0`` as ``x * 0.5`` (exact, no -ffast-math needed); other divisions stay."""
    k, _ = parse_kernel("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n"
                        "  a[i] = b[i] / 2.0 + b[i] / 0.25f + b[i] / 4 + b[i] / 3.0;\n", "half.c")
    assert k.operations == {"ADD": 3, "MUL": 3, "DIV": 1}
