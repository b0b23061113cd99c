"""The analyzer's figures of a compiled loop block checked against the probe of its host.

llvm-mca and OSACA time each instruction with their CPU model; the probe (``loopmodel machine
probe``) measured the host's floating-point latencies and throughputs per operation and register
width. Where both exist the block's FP arithmetic instructions are classified (:func:`.instructions.parse`:
ADD, MUL, FMA, DIV, SQRT; width in B from the register) and the analyzer's latency and reciprocal
throughput of each class (llvm-mca's "Instruction Info" table, OSACA's instruction forms:
:class:`~.llvm_mca.InstrTiming`) are compared with the probe's (:class:`BackendCheck`, agreement
within :data:`TOLERANCE`). On this host (Sapphire Rapids class) llvm-mca 14's ``cooperlake``
times ``vaddsd`` at 4 cy where the probe measured 2.0 cy, llvm-mca 19's ``sapphirerapids`` a
``vdivsd`` at 1 cy per instruction where the probe measured 4.3 cy.

Throughput is corrected here (:func:`throughput_floor`); latency is the dependency-chain
analysis's business, which takes per-instruction figures from :func:`analyzer_latency` and
:func:`probe_latency`. ``--incore auto`` uses the check to pick the analyzer that agrees with the
probe (:func:`score`).
"""
from __future__ import annotations

from dataclasses import dataclass

import re

from ..machine import latency as mlat
from .instructions import access_kind, parse

#: relative difference up to which an analyzer's figure agrees with the probe's
TOLERANCE = 0.15
#: classes whose cost depends on the precision: the probe times the double-precision forms
#: (``vdivpd``, ``vsqrtpd``, ``fdiv d``), and single precision is cheaper (Zen 4: ``vdivps zmm``
#: measured 6.0 cy per instruction in a corpus kernel, the probe's ``vdivpd zmm`` 9.0), so a
#: single-precision instruction of these classes is not compared with the probe's figure
PRECISION_DEPENDENT = ("DIV", "SQRT")

def register_forms(block_text: str, aarch64: bool = False) -> list:
    """Register forms of the block's FP instructions that have only a memory-operand form in it
    (x86: ``vaddsd (%rdi), %xmm0, %xmm0`` -> ``vaddsd %xmm15, %xmm0, %xmm0``, the memory operand
    and its broadcast replaced by a register of the destination's kind), so that the analyzer's
    latency of the operation itself, without the load's, can be read; AArch64 arithmetic has no
    memory operands: []."""
    if aarch64:
        return []
    out = []
    for line in block_text.split("\n"):
        ins = parse(line)
        if not ins.fp_op or not ins.loads or not ins.vector_bytes:
            continue
        reg = {16: "xmm", 32: "ymm", 64: "zmm"}[ins.vector_bytes]
        form = re.sub(r"[-\w.+$]*\(%?\w*(?:,\s*%?\w*)*(?:,\s*\d+)?\)(\{1to\d+\})?", f"%{reg}15",
                      " ".join(line.split()), count=1)
        if form not in out:
            out.append(form)
    return out


def probe_latency(machine, op: str, width: int) -> float | None:
    """The host's latency of ``op`` (ADD, MUL, FMA, DIV, SQRT) at exactly ``width`` B in cy,
    measured by the probe (:func:`loopmodel.machine.latency.measured`); None where the probe did
    not measure it (bundled machine files)."""
    return mlat.measured(machine, op, width, "latency")


def probe_rthroughput(machine, op: str, width: int) -> float | None:
    """The host's reciprocal throughput of ``op`` at exactly ``width`` B, cy per instruction,
    measured by the probe (:func:`loopmodel.machine.latency.measured`); None where not measured."""
    return mlat.measured(machine, op, width, "throughput")


def has_probe(machine) -> bool:
    """Whether the probe measured any FP latency or throughput of ``machine`` (a host model)."""
    return any(probe_latency(machine, op, w) or probe_rthroughput(machine, op, w)
               for op in ("ADD", "MUL", "FMA", "DIV", "SQRT") for w in (8, 16, 32, 64))


def _norm(text: str) -> str:
    """An instruction line compared without whitespace (llvm-mca writes tabs, OSACA the source's spacing)."""
    return "".join(text.split()).lower()


