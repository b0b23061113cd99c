"""Latency per pass of a loop block's loop-carried dependency chains, from per-instruction latencies.

A chain (:func:`.deps.loop_carried_chains`) bounds a pass of the loop from below by the
latency of its critical cycle (:func:`.deps.critical_cycle`; kerncraft-tool-paper.txt §2.3:
a loop-carried dependency makes T_OL its critical-path latency). Each instruction on the
cycle costs, in this order of preference:

* floating-point arithmetic (:func:`.instructions.parse`: ADD for add/sub, MUL, FMA, DIV, SQRT, at
  the width of its own register: 8 B scalar double, 4 B scalar float, 16/32/64 B xmm/ymm/zmm,
  AArch64 v/q registers, SVE z registers at the machine model's ``in_core.simd_width``): the
  probe's latency at that width (:func:`loopmodel.machine.latency.op_latency`), else the
  analyzer's latency for the instruction (llvm-mca's instruction info or OSACA's form, a folded
  load's latency taken out, :func:`analyzer_latencies`), else the machine model's
  ``in_core.latency`` of the operation (at the widest width);
* other instructions (register moves, shuffles, integer operations): the analyzer's latency;
* how a value enters an instruction adds: through memory (the load of bytes a store wrote
  in an earlier pass) the store-to-load forwarding latency in place of the store's and the
  load's (``in_core.store_forward_latency``, measured by the probe; else 5 cy, assumed: the
  4-7 cy of current x86 and Arm cores); through a load's address register the L1
  load-to-use latency (the probe's pointer chase; else the analyzer's, else 5 cy assumed);
  a store itself costs nothing (its time is in the forwarding latency).

Each instruction's latency is taken at its own width, whatever else the block holds: a scalar
``vdivsd`` next to 512-bit instructions keeps the 8 B divide latency (port 0/1 fusion for
AVX-512, Intel Optimization Reference Manual, closes a port to vector uops, which bounds
throughput, not the latency of an instruction once issued). Each figure is labelled by its
source, the analyzer's by the analyzer's name.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..machine import latency as mlat
from .checked import analyzer_latency
from .deps import Chain, critical_cycle, loop_carried_chains
from .instructions import parse, plain_load

#: assumed store-to-load forwarding and L1 load-to-use latency (cy) where neither the probe nor the analyzer gives one
ASSUMED_CY = 5.0


@dataclass(frozen=True)
class Term:
    """One instruction's share of a chain's critical cycle.

    Attributes:
        text: the instruction line.
        cy: its latency on the cycle (cy), forwarding or load latency included.
        source: where it comes from, ``"probe, 8 B"``, ``"llvm-mca"``, ``"osaca"``, ``"machine model"``,
            ``"store-to-load forwarding 5 cy, assumed"``, ...
        fp: the FP operation class (``"ADD"``, ...), '' for other instructions.
        measured: the instruction's own latency (FP arithmetic) comes from the probe.
    """

    text: str
    cy: float
    source: str
    fp: str = ""
    measured: bool = False

    def describe(self) -> str:
        """``vaddsd 2 cy (probe, 8 B)``."""
        return f"{self.text.split()[0]} {self.cy:.3g} cy ({self.source})"


@dataclass(frozen=True)
class ChainLatency:
    """A loop-carried chain with the latency of its critical cycle.

    Attributes:
        chain: the :class:`~.deps.Chain`.
        cy_per_pass: latency per pass of the block (cy), None where an instruction on the chain
            has no latency from any source.
        terms: :class:`Term` per dependency of the critical cycle, in the order the value travels.
        passes: passes of the block the cycle crosses.
        measured: every FP arithmetic instruction of the cycle has the probe's latency, or the
            cycle has none and goes through memory or a load's address (its time is the
            forwarding or load latency): the figure does not rest on the analyzer's latencies of
            the arithmetic.
        unmeasured: the chain's instructions without a latency from the probe (FP arithmetic)
            or from any source (the others), in block order.
    """

    chain: Chain
    cy_per_pass: float | None
    terms: tuple = ()
    passes: int = 1
    measured: bool = False
    unmeasured: tuple = ()

    def describe(self) -> str:
        """``3 x vaddsd 1.99 cy (probe, 8 B) + vmulsd 4.03 cy (probe, 8 B) = 10 cy per pass``."""
        if self.cy_per_pass is None:
            return "latency unknown"
        per = f" ({self.passes} passes: the cycle's latency / {self.passes})" if self.passes > 1 else ""
        runs: list = []  # equal terms in a row once, with their count
        for t in self.terms:
            if runs and runs[-1][0].describe() == t.describe():
                runs[-1][1] += 1
            else:
                runs.append([t, 1])
        text = " + ".join((f"{n} x " if n > 1 else "") + t.describe() for t, n in runs)
        return f"{text} = {self.cy_per_pass:.3g} cy per pass{per}"


def analyzer_latencies(info) -> tuple:
    """``(latency per line, load latency)`` from the analyzer's figures of the analyzed block
    (``info.timings``, :class:`~.incore.CompiledInCore`: llvm-mca's instruction info, OSACA's
    forms; issue to result, a folded load included): per instruction line of the block (None where
    the analyzer gave none), and the latency of the block's plain loads (None without one)."""
    lines = [" ".join(ln.split()) for ln in info.block.split("\n") if ln.strip()]
    rows = tuple(analyzer_latency(info, t) for t in lines)
    loads = [cy for t, cy in zip(lines, rows) if cy is not None and plain_load(t, info.aarch64)]
    return rows, (max(loads) if loads else None)


