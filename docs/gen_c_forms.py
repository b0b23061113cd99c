"""Write docs/c-frontend.md: the C forms a kernel file may take, each run through the real front-end.

    PYTHONPATH=src python docs/gen_c_forms.py            # writes docs/c-frontend.md
    PYTHONPATH=src python docs/gen_c_forms.py --check    # exit 1 when the page is out of date

Every snippet of :data:`FORMS` is parsed by :func:`loopmodel.fileio.c_kernel.parse_c` (what
``loopmodel analyze KERNEL.c`` reads) as a file named ``kernel.c``; an accepted one shows the
arrays, sizes and notes the front-end gives, a refused one the exact line the command prints.
The ``-D`` forms go through :func:`loopmodel.fileio.defines.sweep`. ``tests/test_c_frontend.py``
checks that the page is what this script writes.
"""
from __future__ import annotations

import sys
from pathlib import Path

from loopmodel.errors import LoopmodelError
from loopmodel.fileio.c_function import c_expr
from loopmodel.fileio.c_kernel import parse_c
from loopmodel.fileio.defines import sweep

PAGE = Path(__file__).resolve().parent / "c-frontend.md"

#: (section, title, C text) of each form
FORMS = (
    ("Kernel files", "Kerncraft's form: declarations and one loop nest",
     "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\n"),
    ("Kernel files", "a kernel function with pointer parameters",
     "void copy(double *restrict a, const double *restrict b, int n) {\n  for (int i = 0; i < n; ++i)\n"
     "    a[i] = b[i];\n}\n"),
    ("Kernel files", "a function returning a reduction",
     "double dot(const double *a, const double *b, long n) {\n  double s = 0.0;\n  for (long i = 0; i < n; ++i)\n"
     "    s += a[i] * b[i];\n  return s;\n}\n"),
    ("Kernel files", "a pointer indexed in two dimensions (a[j*m+i])",
     "void k(double *a, const double *b, int n, int m) {\n  for (int j = 1; j < n - 1; ++j)\n"
     "    for (int i = 0; i < m; ++i)\n      a[j*m + i] = b[(j-1)*m + i] + b[(j+1)*m + i];\n}\n"),
    ("Kernel files", "array parameters with their sizes",
     "void k(double a[N][M], const double b[N][M]) {\n  for (int j = 0; j < N; ++j)\n"
     "    for (int i = 0; i < M; ++i)\n      a[j][i] = 2.0 * b[j][i];\n}\n"),
    ("Kernel files", "variable-length array parameters",
     "void k(int n, int m, double a[n][m], const double b[n][m]) {\n  for (int j = 0; j < n; ++j)\n"
     "    for (int i = 0; i < m; ++i)\n      a[j][i] = b[j][i];\n}\n"),
    ("Kernel files", "the first dimension left out (a[][M], (*a)[M])",
     "#define M 512\nvoid k(double a[][M], const double (*restrict b)[M], int n) {\n  for (int j = 0; j < n; ++j)\n"
     "    for (int i = 0; i < M; ++i)\n      a[j][i] = b[j][i];\n}\n"),
    ("Kernel files", "GNU spellings, static inline, comments",
     "/* scale */\nstatic inline void scale(float *__restrict__ a, float s, int n) {\n"
     "  for (int i = 0; i < n; i++)  // in place\n    a[i] = s * a[i];\n}\n"),
    ("Kernel files", "a benchmark program: main is left out",
     "void triad(double *a, const double *b, const double *c, double s, int n) {\n"
     "  for (int i = 0; i < n; ++i)\n    a[i] = b[i] + s * c[i];\n}\nint main(void) {\n  double x[100];\n"
     "  for (int i = 0; i < 100; ++i)\n    x[i] = 0.0;\n  return 0;\n}\n"),
    ("Kernel files", "helper functions and prototypes are left out",
     "double sq(double x);\nstatic double twice(double x) { return 2.0 * x; }\nvoid k(double *a, int n) {\n"
     "  for (int i = 0; i < n; ++i)\n    a[i] = 1.0;\n}\n"),
    ("Kernel files", "global arrays used by a function",
     "double a[N], b[N];\nvoid k(void) {\n  for (int i = 0; i < N; ++i)\n    a[i] = b[i];\n}\n"),
    ("Kernel files", "two functions with loops",
     "void init(double *a, int n) { for (int i = 0; i < n; ++i) a[i] = 0.0; }\n"
     "void copy(double *a, const double *b, int n) { for (int i = 0; i < n; ++i) a[i] = b[i]; }\n"),
    ("Kernel files", "a function without a loop",
     "double twice(double x) {\n  return 2.0 * x;\n}\n"),
    ("Kernel files", "a statement outside the loop nest",
     "void k(double *a, int n) {\n  a[0] = 0.0;\n  for (int i = 1; i < n; ++i)\n    a[i] = a[i-1];\n}\n"),
    ("Kernel files", "two loop nests",
     "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\nfor (int i = 0; i < N; ++i)\n  b[i] = a[i];\n"),
    ("Kernel files", "a typedef",
     "typedef double real;\nvoid k(real *a, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i] = 0.0;\n}\n"),
    ("Kernel files", "an unnamed parameter",
     "void k(double *a, int) {\n  for (int i = 0; i < N; ++i)\n    a[i] = 0.0;\n}\n"),
    ("Parameters and extents", "a pointer to pointer",
     "void k(double **a, int n, int m) {\n  for (int j = 0; j < n; ++j)\n    for (int i = 0; i < m; ++i)\n"
     "      a[j][i] = 0.0;\n}\n"),
    ("Parameters and extents", "a pointer reaching before its first element",
     "void k(double *a, const double *b, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i] = b[i-1];\n}\n"),
    ("Parameters and extents", "an extent of unknown sign",
     "void k(double *a, const double *b, int n, int m) {\n  for (int i = 0; i < n; ++i)\n    a[i] = b[i + n - m];\n}\n"),
    ("Parameters and extents", "a pointer without a function",
     "double *a;\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Types", "size_t, long, unsigned and long long indices",
     "#include <stddef.h>\nvoid k(double *a, const double *b, size_t n, long m) {\n"
     "  for (size_t j = 0; j < n; ++j)\n    for (unsigned long long i = 0; i < m; ++i)\n"
     "      a[j*m + i] = b[j*m + i];\n}\n"),
    ("Types", "const integer sizes (a default, an expression)",
     "const int N = 1000;\nconst long N2 = N + 2;\ndouble a[N2], b[N2];\nfor (long i = 1; i < N2 - 1; ++i)\n"
     "  a[i] = b[i-1] + b[i+1];\n"),
    ("Types", "integer and float arrays",
     "void k(int *a, const long *b, const unsigned *c, float *d, int n) {\n  for (int i = 0; i < n; ++i) {\n"
     "    a[i] = b[i] + c[i];\n    d[i] = 2.0f * d[i];\n  }\n}\n"),
    ("Types", "casts, != and a descending loop",
     "void k(double *a, const double *b, long n) {\n  for (int i = (int)n - 1; i != -1; --i)\n"
     "    a[i] = b[i];\n}\n"),
    ("Types", "a char array",
     "char c[N];\nfor (int i = 0; i < N; ++i)\n  c[i] = 0;\n"),
    ("Types", "long double",
     "long double a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Types", "a non-const integer as a size",
     "int n = 100;\ndouble a[n];\nfor (int i = 0; i < n; ++i)\n  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "OpenMP and loop hints (kept, compiled with the loop nest)",
     "double a[N], b[N];\n#pragma omp parallel for\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\n"),
    ("Pragmas and the preprocessor", "GCC ivdep, unroll, clang loop in a function",
     "void k(double *a, const double *b, int n) {\n#pragma GCC ivdep\n#pragma unroll 4\n"
     "  for (int i = 0; i < n; ++i)\n    a[i] = b[i];\n}\n"),
    ("Pragmas and the preprocessor", "OpenMP clauses with literals, _Pragma",
     "double a[N][N];\n#pragma omp parallel for schedule(dynamic, 4) num_threads(8)\nfor (int j = 0; j < N; ++j) {\n"
     "  _Pragma(\"omp simd\")\n  for (int i = 0; i < N; ++i)\n    a[j][i] = 2.0 * a[j][i];\n}\n"),
    ("Pragmas and the preprocessor", "an OpenMP clause with an expression",
     "double a[N];\n#pragma omp parallel for num_threads(omp_get_max_threads())\nfor (int i = 0; i < N; ++i)\n"
     "  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "an unroll factor above 64",
     "double a[N];\n#pragma GCC unroll 65534\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "other pragmas (ignored with a note)",
     "#pragma once\n#pragma GCC optimize(\"O3\")\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "#include of a standard header, #define of a size",
     "#include <math.h>\n#define N 1000\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = sqrt(a[i]);\n"),
    ("Pragmas and the preprocessor", "#include of another file",
     "#include \"sizes.h\"\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "#define of an expression",
     "#define N (10 * 100)\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Pragmas and the preprocessor", "#if",
     "#if 1\ndouble a[N];\n#endif\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
    ("Loop bodies", "an if in the loop",
     "double a[N];\nfor (int i = 0; i < N; ++i)\n  if (a[i] < 0.0) a[i] = 0.0;\n"),
    ("Loop bodies", "a while loop",
     "double a[N];\nint i = 0;\nwhile (i < N)\n  a[i++] = 0.0;\n"),
    ("Loop bodies", "indirect indexing",
     "void k(double *a, const int *idx, int n) {\n  for (int i = 0; i < n; ++i)\n    a[idx[i]] = 1.0;\n}\n"),
    ("Loop bodies", "the C library's maths: fma, pow, log (and sqrt, exp, fabs, fmin, fmax)",
     "#include <math.h>\ndouble a[N], b[N], c[N];\nfor (int i = 0; i < N; ++i)\n"
     "  a[i] = fma(b[i], c[i], a[i]) + pow(b[i], 2.0) * log(c[i]);\n"),
    ("Loop bodies", "a call to another function",
     "double f(double x);\nvoid k(double *a, int n) {\n  for (int i = 0; i < n; ++i)\n    a[i] = f(a[i]);\n}\n"),
    ("Loop bodies", "!= with a step of 2",
     "double a[N];\nfor (int i = 0; i != N; i += 2)\n  a[i] = 0.0;\n"),
    ("Loop bodies", "a conditional expression",
     "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] > a[i] ? b[i] : a[i];\n"),
    ("Several nests", "a statement beside an inner loop (gemm)",
     "void gemm(int ni, int nj, int nk, double beta, double C[ni][nj], double A[ni][nk], double B[nk][nj]) {\n"
     "  for (int i = 0; i < ni; i++) {\n    for (int j = 0; j < nj; j++)\n      C[i][j] *= beta;\n"
     "    for (int k = 0; k < nk; k++)\n      for (int j = 0; j < nj; j++)\n        C[i][j] += A[i][k] * B[k][j];\n"
     "  }\n}\n"),
    ("Several nests", "a time loop around two nests",
     "void jacobi(int steps, int n, double A[n], double B[n]) {\n  for (int t = 0; t < steps; t++) {\n"
     "    for (int i = 1; i < n - 1; i++)\n      B[i] = (A[i-1] + A[i] + A[i+1]) / 3.0;\n"
     "    for (int i = 1; i < n - 1; i++)\n      A[i] = (B[i-1] + B[i] + B[i+1]) / 3.0;\n  }\n}\n"),
    ("Several nests", "an if on loop indices, with else",
     "void k(int n, double A[n][n]) {\n  for (int i = 0; i < n; i++)\n    for (int j = 0; j < n; j++)\n"
     "      if (j > i) A[i][j] = 0.0;\n      else A[i][j] = 2.0 * A[i][j];\n}\n"),
    ("Several nests", "an if that crosses a bound",
     "void k(int n, int m, double *a) {\n  for (int i = 0; i < n; i++)\n    if (i < m) a[i] = 0.0;\n}\n"),
    ("Several nests", "swap with two nests",
     "double a[N], b[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i];\nfor (int i = 0; i < N; ++i)\n  b[i] = 2.0;\n"
     "swap(a, b);\n"),
    ("Pragmas and the preprocessor", "a size default, a function-like macro",
     "#ifndef N\n#define N 1000\n#endif\n#define SCALE(x) (2.0 * (x))\ndouble a[N], b[N];\n"
     "for (int i = 0; i < N; ++i)\n  a[i] = SCALE(b[i]);\n"),
    ("Pragmas and the preprocessor", "#error",
     "#ifndef N\n#error give N\n#endif\ndouble a[N];\nfor (int i = 0; i < N; ++i)\n  a[i] = 0.0;\n"),
)

#: (title, -D texts) of each size form
DEFINES = (
    ("a value", ["N=1000"]),
    ("a range, stop included", ["N=1000:5000:1000"]),
    ("a descending range", ["N=10000:10:-50"]),
    ("Kerncraft's logarithmic points", ["N=10-10000:4log10"]),
    ("a zero step", ["N=1:100:0"]),
    ("a range without sizes", ["N=1000:10:50"]),
    ("a negative step counting up", ["N=10:1000:-50"]),
)


def _accepted(parsed) -> str:
    k = parsed.kernel
    arrays = ", ".join(f"{a.name}: {a.ctype}{''.join(f'[{c_expr(d)}]' for d in a.dims)} ({a.element_size} B)"
                       for a in k.arrays.values()) or "none"
    sizes = ", ".join(f"{c}={parsed.defaults[c]}" if c in parsed.defaults else c for c in sorted(k.constants))
    out = [f"accepted: arrays {arrays}; sizes {sizes or 'none'}"]
    for nest in getattr(k, "nests", ()):
        loops = "; ".join(f"{lp.index} = {lp.start} .. {lp.stop}" + (f" step {lp.step}" if lp.step != 1 else "")
                          for lp in nest.kernel.loops)
        runs = f", run once per {', '.join(lp.index for lp in nest.repeat)}" if nest.repeat else ""
        out.append(f"nest at line {nest.line}: {loops}{runs}")
    if getattr(k, "pragmas", ()):
        out.append("pragmas kept: " + "; ".join(f"#pragma {p}" for p in k.pragmas))
    out += [f"note: {n}" for n in parsed.notes]
    return "\n".join(out)


def outcome(text: str) -> str:
    """What the front-end makes of ``text`` read as ``kernel.c``: an ``accepted: ...`` summary
    with the notes, or the one line ``loopmodel analyze`` prints for a refusal."""
    try:
        return _accepted(parse_c(text, "kernel.c"))
    except LoopmodelError as exc:
        return f"refused: loopmodel: {exc}"


def define_outcome(texts: list) -> str:
    """The sizes of ``-D`` texts (the first ones), or the refusal's line."""
    try:
        points = sweep(texts)
    except LoopmodelError as exc:
        return f"refused: loopmodel: {exc}"
    values = [p["N"] for p in (points[k] for k in range(min(len(points), 5)))]
    more = f", ... ({len(points)} sizes)" if len(points) > 5 else f" ({len(points)} size{'s' * (len(points) > 1)})"
    return "accepted: N = " + ", ".join(map(str, values)) + more


INTRO = """# C kernels: the forms the front-end reads

A kernel file is C in one of two forms, both read by the same front-end
(`src/loopmodel/fileio/c_kernel.py`):

* **Kerncraft's form**: declarations at the top level, then one loop nest
  (kerncraft-tool-paper.txt §2.1);
* **a kernel function**: the loop nests in the body of a C function, as kernels are written in
  programs. One function is one kernel: the one `--function NAME` names, else the function
  that holds a `for` loop. Other functions and prototypes are left out with a note; `main` is
  left out when another function has a loop (a benchmark program around its kernel); several
  functions with loops and no `--function` is one line listing them. Of the top-level
  declarations only those the function names are read. The body holds declarations, loop
  nests, Kerncraft's `swap(x, y);` calls (with one nest) and, last, an optional `return` (its
  value is not modelled).

Several nests (`src/loopmodel/fileio/c_nests.py`): a body is cut into maximal perfect nests in
execution order, each analysed as a kernel of its own and summed (`loopmodel analyze` prints a
row per nest: iterations, runs, data location, ECM, share of the time, bottleneck; `--json`
carries `nests[]`). Statements beside an inner loop (`C[i][j] *= beta;` before gemm's `k` loop)
are a nest of their own at their level; an enclosing loop the nest does not use (a time loop)
multiplies it; statements outside every loop run once per call and are left out with a note.
An `if` on loop indices restricts the iteration space of what it guards (`if (j > i)`,
`if (i + 1 < n && j >= 1)`, with `else`): each branch is a nest whose loop bounds the condition
tightens (`src/loopmodel/fileio/c_guards.py`); an `if` on data is refused. A conditional
expression `c ? a : b` is one compare-and-select (an FMAX), its operands' loads counted.

The preprocessor (`src/loopmodel/fileio/c_preprocess.py`, pcpp in-process): a file with
`#if`/`#ifdef`/`#ifndef`, function-like macros or `#include "x.h"` is preprocessed. Headers are
searched in the kernel's folder and the `-I DIR` folders only (a header outside them is not
read); standard headers (`<stdio.h>`, `<unistd.h>`, ...) are skipped; `#error` and unknown
directives are refused; files, bytes and macro expansion are bounded. Sizes stay symbols: a
`-D N=...` size is defined for the preprocessor (`#ifndef N` sees it, `#if N > 100` reads its
value) and stays `N` in the code; a `#define N 1000` of the kernel file itself is N's default,
overridden by `-D N=...`; a header's macros expand as a compiler's do. `-D NAME` without a
value defines a macro for the preprocessor only (`-D TUNED`).

Parameters: a pointer (`double *restrict a`, `const float *b`) is a one-dimensional array, indexed
`a[i]` or `a[j*m + i]`; an array parameter keeps its dimensions (`double a[N][M]`, a
variable-length `double a[n][m]`), and may leave out the first (`double a[][M]`,
`double (*a)[M]`). Where a size is not given, the array's extent is what its accesses reach over
the loop nest (from index 0: an access before the first element is refused), with a note. An
integer parameter (`int n`, `size_t n`, `const long n`) is a size constant: give it with
`-D n=...`, or a missing value is an error that says so. A floating-point parameter is a scalar.

Types: arrays and scalars of `double` and `float` and of the integer types `char`, `short`, `int`,
`long`, `long long`, their `unsigned` forms, `size_t`, `ptrdiff_t`, `ssize_t`, `int32_t`, `int64_t`,
`uint32_t`, `uint64_t` (sizes of the LP64 model: `int` 4 B, `long` 8 B), and typedefs of them
(`typedef char base;`). The element size sets
the bytes every access moves: loads, stores, traffic, layer conditions and ECM (a `float` copy
moves half the bytes of a `double` copy per iteration). Integer arithmetic is counted as
floating-point operations (a note says so). Indices and sizes may have any integer type;
`const` integers are sizes (`const int N = 1000;` gives `N` the default 1000, as `#define N 1000`;
`-D N=...` overrides it).

Pragmas: OpenMP and loop hints (`omp`, `simd`, `ivdep`, `vector`, `unroll`, `GCC ivdep/unroll`,
`clang loop`, also written `_Pragma("...")`) are read into a typed model and compiled with the
loop nest as printed from it: every clause argument an integer literal within its bound or a
variable of the kernel (docs/reference/trust.md lists them); anything else in such a pragma is
refused. Any other pragma is ignored with a note and left out of the compiled program. What is
compiled (the compiled in-core analyses, `bench`, `validate`, `codegen`) is never the file's
text: the loop nest is printed from the parsed syntax tree (`loopmodel codegen` shows it), in a
function whose parameters are the kernel's arrays and scalars.

Sizes (`-D`): a command that takes one kernel refuses a `-D` for a constant the kernel does
not declare (a typo would otherwise go unseen); commands that take several kernels
(`loopmodel sweep` study files, `loopmodel roofline K1.c K2.c`) give each kernel the sizes it
declares, ignore the others for it with a note, and refuse a size that no kernel declares.

Every refusal is one line naming `file:line[:col]`, the construct, and what is accepted.

The tables below are written by `docs/gen_c_forms.py`, which runs each snippet through the
front-end as a file `kernel.c` (`PYTHONPATH=src python docs/gen_c_forms.py`).
"""


#: characters Markdown would read inside a table cell (links, emphasis, code), as HTML entities
_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", "[": "&#91;", "]": "&#93;", "*": "&#42;", "_": "&#95;",
             "`": "&#96;", "\\": "&#92;", "|": "&#124;"}


def _cell(text: str) -> str:
    """``text`` verbatim in a Markdown table cell: entities for what Markdown reads, ``<br>`` for lines."""
    return "".join(_ENTITIES.get(ch, ch) for ch in text).replace("\n", "<br>")


def render() -> str:
    """The page's Markdown."""
    out = [INTRO]
    section = None
    for sect, title, text in FORMS:
        if sect != section:
            out += [f"\n## {sect}\n", "| form | C | outcome |", "|---|---|---|"]
            section = sect
        code = "<pre>" + _cell(text.rstrip("\n")) + "</pre>"
        out.append(f"| {_cell(title)} | {code} | {_cell(outcome(text))} |")
    out += ["\n## Sizes (-D)\n", "| form | -D | outcome |", "|---|---|---|"]
    for title, texts in DEFINES:
        out.append(f"| {_cell(title)} | `{' '.join('-D ' + t for t in texts)}` | {_cell(define_outcome(texts))} |")
    return "\n".join(out) + "\n"


def main(argv: list) -> int:
    text = render()
    if "--check" in argv:
        same = PAGE.exists() and PAGE.read_text() == text
        if not same:
            print(f"{PAGE} is out of date: run PYTHONPATH=src python docs/gen_c_forms.py", file=sys.stderr)
        return 0 if same else 1
    PAGE.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
