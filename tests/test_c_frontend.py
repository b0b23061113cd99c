"""The C front-end's forms (loopmodel.fileio.c_kernel, c_function, c_source): kernels written as
C functions (pointer, array and variable-length array parameters, the extents of arrays without
a size), integer element types and index types, const sizes, pragmas kept or ignored, GNU
spellings; every refusal one line naming file:line and what is accepted; the text the compilers
see (the kernel function written as a Kerncraft kernel file); the multi-kernel -D rules; and the
page docs/c-frontend.md. Properties: a kernel wrapped in a function is the same kernel, with the
same analysis, as its bare loop nest; a pointer's extent is the largest element its accesses
reach; the element size flows into the bytes every level moves."""
from __future__ import annotations

import dataclasses
import importlib.util
import json
import re
import shutil
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import ROOT, SKX, run_cli
from kernel_strategies import PROPERTY_SETTINGS, kernels, load
from loopmodel.compiled.codegen import generate_c
from loopmodel.errors import DefineError, KernelError, ToolError
from loopmodel.fileio.c_function import c_expr
from loopmodel.fileio.c_kernel import parse_c
from loopmodel.ir.extent import index_range, sign
from loopmodel.ir.poly import Poly
from loopmodel.report.json_report import to_dict
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.bench import ignored_defines, kernel_points
from loopmodel.workflows.study import StudyError, read_study

HAVE_GCC = shutil.which("gcc") is not None
n, m, N, M = (Poly.symbol(s) for s in ("n", "m", "N", "M"))

COPY = "void copy(double *restrict a, const double *restrict b, int n) {\n  for (int i = 0; i < n; ++i)\n" \
       "    a[i] = b[i];\n}\n"
BARE_COPY = "double a[n], b[n];\nfor (int i = 0; i < n; ++i)\n    a[i] = b[i];\n"


def c(text: str):
    """The :class:`~loopmodel.fileio.c_kernel.CKernel` of ``text`` read as ``kernel.c``."""
    return parse_c(text, "kernel.c")


def refusal(text: str) -> KernelError:
    with pytest.raises(KernelError) as info:
        c(text)
    return info.value


def shape(kernel) -> dict:
    """The kernel IR without positions, file name and printed C: what the models read (of an array,
    not whether it may overlap another: that is the generated program's, test_codegen.py)."""
    out = {}
    for f in dataclasses.fields(kernel):
        value = getattr(kernel, f.name)
        if f.name == "arrays":
            value = {n: (a.ctype, a.element_size, a.dims) for n, a in value.items()}
        elif f.name in ("reads", "writes"):
            value = tuple((a.array, a.indices, a.offset) for a in value)
        elif f.name == "loops":
            value = tuple((lp.index, lp.start, lp.stop, lp.step) for lp in value)
        elif f.name in ("source", "code", "parameters"):  # parameters: the function's signature, not the model
            continue
        out[f.name] = value
    return out


# ---------------------------------------------------------------- kernel functions


def test_pointer_parameters_are_arrays_of_the_extent_the_loop_reaches():
    parsed = c(COPY)
    k = parsed.kernel
    assert {a.name: (a.ctype, a.element_size, a.dims) for a in k.arrays.values()} == {
        "a": ("double", 8, (n,)), "b": ("double", 8, (n,))}
    assert k.constants == {"n"} and k.scalars == {} and parsed.defaults == {}
    assert parsed.notes == ("'a' (line 1, pointer parameter): n elements, as far as the loop nest reaches",
                            "'b' (line 1, pointer parameter): n elements, as far as the loop nest reaches")
    assert shape(k) == shape(c(BARE_COPY).kernel)


def test_a_pointer_indexed_in_two_dimensions_reaches_the_rows_its_loops_touch():
    k = c("void k(double *a, const double *b, int n, int m) {\n  for (int j = 1; j < n - 1; ++j)\n"
          "    for (int i = 0; i < m; ++i)\n      a[j*m + i] = b[(j-1)*m + i] + b[(j+1)*m + i];\n}\n").kernel
    assert k.arrays["a"].dims == (n * m - m,)  # rows 1 .. n-2 written: (n-2)*m + m elements from 0
    assert k.arrays["b"].dims == (n * m,)
    assert {str(a.offset) for a in k.reads} == {"j*m + i - m", "j*m + i + m"}


