"""Finding the kernel's innermost loop in assembly and how many iterations one pass does.

x86 AT&T syntax (gcc, clang) and AArch64 (GNU syntax). The generated program marks the
kernel with ``# LOOPMODEL KERNEL START/END`` comments (``asm volatile``); loops are
blocks from a label to a backward branch to it. Among the innermost loops between the
markers the block with most floating-point/SIMD instructions is taken (as Kerncraft
does, kerncraft-tool-paper.txt §2.3), unless ``--asm-block`` names its label. The
iterations per pass follow from the increment of a register used in the block's memory
addresses (bytes per pass / bytes per iteration of the access), unless
``--pointer-increment`` gives bytes per pass.
"""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from ..errors import OptionError, ToolError
from .codegen import MARK_END, MARK_START

_LABEL = re.compile(r"^\s*([.\w$]+):")
_X86_BRANCH = re.compile(r"^\s*(j[a-z]+)\s+([.\w$]+)\s*$")
_A64_BRANCH = re.compile(r"^\s*(b(?:\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al))?|cbn?z|tbn?z)\s+"
                         r"(?:[\w]+\s*,\s*)*(?:#?\d+\s*,\s*)?([.\w$]+)\s*$")
_VECTOR = re.compile(r"%[xyz]mm\d+|\b[vqdsz]\d+(\.\d*[bhsd])?\b|\bp\d+\b")


@dataclass(frozen=True)
class AsmBlock:
    """One loop block: its label, instruction lines (label and directives removed) and the
    iterations of the kernel's inner loop one pass performs."""

    label: str
    lines: tuple
    first_line: int
    iterations_per_pass: float
    bytes_per_pass: float
    register: str

    @property
    def text(self) -> str:
        return "\n".join(self.lines) + "\n"


def _instructions(lines, aarch64: bool = False):
    out = []
    for n, raw in lines:
        if raw.strip().startswith("#"):
            continue
        # '#' starts a comment in AT&T syntax but marks immediates on AArch64
        s = (raw if aarch64 else raw.split("#", 1)[0]).split("//", 1)[0].strip()
        if not s or s.startswith(".") or _LABEL.match(s):
            continue
        out.append((n, s))
    return out


def loops(asm: str, aarch64: bool = False) -> list:
    """All loop blocks ``(label, start index, end index)`` in ``asm`` (between the markers if present)."""
    lines = asm.split("\n")
    lo, hi = 0, len(lines)
    for i, ln in enumerate(lines):
        if MARK_START in ln:
            lo = i
        elif MARK_END in ln and i > lo:
            hi = i
            break
    labels = {}
    found = []
    branch = _A64_BRANCH if aarch64 else _X86_BRANCH
    for i in range(lo, hi):
        m = _LABEL.match(lines[i])
        if m:
            labels[m.group(1)] = i
            continue
        b = branch.match(lines[i].split("//", 1)[0])
        if b and b.group(2) in labels and labels[b.group(2)] < i:
            found.append((b.group(2), labels[b.group(2)], i))
    return found


