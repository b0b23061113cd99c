"""The validation corpus: the example kernels and a seeded generator of loop kernels in the
grammar of the C front end (:mod:`loopmodel.fileio.c_kernel`), covering the regimes whose
prediction error ``validate --corpus`` measures.

Families (:data:`FAMILIES`; the names that are also regime tags are keys of
:data:`loopmodel.workflows.confidence.REGIMES`): unit-stride streams (1-8 arrays, loads and
stores mixed), scalar reductions (sum, dot product, sum of squares), 2-D and 3-D star stencils
of radius 1-3 in both layouts (inner loop over the last index, and the transposed layout with
the inner loop over the first), Gauss-Seidel in-place updates, strided and transposed
accesses, matrix-vector and matrix-matrix nests, division and square root, compute-only
loops (Horner polynomials of degree 8-24), float and double, short inner loops (8-32
iterations under an outer loop) and long ones. Whether a reduction is reassociated into
partial sums is decided by the compiler flags of the machine model (the ``reassociate``
setting of the analysis), not by the kernel text. ``exp`` is left out: no machine model gives
a throughput for it, so no kernel with it has an ECM prediction.

Each kernel names the size constants that grow together (``scaled``: set to the one main
size) and those that stay fixed (``fixed``, e.g. a short inner trip count);
:mod:`loopmodel.workflows.corpus` places them in each memory level. The generator is a pure
function of its seed.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from importlib import resources


#: every family the corpus covers (the full corpus and the quick one each have all of them)
FAMILIES = ("example", "streaming", "many-streams", "reduction", "stencil", "in-place", "strided", "transposed",
            "matrix-vector", "matrix-matrix", "expensive-ops", "compute-bound", "single-precision",
            "short-inner-loop")

#: example kernel -> (families, scaled size constants, smallest main size); the file is
#: ``corpus_kernels/<name>.c``, a copy of ``examples/kernels/<name>.c``
EXAMPLES = {
    "2d-5pt": (("example", "stencil"), ("M", "N"), 8),
    "3d-7pt": (("example", "stencil"), ("M", "N"), 8),
    "3d-long-range": (("example", "stencil"), ("M", "N"), 12),
    "box27": (("example", "stencil"), ("L",), 8),
    "daxpby": (("example", "streaming", "in-place"), ("N",), 64),
    "daxpy": (("example", "streaming", "in-place"), ("N",), 64),
    "dot": (("example", "reduction"), ("N",), 64),
    "matvec": (("example", "matrix-vector", "reduction"), ("M", "N"), 8),
    "triad": (("example", "streaming"), ("N",), 64),
    "uxx": (("example", "stencil", "in-place", "expensive-ops"), ("N",), 8),
}

#: examples in the quick corpus
QUICK_EXAMPLES = ("triad", "matvec")


@dataclass(frozen=True)
class CorpusKernel:
    """One kernel of the corpus.

    Attributes:
        name: unique, file-name safe (examples: ``example-<file stem>``).
        source: the C text (the front end's grammar).
        families: what it exercises (names of :data:`FAMILIES`).
        scaled: the size constants set to the main size.
        fixed: size constant -> value that stays (elements or iterations).
        min_size: smallest main size at which every loop runs.
        quick: part of the quick corpus.
        max_levels: place it only in the first this many levels of the memory hierarchy (0:
            all). Kernels the layer conditions do not cover (strided, transposed) need the cache
            simulation, whose cost grows with the data set: such a kernel is kept out of the
            levels where one analysis takes seconds.
    """

    name: str
    source: str
    families: tuple
    scaled: tuple
    fixed: dict = field(default_factory=dict)
    min_size: int = 8
    quick: bool = False
    max_levels: int = 0

    def defines(self, size: int) -> dict:
        """Size constant -> value at main size ``size`` (elements or iterations)."""
        return {**{s: int(size) for s in self.scaled}, **self.fixed}


def example_kernels() -> tuple:
    """The packaged copies of the example kernels (:data:`EXAMPLES`), as :class:`CorpusKernel`."""
    files = resources.files(__package__).joinpath("corpus_kernels")
    out = []
    for stem, (families, scaled, min_size) in EXAMPLES.items():
        text = files.joinpath(f"{stem}.c").read_text(encoding="utf-8")
        out.append(CorpusKernel(f"example-{stem}", text, families, scaled, {}, min_size, stem in QUICK_EXAMPLES))
    return tuple(out)


def _decl(ctype: str, arrays, dims: str) -> str:
    return f"{ctype} " + ", ".join(f"{a}{dims}" for a in arrays) + ";\n"


def _scalars(ctype: str, names) -> str:
    return f"{ctype} " + ", ".join(names) + ";\n" if names else ""


def _loop1(body: str, n: str = "N", start: int = 0) -> str:
    return f"for (int i = {start}; i < {n}; ++i)\n    {body}\n"


def _stream(rng, loads: int, stores: int, ctype: str) -> tuple:
    """``stores`` arrays written from ``loads`` arrays read (a constant store without loads)."""
    reads = [f"r{k}" for k in range(loads)]
    writes = [f"w{k}" for k in range(stores)]
    coeffs = [f"c{k}" for k in range(max(loads, 1))]
    body = []
    for w in range(stores):
        terms = [f"{coeffs[k]} * {r}[i]" if rng.random() < 0.6 else f"{r}[i]" for k, r in enumerate(reads)]
        rng.shuffle(terms)
        rhs = terms[0] if terms else coeffs[0]
        for t in terms[1:]:
            rhs += f" {rng.choice('+-')} {t}"
        if w:  # a second store: a different combination
            rhs = f"{coeffs[0]} * ({rhs})"
        body.append(f"{writes[w]}[i] = {rhs};")
    text = _decl(ctype, reads + writes, "[N]") + _scalars(ctype, coeffs)
    text += "for (int i = 0; i < N; ++i) {\n" + "".join(f"    {b}\n" for b in body) + "}\n"
    return text


def _streams(rng) -> list:
    out = []
    for n in range(1, 9):
        stores = 1 if n < 3 else rng.choice((1, 1, 2))
        ctype = "float" if n in (2, 5) else "double"
        fams = ("streaming",) + (("many-streams",) if n >= 6 else ()) + (("single-precision",) if ctype == "float"
                                                                           else ())
        name = f"stream-{n - stores}l{stores}s-{ctype}"
        out.append(CorpusKernel(name, f"/* {n} streams: {n - stores} loads, {stores} stores */\n"
                                + _stream(rng, n - stores, stores, ctype), fams, ("N",), min_size=64,
                                quick=n == 7))
    return out


def _reductions(rng) -> list:
    out = []
    forms = (("sum", "s += x[i];", ("x",)), ("dot", "s += x[i] * y[i];", ("x", "y")),
             ("sumsq", "s += x[i] * x[i];", ("x",)), ("dot3", "s += x[i] * y[i] * z[i];", ("x", "y", "z")))
    for k, (what, body, arrays) in enumerate(forms):
        ctype = "float" if k == 1 or rng.random() < 0.3 else "double"
        fams = ("reduction",) + (("single-precision",) if ctype == "float" else ())
        text = f"/* {what} reduction into a scalar */\n" + _decl(ctype, arrays, "[N]") + _scalars(ctype, ["s"])
        out.append(CorpusKernel(f"reduce-{what}-{ctype}", text + _loop1(body), fams, ("N",), min_size=64,
                                quick=k == 1))
    return out


def _star(array: str, idx: list, radius: int, transposed: bool) -> list:
    """Star-stencil terms of ``array`` around ``idx`` (indices outermost first)."""
    terms = [f"{array}{''.join(f'[{x}]' for x in (idx[::-1] if transposed else idx))}"]
    for d in range(len(idx)):
        for r in range(1, radius + 1):
            for sign in "-+":
                moved = list(idx)
                moved[d] = f"{idx[d]}{sign}{r}"
                terms.append(f"{array}{''.join(f'[{x}]' for x in (moved[::-1] if transposed else moved))}")
    return terms


def _stencil(rng, dims: int, radius: int, transposed: bool, ctype: str, in_place: bool = False) -> str:
    names = ("k", "j", "i")[3 - dims:]
    sizes = ("M", "N", "N")[3 - dims:] if dims == 3 else ("M", "N")
    box = "".join(f"[{s}]" for s in sizes)
    if transposed:
        box = "".join(f"[{s}]" for s in sizes[::-1])
    arrays = ["a"] if in_place else ["a", "b"]
    text = _decl(ctype, arrays, box) + _scalars(ctype, ["s", "c"])
    for d, (idx, size) in enumerate(zip(names, sizes)):
        text += "    " * d + f"for (int {idx} = {radius}; {idx} < {size}-{radius}; ++{idx})\n"
    terms = _star("a", list(names), radius, transposed)
    centre, rest = terms[0], terms[1:]
    rng.shuffle(rest)
    target = centre if in_place else "b" + centre[1:]
    rhs = f"c * {centre} + s * (" + " + ".join(rest) + ")"
    return text + "    " * dims + f"{target} = {rhs};\n"


def _stencils(rng) -> list:
    out = []
    for dims in (2, 3):
        for radius in (1, 2, 3):
            for transposed in (False, True):
                ctype = "float" if rng.random() < 0.25 else "double"
                fams = ("stencil",) + (("strided", "transposed") if transposed else ()) + (
                    ("single-precision",) if ctype == "float" else ())
                layout = "T" if transposed else "R"
                text = (f"/* {dims}-D star stencil, radius {radius}, "
                        f"{'transposed layout (inner loop over the first index)' if transposed else 'row-major'} */\n")
                depth = 0 if not transposed else 3 if dims == 2 or radius == 1 else 2
                out.append(CorpusKernel(f"stencil{dims}d-r{radius}-{layout}-{ctype}",
                                        text + _stencil(rng, dims, radius, transposed, ctype),
                                        fams, ("M", "N"), min_size=2 * radius + 6,
                                        quick=(dims, radius, transposed) in ((2, 2, False), (2, 1, True)),
                                        max_levels=depth))
    for dims in (2, 3):
        text = f"/* Gauss-Seidel sweep, {dims}-D, in place */\n" + _stencil(rng, dims, 1, False, "double", True)
        out.append(CorpusKernel(f"gauss-seidel{dims}d-double", text, ("stencil", "in-place"), ("M", "N"),
                                min_size=8, quick=dims == 2))
    return out


def _updates(rng) -> list:
    ctype = rng.choice(("double", "float"))
    fams = ("streaming", "in-place") + (("single-precision",) if ctype == "float" else ())
    text = "/* in-place update */\n" + _decl(ctype, ("a", "b"), "[N]") + _scalars(ctype, ["s"])
    one = CorpusKernel(f"update-scale-add-{ctype}", text + _loop1("a[i] = s * a[i] + b[i];"), fams, ("N",),
                       min_size=64)
    text = "/* in-place update of two arrays */\n" + _decl("double", ("a", "b", "c"), "[N]") + _scalars("double",
                                                                                                        ["s"])
    body = "for (int i = 0; i < N; ++i) {\n    a[i] = a[i] + s * c[i];\n    b[i] = b[i] - s * c[i];\n}\n"
    two = CorpusKernel("update-two-double", text + body, ("streaming", "in-place"), ("N",), min_size=64)
    return [one, two]


def _strided(rng) -> list:
    out = []
    for k, stride in enumerate(rng.sample((2, 3, 4), 2)):
        text = (f"/* strided load: every {stride}th element */\n" + f"double a[{stride}*N], b[N];\ndouble s;\n"
                + _loop1(f"b[i] = s * a[{stride}*i];"))
        out.append(CorpusKernel(f"strided-load-{stride}-double", text, ("strided",), ("N",), min_size=64,
                                quick=k == 0))
    stride = rng.choice((2, 3))
    text = (f"/* strided store: every {stride}th element */\n" + f"double a[N], b[{stride}*N];\ndouble s;\n"
            + _loop1(f"b[{stride}*i] = s * a[i];"))
    out.append(CorpusKernel(f"strided-store-{stride}-double", text, ("strided",), ("N",), min_size=64))
    text = ("/* transposed copy */\ndouble a[N][N], b[N][N];\n"
            "for (int j = 0; j < N; ++j)\n    for (int i = 0; i < N; ++i)\n        b[j][i] = a[i][j];\n")
    out.append(CorpusKernel("transpose-copy-double", text, ("strided", "transposed"), ("N",), min_size=8,
                            max_levels=3))
    return out


def _matrix(rng) -> list:
    out = []
    text = ("/* transposed matrix-vector product y = A^T x (inner loop along a row of A) */\n"
            "double A[M][N], x[M], y[N];\n"
            "for (int j = 0; j < M; ++j)\n    for (int i = 0; i < N; ++i)\n        y[i] += A[j][i] * x[j];\n")
    out.append(CorpusKernel("matvec-transposed-double", text, ("matrix-vector", "streaming", "in-place"),
                            ("M", "N")))
    text = ("/* matrix-vector product, column-wise traversal (inner loop down a column of A) */\n"
            "double A[N][M], x[N], y[M];\n"
            "for (int j = 0; j < M; ++j)\n    for (int i = 0; i < N; ++i)\n        y[j] += A[i][j] * x[i];\n")
    out.append(CorpusKernel("matvec-columns-double", text, ("matrix-vector", "strided", "transposed",
                                                            "reduction"), ("M", "N"), max_levels=3))
    ctype = rng.choice(("double", "float"))
    sp = ("single-precision",) if ctype == "float" else ()
    decl = _decl(ctype, ("A", "B", "C"), "[N][N]")
    ikj = ("for (int i = 0; i < N; ++i)\n    for (int k = 0; k < N; ++k)\n        for (int j = 0; j < N; ++j)\n"
           "            C[i][j] += A[i][k] * B[k][j];\n")
    ijk = ("for (int i = 0; i < N; ++i)\n    for (int j = 0; j < N; ++j)\n        for (int k = 0; k < N; ++k)\n"
           "            C[i][j] += A[i][k] * B[k][j];\n")
    out.append(CorpusKernel(f"matmat-ikj-{ctype}", "/* matrix-matrix product, i-k-j order */\n" + decl + ikj,
                            ("matrix-matrix", "streaming", "in-place") + sp, ("N",), quick=True))
    out.append(CorpusKernel("matmat-ijk-double", "/* matrix-matrix product, i-j-k order */\n"
                            + _decl("double", ("A", "B", "C"), "[N][N]") + ijk,
                            ("matrix-matrix", "strided", "reduction"), ("N",), max_levels=2))
    return out


def _expensive(rng) -> list:
    ctype = rng.choice(("double", "float"))
    sp = ("single-precision",) if ctype == "float" else ()
    sq = "sqrtf" if ctype == "float" else "sqrt"
    forms = (("div", "b[i] = a[i] / c[i];", ("a", "b", "c")), ("recip", "b[i] = s / a[i];", ("a", "b")),
             ("sqrt", f"b[i] = {sq}(a[i] * a[i] + c[i] * c[i]);", ("a", "b", "c")))
    out = []
    for k, (what, body, arrays) in enumerate(forms):
        text = f"/* {what} per element */\n" + _decl(ctype, arrays, "[N]") + _scalars(ctype, ["s"])
        out.append(CorpusKernel(f"expensive-{what}-{ctype}", text + _loop1(body), ("expensive-ops",) + sp, ("N",),
                                min_size=64, quick=k == 0))
    return out


def _compute(rng) -> list:
    out = []
    for k, degree in enumerate(sorted(rng.sample(range(8, 25), 3))):
        ctype = "float" if k == 2 else "double"
        coeffs = [f"p{d}" for d in range(degree + 1)]
        rhs = coeffs[-1]
        for c in coeffs[-2::-1]:
            rhs = f"({rhs}) * x[i] + {c}" if len(rhs) > 3 else f"{rhs} * x[i] + {c}"
        text = (f"/* Horner polynomial of degree {degree}: {2 * degree} FLOPs per element */\n"
                + _decl(ctype, ("x", "y"), "[N]") + _scalars(ctype, coeffs) + _loop1(f"y[i] = {rhs};"))
        fams = ("compute-bound",) + (("single-precision",) if ctype == "float" else ())
        out.append(CorpusKernel(f"horner-{degree}-{ctype}", text, fams, ("N",), min_size=64, quick=k == 0))
    return out


def _short(rng) -> list:
    out = []
    for k, trips in enumerate(sorted(rng.sample((8, 12, 16, 24, 32), 3))):
        ctype = "float" if k == 1 else "double"
        sp = ("single-precision",) if ctype == "float" else ()
        if k == 2:
            body = "b[j][i] = s * (a[j][i] + a[j-1][i] + a[j+1][i]);"
            text = (f"/* short inner loop ({trips} iterations): 3-point stencil across rows */\n"
                    + _decl(ctype, ("a", "b"), "[M][NI]") + _scalars(ctype, ["s"])
                    + "for (int j = 1; j < M-1; ++j)\n    for (int i = 0; i < NI; ++i)\n        " + body + "\n")
            fams = ("short-inner-loop", "stencil") + sp
        else:
            text = (f"/* short inner loop ({trips} iterations): triad per row */\n"
                    + _decl(ctype, ("a", "b", "c"), "[M][NI]") + _scalars(ctype, ["s"])
                    + "for (int j = 0; j < M; ++j)\n    for (int i = 0; i < NI; ++i)\n"
                    + "        a[j][i] = b[j][i] + s * c[j][i];\n")
            fams = ("short-inner-loop", "streaming") + sp
        out.append(CorpusKernel(f"short-inner-{trips}-{'stencil' if k == 2 else 'triad'}-{ctype}", text, fams,
                                ("M",), {"NI": trips}, min_size=8, quick=k == 0))
    return out


def corpus_kernels(seed: int = 0, quick: bool = False) -> tuple:
    """The corpus for ``seed``: the examples then the generated kernels, names unique.

    The same seed gives the same kernels (text and order); the seed varies the details
    (loads and stores of the streams, coefficients and term order, precision of some kernels,
    strides, polynomial degrees, short trip counts), not the families. ``quick``: the subset
    marked quick (every family of :data:`FAMILIES` at least once, about a dozen kernels).
    """
    rng = random.Random(seed)
    made = list(example_kernels())
    for part in (_streams, _reductions, _stencils, _updates, _strided, _matrix, _expensive, _compute, _short):
        made += part(rng)
    return tuple(k for k in made if k.quick or not quick)
