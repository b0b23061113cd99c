"""One classifier of assembly instruction lines: operands, register widths, memory access, FP class, SIMD level.

Every part of the compiled in-core analysis that asks what an instruction is (the dependency
chains of :mod:`.deps`, their latencies in :mod:`.chain_latency`, the probe check of
:mod:`.checked`, the differences named by :mod:`.agreement`, the port split of :mod:`.ports`,
the SIMD level of :mod:`.isa`, the packed accesses of :mod:`.asm`) reads it from here.

Syntaxes: x86 AT&T (gcc, clang; the destination last) and AArch64 GNU (the destination
first), NEON and SVE. Register widths in B: x86 ``xmm`` 16, ``ymm`` 32, ``zmm`` 64; AArch64
``q`` 16, ``d`` 8, ``s`` 4, ``h`` 2, ``b`` 1, NEON ``vN.<lanes><type>`` lanes x element size,
SVE ``zN`` the vector length, which the text does not hold: the machine model's
``in_core.simd_width`` (``sve_bytes``), unknown (None) without it. Arm Architecture Reference
Manual for A-profile (DDI 0487), C1.2 (register names) and the SVE supplement (vector length
a multiple of 16 B); Intel 64 and IA-32 Architectures Software Developer's Manual vol. 1 §5.
"""
from __future__ import annotations

from dataclasses import dataclass

import functools
import re


_X86_FP = re.compile(r"^v?(?:(?P<fma>f(?:n)?m(?:add|sub)(?:sub|add)?(?:132|213|231)?)|(?P<op>add|sub|mul|div|sqrt))"
                     r"(?P<kind>[sp])(?P<prec>[dsh])$")
_A64_FP = re.compile(r"^(?:(?P<fma>fn?m(?:la|ls|add|sub))|(?P<op>fadd|fsub|fmul|fdiv|fsqrt))$")
_FP_NAMES = {"add": "ADD", "sub": "ADD", "mul": "MUL", "div": "DIV", "sqrt": "SQRT",
             "fadd": "ADD", "fsub": "ADD", "fmul": "MUL", "fdiv": "DIV", "fsqrt": "SQRT"}
_X86_SCALAR_BYTES = {"d": 8, "s": 4, "h": 2}
_X86_VEC = re.compile(r"%([xyz])mm\d+")
_X86_VEC_BYTES = {"x": 16, "y": 32, "z": 64}
_A64_REG = re.compile(r"\b(?:([qdshbxw])\d+|(v)\d+(?:\.(\d*)([bhsd]))?|(z)\d+(?:\.[bhsdq])?|(p)\d+)\b")
_A64_BYTES = {"q": 16, "d": 8, "s": 4, "h": 2, "b": 1, "x": 8, "w": 4}
#: x86 integer instructions that read their memory destination (read-modify-write)
RMW = re.compile(r"^(lock\s+)?(add|adc|sub|sbb|and|or|xor|inc|dec|neg|not|shl|shr|sal|sar|rol|ror|xadd|cmpxchg)[bwlq]?$")
_NO_ACCESS = ("lea", "prefetch", "nop")
_COMPARES = ("cmp", "test", "bt", "vcmp", "ucomi", "vucomi", "comi", "vcomi")
_X86_LOAD_ONLY = re.compile(r"^v?(mov|movu|mova|movs|movap|movup|movdq|lddqu|pmovzx|pmovsx)|^v?p?broadcast")
_X86_PACKED = re.compile(r"^v?(?:mov[au]p[sd]|movdq[au](?:8|16|32|64)?|movntp[sd]|movntdq|[a-z0-9]+p[sd])$")
_X86_NOT_PACKED = ("vbroadcast", "vpbroadcast", "vgather", "vscatter", "vpgather", "vpscatter", "movhp", "movlp",
                   "vmovhp", "vmovlp", "vcvt", "cvt", "vinsert", "vextract", "vmovddup", "movddup")
_A64_PACKED = re.compile(r"^(?:ld|st)(?:r|p|ur|np|1)\b.*?\b(?:q\d+|v\d+\.(\d+)([bhsd]))")
_AVX512_REG = re.compile(r"%(zmm\d+|k[0-7]\b|[xy]mm(1[6-9]|2\d|3[01])\b)")
_AVX512_MNEM = re.compile(r"^(vpternlog|vperm[it]2|vscalef|vrndscale|vfixupimm|vcompress|vexpand|vrcp14|vrsqrt14|"
                          r"vgetexp|vgetmant|vreduce|vrange|vfpclass|vpmov[a-z]*[bwdq]$|k(mov|and|or|xor|not|"
                          r"ortest|test|shift|add|unpck))")
