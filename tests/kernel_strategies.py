"""Hypothesis strategies shared by the invariant suites: random affine kernels from the supported
C grammar, the bundled machine models, and sizes whose data sets span L1 to memory.

A :class:`KernelCase` is plain data (C text plus a name); its parsed IR is cached by text, so a
property test that draws the same kernel twice parses it once. Every strategy is deterministic
under :data:`PROPERTY_SETTINGS` (``derandomize=True``): the suite finds the same examples on
every run, and a failure is reproduced by running the test again.
"""
from __future__ import annotations

import zlib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from hypothesis import HealthCheck, settings
from hypothesis import strategies as st

ROOT = Path(__file__).resolve().parents[1]

#: derandomized (seeded) settings for the invariant suites; a test changes the count with
#: ``@settings(PROPERTY_SETTINGS, max_examples=N)``
PROPERTY_SETTINGS = settings(derandomize=True, deadline=None, max_examples=40, database=None,
                             suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much,
                                                    HealthCheck.data_too_large])


def _machine_names() -> tuple:
    from loopmodel.fileio.machine_files import builtin_names

    return tuple(sorted(builtin_names())) + tuple(sorted(str(p) for p in (ROOT / "examples" / "machines")
                                                         .glob("*.yml")))


#: built-in machine names and the example machine files (paths), in a fixed order
MACHINES = _machine_names()

#: loop variables, outermost first, and the size constant each runs to
LOOP_VARS = ("k", "j", "i")
SIZE_NAMES = ("L", "M", "N")


@lru_cache(maxsize=None)
def load(name: str):
    """The machine model ``name`` (built-in name or file path), loaded once per process."""
    from loopmodel.fileio.machine_files import load_machine

    return load_machine(name)


def machines(names=MACHINES):
    """Strategy: a loaded :class:`~loopmodel.machine.model.MachineModel` of ``names``."""
    return st.sampled_from(tuple(names)).map(load)


@dataclass(frozen=True)
class KernelCase:
    """A random kernel: C ``source`` in loopmodel's grammar, its ``name``, the number of loop levels
    ``dims``, the size constants it uses (``sizes``, outermost first) and the per-size halo (the
    largest offset in that dimension, so a size must exceed ``2*halo`` for a non-empty loop)."""

    source: str
    name: str
    dims: int
    sizes: tuple
    halos: tuple
    stride: int = 1  # largest inner-index factor of an array (its last extent is stride*size)

    @property
    def kernel(self):
        """The parsed :class:`~loopmodel.ir.kernel.Kernel` (cached by source text)."""
        return _parse(self.source, self.name)

    def write(self, folder) -> Path:
        """Write the source to ``folder/<name>.c`` and return the path (for CLI tests)."""
        path = Path(folder) / f"{self.name}.c"
        path.write_text(self.source)
        return path


@lru_cache(maxsize=512)
def _parse(source: str, name: str):
    from loopmodel.fileio.c_kernel import parse_kernel

    return parse_kernel(source, f"{name}.c")[0]


def _index(dims: int, offsets: tuple, transposed: bool = False, factor: int = 1) -> str:
    """``[j+1][i-2]``-style subscripts of a ``dims``-deep nest (``transposed``: the last two swapped;
    ``factor``: the innermost variable scaled, a strided access)."""
    names = list(LOOP_VARS[3 - dims:])
    if transposed and dims >= 2:
        names[-1], names[-2] = names[-2], names[-1]
    parts = []
    for pos, (var, off) in enumerate(zip(names, offsets)):
        scaled = f"{factor}*{var}" if factor != 1 and pos == dims - 1 else var
        parts.append(f"[{scaled}{off:+d}]" if off else f"[{scaled}]")
    return "".join(parts)


@st.composite
def _reads(draw, dims: int, arrays: tuple, strided: bool):
    """Read accesses: (array, offsets, transposed, factor) tuples. Transposition (column order)
    and the stride factor are per array, so every access of an array fits its one shape."""
    out = []
    for name in arrays:
        transposed = strided and dims >= 2 and draw(st.integers(0, 3)) == 0
        factor = draw(st.sampled_from((2, 3, 4))) if strided and not transposed and \
            draw(st.integers(0, 2)) == 0 else 1
        for _ in range(draw(st.integers(1, 3))):
            offs = tuple(0 if transposed else draw(st.integers(-2, 2)) for _ in range(dims))
            out.append((name, offs, transposed, factor))
    return out


def _term(draw, access: tuple, dims: int, coefficients: list) -> str:
    name, offs, transposed, factor = access
    ref = f"{name}{_index(dims, offs, transposed, factor)}"
    shape = draw(st.integers(0, 5))
    if shape == 0 and coefficients:
        return f"{draw(st.sampled_from(coefficients))} * {ref}"
    if shape == 1:
        return f"sqrt({ref})"
    return ref


@st.composite
def _expression(draw, reads: list, dims: int, coefficients: list) -> str:
    terms = [_term(draw, acc, dims, coefficients) for acc in reads]
    expr = terms[0]
    for t in terms[1:]:
        expr += f" {draw(st.sampled_from(('+', '+', '-', '*')))} {t}"
    if draw(st.integers(0, 5)) == 0:
        expr = f"({expr}) / {draw(st.sampled_from(('2.0', '(1.0 + ' + terms[-1] + ')')))}"
    return expr


