"""llvm-mca back-end: run it on the kernel's loop block and read its report.

The newest installed ``llvm-mca-NN`` (Debian's llvm packages) is preferred over plain
``llvm-mca``. Per pass of the block we read: the pressure per resource (port) and per
instruction, the block reciprocal throughput and the simulated steady-state cycles per
pass (difference of two runs of different length, so that pipeline fill and drain do not
count), which exceed the throughput bound when a loop-carried dependency limits the
loop. A third run, one code region per instruction, shows which ports each instruction
may use (:func:`_with_eligible`).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
from dataclasses import dataclass

from .. import gate, toolchain
from ..errors import ToolError
from .ports import InstrPressure

#: two runs; the difference of their total cycles removes the pipeline fill and drain
ITERATIONS = (300, 1300)


@dataclass(frozen=True)
class PortReport:
    """One analyzer run: cycles per pass of the block.

    Attributes:
        ports: resource name -> cycles per pass (max over units of a group), as printed.
        instructions: per-instruction pressure (:class:`~.ports.InstrPressure`, port units
            named ``NAME.k``), empty when the analyzer gives none.
        block_throughput: reciprocal throughput of the block (cy per pass).
        cycles_per_pass: simulated cycles per pass (dependencies included).
        raw: the analyzer's report text.
    """

    ports: dict
    block_throughput: float
    cycles_per_pass: float
    raw: str
    instructions: tuple = ()
    unknown: tuple = ()
    store_ports: tuple = ()


class UnknownInstructions(ToolError):
    """The analyzer has no model for some instructions of the block (its result would miss them).

    Attributes:
        instructions: the instruction lines, in block order.
    """

    def __init__(self, message: str, instructions: tuple = ()):
        super().__init__(message)
        self.instructions = tuple(instructions)


#: an llvm-mca ``-mcpu`` value (``skylake-avx512``, ``znver4``)
_CPU_NAME = re.compile(r"[A-Za-z0-9_.+-]{1,64}")


def find_llvm_mca() -> str | None:
    """Path of the newest llvm-mca (``llvm-mca-NN`` or ``llvm-mca``), or None."""
    cands = []
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for p in glob.glob(os.path.join(d, "llvm-mca-[0-9]*")):
            m = re.search(r"llvm-mca-(\d+)$", p)
            if m and os.access(p, os.X_OK):
                cands.append((int(m.group(1)), p))
    if cands:
        return os.path.abspath(max(cands)[1])
    found = shutil.which("llvm-mca")
    return os.path.abspath(found) if found else None


def version(path: str) -> str:
    """llvm-mca's version number (``'14.0.6'``; ``'unknown'``), by :func:`loopmodel.toolchain.tool_version`."""
    return toolchain.tool_version(path, r"LLVM version ([\d.]+)")


def run(block_text: str, cpu: str, path: str | None = None, aarch64: bool = False) -> PortReport:
    """Analyze ``block_text`` for ``-mcpu=cpu``.

    Raises:
        UnknownInstructions: llvm-mca has no scheduling model for some instructions of the
            block for this CPU (it then refuses the whole block); all of them are named.
        ToolError: llvm-mca missing or failing otherwise (one line).
    """
    path = os.path.abspath(path) if path else find_llvm_mca()
    if path is None:
        raise ToolError("llvm-mca not found (Debian: apt-get install llvm); or use --incore analytic")
    if not _CPU_NAME.fullmatch(str(cpu)):  # a machine file's in_core.llvm_mca_cpu: data, one argument
        raise ToolError(f"llvm-mca CPU name {cpu!r} is not a CPU name (letters, digits, '_', '.', '+', '-')")
    bad = unsupported(block_text, cpu, path, aarch64)
    if bad:
        raise UnknownInstructions(f"llvm-mca -mcpu={cpu} does not support {len(bad)} instruction(s)", tuple(bad))
    reports = [_call(path, cpu, block_text, its, aarch64) for its in ITERATIONS]
    rep = parse(reports[-1])
    c0 = int(re.search(r"^Total Cycles:\s+(\d+)", reports[0], re.M).group(1))
    c1 = int(re.search(r"^Total Cycles:\s+(\d+)", reports[-1], re.M).group(1))
    steady = (c1 - c0) / (ITERATIONS[-1] - ITERATIONS[0])
    instrs = _with_eligible(rep.instructions, path, cpu, aarch64)
    return PortReport(rep.ports, rep.block_throughput, steady, rep.raw, instrs)


_UNSUPPORTED = "unsupported instruction"


