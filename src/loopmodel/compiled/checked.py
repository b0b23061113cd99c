"""The analyzer's figures of a compiled loop block checked against the probe of its host.

llvm-mca and OSACA time each instruction with their CPU model; the probe (``loopmodel machine
probe``) measured the host's floating-point latencies and throughputs per operation and register
width. Where both exist the block's FP arithmetic instructions are classified (:func:`classify`:
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

import re

from ..machine import latency as mlat
from .ports import access_kind
from ..record import record

#: relative difference up to which an analyzer's figure agrees with the probe's
TOLERANCE = 0.15

_X86_OP = (r"^v?(?:(?P<fma>f(?:n)?m(?:add|sub)(?:sub|add)?(?:132|213|231)?)|(?P<op>add|sub|mul|div|sqrt))"
           r"(?P<kind>[sp])(?P<prec>[dsh])(?:\s|$)")
_X86_NAMES = {"add": "ADD", "sub": "ADD", "mul": "MUL", "div": "DIV", "sqrt": "SQRT"}
_A64_OP = r"^(?:(?P<fma>fn?m(?:la|ls|add|sub))|(?P<op>fadd|fsub|fmul|fdiv|fsqrt))(?:\s|$)"
_A64_NAMES = {"fadd": "ADD", "fsub": "ADD", "fmul": "MUL", "fdiv": "DIV", "fsqrt": "SQRT"}
_X86_REG_BYTES = {"xmm": 16, "ymm": 32, "zmm": 64}


def classify(text: str, aarch64: bool = False, simd_width: float | None = None) -> tuple | None:
    """``(op, width in B)`` of a floating-point arithmetic instruction, None for anything else.

    op: ADD (additions and subtractions), MUL, FMA (fused multiply-add and -subtract forms), DIV,
    SQRT. Width: x86 scalar ``sd`` 8, ``ss`` 4, packed the register (xmm 16, ymm 32, zmm 64;
    AT&T syntax, the destination last); AArch64 scalar ``d`` 8, ``s`` 4, NEON ``v.2d``/``v.4s``
    16; SVE (``z`` registers, length not in the text) ``simd_width`` (the machine model's), None
    without it.
    """
    words = text.strip().lower().split(None, 1)
    if not words:
        return None
    return _classify_a64(words, simd_width) if aarch64 else _classify_x86(words)


def _classify_x86(words: list) -> tuple | None:
    m = re.match(_X86_OP, " ".join(words))
    if not m:
        return None
    op = "FMA" if m.group("fma") else _X86_NAMES[m.group("op")]
    if m.group("kind") == "s":
        return op, {"d": 8, "s": 4, "h": 2}[m.group("prec")]
    regs = re.findall(r"%([xyz]mm)\d+", words[1] if len(words) > 1 else "")
    return (op, _X86_REG_BYTES[regs[-1]]) if regs else None


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
        cls = classify(line)
        if cls is None or not any(access_kind(line)):
            continue
        regs = re.findall(r"%([xyz]mm)\d+", line)
        if regs:
            form = re.sub(r"[-\w.+$]*\(%?\w*(?:,\s*%?\w*)*(?:,\s*\d+)?\)(\{1to\d+\})?", f"%{regs[-1]}15",
                          " ".join(line.split()), count=1)
            if form not in out:
                out.append(form)
    return out


def _classify_a64(words: list, simd_width: float | None = None) -> tuple | None:
    m = re.match(_A64_OP, " ".join(words))
    if not m or len(words) < 2:
        return None
    op = "FMA" if m.group("fma") else _A64_NAMES[m.group("op")]
    dest = words[1].split(",")[0].strip()
    if re.fullmatch(r"d\d+", dest):
        return op, 8
    if re.fullmatch(r"s\d+", dest):
        return op, 4
    if re.fullmatch(r"v\d+\.(2d|4s|8h)", dest):
        return op, 16
    if re.fullmatch(r"z\d+(\.[bhsd])?", dest) and simd_width:
        return op, int(simd_width)
    return None


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


@record
class CheckRow:
    """One class of the block's FP instructions, one figure: the analyzer's next to the probe's.

    Attributes:
        op, width: the class (:func:`classify`), width in B.
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


@record
class BackendCheck:
    """The analyzer's per-instruction figures of a block against the probe's (:func:`check_block`).

    Attributes:
        analyzer, version, target: ``"llvm-mca"``, ``"19.1.7"``, ``"sapphirerapids"``.
        rows: :class:`CheckRow` per class and kind that both sides have, in block order.
    """

    analyzer: str
    version: str
    target: str
    rows: tuple = ()

    @property
    def disagreeing(self) -> tuple:
        """The rows outside :data:`TOLERANCE`."""
        return tuple(r for r in self.rows if not r.agrees)

    def notes(self) -> list:
        """One note per disagreeing row, naming the instruction and both figures."""
        out = []
        for r in self.disagreeing:
            what = "latency" if r.kind == "latency" else "per instruction (reciprocal throughput)"
            out.append(f"{self.analyzer} {self.version} {self.target} times {r.instruction.split()[0]} ({r.op}, "
                       f"{r.width} B) at {r.analyzer_cy:.3g} cy {what}; the probe measured {r.probe_cy:.3g} cy on "
                       "this host")
        return out


def check_block(info, machine) -> BackendCheck | None:
    """Compare the analyzer's latency and reciprocal throughput of each FP class of the block
    ``info`` (:class:`~.incore.CompiledInCore` with ``timings``) with the probe's
    (:func:`probe_latency`, :func:`probe_rthroughput`; measured by the probe).

    Returns:
        :class:`BackendCheck` (rows only for classes both sides time; an analyzer figure of 0,
        OSACA's unknown forms, is left out), or None where the machine has no probe figures.
    """
    if not has_probe(machine):
        return None
    classes: dict = {}
    for t in info.timings:
        cls = classify(t.text, info.aarch64)
        if cls is not None:
            classes.setdefault(cls, []).append(t)
    counts = _class_counts(info)
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
    return BackendCheck(info.analyzer, info.analyzer_version, info.target, tuple(rows))


def _class_counts(info) -> dict:
    """``{(op, width): instructions per pass}`` of the block's FP instructions."""
    counts: dict = {}
    for line in info.block.split("\n"):
        cls = classify(line, info.aarch64)
        if cls is not None:
            counts[cls] = counts.get(cls, 0) + 1
    return counts


def score(check: BackendCheck | None) -> tuple:
    """``(disagreeing rows, their summed relative difference)``: smaller is closer to the probe;
    ``(inf, inf)`` without a check (:func:`check_block` gave None)."""
    if check is None:
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
