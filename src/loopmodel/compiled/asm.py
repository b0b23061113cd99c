"""Finding the kernel's innermost loop in assembly and how many iterations one pass does.

x86 AT&T syntax (gcc, clang) and AArch64 (GNU syntax). The generated program marks the
kernel with ``# LOOPMODEL KERNEL START/END`` comments (``asm volatile``); loops are
blocks from a label to a backward branch to it. Among the innermost loops between the
markers the block with most floating-point/SIMD instructions is taken (as Kerncraft
does, kerncraft-tool-paper.txt §2.3), unless ``--asm-block`` names its label. The
iterations per pass follow from the increments of the registers used in the block's
memory addresses (:func:`iterations_per_pass`: the one count that explains the most of
them with the address steps of the kernel's accesses), unless ``--pointer-increment``
gives bytes per pass.

A block that cannot be mapped to the kernel's inner loop is refused by :func:`implausible`
(the caller decides whether that is an error or a fallback): a block that calls a function
(the call's cost is not in the analyzer's model), more iterations per pass than SIMD lanes
times :data:`MAX_UNROLL`, and packed vector accesses through a register that advances by a
row stride (the compiler vectorized across an outer loop: a pass does the work of several
outer iterations, which the per-iteration model cannot express).
"""
from __future__ import annotations

from dataclasses import dataclass

import re
from collections import Counter

from ..errors import OptionError, ToolError
from .codegen import MARK_END, MARK_START
from .instructions import addresses, packed_bytes, parse

_LABEL = r"^\s*([.\w$]+):"
_X86_BRANCH = r"^\s*(j[a-z]+)\s+([.\w$]+)\s*$"
_A64_BRANCH = (r"^\s*(b(?:\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al))?|cbn?z|tbn?z)\s+"
               r"(?:[\w]+\s*,\s*)*(?:#?\d+\s*,\s*)?([.\w$]+)\s*$")


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
        if not s or s.startswith(".") or re.match(_LABEL, s):
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
        m = re.match(_LABEL, lines[i])
        if m:
            labels[m.group(1)] = i
            continue
        b = re.match(branch, lines[i].split("//", 1)[0])
        if b and b.group(2) in labels and labels[b.group(2)] < i:
            found.append((b.group(2), labels[b.group(2)], i))
    return found


#: Largest unroll factor of a vectorized loop taken as plausible: a pass may do at most
#: SIMD lanes x MAX_UNROLL iterations. gcc unrolls at most 8 times by default
#: (``--param max-unroll-times``); clang interleaves and unrolls vectorized loops by small
#: factors (4-16 in practice). 32 leaves room for both on top of the SIMD width; a count
#: beyond it means the pointer increment was matched to the wrong access.
MAX_UNROLL = 32
#: the words every refusal of a block that the compiler restructured ends with (loop
#: interchange, vectorization across an outer loop): the model then predicts the loop as
#: written, and a report can say so (the ``restructured`` regime)
RESTRUCTURED = "the compiler restructured the loop nest: a prediction is for the loop as written"


@dataclass(frozen=True)
class KernelShape:
    """What the kernel's inner loop lets one pass of a loop block do (for :func:`implausible`).

    Attributes:
        strides: address step in B per inner-loop iteration of each access that moves with the
            inner loop (absolute, > 0), the work access first.
        min_element_bytes, max_element_bytes: element sizes (B) of those accesses.
        vector_bytes: the machine's SIMD register width (B; ``in_core.simd_width``).
        contiguous_bytes: the widest run of bytes one iteration touches in a single array
            whose inner-loop stride exceeds its element size (B; 0: no such array); a packed
            vector access through a register that advances by such a stride must fit in it.
    """

    strides: tuple
    min_element_bytes: int
    max_element_bytes: int
    vector_bytes: int
    contiguous_bytes: int = 0


