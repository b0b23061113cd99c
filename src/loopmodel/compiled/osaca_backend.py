"""OSACA back-end (optional extra ``pip install loopmodel[osaca]``; AGPL, imported lazily).

Runs OSACA's Python API on the kernel's loop block: per-port pressure of the optimal
schedule (cycles per pass), the longest loop-carried dependency and the critical path.
"""
from __future__ import annotations

import importlib.util
from functools import lru_cache

from .. import toolchain
from ..errors import ToolError
from .checked import register_forms
from .llvm_mca import InstrTiming, PortReport, host_class
from .instructions import access_kind
from .ports import FUSABLE

#: CPU name (a machine file's ``in_core.llvm_mca_cpu``, gcc's and LLVM's ``-march``/``-mcpu``
#: names, or a host class of :func:`~.llvm_mca.host_class`) -> OSACA architecture code: every
#: model OSACA 0.7.1 ships (``osaca/data/*.yml``: SNB IVB HSW BDW SKX CSX ICL ICX SPR ZEN1-4 TX2
#: N1 V2 A64FX A72 TSV110 M1). ``cooperlake`` is Cascade Lake with BF16 (CSX); Emerald Rapids has
#: Sapphire Rapids' core. OSACA has no client Skylake, Tiger Lake or Zen 5 model: those are not
#: mapped (a neighbour's model would be timed as this CPU's, without a word).
ARCH = {"sandybridge": "SNB", "corei7-avx": "SNB", "ivybridge": "IVB", "core-avx-i": "IVB",
        "haswell": "HSW", "core-avx2": "HSW", "broadwell": "BDW", "skylake-avx512": "SKX", "skx": "SKX",
        "cascadelake": "CSX", "cooperlake": "CSX", "icelake-client": "ICL", "icelake-server": "ICX",
        "sapphirerapids": "SPR", "emeraldrapids": "SPR",
        "znver1": "ZEN1", "znver2": "ZEN2", "znver3": "ZEN3", "znver4": "ZEN4",
        "thunderx2t99": "TX2", "neoverse-n1": "N1", "neoverse-v2": "V2", "a64fx": "A64FX",
        "cortex-a72": "A72", "tsv110": "TSV110", "apple-m1": "M1"}


@lru_cache(maxsize=1)
def osaca_modules() -> tuple | None:
    """``(osaca.parser, osaca.semantics)``, or None where OSACA is not installed.

    The one place loopmodel imports OSACA: an optional extra (AGPL licence, heavy to import),
    needed only for ``--incore osaca``, so it is imported here on first use.
    """
    try:
        from osaca import parser, semantics
    except ImportError:
        return None
    return parser, semantics


def available() -> bool:
    """Whether OSACA is installed: its package is found on the path (``importlib.util.find_spec``),
    not imported (networkx and pyparsing take 0.2-0.4 s); a package found that cannot be imported
    is a :class:`~loopmodel.errors.ToolError` of :func:`run`."""
    return importlib.util.find_spec("osaca") is not None


def version() -> str:
    """OSACA's version (``'0.7.1'``; ``'not installed'``), by :func:`loopmodel.toolchain.package_version`."""
    return toolchain.package_version("osaca")


def arch_for(machine) -> tuple:
    """``(arch, note)``: OSACA's architecture code for ``machine`` (:data:`ARCH` of
    ``in_core.llvm_mca_cpu``, or of the host's generation where the probe shows a newer one than
    that name, :func:`~.llvm_mca.host_class`); ``note`` says why where the generation decided
    ('' otherwise).

    Raises:
        ToolError: OSACA has no model of that CPU.
    """
    cpu = (machine.in_core.llvm_mca_cpu or "").lower()
    cls, why = host_class(machine)
    if cls is not None:
        if cls not in ARCH:
            raise ToolError(f"no OSACA architecture for a {cls} host ({why}; machine model '{machine.name}')")
        return ARCH[cls], f"OSACA {version()} {ARCH[cls]}: the host is a {cls} ({why}); llvm_mca_cpu says '{cpu}'"
    if cpu in ARCH:
        return ARCH[cpu], ""
    raise ToolError(f"no OSACA architecture known for machine model '{machine.name}' (llvm_mca_cpu '{cpu}')")


def cpu_of(arch: str) -> str | None:
    """An llvm-mca CPU name of OSACA's architecture ``arch`` (the first in :data:`ARCH`), whose
    SIMD level is the one OSACA models (:data:`loopmodel.compiled.isa.CPU_ISA`); None if unknown."""
    return next((cpu for cpu, a in ARCH.items() if a == arch), None)