def analyzer_latency(info, instr_text: str) -> float | None:
    """The analyzer's latency in cy of one instruction of the analyzed block ``info``
    (:class:`~.incore.CompiledInCore`; llvm-mca's "Instruction Info" table, OSACA's form),
    matched by its text without whitespace; None where the analyzer gave none. The latency of a
    form with a memory operand includes the load's."""
    key = _norm(instr_text)
    return next((t.latency for t in info.timings if _norm(t.text) == key), None)


@dataclass(frozen=True)
class CheckRow:
    """One class of the block's FP instructions, one figure: the analyzer's next to the probe's.

    Attributes:
        op, width: the class (:attr:`.instructions.Instruction.fp_class`), width in B.
        kind: ``"latency"`` (cy) or ``"throughput"`` (reciprocal throughput, cy per instruction).
        instruction: the block's first instruction of the class (the one whose figure is used;
            a register form where the class has one, for latency always: a memory form's
            latency includes its load).
        count: instructions of the class per pass of the block.
        analyzer_cy, probe_cy: the two figures.
    """

    op: str
    width: int
    kind: str
    instruction: str
    count: int
    analyzer_cy: float
    probe_cy: float

    @property
    def relative(self) -> float:
        """|analyzer - probe| / probe."""
        return abs(self.analyzer_cy - self.probe_cy) / self.probe_cy

    @property
    def agrees(self) -> bool:
        """Within :data:`TOLERANCE` of the probe."""
        return self.relative <= TOLERANCE


@dataclass(frozen=True)
class BackendCheck:
    """The analyzer's per-instruction figures of a block against the probe's (:func:`check_block`).

    Attributes:
        analyzer, version, target: ``"llvm-mca"``, ``"19.1.7"``, ``"sapphirerapids"``.
        rows: :class:`CheckRow` per class and kind that both sides have, in block order.
        unknown_width: the block's FP arithmetic instructions whose width the classifier could not
            tell (an SVE register where the machine model gives no vector length): not compared.
    """

    analyzer: str
    version: str
    target: str
    rows: tuple = ()
    unknown_width: tuple = ()

    @property
    def disagreeing(self) -> tuple:
        """The rows outside :data:`TOLERANCE`."""
        return tuple(r for r in self.rows if not r.agrees)

    def notes(self) -> list:
        """One note per disagreeing row, naming the instruction and both figures; where no row was
        compared, one note saying so (and naming the instructions of unknown width)."""
        out = [] if self.rows else [f"{self.analyzer} {self.version} {self.target}: no rows compared with the "
                                    "probe (no FP instruction of the block at a width the probe measured"
                                    + (f"; width unknown: {', '.join(self.unknown_width)})" if self.unknown_width
                                       else ")")]
        for r in self.disagreeing:
            what = "latency" if r.kind == "latency" else "per instruction (reciprocal throughput)"
            out.append(f"{self.analyzer} {self.version} {self.target} times {r.instruction.split()[0]} ({r.op}, "
                       f"{r.width} B) at {r.analyzer_cy:.3g} cy {what}; the probe measured {r.probe_cy:.3g} cy on "
                       "this host")
        return out


def check_block(info, machine) -> BackendCheck | None:
    """Compare the analyzer's latency and reciprocal throughput of each FP class of the block
    ``info`` (:class:`~.incore.CompiledInCore` with ``timings``) with the probe's
    (:func:`probe_latency`, :func:`probe_rthroughput`; measured by the probe), single-precision
    divisions and square roots left out (:data:`PRECISION_DEPENDENT`).

    Returns:
        :class:`BackendCheck` (rows only for classes both sides time; an analyzer figure of 0,
        OSACA's unknown forms, is left out), or None where the machine has no probe figures.
    """
    if not has_probe(machine):
        return None
    sve = machine.in_core.simd_width
    classes: dict = {}
    for t in info.timings:
        ins = parse(t.text, info.aarch64, sve)
        if ins.fp_class is not None and _probed_precision(ins):
            classes.setdefault(ins.fp_class, []).append(t)
    block = [parse(ln.strip(), info.aarch64, sve) for ln in info.block.split("\n") if ln.strip()]
    counts: dict = {}
    for ins in block:
        if ins.fp_class is not None:
            counts[ins.fp_class] = counts.get(ins.fp_class, 0) + 1
    unknown = tuple(dict.fromkeys(" ".join(i.text.split()) for i in block if i.fp_op and i.fp_width is None))
    counts_text = {_norm(ln) for ln in info.block.split("\n")}
    rows = []
    for (op, width), timings in classes.items():
        regs = [t for t in timings if not any(access_kind(t.text, info.aarch64))]
        timings = [t for t in timings if _norm(t.text) in counts_text] or timings
        for kind, pick, probe in (("latency", regs[:1], probe_latency(machine, op, width)),
                                  ("throughput", (regs or timings)[:1], probe_rthroughput(machine, op, width))):
            if not pick or probe is None:
                continue
            value = pick[0].latency if kind == "latency" else pick[0].rthroughput
            if value > 0:
                rows.append(CheckRow(op, width, kind, pick[0].text, counts.get((op, width), 0), value, probe))
    return BackendCheck(info.analyzer, info.analyzer_version, info.target, tuple(rows), unknown)


