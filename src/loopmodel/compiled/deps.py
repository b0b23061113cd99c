"""Loop-carried dependency chains of a loop block, from its register and memory dependencies.

An analyzer's simulated time per pass above its throughput bound (the largest port
pressure) means the loop is latency-bound only where a value computed in one pass is
needed by a later pass through a chain of dependent instructions (a recurrence; the
ECM's T_OL is the throughput bound otherwise, kerncraft-tool-paper.txt §2.3: T_OL from
the port pressure of the loop body). This module finds those chains:

* register dependencies: an instruction reading a register before any instruction of
  the block writes it reads the value of the previous pass (the block's last write of
  that register); within a pass a read depends on the latest earlier write;
* memory dependencies: a store and a load through the same base/index registers whose
  addresses, advanced by the registers' constant increments per pass, overlap ``d >= 1``
  passes later (``a[i] = a[i-1] * s`` kept in memory), or within the pass (load after store);
* a chain is a strongly connected component of that dependency graph (a cycle must cross
  a pass boundary, since edges within a pass go forward). Components made only of
  pointer/counter increments (an integer register plus a constant or a loop-invariant
  register, AArch64 base-register write-back) and register moves are not chains: they are
  the induction variables, one cycle per pass at most.

x86 AT&T syntax (gcc, clang: destination last) and AArch64 GNU syntax (destination first).
Unknown instruction forms are read conservatively by the operand order, so a chain may be
missed only where an instruction reads a register it does not name (implicit operands,
flags: compare-and-branch only).
"""
from __future__ import annotations

from dataclasses import dataclass

import re

from .instructions import RMW, Address, addresses, operand_address, operands, packed_bytes, parse, register_bytes

#: x86 mnemonic prefixes without a register destination (flags or nothing)
_X86_NO_DEST = ("cmp", "test", "bt", "ucomis", "comis", "vucomis", "vcomis", "ptest", "vptest", "prefetch",
                "nop", "vzeroupper", "vzeroall", "j", "ret", "call", "push", "lfence", "sfence", "mfence")
#: x86 instructions whose register destination is not an input (moves, loads, conversions)
_X86_MOVE = re.compile(r"^v?(mov|lea|cvt|pmovzx|pmovsx|sqrt|rcp|rsqrt|set|pop)|^v?p?broadcast|^vperm[^ti]"
                       r"|^v?pshuf[dlh]|^vextract|^vinsert|^bsf|^bsr|^lzcnt|^tzcnt|^popcnt|^vgather|^vpgather")
#: x86 instructions that read their destination whatever their operand count
_X86_READS_DEST = re.compile(r"^(vf(n)?m(add|sub)|vfmaddsub|vfmsubadd|vpermt2|vpermi2|vpternlog|vpdp|cmov"
                             r"|shufp|blendp|insertps|palignr|pblendw|shld|shrd|pinsr)")
#: x86 zero idioms: all register operands the same, result independent of them
_X86_ZERO = re.compile(r"^v?p?(xor|sub|andn)(p[sd]|[bwlqd]|q)?$|^v?pcmpgt|^v?psub[bwdq]$")
_X86_INCREMENT = re.compile(r"^(add|sub|inc|dec|lea)[bwlq]?$")
_X86_VEC_INCREMENT = re.compile(r"^v?p(add|sub)[bwdq]$")
_A64_NO_DEST = ("cmp", "cmn", "tst", "fcmp", "fcmpe", "ccmp", "ccmn", "b", "b.", "cbz", "cbnz", "tbz", "tbnz",
                "prfm", "ret", "nop", "bl", "blr", "br")
_A64_READS_DEST = r"^(fmla|fmls|mla|mls|bsl|bit|bif|ins|movk|sdot|udot|fcadd|fcmla|sli|sri|usra|ssra)"
_A64_MOVE = r"^(mov|fmov|movz|movn|dup|sxtw|uxtw|scvtf|ucvtf|fcvt|ld|whilelo|whilelt|ptrue|index)"
_GPR8 = {"a": "rax", "b": "rbx", "c": "rcx", "d": "rdx"}


@dataclass(frozen=True)
class _Mem:
    """One memory operand: symbol, displacement (B), base/index registers (canonical), scale, width (B)."""

    symbol: str
    disp: int
    base: str
    index: str
    scale: int
    width: int