_AVX2_MNEM = re.compile(r"^(vf(n)?m(add|sub)|vfmaddsub|vfmsubadd|v(p)?gather|vpbroadcast|vperm2i128|vinserti128|"
                        r"vextracti128|vperm(q|d|pd|ps)\b|vps(ll|rl|ra)v|vpmaskmov|vpblendd)")
_SVE = re.compile(r"\bz\d+\.[bhsdq]\b|\bp\d+(/[mz]|\.[bhsd])|^(whilel[eot]|ptrue|ptest|incd|incw|cntd|cntw)\b")
#: ``vp``-prefixed AVX (not AVX2) instructions that take ymm registers: floating-point
#: lane permutes and the bit test (Intel SDM vol. 2: VPERM2F128, VPERMILPS/PD, VPTEST are AVX)
_AVX_VP = ("vperm2f128", "vpermilps", "vpermilpd", "vptest")


@dataclass(frozen=True)
class Instruction:
    """One assembly instruction line, classified.

    Attributes:
        text: the line, whitespace as given.
        mnemonic: lower case (``vfmadd231pd``, ``fmla``).
        operands: top-level operands (:func:`operands`), in the syntax's order.
        loads, stores: whether it reads or writes memory (:func:`access_kind`).
        fp_op: FP arithmetic class (ADD for additions and subtractions, MUL, FMA, DIV, SQRT: the
            classes the probe measures, :mod:`loopmodel.machine.latency`), '' for any other instruction.
        fp_width: B of its operation (scalar the element, packed the destination register),
            None where ``fp_op`` is '' or the width is unknown (SVE without ``sve_bytes``).
        vector_bytes: B of its widest FP/SIMD register, 0 without one, None where that register is
            an SVE ``z`` register of unknown length.
        fp_element: B of one element of its FP arithmetic (x86 ``..sd``/``..pd`` 8, ``..ss``/``..ps``
            4; AArch64 the destination's element or scalar register), None where ``fp_op`` is ''
            or the element is not named.
        simd: it names an FP/SIMD or SVE predicate register.
        isa: the SIMD level it needs (:func:`isa_level`).
    """

    text: str
    mnemonic: str
    operands: tuple
    loads: bool
    stores: bool
    fp_op: str
    fp_width: int | None
    vector_bytes: int | None
    simd: bool
    isa: str
    fp_element: int | None = None

    @property
    def fp_class(self) -> tuple | None:
        """``(op, width B)`` of FP arithmetic of known width, else None."""
        return (self.fp_op, self.fp_width) if self.fp_op and self.fp_width else None


@functools.lru_cache(maxsize=4096)
def parse(text: str, aarch64: bool = False, sve_bytes: float | None = None) -> Instruction:
    """Classify one instruction line (x86 AT&T or AArch64 GNU syntax; module docstring).

    Args:
        text: the instruction, without label or comment.
        aarch64: AArch64 syntax (else x86 AT&T).
        sve_bytes: the SVE vector length in B (the machine model's ``in_core.simd_width``), None
            where unknown.

    Returns:
        :class:`Instruction` (an empty line: mnemonic '' and nothing set).
    """
    s = text.strip()
    mnem = s.split(None, 1)[0].lower() if s else ""
    ops = tuple(operands(s))
    loads, stores = _access(mnem, ops, aarch64)
    regs = [register_bytes(r, aarch64, sve_bytes) for r in _registers(s, aarch64)]
    known = [b for b in regs if b is not None]
    widest = None if None in regs and not known else max(known, default=0)
    op, width = (_fp_a64(mnem, ops, sve_bytes) if aarch64 else _fp_x86(mnem, ops)) if mnem else ("", None)
    element = _fp_element(mnem, ops, aarch64) if op else None
    return Instruction(text, mnem, ops, loads, stores, op, width, widest, bool(regs), isa_level(s, aarch64), element)


@dataclass(frozen=True)
class Address:
    """One memory operand: x86 ``symbol+disp(base, index, scale)``, AArch64 ``[base, index, lsl #s]``
    or ``[base, #disp]`` with write-back (``!``) or a post-index immediate ``[base], #k``.

    Attributes:
        symbol: the symbol before an x86 displacement ('' none).
        disp: displacement in B.
        base, index: registers as written, without ``%`` ('' none).
        scale: the index's factor (``lsl #s``: 2**s).
        writeback: the base register advances (AArch64 ``!`` or post-index).
        post: the post-index immediate in B (None without one).
    """

    symbol: str
    disp: int
    base: str
    index: str
    scale: int
    writeback: bool = False
    post: int | None = None


_X86_ADDRESS = re.compile(r"([^(%]*)\(([^)]*)\)")
_A64_ADDRESS = re.compile(r"\[([^\]]*)\](!)?(?:\s*,\s*#?(-?\d+))?")