def unsupported(block_text: str, cpu: str, path: str, aarch64: bool = False) -> list:
    """The instructions of ``block_text`` llvm-mca rejects for ``cpu``.

    llvm-mca stops at the first instruction without a scheduling model ("found an
    unsupported instruction", followed by "note: instruction: ..."); it is removed and the
    rest analyzed again until llvm-mca accepts the block, so that all are named.

    Returns:
        The rejected instruction lines (whitespace normalised), in block order.
    """
    lines = [ln for ln in block_text.split("\n") if ln.strip()]
    bad = []
    for _ in range(len(lines)):
        cmd = [path, f"-mcpu={cpu}", "-iterations=1", "-instruction-info=false", "-resource-pressure=false"]
        if aarch64:
            cmd.append("-mtriple=aarch64-linux-gnu")
        try:
            p = gate.run_tool(cmd[0], cmd[1:], "llvm-mca", 120, input="\n".join(lines) + "\n")
        except ToolError:
            return bad
        m = re.search(r"note: instruction:\s*(.+)", p.stderr)
        if p.returncode == 0 or _UNSUPPORTED not in p.stderr or not m:
            return bad
        norm = " ".join(m.group(1).split())
        hit = next((i for i, ln in enumerate(lines) if " ".join(ln.split()) == norm), None)
        if hit is None:
            return bad + [norm]
        bad.append(norm)
        del lines[hit]
    return bad


def _call(path: str, cpu: str, text: str, its: int, aarch64: bool) -> str:
    cmd = [path, f"-mcpu={cpu}", f"-iterations={its}", "-instruction-info=false"]
    if aarch64:
        cmd.append("-mtriple=aarch64-linux-gnu")
    p = gate.run_tool(cmd[0], cmd[1:], "llvm-mca", 120, input=text)
    if p.returncode != 0:
        first = next((ln for ln in p.stderr.splitlines() if "error" in ln), p.stderr.strip().split("\n")[0])
        raise ToolError(f"llvm-mca failed (-mcpu={cpu}): {first.strip()}")
    # a warning that llvm-mca fell back to another model or skipped something: its numbers are not for this block
    bad = next((ln for ln in p.stderr.splitlines() if "not a recognized processor" in ln or (
        "warning" in ln.lower() and any(w in ln.lower() for w in ("unsupported", "unknown")))), None)
    if bad:
        raise ToolError(f"llvm-mca result not used (-mcpu={cpu}): {bad.strip()}")
    return p.stdout


def _with_eligible(instrs: tuple, path: str, cpu: str, aarch64: bool) -> tuple:
    """Add to each instruction the port units it may use.

    In the block, llvm-mca's scheduler may send an instruction to one port of its group
    every time; alone in a code region, repeated, it cycles through all of them. One run
    with one region per instruction reveals the groups.
    """
    if not instrs:
        return instrs
    text = "".join(f"# LLVM-MCA-BEGIN r{i}\n{ins.text}\n# LLVM-MCA-END\n" for i, ins in enumerate(instrs))
    out = _call(path, cpu, text, 60, aarch64)
    regions = re.split(r"^\[\d+\] Code Region", out, flags=re.M)[1:]
    if len(regions) != len(instrs):
        return instrs
    res = dict(re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", out, re.M))
    new = []
    for ins, reg in zip(instrs, regions):
        rows = _by_instruction(reg, res)
        elig = tuple(sorted(k for k, v in rows[0].pressure.items() if v > 0)) if rows else ()
        new.append(InstrPressure(ins.text, ins.pressure, elig))
    return tuple(new)


def parse(text: str) -> PortReport:
    """Parse an llvm-mca report (``-instruction-info=false``).

    The per-instruction table is kept for the mapping to T_OL/T_nOL
    (:func:`loopmodel.compiled.incore.effective_ports`).

    Raises:
        ToolError: the report lacks the expected sections.
    """
    try:
        its = int(re.search(r"^Iterations:\s+(\d+)", text, re.M).group(1))
        total = int(re.search(r"^Total Cycles:\s+(\d+)", text, re.M).group(1))
        rthr = float(re.search(r"^Block RThroughput:\s+([\d.]+)", text, re.M).group(1))
        res = dict(re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", text, re.M))
        lines = text.split("Resource pressure per iteration:")[1].strip().split("\n")
    except (AttributeError, IndexError):
        raise ToolError("cannot read llvm-mca's report (unexpected format)") from None
    heads = re.findall(r"\[([\d.]+)\]", lines[0])
    vals = lines[1].split()
    ports: dict = {}
    for h, v in zip(heads, vals):
        name = res.get(h, h)
        c = 0.0 if v == "-" else float(v)
        ports[name] = max(ports.get(name, 0.0), c)
    return PortReport(ports, rthr, total / its, text, tuple(_by_instruction(text, res)))


def _by_instruction(text: str, res: dict) -> list:
    """Rows of "Resource pressure by instruction" as :class:`~.ports.InstrPressure` (units ``NAME.k``)."""
    part = text.split("Resource pressure by instruction:")
    if len(part) < 2:
        return []
    lines = part[1].strip("\n").split("\n")
    heads = re.findall(r"\[([\d.]+)\]", lines[0])
    names = []
    for h in heads:
        base = res.get(h, res.get(h.split(".")[0], h))
        names.append(f"{base}.{h.split('.')[1]}" if "." in h else base)
    out = []
    for ln in lines[1:]:
        if not ln.strip():
            break
        cols = ln.split(None, len(heads))
        if len(cols) <= len(heads):
            continue
        press = {n: float(v) for n, v in zip(names, cols[:len(heads)]) if v != "-"}
        out.append(InstrPressure(cols[len(heads)].strip(), press))
    return out