def run(block_text: str, arch: str, aarch64: bool = False) -> PortReport:
    """Analyze ``block_text`` with OSACA for ``arch``.

    Returns:
        :class:`~loopmodel.compiled.llvm_mca.PortReport`: ports in cy per pass, the
        throughput bound (largest port pressure) and, as ``cycles_per_pass``, the larger of
        that bound and the longest loop-carried dependency.

    Raises:
        ToolError: OSACA missing or failing (one line).
    """
    modules = osaca_modules()
    if modules is None:
        raise ToolError("OSACA is not installed (pip install 'loopmodel[osaca]')")
    osaca_parser, osaca_semantics = modules
    try:
        parser = osaca_parser.ParserAArch64() if aarch64 else osaca_parser.ParserX86ATT()
        kernel = parser.parse_file(block_text)
        mm = osaca_semantics.MachineModel(arch=arch)
        sem = osaca_semantics.ArchSemantics(parser, mm)
        sem.normalize_instruction_forms(kernel)
        sem.add_semantics(kernel)
        sem.assign_optimal_throughput(kernel)
        tp = osaca_semantics.ArchSemantics.get_throughput_sum(kernel) or kernel[0].port_pressure
        dg = osaca_semantics.KernelDG(kernel, parser, mm, sem)
        deps = dg.get_loopcarried_dependencies()
        lcd = max((d["latency"] for d in deps.values()), default=0.0) if deps else 0.0
        extra = register_forms(block_text, aarch64)
        if extra:
            more = parser.parse_file("\n".join(extra) + "\n")
            sem.normalize_instruction_forms(more)
            sem.add_semantics(more)
    except ToolError:
        raise
    except Exception as exc:  # OSACA raises many kinds; the user gets one line
        raise ToolError(f"OSACA failed ({arch}): {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}") \
            from None
    ports: dict = {}
    names = [str(n) for n in mm.get_ports()]
    for name, v in zip(names, tp):
        ports[name] = max(ports.get(name, 0.0), float(v))
    bound = max(ports.values(), default=0.0)
    forms = [f for f in kernel if _mnemonic(f)]
    return PortReport(ports, bound, max(bound, float(lcd)), f"OSACA {version()} {arch}",
                      unknown=tuple(unknown_forms(forms)), store_ports=tuple(_store_ports(forms, names, aarch64)),
                      timings=tuple(_timings(forms + ([f for f in more if _mnemonic(f)] if extra else []))))


def _get(form, key):
    """A field of an OSACA instruction form (an object in 0.7, a dict before)."""
    return form.get(key) if isinstance(form, dict) else getattr(form, key, None)


def _mnemonic(form) -> str:
    """The mnemonic of an OSACA instruction form ('' for labels, directives, comments)."""
    return str(_get(form, "mnemonic") or _get(form, "instruction") or "").lower()


def _text(form) -> str:
    return " ".join(str(_get(form, "line") or _mnemonic(form)).split())


def unknown_forms(forms: list) -> list:
    """Lines of the instruction forms OSACA has no throughput for (its "X" rows).

    A compare/ALU instruction and the conditional jump directly after it are macro-fused
    into one uop (Sandy Bridge and later, Zen): either of the two may be unknown as long as
    OSACA times the other, which then stands for the fused uop
    (:func:`loopmodel.compiled.ports.fuse_compare_branch` does the same for llvm-mca). A
    compare with a memory operand is not exempt (its load must be timed).
    """
    def unknown(f) -> bool:
        return "tp_unknown" in [str(x) for x in (_get(f, "flags") or [])]

    def cond_jump(i) -> bool:
        return 0 <= i < len(forms) and _mnemonic(forms[i]).startswith("j") and _mnemonic(forms[i]) != "jmp"

    out = []
    for i, f in enumerate(forms):
        if not unknown(f):
            continue
        mnem = _mnemonic(f)
        if cond_jump(i) and i and FUSABLE.match(_mnemonic(forms[i - 1])) and not unknown(forms[i - 1]):
            continue
        if FUSABLE.match(mnem) and cond_jump(i + 1) and not unknown(forms[i + 1]) \
                and not any(access_kind(_text(f))):
            continue
        out.append(_text(f))
    return out


def _timings(forms: list) -> list:
    """Each timed form's latency and reciprocal throughput (:class:`~.llvm_mca.InstrTiming`); forms
    OSACA has no figures for are left out."""
    out = []
    for f in forms:
        lat, thr = _get(f, "latency"), _get(f, "throughput")
        if "tp_unknown" in [str(x) for x in (_get(f, "flags") or [])]:
            continue
        if isinstance(lat, (int, float)) and isinstance(thr, (int, float)):
            out.append(InstrTiming(_text(f), float(lat), float(thr)))
    return out


def _store_ports(forms: list, names: list, aarch64: bool) -> list:
    """Ports on which the block's store instructions put pressure and no instruction without a
    memory access does: a store that shuffles first (``vextractf128 $1, %ymm, mem``) also uses a
    shuffle port, which is the arithmetic's (T_OL), not a store port."""
    stores, other = set(), set()
    for f in forms:
        used = {n for n, v in zip(names, _get(f, "port_pressure") or []) if float(v) > 0}
        load, store = access_kind(_text(f), aarch64)
        if store:
            stores |= used
        elif not load:
            other |= used
    return sorted(stores - other)