def find_kernel_block(asm: str, stride_bytes: float | None, aarch64: bool = False, label: str | None = None,
                      pointer_increment: float | None = None, strides: tuple = (), trips: int | None = None
                      ) -> AsmBlock:
    """The kernel's innermost loop block.

    Args:
        asm: assembly text.
        stride_bytes: bytes one inner-loop iteration advances the work access; None where no
            array moves with the inner loop (a loop on values in registers): the iterations
            per pass then come from the loop counter and ``trips`` (:func:`counter_iterations`).
        aarch64: AArch64 syntax.
        label: take the loop at this label (``--asm-block``).
        pointer_increment: bytes per pass (``--pointer-increment``).
        trips: the inner loop's trip count (used where ``stride_bytes`` is None).
        strides: B per iteration of every access that moves with the inner loop (with
            ``stride_bytes`` among them); the iterations per pass are the count that explains
            the most register increments with them (:func:`iterations_per_pass`).

    Raises:
        OptionError: ``label`` names no loop, or ``pointer_increment`` is not positive.
        ToolError: no loop, or the increment cannot be determined.
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
            return (sum(1 for _, s in ins if parse(s, aarch64).simd), len(ins))
        lab, a, b = max(inner, key=score)
    ins = _instructions(enumerate(lines[a:b + 1], a), aarch64)
    text = tuple(s for _, s in ins)
    if stride_bytes is None:  # no array moves with the inner loop: the loop counter tells the passes
        its, reg = counter_iterations(text, trips, aarch64)
        if its is None:
            raise ToolError(f"the loop at {lab} has no pointer that advances and no counter compared with a "
                            "constant: cannot tell how many iterations a pass performs")
        return AsmBlock(lab, text, a + 1, its, 0.0, reg)
    if pointer_increment is not None:
        its, bpp, reg = float(pointer_increment) / stride_bytes, float(pointer_increment), "(given)"
    else:
        its, bpp, reg = iterations_per_pass(address_steps(text, aarch64), (stride_bytes,) + tuple(strides))
        if its is None:
            raise ToolError(f"cannot determine how far the loop at {lab} advances per pass; "
                            "give --pointer-increment BYTES (see 'loopmodel codegen' and the assembly)")
    if its <= 0:
        raise (OptionError if pointer_increment is not None else ToolError)(
            f"loop at {lab}: pointer increment {bpp:g} B per pass does not match the kernel's "
            f"{stride_bytes:g} B per iteration; give --pointer-increment")
    return AsmBlock(lab, text, a + 1, its, bpp, reg)


#: largest relative distance of trips / passes from a whole number of iterations per pass
COUNTER_TOLERANCE = 0.1
_X86_CMP = r"cmp[lq]?\s+\$(-?\d+),\s*%(\w+)$"
_A64_CMP = r"cmp\s+([wx]\d+),\s*#?(-?\d+)$"
_A64_ADD = r"(?:add|sub)s?\s+([wx]\d+),\s*([wx]\d+),\s*#?(-?\d+)$"


def counter_iterations(text, trips: int | None, aarch64: bool = False) -> tuple:
    """``(inner-loop iterations per pass, counter register)`` of a loop without moving pointers.

    The counter is the register the block compares with a constant ``K`` and increments by a
    constant ``s`` per pass; starting near 0 it makes ``K / s`` passes, so a pass performs
    ``trips / (K / s)`` iterations. The start is not in the block, so the count is taken only
    where it lies within :data:`COUNTER_TOLERANCE` of a whole number, which it is rounded to
    (gcc counts vector passes from 0: 1000 iterations in 62 passes of 16 and a remainder).

    Args:
        text: the block's instruction lines.
        trips: the inner loop's trip count (None: unknown).
        aarch64: AArch64 syntax.

    Returns:
        ``(iterations, register)``; ``(None, None)`` where no such counter is found.
    """
    if not trips or trips <= 0:
        return None, None
    if aarch64:
        incs = {}
        for ln in text:
            m = re.match(_A64_ADD, ln.strip())
            if m and m.group(1) == m.group(2):
                incs[m.group(1)] = incs.get(m.group(1), 0) + int(m.group(3)) * (-1 if ln.strip().startswith("sub")
                                                                                   else 1)
        cmps = [(m.group(1), int(m.group(2))) for m in (re.match(_A64_CMP, ln.strip()) for ln in text) if m]
    else:
        incs = _x86_increments(text)
        cmps = [(m.group(2), int(m.group(1))) for m in (re.match(_X86_CMP, ln.strip()) for ln in text) if m]
    for reg, limit in cmps:
        step = incs.get(reg)
        if not step or limit * step <= 0:
            continue
        its = trips / (limit / step)
        whole = round(its)
        if whole >= 1 and abs(its - whole) <= COUNTER_TOLERANCE * whole:
            return float(whole), reg
    return None, None


def address_steps(text, aarch64: bool = False) -> Counter:
    """How far the block's memory addresses advance per pass.

    Returns:
        Counter ``(step in B per pass, register) -> number of memory operands`` over the
        registers incremented by a constant in the block (an index register counts with
        its scale; AArch64 post-indexed addressing, where present, alone).
    """
    return _a64_steps(text) if aarch64 else _x86_steps(text)


def iterations_per_pass(steps: Counter, strides: tuple) -> tuple:
    """Inner-loop iterations one pass performs: ``(iterations, B per pass, register)``.

    A register's step is ``iterations x stride`` of the access it addresses, but which
    access is unknown: a pointer into a row-major ``B[k][j]`` with ``k`` innermost advances
    by a row (N x 8 B) per iteration, and divided by another access's 8 B stride it would
    read as N iterations per pass. So every ``step / stride`` is a candidate count, and the
    count whose ``count x stride`` explains the most memory operands of all registers is
    taken; on a tie the most used register over the work access's stride (``strides[0]``).
    The register reported is the most used one the count explains, over the work access
    where possible.

    Args:
        steps: :func:`address_steps`.
        strides: B per iteration of the accesses moving with the inner loop, work access first.

    Returns:
        ``(iterations, bytes per pass, register)``; ``(None, None, None)`` without steps.
    """
    if not steps:
        return None, None, None
    (bpp0, reg0), _ = steps.most_common(1)[0]
    uniq = sorted({float(s) for s in strides if s > 0})
    if len(uniq) <= 1:
        return bpp0 / strides[0], float(bpp0), reg0

    def explains(step, its, s):
        return abs(step - its * s) <= 1e-9 * max(step, 1.0)

    def score(its):
        return sum(n for (step, _), n in steps.items() if any(explains(step, its, s) for s in uniq))

    first = bpp0 / strides[0]
    cands = sorted({step / s for (step, _) in steps for s in uniq})
    its = max(cands, key=lambda c: (score(c), abs(c - first) <= 1e-9 * first))
    used = [(n, explains(step, its, strides[0]), step, reg) for (step, reg), n in steps.items()
            if any(explains(step, its, s) for s in uniq)]
    _, _, bpp, reg = max(used, key=lambda u: (u[1], u[0]))
    return its, float(bpp), reg


def _x86_increments(text) -> dict:
    """register -> constant added per pass (add/sub/lea/inc)."""
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
    return incs


def _operand_steps(s: str, incs: dict, aarch64: bool) -> list:
    """``(step in B per pass, register)`` of the incremented registers addressing memory in line ``s``."""
    out = []
    mems = [(a.base, a.index, a.scale) for a in addresses(s, aarch64)][:1 if aarch64 else None]
    for base, index, scale in mems:
        if index in incs:
            out.append((abs(incs[index]) * scale, index))
        elif base in incs:
            out.append((abs(incs[base]), base))
    return out


def _votes(text, incs: dict, aarch64: bool) -> Counter:
    """(bytes per pass, register) -> number of memory operands that move by it."""
    votes = Counter()
    for s in text:
        for step, reg in _operand_steps(s, incs, aarch64):
            votes[(float(step), reg)] += 1
    return votes


def _x86_steps(text) -> Counter:
    return _votes(text, _x86_increments(text), False)


def _a64_increments(text) -> dict:
    """register -> constant added per pass (add/sub, and post-indexed addressing ``[xN], #k``)."""
    incs = {}
    for s in text:
        for a in addresses(s, True):
            if a.post is not None and a.post >= 0:
                incs[a.base] = a.post
        m = re.match(r"(?:add|sub)\s+(x\d+),\s*(x\d+),\s*#?(\d+)$", s)
        if m and m.group(1) == m.group(2):
            incs[m.group(1)] = int(m.group(3))
    return incs


def _a64_steps(text) -> Counter:
    post = Counter()
    for s in text:
        for a in addresses(s, True)[:1]:  # post-index addressing
            if a.post is not None and a.post >= 0:
                post[(float(a.post), a.base)] += 1
    if post:
        return post
    return _votes(text, _a64_increments(text), True)


_X86_CALL = r"^call[lq]?\s+(\S+)"
_A64_CALL = r"^blr?\s+(\S+)"


def calls(text, aarch64: bool = False) -> list:
    """Names of the functions the block calls (x86 ``call``, AArch64 ``bl``/``blr``), in order.

    ``exp@PLT`` is given as ``exp``; an indirect call as its operand (``*%rax``, ``x3``).
    """
    pat = _A64_CALL if aarch64 else _X86_CALL
    out = []
    for s in text:
        m = re.match(pat, s.strip())
        if m:
            out.append(m.group(1).split("@", 1)[0])
    return list(dict.fromkeys(out))


def implausible(text, iterations: float, shape: KernelShape, aarch64: bool = False) -> str | None:
    """Why the loop block cannot be the kernel's inner loop as the model needs it (None: plausible).

    * It calls a function: the analyzers time a ``call`` as one instruction, not the
      called code, so its cost is not modelled.
    * More iterations per pass than ``lanes x`` :data:`MAX_UNROLL`, with lanes = vector
      register bytes / smallest element bytes: the pointer increment was matched to the
      wrong access.
    * Fewer than one iteration per pass: no register advances by a whole inner-loop
      iteration, so the loop steps through another loop of the nest (the compiler
      interchanged the loops: gcc -O3 does for a nest whose inner loop strides through
      memory, ``-floop-interchange``); a pass is not an iteration of the kernel as written.
    * A packed vector access of W bytes through a register that advances per iteration by
      more than W (so the access lies within one iteration's data) while no strided array
      has W contiguous bytes in one iteration (:attr:`KernelShape.contiguous_bytes`): the
      compiler vectorized across an outer loop (ijk matrix multiplication: four
      ``C[i][j..j+3]`` in one ``ymm`` register while ``k`` runs), so a pass does the work of
      several outer iterations. Steps up to W are inner-loop vectorization of a strided
      access (packed loads and shuffles, ``a[i]`` with ``i += 2``) and are accepted.

    Args:
        text: the block's instruction lines.
        iterations: inner-loop iterations per pass (:attr:`AsmBlock.iterations_per_pass`).
        shape: what the kernel allows (:class:`KernelShape`).
        aarch64: AArch64 syntax.

    Returns:
        One line saying what is wrong, or None.
    """
    text = [ln for ln in text if ln.strip()]
    called = calls(text, aarch64)
    if called:
        return (f"the loop block calls {', '.join(called)}: the cost of a function call is not modelled "
                "(the analyzers time the call instruction, not the called code)")
    widest = max([shape.vector_bytes] + [packed_bytes(ln, aarch64) for ln in text])
    lanes = max(1, int(widest // max(1, shape.min_element_bytes)))
    if iterations > lanes * MAX_UNROLL + 1e-9:
        return (f"{iterations:g} iterations per pass exceed {lanes} SIMD lanes ({widest:g} B registers, "
                f"{shape.min_element_bytes} B elements) x {MAX_UNROLL} unroll: the pointer increment does not "
                "belong to the inner loop's work access")
    if iterations < 1 - 1e-9:
        return (f"{iterations:g} inner-loop iterations per pass (fewer than one): the compiled loop steps through "
                "another loop of the nest (the compiler interchanged the loops), so a pass is not an iteration of "
                f"the kernel as written; {RESTRUCTURED}")
    incs = _a64_increments(text) if aarch64 else _x86_increments(text)
    for ln in text:
        width = packed_bytes(ln, aarch64)
        if not width:
            continue
        for step, reg in _operand_steps(ln, incs, aarch64):
            per_it = step / iterations
            if per_it > width and width > shape.contiguous_bytes:
                return (f"packed {width} B access '{' '.join(ln.split())}' through {reg}, which advances "
                        f"{per_it:g} B per inner-loop iteration (more than the access: it serves one iteration, "
                        f"which touches {shape.contiguous_bytes} B contiguously): the compiler vectorized "
                        f"across an outer loop, so a pass does the work of several outer iterations; {RESTRUCTURED}")
    return None
