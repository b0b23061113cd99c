"""Latency and throughput of the in-core instruction forms on this host, from generated loops.

The analytic in-core model needs, per operation type, a throughput in instructions per cycle
and a latency in cycles: the in-core part of a machine model (cross-architecture-machine-
models.txt §3.3: "throughput limits (in operations per cycle) of relevant operations ...
latencies for the corresponding instructions"). The same paper measures them with hand-made
assembly loops, the ibench tool (§4.1.1 "Instruction throughput and latency": many
independent instructions for the throughput, a dependency chain for the latency, the
compiler side-stepped; operation throughput = instruction throughput x SIMD lanes, eq. 6).
The Kerncraft paper (kerncraft-tool-paper.txt §1.2.1 on the L1 and core time, §2.5
"Underlying In-Core Execution Prediction") takes these figures from IACA's tables and warns
that a compiled micro-benchmark only approximates them; here they are measured, ibench-style,
on the host itself, for a probed machine model.

Method (one C program, generated from a data table, compiled once with ``-O1`` and
``-march=native`` / ``-mcpu=native``; the inline assembly decides the instructions):

* **latency**: one dependent chain, ``vaddpd %zmm15, %zmm0, %zmm0`` repeated 48 times per
  loop pass, each instruction reading the result of the previous one (FMA chains through its
  accumulator). Cycles per instruction = latency.
* **throughput**: 12 accumulator registers written in turn by 48 instructions per pass, each
  reading only registers the loop never writes (14 and 15; two-operand SSE and FMA also read their own
  accumulator: 12 independent chains, enough for latency x ports of current cores).
  Instructions per cycle = 1 / cycles per instruction.
* **LOAD / STORE**: 48 accesses per pass to distinct addresses of an L1-resident 4 KiB
  buffer (12 destination registers in turn; stores from a register the loop never writes).
  ``LOAD_SPLIT`` / ``STORE_SPLIT``: the widest width at 8 B below a 64 B line boundary
  (offset 56 in the line), so every access crosses a cache line; ``LOAD_UNALIGNED`` /
  ``STORE_UNALIGNED``: a width below 64 B at offset 8 in the line (misaligned, one line);
  ``LOAD_LINE`` / ``STORE_LINE``: aligned at the start of each line, the same access pattern
  as split and unaligned, their reference (the aligned LOAD/STORE loops fill each line and
  may be faster for that reason alone). ``LOAD_SPLIT_MIXED``: the loads of a stencil's
  neighbours, three streams in turn at the widest width, one aligned at the line start, one
  8 B below the line end (split), one 8 B into the line (at 64 B split too, as ``a[i+1]`` of
  zmm vectors); ``LOAD_SPLIT_2STREAMS``: two streams of split loads in turn. The machine
  model's ``load.split_extra`` comes from the mixed form (:func:`split_extra`).
* **pipeline** (:data:`PIPELINE_OPS`): store-to-load forwarding through a scalar double and
  a general-purpose register, taken jumps, a tight loop's branch, the front end's issue width.

Registers are initialised with 1.0 from memory, and DIV divides by 1.0: values stay normal
(no denormal slow path). The loop overhead (decrement, branch) is 2 of 50 instructions
(< 5 %). Each form runs pinned to one CPU (``sched_setaffinity`` in the program); its
iteration count doubles until a run lasts ``min_time_s``, then ``repetitions`` runs of that
length give the minimum, median and maximum.

Units: seconds per run from the program; cycles per instruction =
``seconds * f / (iterations * instructions per iteration)``, where f is the clock beside
the form: the program runs a reference chain of dependent register-to-register integer adds
(1 cy each, as :mod:`loopmodel.measure.clock` assumes) right after each repetition and f =
adds / the fastest of those runs (a preempted run only reads slower), so a clock that moves
between the caller's clock measurement and the run (turbo, a shared VM) does not enter the
cycles; where f and the caller's clock differ by more than 20 % a note names the forms.
Output without the reference (older programs, fakes) uses the caller's ``clock_hz``
(:func:`loopmodel.measure.clock.measure_clock_hz`, Hz).
Widths in bytes (8 scalar, 16, 32, 64); throughput in instructions per cycle.

Limits: AVX-512 code may run at a lower licence clock on some Intel cores than the integer
reference right after it (figures then read slower in cycles of the scalar clock). SVE is
not measured (its vector length is not known when the source is generated).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import json
import math
import tempfile
from typing import Callable

from .. import toolchain
from ..errors import ToolError
from .topology import allowed_cpus

#: instructions per loop pass (4 blocks of 12 accumulators)
UNROLL = 48
#: relative difference between the reference chain's clock and the caller's clock above which
#: a note names the form (turbo steps and VM noise stay below it)
CLOCK_TOLERANCE = 0.2
#: independent accumulators of a throughput loop
ACCUMULATORS = 12
#: registers the loop reads but never writes (after the accumulators)
SRC_A, SRC_B = 14, 15
#: bytes of the L1-resident load/store buffer
BUFFER_BYTES = 4096
#: bytes of the cache line the split forms cross
LINE = 64
ARITH_OPS = ("ADD", "MUL", "FMA", "DIV", "SQRT")
#: forms of the front end and the memory pipeline, each measured once (x86 and AArch64, 8 B):
#:
#: * STORE_FORWARD (latency: a scalar double stored and loaded back, the loaded value stored
#:   next: cy per store-load pair = store-to-load forwarding latency, ``in_core.store_forward_latency``);
#: * STORE_FORWARD_GPR (latency, provenance only: the same chain through a 64-bit integer
#:   register with one dependent 1-cy integer add, cy per pass - 1). Cores that rename memory
#:   operands (recent Intel and AMD cores) forward a general-purpose register through a store
#:   and a load of the same address in the rename stage: a chain of the pair alone broke into
#:   independent pairs on a Sapphire-Rapids-class host (0.5 cy per pair, a throughput, not a
#:   latency); the add keeps a chain, so the figure reads ~0 cy there and the forwarding
#:   latency elsewhere;
#: * BRANCH (throughput: 48 taken jumps per pass, each to the next one on a 32 B boundary, plus
#:   the loop's own taken branch: 49 taken branches per pass). The targets are aligned because
#:   jumps to the very next instruction pack many branches into one 32 B block of code, which
#:   the branch predictor serves at a fraction of its rate (7 cy per jump on a
#:   Sapphire-Rapids-class host, against 1.0-1.3 aligned);
#: * LOOP_BRANCH (throughput: a loop of two nops, cy per pass = cy per loop branch, the bound of
#:   a tight loop; a loop of one nop ran at 1.9 cy per pass on the same host where two or three
#:   nops ran at 1.0-1.06, like the compiled loops). ``in_core.taken_branches_per_cycle`` is the
#:   higher rate of the two (:func:`taken_branches_per_cycle`);
#: * ISSUE (throughput: ``in_core.instructions_per_cycle``, the front end's issue width): 48
#:   independent instructions alternating ``mov $1, r32`` (9 registers in turn) and a 4-byte
#:   ``nopl``. Half need an integer ALU port, half none, so neither the ALU ports (a body of
#:   ``mov $imm`` alone read 4.3-4.9 per cy on a Sapphire-Rapids-class host, at most its 5
#:   integer ALU ports) nor a port of any kind bounds the loop below the rename width; their
#:   4-6 bytes are the length of real instructions, where 1-byte nops pack 32 instructions into
#:   a 32 B block and fall out of the decoded-uop cache (2.4-5.4 per cy on the same host, against
#:   5.1-5.9 for the mix, 5.9 in a quiet run: the 6-wide rename).
#:   Counted per body instruction: the loop's decrement and branch (2 of 50) are left out, so
#:   the figure is a bound within 4 % below the issue rate.
PIPELINE_OPS = ("STORE_FORWARD", "STORE_FORWARD_GPR", "BRANCH", "LOOP_BRANCH", "ISSUE")
#: taken branches per pass of the BRANCH loop per body instruction: 48 jumps and the loop's branch
BRANCH_TAKEN_PER_JUMP = (UNROLL + 1) / UNROLL
#: the 1-cy integer add of the STORE_FORWARD_GPR chain, subtracted from its cycles per pass
GPR_FORWARD_ADD_CY = 1.0
#: loads of several streams at the widest width, the pattern of a stencil's neighbours
#: (``a[i-1], a[i], a[i+1]``): byte offsets of each stream's accesses within their lines;
#: LOAD_SPLIT_MIXED: one stream aligned at the line start, one 8 B below the line end (split),
#: one 8 B into the line (unaligned, split too at 64 B vectors: the stencil a[i-1], a[i], a[i+1]
#: of zmm registers); LOAD_SPLIT_2STREAMS: two streams, every access split
SPLIT_STREAMS = {"LOAD_SPLIT_MIXED": (0, LINE - 8, 8), "LOAD_SPLIT_2STREAMS": (LINE - 8, LINE - 8)}

#: x86 with AVX (VEX/EVEX, three operands; AT&T order: sources reversed, destination last)
_X86_AVX = {
    "arith": {"ADD": ("vaddpd", "vaddsd"), "MUL": ("vmulpd", "vmulsd"),
              "FMA": ("vfmadd231pd", None), "DIV": ("vdivpd", "vdivsd"), "SQRT": ("vsqrtpd", "vsqrtsd")},
    "op3": "{m} {b}, {a}, {d}",
    "load": "vmovapd {off}(%[buf]), {d}", "load_u": "vmovupd {off}(%[buf]), {d}",
    "store": "vmovapd {s}, {off}(%[buf])", "store_u": "vmovupd {s}, {off}(%[buf])",
    "init": "vmovupd (%[ones]), {d}",
    "sqrt": ("{m} {b}, {d}", "{m} {b}, {b}, {d}"),
    "forward": "vmovsd %%xmm0, 64(%[buf]); vmovsd 64(%[buf]), %%xmm0",
    "forward_gpr": "mov %%rax, 64(%[buf]); mov 64(%[buf]), %%rax; add %%rcx, %%rax",
    "jump": "jmp 2f; .p2align 5; 2:",
    "issue": ("mov $1, {r}", "nopl 0(%%rax)"),
    "gprs": tuple(f"%%{r}" for r in ("eax", "ecx", "edx", "esi", "edi", "r8d", "r9d", "r10d", "r11d")),
}
#: x86 SSE2 only (two operands: the destination is also a source; no FMA)
_X86_SSE = dict(_X86_AVX, arith={"ADD": ("addpd", "addsd"), "MUL": ("mulpd", "mulsd"), "DIV": ("divpd", "divsd"),
                                 "SQRT": ("sqrtpd", "sqrtsd")},
                sqrt=("{m} {b}, {d}", "{m} {b}, {d}"), forward="movsd %%xmm0, 64(%[buf]); movsd 64(%[buf]), %%xmm0",
                op3="{m} {b}, {d}", load="movapd {off}(%[buf]), {d}", load_u="movupd {off}(%[buf]), {d}",
                store="movapd {s}, {off}(%[buf])", store_u="movupd {s}, {off}(%[buf])",
                init="movupd (%[ones]), {d}")
#: AArch64 NEON / scalar FP
_AARCH64 = {
    "arith": {"ADD": ("fadd", "fadd"), "MUL": ("fmul", "fmul"), "FMA": ("fmla", None), "DIV": ("fdiv", "fdiv"),
              "SQRT": ("fsqrt", "fsqrt")},
    "op3": "{m} {d}, {a}, {b}",
    "load": "ldr {q}, [%[buf], #{off}]", "load_u": "ldur {q}, [%[buf], #{off}]",
    "store": "str {q}, [%[buf], #{off}]", "store_u": "stur {q}, [%[buf], #{off}]",
    "init": "ld1r {{{d}}}, [%[ones]]",
    "sqrt": ("{m} {d}, {b}", "{m} {d}, {b}"),
    "forward": "str d0, [%[buf], #64]; ldr d0, [%[buf], #64]",
    "forward_gpr": "str x9, [%[buf], #64]; ldr x9, [%[buf], #64]; add x9, x9, x10",
    "jump": "b 2f; .p2align 5; 2:",
    "issue": ("mov {r}, #1", "nop"),
    "gprs": ("w9", "w10", "w11", "w12", "w13", "w14", "w15", "w16", "w17"),
}
_X86_REG = {8: "xmm", 16: "xmm", 32: "ymm", 64: "zmm"}
#: per family: the general-purpose registers of the pipeline forms as clobbers (the table's
#: ``gprs`` and the STORE_FORWARD_GPR chain's registers, rax/rcx and x9/x10, among them)
_GPR_CLOBBERS = {"x86": ("rax", "rcx", "rdx", "rsi", "rdi", "r8", "r9", "r10", "r11"),
                 "aarch64": tuple(f"x{i}" for i in range(9, 18))}


@dataclass(frozen=True)
class InstructionForm:
    """One benchmark loop.

    Attributes:
        name: C identifier part (``add_64_lat``); the program's name for the form.
        op, width, kind: operation type, bytes per instruction, ``latency``/``throughput``.
        form: the instruction with register classes (``vaddpd zmm, zmm, zmm``).
        isa: ``x86`` or ``aarch64``; ``body``: the UNROLL instructions of one loop pass;
        ``init``: instructions setting the registers to 1.0 first; ``clobbers``: the
        general-purpose registers the body writes (asm clobber names).
    """
    name: str
    op: str
    width: int
    kind: str
    form: str
    isa: str
    body: tuple
    init: tuple
    clobbers: tuple = ()


@dataclass(frozen=True)
class InstructionPoint:
    """Measured cycles per instruction of one form (min, median, max over repetitions).

    ``op``, ``width`` (bytes), ``kind`` (``latency``/``throughput``), ``form`` as in
    :class:`InstructionForm`; ``cycles_*``: core cycles per instruction.
    """
    op: str
    width: int
    kind: str
    form: str
    cycles_min: float
    cycles_median: float
    cycles_max: float

    @property
    def spread(self) -> float:
        """(max - min) / min: how much the repetitions disagree."""
        return (self.cycles_max - self.cycles_min) / self.cycles_min if self.cycles_min > 0 else 0.0

    def to_dict(self) -> dict:
        """JSON-ready; cycles per instruction, and instructions per cycle for throughput."""
        d = {"op": self.op, "width_bytes": self.width, "kind": self.kind, "form": self.form,
             "cy_per_instruction_min": self.cycles_min, "cy_per_instruction_median": self.cycles_median,
             "cy_per_instruction_max": self.cycles_max, "spread": self.spread}
        if self.kind == "throughput" and self.cycles_min > 0:
            d["instructions_per_cy"] = 1.0 / self.cycles_min
        return d


@dataclass(frozen=True)
class InCoreBenchResult:
    """All measured forms of one host.

    Attributes:
        isa: ``x86`` or ``aarch64`` (or what the caller gave). clock_hz: the clock used (Hz).
        points: :class:`InstructionPoint` per measured form. notes: forms left out and why.
        calibrated: the cycles were counted against a reference chain of dependent integer
            adds (1 cy each) timed right after the repetitions, so clock changes between the
            clock measurement and the benchmark (turbo, a shared VM) do not enter them.
    """
    isa: str
    clock_hz: float
    points: tuple
    notes: tuple = ()
    calibrated: bool = False

    def at_clock(self, clock_hz: float) -> "InCoreBenchResult":
        """The same measurements converted to cycles at ``clock_hz`` instead (cycles scale with
        the clock: the seconds measured are what they were). Cycles counted against the
        reference chain run beside each repetition (``calibrated``) do not depend on a clock
        figure and are kept."""
        if self.calibrated:
            return dataclasses.replace(self, clock_hz=clock_hz)
        f = clock_hz / self.clock_hz
        pts = tuple(dataclasses.replace(p, cycles_min=p.cycles_min * f, cycles_median=p.cycles_median * f,
                                        cycles_max=p.cycles_max * f) for p in self.points)
        return dataclasses.replace(self, clock_hz=clock_hz, points=pts)

    def point(self, op: str, width: int, kind: str) -> InstructionPoint | None:
        """The point of ``op`` at ``width`` bytes and ``kind``, or None."""
        return next((p for p in self.points if (p.op, p.width, p.kind) == (op, width, kind)), None)

    def latency(self, op: str, width: int) -> float | None:
        """Latency of ``op`` at ``width`` bytes in cycles (minimum), None if not measured."""
        p = self.point(op, width, "latency")
        return p.cycles_min if p else None

    def throughput(self, op: str, width: int) -> float | None:
        """Instructions per cycle of ``op`` at ``width`` bytes (1 / minimum cy per instruction)."""
        p = self.point(op, width, "throughput")
        return 1.0 / p.cycles_min if p and p.cycles_min > 0 else None

    def to_dict(self) -> dict:
        """JSON-ready dictionary; units are in the key names."""
        return {"isa": self.isa, "clock_Hz": self.clock_hz, "calibrated": self.calibrated,
                "points": [p.to_dict() for p in self.points], "derived": derived_figures(self),
                "notes": list(self.notes)}


def _family(isa: str) -> str | None:
    isa = (isa or "").lower()
    return {"x86": "x86", "x86_64": "x86", "amd64": "x86", "aarch64": "aarch64", "arm64": "aarch64"}.get(isa)


def _reg(family: str, width: int, i: int, load_store: bool = False) -> str:
    """Register ``i`` of the class for ``width`` bytes, as written in extended asm."""
    if family == "x86":
        return f"%%{_X86_REG[width]}{i}"
    if load_store:
        return f"q{i}"
    return f"d{i}" if width == 8 else f"v{i}.2d"


def _arith_body(table: dict, family: str, op: str, width: int, kind: str) -> tuple:
    m = table["arith"][op][0 if width > 8 else 1]
    r = lambda i: _reg(family, width, i)  # noqa: E731
    if op == "SQRT":  # one source: the latency chain feeds each result to the next square root
        tmpl = table["sqrt"][0 if width > 8 else 1].replace("{m}", m)
        if kind == "latency":
            return (tmpl.format(d=r(0), b=r(0)),) * UNROLL
        return tuple(tmpl.format(d=r(k % ACCUMULATORS), b=r(SRC_B)) for k in range(UNROLL))
    if kind == "latency":
        a = SRC_A if op == "FMA" else 0  # FMA chains through its accumulator
        line = table["op3"].format(m=m, d=r(0), a=r(a), b=r(SRC_B))
        return (line,) * UNROLL
    return tuple(table["op3"].format(m=m, d=r(k % ACCUMULATORS), a=r(SRC_A), b=r(SRC_B)) for k in range(UNROLL))


def _offsets(family: str, op: str, width: int) -> list:
    """Byte offsets of the UNROLL accesses of memory form ``op`` in the buffer.

    LOAD/STORE (aligned): consecutive ``width``-byte slots; _SPLIT: 8 B below each line's end;
    _UNALIGNED: 8 B into each line; _LINE: the start of each line (the aligned access pattern
    of the other two); :data:`SPLIT_STREAMS`: n streams in turn, each in its own UNROLL/n
    consecutive lines at its offset into the line. AArch64 unscaled offsets (``ldur``) reach
    255 B only, so its forms other than the aligned ones cycle over 4 lines.
    """
    if op in ("LOAD", "STORE"):
        return [(k * width) % BUFFER_BYTES for k in range(UNROLL)]
    if op in SPLIT_STREAMS:
        shifts = SPLIT_STREAMS[op]
        n = len(shifts)
        line = [k % 4 if family == "aarch64" else (k % n) * (UNROLL // n) + k // n for k in range(UNROLL)]
        return [line[k] * LINE + shifts[k % n] for k in range(UNROLL)]
    shift = {"SPLIT": LINE - 8, "UNALIGNED": 8, "LINE": 0}[op.partition("_")[2]]
    lines = 4 if family == "aarch64" else UNROLL
    return [(k % lines) * LINE + shift for k in range(UNROLL)]


def split_share(op: str, width: int) -> float:
    """Share of the accesses of memory form ``op`` at ``width`` B that cross a cache line
    (:data:`LINE`): an access of W bytes at offset x splits where ``x mod LINE + W > LINE``
    (the same on x86 and AArch64: their forms differ in lines, not in offsets into the line)."""
    offsets = _offsets("x86", op, width)
    return sum(1 for x in offsets if x % LINE + width > LINE) / len(offsets)


def _access_key(op: str) -> str:
    """The table's template of memory form ``op``: ``load``/``store`` (aligned: LOAD, STORE and
    the _LINE forms), else ``load_u``/``store_u`` (unaligned instructions)."""
    aligned = op in ("LOAD", "STORE") or op.endswith("_LINE")
    return ("load" if op.startswith("LOAD") else "store") + ("" if aligned else "_u")


def _memory_body(table: dict, family: str, op: str, width: int) -> tuple:
    key = _access_key(op)
    out = []
    for k, off in enumerate(_offsets(family, op, width)):
        reg = _reg(family, width, k % ACCUMULATORS if key.startswith("load") else SRC_A, True)
        out.append(table[key].format(off=off, d=reg, s=reg, q=reg))
    return tuple(out)


def _form_text(family: str, template: str, width: int, memory: bool) -> str:
    """``vaddpd zmm, zmm, zmm`` / ``fadd v.2d, v.2d, v.2d`` / ``vmovapd mem, zmm``."""
    cls = _X86_REG[width] if family == "x86" else ("q" if memory else "d" if width == 8 else "v.2d")
    mem = "mem" if family == "x86" else "[mem]"
    text = template.replace("{off}(%[buf])", mem).replace("[%[buf], #{off}]", mem).replace("[%[ones]]", mem)
    text = text.replace("{{", "").replace("}}", "")
    for key in ("{d}", "{a}", "{b}", "{s}", "{q}"):
        text = text.replace(key, cls)
    return text


def _widths(family: str, features: set) -> list:
    """SIMD widths in bytes this host has (NEON is part of every AArch64 core)."""
    if family == "aarch64":
        return [16]
    return [w for w, flag in ((16, "sse2"), (32, "avx"), (64, "avx512f"))
            if flag in features or (w == 16 and "avx" in features)]


def _pipeline_body(table: dict, op: str) -> tuple:
    """``(body, form text)`` of a :data:`PIPELINE_OPS` form."""
    if op == "ISSUE":
        mov, nop = table["issue"]
        gprs = table["gprs"]
        body = tuple(nop if k % 2 else mov.format(r=gprs[k // 2 % len(gprs)]) for k in range(UNROLL))
        return body, f"{mov.format(r='r32')} and {nop.replace('%%', '%')} alternating"
    if op == "BRANCH":
        return (table["jump"],) * UNROLL, table["jump"].split(";")[0] + " (to the next, 32 B aligned)"
    if op == "LOOP_BRANCH":
        return ("nop; nop",), "loop of two nops (cy per taken branch)"
    line = table["forward" if op == "STORE_FORWARD" else "forward_gpr"]
    return (line,) * UNROLL, line.replace("%%", "%").replace("%[buf]", "mem")


def _make_form(table: dict, family: str, op: str, width: int, kind: str) -> InstructionForm:
    """The :class:`InstructionForm` of ``op`` at ``width`` bytes for one ISA table."""
    clobbers = ()
    if op in ARITH_OPS:
        body = _arith_body(table, family, op, width, kind)
        m = table["arith"][op][0 if width > 8 else 1]
        tmpl = table["sqrt"][0 if width > 8 else 1] if op == "SQRT" else table["op3"]
        form = _form_text(family, tmpl.replace("{m}", m), width, False)
    elif op in PIPELINE_OPS:
        body, form = _pipeline_body(table, op)
        clobbers = _GPR_CLOBBERS[family] if op in ("ISSUE", "STORE_FORWARD_GPR") else ()
    else:
        body = _memory_body(table, family, op, width)
        form = _form_text(family, table[_access_key(op)], width, True)
        form += f" ({len(SPLIT_STREAMS[op])} streams at {', '.join(map(str, SPLIT_STREAMS[op]))} B into the line)" \
            if op in SPLIT_STREAMS else ""
    init_width = 16 if width == 8 else width
    init = tuple(table["init"].format(d=_reg(family, init_width, i)) for i in range(SRC_B + 1)) \
        if op not in ("BRANCH", "LOOP_BRANCH", "ISSUE", "STORE_FORWARD_GPR") else ()  # no vector state to set up
    name = f"{op.lower()}_{width}_{'lat' if kind == 'latency' else 'tp'}"
    return InstructionForm(name, op, width, kind, form, family, body, init, clobbers)


def instruction_forms(isa: str, features) -> list:
    """The forms this host can run, from its ISA family and feature flags.

    Args:
        isa: ``"x86"`` (also ``x86_64``, ``amd64``) or ``"aarch64"`` (``arm64``).
        features: feature flags (``('sse2', 'avx', 'fma', 'avx512f', ...)`` or
            ``('asimd', 'sve')``, :func:`loopmodel.measure.topology.read_topology` ``.isa``).

    Returns:
        list of :class:`InstructionForm`: ADD, MUL, DIV (scalar 8 B and every SIMD width),
        FMA (SIMD widths with ``fma``/AVX-512 on x86; NEON ``fmla``), each as latency and
        throughput; LOAD and STORE per SIMD width; LOAD_SPLIT/STORE_SPLIT at the widest width;
        LOAD_UNALIGNED/STORE_UNALIGNED at the widest width below 64 B; LOAD_LINE/STORE_LINE
        (aligned, one access per cache line: the reference of the split and unaligned forms,
        whose access pattern they share) at both of these widths; LOAD_SPLIT_MIXED and
        LOAD_SPLIT_2STREAMS (:data:`SPLIT_STREAMS`) at the widest width; the pipeline forms
        (:data:`PIPELINE_OPS`, 8 B). Empty for an unknown ISA or an x86 host without SSE2.
    """
    family = _family(isa)
    feats = {str(f).lower() for f in features or ()}
    if family is None or (family == "x86" and not {"sse2", "avx"} & feats):
        return []
    table = _AARCH64 if family == "aarch64" else _X86_AVX if "avx" in feats else _X86_SSE
    widths = _widths(family, feats)
    forms = []
    for op in ARITH_OPS:
        if op not in table["arith"]:
            continue
        for width in [8, *widths]:
            if (width == 8 and table["arith"][op][1] is None) or \
                    (op == "FMA" and family == "x86" and width < 64 and "fma" not in feats):
                continue
            forms += [_make_form(table, family, op, width, k) for k in ("latency", "throughput")]
    forms += [_make_form(table, family, op, 8, "latency") for op in ("STORE_FORWARD", "STORE_FORWARD_GPR")]
    forms += [_make_form(table, family, op, 8, "throughput") for op in ("BRANCH", "LOOP_BRANCH", "ISSUE")]
    forms += [_make_form(table, family, op, w, "throughput") for op in ("LOAD", "STORE") for w in widths]
    forms += [_make_form(table, family, op, max(widths), "throughput")
              for op in ("LOAD_SPLIT", "STORE_SPLIT", *SPLIT_STREAMS)]
    narrow = [w for w in widths if w < LINE]
    forms += [_make_form(table, family, op, max(narrow), "throughput")
              for op in ("LOAD_UNALIGNED", "STORE_UNALIGNED") if narrow]
    forms += [_make_form(table, family, op, w, "throughput")
              for w in sorted({max(widths), *narrow[-1:]}, reverse=True) for op in ("LOAD_LINE", "STORE_LINE")]
    return forms


_MAIN = r"""
typedef long (*lm_fn)(long);
static const struct { const char *name; lm_fn fn; int per_iteration; } lm_forms[] = {
%(table)s
};