def addresses(text: str, aarch64: bool = False) -> tuple:
    """The memory operands of one instruction line, as :class:`Address`, in operand order; ``()``
    without one. x86 ``lea`` operands count (an address, not an access)."""
    out = []
    if aarch64:
        for m in _A64_ADDRESS.finditer(text):
            parts = [q.strip() for q in m.group(1).split(",")]
            index = parts[1].lower() if len(parts) > 1 and parts[1][:1].isalpha() else ""
            shift = re.search(r"lsl\s*#?(\d+)", m.group(1))
            imm = re.fullmatch(r"#?(-?\d+)", parts[-1]) if len(parts) > 1 and not index else None
            post = int(m.group(3)) if m.group(3) else None
            out.append(Address("", int(imm.group(1)) if imm else 0, parts[0].lower(), index,
                               2 ** int(shift.group(1)) if shift else 1, bool(m.group(2)) or post is not None, post))
        return tuple(out)
    return tuple(a for a in (operand_address(o) for o in operands(text)) if a is not None)


def operand_address(op: str) -> Address | None:
    """The :class:`Address` of one x86 AT&T operand (``-8(%rdx,%rax,8)``), None where it has none."""
    m = _X86_ADDRESS.search(op)
    if not m:
        return None
    parts = [q.strip() for q in m.group(2).split(",")]
    reg = [q[1:] if q.startswith("%") else "" for q in parts[:2]] + ["", ""]
    disp_text = m.group(1).strip()
    num = re.search(r"([+-]?\d+)$", disp_text)
    return Address(disp_text[:num.start()] if num else disp_text, int(num.group(1)) if num else 0, reg[0], reg[1],
                   int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else 1)


def operands(text: str) -> list:
    """The operands of one AT&T/ARM assembly instruction line, split at top-level commas (an
    address in parentheses or brackets stays one operand); [] where it has none."""
    parts = text.split(None, 1)
    if len(parts) < 2:
        return []
    out, depth, cur = [], 0, ""
    for ch in parts[1]:
        if ch == "," and depth == 0:
            out.append(cur.strip())
            cur = ""
            continue
        depth += ch in "([{"
        depth -= ch in ")]}"
        cur += ch
    out.append(cur.strip())
    return [o for o in out if o]


def access_kind(text: str, aarch64: bool = False) -> tuple:
    """``(loads, stores)`` flags of one assembly instruction.

    x86 AT&T: a memory operand in last (destination) position stores; elsewhere it loads;
    an integer read-modify-write instruction (``addq %rax, (%rdx)``) does both; compares only
    read. AArch64: ``ld*`` loads, ``st*`` stores.
    """
    p = parse(text, aarch64)
    return p.loads, p.stores


def _access(mnem: str, ops: tuple, aarch64: bool) -> tuple:
    if aarch64:
        return mnem.startswith("ld"), mnem.startswith("st")
    if mnem.startswith(_NO_ACCESS):
        return False, False
    mem = ["(" in o for o in ops]
    if not any(mem):
        return False, False
    store = mem[-1] and len(ops) > 1
    if mnem.startswith(_COMPARES):
        return True, False
    load = any(mem[:-1]) or (mem[-1] and len(ops) == 1) or (store and bool(RMW.match(mnem)))
    return load, store


def plain_load(text: str, aarch64: bool = False) -> bool:
    """Whether ``text`` only loads (a move or broadcast from memory, ``ld*`` on AArch64), with no
    arithmetic on the loaded value."""
    p = parse(text, aarch64)
    return p.loads and bool(p.mnemonic.startswith("ld") if aarch64 else _X86_LOAD_ONLY.match(p.mnemonic))


def _registers(s: str, aarch64: bool) -> list:
    """The FP/SIMD and SVE predicate register names of a line, in order."""
    if not aarch64:
        return [m.group(0) for m in _X86_VEC.finditer(s)]
    body = s.lower().split(None, 1)[1] if len(s.split(None, 1)) > 1 else ""
    return [m.group(0) for m in _A64_REG.finditer(body) if m.group(1) not in ("x", "w")]


