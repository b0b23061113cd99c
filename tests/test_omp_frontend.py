"""OpenMP program front end (loopmodel.fileio.omp_program): C files with OpenMP pragmas and YAML
descriptions -> ir.omp.OmpProgram (benchmark-based-coherence-model.txt §II, §III-A).

Each phase kind, repeats, parallel blocks, clauses accepted and rejected, defines, triangular
over-approximation, flattening, scalar statements, the YAML form and its errors; every error is
a one-line KernelError naming file:line; the ``code`` of every phase compiles (and the
examples run) in a small harness with gcc -fopenmp.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from loopmodel.errors import KernelError
from loopmodel.fileio.omp_program import parse_omp_c, parse_omp_yaml, read_omp_program
from loopmodel.ir.omp import AffineAccess, LoopBound, OmpProgram, Phase, Repeat

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples" / "omp"

BRIEF = """\
#define N 100000
double x[N], y[N];
double s;
for (int i = 0; i < N; ++i) { x[i] = 1.0; y[i] = 2.0; }        // sequential: thread 0
#pragma omp parallel for reduction(+:s) schedule(static)
for (int i = 0; i < N; ++i)
    s += x[i] * y[i];
for (int it = 0; it < 3; ++it) {                                  // Repeat (count 3)
    #pragma omp parallel for
    for (int i = 1; i < N - 1; ++i) y[i] = 0.5 * (x[i-1] + x[i+1]);
    #pragma omp master
    for (int i = 0; i < N; ++i) x[i] = y[i];
}
#pragma omp parallel
{
    #pragma omp for
    for (int i = 0; i < N; ++i) x[i] = 2.0 * y[i];
    #pragma omp single
    for (int i = 0; i < N; ++i) s += x[i];
}
"""

HEAD = "#define N 1000\ndouble x[N], y[N], z[N];\ndouble s, t;\n"


def prog(body: str, defines=None) -> OmpProgram:
    return parse_omp_c(HEAD + body, "prog.c", defines)


def one(body: str, defines=None) -> Phase:
    p = prog(body, defines)
    assert len(p.items) == 1, p.items
    return p.items[0]


def error(body: str, defines=None, head=HEAD) -> KernelError:
    with pytest.raises(KernelError) as info:
        parse_omp_c(head + body, "prog.c", defines)
    text = str(info.value)
    assert "\n" not in text
    assert re.match(r"prog\.c:\d+(:\d+)?: ", text), text
    return info.value


def acc(array, kind, coeffs=(("i", 1),), offset=0):
    return AffineAccess(array, kind, tuple(coeffs), offset)


# -- the example of the program model ---------------------------------------------------------

def test_brief_example_phases_in_order():
    p = parse_omp_c(BRIEF, "brief.c", {"N": 1000})
    kinds = [it.kind if isinstance(it, Phase) else "repeat" for it in p.items]
    assert kinds == ["sequential", "parallel", "repeat", "parallel", "single"]
    assert p.scalars == (("s", "double"),)
    assert p.arrays["x"].dims == (1000,) and p.arrays["x"].element_size == 8
    assert p.defines == {"N": 1000} and p.source == "brief.c" and p.notes == ()
    seq, dot, rep, scale, single = p.items
    assert seq.loops == (LoopBound("i", 0, 1000),)
    assert seq.accesses == (acc("x", "write"), acc("y", "write"))
    assert seq.line == 4 and seq.label == "x[i] = 1.0"
    assert dot.accesses == (acc("x", "read"), acc("y", "read"))
    assert dot.line == 5 and dot.label == "s += x[i] * y[i]"
    assert dot.code.startswith("#pragma omp parallel for reduction(+: s) schedule(static)\nfor (int i = 0; i < 1000;")
    assert rep.count == 3 and rep.var == "it" and rep.line == 8
    assert rep.code_head == "for (int it = 0; it < 3; ++it)"
    stencil, master = rep.body
    assert stencil.kind == "parallel" and stencil.loops == (LoopBound("i", 1, 999),)
    assert stencil.accesses == (acc("x", "read", offset=-1), acc("x", "read", offset=1), acc("y", "write"))
    assert master.kind == "master" and master.line == 11 and "#pragma" not in master.code
    assert scale.line == 16 and scale.code.startswith("#pragma omp parallel for\nfor")
    assert single.line == 18 and single.accesses == (acc("x", "read"),) and "#pragma" not in single.code
    assert [k for _, k in p.phases()] == [None, None, 0, 0, 1, 1, 2, 2, None, None]


def test_defaults_and_D_override():
    p = parse_omp_c(BRIEF, "brief.c")
    assert p.arrays["y"].dims == (100000,) and p.items[0].loops[0].hi == 100000
    assert "100000" in p.items[1].code and "N" not in p.items[1].code.split("\n")[1]
    p = parse_omp_c(BRIEF, "brief.c", {"N": "64"})
    assert p.items[0].loops[0].hi == 64 and p.defines["N"] == 64


# -- loops -------------------------------------------------------------------------------------

@pytest.mark.parametrize("header, bound", [
    ("for (int i = 0; i < N; ++i)", LoopBound("i", 0, 1000)),
    ("for (int i = 0; i <= N - 1; i++)", LoopBound("i", 0, 1000)),
    ("for (int i = 2; i < N; i += 3)", LoopBound("i", 2, 1000, 3)),
    ("for (int i = N - 1; i >= 0; --i)", LoopBound("i", 0, 1000)),
    ("for (int i = N - 1; i > 1; i -= 2)", LoopBound("i", 3, 1000, 2)),
    ("for (int i = 0; N > i; i = i + 1)", LoopBound("i", 0, 1000)),
])
def test_loop_headers(header, bound):
    ph = one(f"{header}\n  x[i] = 0.0;\n")
    assert ph.loops == (bound,)
    assert ph.kind == "sequential"


def test_loop_variable_declared_at_top_level_stays_a_scalar():
    p = prog("int i;\nfor (i = 0; i < N; i++)\n  x[i] = 1.0;\n")
    assert ("i", "int") in p.scalars and p.items[0].loops == (LoopBound("i", 0, 1000),)


def test_triangular_bounds_widened_with_note():
    p = parse_omp_c("#define N 100\ndouble A[N][N];\n"
                    "#pragma omp parallel for\nfor (int i = 0; i < N; ++i)\n"
                    "  for (int j = i + 1; j < N; ++j)\n    A[i][j] = A[j][i];\n", "tri.c")
    ph = p.items[0]
    assert ph.loops == (LoopBound("i", 0, 100), LoopBound("j", 1, 100))
    assert ph.notes and ph.notes[0].startswith("over-approximated: bounds of 'j' depend on 'i'")
    assert p.notes == ("line 3: " + ph.notes[0],)
    assert ph.accesses == (acc("A", "read", (("i", 1), ("j", 100))), acc("A", "write", (("i", 100), ("j", 1))))


def test_multi_dim_flattening_and_float():
    p = parse_omp_c("#define M 30\n#define N 20\nfloat a[M][N], b[M][N + 2];\n"
                    "for (int j = 1; j < M - 1; ++j)\n  for (int i = 0; i < N; ++i)\n"
                    "    a[j][i] = b[j - 1][i + 1] + b[j + 1][i];\n", "md.c")
    assert p.arrays["a"].ctype == "float" and p.arrays["a"].element_size == 4 and p.arrays["b"].dims == (30, 22)
    ph = p.items[0]
    assert ph.loops == (LoopBound("j", 1, 29), LoopBound("i", 0, 20))
    assert ph.accesses == (acc("b", "read", (("j", 22), ("i", 1)), -22 + 1), acc("b", "read", (("j", 22), ("i", 1)), 22),
                           acc("a", "write", (("j", 20), ("i", 1)), 0))
    assert ph.label == "a[j][i] = b[j - 1][i + 1] + b[j + 1][i]"


def test_flat_index_with_define_stride():
    ph = one("double A[N * 4];\nfor (int i = 0; i < N; ++i)\n  for (int k = 0; k < 4; ++k)\n    A[4 * i + k] = s;\n")
    assert ph.accesses == (acc("A", "write", (("i", 4), ("k", 1))),)


def test_compound_assignment_reads_then_writes():
    ph = one("for (int i = 0; i < N; ++i)\n  y[i] += s * x[i];\n")
    assert ph.accesses == (acc("y", "read"), acc("x", "read"), acc("y", "write"))
    ph = one("for (int i = 0; i < N; ++i)\n  x[i]++;\n")
    assert ph.accesses == (acc("x", "read"), acc("x", "write"))


def test_imperfect_nest_local_scalar_and_innermost_label():
    p = parse_omp_c("#define N 50\ndouble A[N][N], x[N], y[N];\n"
                    "#pragma omp parallel for schedule(static)\nfor (int i = 0; i < N; ++i) {\n"
                    "  double t = 0.0;\n  for (int j = 0; j < N; ++j)\n    t += A[i][j] * x[j];\n"
                    "  y[i] = t;\n}\n", "mv.c")
    ph = p.items[0]
    assert ph.kind == "parallel" and ph.loops == (LoopBound("i", 0, 50), LoopBound("j", 0, 50))
    assert ph.accesses == (acc("A", "read", (("i", 50), ("j", 1))), acc("x", "read", (("j", 1),)), acc("y", "write"))
    assert ph.label == "t += A[i][j] * x[j]"


def test_sibling_loops_share_a_variable():
    ph = one("for (int i = 0; i < N; ++i) {\n  for (int j = 0; j < 4; ++j) x[i] += s;\n"
             "  for (int j = 0; j < 8; ++j) y[i] += s;\n}\n", {"N": 10})
    assert ph.loops == (LoopBound("i", 0, 10), LoopBound("j", 0, 8))
    assert any("union" in n for n in ph.notes)


def test_index_outside_the_array_is_noted():
    ph = one("for (int i = 0; i < N; ++i)\n  x[i] = y[i + 1];\n")
    assert ph.notes == ("'y[i + 1]' reaches element 1000 of 'y' (1000 elements)",)


def test_long_label_is_shortened():
    ph = one("for (int i = 0; i < N; ++i)\n  x[i] = y[i] * s + z[i] * t + y[i] * z[i] + x[i] * x[i] + s * t;\n")
    assert len(ph.label) <= 48 and ph.label.endswith("...")


# -- phases, repeats, parallel blocks ------------------------------------------------------------

def test_time_loop_with_one_nest_is_a_sequential_phase():
    ph = one("for (int t2 = 0; t2 < 5; ++t2)\n  for (int i = 0; i < N; ++i)\n    x[i] = y[i];\n")
    assert ph.kind == "sequential" and [lb.var for lb in ph.loops] == ["t2", "i"]


def test_repeat_of_sequential_loops():
    p = prog("for (int k = 0; k < 4; ++k) {\n  for (int i = 0; i < N; ++i) x[i] = y[i];\n"
             "  for (int i = 0; i < N; ++i) y[i] = x[i];\n}\n")
    rep = p.items[0]
    assert isinstance(rep, Repeat) and rep.count == 4 and [ph.kind for ph in rep.body] == ["sequential"] * 2


def test_outer_loop_using_its_variable_in_an_index_is_one_phase():
    p = parse_omp_c("#define N 10\ndouble A[N][N];\nfor (int k = 0; k < N; ++k) {\n"
                    "  for (int i = 0; i < N; ++i) A[k][i] = 1.0;\n  for (int i = 0; i < N; ++i) A[k][i] += 1.0;\n}\n",
                    "k.c")
    ph = p.items[0]
    assert ph.kind == "sequential" and ph.loops == (LoopBound("k", 0, 10), LoopBound("i", 0, 10))
    assert len(ph.accesses) == 3


def test_repeat_bounds_may_use_the_repeat_variable():
    p = prog("for (int k = 0; k < 3; ++k) {\n  #pragma omp parallel for\n"
             "  for (int i = k; i < N; ++i) x[i] = 0.0;\n}\n")
    ph = p.items[0].body[0]
    assert ph.loops == (LoopBound("i", 0, 1000),) and ph.notes[0].startswith("over-approximated")


def test_parallel_block_for_single_master_and_clauses():
    p = prog("#pragma omp parallel default(shared) private(t)\n{\n"
             "  #pragma omp for schedule(static) nowait\n  for (int i = 0; i < N; ++i) { t = y[i]; x[i] = t; }\n"
             "  #pragma omp barrier\n"
             "  #pragma omp master\n  for (int i = 0; i < N; ++i) y[i] = 0.0;\n"
             "  #pragma omp single\n  s = 0.0;\n"
             "  #pragma omp for reduction(+:s)\n  for (int i = 0; i < N; ++i) s += x[i];\n"
             "}\n")
    a, b, c = p.items
    assert (a.kind, b.kind, c.kind) == ("parallel", "master", "parallel")
    assert a.code.split("\n")[0] == "#pragma omp parallel for default(shared) private(t) schedule(static)"
    assert a.notes == ("nowait ignored: the model keeps the barrier at the end of the loop",)
    assert a.line == 6 and b.line == 9 and c.line == 13
    assert c.code.split("\n")[:2] == ["s = 0.0;", "#pragma omp parallel for default(shared) private(t) reduction(+: s)"]


def test_parallel_then_for_pragmas_without_braces():
    ph = one("#pragma omp parallel shared(x)\n#pragma omp for\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n")
    assert ph.kind == "parallel" and ph.code.startswith("#pragma omp parallel for shared(x)\n")


def test_single_and_master_outside_a_region_and_orphaned_for():
    p = prog("#pragma omp single\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n"
             "#pragma omp master\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n"
             "#pragma omp for\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n")
    assert [ph.kind for ph in p.items] == ["single", "master", "sequential"]
    assert "orphaned" in p.items[2].notes[0]


def test_simd_is_a_no_op():
    p = prog("#pragma omp parallel for simd\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n"
             "#pragma omp simd\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n"
             "#pragma omp parallel for\nfor (int i = 0; i < 10; ++i)\n  #pragma omp simd safelen(8)\n"
             "  for (int j = 0; j < 100; ++j) x[100 * i + j] = 1.0;\n")
    assert [ph.kind for ph in p.items] == ["parallel", "sequential", "parallel"]
    assert p.items[1].code.startswith("#pragma omp simd\n")


def test_non_omp_pragma_is_ignored_with_a_note():
    p = prog("#pragma GCC ivdep\nfor (int i = 0; i < N; ++i)\n  x[i] = 1.0;\n")
    assert p.items[0].kind == "sequential"
    assert p.notes == ("line 4: '#pragma GCC ivdep' ignored (not OpenMP)",)


def test_pragma_continuation_lines():
    ph = one("#pragma omp parallel for \\\n    reduction(+:s)\nfor (int i = 0; i < N; ++i)\n  s += x[i];\n")
    assert ph.kind == "parallel" and "reduction(+: s)" in ph.code and ph.line == 4


# -- scalar statements -----------------------------------------------------------------------

def test_scalar_statements_go_to_the_next_phase_in_program_order():
    p = prog("s = 0.0;\nt = s + 2.0 * sqrt(s);\n#pragma omp parallel for reduction(+:s)\n"
             "for (int i = 0; i < N; ++i) s += x[i];\n"
             "for (int k = 0; k < 2; ++k) {\n  t = s;\n  #pragma omp parallel for\n"
             "  for (int i = 0; i < N; ++i) x[i] = t * y[i];\n  s = t;\n}\n"
             "s++;\n")
    first, rep = p.items
    assert first.code.split("\n")[:3] == ["s = 0.0;", "t = s + 2.0 * sqrt(s);",
                                          "#pragma omp parallel for reduction(+: s)"]
    assert rep.code_head == "for (int k = 0; k < 2; ++k)"
    assert rep.body[0].code.startswith("t = s;\n#pragma omp parallel for") and rep.body[0].code.endswith("\ns = t;")
    assert p.notes == ("statements after the last loop are not part of any phase: s++;",)


def test_statements_before_a_repeat_and_at_the_end():
    p = prog("double u = 1.0;\nfor (int k = 0; k < 2; ++k) {\n  for (int i = 0; i < N; ++i) x[i] = u;\n"
             "  for (int i = 0; i < N; ++i) y[i] = x[i];\n}\n"
             "for (int i = 0; i < N; ++i) x[i] = 0.0;\nu = 2.0;\n")
    rep, last = p.items
    assert ("u", "double") in p.scalars
    assert rep.code_head == "u = 1.0;\nfor (int k = 0; k < 2; ++k)"
    assert last.code.endswith("\nu = 2.0;") and p.notes == ()


# -- accepted and rejected clauses ---------------------------------------------------------------

@pytest.mark.parametrize("clauses", [
    "schedule(static)", "schedule( static )", "reduction(+:s)", "reduction(max:s,t)", "private(t)",
    "firstprivate(t)", "lastprivate(t)", "shared(x, y)", "default(none) shared(x, y)", "nowait",
])
def test_accepted_clauses(clauses):
    ph = one(f"#pragma omp parallel for {clauses}\nfor (int i = 0; i < N; ++i)\n  x[i] = y[i];\n")
    assert ph.kind == "parallel"


@pytest.mark.parametrize("pragma, word", [
    ("parallel for schedule(dynamic)", "schedule(dynamic)"),
    ("parallel for schedule(guided, 4)", "schedule(guided, 4)"),
    ("parallel for schedule(runtime)", "schedule(runtime)"),
    ("parallel for schedule(auto)", "schedule(auto)"),
    ("parallel for schedule(static, 16)", "schedule(static, 16)"),
    ("parallel for num_threads(4)", "num_threads(4)"),
    ("parallel for collapse(2)", "collapse(2)"),
    ("parallel for if(N > 100)", "if(N > 100)"),
    ("parallel for ordered", "ordered"),
    ("parallel for reduction(+:nosuch)", "nosuch"),
    ("task", "task"), ("taskloop", "taskloop"), ("sections", "sections"),
    ("target teams distribute parallel for", "target teams distribute parallel for"),
    ("parallel for linear(i:1)", "linear"),
])
def test_rejected_clauses_and_directives(pragma, word):
    e = error(f"#pragma omp {pragma}\nfor (int i = 0; i < N; ++i)\n  x[i] = y[i];\n")
    assert e.line == 4 and word in str(e)


@pytest.mark.parametrize("inner", ["critical", "atomic", "barrier", "ordered"])
def test_synchronisation_inside_loops_rejected(inner):
    e = error(f"#pragma omp parallel for\nfor (int i = 0; i < N; ++i) {{\n  #pragma omp {inner}\n  s += x[i];\n}}\n")
    assert e.line == 6 and inner in str(e)


# -- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("body, line, words", [
    ("double idx[N];\nfor (int i = 0; i < N; ++i)\n  x[idx[i]] = 1.0;\n", 6, "indirect index"),
    ("for (int i = 0; i < N; ++i)\n  x[i * i] = 1.0;\n", 5, "not affine"),
    ("for (int i = 0; i < N; ++i)\n  for (int j = 0; j < 10; ++j)\n    x[i * j] = 1.0;\n", 6, "not affine"),
    ("for (int i = 0; i < N; ++i)\n  w[i] = 1.0;\n", 5, "undefined array 'w'"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = w;\n", 5, "undefined identifier 'w'"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = y;\n", 5, "used without index"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = s[i];\n", 5, "scalar"),
    ("for (int i = 0; i < N; ++i)\n  x[(int) s] = 1.0;\n", 5, "index"),
    ("for (int i = 0; i < N; ++i) {\n  double u = 1.0;\n  x[i + (int) u] = 1.0;\n}\n", 6, "index"),
    ("void f(void) {\n  s = 1.0;\n}\n", 4, "function definitions"),
    ("for (int i = 0; i < N; ++i) x[i] = 1.0;\nstatic double *f(int n)\n{\n  return 0;\n}\n", 5,
     "function definitions"),
    ("for (int i = 0; i < N; ++i) x[i] = 1.0;\nint main(void) {\n  return 0;\n}\n", 5, "'main'"),
    ("int k = 0;\nwhile (k < N) k++;\n", 5, "'while' loops"),
    ("x[0] = 1.0;\n", 4, "array access outside any loop"),
    ("s = x[0];\n", 4, "array access outside any loop"),
    ("printf(s);\n", 4, "printf"),
    ("for (int i = 0; i < N; ++i)\n  if (x[i] > 0) y[i] = 1.0;\n", 5, "'if'"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = s > 0 ? 1.0 : 2.0;\n", 5, "conditional expressions"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = foo(y[i]);\n", 5, "foo"),
    ("for (int i = 0; i < N; ++i)\n  for (int i = 0; i < N; ++i) x[i] = 1.0;\n", 5, "reused"),
    ("for (int i = 0; i < N; ++i)\n  i = 2;\n", 5, "loop variable 'i'"),
    ("for (int i = 0; i < N; i *= 2)\n  x[i] = 1.0;\n", 4, "constant increment"),
    ("for (int i = 0; i == N; ++i)\n  x[i] = 1.0;\n", 4, "<, <=, > or >="),
    ("for (int i = 0; i < N; ++i)\n  for (int j = 0; j < M; ++j) x[i] = 1.0;\n", 5, "M has no value: give -D M=..."),
    ("double w[M];\n", 4, "M has no value"),
    ("double x[5];\n", 4, "declared twice"),
    ("#pragma omp parallel for\ns = 1.0;\n", 5, "followed by a for loop"),
    ("for (int i = 0; i < N; ++i) x[i] = 1.0;\n#pragma omp parallel for\n", 5, "not followed by a loop"),
    ("#pragma omp parallel\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n", 5, "every thread"),
    ("#pragma omp parallel\n{\n  for (int i = 0; i < N; ++i) x[i] = 1.0;\n}\n", 6, "every thread"),
    ("#pragma omp parallel\n{\n  double u;\n}\n", 6, "declarations inside 'omp parallel'"),
    ("#pragma omp parallel\n{\n  s = 1.0;\n}\n", 6, "inside 'omp parallel'"),
    ("for (int k = 0; k < 2; ++k) {\n  for (int j = 0; j < 2; ++j) {\n"
     "    for (int i = 0; i < N; ++i) x[i] = 1.0;\n    for (int i = 0; i < N; ++i) y[i] = 1.0;\n  }\n"
     "  for (int i = 0; i < N; ++i) y[i] = 1.0;\n}\n", 5, "repeat loop inside the repeat loop"),
    ("for (int k = 0; k < 10; ++k) {\n  #pragma omp parallel for\n  for (int i = 0; i < N; ++i) x[i + k] = 1.0;\n}\n",
     4, "uses its variable 'k' in array indices"),
    ("#pragma omp critical\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n", 4, "critical"),
    ("#pragma omp parallel for\nfor (int i = 0; i < N; ++i)\n  #pragma omp parallel for\n"
     "  for (int j = 0; j < 2; ++j) x[i] = 1.0;\n", 6, "inside a loop"),
    ("#pragma omp parallel for private(q)\nfor (int i = 0; i < N; ++i) x[i] = 1.0;\n", 4, "'q'"),
    ("for (int i = 0; i < N; ++i)\n  x[i] = 1.0 +\n", 5, "syntax error"),
])
def test_errors_name_file_and_line(body, line, words):
    e = error(body)
    assert e.line == line, str(e)
    assert words in str(e)


def test_no_loop_and_empty_file():
    with pytest.raises(KernelError, match="no for-loop"):
        parse_omp_c(HEAD + "s = 1.0;\n", "prog.c")
    with pytest.raises(KernelError, match="empty"):
        parse_omp_c("// nothing\n", "prog.c")


@pytest.mark.parametrize("value", ["abc", -1, True, 1.5, "1e3"])
def test_bad_D_value(value):
    with pytest.raises(KernelError, match=r"bad -D value N="):
        parse_omp_c(BRIEF, "brief.c", {"N": value})


def test_unknown_preprocessor_directive():
    e = error("#ifdef X\n#endif\n")
    assert "#ifdef" in str(e)


def test_read_omp_program_dispatch_and_unreadable(tmp_path):
    c = tmp_path / "p.c"
    c.write_text(BRIEF)
    assert len(read_omp_program(c, {"N": 10}).items) == 5
    with pytest.raises(KernelError, match="cannot read"):
        read_omp_program(tmp_path / "missing.c")
    y = tmp_path / "p.yaml"
    y.write_text((EXAMPLES / "dot_mkl.yml").read_text())
    assert read_omp_program(y, {"N": 10}).arrays["x"].dims == (10,)


# -- YAML ---------------------------------------------------------------------------------------

def test_yaml_example():
    p = read_omp_program(EXAMPLES / "dot_mkl.yml", {"N": 5000})
    init, rep = p.items
    assert p.arrays["x"].dims == (5000,) and p.arrays["y"].dims == (5000,) and p.scalars == (("s", "double"),)
    assert init.kind == "sequential" and init.label == "init (thread 0)" and init.code == ""
    assert init.loops == (LoopBound("i", 0, 5000),) and init.accesses == (acc("x", "write"), acc("y", "write"))
    assert init.line == 9
    assert isinstance(rep, Repeat) and rep.count == 3 and rep.var == "rep" and rep.line == 15
    assert rep.body[0].kind == "parallel" and rep.body[0].accesses == (acc("x", "read"), acc("y", "read"))
    assert read_omp_program(EXAMPLES / "dot_mkl.yml").arrays["x"].dims == (1000000,)


YAML_MD = """\
arrays:
  A: {dims: [M, N], type: float}
