"""The host's CPU as the compiler names it, and the llvm-mca CPU model that fits it.

A machine model of the user's own machine needs the ``-march``/``-mcpu`` the compiler would
pick for it (``gcc -march=native -Q --help=target`` on x86, ``-mcpu=native`` on AArch64) and
an ``llvm_mca_cpu`` the installed llvm-mca knows. An llvm-mca older than the CPU does not know
its name; then the nearest older generation of the same line is taken and a note says so,
because its scheduling model may be wrong for this host (e.g. llvm-mca's znver3 model on a
Zen 5 assumes a 3-cycle FADD).
"""
from __future__ import annotations

import re
import tempfile

from .. import toolchain
from ..compiled import llvm_mca
from ..errors import ToolError

#: newer CPU name -> the generation before it (same vendor line), for llvm-mca versions
#: that do not know the newer one
OLDER = {
    "znver5": "znver4", "znver4": "znver3", "znver3": "znver2", "znver2": "znver1",
    "graniterapids": "sapphirerapids", "emeraldrapids": "sapphirerapids",
    "sapphirerapids": "icelake-server", "icelake-server": "cascadelake", "cascadelake": "skylake-avx512",
    "cooperlake": "cascadelake", "tigerlake": "icelake-client", "rocketlake": "icelake-client",
    "icelake-client": "cannonlake", "cannonlake": "skylake", "alderlake": "skylake",
    "raptorlake": "alderlake", "meteorlake": "alderlake", "arrowlake": "alderlake", "lunarlake": "alderlake",
    "neoverse-v2": "neoverse-v1", "neoverse-v1": "neoverse-n1", "neoverse-n2": "neoverse-n1",
}


def native_cpu(compiler: str = "gcc", aarch64: bool = False) -> str | None:
    """The CPU name ``compiler`` resolves ``native`` to (``"rocketlake"``, ``"znver4"``,
    ``"neoverse-v1"``), or None where the compiler cannot say (not installed, no such option).

    Raises:
        ToolError: ``compiler`` is not installed.
    """
    option = "-mcpu=native" if aarch64 else "-march=native"
    out = toolchain.tool_output(toolchain.find_compiler(compiler), [option, "-Q", "--help=target"])
    key = "mcpu" if aarch64 else "march"
    m = re.search(rf"^\s*-{key}=\s+(\S+)\s*$", out, re.MULTILINE)
    return m.group(1) if m and m.group(1) != "native" else None


def llvm_mca_cpus(path: str) -> frozenset:
    """CPU names the llvm-mca at ``path`` knows (:func:`loopmodel.compiled.llvm_mca.known_cpus`)."""
    return llvm_mca.known_cpus(path)


def llvm_mca_cpu_for(name: str, known: frozenset) -> tuple:
    """``(llvm-mca CPU, note)`` for the compiler's CPU ``name``: the name itself when llvm-mca
    knows it (note None), else the nearest older generation it knows (:data:`OLDER`) with a
    note that its model is of an older CPU, else ``(None, note)``."""
    cpu, seen = name, []
    while cpu is not None and cpu not in known:
        seen.append(cpu)
        cpu = OLDER.get(cpu)
    if cpu == name:
        return cpu, None
    if cpu is None:
        return None, f"llvm-mca knows no model for '{name}' or an older generation of it"
    return cpu, (f"llvm-mca knows no '{name}': the model of '{cpu}', an older generation, is used; "
                 "its latencies and ports may differ from this host")


#: dependent chains of one instruction (AT&T on x86, AArch64 syntax): its latency is the
#: analyzer's cycles per pass
_CHAINS = {
    "x86": {"ADD": "vaddpd %{r}1, %{r}0, %{r}0", "MUL": "vmulpd %{r}1, %{r}0, %{r}0",
            "FMA": "vfmadd231pd %{r}1, %{r}2, %{r}0"},
    "aarch64": {"ADD": "fadd v0.2d, v0.2d, v1.2d", "MUL": "fmul v0.2d, v0.2d, v1.2d",
                "FMA": "fmla v0.2d, v1.2d, v2.2d"},
}
_X86_REG = {16: "xmm", 32: "ymm", 64: "zmm"}


def mca_latency_check(cpu: str, measured: dict, width: int, aarch64: bool = False, path: str | None = None,
                      tolerance: float = 0.2) -> tuple:
    """Compare llvm-mca's latency of ADD, MUL and FMA for ``-mcpu=cpu`` with the host's.

    Args:
        cpu: the llvm-mca CPU name.
        measured: op (``ADD``, ``MUL``, ``FMA``) -> measured latency in cy at ``width``.
        width: SIMD width in bytes the latencies were measured at (x86: 16, 32 or 64).
        tolerance: relative difference above which a note is given.
    Returns:
        ``(rows, notes)``: rows ``{"op", "measured_cy", "llvm_mca_cy"}``; one note per op whose
        figures differ by more than ``tolerance`` (compiled in-core predictions with llvm-mca
        then charge the wrong latency for dependent chains on this host).
    """
    isa = "aarch64" if aarch64 else "x86"
    reg = _X86_REG.get(width)
    if isa == "x86" and reg is None:
        return (), ()
    rows, notes = [], []
    for op, cy in measured.items():
        form = _CHAINS[isa].get(op)
        if form is None or not cy:
            continue
        try:
            mca = llvm_mca.run(form.format(r=reg) + "\n", cpu, path, aarch64).cycles_per_pass
        except ToolError:
            continue
        rows.append({"op": op, "measured_cy": round(cy, 2), "llvm_mca_cy": round(mca, 2)})
        if abs(mca - cy) > tolerance * cy:
            notes.append(f"llvm-mca's model '{cpu}' assumes a latency of {mca:.3g} cy for {op}; {cy:.3g} cy measured on "
                         "this host: llvm-mca in-core figures of dependent chains will be off here")
    return tuple(rows), tuple(notes)


_VECTOR_LOOP = "void f(double *restrict a, const double *restrict b, long n)\n" \
               "{\n    for (long i = 0; i < n; ++i)\n        a[i] = a[i] + 2.0 * b[i];\n}\n"


def compiler_simd_width(compiler: str, flags) -> int | None:
    """SIMD width in bytes the compiler uses for a plain streaming loop with ``flags``
    (64: zmm, 32: ymm, 16: xmm or AArch64 q registers), None where it does not vectorize or
    fails. gcc's -march=native on many AVX-512 CPUs prefers 256-bit vectors, so this, not
    the widest register the ISA has, is the width compiled kernels run at.
    """
    try:
        with tempfile.TemporaryDirectory(prefix="loopmodel-simd-") as d:
            text = toolchain.compile_c(_VECTOR_LOOP, compiler, tuple(flags), "assembly", "simd", d)
    except (ToolError, OSError):
        return None
    for reg, width in (("%zmm", 64), ("%ymm", 32), ("%xmm", 16)):
        if reg in text:
            return width
    if re.search(r"\bv\d+\.2d\b|\bq\d+\b|\bz\d+\.d\b", text):
        return 16
    return None