@dataclass(frozen=True)
class _Insn:
    """One instruction of the block: its text, the registers it reads and writes, its memory
    operands (:class:`_Mem`) loaded and stored, whether it is an integer increment, a move."""

    text: str
    reads: tuple
    writes: tuple
    loads: tuple
    stores: tuple
    incform: bool  # an integer add of registers and constants (add/sub/inc/dec/lea, AArch64 write-back)
    move: bool
    step: tuple = ()  # (register, constant B) for constant increments


@dataclass(frozen=True)
class Chain:
    """A loop-carried dependency chain of a loop block.

    Attributes:
        instructions: its instruction lines (whitespace normalised), in block order.
        registers: the registers carrying its value into the next pass, as spelled in the
            block (``%xmm0``, ``v0``).
        memory: ``(store line, load line, passes)`` of the memory dependencies carrying it.
        edges: its dependencies ``(from, to, via, passes)``, ``from``/``to`` indices into
            ``instructions``, ``via`` how the value enters ``to``: ``"register"`` (an operand),
            ``"address"`` (a register addressing its load) or ``"memory"`` (the load of a
            store's bytes); ``passes`` 0 within a pass, ``d >= 1`` from ``d`` passes earlier.
    """

    instructions: tuple
    registers: tuple
    memory: tuple = ()
    edges: tuple = ()

    def through(self) -> str:
        """What carries the chain into the next pass: ``%xmm0``, ``memory ('store' read 1 pass(es) later
        by 'load')``, joined by ``and``."""
        return " and ".join(list(self.registers) + [f"memory ('{s}' read {d} pass(es) later by '{ld}')"
                                                    for s, ld, d in self.memory])

    def describe(self, shown: int = 3) -> str:
        """One phrase naming the chain: ``loop-carried dependency chain through %xmm0 (vaddsd ...)``."""
        ins = "; ".join(self.instructions[:shown])
        if len(self.instructions) > shown:
            ins += f"; and {len(self.instructions) - shown} more"
        return f"loop-carried dependency chain through {self.through()} ({ins})"


def loop_carried_chains(lines, aarch64: bool = False) -> list:
    """The loop-carried dependency chains of a loop block (see the module docstring).

    Args:
        lines: the block's instruction lines (labels and directives removed, as
            :attr:`loopmodel.compiled.asm.AsmBlock.lines`; blank lines ignored).
        aarch64: AArch64 syntax (else x86 AT&T).

    Returns:
        :class:`Chain` list, in block order of their first instruction; empty when only
        induction variables (pointer and counter increments) carry values between passes.
    """
    texts = [" ".join(ln.split()) for ln in lines if ln.strip()]
    insns = [(_a64 if aarch64 else _x86)(t) for t in texts]
    edges = _register_edges(insns) + _memory_edges(insns)
    written = {r for ins in insns for r in ins.writes}
    out = []
    for comp in _components(len(insns), [(u, v) for u, v, *_ in edges]):
        inside = [e for e in edges if e[0] in comp and e[1] in comp]
        if not inside or all(_induction_edge(insns, e, written) for e in inside):
            continue
        regs = tuple(dict.fromkeys(_spelling(texts[e[1]], e[2], aarch64) for e in inside
                                   if e[3] and e[2] != "memory"))
        mem = tuple(dict.fromkeys((texts[e[0]], texts[e[1]], e[3]) for e in inside if e[2] == "memory" and e[3]))
        local = {i: k for k, i in enumerate(sorted(comp))}
        links = tuple(dict.fromkeys((local[u], local[v], _via(insns[v], texts[v], reg, aarch64), d)
                                    for u, v, reg, d in inside))
        out.append(Chain(tuple(texts[i] for i in sorted(comp)), regs, mem, links))
    return sorted(out, key=lambda c: texts.index(c.instructions[0]))


def _via(ins: _Insn, text: str, reg: str, aarch64: bool) -> str:
    """How the value of ``reg`` enters ``ins``: ``"memory"``, ``"address"`` (only a base or index
    register of its memory operands) or ``"register"``."""
    if reg == "memory":
        return "memory"
    addr = {r for m in ins.loads + ins.stores for r in (m.base, m.index) if r}
    if reg not in addr:
        return "register"
    if aarch64:
        data = _a64_regs(text[:text.index("[")] if "[" in text else text)
    else:
        data = [r for o in operands(text) if "(" not in o for r in _x86_regs(o)]
    return "register" if reg in data else "address"