def register_bytes(name: str, aarch64: bool = False, sve_bytes: float | None = None) -> int | None:
    """Width in B of a register (``%ymm3`` 32, ``d0`` 8, ``v1.4s`` 16, ``v1.2s`` 8, ``z2.d``
    ``sve_bytes``, ``p0`` its predicate: ``sve_bytes`` / 8); 0 for a name that is no register of
    the syntax, None for an SVE register without ``sve_bytes``."""
    n = name.strip().lower()
    if not aarch64:
        m = _X86_VEC.fullmatch(n if n.startswith("%") else "%" + n)
        return _X86_VEC_BYTES[m.group(1)] if m else 0
    m = _A64_REG.fullmatch(n)
    if not m:
        return 0
    if m.group(1):
        return _A64_BYTES[m.group(1)]
    if m.group(2):  # vN.<lanes><type>; vN.<type> (an element) or a bare vN (the whole register)
        return int(m.group(3) or 1) * _A64_BYTES[m.group(4)] if m.group(4) else 16
    if not sve_bytes:
        return None
    return int(sve_bytes) if m.group(5) else max(1, int(sve_bytes) // 8)


def _fp_x86(mnem: str, ops: tuple) -> tuple:
    m = _X86_FP.match(mnem)
    if not m:
        return "", None
    op = "FMA" if m.group("fma") else _FP_NAMES[m.group("op")]
    if m.group("kind") == "s":
        return op, _X86_SCALAR_BYTES[m.group("prec")]
    regs = _X86_VEC.findall(" ".join(ops))  # AT&T: the destination last
    return op, (_X86_VEC_BYTES[regs[-1]] if regs else None)


def _fp_a64(mnem: str, ops: tuple, sve_bytes: float | None) -> tuple:
    m = _A64_FP.match(mnem)
    if not m or not ops:
        return "", None
    op = "FMA" if m.group("fma") else _FP_NAMES[m.group("op")]
    width = register_bytes(ops[0], True, sve_bytes)
    return op, (width or None)


_A64_ELEMENT = re.compile(r"^(?:[vz]\d+\.\d*([hsd])|([hsd])\d+)$")


def _fp_element(mnem: str, ops: tuple, aarch64: bool) -> int | None:
    """B of one element of an FP arithmetic instruction (:attr:`Instruction.fp_element`)."""
    if not aarch64:
        m = _X86_FP.match(mnem)
        return _X86_SCALAR_BYTES[m.group("prec")] if m else None
    m = _A64_ELEMENT.match(ops[0].strip().lower()) if ops else None
    return _X86_SCALAR_BYTES[m.group(1) or m.group(2)] if m else None


def fp_class(text: str, aarch64: bool = False, sve_bytes: float | None = None) -> tuple | None:
    """``(op, width in B)`` of a floating-point arithmetic instruction, None for anything else
    and where the width is unknown (:attr:`Instruction.fp_class`).

    op: ADD (additions and subtractions), MUL, FMA (fused multiply-add and -subtract forms), DIV,
    SQRT. Width: x86 scalar ``sd`` 8, ``ss`` 4, ``sh`` 2, packed the destination register;
    AArch64 the destination register (:func:`register_bytes`; SVE ``sve_bytes``).
    """
    return parse(text, aarch64, sve_bytes).fp_class


def packed_bytes(line: str, aarch64: bool = False) -> int:
    """Width in B of the contiguous memory access of a packed SIMD instruction, 0 if none.

    x86: a packed move or packed floating-point operation (``...ps``/``...pd``) with a memory
    operand, as wide as its widest vector register; broadcasts, gathers, half-register moves
    and conversions are left out (their memory operand is narrower). AArch64: loads and
    stores of ``q`` registers (16 B) and of ``v`` register lists (lanes x element size).
    """
    s = line.strip()
    if aarch64:
        m = _A64_PACKED.match(s)
        if not m:
            return 0
        return 16 if m.group(1) is None else int(m.group(1)) * _A64_BYTES[m.group(2)]
    if "(" not in s:
        return 0
    mnem = s.split(None, 1)[0].lower()
    if mnem.startswith(_X86_NOT_PACKED) or not _X86_PACKED.match(mnem):
        return 0
    return max((_X86_VEC_BYTES[r] for r in _X86_VEC.findall(s)), default=0)


def isa_level(text: str, aarch64: bool = False) -> str:
    """The SIMD level one assembly instruction needs (:mod:`.isa`'s levels).

    x86: AVX-512 for zmm, mask (k) or upper-16 vector registers, EVEX-only mnemonics and
    ``{...}`` decorations; AVX2 for FMA, gathers, permutes and 256-bit integer operations;
    AVX for any other VEX-encoded (``v``-prefixed) instruction; SSE otherwise.
    AArch64: SVE for z/p registers and SVE-only mnemonics, NEON otherwise.
    """
    s = text.strip()
    mnem = s.split(None, 1)[0].lower() if s else ""
    if aarch64:
        return "SVE" if _SVE.search(s.lower()) else "NEON"
    if _AVX512_REG.search(s) or "{" in s or _AVX512_MNEM.match(mnem):
        return "AVX-512"
    if _AVX2_MNEM.match(mnem) or (mnem.startswith("vp") and not mnem.startswith(_AVX_VP) and "%ymm" in s):
        return "AVX2"
    return "AVX" if mnem.startswith("v") else "SSE"