@pytest.mark.parametrize("params", [
    "double a[N][M], const double b[N][M]",                      # fixed sizes, given with -D
    "int N, int M, double a[N][M], const double b[N][M]",        # variable-length arrays
    "double a[][M], const double (*restrict b)[M], int N",       # first dimension left out
])
def test_array_parameters_keep_their_dimensions(params):
    parsed = c(f"void k({params}) {{\n  for (int j = 0; j < N; ++j)\n    for (int i = 0; i < M; ++i)\n"
               "      a[j][i] = 2.0 * b[j][i];\n}\n")
    assert {a.name: a.dims for a in parsed.kernel.arrays.values()} == {"a": (N, M), "b": (N, M)}
    assert parsed.kernel.constants == {"M", "N"}
    assert ("[]" in params) == any("its first dimension" in note for note in parsed.notes)


def test_scalar_and_size_parameters():
    parsed = c("void k(double *a, double alpha, float beta, int n, long unused) {\n"
               "  for (int i = 0; i < n; ++i)\n    a[i] = alpha * a[i] + beta * n;\n}\n")
    k = parsed.kernel
    assert {s.name: (s.ctype, s.element_size) for s in k.scalars.values()} == {"alpha": ("double", 8),
                                                                               "beta": ("float", 4)}
    assert k.constants == {"n"}  # an integer parameter the kernel does not use needs no -D
    assert k.operations == {"ADD": 1, "MUL": 2}


def test_a_reduction_returned_main_and_helpers_left_out():
    parsed = c("#include <math.h>\ndouble sq(double x);\nstatic double twice(double x) { return 2.0 * x; }\n"
               "double dot(const double *a, const double *b, long n) {\n  double s = 0.0;\n"
               "  for (long i = 0; i < n; ++i)\n    s += a[i] * b[i];\n  return s;\n}\n"
               "int main(void) {\n  double x[10];\n  for (int i = 0; i < 10; ++i)\n    x[i] = 0.0;\n  return 0;\n}\n")
    k = parsed.kernel
    assert set(k.arrays) == {"a", "b"} and set(k.scalars) == {"s"} and k.recurrences[0].variable == "s"
    assert parsed.notes[:2] == ("function 'twice' (line 3) is not the kernel: left out",
                                "function 'main' (line 10) is not the kernel: left out (main is left out when "
                                "another function has a loop)")


def test_global_arrays_used_by_a_function():
    k = c("double a[N], b[N];\nvoid k(void) {\n  for (int i = 0; i < N; ++i)\n    a[i] = b[i];\n}\n").kernel
    assert shape(k) == shape(c("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\n").kernel)


REFUSED = [
    # (text, line, what the message says)
    ("void init(double *a, int n) { for (int i = 0; i < n; ++i) a[i] = 0.0; }\n"
     "void copy(double *a, double *b, int n) { for (int i = 0; i < n; ++i) a[i] = b[i]; }\n", 2,
     "several functions with loops: 'init' (line 1), 'copy' (line 2); name the kernel with --function NAME"),
    ("double twice(double x) {\n  return 2.0 * x;\n}\n", 1, "function 'twice' has no for-loop"),
    ("void k(double **a, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i][0] = 0.0;\n}\n", 1,
     "pointer to pointer not supported (pass a contiguous array"),
    ("void k(double *a, const double *b, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i] = b[i-1];\n}\n", 3,
     "'b[i - 1]' reaches element -1, before the first element of 'b'"),
    ("void k(double *a, const double *b, int n, int m) {\n  for (int i = 0; i < n; ++i)\n"
     "    a[i] = b[i + n - m];\n}\n", 3, "cannot tell whether 'b[i - m + n]' stays at or after element 0"),
    ("void k(double *a, int n) {\n  return;\n  for (int i = 0; i < n; ++i)\n    a[i] = 0.0;\n}\n", 2,
     "'return' (only as the last statement of a kernel function) not supported in kernels (accepted:"),
    ("void k(double *a, int) {\n  for (int i = 0; i < 9; ++i)\n    a[i] = 0.0;\n}\n", 1,
     "every parameter of the kernel function needs a type and a name"),
    ("void k(double *a, ...) {\n  for (int i = 0; i < 9; ++i)\n    a[i] = 0.0;\n}\n", 1, "variadic"),
    ("double *a;\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n", 1,
     "pointer 'a' not supported here (declare an array, double a[N]; a pointer is accepted as a parameter"),
    ("long double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n", 1, "has type 'long double'"),
    ("int n = 100;\ndouble a[n];\nfor (int i = 0; i < n; ++i)\n  a[i] = 0.0;\n", 2,
     "variable 'n' in array dimension; only size constants and loop indices are allowed (a size: #define n 1000, "
     "const int n = 1000, an integer parameter"),
    ("double a[N];\nfor (int i = 0; i != N; i += 2)\n  a[i] = 0.0;\n", 2, "'!=' with a step of 2: the loop may never end"),
    ("double a[N];\nfor (int i = 0; i < N; ++i)\n  if (a[i] < 0.0) a[i] = 0.0;\n", 3,
     "an 'if' on data (array elements or scalars) is not supported: only conditions on loop indices and sizes"),
    ("void k(double *a, const int *idx, int n) {\n  for (int i = 0; i < n; ++i)\n    a[idx[i]] = 1.0;\n}\n", 3,
     "indirect indexing (an array reference in index of 'a') not supported (accepted: expressions affine"),
    ("void k(double *a, double *b, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i] = b[i+1];\n"
     "  swap(a, b);\n}\n", None, "swap(a, b): the arrays reach n and n + 1 elements"),
]