def _probed_precision(ins) -> bool:
    """Whether the probe's figure of ``ins``'s class is of its precision: always but for a
    :data:`PRECISION_DEPENDENT` class in other than double precision."""
    return ins.fp_op not in PRECISION_DEPENDENT or ins.fp_element == 8


def score(check: BackendCheck | None) -> tuple:
    """``(disagreeing rows, their summed relative difference)``: smaller is closer to the probe;
    ``(inf, inf)`` without a check (:func:`check_block` gave None) or with no row compared (an
    empty check says nothing about the analyzer, so it cannot win a comparison)."""
    if check is None or not check.rows:
        return float("inf"), float("inf")
    bad = check.disagreeing
    return len(bad), sum(r.relative for r in bad)


def throughput_floor(info, t_ol: float, per_cl: float) -> tuple:
    """T_OL bounded from below by the probe's throughput of each FP class whose analyzer figure
    is faster than the probe's beyond :data:`TOLERANCE`: T_OL >= n x rthroughput x ``per_cl``,
    n the class's instructions per pass, rthroughput the probe's cy per instruction (measured by
    the probe: a class's instructions alone cannot issue faster on this host).

    Why a bound and not the class's port pressure rescaled by probe / analyzer: the analyzer's
    pressure rows of a memory-operand form mix the load's uops with the arithmetic's, and
    llvm-mca 19 models Sapphire Rapids' divider as one cycle on port 0 (no divider resource),
    so which units to rescale is not known from the report; the bound holds whichever unit the
    analyzer got wrong. An analyzer slower than the probe is not corrected (its pressure may
    set T_OL with other classes on the same ports): a note says T_OL may be too high, and
    ``--incore auto`` prefers an analyzer that agrees (:func:`score`).

    Args:
        info: the analysis (:class:`~.incore.CompiledInCore`, ``check`` set by :func:`check_block`).
        t_ol: T_OL in cy/CL.
        per_cl: cy/CL per cy per pass.

    Returns:
        ``(T_OL in cy/CL, notes, source)``; ``source`` names the class where it sets T_OL, else ''.
    """
    check = getattr(info, "check", None)
    if check is None:
        return t_ol, [], ""
    notes, source = [], ""
    for r in check.disagreeing:
        if r.kind != "throughput" or r.count == 0:
            continue
        if r.analyzer_cy > r.probe_cy:
            notes.append(f"{info.analyzer} times {r.op} ({r.width} B) slower than the probe measured "
                         f"({r.analyzer_cy:.3g} vs {r.probe_cy:.3g} cy per instruction): T_OL may be too high")
            continue
        bound = r.count * r.probe_cy * per_cl
        if bound > t_ol + 1e-9:
            notes.append(f"T_OL raised to the probe's throughput of {r.op} ({r.width} B): {r.count} per pass x "
                         f"{r.probe_cy:.3g} cy = {r.count * r.probe_cy:.2f} cy per pass ({info.analyzer}: "
                         f"{r.analyzer_cy:.3g} cy each), {bound:.2f} cy/CL")
            t_ol, source = bound, (f"the probe's throughput of {r.count} {r.op} ({r.width} B) per pass: "
                                   f"{r.count * r.probe_cy:.2f} cy per pass x {per_cl:g} passes per CL")
    return t_ol, notes, source