@dataclass(frozen=True)
class Cycle:
    """The critical cycle of a :class:`Chain`: the cycle of its dependencies with the largest
    latency per pass (:func:`critical_cycle`).

    Attributes:
        cy_per_pass: total latency over passes crossed (cy per pass of the block).
        steps: ``(index into Chain.instructions, via, passes, cy)`` per dependency of the
            cycle, in the order the value travels: the instruction reached, how its input
            arrives (:attr:`Chain.edges`), the passes the dependency crosses and its latency.
        passes: passes the whole cycle crosses (1 for an accumulator).
    """

    cy_per_pass: float
    steps: tuple
    passes: int


def critical_cycle(chain: Chain, latency) -> Cycle | None:
    """The cycle of ``chain``'s dependencies with the largest latency per pass.

    A loop-carried chain bounds a pass from below by the latency of its cycles over the
    passes they cross (the recurrence bound of a loop: a dependency cycle of total latency L
    crossing d passes allows at most d passes per L cycles; kerncraft-tool-paper.txt §2.3 for
    the critical-path bound of a loop-carried dependency). Each dependency ``u -> v`` costs
    ``latency(v, via)``: the time from its input's arrival to ``v``'s result. Cycles are
    reduced to the heads of the dependencies that cross a pass boundary (longest paths within
    the pass between them, which go forward in block order), and the largest ratio over those
    is Karp's maximum mean cycle (passes split into unit steps).

    Args:
        chain: a :class:`Chain` with its :attr:`Chain.edges`.
        latency: ``(index into chain.instructions, via) -> cy``, or None where unknown.

    Returns:
        :class:`Cycle`, or None where a latency on the chain is unknown (None) or the chain
        has no dependency crossing a pass.
    """
    w = {}
    for u, v, via, d in chain.edges:
        cy = latency(v, via)
        if cy is None:
            return None
        w[(u, v, via, d)] = float(cy)
    heads = sorted({e[1] for e in w if e[3] >= 1})
    arcs = []  # (from head, to head, cy, passes, path of edges)
    for h in heads:
        best = _longest_within(h, w, len(chain.instructions))
        arcs += [(h, e[1], best[e[0]][0] + cy, e[3], best[e[0]][1] + (e,))
                 for e, cy in w.items() if e[3] >= 1 and e[0] in best]
    found = _max_mean_cycle(arcs)
    if found is None:
        return None
    mean, picked = found
    steps = tuple((e[1], e[2], e[3], w[e]) for arc in picked for e in arc[4])
    steps = steps[-1:] + steps[:-1]  # from the instruction the carried value enters
    return Cycle(mean, steps, sum(arc[3] for arc in picked))


def _longest_within(start: int, w: dict, n: int) -> dict:
    """node -> (longest latency from ``start`` over dependencies within a pass, their edges)."""
    best = {start: (0.0, ())}
    for x in range(start, n):
        if x not in best:
            continue
        for e, cy in w.items():
            if e[0] == x and e[3] == 0 and e[1] > x and best[x][0] + cy > best.get(e[1], (-1.0,))[0]:
                best[e[1]] = (best[x][0] + cy, best[x][1] + (e,))
    return best


def _max_mean_cycle(arcs: list) -> tuple | None:
    """``(largest cy per pass over the cycles of arcs, the arcs of one such cycle)``: Karp's
    maximum mean cycle, each arc of ``d`` passes split into ``d`` unit steps; None without a cycle."""
    nodes, steps = {}, []  # steps: (from, to, cy, arc or None for the inner parts of a split arc)
    for arc in arcs:
        a, b, cy, d = arc[:4]
        chain = [("h", a)] + [("s", id(arc), k) for k in range(1, d)] + [("h", b)]
        for k in range(d):
            steps.append((chain[k], chain[k + 1], cy if k == d - 1 else 0.0, arc if k == d - 1 else None))
        for x in chain:
            nodes.setdefault(x, len(nodes))
    m = len(nodes)
    if not m:
        return None
    table = [{x: (0.0, None) for x in nodes}]
    for _ in range(m):
        prev, cur = table[-1], {}
        for a, b, cy, arc in steps:
            if a in prev and prev[a][0] + cy > cur.get(b, (float("-inf"),))[0]:
                cur[b] = (prev[a][0] + cy, (a, cy, arc))
        table.append(cur)
    means = {x: min((table[m][x][0] - table[k][x][0]) / (m - k) for k in range(m) if x in table[k])
             for x in table[m]}
    if not means:
        return None
    end = max(means, key=lambda x: (means[x], -nodes[x]))
    walk, x = [], end  # the walk of m steps that reaches ``end``: it holds a cycle of the largest mean
    for k in range(m, 0, -1):
        a, cy, arc = table[k][x][1]
        walk.append((a, x, cy, arc))
        x = a
    walk.reverse()
    best = None
    for i in range(len(walk)):
        for j in range(i, len(walk)):
            if walk[j][1] == walk[i][0]:
                part = walk[i:j + 1]
                mean = sum(s[2] for s in part) / len(part)
                if best is None or mean > best[0] + 1e-12:
                    best = (mean, tuple(s[3] for s in part if s[3] is not None))
                break
    return (means[end], best[1]) if best else None


