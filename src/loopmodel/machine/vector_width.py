"""The SIMD width a compiler vectorizes with, from its flags: the one place that decides it.

A core's widest register is not the width compiled loops use. gcc 12 and clang tune Intel's
AVX-512 cores (Skylake-SP and later) to prefer 256-bit vectors: ``gcc -O3
-march=skylake-avx512`` emits ymm code for a streaming loop (checked with gcc 12.2 on
skylake-avx512, icelake-server, sapphirerapids; ``-march=knl`` and ``-mavx512f`` with generic
tuning emit zmm), and Zen 1 tuning prefers 128-bit vectors (``-march=znver1``: xmm). The
preference follows ``-mtune`` (else ``-march``) and ``-mprefer-vector-width=128|256|512``
overrides it. The Intel compilers take ``-qopt-zmm-usage=low|high`` (``low``, 256-bit, the
default for ``-xCORE-AVX512``). On AArch64 ``-msve-vector-bits=N`` fixes an SVE length, else
the machine's registers. The width is then no wider than the registers the flags enable
(``-march``, ``-m<isa>``, ``-x<code>``) nor than the machine model's ``in_core.simd_width``.
Flags that name no target (``-march=native``, ``-xHost``, none at all) leave the machine
model's width: the model describes the host the code is compiled for.

Sources: gcc 12 manual, x86 options (``-mprefer-vector-width``) and gcc's
config/i386/x86-tune.def (``X86_TUNE_AVX256_OPTIMAL`` for the Intel AVX-512 cores,
``X86_TUNE_AVX128_OPTIMAL`` for Bulldozer, Jaguar and Zen 1); LLVM X86.td
(``TuningPrefer256Bit`` on the same Intel cores); Intel C++ compiler reference,
``-qopt-zmm-usage``; gcc AArch64 options (``-msve-vector-bits``).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass

#: -march / -mtune names that enable AVX-512 registers (64 B)
_AVX512 = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client", "icelake-server",
           "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids", "x86-64-v4", "knl",
           "knm", "znver4", "znver5")
#: names that enable AVX or AVX2 (32 B)
_AVX = ("sandybridge", "corei7-avx", "ivybridge", "core-avx-i", "haswell", "core-avx2", "broadwell", "skylake",
        "alderlake", "raptorlake", "meteorlake", "x86-64-v3", "bdver1", "bdver2", "bdver3", "bdver4", "btver2",
        "znver1", "znver2", "znver3")
#: tunings whose vectorizer prefers 256-bit vectors (x86-tune.def ``X86_TUNE_AVX256_OPTIMAL``, m_CORE_AVX512)
_PREFER_256 = ("skylake-avx512", "cascadelake", "cooperlake", "cannonlake", "icelake-client", "icelake-server",
               "tigerlake", "rocketlake", "sapphirerapids", "emeraldrapids", "graniterapids")
#: tunings that prefer 128-bit vectors (``X86_TUNE_AVX128_OPTIMAL``: m_BDVER, m_BTVER2, m_ZNVER1)
_PREFER_128 = ("bdver1", "bdver2", "bdver3", "bdver4", "btver2", "znver1")
#: Intel compilers' -x / -ax codes -> register bytes
_INTEL_X = {"core-avx512": 64, "common-avx512": 64, "mic-avx512": 64, "sapphirerapids": 64, "icelake-server": 64,
            "core-avx2": 32, "avx": 32, "core-avx-i": 32, "sse4.2": 16, "sse4.1": 16, "sse3": 16, "ssse3": 16,
            "sse2": 16}
#: ``-m<isa>`` switches -> register bytes they enable
_M_ISA = {"avx512f": 64, "avx2": 32, "avx": 32}
#: ``-mno-<isa>`` switches -> register bytes left
_M_NO_ISA = {"avx512f": 32, "avx2": 32, "avx": 16}


@dataclass(frozen=True)
class VectorWidth:
    """The SIMD width compiled loops use.

    Attributes:
        bytes: vector register bytes (16, 32, 64; the machine's ``in_core.simd_width`` at most).
        reason: which flag or tuning sets it, for notes.
    """

    bytes: int
    reason: str


def compiler_vector_width(isa: str | None, machine_width: float, command: str | None, flags) -> VectorWidth:
    """The SIMD width ``command flags`` vectorizes loops with on a machine of ``machine_width`` B registers.

    Args:
        isa: the machine's ISA (``x86``, ``aarch64``, ...; None: x86).
        machine_width: the machine model's ``in_core.simd_width``, B.
        command: compiler command (``gcc``, ``/opt/bin/icx``; None: none named).
        flags: compiler flags (a sequence of str), or None where no flags are given (then the
            machine model's width).

    Returns:
        :class:`VectorWidth`; rules and sources in the module docstring.
    """
    hw = max(1, int(machine_width or 16))
    if flags is None:
        return VectorWidth(hw, "no compiler flags: the machine model's in_core.simd_width")
    flags = [str(f) for f in flags]
    if not (isa or "x86").lower().startswith(("x86", "amd64", "i686")):
        bits = _last(flags, r"-msve-vector-bits=(\d+)")
        if bits and hw > 16:
            return VectorWidth(min(hw, int(bits) // 8), f"-msve-vector-bits={bits}")
        return VectorWidth(hw, "the machine model's in_core.simd_width")
    regs = register_width(flags)
    if regs is None:
        return VectorWidth(hw, "flags name no target (native or none given): the machine model's in_core.simd_width")
    want, why = _preferred(os.path.basename(command or "gcc"), flags, regs)
    width = min(hw, regs, want)
    return VectorWidth(width, why if width == want else f"{why}, limited by the machine's {hw} B registers")


def register_width(flags) -> int | None:
    """Widest x86 SIMD register (B) the flags enable: the last ``-march=``/``-x<code>`` and any
    ``-mavx512f``/``-mavx2``/``-mavx`` (``-mno-...`` removes); 16 for flags without a target
    (x86-64 has SSE2); None where the target is the host (``-march=native``, ``-xHost``)."""
    flags = [str(f) for f in flags]
    march = _last(flags, r"-march=(\S+)")
    xcode = _last(flags, r"-a?x([A-Za-z][\w.-]*)")
    if (march or "").lower() == "native" or (xcode or "").lower() == "host":
        return None
    width = 16
    if march:
        m = march.lower()
        width = 64 if m in _AVX512 else 32 if m in _AVX else 16
    if xcode and xcode.lower() in _INTEL_X:
        width = max(width, _INTEL_X[xcode.lower()])
    for f in flags:
        sw = re.fullmatch(r"-m(no-)?(avx512f|avx2|avx)", f)
        if sw:
            width = min(width, _M_NO_ISA[sw.group(2)]) if sw.group(1) else max(width, _M_ISA[sw.group(2)])
    return width


def _preferred(name: str, flags: list, regs: int) -> tuple:
    """``(bytes, reason)``: the width the compiler's vectorizer prefers with these flags."""
    explicit = _last(flags, r"-mprefer-vector-width=(\d+|none)")
    if explicit and explicit != "none":
        return int(explicit) // 8, f"-mprefer-vector-width={explicit}"
    zmm = _last(flags, r"-qopt-zmm-usage=(low|high)")
    if name.startswith(("icc", "icpc", "icx", "icpx")):
        if regs == 64 and zmm != "high":
            return 32, f"{name} uses 256-bit vectors on AVX-512 unless -qopt-zmm-usage=high"
        return regs, f"{name} {'-qopt-zmm-usage=high' if zmm else 'vectorizes with its target registers'}"
    tune = (_last(flags, r"-mtune=(\S+)") or _last(flags, r"-march=(\S+)") or "generic").lower()
    if tune in _PREFER_256 and regs > 32:
        return 32, f"{name} tuned for {tune} prefers 256-bit vectors (-mprefer-vector-width=512 for 512-bit)"
    if tune in _PREFER_128 and regs > 16:
        return 16, f"{name} tuned for {tune} prefers 128-bit vectors (-mprefer-vector-width=256 for 256-bit)"
    return regs, f"{name} vectorizes with the {regs * 8}-bit registers its flags enable"


def _last(flags: list, pattern: str) -> str | None:
    """Group 1 of the last flag matching ``pattern`` in full, None if none does."""
    found = None
    for f in flags:
        m = re.fullmatch(pattern, f)
        if m:
            found = m.group(1)
    return found
