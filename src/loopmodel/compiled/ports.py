"""Per-instruction port pressure: instruction classes, macro-fusion, balanced assignment.

llvm-mca reports the ports its scheduler simulation happened to use, not an optimal
assignment, and it does not model macro-fusion; OSACA reports an optimal assignment with
fused compare-and-branch pairs. To map both to the ECM's T_OL and T_nOL on the same terms
(kerncraft-tool-paper.txt §2.3: "T_OL is the overlapping time for computations
and stores, T_nOL is the time for the loads from registers into L1") this module

* reads whether each instruction loads, stores, both or neither from :mod:`.instructions`,
* drops the compare/test uop of an x86 compare-and-branch pair (macro-fused into the
  branch uop since Sandy Bridge and Zen), and
* redistributes every instruction's total pressure over the ports it was seen to use so
  that the largest port pressure is minimal (water-filling), as the hardware scheduler
  and OSACA's optimal schedule do.

All pressures are cycles per pass of the assembly loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import re

from .instructions import access_kind, operand_address, operands

#: x86 ALU instructions that macro-fuse with a following conditional jump
FUSABLE = re.compile(r"^(cmp|test|add|sub|and|inc|dec)[bwlq]?$")


@dataclass(frozen=True)
class InstrPressure:
    """One instruction of the block: text, cycles per pass on each port unit, and the
    port units it may use (empty: those it used)."""

    text: str
    pressure: dict
    eligible: tuple = ()


def macro_fused(mnem: str, next_mnem: str) -> bool:
    """Whether x86 instruction ``mnem`` fuses with the next one, ``next_mnem``, into one uop: a
    compare, test or ALU instruction (:data:`FUSABLE`) directly followed by a conditional jump."""
    return bool(FUSABLE.match(mnem)) and next_mnem.startswith("j") and next_mnem != "jmp"


def fuse_compare_branch(instrs: list) -> list:
    """Drop the pressure of an x86 compare/test/ALU uop directly followed by a conditional jump
    (:func:`macro_fused`)."""
    out = []
    for i, ins in enumerate(instrs):
        mnem = ins.text.split(None, 1)[0].lower() if ins.text.strip() else ""
        nxt = instrs[i + 1].text.split(None, 1)[0].lower() if i + 1 < len(instrs) else ""
        if macro_fused(mnem, nxt):
            out.append(InstrPressure(ins.text, {}, ins.eligible))
        else:
            out.append(ins)
    return out


def balance(instrs: list, port_class=lambda unit: 0, rounds: int = 60) -> list:
    """Redistribute each instruction's pressure over the ports it used, minimising the maximum.

    ``port_class(unit)`` partitions the port units: pressure moves only among the units of
    one class that the instruction used (its separate uops: load, store, arithmetic); a
    unit of class None (a divider) keeps its pressure.

    Iterative water-filling: each instruction in turn takes its total back and pours it
    onto its ports so that they end as level as possible. Converges to the min-max
    assignment for these small blocks in a few rounds.

    Returns:
        New :class:`InstrPressure` list (same totals per instruction).
    """
    cur = [dict(i.pressure) for i in instrs]
    load: dict = {}
    for p in cur:
        for k, v in p.items():
            load[k] = load.get(k, 0.0) + v
    groups = []
    for ins, p in zip(instrs, cur):
        by: dict = {}
        for k, v in p.items():
            c = port_class(k)
            if v > 0 and c is not None:
                by.setdefault(c, set()).add(k)
        for c, ks in by.items():
            ks |= {k for k in ins.eligible if port_class(k) == c}
            for k in ks:
                p.setdefault(k, 0.0)
                load.setdefault(k, 0.0)
            if len(ks) > 1:
                groups.append((p, sorted(ks)))
    for _ in range(rounds):
        for p, ports in groups:
            total = sum(p[k] for k in ports)
            for k in ports:
                load[k] -= p[k]
            # water level h: sum over ports of max(0, h - load) == total
            base = sorted(load[k] for k in ports)
            h, acc = base[0], 0.0
            for j in range(len(base)):
                nxt = base[j + 1] if j + 1 < len(base) else float("inf")
                need = (nxt - base[j]) * (j + 1)
                if acc + need >= total:
                    h = base[j] + (total - acc) / (j + 1)
                    break
                acc += need
            for k in ports:
                p[k] = max(0.0, h - load[k])
                load[k] += p[k]
    return [InstrPressure(i.text, p, i.eligible) for i, p in zip(instrs, cur)]


def whole_uops(instrs: list, port_class=lambda unit: 0) -> list:
    """Scale each instruction's pressure within a port class to a whole number of cycles where
    llvm-mca's rounding to two decimals leaves it short or over.

    llvm-mca prints each unit's pressure with two decimals, so a store-address uop spread over
    three ports reads 0.04 + 0.04 + 0.91 = 0.99 cy, and balanced that gives 1.495 cy on ports 2/3
    where the schedule has 1.5. A class total (one uop or several, one cycle each) within the
    rounding error (0.005 cy per unit) of a whole number >= 1 is scaled to it; other totals
    (half-cycle uops, dividers: class None) are kept.

    Returns:
        New :class:`InstrPressure` list.
    """
    out = []
    for ins in instrs:
        by: dict = {}
        for k, v in ins.pressure.items():
            c = port_class(k)
            if c is not None and v > 0:
                by.setdefault(c, []).append(k)
        press = dict(ins.pressure)
        for units in by.values():
            total = sum(press[k] for k in units)
            whole = round(total)
            if whole >= 1 and 1e-12 < abs(total - whole) <= 0.005 * len(units) + 1e-12:
                for k in units:
                    press[k] *= whole / total
        out.append(InstrPressure(ins.text, press, ins.eligible))
    return out


#: llvm-mca unit names of the Haswell-to-Skylake store-address port 7 and of the ports 2/3 that
#: take what it cannot
_PORT7 = r"^(HW|BW|SKL|SKX)Port7(\.\d+)?$"


def indexed_store_addresses(instrs: list) -> list:
    """Move the store-address uop of an x86 store with an index register off port 7.

    Haswell to Skylake(-SP) generate store addresses on port 7 only for simple addressing
    (base + displacement); indexed stores use ports 2/3 (Intel 64 and IA-32 Architectures
    Optimization Reference Manual, Haswell microarchitecture: "Port 7: store address,
    simple"). llvm-mca 14 sends them to port 7, which hides their address uop from the
    ports 2/3 that OSACA and the hardware use. Its pressure goes to the instruction's port
    2/3 units (those named like the port-7 unit, ``...Port2``/``...Port3``), evenly.

    Returns:
        New :class:`InstrPressure` list; other instructions unchanged.
    """
    out = []
    for ins in instrs:
        sevens = [k for k in ins.pressure if re.match(_PORT7, k)]
        ops = operands(ins.text)
        store = operand_address(ops[-1]) if ops else None
        if not sevens or not access_kind(ins.text)[1] or store is None or not store.index:
            out.append(ins)
            continue
        prefix = re.match(_PORT7, sevens[0]).group(1)
        agu = [f"{prefix}Port2", f"{prefix}Port3"]
        moved = sum(ins.pressure[k] for k in sevens)
        press = {k: v for k, v in ins.pressure.items() if k not in sevens}
        for k in agu:
            press[k] = press.get(k, 0.0) + moved / len(agu)
        elig = tuple(sorted({k for k in ins.eligible if not re.match(_PORT7, k)} | set(agu)))
        out.append(InstrPressure(ins.text, press, elig))
    return out


def port_totals(instrs: list, only=None) -> dict:
    """Sum pressure per port unit over ``instrs`` (those for which ``only(text)`` is true)."""
    out: dict = {}
    for i in instrs:
        if only is not None and not only(i.text):
            continue
        for k, v in i.pressure.items():
            out[k] = out.get(k, 0.0) + v
    return out


def group_max(units: dict) -> dict:
    """Collapse port units ``NAME.k`` to ``NAME`` (max over the units of a group)."""
    out: dict = {}
    for k, v in units.items():
        name = k.split(".", 1)[0] if re.search(r"\.\d+$", k) else k
        out[name] = max(out.get(name, 0.0), v)
    return out