@pytest.mark.parametrize("text,line,message", REFUSED, ids=[f"refused{i}" for i in range(len(REFUSED))])
def test_refusals_name_the_line_and_what_is_accepted(text, line, message):
    err = refusal(text)
    assert message in err.message and err.line == line, str(err)
    assert str(err).startswith(f"kernel.c:{line}:" if line else "kernel.c:") and "\n" not in str(err)


def test_swapped_pointer_parameters_of_one_size():
    k = c("void k(double *a, double *b, int n) {\n  for (int i = 1; i < n; ++i)\n    a[i] = b[i] + b[i-1];\n"
          "  swap(a, b);\n}\n")
    assert k.kernel.swaps == (("a", "b"),) and k.kernel.arrays["a"].dims == k.kernel.arrays["b"].dims == (n,)


# ---------------------------------------------------------------- types, sizes, pragmas


@pytest.mark.parametrize("index", ["int", "long", "unsigned", "unsigned long", "long long", "size_t", "ptrdiff_t",
                                   "const int", "int64_t", "uint32_t"])
def test_index_types(index):
    text = f"double a[N], b[N];\nfor ({index} i = 0; i < N; ++i)\n  a[i] = b[i];\n"
    assert shape(c(text).kernel) == shape(c(text.replace(index, "int", 1)).kernel)
    if "const" not in index:  # declared before the loop, assigned in it
        outside = f"double a[N], b[N];\n{index} i;\nfor (i = 0; i < N; ++i)\n  a[i] = b[i];\n"
        assert shape(c(outside).kernel) == shape(c(text).kernel)


@pytest.mark.parametrize("ctype,size", [("double", 8), ("float", 4), ("int", 4), ("long", 8), ("unsigned", 4),
                                        ("unsigned long", 8), ("long long", 8), ("unsigned long long", 8),
                                        ("short", 2), ("size_t", 8), ("int32_t", 4), ("int64_t", 8)])
def test_element_size_from_the_type(ctype, size):
    parsed = c(f"{ctype} a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] + b[i];\n")
    k = parsed.kernel
    assert k.arrays["a"].element_size == size and k.arrays["b"].ctype == {"unsigned": "unsigned int"}.get(ctype, ctype)
    assert k.bytes_loaded_per_iteration() == size and k.bytes_stored_per_iteration() == size
    assert k.iterations_per_cacheline(64) == 64 // size
    assert any(note.startswith("integer arrays (a, b)") for note in parsed.notes) == (ctype not in ("double", "float"))


def test_const_integer_sizes_and_their_defaults():
    parsed = c("const int N = 1000;\nconst long N2 = N + 2;\nconst double h = 0.5;\ndouble a[N2], b[N2];\n"
               "for (long i = 1; i < N2 - 1; ++i)\n  a[i] = h * (b[i-1] + b[i+1]);\n")
    k = parsed.kernel
    assert parsed.defaults == {"N": 1000} and k.constants == {"N"} and set(k.scalars) == {"h"}
    assert k.arrays["a"].dims == (N + 2,) and k.loops[0].stop == N + 1


def test_casts_not_equal_and_descending_loops():
    k = c("void k(double *a, const double *b, long n) {\n  for (int i = (int)n - 1; i != -1; --i)\n"
          "    a[i] = b[i];\n}\n").kernel
    loop = k.loops[0]
    assert (loop.start, loop.stop, loop.step) == (n - 1, Poly.const(-1), -1) and k.arrays["a"].dims == (n,)
    up = c("double a[N];\nfor (int i = 0; i != (long)N; i++)\n  a[i] = 1.0;\n").kernel.loops[0]
    assert (up.start, up.stop, up.step) == (Poly.const(0), N, 1)