static double lm_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    if (argc < 5) {
        fprintf(stderr, "usage: incore CPU REPETITIONS MIN_TIME_S FORM...\n");
        return 2;
    }
    int cpu = atoi(argv[1]), reps = atoi(argv[2]);
    double min_time = atof(argv[3]);
    if (reps < 1 || !(min_time > 0)) {
        fprintf(stderr, "incore: repetitions must be >= 1 and min_time_s > 0\n");
        return 2;
    }
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    int pinned = sched_setaffinity(0, sizeof set, &set) == 0;
    for (int a = 4; a < argc; ++a) {
        int f = -1;
        for (int i = 0; i < (int)(sizeof lm_forms / sizeof lm_forms[0]); ++i)
            if (strcmp(lm_forms[i].name, argv[a]) == 0)
                f = i;
        if (f < 0) {
            fprintf(stderr, "incore: unknown form '%%s'\n", argv[a]);
            return 2;
        }
        long n = 16;
        for (;;) { /* calibration, doubling; also the warm-up */
            double t0 = lm_now();
            lm_forms[f].fn(n);
            if (lm_now() - t0 >= min_time || n > (1L << 40))
                break;
            n *= 2;
        }
        long m = 16;
        for (;;) { /* the reference chain, calibrated to the same duration */
            double t0 = lm_now();
            lm_ref(m);
            if (lm_now() - t0 >= min_time || m > (1L << 40))
                break;
            m *= 2;
        }
        double ref[reps > 0 ? reps : 1];
        printf("{\"form\": \"%%s\", \"pinned\": %%d, \"iterations\": %%ld, \"instructions_per_iteration\": %%d, "
               "\"seconds\": [", argv[a], pinned, n, lm_forms[f].per_iteration);
        for (int r = 0; r < reps; ++r) {
            double t0 = lm_now();
            lm_forms[f].fn(n);
            double t1 = lm_now();
            lm_ref(m);
            ref[r] = lm_now() - t1;
            printf("%%s%%.9g", r ? ", " : "", t1 - t0);
        }
        printf("], \"reference_instructions\": %%ld, \"reference_seconds\": [", m * %(ref_unroll)d);
        for (int r = 0; r < reps; ++r)
            printf("%%s%%.9g", r ? ", " : "", ref[r]);
        printf("]}\n");
        fflush(stdout);
    }
    return 0;
}
"""

_HEAD = r"""/* loopmodel in-core instruction benchmarks (generated by loopmodel.measure.incore_bench).
 *
 * Usage:  incore CPU REPETITIONS MIN_TIME_S FORM [FORM ...]
 * Output: one JSON line per form on stdout (seconds per repetition of ITERATIONS loop passes
 * of INSTRUCTIONS_PER_ITERATION benchmarked instructions); errors: one line on stderr, exit 2.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double lm_ones[8] __attribute__((aligned(64))) = {1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0};
static char lm_buf[%d] __attribute__((aligned(4096)));
"""

#: per family: the loop's counter decrement and backward branch
_LOOP = {"x86": ("sub $1, %[n]", "jnz 1b"), "aarch64": ("subs %[n], %[n], #1", "b.ne 1b")}
#: per family: the prefix of the clobbered registers 0..15
_CLOBBER = {"x86": "xmm", "aarch64": "v"}


def _function(form: InstructionForm) -> str:
    """``static long bench_NAME(long n)``: the form's loop in GCC extended asm."""
    after = ("vzeroupper",) if form.isa == "x86" and form.init and form.init[0].startswith("v") else ()
    lines = [*form.init, ".p2align 6", "1:", *form.body, *_LOOP[form.isa], *after]  # loop on a 64 B line
    asm = "\n".join(f'        "{ln}\\n\\t"' for ln in lines)
    clobbers = ", ".join([f'"{_CLOBBER[form.isa]}{i}"' for i in range(SRC_B + 1)] + [f'"{r}"' for r in form.clobbers])
    return (f"/* {form.op} {form.width} B {form.kind}: {form.form} */\n"
            f"static long bench_{form.name}(long n)\n{{\n    __asm__ volatile(\n{asm}\n"
            f'        : [n] "+r"(n)\n        : [buf] "r"(lm_buf), [ones] "r"(lm_ones)\n'
            f'        : {clobbers}, "cc", "memory");\n    return n;\n}}\n')


