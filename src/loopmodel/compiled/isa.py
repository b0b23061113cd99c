"""SIMD instruction-set level of compiler flags, of analyzer CPUs and of single instructions.

An analyzer can only time instructions its CPU model has. llvm-mca 14 rejects AVX-512 code
for ``-mcpu=znver3`` (or times some of its instructions as if they were AVX2 ones), and OSACA
0.7.1 reports no port pressure for instruction forms its model lacks. So the compiled
in-core analysis (:mod:`.incore`) compares

* the level the compiler flags produce: the compiler's predefined macros
  (``cc <flags> -dM -E - </dev/null``: ``__AVX512F__``, ``__AVX2__``, ``__AVX__`` on x86,
  ``__ARM_FEATURE_SVE``, ``__ARM_NEON`` on AArch64), cached per user;
* the level of the analyzer CPU: :data:`CPU_ISA`;
* the level of each instruction of the loop block: :func:`.instructions.isa_level`.

Levels, in increasing order: x86 ``SSE`` < ``AVX`` < ``AVX2`` < ``AVX-512``; AArch64
``NEON`` < ``SVE``. ``AVX2`` here includes FMA3 (both arrive with Haswell and Zen).
"""
from __future__ import annotations

import re

from .. import cache, toolchain
from ..errors import ToolError
from .instructions import isa_level

X86_LEVELS = ("SSE", "AVX", "AVX2", "AVX-512")
A64_LEVELS = ("NEON", "SVE")

#: llvm-mca CPU name (``-mcpu``, our machine files' ``in_core.llvm_mca_cpu``, the names the
#: Kerncraft converter derives from OSACA/IACA codes) -> highest SIMD level it implements.
#: Source: the processor feature lists of LLVM 14, llvm/lib/Target/X86/X86.td
#: (``SNBFeatures`` = AVX, ``HSWFeatures`` += AVX2/FMA, ``SKXFeatures`` += AVX512F,
#: ``ZNFeatures``..``ZN3Features`` = AVX2/FMA, znver4 (LLVM 16) += AVX512F) and
#: llvm/lib/Target/AArch64/AArch64.td (ThunderX2T99, Neoverse-N1: NEON; A64FX,
#: Neoverse-V1/N2: SVE).
CPU_ISA = {
    "x86-64": "SSE", "nehalem": "SSE", "westmere": "SSE", "x86-64-v2": "SSE",
    "sandybridge": "AVX", "corei7-avx": "AVX", "ivybridge": "AVX", "core-avx-i": "AVX", "btver2": "AVX",
    "bdver1": "AVX", "bdver2": "AVX", "bdver3": "AVX",
    "haswell": "AVX2", "core-avx2": "AVX2", "broadwell": "AVX2", "skylake": "AVX2", "alderlake": "AVX2",
    "x86-64-v3": "AVX2", "bdver4": "AVX2", "znver1": "AVX2", "znver2": "AVX2", "znver3": "AVX2",
    "skylake-avx512": "AVX-512", "skx": "AVX-512", "cascadelake": "AVX-512", "cooperlake": "AVX-512",
    "cannonlake": "AVX-512", "icelake-client": "AVX-512", "icelake-server": "AVX-512", "tigerlake": "AVX-512",
    "sapphirerapids": "AVX-512", "emeraldrapids": "AVX-512", "x86-64-v4": "AVX-512", "znver4": "AVX-512",
    "znver5": "AVX-512", "graniterapids": "AVX-512",
    "thunderx2t99": "NEON", "neoverse-n1": "NEON", "cortex-a72": "NEON", "cortex-a76": "NEON",
    "tsv110": "NEON", "apple-m1": "NEON",
    "a64fx": "SVE", "neoverse-v1": "SVE", "neoverse-n2": "SVE", "neoverse-v2": "SVE",
}


def rank(level: str | None) -> int:
    """Position of ``level`` in its family (-1 for None or unknown)."""
    for fam in (X86_LEVELS, A64_LEVELS):
        if level in fam:
            return fam.index(level)
    return -1


def cpu_isa(cpu: str | None) -> str | None:
    """The SIMD level of llvm-mca CPU ``cpu`` (:data:`CPU_ISA`), None when not tabulated."""
    return CPU_ISA.get((cpu or "").lower())


def level_from_macros(text: str, aarch64: bool = False) -> str:
    """SIMD level from the compiler's predefined macros (``-dM -E`` output)."""
    defined = set(re.findall(r"^#define\s+(\w+)", text, re.M))
    if aarch64:
        return "SVE" if "__ARM_FEATURE_SVE" in defined else "NEON"
    for macro, level in (("__AVX512F__", "AVX-512"), ("__AVX2__", "AVX2"), ("__AVX__", "AVX")):
        if macro in defined:
            return level
    return "SSE"


def flags_isa(command: str, flags: tuple, version: str, aarch64: bool = False) -> str | None:
    """The SIMD level ``command flags`` compiles for (predefined macros), cached per user.

    Returns:
        A level name, or None when the compiler cannot be asked (then nothing is compared).
    """
    key = cache.make_key("isa-macros-v1", command, version, tuple(flags), aarch64)
    hit = cache.load("isa", key)
    if isinstance(hit, str):
        return hit
    try:
        macros = toolchain.compile_c("", command, [f for f in flags if f not in ("-S", "-c")], "macros", "flags")
    except ToolError:
        return None
    level = level_from_macros(macros, aarch64)
    cache.store("isa", key, level)
    return level


def beyond(lines, level: str | None, aarch64: bool = False) -> list:
    """Instructions of ``lines`` that need more than ``level`` (empty when ``level`` is None)."""
    if level is None or rank(level) < 0:
        return []
    return [ln for ln in lines if rank(isa_level(ln, aarch64)) > rank(level)]