def test_pragmas_kept_and_ignored_and_out_of_the_compiled_text():
    text = ("#pragma once\ndouble a[N], b[N];\n#pragma GCC optimize(\"O3\")\n#pragma omp parallel for\n"
            "for (int i = 0; i < N; ++i)\n  a[i] = b[i];\n")
    parsed = c(text)
    assert parsed.kernel.pragmas == ("omp parallel for",)
    assert parsed.notes == ("line 1: '#pragma once' ignored (only OpenMP and loop-hint pragmas are kept)",
                            "line 3: '#pragma GCC optimize(\"O3\")' ignored (only OpenMP and loop-hint pragmas "
                            "are kept)")
    assert parsed.kernel.code.split("\n")[0] == "#pragma omp parallel for"
    assert "once" not in parsed.kernel.code and "optimize" not in parsed.kernel.code
    from loopmodel.compiled.codegen import generate_c
    program = generate_c(parsed.kernel, {"N": 10})
    assert "#pragma once" not in program and "optimize" not in program


def test_gnu_spellings_keep_every_column():
    text = "void k(double *__restrict__ a, int n) {\n  for (int i = 0; i < n; ++i) a[i] = g(a[i]);\n}\n"
    err = refusal(text)
    assert (err.line, err.col) == (2, text.split("\n")[1].index("g(") + 1)
    assert "call to 'g' not supported" in err.message


# ---------------------------------------------------------------- what the compiler sees

FUNCTION_FORMS = [
    COPY,
    "#include <stddef.h>\n/* dot */\nstatic inline double dot(const double *restrict a, const double *restrict b,\n"
    "                         size_t n)\n{\n    double s = 0.0;\n    #pragma omp simd reduction(+:s)\n"
    "    for (size_t i = 0; i < n; ++i)\n        s += a[i] * b[i];\n    return s;\n}\n",
    "#define M 64\nvoid k(double a[][M], double (*restrict b)[M], int n) { for (int j = 0; j < n; ++j)\n"
    "  for (int i = 0; i < M; ++i) a[j][i] = b[j][i] * 2.0; }\n",
    "void t(int n, float *a, const int *b, const long *c, float s) {\n  for (int i = 0; i < n; i++)\n"
    "    a[i] = b[i] + s * c[i];\n}\nint main(void) { return 0; }\n",
    "double g[N];\nvoid k(int m, double x[m][N]) {\n  const int h = 1;\n  for (int j = h; j < m - h; ++j)\n"
    "    for (int i = 0; i < N; ++i)\n      x[j][i] = x[j-1][i] + g[i];\n}\n",
    "void k(double *a, int i, int n) {\n  for (i = 0; i < n; ++i)  /* a parameter as the counter */\n"
    "    a[i] = 1.0;\n}\n",
]
#: what the compile-and-run test builds: function forms, and an index declared before its loop
COMPILED_FORMS = FUNCTION_FORMS[:4] + FUNCTION_FORMS[5:] + ["double a[n];\nlong i;\nfor (i = 0; i < n; ++i)\n"
                                                            "  a[i] = 1.0;\n"]


@pytest.mark.parametrize("text", FUNCTION_FORMS, ids=[f"form{i}" for i in range(len(FUNCTION_FORMS))])
def test_the_printed_nest_is_the_same_kernel(text):
    """What a compiler gets of a kernel function (its nest printed from the syntax tree,
    Kernel.code) read again after the declarations of its arrays and scalars is the same kernel."""
    parsed = c(text)
    k = parsed.kernel
    decls = [f"{a.ctype} {name}" + "".join(f"[{c_expr(d)}]" for d in a.dims) + ";" for name, a in k.arrays.items()]
    decls += [f"{s.ctype} {name};" for name, s in k.scalars.items()]
    decls += [f"long {i};" for i in k.loop_indices if not re.search(rf"for \((?:\w+ )+{i} =", k.code)]
    again = c("\n".join(decls) + "\n" + k.code).kernel
    skip = {"scalars", "constants", "recurrences"}  # an index declared outside its loop is a scalar there
    assert {f: v for f, v in shape(again).items() if f not in skip} == \
        {f: v for f, v in shape(k).items() if f not in skip}
    assert again.code == k.code


def _kernel_function(program: str) -> str:
    body = program[program.index("void loopmodel_kernel("):program.index("/* called through")]
    return re.sub(r"\s+", " ", body)


def test_generated_program_of_a_function_is_that_of_its_bare_loop_nest():
    bare, function = c(BARE_COPY), c(COPY)
    assert _kernel_function(generate_c(function.kernel, {"n": 100})) == \
        _kernel_function(generate_c(bare.kernel, {"n": 100}))