#: per family: one instruction of the reference chain, a dependent integer add of a register
#: (1 cy latency on every x86-64 and AArch64 core: the clock reference of
#: :mod:`loopmodel.measure.clock` too; not an immediate, which some cores fold at rename)
_REF_ADD = {"x86": "add %[one], %[x]", "aarch64": "add %[x], %[x], %[one]"}


def _reference(family: str) -> str:
    """``static long lm_ref(long n)``: n passes of UNROLL dependent integer adds."""
    lines = ["1:", *([_REF_ADD[family]] * UNROLL), *_LOOP[family]]
    asm = "\n".join(f'        "{ln}\\n\\t"' for ln in lines)
    return ("/* reference chain: dependent integer adds, 1 cy each */\nstatic long lm_ref(long n)\n{\n"
            f"    long x = 0;\n    __asm__ volatile(\n{asm}\n"
            '        : [n] "+r"(n), [x] "+r"(x)\n        : [one] "r"(1L)\n        : "cc");\n    return x;\n}\n')


def incore_source(forms) -> str:
    """The C program measuring ``forms`` (list of :class:`InstructionForm`, one ISA family),
    each repetition followed by the reference chain (:func:`_reference`)."""
    table = "\n".join(f'    {{"{f.name}", bench_{f.name}, {len(f.body)}}},' for f in forms) or "    {0, 0, 0},"
    family = forms[0].isa if forms else "x86"
    return (_HEAD % (BUFFER_BYTES + 2 * LINE) + "\n" + _reference(family) + "\n"
            + "\n".join(_function(f) for f in forms) + _MAIN % {"table": table, "ref_unroll": UNROLL})


