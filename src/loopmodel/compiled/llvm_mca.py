"""llvm-mca back-end: run it on the kernel's loop block and read its report.

The newest installed ``llvm-mca-NN`` (Debian's llvm packages) is preferred over plain
``llvm-mca`` (``$LOOPMODEL_LLVM_MCA`` names another), and the CPU model is the newest this
llvm-mca has for the host's generation (:func:`cpu_for`). Per pass of the block we read: the pressure per resource (port) and per
instruction, the block reciprocal throughput and the simulated steady-state cycles per
pass (difference of two runs of different length, so that pipeline fill and drain do not
count), which exceed the throughput bound when a loop-carried dependency limits the
loop. A third run, one code region per instruction, shows which ports each instruction
may use (:func:`_with_eligible`). The longer run prints the instruction info table too (each
instruction's latency and reciprocal throughput, :class:`InstrTiming`), and one more run times
the register forms of memory-operand FP instructions (:func:`.checked.register_forms`) for the
check against the probe (:mod:`.checked`).
"""
from __future__ import annotations

from dataclasses import dataclass

import os
import re
import shutil
from functools import lru_cache

from .. import gate, toolchain
from ..errors import ToolError
from .checked import register_forms
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
    timings: tuple = ()


@dataclass(frozen=True)
class InstrTiming:
    """The analyzer's figures of one instruction of the block, alone (llvm-mca's "Instruction
    Info" table, OSACA's instruction form).

    Attributes:
        text: the instruction line (whitespace normalised).
        latency: cy from its inputs to its result (a load's latency included for memory forms).
        rthroughput: reciprocal throughput, cy per instruction.
    """

    text: str
    latency: float
    rthroughput: float


class UnknownInstructions(ToolError):
    """The analyzer has no model for some instructions of the block (its result would miss them).

    Attributes:
        instructions: the instruction lines, in block order.
    """

    def __init__(self, message: str, instructions: tuple = ()):
        super().__init__(message)
        self.instructions = tuple(instructions)


#: an llvm-mca ``-mcpu`` value (``skylake-avx512``, ``znver4``)
_CPU_NAME = r"[A-Za-z0-9_.+-]{1,64}"


#: environment variable naming the llvm-mca to use (a path or a command on PATH)
ENV = "LOOPMODEL_LLVM_MCA"


def find_llvm_mca() -> str | None:
    """Path of the llvm-mca to use, or None: the one ``$LOOPMODEL_LLVM_MCA`` names (a path or
    a command on PATH; None where it names nothing executable), else the newest
    ``llvm-mca-NN`` on PATH, else ``llvm-mca``."""
    chosen = os.environ.get(ENV, "").strip()
    if chosen:
        found = shutil.which(chosen)
        return os.path.abspath(found) if found else None
    cands, listed = [], {}
    for d in os.environ.get("PATH", "").split(os.pathsep):
        for p in _versioned_names_once(d, listed):
            m = re.search(r"llvm-mca-(\d+)$", p)
            if m and os.access(p, os.X_OK):
                cands.append((int(m.group(1)), p))
    if cands:
        return os.path.abspath(max(cands)[1])
    found = shutil.which("llvm-mca")
    return os.path.abspath(found) if found else None


def _versioned_names_once(folder: str, listed: dict) -> list:
    """:func:`_versioned_names` of ``folder``, each folder listed once however often the PATH
    names it: a folder seen before under another name (``/bin``, a link to ``/usr/bin``: a
    thousand names) gives the names found there, joined to this name. ``listed`` maps (device,
    inode) of the folders listed so far to their bare names."""
    try:
        st = os.stat(folder or os.curdir)
    except OSError:
        return []
    key = (st.st_dev, st.st_ino)
    if key not in listed:
        listed[key] = [os.path.basename(p) for p in _versioned_names(folder)]
    return [os.path.join(folder, n) for n in listed[key]]


def _versioned_names(folder: str) -> list:
    """The paths ``folder/llvm-mca-<digit>...`` (what ``glob(folder/llvm-mca-[0-9]*)`` finds, the
    folder name taken literally): one listing of the folder, names compared as text, not matched
    against a pattern each (a ``/usr/bin`` of thousands of names)."""
    try:
        names = os.listdir(folder or os.curdir)
    except OSError:
        return []
    return [os.path.join(folder, n) for n in names if n.startswith("llvm-mca-") and n[9:10] and n[9:10] in "0123456789"]


def version(path: str) -> str:
    """llvm-mca's version number (``'14.0.6'``; ``'unknown'``), by :func:`loopmodel.toolchain.tool_version`."""
    return toolchain.tool_version(path, r"LLVM version ([\d.]+)")