def _induction_edge(insns, edge, written: set) -> bool:
    """A register edge into a register move, or into an integer add whose other inputs are
    constants or loop-invariant registers (a pointer or counter increment)."""
    _, v, reg, _ = edge
    ins = insns[v]
    if reg == "memory":
        return False
    return ins.move or (ins.incform and not any(r in written for r in ins.reads if r != reg))


def _spelling(text: str, reg: str, aarch64: bool) -> str:
    """How ``text`` spells canonical register ``reg`` (``%xmm0`` for ``v0``)."""
    if aarch64:
        return next((w for w in re.findall(r"\b[a-z]+\d+(?:\.\w+)?", text.lower()) if _a64_reg(w) == reg), reg)
    return next((f"%{w}" for w in re.findall(r"%(\w+)", text) if _x86_reg(w) == reg), reg)


def _register_edges(insns) -> list:
    """Read-after-write edges ``(from, to, register, passes)``, ``passes`` 1 when the value comes
    from the previous pass (the block's last write), 0 within the pass."""
    last, exposed, edges = {}, [], []
    for i, ins in enumerate(insns):
        for r in ins.reads:
            if r in last:
                edges.append((last[r], i, r, 0))
            else:
                exposed.append((r, i))
        for r in ins.writes:
            last[r] = i
    for r, i in exposed:
        if r in last:
            edges.append((last[r], i, r, 1))
    return edges


def _steps(insns) -> dict:
    """register -> constant B it advances per pass; None where another instruction writes it."""
    out: dict = {}
    for ins in insns:
        consts = dict(ins.step)
        for r in ins.writes:
            if r in consts and out.get(r, 0) is not None:
                out[r] = out.get(r, 0) + consts[r]
            else:
                out[r] = None
    return out


def _memory_edges(insns) -> list:
    """Store -> load edges through memory: ``(store, load, 'memory', passes)``."""
    steps = _steps(insns)
    edges = []
    for s, st in enumerate(insns):
        for sm in st.stores:
            for ld_i, ld in enumerate(insns):
                for lm in ld.loads:
                    d = _distance(sm, lm, steps, load_after=ld_i > s)
                    if d is not None:
                        edges.append((s, ld_i, "memory", d))
    return edges


def _distance(sm: _Mem, lm: _Mem, steps: dict, load_after: bool) -> int | None:
    """Passes after the store's at which the load reads bytes it wrote (0: the same pass), or None."""
    if (sm.symbol, sm.base, sm.index, sm.scale) != (lm.symbol, lm.base, lm.index, lm.scale):
        return None
    sb = steps.get(sm.base, 0) if sm.base else 0
    si = steps.get(sm.index, 0) if sm.index else 0
    if sb is None or si is None:
        return None  # an address register not advanced by a constant: unknown
    step = sb + sm.scale * si

    def overlaps(d):
        lo = lm.disp + d * step
        return lo < sm.disp + sm.width and sm.disp < lo + lm.width

    if step == 0:
        return (0 if load_after else 1) if overlaps(0) else None
    first = 0 if load_after else 1
    span = (abs(sm.disp - lm.disp) + sm.width + lm.width) // abs(step) + 1
    return next((d for d in range(first, span + 1) if overlaps(d)), None)