defines: {M: 8, N: 16}
phases:
  - name: sweep
    kind: single
    loops: [{var: j, lo: 1, hi: M - 1}, {var: i, lo: 0, hi: N, step: 2}]
    accesses:
      - {array: A, kind: read, index: [j - 1, i]}
      - {array: A, kind: write, index: "N*j + i + 1"}
  - name: tri
    kind: parallel
    loops: [{var: i, lo: 0, hi: M}, {var: k, lo: i, hi: M}]
    accesses: [{array: A, kind: read, index: "k"}]
"""


def test_yaml_multi_dim_index_list_and_triangular():
    p = parse_omp_yaml(YAML_MD, "md.yml")
    sweep, tri = p.items
    assert p.arrays["A"].element_size == 4
    assert sweep.kind == "single" and sweep.loops == (LoopBound("j", 1, 7), LoopBound("i", 0, 16, 2))
    assert sweep.accesses == (acc("A", "read", (("j", 16), ("i", 1)), -16), acc("A", "write", (("j", 16), ("i", 1)), 1))
    assert tri.loops[1] == LoopBound("k", 0, 8) and tri.notes[0].startswith("over-approximated")
    assert p.notes[0].startswith("line 11: over-approximated")


@pytest.mark.parametrize("old, new, line, words", [
    ("defines: {M: 8, N: 16}", "defines: {M: 8, N: 16}\ncolour: red", 4, "unknown key 'colour'"),
    ("    kind: single", "    kind: single\n    colour: red", 7, "phases[0].colour: unknown key 'colour'"),
    ("{var: j, lo: 1, hi: M - 1}", "{var: j, lo: 1, hi: M - 1, by: 2}", 7, "phases[0].loops[0].by: unknown key"),
    ("{array: A, kind: read, index: [j - 1, i]}", "{array: A, kind: read, index: [j - 1, i], x: 1}", 9,
     "unknown key 'x'"),
    ('index: "N*j + i + 1"', 'index: "i * j"', 10, "phase 'sweep'"),
    ('index: "N*j + i + 1"', 'index: "i * j"', 10, "phases[0].accesses[1].index"),
    ('index: "N*j + i + 1"', 'index: "i +"', 10, "cannot read"),
    ('index: "N*j + i + 1"', 'index: "i + Q"', 10, "Q has no value: give -D Q=..."),
    ("{array: A, kind: read, index: [j - 1, i]}", "{array: B, kind: read, index: [j - 1, i]}", 9,
     "unknown array 'B'"),
    ("{array: A, kind: read, index: [j - 1, i]}", "{array: A, kind: read, index: [j]}", 9, "2 dimension(s)"),
    ("{array: A, kind: read, index: [j - 1, i]}", "{array: A, kind: update, index: [j]}", 9, "read or write"),
    ("    kind: single", "    kind: dynamic", 6, "kind must be one of"),
    ("{var: i, lo: 0, hi: N, step: 2}", "{var: i, lo: 0, hi: N, step: -2}", 7, "positive constant"),
    ("{var: i, lo: 0, hi: N, step: 2}", "{var: j, lo: 0, hi: N}", 7, "already in use"),
    ("    loops: [{var: j", "    lops: [{var: j", 7, "unknown key 'lops'"),
    ("  A: {dims: [M, N], type: float}", "  A: {dims: [M, N], type: int}", 2, "double or float"),
    ("  A: {dims: [M, N], type: float}", "  A: {dims: [M, N], length: 3}", 2, "exactly one"),
])
def test_yaml_errors_name_file_line_and_key(old, new, line, words):
    assert old in YAML_MD
    with pytest.raises(KernelError) as info:
        parse_omp_yaml(YAML_MD.replace(old, new, 1), "md.yml")
    text = str(info.value)
    assert text.startswith(f"md.yml:{line}: "), text
    assert words in text and "\n" not in text


def test_yaml_repeat_inside_repeat_and_not_yaml():
    text = ("arrays: {x: {length: 4}}\nphases:\n  - repeat: 2\n    phases:\n      - repeat: 2\n        phases: []\n")
    with pytest.raises(KernelError, match=r"r\.yml:5: phases\[0\]\.phases\[0\]: a repeat inside a repeat"):
        parse_omp_yaml(text, "r.yml")
    with pytest.raises(KernelError, match=r"r\.yml:\d+:\d+: not valid YAML"):
        parse_omp_yaml("arrays: [\n", "r.yml")
    with pytest.raises(KernelError, match="missing key 'phases'"):
        parse_omp_yaml("arrays: {x: {length: 4}}\n", "r.yml")
    with pytest.raises(KernelError, match=r"bad -D value"):
        parse_omp_yaml(YAML_MD, "md.yml", {"N": "x"})
    assert parse_omp_yaml(YAML_MD, "md.yml", {"N": 32}).arrays["A"].dims == (8, 32)


# -- examples and the harness ----------------------------------------------------------------------

def harness(program: OmpProgram) -> str:
    """A C program that allocates the arrays (zeroed), declares the scalars and runs every
    phase's ``code`` in program order; prints the scalars."""
    lines = ["#include <math.h>", "#include <stdio.h>", "#include <stdlib.h>"]
    for a in program.arrays.values():
        lines.append(f"static {a.ctype} (*{a.name}){''.join(f'[{d}]' for d in a.dims[1:])};")
    lines += [f"static {t} {n};" for n, t in program.scalars]
    lines.append("int main(void) {")
    lines += [f"  {a.name} = calloc({a.length}, sizeof({a.ctype}));" for a in program.arrays.values()]
    for item in program.items:
        if isinstance(item, Repeat):
            lines += [item.code_head, "{"] + [ph.code for ph in item.body] + ["}"]
        else:
            lines.append(item.code)
    lines += [f'  printf("{n}=%.6g\\n", (double) {n});' for n, _ in program.scalars]
    lines += ["  return 0;", "}"]
    return "\n".join(lines) + "\n"