def compile_flags(isa: str) -> tuple:
    """``-O1`` and the host's ISA (``-march=native`` on x86, ``-mcpu=native`` on AArch64)."""
    return ("-O1", "-mcpu=native" if _family(isa) == "aarch64" else "-march=native")


def parse_line(line: str, form: InstructionForm, repetitions: int) -> tuple:
    """``(pinned, iterations, instructions per iteration, [seconds per repetition], reference)``;
    ``reference``: ``(instructions, [seconds per repetition])`` of the reference chain, or None
    (output without it).

    Raises:
        ToolError: the line is not the program's JSON for ``form`` (one line).
    """
    try:
        d = json.loads(line)
        seconds = [float(s) for s in d["seconds"]]
        iterations, per_it = int(d["iterations"]), int(d["instructions_per_iteration"])
        if d["form"] != form.name or len(seconds) != repetitions or min(seconds) <= 0 or iterations < 1 \
                or per_it < 1:
            raise ValueError
    except (ValueError, KeyError, TypeError):
        raise ToolError(f"in-core benchmark: unreadable output for {form.name}: {line.strip()[:120]!r}") from None
    ref = None
    if "reference_seconds" in d:
        try:
            ref_s = [float(x) for x in d["reference_seconds"]]
            ref_n = int(d["reference_instructions"])
            if len(ref_s) != repetitions or min(ref_s) <= 0 or ref_n < 1:
                raise ValueError
        except (ValueError, KeyError, TypeError):
            raise ToolError(f"in-core benchmark: unreadable reference for {form.name}: {line.strip()[:120]!r}") from None
        ref = (ref_n, ref_s)
    return bool(d.get("pinned", 1)), iterations, per_it, seconds, ref