def _components(n: int, edges) -> list:
    """Strongly connected components (Tarjan) with a cycle: more than one node, or a self-loop."""
    succ = {i: [] for i in range(n)}
    for u, v in edges:
        succ[u].append(v)
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in succ[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1 or v in succ[v]:
                out.append(comp)

    for v in range(n):
        if v not in index:
            visit(v)
    return out


# -- x86 AT&T ----------------------------------------------------------------------------

def _x86_reg(name: str) -> str | None:
    """Canonical register of an AT&T register name without ``%`` (``eax`` -> ``rax``, ``ymm3`` ->
    ``v3``); None for ``rip`` and names that are no register."""
    n = name.lower()
    m = re.fullmatch(r"[xyz]mm(\d+)", n)
    if m:
        return f"v{m.group(1)}"
    m = re.fullmatch(r"r(\d+)[dwb]?", n)
    if m:
        return f"r{m.group(1)}"
    m = re.fullmatch(r"[re]?([abcd])x|([abcd])[lh]", n)
    if m:
        return _GPR8[m.group(1) or m.group(2)]
    m = re.fullmatch(r"[re]?(si|di|bp|sp)l?", n)
    if m:
        return "r" + m.group(1)
    if re.fullmatch(r"k[0-7]", n):
        return n
    return None


def _x86_regs(op: str) -> list:
    return [r for r in (_x86_reg(w) for w in re.findall(r"%(\w+)", op)) if r]


def _x86_mem(op: str, mnem: str, ops: list) -> _Mem | None:
    a = operand_address(op)
    if a is None:
        return None
    base, index = (_x86_reg(r) or "" if r else "" for r in (a.base, a.index))
    return _Mem(a.symbol, a.disp, base, index, a.scale, _x86_width(mnem, ops))


def _x86_width(mnem: str, ops: list) -> int:
    """Bytes a memory operand of ``mnem`` spans (the widest vector register named, else by suffix)."""
    packed = packed_bytes(mnem + " " + ", ".join(ops))
    if packed:
        return packed
    for suffix, width in (("sd", 8), ("ss", 4), ("q", 8), ("l", 4), ("w", 2), ("b", 1)):
        if mnem.endswith(suffix):
            return width
    return 8


def _x86(text: str) -> _Insn:
    mnem = text.split(None, 1)[0].lower()
    ops = operands(text)
    if mnem.startswith(_X86_NO_DEST) or not ops:
        return _Insn(text, tuple(r for o in ops for r in _x86_regs(o)), (), (), (), False, False)
    dst, srcs = ops[-1], ops[:-1]
    loads = () if mnem.startswith("lea") else tuple(m for m in (_x86_mem(o, mnem, ops) for o in srcs if "(" in o) if m)
    if "(" in dst:  # a store: every register named is read; read-modify-write also loads
        store = _x86_mem(dst, mnem, ops)
        rmw = (store,) if RMW.match(mnem) else ()
        return _Insn(text, tuple(r for o in ops for r in _x86_regs(o)), (), loads + rmw, (store,), False, False)
    out = _x86_regs(dst.split("{")[0])
    reads = [r for o in srcs for r in _x86_regs(o)]
    regs_only = [o for o in ops if o.startswith("%")]
    if _X86_ZERO.match(mnem) and len(regs_only) == len(ops) and len(set(regs_only)) == 1:
        return _Insn(text, (), tuple(out), (), (), False, True)
    merge = "{%k" in dst and "{z}" not in dst
    if merge or _X86_READS_DEST.match(mnem) or (len(ops) <= 2 and not _X86_MOVE.match(mnem)):
        reads += out
    if "{" in dst:
        reads += _x86_regs(dst.split("{", 1)[1])
    gpr = len(out) == 1 and not out[0].startswith(("v", "k"))
    incform = not loads and ((gpr and bool(_X86_INCREMENT.match(mnem)))
                             or (_X86_VEC_INCREMENT.match(mnem) is not None and len(regs_only) == len(ops)))
    move = bool(_X86_MOVE.match(mnem)) and not loads and not mnem.startswith("lea") and not parse(text).fp_op
    return _Insn(text, tuple(dict.fromkeys(reads)), tuple(out), loads, (), incform, move,
                 _x86_step(mnem, ops, out[0]) if incform and gpr else ())


def _x86_step(mnem: str, ops: list, r: str) -> tuple:
    """``((register, constant B),)`` of a constant increment of ``r``; ``()`` otherwise."""
    if mnem.startswith(("inc", "dec")):
        return ((r, 1 if mnem.startswith("inc") else -1),)
    if mnem.startswith("lea"):
        m = re.fullmatch(r"(-?\d*)\(%(\w+)\)", ops[0].replace(" ", ""))
        return ((r, int(m.group(1) or 0)),) if m and _x86_reg(m.group(2)) == r else ()
    if len(ops) == 2 and ops[0].startswith("$") and re.fullmatch(r"-?(0x[0-9a-f]+|\d+)", ops[0][1:].lower()):
        v = int(ops[0][1:], 0)
        return ((r, -v if mnem.startswith("sub") else v),)
    return ()


# -- AArch64 -----------------------------------------------------------------------------

def _a64_reg(word: str) -> str | None:
    w = word.lower().split(".")[0]
    m = re.fullmatch(r"([xw])(\d+)", w)
    if m:
        return f"x{m.group(2)}"
    m = re.fullmatch(r"([vqdshbz])(\d+)", w)
    if m:
        return f"v{m.group(2)}"
    m = re.fullmatch(r"p(\d+)", w)
    if m:
        return f"p{m.group(1)}"
    return "sp" if w == "sp" else None


def _a64_regs(op: str) -> list:
    return [r for r in (_a64_reg(w) for w in re.findall(r"\b[a-z]+\d*(?:\.\w+)?", op.lower())) if r]


def _a64(text: str) -> _Insn:
    mnem = text.split(None, 1)[0].lower()
    body = text.split(None, 1)[1] if " " in text else ""
    mem = next(iter(addresses(body, True)), None)
    ops = operands(text[:text.index("[")] if mem else text)
    if mnem in _A64_NO_DEST or mnem.startswith("b."):
        return _Insn(text, tuple(r for o in ops for r in _a64_regs(o)), (), (), (), False, False)
    regs = [r for o in ops for r in _a64_regs(o)]
    if mem and mnem.startswith(("ld", "st")):
        return _a64_access(text, mnem, mem, ops, regs)
    out = regs[:1]
    reads = regs[1:]
    if re.match(_A64_READS_DEST, mnem) or any("/m" in o for o in ops[1:]):
        reads += out
    incform = bool(out) and out[0].startswith("x") and (mnem in ("add", "sub") or re.fullmatch(r"(inc|dec)[bhwd]", mnem)
                                                         is not None)
    step = ()
    if incform and mnem in ("add", "sub") and len(ops) == 3 and _a64_reg(ops[1]) == out[0]:
        m = re.fullmatch(r"#?(-?\d+)", ops[2].strip())
        step = ((out[0], -int(m.group(1)) if mnem == "sub" else int(m.group(1))),) if m else ()
    return _Insn(text, tuple(dict.fromkeys(reads)), tuple(out), (), (), incform, bool(re.match(_A64_MOVE, mnem)), step)


def _a64_access(text: str, mnem: str, mem: Address, ops: list, regs: list) -> _Insn:
    """A load or store ``[base, index, lsl #s]`` / ``[base, #imm]``, with write-back (``!`` or a
    post-index immediate) advancing the base register."""
    base = _a64_reg(mem.base) or ""
    index = (_a64_reg(mem.index) or "") if mem.index else ""
    m_obj = _Mem("", mem.disp, base, index, mem.scale, _a64_width(ops))
    back = mem.writeback
    writes_base = (base,) if back and base else ()
    step = ((base, mem.post if mem.post is not None else mem.disp),) if writes_base else ()
    addr = tuple(r for r in (base, index) if r)
    if mnem.startswith("st"):
        return _Insn(text, tuple(regs) + addr, writes_base, (), (m_obj,), back, False, step)
    return _Insn(text, addr, tuple(regs) + writes_base, (m_obj,), (), back, False, step)


def _a64_width(ops: list) -> int:
    """Bytes a load/store of the registers ``ops`` spans (:func:`.instructions.register_bytes`: ``q``
    16 B, ``d`` 8 B, a ``v`` list the sum; an SVE ``z`` register of unknown length 64 B, the widest
    implemented vector length of current cores, A64FX)."""
    total = 0
    for o in ops:
        for w in re.findall(r"\b[a-oq-z]\d+(?:\.\d*[bhsd])?", o.lower()):  # data registers, not predicates
            b = register_bytes(w, True)
            total += 64 if b is None else (b or 8)
    return total or 8
