"""Measurements that check themselves: the K runs of a benchmark taken in blocks spread over
time (separate processes, a pause between them), compared, and measured again when they
disagree.

Why: on a shared or virtual host a disturbance only lengthens a run, so the fastest run
(min-of-K) is the figure to compare with a model (roofline-measurement-thesis.txt §3.4) --
but a disturbance that lasts as long as all K runs (another tenant, a lower clock) moves the
minimum itself, and min-of-K cannot see it. Two blocks of runs taken apart in time whose
fastest runs agree confirm the minimum; when they do not, the blocks are measured again (up
to ``rounds`` times), and a result that stays unconfirmed says so.

Criterion: the fastest runs of the two fastest blocks agree within ``tolerance`` (relative:
second / first - 1). One block (K = 1, or ``blocks=1``) cannot be checked. What it can and
cannot see: blocks disagree when the host changes within the run (a fraction of a second);
on a shared virtual host the speed can also change over seconds, so that two whole runs whose
blocks agree still differ (on a 2-vCPU Xeon guest, triad in L2: up to 19 % between runs in a
row with three blocks each; benchmarks/results/bench-stability/).
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from typing import Callable

#: default relative agreement of the two fastest blocks (3 %)
TOLERANCE = 0.03
#: default blocks per round, and rounds at most
BLOCKS, ROUNDS = 3, 3
#: pause between blocks, s: decorrelates the blocks from disturbances shorter than this
PAUSE_S = 0.05


@dataclass(frozen=True)
class Stability:
    """How well the blocks of a benchmark agree.

    Attributes:
        block_min_s_per_it: the fastest run of each block, s/it, in the order measured.
        rounds: rounds of blocks measured (more than one: the first ones disagreed).
        tolerance: the relative agreement asked of the two fastest blocks.
    """

    block_min_s_per_it: tuple
    rounds: int
    tolerance: float = TOLERANCE

    @property
    def agreement(self) -> float | None:
        """Second-fastest block minimum / fastest - 1 (no unit); None for one block."""
        m = sorted(self.block_min_s_per_it)
        return m[1] / m[0] - 1 if len(m) > 1 else None

    @property
    def spread(self) -> float:
        """Slowest block minimum / fastest - 1 (no unit): how far the blocks move."""
        return max(self.block_min_s_per_it) / min(self.block_min_s_per_it) - 1

    @property
    def verdict(self) -> str:
        """``"agree"`` (two blocks confirm the minimum), ``"disagree"`` or ``"unchecked"`` (one block)."""
        if self.agreement is None:
            return "unchecked"
        return "agree" if self.agreement <= self.tolerance else "disagree"

    def note(self) -> str | None:
        """A one-line note where the minimum is not confirmed; None where it is."""
        if self.verdict == "disagree":
            return (f"blocks disagree: the fastest runs of the two fastest of {len(self.block_min_s_per_it)} blocks differ by "
                    f"{100 * self.agreement:.1f} % (asked: {100 * self.tolerance:g} %) after {self.rounds} round(s): "
                    "the host is busy or its clock moves; the minimum is kept, compare it with care and measure again")
        if self.verdict == "unchecked":
            return ("one block of runs (--blocks 1 or --repeat 1): the stability of the minimum is not checked "
                    "(two blocks or more confirm it)")
        return None

    def text(self) -> str:
        """One line for a report: blocks, agreement, spread, verdict."""
        if self.agreement is None:
            return "1 block (unchecked)"
        return (f"{len(self.block_min_s_per_it)} blocks in {self.rounds} round(s): two fastest within "
                f"{100 * self.agreement:.1f} %, all within {100 * self.spread:.1f} % ({self.verdict})")

    def to_dict(self) -> dict:
        """JSON-ready (naming rule of :mod:`loopmodel.report.schema`)."""
        return {"block_min_s_per_it": list(self.block_min_s_per_it), "rounds": self.rounds,
                "tolerance": self.tolerance, "agreement": self.agreement, "spread": self.spread,
                "verdict": self.verdict}


def block_sizes(runs: int, blocks: int) -> list:
    """Runs per block: ``runs`` shared among ``min(blocks, runs)`` blocks, the first ones one
    run longer where they do not divide."""
    n = max(1, min(blocks, runs))
    return [runs // n + (i < runs % n) for i in range(n)]


def measure_in_blocks(measure_block: Callable, runs: int, blocks: int = BLOCKS, tolerance: float = TOLERANCE,
                      rounds: int = ROUNDS, pause_s: float = PAUSE_S, sleep: Callable = time.sleep) -> tuple:
    """Measure ``runs`` runs in blocks until the two fastest blocks agree (or ``rounds`` rounds).

    Args:
        measure_block: ``(runs) -> KernelMeasurement`` of one block (a process of its own).
        runs: K; blocks: blocks per round; tolerance: relative agreement asked (0.03 = 3 %).
        rounds: rounds at most (each measures ``blocks`` blocks again); pause_s, sleep: the
            pause between blocks, s, and the function that waits (injectable for tests).

    Returns:
        ``(KernelMeasurement, Stability)``: the measurement of all runs of all blocks (its
        notes and calls per run those of the first block), and how the blocks agree.
    """
    sizes = block_sizes(runs, blocks)
    measured, minima = [], []
    for done in range(1, rounds + 1):
        for n in sizes:
            if measured:
                sleep(pause_s)
            m = measure_block(n)
            measured.append(m)
            minima.append(m.seconds_per_it_min)
        stability = Stability(tuple(minima), done, tolerance)
        if stability.verdict != "disagree":
            break
    first = measured[0]
    calls = tuple(s for m in measured for s in m.seconds_per_call)
    notes = tuple(dict.fromkeys(n for m in measured for n in m.notes))
    return dataclasses.replace(first, seconds_per_call=calls, notes=notes), stability