def _declarations(arrays: dict, scalars: list, dims: int, extents: dict) -> str:
    lines = []
    for name, ctype in arrays.items():
        lines.append(f"{ctype} {name}{extents[name]};")
    if scalars:
        lines.append("double " + ", ".join(scalars) + ";")
    return "\n".join(lines)


def _loops(dims: int, halos: tuple, body: str) -> str:
    text, indent = "", ""
    for var, size, h in zip(LOOP_VARS[3 - dims:], SIZE_NAMES[3 - dims:], halos):
        text += f"{indent}for (int {var} = {h}; {var} < {size}-{h}; ++{var})\n" if h else \
            f"{indent}for (int {var} = 0; {var} < {size}; ++{var})\n"
        indent += "  "
    return text + indent + body + "\n"


def _extents(dims: int, reads: list, written: str, arrays: tuple) -> dict:
    """Each array's ``[..][..]`` declaration: the loop sizes, the last two swapped for a transposed
    array, the last scaled by the largest stride factor of its accesses."""
    sizes = list(SIZE_NAMES[3 - dims:])
    out = {}
    for name in arrays:
        accs = [a for a in reads if a[0] == name]
        transposed = any(a[2] for a in accs) and name != written
        factor = max([a[3] for a in accs] + [1])
        shape = list(sizes)
        if transposed:
            shape[-1], shape[-2] = shape[-2], shape[-1]
        if factor != 1:
            shape[-1] = f"{factor}*{shape[-1]}"
        out[name] = "".join(f"[{s}]" for s in shape)
    return out


@st.composite
def kernels(draw, dims=(1, 2, 3), strided: bool = False, compute_only: bool = False,
            float_types: bool = True):
    """Strategy of :class:`KernelCase`: a random affine loop nest of 1-3 levels.

    One array is written at the loop's own point (optionally also read: an update), or a scalar
    accumulates a reduction; 1-3 further arrays are read at offsets in -2..2 per dimension, with
    optional scalar coefficients, ``sqrt`` calls and a division. ``strided`` adds inner strides of
    2-4 elements and transposed (column-order) reads; ``compute_only`` draws a loop without arrays
    (numerical integration). Loop bounds leave a halo of the largest offset, so every access is
    inside its array.
    """
    if compute_only:
        return _compute_only(draw(st.integers(0, 2)))
    d = draw(st.sampled_from(tuple(dims)))
    n_arrays = draw(st.integers(1, 4))
    names = ("a", "b", "c", "d")[:n_arrays]
    types = {n: (draw(st.sampled_from(("double", "double", "float"))) if float_types else "double") for n in names}
    reduction = n_arrays == 1 or draw(st.integers(0, 4)) == 0
    written = None if reduction else names[0]
    read_arrays = names if reduction or draw(st.booleans()) else names[1:]
    reads = draw(_reads(d, read_arrays, strided))
    if written is not None:  # the written array's own reads stay at the point, unstrided: no carried dependency
        reads = [(n, tuple(0 for _ in o), False, 1) if n == written else (n, o, t, f) for n, o, t, f in reads]
    coefficients = [f"c{k}" for k in range(draw(st.integers(0, 2)))]
    expr = draw(_expression(reads, d, coefficients))
    body = f"s = s + {expr};" if reduction else f"{written}{_index(d, (0,) * d)} = {expr};"
    halos = tuple(max([abs(o[p]) for _, o, t, _ in reads if not t] + [0]) for p in range(d))
    scalars = coefficients + (["s"] if reduction else [])
    source = _declarations(types, scalars, d, _extents(d, reads, written, names)) + "\n" + _loops(d, halos, body)
    stride = max([f for *_, f in reads] + [1])
    name = f"k{zlib.crc32(source.encode()):08x}"
    return KernelCase(source, name, d, SIZE_NAMES[3 - d:], halos, stride)


def _compute_only(variant: int) -> KernelCase:
    body = ("x = (i + 0.5) * dx;\n  s = s + 4.0 / (1.0 + x * x);", "s = s + 1.0 / (i + 1.0);",
            "x = x * dx + 1.0;\n  s = s + sqrt(x);")[variant]
    source = f"double s, x, dx;\nfor (int i = 0; i < N; ++i) {{\n  {body}\n}}\n"
    return KernelCase(source, f"compute{variant}", 1, ("N",), (0,))


@st.composite
def sizes(draw, case: KernelCase, small: float = 1e3, large: float = 1e8):
    """Strategy: ``-D`` values for ``case`` whose iteration count lies in about ``[small, large]``
    (data sets from L1 to memory), each size above twice its halo so no loop is empty."""
    import math

    total = draw(st.floats(math.log10(small), math.log10(large)))
    out = {}
    shares = [draw(st.floats(0.2, 1.0)) for _ in case.sizes]
    for name, halo, share in zip(case.sizes, case.halos, shares):
        exponent = total * share / sum(shares)
        out[name] = max(2 * halo + 4, int(round(10 ** exponent)))
    return out


def analyze(case: KernelCase, machine, defines: dict, **options):
    """Library analysis of ``case`` on ``machine`` (a name/path or a loaded model) at ``defines``:
    :class:`~loopmodel.workflows.analysis.AnalysisResult`. The analytic in-core model unless ``incore`` is
    given; ``kernel_text`` is set, so the compiled analyzers work when asked for."""
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings

    options.setdefault("incore", "analytic")
    options.setdefault("kernel_text", case.source)
    model = load(machine) if isinstance(machine, str) else machine
    return Analyzer(case.kernel, model, AnalyzerSettings(**options)).run(defines)
