"""In-core figures a machine model lacks, filled from a named source: the one owner.

The analytic in-core model (:mod:`loopmodel.models.incore`) needs a throughput per operation
type (cross-architecture-machine-models.txt §3.3 and §3.4.1 eq. 2: instructions per cycle at
full SIMD width) and, for the operations on a loop-carried dependency chain, a latency
(kerncraft-tool-paper.txt §2.3). Where the machine file, its probe section and the
micro-architecture's documented latencies (:func:`loopmodel.machine.latency.documented_latency`,
which the model reads itself) give none, :func:`filled_machine` completes the machine model
before the model runs (the model stays pure: it never runs a tool), each figure from
:func:`missing_figure`:

* llvm-mca's scheduling model of the CPU the compiled in-core analysis gives the machine
   (``in_core.llvm_mca_cpu``, as :func:`loopmodel.compiled.llvm_mca.cpu_for` chooses it), run on
   one instruction of the operation at the register width asked (x86 ``vaddpd %ymm1, %ymm2,
   %ymm0``; AArch64 ``fadd v0.2d, v1.2d, v2.2d``, SVE ``fadd z0.d, z1.d, z2.d`` above 16 B;
   double precision, as the machine files' figures): the Latency column of its instruction-info
   view in cy, and 1 / RThroughput as instructions per cycle.

A filled figure is the machine file's kind of figure: a throughput at full SIMD width, a latency
at the widest width (the width the file's latencies are given at).

llvm-mca runs once per (llvm-mca, CPU, instruction) in a process (:func:`functools.lru_cache`),
so sweeps do not rerun it. Where no source gives the figure, ``value`` is None and ``source``
says why (no llvm-mca, no CPU name, no instruction form for the operation or ISA, llvm-mca
failed); the in-core model then leaves T_OL unknown, as without this module.
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

from ..errors import ToolError
from ..models.incore import missing_data
from .llvm_mca import cpu_for, find_llvm_mca, instruction_timing, version

#: operation -> x86 AVX mnemonic stem (``pd``/``sd``/``ss`` suffix by width) and operand count
_X86 = {"ADD": ("vadd", 3), "MUL": ("vmul", 3), "DIV": ("vdiv", 3), "FMA": ("vfmadd231", 3), "SQRT": ("vsqrt", 2)}
#: operation -> AArch64 (scalar / NEON, SVE) instruction templates; {r} register prefix, {t} element suffix
_A64 = {"ADD": ("fadd {r}0{t}, {r}1{t}, {r}2{t}", "fadd z0.d, z1.d, z2.d"),
        "MUL": ("fmul {r}0{t}, {r}1{t}, {r}2{t}", "fmul z0.d, z1.d, z2.d"),
        "DIV": ("fdiv {r}0{t}, {r}1{t}, {r}2{t}", "fdiv z0.d, p0/m, z0.d, z1.d"),
        "SQRT": ("fsqrt {r}0{t}, {r}1{t}", "fsqrt z0.d, p0/m, z1.d"),
        "FMA": ("fmla {r}0{t}, {r}1{t}, {r}2{t}", "fmla z0.d, p0/m, z1.d, z2.d")}


@dataclasses.dataclass(frozen=True)
class Filled:
    """A figure the machine model lacks, and where it comes from.

    Attributes:
        value: latency in cy (``kind="latency"``) or throughput in instructions per cycle
            (``kind="throughput"``); None where no source gives it.
        source: the source (``documented for SKX``, ``llvm-mca 19.1.7's skylake model (vaddpd
            %ymm1, %ymm2, %ymm0)``), or why there is no figure.
    """

    value: float | None
    source: str


def filled_machine(kernel, machine) -> tuple:
    """``(machine, notes)``: ``machine`` with the throughputs and latencies the analytic in-core
    model needs for ``kernel`` and the model lacks (:func:`loopmodel.models.incore.missing_data`)
    filled in from :func:`missing_figure`, and one note per filled figure naming its source; the
    model unchanged and no notes where nothing is missing or no source has it (the model then
    reports what is missing).

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel`.
        machine: :class:`~loopmodel.machine.model.MachineModel`.
    """
    missing = missing_data(kernel, machine)
    if not missing:
        return machine, ()
    ic = machine.in_core
    tables = {"throughput": dict(ic.throughput), "latency": dict(ic.latency)}
    notes = []
    for kind, op in missing:
        got = missing_figure(machine, kind, op)
        if got.value is None:
            continue
        tables[kind][op] = got.value
        figure = (f"{got.value:.4g} instructions/cy ({1 / got.value:.4g} cy per instruction)" if kind == "throughput"
                  else f"{got.value:.4g} cy")
        notes.append(f"{op} {kind} {figure} from {got.source}: the machine file gives none")
    if not notes:
        return machine, ()
    in_core = dataclasses.replace(ic, throughput=tables["throughput"], latency=tables["latency"])
    return dataclasses.replace(machine, in_core=in_core), tuple(notes)


def missing_figure(machine, kind: str, op: str, width: float | None = None) -> Filled:
    """The ``kind`` (``"latency"`` or ``"throughput"``) of ``op`` at a register of ``width`` bytes
    (None: the machine's SIMD width) from llvm-mca's scheduling model (module docstring), for a
    machine model that lacks it; the caller reads the machine model's own figures first.

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        kind: ``"latency"`` (cy) or ``"throughput"`` (instructions/cy, cross-architecture paper eq. 2).
        op: operation type (ADD, MUL, FMA, DIV, SQRT; others have no source here).
        width: register width in bytes (4, 8: scalar; 16, 32, 64: vectors).

    Returns:
        :class:`Filled` (``value`` None with the reason where no source has it).

    Raises:
        KeyError: ``kind`` is neither.
    """
    if kind not in ("latency", "throughput"):
        raise KeyError(kind)
    width = int(width or machine.in_core.simd_width)
    line = instruction_form(machine.isa, op, width)
    if line is None:
        return Filled(None, f"llvm-mca has no single instruction of {op} on {machine.isa or 'x86'} here")
    path, version = _llvm_mca()
    if path is None:
        return Filled(None, "llvm-mca not found (Debian: apt-get install llvm), so it cannot give one")
    cpu, _ = cpu_for(machine, path, version)
    if not cpu:
        return Filled(None, "the machine file names no in_core.llvm_mca_cpu for llvm-mca to model")
    latency, rthroughput, error = _timing(path, cpu, _aarch64(machine.isa), line)
    if error:
        return Filled(None, f"llvm-mca gave none: {error}")
    value = latency if kind == "latency" else (1.0 / rthroughput if rthroughput > 0 else None)
    if value is None or value <= 0:
        return Filled(None, f"llvm-mca {version}'s {cpu} model gives no {kind} for '{line}'")
    return Filled(value, f"llvm-mca {version}'s {cpu} model ({line})")


def instruction_form(isa: str | None, op: str, width: int) -> str | None:
    """One register-only instruction of ``op`` on a ``width``-byte register (double precision;
    4 B: single scalar) in llvm-mca's assembly syntax for ``isa`` (``x86``: AT&T AVX, ``aarch64``:
    scalar, NEON to 16 B, SVE above); None where there is none (another op or ISA)."""
    if _aarch64(isa):
        if op not in _A64:
            return None
        if width > 16:
            return _A64[op][1]
        reg, suffix = {4: ("s", ""), 8: ("d", "")}.get(width, ("v", ".2d"))
        if op == "FMA" and not suffix:  # the scalar fused multiply-add has four operands
            return f"fmadd {reg}0, {reg}1, {reg}2, {reg}3"
        return _A64[op][0].format(r=reg, t=suffix)
    if (isa or "x86").lower() not in ("x86", "x86_64", "amd64") or op not in _X86:
        return None
    stem, operands = _X86[op]
    suffix = "ss" if width <= 4 else "sd" if width <= 8 else "pd"
    reg = "zmm" if width > 32 else "ymm" if width > 16 else "xmm"
    regs = [f"%{reg}{k}" for k in range(1, operands)] + [f"%{reg}0"]
    if op == "SQRT" and suffix != "pd":  # scalar square root takes a pass-through source
        regs = [f"%{reg}1", f"%{reg}2", f"%{reg}0"]
    return f"{stem}{suffix} {', '.join(regs)}"


def _aarch64(isa: str | None) -> bool:
    return (isa or "").lower() in ("aarch64", "arm64", "armv8")


@lru_cache(maxsize=8)
def _version(path: str) -> str:
    """llvm-mca's version at ``path``, asked once per process."""
    return version(path)


def _llvm_mca() -> tuple:
    """``(path, version)`` of the llvm-mca to use (``$LOOPMODEL_LLVM_MCA`` or the newest on
    ``$PATH``, :func:`loopmodel.compiled.llvm_mca.find_llvm_mca`), or ``(None, '')``: none."""
    path = find_llvm_mca()
    return (path, _version(path)) if path else (None, "")


@lru_cache(maxsize=256)
def _timing(path: str, cpu: str, aarch64: bool, line: str) -> tuple:
    """``(latency cy, reciprocal throughput cy, '')`` of ``line`` alone from llvm-mca at ``path``
    for ``-mcpu=cpu``, or ``(None, None, why)``; cached per process."""
    try:
        t = instruction_timing(line, cpu, path, aarch64)
    except ToolError as exc:
        return None, None, str(exc)
    return t.latency, t.rthroughput, ""