def make_point(form: InstructionForm, iterations: int, per_iteration: int, seconds: list,
               clock_hz: float, reference: tuple | None = None) -> InstructionPoint:
    """Cycles per instruction = seconds * f / (iterations * per_iteration), min/median/max over
    the repetitions; f is ``clock_hz``, or, with ``reference`` ``(instructions, seconds)``,
    :func:`reference_clock_hz` of the chain timed beside this form's repetitions."""
    f = reference_clock_hz(reference) if reference else clock_hz
    cy = sorted(s * f / (iterations * per_iteration) for s in seconds)
    mid = len(cy) // 2
    median = cy[mid] if len(cy) % 2 else (cy[mid - 1] + cy[mid]) / 2
    return InstructionPoint(form.op, form.width, form.kind, form.form, cy[0], median, cy[-1])


def reference_clock_hz(reference: tuple) -> float:
    """The clock (Hz) of the reference chain ``(instructions, [seconds per repetition])``:
    instructions / the fastest repetition (1 cy per dependent integer add). The fastest, as
    for the form's own times: preemption on a shared host only lengthens a run, and a clock
    taken per repetition from a preempted reference would read low and make that repetition's
    cycles the (wrong) minimum."""
    return reference[0] / min(reference[1])


def _build(forms: list, compiler: str, flags: tuple, directory: str) -> tuple:
    """Compile the program for ``forms``; forms the assembler rejects are dropped.

    Returns ``(executable, kept forms, notes)``. Raises ToolError for a missing compiler or
    when even the program without forms fails.
    """
    toolchain.find_compiler(compiler)
    try:
        return toolchain.compile_c(incore_source(forms), compiler, flags, "executable", "incore", directory), forms, []
    except ToolError:
        pass
    kept, notes = [], []
    for f in forms:  # find the culprits one by one
        try:
            toolchain.compile_c(incore_source([f]), compiler, flags, "executable", "probe", directory)
            kept.append(f)
        except ToolError as exc:
            notes.append(f"{f.name} ({f.form}) left out: {exc}")
    exe = toolchain.compile_c(incore_source(kept), compiler, flags, "executable", "incore", directory)
    return exe, kept, notes