def _build_and_run(program: OmpProgram, tmp_path, name: str) -> dict:
    from loopmodel.toolchain import compile_c

    exe = compile_c(harness(program), "gcc", ["-fopenmp", "-O1", "-Wall", "-Werror=implicit-function-declaration"],
                    output="executable", name=name, directory=str(tmp_path), libraries=("-lm",))
    env = dict(os.environ, OMP_NUM_THREADS="2")
    out = subprocess.run([exe], capture_output=True, text=True, timeout=20, env=env, check=True).stdout
    return {k: float(v) for k, v in (line.split("=") for line in out.split())}


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
def test_phase_code_compiles_and_runs_in_a_harness(tmp_path):
    p = parse_omp_c(BRIEF, "brief.c", {"N": 1000})
    out = _build_and_run(p, tmp_path, "brief")
    # s = x.y (2000) + the single sum of x = 2 y after the repeat (y = 1 but near the ends)
    assert out["s"] == 4007.0
    q = prog("#pragma omp parallel private(t)\n{\n  #pragma omp for nowait\n  for (int i = 0; i < N; ++i) "
             "{ t = 2.0; x[i] = t; }\n  #pragma omp single\n  s = 1.0;\n"
             "  #pragma omp for reduction(+:s)\n  for (int i = 0; i < N; ++i) s += x[i];\n}\n")
    assert _build_and_run(q, tmp_path, "block")["s"] == 2001.0
    sink = parse_omp_c(KITCHEN_SINK, "sink.c")
    assert {ph.kind for ph, _ in sink.phases()} == {"parallel", "sequential", "master", "single"}
    assert _build_and_run(sink, tmp_path, "sink")["s"] == 16 * 8 * 3.0


