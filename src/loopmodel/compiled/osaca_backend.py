"""OSACA back-end (optional extra ``pip install loopmodel[osaca]``; AGPL, imported lazily).

Runs OSACA's Python API on the kernel's loop block: per-port pressure of the optimal
schedule (cycles per pass), the longest loop-carried dependency and the critical path.
"""
from __future__ import annotations

from functools import lru_cache

from .. import toolchain
from ..errors import ToolError
from .llvm_mca import PortReport
from .ports import FUSABLE, access_kind

#: loopmodel machine-model micro-architecture -> OSACA architecture code
ARCH = {"sandybridge": "SNB", "ivybridge": "IVB", "haswell": "HSW", "broadwell": "BDW", "skylake": "SKL",
        "skylake-avx512": "SKX", "cascadelake": "CSX", "icelake-server": "ICX", "znver1": "ZEN1",
        "znver2": "ZEN2", "znver3": "ZEN3", "thunderx2t99": "TX2", "a64fx": "A64FX", "neoverse-n1": "N1"}


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
    """Whether OSACA is installed."""
    return osaca_modules() is not None


def version() -> str:
    """OSACA's version (``'0.7.1'``; ``'not installed'``), by :func:`loopmodel.toolchain.package_version`."""
    return toolchain.package_version("osaca")


def arch_for(machine) -> str:
    """OSACA's architecture code for ``machine`` (from ``in_core.llvm_mca_cpu``)."""
    cpu = (machine.in_core.llvm_mca_cpu or "").lower()
    if cpu in ARCH:
        return ARCH[cpu]
    raise ToolError(f"no OSACA architecture known for machine model '{machine.name}' (llvm_mca_cpu '{cpu}')")


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
        raise ToolError("OSACA is not installed (pip install 'loopmodel[osaca]'); or use --incore llvm-mca")
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
                      unknown=tuple(unknown_forms(forms)), store_ports=tuple(_store_ports(forms, names, aarch64)))


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


def _store_ports(forms: list, names: list, aarch64: bool) -> list:
    """Ports on which the block's store instructions put pressure."""
    out = set()
    for f in forms:
        if access_kind(_text(f), aarch64)[1]:
            out |= {n for n, v in zip(names, _get(f, "port_pressure") or []) if float(v) > 0}
    return sorted(out)