def major(version_text: str) -> int:
    """The major version of an llvm-mca version string (``'19.1.7'`` -> 19; 0 where unknown)."""
    m = re.match(r"(\d+)", version_text or "")
    return int(m.group(1)) if m else 0


@lru_cache(maxsize=8)
def known_cpus(path: str) -> frozenset:
    """CPU names the llvm-mca at ``path`` accepts (its ``-mcpu=help`` list, read once per path);
    empty where it cannot say."""
    out = toolchain.tool_output(path, ["-mcpu=help"])
    return frozenset(m.group(1) for m in re.finditer(r"^\s{2}(\S+)\s+- Select the", out, re.MULTILINE))


#: host class (:func:`host_class`) -> (llvm-mca CPU, first LLVM major version with a scheduling
#: model of its own for it). LLVM 16 accepts ``sapphirerapids`` and ``znver4`` but times them with
#: the Skylake-server and Zen 3 models; LLVM 17 added X86SchedSapphireRapids.td and
#: X86ScheduleZnver4.td; ``znver5`` arrives with LLVM 19 (Zen 4's model).
BETTER_MODEL = {"sapphirerapids": ("sapphirerapids", 17), "emeraldrapids": ("sapphirerapids", 17),
                "znver4": ("znver4", 17), "znver5": ("znver5", 19)}

#: the machine file's llvm_mca_cpu (gcc's -march=native name) -> host classes it may stand for
_UPGRADABLE = {"cooperlake": ("sapphirerapids", "emeraldrapids"), "icelake-server": ("sapphirerapids", "emeraldrapids"),
               "cascadelake": ("sapphirerapids", "emeraldrapids"),
               "znver3": ("znver4", "znver5"), "znver4": ("znver5",)}

#: model names of the CPU (``/proc/cpuinfo``) -> host class: Xeon Scalable 4th generation (x4xx)
#: is Sapphire Rapids, 5th (x5xx) Emerald Rapids; EPYC 9xx4 / Ryzen 7000 are Zen 4, EPYC 9xx5 /
#: Ryzen 9000 Zen 5
_MODEL_NAMES = ((r"Xeon\(R\) (Platinum|Gold|Silver|Bronze) [3-9]4\d\d|Xeon\(R\) w[3-9]-[23]4\d\d", "sapphirerapids"),
                (r"Xeon\(R\) (Platinum|Gold|Silver|Bronze) [3-9]5\d\d", "emeraldrapids"),
                (r"EPYC 9\d\d4|Ryzen \d+ (PRO )?7\d\d\d", "znver4"),
                (r"EPYC 9\d\d5|Ryzen \d+ (PRO )?9\d\d\d", "znver5"))


def host_class(machine) -> tuple:
    """``(class, evidence)``: the CPU generation a probed host is of where its machine file's
    ``llvm_mca_cpu`` (gcc's ``-march=native`` name: gcc 12 says ``cooperlake`` on Sapphire
    Rapids, ``znver3`` on Zen 4) names an older one; ``(None, '')`` otherwise (bundled machine
    files, which carry no ``probe`` section, are never upgraded).

    Evidence, in order: the CPU's model name (:data:`_MODEL_NAMES`), else the ISA flags the probe
    recorded (``probe.topology.isa``): ``avx512_fp16`` arrives with Sapphire Rapids among Xeons,
    ``avx512f`` on an AMD ``znver3`` host means Zen 4 at least.
    """
    cpu = (machine.in_core.llvm_mca_cpu or "").lower()
    probe = machine.probe
    if cpu not in _UPGRADABLE or probe is None:
        return None, ""
    name = probe.model_name or machine.model_name or ""
    for pattern, cls in _MODEL_NAMES:
        if re.search(pattern, name) and cls in _UPGRADABLE[cpu]:
            return cls, f"model name '{name}'"
    flags = {f.lower() for f in probe.isa_flags}
    if "avx512_fp16" in flags and "sapphirerapids" in _UPGRADABLE[cpu]:
        return "sapphirerapids", "the probe found avx512_fp16"
    if "avx512f" in flags and "znver4" in _UPGRADABLE[cpu]:
        return "znver4", "the probe found avx512f"
    return None, ""