KITCHEN_SINK = """\
#include <math.h>
#define M 16
#define N 8
float a[M][N], b[M][N + 2];
double v[M * N], s, t = 1.5;
int i;
for (i = 0; i < M; i++)
    for (int j = 0; j < N + 2; ++j) b[i][j] = 1.0f;
#pragma omp parallel for schedule(static) private(t)
for (int r = M - 1; r >= 0; --r) {
    t = 2.0;
    #pragma omp simd
    for (int j = 0; j < N; ++j) a[r][j] = t * b[r][j + 1] + sqrtf(b[r][j]);
}
#pragma omp parallel
{
    #pragma omp master
    for (int k = 0; k < M * N; k += 2) v[k] = 0.0;
    #pragma omp barrier
    #pragma omp single nowait
    for (int k = 1; k < M * N; k += 2) v[k] = 0.0;
    #pragma omp for reduction(+:s) nowait
    for (int p = 0; p < M; ++p)
        for (int j = 0; j <= N - 1; ++j) { double u = a[p][j]; s += u; }
}
"""


@pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc not installed")
@pytest.mark.parametrize("example", ["dot_thread0.c", "dot_firsttouch.c", "cg_banded.c"])
def test_examples_parse_compile_and_run(example, tmp_path):
    p = read_omp_program(EXAMPLES / example)
    assert p.notes == ()
    out = _build_and_run(p, tmp_path, example[:-2])
    if example.startswith("dot"):
        assert out["s"] == 2.0 * 1000000
    else:
        rep = p.items[-1]
        assert isinstance(rep, Repeat) and rep.count == 3 and len(rep.body) == 5
        assert all(ph.kind == "parallel" for ph in p.items[:3]) and p.arrays["p"].dims == (200002,)
        assert out["rho"] < 1e-3 * 200000  # the residual falls (r.r starts at N)