def test_generated_program_includes_the_headers_of_typedef_names_and_refuses_the_program_prefix():
    parsed = c("void k(int64_t *a, ptrdiff_t n) {\n  for (ptrdiff_t i = 0; i < n; ++i)\n    a[i] = a[i] + 1;\n}\n")
    program = generate_c(parsed.kernel, {"n": 10})
    assert "#include <stddef.h>" in program and "#include <stdint.h>" in program and "int64_t *a" in program
    assert "#include <stdint.h>" not in generate_c(c(BARE_COPY).kernel, {"n": 10})
    harness_word = c(COPY.replace("int n", "int reps").replace("< n", "< reps"))
    assert "#define reps 10" in generate_c(harness_word.kernel, {"reps": 10})
    clash = c(COPY.replace("int n", "int loopmodel_n").replace("< n", "< loopmodel_n"))
    with pytest.raises(ToolError, match="'loopmodel_n' cannot be compiled as a kernel name"):
        generate_c(clash.kernel, {"loopmodel_n": 10})


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
@pytest.mark.parametrize("text", COMPILED_FORMS, ids=[f"form{i}" for i in range(len(COMPILED_FORMS))])
def test_codegen_of_a_function_compiles_and_runs(tmp_path, text):
    kernel = tmp_path / "k.c"
    kernel.write_text(text)
    p = run_cli("codegen", kernel, "-D", "n=100")
    assert p.returncode == 0, p.stderr
    (tmp_path / "prog.c").write_text(p.stdout)
    built = subprocess.run(["gcc", "-O2", "-Werror=return-type", "-Werror=implicit-function-declaration",
                            "-o", str(tmp_path / "prog"), str(tmp_path / "prog.c"), "-lm"], capture_output=True,
                           text=True, timeout=120)
    assert built.returncode == 0, built.stderr
    assert subprocess.run([str(tmp_path / "prog"), "3"], timeout=60).returncode == 0


# ---------------------------------------------------------------- the command line


def test_analyze_a_function_as_its_bare_loop_nest(tmp_path):
    (tmp_path / "f.c").write_text(COPY)
    (tmp_path / "b.c").write_text(BARE_COPY)
    args = ("-m", SKX, "-D", "n=100000", "-p", "LC", "-p", "ECM", "--incore", "analytic", "--json")
    f, b = run_cli("analyze", "f.c", *args, cwd=tmp_path), run_cli("analyze", "b.c", *args, cwd=tmp_path)
    assert f.returncode == b.returncode == 0, f.stderr + b.stderr
    fd, bd = json.loads(f.stdout), json.loads(b.stdout)
    assert fd["traffic"] == bd["traffic"] and fd["ecm"] == bd["ecm"] and fd["layer_conditions"] == bd["layer_conditions"]
    assert [note for note in fd["notes"] if note not in bd["notes"]] == [
        "'a' (line 1, pointer parameter): n elements, as far as the loop nest reaches",
        "'b' (line 1, pointer parameter): n elements, as far as the loop nest reaches"]


def test_analyze_says_which_size_parameter_needs_a_value(tmp_path):
    (tmp_path / "f.c").write_text(COPY)
    p = run_cli("analyze", "f.c", "-m", SKX, "--incore", "analytic", cwd=tmp_path)
    assert p.returncode == 2 and p.stderr == "loopmodel: no value for n: give -D n=<size> (kernel f.c)\n"