def cpu_for(machine, path: str, tool_version: str) -> tuple:
    """``(cpu, note)``: the ``-mcpu`` for ``machine`` with the llvm-mca at ``path``.

    The machine file's ``in_core.llvm_mca_cpu``, upgraded where the host is of a newer
    generation (:func:`host_class`) and this llvm-mca has a scheduling model of that generation
    (:data:`BETTER_MODEL`, listed by its ``-mcpu=help``); ``note`` names the llvm-mca version,
    the CPU model used and why ('' where the file's CPU is used as it is).
    """
    cpu = machine.in_core.llvm_mca_cpu
    cls, why = host_class(machine)
    if cls is None:
        return cpu, ""
    better, since = BETTER_MODEL[cls]
    if major(tool_version) < since or better not in known_cpus(path):
        return cpu, (f"llvm-mca {tool_version} -mcpu={cpu}: the host is a {cls} ({why}), but this llvm-mca has no "
                     f"scheduling model of it (LLVM {since} and later: apt-get install llvm-19)")
    return better, (f"llvm-mca {tool_version} -mcpu={better}: the host is a {cls} ({why}); the machine file's "
                    f"llvm_mca_cpu '{cpu}' is what gcc calls it")


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
    if not re.fullmatch(_CPU_NAME, str(cpu)):  # a machine file's in_core.llvm_mca_cpu: data, one argument
        raise ToolError(f"llvm-mca CPU name {cpu!r} is not a CPU name (letters, digits, '_', '.', '+', '-')")
    bad = unsupported(block_text, cpu, path, aarch64)
    if bad:
        raise UnknownInstructions(f"llvm-mca -mcpu={cpu} does not support {len(bad)} instruction(s)", tuple(bad))
    reports = [_call(path, cpu, block_text, its, aarch64, info=its == ITERATIONS[-1]) for its in ITERATIONS]
    rep = parse(reports[-1])
    c0 = int(re.search(r"^Total Cycles:\s+(\d+)", reports[0], re.M).group(1))
    c1 = int(re.search(r"^Total Cycles:\s+(\d+)", reports[-1], re.M).group(1))
    steady = (c1 - c0) / (ITERATIONS[-1] - ITERATIONS[0])
    instrs = _with_eligible(rep.instructions, path, cpu, aarch64)
    extra = register_forms(block_text, aarch64)
    timings = rep.timings + (_timings(_call(path, cpu, "\n".join(extra) + "\n", 1, aarch64, info=True)) if extra else ())
    return PortReport(rep.ports, rep.block_throughput, steady, rep.raw, instrs, timings=timings)


def instruction_timing(line: str, cpu: str, path: str, aarch64: bool = False) -> InstrTiming:
    """Latency (cy) and reciprocal throughput (cy per instruction) of one instruction ``line``
    alone, from llvm-mca's instruction-info view for ``-mcpu=cpu`` (its scheduling model).

    Raises:
        ToolError: ``cpu`` is not a CPU name, llvm-mca fails, warns that the numbers are not
            for this CPU or instruction, or prints no instruction-info row (one line).
    """
    if not re.fullmatch(_CPU_NAME, str(cpu)):  # a machine file's in_core.llvm_mca_cpu: data, one argument
        raise ToolError(f"llvm-mca CPU name {cpu!r} is not a CPU name (letters, digits, '_', '.', '+', '-')")
    rows = _timings(_call(path, cpu, line + "\n", 1, aarch64, info=True))
    if not rows:
        raise ToolError(f"llvm-mca -mcpu={cpu} printed no instruction info for '{line}'")
    return rows[0]


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


def _call(path: str, cpu: str, text: str, its: int, aarch64: bool, info: bool = False) -> str:
    cmd = [path, f"-mcpu={cpu}", f"-iterations={its}", f"-instruction-info={'true' if info else 'false'}"]
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
    """Parse an llvm-mca report.

    The per-instruction table is kept for the mapping to T_OL/T_nOL
    (:func:`loopmodel.compiled.incore.effective_ports`), and, where the report has one
    (``-instruction-info``), each instruction's latency and reciprocal throughput
    (:class:`InstrTiming`, for :mod:`.checked`).

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
    return PortReport(ports, rthr, total / its, text, tuple(_by_instruction(text, res)), timings=_timings(text))


def _timings(text: str) -> tuple:
    """Rows of llvm-mca's "Instruction Info" table as :class:`InstrTiming` (empty without one)."""
    part = text.split("Instruction Info:")
    if len(part) < 2:
        return ()
    body = part[1].split("Resources:")[0]
    rows = re.findall(r"^\s*\d+\s+(\d+)\s+([\d.]+)\s+(?:[*U]\s+)*(\S.*?)\s*$", body, re.M)
    return tuple(InstrTiming(" ".join(t.split()), float(lat), float(rt)) for lat, rt, t in rows)


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