def test_examples_have_a_header_comment():
    for f in EXAMPLES.iterdir():
        first = f.read_text().lstrip()
        assert first.startswith("/*" if f.suffix == ".c" else "#"), f


def test_descending_worksharing_loop_is_noted():
    ph = one("#pragma omp parallel for\nfor (int i = N - 1; i >= 0; --i)\n  x[i] = 0.0;\n")
    assert ph.loops == (LoopBound("i", 0, 1000),) and "descending" in ph.notes[0]


@pytest.mark.parametrize("pragma, words", [
    ("parallel for 123", "cannot read the clauses '123'"),
    ("", "without a directive"),
    ("parallel for reduction(+:s", "unbalanced parentheses"),
    ("parallel for untied", "untied"),
    ("ordered", "ordered"),
])
def test_malformed_pragmas(pragma, words):
    e = error(f"#pragma omp {pragma}\nfor (int i = 0; i < N; ++i)\n  x[i] = y[i];\n")
    assert e.line == 4 and words in str(e)


def test_call_argument_count_and_masked():
    assert error("for (int i = 0; i < N; ++i)\n  x[i] = sqrt(y[i], 2.0);\n").line == 5
    assert one("#pragma omp masked\nfor (int i = 0; i < N; ++i)\n  x[i] = fmax(y[i], 0.0);\n").kind == "master"


def test_yaml_repeat_variable_in_bounds_but_not_in_indices():
    text = ("arrays: {x: {length: 8}}\nphases:\n  - repeat: 2\n    phases:\n      - kind: parallel\n"
            "        loops: [{var: j, lo: iter, hi: 8}]\n        accesses: [{array: x, kind: read, index: J}]\n")
    p = parse_omp_yaml(text.replace("index: J", "index: j"), "r.yml")
    assert p.items[0].body[0].loops == (LoopBound("j", 0, 8),) and "over-approximated" in p.notes[0]
    with pytest.raises(KernelError, match=r"r\.yml:7: .*repeat variable 'iter' cannot index"):
        parse_omp_yaml(text.replace("index: J", "index: iter + j"), "r.yml")