def find_kernel_block(asm: str, stride_bytes: float, aarch64: bool = False, label: str | None = None,
                      pointer_increment: float | None = None) -> AsmBlock:
    """The kernel's innermost loop block.

    Args:
        asm: assembly text.
        stride_bytes: bytes one inner-loop iteration advances the work access.
        aarch64: AArch64 syntax.
        label: take the loop at this label (``--asm-block``).
        pointer_increment: bytes per pass (``--pointer-increment``).

    Raises:
        ToolError: no loop, unknown label, or the increment cannot be determined.
    """
    lines = asm.split("\n")
    found = loops(asm, aarch64)
    if not found:
        raise ToolError("no loop found in the compiled kernel (was the loop removed or fully unrolled?)")
    if label is not None:
        sel = [f for f in found if f[0] == label]
        if not sel:
            raise OptionError(f"--asm-block {label}: no loop with that label (loops: "
                            f"{', '.join(f[0] for f in found)})")
        lab, a, b = sel[0]
    else:
        inner = [f for f in found if not any(g is not f and f[1] <= g[1] and g[2] <= f[2] for g in found)]

        def score(f):
            ins = _instructions(enumerate(lines[f[1]:f[2] + 1], f[1]), aarch64)
            return (sum(1 for _, s in ins if _VECTOR.search(s)), len(ins))
        lab, a, b = max(inner, key=score)
    ins = _instructions(enumerate(lines[a:b + 1], a), aarch64)
    text = tuple(s for _, s in ins)
    if pointer_increment is not None:
        bpp, reg = float(pointer_increment), "(given)"
    else:
        bpp, reg = (_a64_increment if aarch64 else _x86_increment)(text)
        if bpp is None:
            raise ToolError(f"cannot determine how far the loop at {lab} advances per pass; "
                            "give --pointer-increment BYTES (see 'loopmodel codegen' and the assembly)")
    its = bpp / stride_bytes
    if its <= 0:
        raise (OptionError if pointer_increment is not None else ToolError)(f"loop at {lab}: pointer increment {bpp:g} B per pass does not match the kernel's "
                        f"{stride_bytes:g} B per iteration; give --pointer-increment")
    return AsmBlock(lab, text, a + 1, its, bpp, reg)


def _x86_increment(text):
    incs = {}
    for s in text:
        m = re.match(r"(?:add|sub)[lq]?\s+\$(-?\d+),\s*%(\w+)$", s)
        if m:
            v = int(m.group(1)) * (-1 if s.startswith("sub") else 1)
            incs[m.group(2)] = incs.get(m.group(2), 0) + v
            continue
        m = re.match(r"lea[lq]?\s+(-?\d+)\(%(\w+)\),\s*%(\w+)$", s)
        if m and m.group(2) == m.group(3):
            incs[m.group(2)] = incs.get(m.group(2), 0) + int(m.group(1))
            continue
        m = re.match(r"inc[lq]?\s+%(\w+)$", s)
        if m:
            incs[m.group(1)] = incs.get(m.group(1), 0) + 1
    votes = Counter()
    for reg, inc in incs.items():
        for s in text:
            for mem in re.findall(r"-?\w*\((%\w+)?(?:,\s*(%\w+))?(?:,\s*(\d+))?\)", s):
                base, index, scale = mem
                if index == f"%{reg}":
                    votes[(abs(inc) * int(scale or 1), reg)] += 1
                elif base == f"%{reg}":
                    votes[(abs(inc), reg)] += 1
    if not votes:
        return None, None
    (bpp, reg), _ = votes.most_common(1)[0]
    return float(bpp), reg


def _a64_increment(text):
    incs = {}
    post = Counter()
    for s in text:
        m = re.match(r"(?:add|sub)\s+(x\d+),\s*(x\d+),\s*#?(\d+)$", s)
        if m and m.group(1) == m.group(2):
            incs[m.group(1)] = int(m.group(3))
        m = re.search(r"\[(x\d+)\],\s*#?(\d+)", s)  # post-index addressing
        if m:
            post[(float(m.group(2)), m.group(1))] += 1
    if post:
        (bpp, reg), _ = post.most_common(1)[0]
        return bpp, reg
    votes = Counter()
    for reg, inc in incs.items():
        for s in text:
            m = re.search(r"\[(x\d+)(?:,\s*(x\d+)(?:,\s*lsl\s*#?(\d+))?)?", s)
            if not m:
                continue
            if m.group(2) == reg:
                votes[(inc * 2 ** int(m.group(3) or 0), reg)] += 1
            elif m.group(1) == reg:
                votes[(inc, reg)] += 1
    if not votes:
        return None, None
    (bpp, reg), _ = votes.most_common(1)[0]
    return float(bpp), reg