def chain_latencies(lines: list, aarch64: bool, machine, analyzer=None, analyzer_name: str = "llvm-mca") -> list:
    """The loop-carried chains of a block with their latency per pass (module docstring).

    Args:
        lines: the block's instruction lines.
        aarch64: AArch64 syntax (else x86 AT&T).
        machine: the machine model (probe latencies, ``in_core.latency``).
        analyzer: :func:`analyzer_latencies` of the block, or a function without arguments
            returning them (called only where the block has a chain), or None (no analyzer).
        analyzer_name: the analyzer that gave them (``"llvm-mca"``, ``"osaca"``), the label of
            its figures.

    Returns:
        :class:`ChainLatency` per chain, in block order.
    """
    texts = [" ".join(ln.split()) for ln in lines if ln.strip()]
    chains = loop_carried_chains(texts, aarch64)
    if not chains:
        return []
    analyzer = analyzer() if callable(analyzer) else analyzer or ((), None)
    by_text = {}
    for t, cy in zip(texts, analyzer[0]):
        by_text.setdefault(t, cy)
    own = {t: _own_latency(t, aarch64, machine, by_text.get(t), analyzer[1], analyzer_name) for t in texts}
    fwd, load = _entry_latencies(machine, analyzer[1], analyzer_name)
    return [_chain_latency(c, own, fwd, load) for c in chains]


def _entry_latencies(machine, analyzer_load, analyzer_name: str) -> tuple:
    """``(store-to-load forwarding, L1 load-to-use)`` as :class:`~loopmodel.machine.latency.Latency`."""
    fwd = mlat.store_forward(machine) or mlat.Latency(ASSUMED_CY, "assumed")
    load = mlat.load_to_use(machine) or (mlat.Latency(analyzer_load, analyzer_name) if analyzer_load else None) \
        or mlat.Latency(ASSUMED_CY, "assumed")
    return fwd, load


def _chain_latency(chain: Chain, own: dict, fwd, load) -> ChainLatency:
    """The critical cycle of ``chain`` with each step's :class:`Term`."""
    terms = {}

    def step(i, via):
        text = chain.instructions[i]
        cy, source, fp, measured = own[text]
        if cy is None:
            return None
        if via == "memory":
            cy, source = cy + fwd.cy, f"store-to-load forwarding {fwd.cy:.3g} cy, {fwd.source}" + (
                f", + {source}" if cy > fwd.cy else "")
        elif via == "address" and source != "store":
            cy, source = cy + load.cy, f"L1 load {load.cy:.3g} cy, {load.source}" + (
                f", + {source}" if cy > load.cy else "")
        terms[(i, via)] = Term(text, cy, source, fp, measured)
        return cy

    cyc = critical_cycle(chain, step)
    missing = tuple(t for t in chain.instructions if own[t][0] is None or (own[t][2] and not own[t][3]))
    if cyc is None:
        return ChainLatency(chain, None, unmeasured=missing)
    ts = tuple(terms[(i, via)] for i, via, _, _ in cyc.steps)
    fps = [t for t in ts if t.fp]
    measured = all(t.measured for t in fps) and (bool(fps) or any(v != "register" for _, v, _, _ in cyc.steps))
    return ChainLatency(chain, cyc.cy_per_pass, ts, cyc.passes, measured, missing)


def _own_latency(text: str, aarch64: bool, machine, analyzer_cy, analyzer_load, analyzer_name: str) -> tuple:
    """``(cy or None, source, FP class, from the probe)`` of one instruction, its operation alone
    at its own width (a folded load's latency taken out; a plain load or store 0: the load's
    latency is charged on the way in, a store's in the forwarding latency to its reload)."""
    ins = parse(text, aarch64, machine.in_core.simd_width)
    if ins.stores and not ins.loads:
        return 0.0, "store", "", False
    if plain_load(text, aarch64):
        return 0.0, "load", "", False
    op_part = None
    if analyzer_cy is not None:
        op_part = max(0.0, analyzer_cy - (analyzer_load or 0.0)) if ins.loads else analyzer_cy
    op = ins.fp_op
    if not op:
        return op_part, analyzer_name, "", False
    got = mlat.op_latency(machine, op, ins.fp_width) if ins.fp_width else None  # unknown width: not the probe's
    if got is not None:
        return got.cy, got.source, op, True
    if op_part is not None:
        return op_part, analyzer_name, op, False
    if op in machine.in_core.latency:
        return machine.in_core.latency[op], "machine model", op, False
    return None, "", op, False