def _default_cpu() -> int:
    """The first CPU this process may run on."""
    return allowed_cpus()[0]


def run_incore(isa: str, features, clock_hz: float, repetitions: int = 5, min_time_s: float = 0.005,
               compiler: str = "gcc", cpu: int | None = None, runner: Callable[[list], str] | None = None,
               progress: Callable[[int, int], None] | None = None, forms: list | None = None) -> InCoreBenchResult:
    """Measure every instruction form of this host (one pinned program run per form).

    Args:
        isa, features: as for :func:`instruction_forms`.
        clock_hz: core clock in Hz that converts seconds to cycles.
        repetitions: runs per form (min, median, max over them); min_time_s: seconds per run.
        compiler: C compiler (``-O1 -march=native`` / ``-mcpu=native``).
        cpu: CPU to pin to (default: the lowest this process may run on).
        runner: ``runner(command) -> stdout`` for one form; given, nothing is compiled and
            ``command[0]`` is ``'incore'`` (tests pass a fake). Default: compile and run.
        progress: ``progress(done, total)`` after each form.
        forms: a subset of :func:`instruction_forms` to measure (default: all).

    Returns:
        :class:`InCoreBenchResult`; a form that cannot be built or run is left out with a note.

    Raises:
        ToolError: bad arguments or a missing compiler (one line).
    """
    if not clock_hz > 0 or repetitions < 1 or not min_time_s > 0:
        raise ToolError("in-core benchmark: clock_hz and min_time_s must be > 0, repetitions >= 1")
    family = _family(isa) or str(isa)
    forms = list(instruction_forms(isa, features) if forms is None else forms)
    if not forms:
        return InCoreBenchResult(family, float(clock_hz), (), (f"no instruction forms for ISA '{isa}' "
                                                               f"with features {', '.join(features or ()) or 'none'}",))
    cpu = _default_cpu() if cpu is None else int(cpu)
    with tempfile.TemporaryDirectory(prefix="loopmodel-incore-") as d:
        if runner is None:
            exe, forms, notes = _build(forms, compiler, compile_flags(family), d)
            run = lambda cmd: toolchain.run_program(cmd, "the in-core benchmark", 60.0 + repetitions * min_time_s * 4)  # noqa: E731
        else:
            exe, notes, run = "incore", [], runner
        points, unpinned, calibrated, off_clock = [], False, True, []
        for i, form in enumerate(forms):
            try:
                line = run([exe, str(cpu), str(repetitions), repr(float(min_time_s)), form.name])
                pinned, iterations, per_it, seconds, ref = parse_line(line, form, repetitions)
                points.append(make_point(form, iterations, per_it, seconds, clock_hz, ref))
                calibrated = calibrated and ref is not None
                unpinned |= not pinned
                f_ref = reference_clock_hz(ref) if ref else clock_hz
                if abs(f_ref / clock_hz - 1.0) > CLOCK_TOLERANCE:
                    off_clock.append(f"{form.name} ({f_ref / 1e9:.2f} GHz)")
            except ToolError as exc:
                notes.append(f"{form.name} ({form.form}) left out: {exc}")
            if progress is not None:
                progress(i + 1, len(forms))
    if unpinned:
        notes.append(f"could not pin to CPU {cpu}: figures may mix CPUs")
    if off_clock:
        notes.append(f"the reference chain ran more than {CLOCK_TOLERANCE:.0%} away from the measured clock "
                     f"{clock_hz / 1e9:.2f} GHz beside {', '.join(off_clock)}: the clock moved (turbo, "
                     "frequency scaling) or every reference run was preempted; their cycles use the reference")
    return InCoreBenchResult(family, float(clock_hz), tuple(points), tuple(notes), calibrated and bool(points))