def test_analyze_a_descending_range_in_its_order(tmp_path):
    (tmp_path / "b.c").write_text(BARE_COPY)
    p = run_cli("analyze", "b.c", "-m", SKX, "-D", "n=30000:10000:-10000", "-p", "LC", "--json", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert [json.loads(line)["defines"]["n"] for line in p.stdout.splitlines()] == [30000, 20000, 10000]
    zero = run_cli("analyze", "b.c", "-m", SKX, "-D", "n=1:10:0", cwd=tmp_path)
    assert zero.returncode == 2 and zero.stderr == \
        "loopmodel: -D n=1:10:0: the step is zero (give e.g. 1:10:1, or a negative step to count down)\n"


@pytest.mark.skipif(not HAVE_GCC, reason="gcc needed")
def test_bench_measures_a_function(tmp_path):
    (tmp_path / "f.c").write_text(FUNCTION_FORMS[1])
    p = subprocess.run([sys.executable, "-m", "loopmodel", "bench", "f.c", "-D", "n=2000", "--repeat", "3",
                        "--blocks", "1", "--spread-s", "0", "--no-cache", "--json"], capture_output=True, text=True,
                       timeout=300, cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)["points"][0]
    assert doc["defines"] == {"n": 2000} and doc["measurement"]["time_min_cy_per_cl"] > 0
    assert "'a' (line 3, pointer parameter): n elements, as far as the loop nest reaches" in doc["notes"]


def test_study_defines_each_kernel_does_not_declare(tmp_path):
    (tmp_path / "f.c").write_text(COPY)
    (tmp_path / "g.c").write_text("double a[M][N];\nfor (int j = 0; j < M; ++j)\n  for (int i = 0; i < N; ++i)\n"
                                  "    a[j][i] = 1.0;\n")
    (tmp_path / "s.yml").write_text("kernels: [f.c, g.c]\nmachines: [SkylakeSP_Gold-6148]\n"
                                    "defines: {n: 1000, N: 200, M: '10:30:10'}\noptions: {incore: [analytic]}\n")
    study = read_study(str(tmp_path / "s.yml"))
    assert study.notes == ("f.c does not declare N, M: ignored for it (its rows leave them empty)",
                           "g.c does not declare n: ignored for it (its rows leave it empty)")
    p = run_cli("sweep", "s.yml", "--workers", "1", "--no-progress", "--no-cache", "-o", "r.csv", cwd=tmp_path)
    assert p.returncode == 0, p.stderr
    assert p.stderr.startswith("sweep: note: f.c does not declare N, M: ignored for it (its rows leave them empty)\n"
                               "sweep: note: g.c does not declare n: ignored for it (its rows leave it empty)\n"
                               "sweep: 4 points (0 failed")
    (tmp_path / "t.yml").write_text("kernels: [f.c, g.c]\nmachines: [SkylakeSP_Gold-6148]\ndefines: {K: 5}\n")
    with pytest.raises(StudyError, match=r"no kernel declares 'K' \(constants: f.c: n; g.c: M, N\)"):
        read_study(str(tmp_path / "t.yml"))
    bad = run_cli("sweep", "t.yml", cwd=tmp_path)
    assert bad.returncode == 2 and bad.stderr.count("\n") == 1 and "defines.K" in bad.stderr


def test_several_kernels_take_the_sizes_they_declare(tmp_path):
    (tmp_path / "f.c").write_text(COPY)
    (tmp_path / "g.c").write_text(BARE_COPY.replace("[n]", "[N]").replace("< n", "< N"))
    defines = ["n=100", "N=10:30:10"]
    plan = {k: kernel_points(str(tmp_path / k), defines, "roofline", own_only=True) for k in ("f.c", "g.c")}
    assert [len(pts) for pts, _ in plan.values()] == [1, 3]
    assert ignored_defines(defines, {k: ign for k, (_, ign) in plan.items()}) == [
        "f.c: does not declare N: -D ignored for it", "g.c: does not declare n: -D ignored for it"]
    with pytest.raises(DefineError, match="-D X: no kernel declares 'X'"):
        ignored_defines(["X=1"], {"f.c": ("X",), "g.c": ("X",)})


# ---------------------------------------------------------------- extents


def test_signs_of_size_polynomials():
    assert [sign(p) for p in (n - 1, n * m - n, n - m, 1 - n, Poly.const(0), n * m - n - 1, 2 * n - 3)] == \
        [1, 1, None, -1, 0, None, None]


def test_index_range_of_a_triangular_nest():
    k = c("void k(double *a, int n) {\n  for (int i = 0; i < n; ++i)\n    for (int j = 0; j < i; ++j)\n"
          "      a[i*n + j] = 1.0;\n}\n").kernel
    assert index_range(k.writes[0].offset, k.loops) == (Poly.const(0), n * n - n - 2 + n)  # i = n-1, j = n-2


# ---------------------------------------------------------------- properties


def _function_form(case, draw_vla: bool) -> str:
    """``case`` (a bare kernel) written as a function: its arrays as array parameters with their
    dimensions (variable-length ones after int size parameters, or sizes from -D), its scalars
    as parameters, the loop nest as the body."""
    k = case.kernel
    loops = case.source[case.source.index("for ("):]
    params = [f"int {s}" for s in case.sizes] if draw_vla else []
    params += [f"{'const ' if name not in k.written_arrays else ''}{a.ctype} {name}"
               + "".join(f"[{c_expr(d)}]" for d in a.dims) for name, a in k.arrays.items()]
    params += [f"{s.ctype} {name}" for name, s in k.scalars.items()]
    body = "".join("  " + line + "\n" for line in loops.rstrip("\n").split("\n"))
    return f"/* {case.name} */\nstatic void kernel({', '.join(params)})\n{{\n{body}  return;\n}}\n"


def _analysis(kernel, machine, defines) -> dict:
    settings_ = AnalyzerSettings(incore="analytic", models=("LC", "ECM", "Roofline"))
    doc = to_dict(Analyzer(kernel, machine, settings_).run(defines))
    doc.pop("kernel")
    return json.loads(json.dumps(doc))


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(case=kernels(), vla=st.booleans(), data=st.data())
def test_a_kernel_wrapped_in_a_function_is_its_bare_loop_nest(case, vla, data):
    wrapped = c(_function_form(case, vla))
    assert shape(wrapped.kernel) == shape(case.kernel)
    assert wrapped.notes == () or all(n.startswith("integer arrays") for n in wrapped.notes)
    machine = load(data.draw(st.sampled_from(("SkylakeSP_Gold-6148", "Zen_EPYC-7451"))))
    sizes = {s: data.draw(st.integers(2 * h + 4, 3000 if case.dims < 3 else 200)) for s, h in
             zip(case.sizes, case.halos)}
    assert _analysis(wrapped.kernel, machine, sizes) == _analysis(case.kernel, machine, sizes)


def _flattened(case) -> str:
    """``case`` with every array a pointer parameter indexed in one dimension (``a[j][i]`` ->
    ``a[(j)*(N) + (i)]``)."""
    k = case.kernel

    def flat(m):
        dims = k.arrays[m.group(1)].dims
        subs = re.findall(r"\[([^\]]+)\]", m.group(2))
        expr = f"({subs[0]})"
        for d, s in zip(dims[1:], subs[1:]):
            expr = f"({expr})*({c_expr(d)}) + ({s})"
        return f"{m.group(1)}[{expr}]"
    loops = re.sub(r"\b([a-d])((?:\[[^\]]+\])+)", flat, case.source[case.source.index("for ("):])
    params = [f"int {s}" for s in case.sizes] + [f"{a.ctype} *{name}" for name, a in k.arrays.items()]
    params += [f"{s.ctype} {name}" for name, s in k.scalars.items()]
    return f"void kernel({', '.join(params)}) {{\n{loops}}}\n"


def _reached(kernel, sizes: dict) -> dict:
    """The largest element of each array its accesses reach, by walking the iteration space."""
    out = {}
    accesses = list(kernel.reads) + list(kernel.writes)

    def walk(depth, values):
        if depth == len(kernel.loops):
            for a in accesses:
                out[a.array] = max(out.get(a.array, -1), int(a.offset.evaluate(values)))
            return
        lp = kernel.loops[depth]
        for v in range(int(lp.start.evaluate(values)), int(lp.stop.evaluate(values)), lp.step):
            walk(depth + 1, {**values, lp.index: v})
    walk(0, dict(sizes))
    return out


@settings(PROPERTY_SETTINGS, max_examples=30)
@given(case=kernels(strided=True), data=st.data())
def test_a_pointer_parameter_reaches_exactly_its_largest_element(case, data):
    flat = c(_flattened(case)).kernel
    bare = case.kernel
    assert [(a.array, a.offset) for a in flat.reads + flat.writes] == \
        [(a.array, a.offset) for a in bare.reads + bare.writes]
    sizes = {s: data.draw(st.integers(2 * h + 1, 2 * h + 6)) for s, h in zip(case.sizes, case.halos)}
    reached = _reached(bare, sizes)
    for name, arr in flat.arrays.items():
        assert arr.dims[0].evaluate(sizes) == reached[name] + 1  # unit steps: exact
        assert arr.dims[0].evaluate(sizes) <= bare.arrays[name].size_elements.evaluate(sizes)


TYPES = (("double", 8), ("float", 4), ("int", 4), ("long", 8), ("short", 2), ("unsigned long long", 8))


@settings(PROPERTY_SETTINGS, max_examples=25)
@given(case=kernels(dims=(1, 2, 3), float_types=False), kind=st.sampled_from(TYPES[1:]),
       machine=st.sampled_from(("SkylakeSP_Gold-6148", "HaswellEP_E5-2695v3", "Zen_EPYC-7451")))
def test_the_element_size_scales_the_bytes_of_every_level(case, kind, machine):
    """All arrays of one type: the bytes each level moves per iteration scale with the element
    size, where no row fits any cache (inner size 2**26: only the reuse within a row remains,
    for both types) and where the whole data set fits L1 (nothing beyond the core's own)."""
    ctype, size = kind
    typed = c(re.sub(r"^double ([a-d])\[", rf"{ctype} \1[", case.source, flags=re.M)).kernel
    assert {a.ctype for a in typed.arrays.values()} == {ctype}
    assert typed.bytes_loaded_per_iteration() * 8 == case.kernel.bytes_loaded_per_iteration() * size
    model = load(machine)
    for sizes in ({s: (2 ** 26 if s == case.sizes[-1] else 2 * h + 3) for s, h in zip(case.sizes, case.halos)},
                  {s: 2 * h + 3 for s, h in zip(case.sizes, case.halos)}):
        runs = [Analyzer(k, model, AnalyzerSettings(incore="analytic", models=("LC",))).run(sizes).traffic
                for k in (case.kernel, typed)]
        per_it = [[lv.bytes / t.iterations_per_unit for lv in t.levels] for t in runs]
        assert [x * size for x in per_it[0]] == pytest.approx([x * 8 for x in per_it[1]], rel=1e-9)


def test_a_float_copy_moves_half_the_bytes_of_a_double_copy():
    model = load(SKX)
    for n_ in (1000, 100_000, 10_000_000):  # L1, L2/L3, memory
        per_it = []
        for ctype in ("double", "float"):
            k = c(BARE_COPY.replace("double", ctype)).kernel
            res = Analyzer(k, model, AnalyzerSettings(incore="analytic", sweeps="single")).run({"n": n_})
            per_it.append([lv.bytes / res.traffic.iterations_per_unit for lv in res.traffic.levels])
        assert per_it[1] == pytest.approx([b / 2 for b in per_it[0]]) and per_it[0][-1] == 24  # 8 + 8 + 8 (WA)


# ---------------------------------------------------------------- the page


def test_the_forms_page_is_what_its_script_writes():
    spec = importlib.util.spec_from_file_location("gen_c_forms", ROOT / "docs" / "gen_c_forms.py")
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    assert (ROOT / "docs" / "c-frontend.md").read_text() == gen.render(), \
        "docs/c-frontend.md is out of date: PYTHONPATH=src python docs/gen_c_forms.py"
    refused = [title for _, title, text in gen.FORMS if gen.outcome(text).startswith("refused")]
    assert len(refused) >= 15 and all(re.match(r"refused: loopmodel: kernel\.c:\d+", gen.outcome(text))
                                       for _, title, text in gen.FORMS if title in refused)


# ---------------------------------------------------------------- the C library's maths

def test_fma_is_a_multiply_add_and_log_pow_are_operations_of_their_own():
    fma = parse_c("double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = fma(b[i], c[i], a[i]);\n").kernel
    plain = parse_c("double a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] * c[i] + a[i];\n").kernel
    assert fma.operations == plain.operations == {"MUL": 1, "ADD": 1}
    assert fma.fma_candidates == plain.fma_candidates == 1 and fma.flops_per_iteration == 2
    k = parse_c("float a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = logf(b[i]) + powf(b[i], 0.5f);\n").kernel
    assert k.operations == {"LOG": 1, "POW": 1, "ADD": 1}


@pytest.mark.parametrize("call,message", [
    ("pow(b[i])", "'pow' takes 2 argument(s), got 1"),
    ("fma(b[i], b[i])", "'fma' takes 3 argument(s), got 2"),
    ("cbrt(b[i])", "call to 'cbrt' not supported (allowed: exp, fabs, fma, fmax, fmin, log, pow, sqrt)"),
])
def test_a_math_call_of_the_wrong_arity_or_name_is_one_line(call, message):
    err = refusal(f"double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = {call};\n")
    assert message in err.message and err.line == 3


def test_log_and_pow_cost_what_the_machine_model_gives_else_t_ol_is_unknown(tmp_path):
    src = tmp_path / "k.c"
    src.write_text("double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = log(b[i]) + pow(b[i], 0.5);\n")
    p = run_cli("analyze", src, "-m", SKX, "-D", "N=1000", "--incore", "analytic", "--json")
    doc = json.loads(p.stdout)
    assert p.returncode == 0 and doc["incore"]["T_OL_cy_per_cl"] is None
    assert any("gives no throughput for LOG" in n and "no throughput for POW" in n for n in doc["notes"])
    assert "expensive-ops" in doc["confidence"]["regimes"]
    text = (ROOT / "src" / "loopmodel" / "machines" / f"{SKX}.yml").read_text()
    assert "throughput: {" in text  # the machine file's flow-style table, which the copy below extends
    machine = tmp_path / "m.yml"
    machine.write_text(text.replace("throughput: {", "throughput: {LOG: 0.05, POW: 0.025, ", 1))
    p = run_cli("analyze", src, "-m", machine, "-D", "N=1000", "--incore", "analytic", "--json")
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["incore"]["T_OL_cy_per_cl"] > 0
