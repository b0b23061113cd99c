"""The differential check of generated programs: kernel texts with hostile bytes inserted, each
one the front-end accepts compiled as loopmodel compiles it.

Invariant: what the compiler reads of the kernel is what loopmodel printed. For every text the
parser accepts, the kernel function of ``gcc -E`` on the generated program (through the gate,
:func:`loopmodel.toolchain.compile_c`) equals, token for token, the kernel function loopmodel
printed (size macros expanded); and the program, built and run, creates no marker file. Used by
tests/test_generated_program_fuzz.py (bounded) and benchmarks/fuzz_generated_programs.py (long).
"""
from __future__ import annotations

import os
import re

from hypothesis import strategies as st

from loopmodel import toolchain
from loopmodel.compiled.codegen import generate_c
from loopmodel.errors import KernelError, LoopmodelError
from loopmodel.fileio.c_kernel import load_c_kernel

#: kernels the insertions go into (Kerncraft form, a kernel function, pragmas, a reduction)
BASES = (
    "double a[N], b[N], c[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n  a[i] = b[i] + s * c[i];\n",
    "void k(double *restrict a, const double *restrict b, int n) {\n"
    "  for (int i = 1; i < n - 1; ++i)\n    a[i] = 0.5 * (b[i - 1] + b[i + 1]);\n}\n",
    "double u[M][N], v[M][N];\n#pragma omp parallel for schedule(static)\nfor (int j = 1; j < M - 1; ++j)\n"
    "  #pragma GCC ivdep\n  for (int i = 1; i < N - 1; ++i)\n"
    "    v[j][i] = 0.25 * (u[j][i - 1] + u[j][i + 1] + u[j - 1][i] + u[j + 1][i]);\n",
    "double x[N];\ndouble t;\n\nfor (int i = 0; i < N; ++i)\n  t += x[i] * x[i];\n",
)
#: sizes of every base's constants
SIZES = {"N": 64, "M": 16, "n": 64}
#: what an attacker would hide in a kernel: comments, line endings, splices, trigraphs,
#: non-ASCII bytes, directives and pragmas, each carrying a payload that would leave a marker
INSERTS = (
    "/* c */", "// c\n", "/* x\r*/", "// x\r{ int system(const char *); system(\"touch M\"); }\n",
    "// x\\\n{ int system(const char *); system(\"touch M\"); }\n", "\\\f\n", "\\\v\n", "\\\r\n", "\\ \n",
    "??/\n", "??=", "??(", "\f", "\v", "\r", "\r\n", "\t", " ", "\u00e9", "\u00a0", "\u2028", "\ufeff",
    "#include \"/etc/passwd\"\n", "#include \"/dev/zero\"\n", "#define b c\n", "#undef N\n", "#if 0\n",
    "#line 1\n", "#pragma GCC poison a\n", "#pragma omp parallel for num_threads(4)\n",
    "#pragma omp parallel for num_threads(system(\"touch M\"))\n", "#pragma GCC unroll 65534\n",
    "#pragma GCC unroll 4\n", "#pragma omp simd linear(i: 1)\n", "_Pragma(\"omp simd\")",
    "_Pragma(\"GCC poison a\")", "\\u0061", "\"touch M\"", "'\\n'", "\x00", "\x1b", "%:", "<%", "%>",
)

#: inserts the front-end accepts in many places (comments hiding a payload behind a lone CR, blanks,
#: loop hints): drawn as often again as the others, so that more texts reach the compiler
ACCEPTED = ("/* c */", "// c\n", "/* x\r*/", "// x\r{ int system(const char *); system(\"touch M\"); }\n", "\f",
            "\v", "\t", "#pragma GCC unroll 4\n", "_Pragma(\"omp simd\")", "#pragma omp simd\n", "/*\\\n*/")


def boundaries(text: str) -> list:
    """Offsets between two tokens of ``text`` (next to a blank or a punctuator), where an insert
    leaves the kernel readable more often than inside a token."""
    return [k for k in range(len(text) + 1)
            if k in (0, len(text)) or not (text[k - 1].isalnum() and text[k].isalnum())]


def insert(text: str, choose) -> str:
    """``text`` with one to three :data:`INSERTS`, mostly between tokens, sometimes anywhere;
    ``choose(kind, options)`` draws: ``("count", range)``, ``("where", list)``, ``("what", inserts)``."""
    for _ in range(choose("count", range(1, 4))):
        places = boundaries(text) if choose("anywhere", (False, False, False, True)) is False else range(len(text) + 1)
        cut = choose("where", list(places))
        text = text[:cut] + choose("what", INSERTS + ACCEPTED * 3) + text[cut:]
    return text


@st.composite
def kernel_texts(draw):
    """A base kernel with hostile inserts (:func:`insert`)."""
    return insert(draw(st.sampled_from(BASES)), lambda kind, options: draw(st.sampled_from(list(options))))


_TOKEN = re.compile(r"\s*([A-Za-z_]\w*|\d[\w.]*(?:[eEpP][+-]\d+)?\w*|\.\d\w*|\"(?:\\.|[^\"\\])*\"|"
                    r"->|\+\+|--|<<=?|>>=?|[<>=!]=|&&|\|\||[-+*/%&|^]=|\S)")


def tokens(text: str) -> list:
    """C tokens of ``text`` (preprocessed: no comments or directives)."""
    return _TOKEN.findall(text)


def kernel_function(program: str) -> str:
    """The text of ``void loopmodel_kernel(...) { ... }`` in ``program``."""
    start = program.index("void loopmodel_kernel(")
    depth, k = 0, program.index("{", start)
    for k in range(k, len(program)):
        depth += {"{": 1, "}": -1}.get(program[k], 0)
        if depth == 0:
            break
    return program[start:k + 1]


def expected_tokens(program: str, defines: dict) -> list:
    """The kernel function's tokens as loopmodel printed them, its size macros expanded (and
    the harness's own comments, around the nest, left out)."""
    text = re.sub(r"/\*.*?\*/", " ", kernel_function(program), flags=re.S)
    return [str(defines[t]) if t in defines else t for t in tokens(text)]


def check(text: str, directory: str, run: bool = True) -> str:
    """Parse ``text`` (written as bytes to ``directory/kernel.c``) and, where accepted, compare
    the preprocessed kernel function with loopmodel's and run the program.

    Returns:
        ``"refused"`` or ``"compiled"``.

    Raises:
        AssertionError: a divergence, a marker file, or a refusal that is not a one-line
            KernelError.
    """
    path = os.path.join(directory, "kernel.c")
    with open(path, "wb") as fh:
        fh.write(text.encode("utf-8"))
    try:
        kernel = load_c_kernel(path).kernel
    except KernelError as exc:
        assert "\n" not in str(exc), str(exc)
        return "refused"
    defines = {c: SIZES[c] for c in kernel.constants}
    program = generate_c(kernel, defines)
    seen = toolchain.compile_c(program, "gcc", ("-O1",), "preprocessed", "fuzz")
    got, want = tokens(kernel_function(seen)), expected_tokens(program, defines)
    assert got == want, f"the compiler reads other tokens than loopmodel printed:\n{got}\n{want}"
    if run:
        exe = toolchain.compile_c(program, "gcc", ("-O1",), "executable", "fuzz", directory, ("-lm",))
        try:
            toolchain.run_program([exe, "1"], "the fuzz program", 30)
        except LoopmodelError as exc:
            raise AssertionError(f"the generated program failed: {exc}") from None
    assert not os.path.exists(os.path.join(directory, "M")), "a marker file appeared"
    return "compiled"