def _sig3(x: float) -> float:
    """``x`` rounded to 3 significant digits."""
    return 0.0 if x == 0 else round(x, 2 - int(math.floor(math.log10(abs(x)))))


def _widest(result: InCoreBenchResult, simd_width: int, op: str, kind: str) -> int | None:
    """``simd_width`` if ``op`` was measured there, else the widest width it was measured at."""
    widths = [p.width for p in result.points if p.op == op and p.kind == kind]
    return simd_width if simd_width in widths else max(widths, default=None)


def in_core_section(result: InCoreBenchResult, simd_width: int) -> dict:
    """The ``in_core:`` mapping of a loopmodel machine file from the measured figures.

    Args:
        result: a :class:`InCoreBenchResult` with at least LOAD and STORE throughput.
        simd_width: bytes of the widest SIMD register (64, 32, 16).

    Returns:
        ``{simd_width: "64 B", throughput: {ADD: ipc, ...}, latency: {ADD: "4.02 cy", ...},
        load: {instructions_per_cycle, bytes_per_cycle: "N B/cy"}, store: {...},
        flops_per_cycle: {DP: {total, ADD, MUL, FMA}, SP: {...}}}``; throughputs in
        instructions per cycle at ``simd_width`` (3 significant digits), DP FLOPs per cycle =
        throughput x width/8 lanes (FMA counts 2), SP twice that, total the largest.

    Raises:
        ToolError: LOAD or STORE throughput was not measured.
    """
    throughput, latency, flops = {}, {}, {}
    for op in ARITH_OPS:
        w = _widest(result, simd_width, op, "throughput")
        if w is not None and result.throughput(op, w):
            throughput[op] = _sig3(result.throughput(op, w))
            if op not in ("DIV", "SQRT"):  # not counted as FLOPs (kerncraft-tool-paper.txt §2.3)
                flops[op] = result.throughput(op, w) * w / 8 * (2 if op == "FMA" else 1)
        w = _widest(result, simd_width, op, "latency")
        if w is not None:
            latency[op] = f"{_sig3(result.latency(op, w)):g} cy"
    section = {"simd_width": f"{simd_width} B", "throughput": throughput, "latency": latency}
    section.update(_by_width_section(result))
    section.update(_pipeline_section(result))
    for key, op in (("load", "LOAD"), ("store", "STORE")):
        w = _widest(result, simd_width, op, "throughput")
        ipc = result.throughput(op, w) if w is not None else None
        if not ipc:
            raise ToolError(f"in-core benchmark: no {op} throughput measured; cannot write in_core.{key}")
        section[key] = {"instructions_per_cycle": _sig3(ipc), "bytes_per_cycle": f"{_sig3(ipc * w):g} B/cy"}
    if flops:
        dp = {op: _sig3(v) for op, v in flops.items()}
        section["flops_per_cycle"] = {"DP": {"total": max(dp.values()), **dp},
                                      "SP": {"total": 2 * max(dp.values()), **{k: 2 * v for k, v in dp.items()}}}
    return section


def _by_width_section(result: InCoreBenchResult) -> dict:
    """``latency_by_width`` ``{op: {width: cy}}`` and ``throughput_by_width`` ``{op: {width:
    instructions/cy}}`` of every arithmetic form measured (3 significant digits)."""
    out = {"latency_by_width": {}, "throughput_by_width": {}}
    for p in result.points:
        if p.op not in ARITH_OPS or p.cycles_min <= 0:
            continue
        key, value = ("latency_by_width", p.cycles_min) if p.kind == "latency" else \
            ("throughput_by_width", 1.0 / p.cycles_min)
        out[key].setdefault(p.op, {})[p.width] = _sig3(value)
    return {k: v for k, v in out.items() if v}


def _pipeline_section(result: InCoreBenchResult) -> dict:
    """``store_forward_latency`` (cy per store-load pair of the STORE_FORWARD chain),
    ``taken_branches_per_cycle`` (:func:`taken_branches_per_cycle`) and ``instructions_per_cycle``
    (1 / cy per instruction of the ISSUE loop) where measured and in range (latency 0 < x <=
    1000 cy, rates 0 < x <= 64 per cy: :mod:`loopmodel.machine.fields`)."""
    out = {}
    fwd = result.point("STORE_FORWARD", 8, "latency")
    if fwd is not None and 0 < fwd.cycles_min <= 1000:
        out["store_forward_latency"] = _sig3(fwd.cycles_min)
    issue = result.point("ISSUE", 8, "throughput")
    rates = {"taken_branches_per_cycle": taken_branches_per_cycle(result),
             "instructions_per_cycle": 1.0 / issue.cycles_min if issue and issue.cycles_min > 0 else None}
    out.update({k: _sig3(v) for k, v in rates.items() if v is not None and 1e-4 <= v <= 64})
    return out


def taken_branches_per_cycle(result: InCoreBenchResult) -> float | None:
    """Taken branches per cy (``in_core.taken_branches_per_cycle``): the higher of the two
    measured rates, the BRANCH loop's (49 taken branches per pass of 48 jumps:
    :data:`BRANCH_TAKEN_PER_JUMP` / cy per jump) and the LOOP_BRANCH loop's (one per pass);
    None where neither was measured.

    The model uses the figure as a bound of a loop's passes per cy (one taken branch each), so
    it must not lie below a rate a loop reaches: on a Sapphire-Rapids-class host the tight loop
    ran one taken branch per 1.0 cy and the body of 48 distinct jumps one per 1.0-1.3 cy (the
    branch predictor's fastest level holds few branches); on a core that takes two branches per
    cy the jumps read higher (measured by the probe)."""
    rates = [taken / p.cycles_min
             for taken, p in ((BRANCH_TAKEN_PER_JUMP, result.point("BRANCH", 8, "throughput")),
                             (1.0, result.point("LOOP_BRANCH", 8, "throughput")))
             if p is not None and p.cycles_min > 0]
    return max(rates, default=None)


def gpr_forward_cy(result: InCoreBenchResult) -> float | None:
    """Store-to-load forwarding through a 64-bit integer register (cy, provenance): cy per pass
    of the STORE_FORWARD_GPR chain less its 1-cy add (:data:`GPR_FORWARD_ADD_CY`), at least 0
    (a core that renames the memory operand forwards in ~0 cy); None where not measured."""
    p = result.point("STORE_FORWARD_GPR", 8, "latency")
    return max(p.cycles_min - GPR_FORWARD_ADD_CY, 0.0) if p is not None else None


def split_extras(result: InCoreBenchResult, kind: str = "load") -> dict:
    """Extra port time of one cache-line-split access, in units of an aligned access of the
    same width (``in_core.load.split_extra``'s unit), per split form measured.

    For a form whose accesses split with share s (:func:`split_share`: 1 for _SPLIT and
    _SPLIT_2STREAMS, 2/3 for _SPLIT_MIXED at 64 B) and cost c cy each on average, against c0 cy
    per aligned access at the start of a line (_LINE, the same width): ``extra = (c / c0 - 1) / s``
    (an aligned access costs 1 unit, a split one 1 + extra), at least 0. Measured by the probe.

    Args:
        result: the measurements; kind: ``"load"`` or ``"store"``.

    Returns:
        ``{op: extra}`` for ``{KIND}_SPLIT``, ``{KIND}_SPLIT_MIXED``, ``{KIND}_SPLIT_2STREAMS``
        where the form and its _LINE reference were measured.
    """
    out = {}
    for op in (f"{kind.upper()}_SPLIT", *(o for o in SPLIT_STREAMS if o.startswith(kind.upper()))):
        p = next((q for q in result.points if q.op == op and q.kind == "throughput"), None)
        ref = result.point(f"{kind.upper()}_LINE", p.width, "throughput") if p is not None else None
        share = split_share(op, p.width) if p is not None else 0.0
        if ref is not None and ref.cycles_min > 0 and share > 0:
            out[op] = max((p.cycles_min / ref.cycles_min - 1.0) / share, 0.0)
    return out


def split_extra(result: InCoreBenchResult, kind: str = "load") -> tuple:
    """``(extra, op)``: the split cost the machine model takes (``in_core.{kind}.split_extra``)
    and the form it comes from: {KIND}_SPLIT_MIXED where measured, else {KIND}_SPLIT;
    ``(None, None)`` without either.

    The mixed pattern (an aligned, a split and an unaligned stream, :data:`SPLIT_STREAMS`) is
    what stencils compiled without peeling run: their split loads share the load ports with
    aligned ones, and a split load's second line access overlaps with them. A loop of split
    loads alone charges every access both lines back to back: on a Sapphire-Rapids-class host it
    read 1.0-1.6 extra units over six runs and the mixed pattern 0.8-1.2, lower in every run;
    the mixed figure is the cost the models charge per split load of a kernel
    (:mod:`loopmodel.models.split_access`)."""
    extras = split_extras(result, kind)
    for op in (f"{kind.upper()}_SPLIT_MIXED", f"{kind.upper()}_SPLIT"):
        if op in extras:
            return extras[op], op
    return None, None


def access_costs(result: InCoreBenchResult) -> dict:
    """Cycles per load/store instruction: split and unaligned against aligned (provenance).

    Returns:
        ``{"load_aligned_cy": widest aligned load (consecutive slots),
        "load_split_cy", "load_split_width_bytes", "load_split_reference_cy" (aligned, one
        access per line, same width: LOAD_LINE), "load_unaligned_cy",
        "load_unaligned_width_bytes", "load_unaligned_reference_cy", "load_split_mixed_cy",
        "load_split_2streams_cy" (their reference: load_split_reference_cy), and the same for
        store}``: cycles per instruction in the throughput loops; keys of forms not measured
        are left out.
    """
    out = {}
    for kind in ("load", "store"):
        widest = max((q.width for q in result.points if q.op == kind.upper()), default=None)
        if widest is not None:
            out[f"{kind}_aligned_cy"] = result.point(kind.upper(), widest, "throughput").cycles_min
        for variant in ("split", "unaligned", "split_mixed", "split_2streams"):
            p = next((q for q in result.points if q.op == f"{kind.upper()}_{variant.upper()}"), None)
            if p is None:
                continue
            out[f"{kind}_{variant}_cy"] = p.cycles_min
            if variant.startswith("split_"):
                continue
            out[f"{kind}_{variant}_width_bytes"] = p.width
            ref = result.point(f"{kind.upper()}_LINE", p.width, "throughput")
            if ref is not None:
                out[f"{kind}_{variant}_reference_cy"] = ref.cycles_min
    return out


def derived_figures(result: InCoreBenchResult) -> dict:
    """The figures derived from the points for the provenance (``probe.in_core.derived``):
    :func:`access_costs`, ``load_split_extra`` / ``store_split_extra`` per split form
    (:func:`split_extras`, ``{op: extra}``), ``store_forward_gpr_cy`` (:func:`gpr_forward_cy`),
    ``loop_branches_per_cycle`` (1 / cy per pass of the LOOP_BRANCH loop) and
    ``taken_jumps_per_cycle`` (the BRANCH loop's taken branches per cy); rounded to 4 decimals,
    keys of forms not measured left out."""
    out = {k: round(v, 4) if isinstance(v, float) else v for k, v in access_costs(result).items()}
    for kind in ("load", "store"):
        extras = split_extras(result, kind)
        if extras:
            out[f"{kind}_split_extra"] = {op: round(v, 4) for op, v in extras.items()}
    gpr, loop = gpr_forward_cy(result), result.point("LOOP_BRANCH", 8, "throughput")
    jumps = result.point("BRANCH", 8, "throughput")
    if gpr is not None:
        out["store_forward_gpr_cy"] = round(gpr, 4)
    if loop is not None and loop.cycles_min > 0:
        out["loop_branches_per_cycle"] = round(1.0 / loop.cycles_min, 4)
    if jumps is not None and jumps.cycles_min > 0:
        out["taken_jumps_per_cycle"] = round(BRANCH_TAKEN_PER_JUMP / jumps.cycles_min, 4)
    return out
