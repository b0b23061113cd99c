"""Measurements that check themselves: the K runs of a benchmark taken in blocks spread over
time (separate processes, a pause between them), compared, and measured again when they
disagree.

Why: on a shared or virtual host a disturbance only lengthens a run, so the fastest run
(min-of-K) is the figure to compare with a model (roofline-measurement-thesis.txt §3.4) --
but a disturbance that lasts as long as all K runs (another tenant, a lower clock) moves the
minimum itself, and min-of-K cannot see it. Two blocks of runs taken apart in time whose
fastest runs agree confirm the minimum; when they do not, the blocks are measured again (up
to ``rounds`` times), and a result that stays unconfirmed says so.

Spread over time: the starts of the blocks of the first round are at least
``spread_s / (blocks - 1)`` apart (a pause fills the gap, :data:`PAUSE_S` at least), so that
even one round samples the host over ``spread_s`` seconds and not only over the fraction of a
second its runs take; rounds measured again follow with :data:`PAUSE_S` pauses (they come
later anyway), so that the spread adds at most ``spread_s`` seconds to a measurement.

Against an earlier run: a fresh measurement is compared with the last one of the same case on
this host (:func:`against_earlier`); where their minima differ by more than ``tolerance`` one
more round is measured and the difference that remains is reported -- the check that blocks
of one run cannot make.

Criterion: the fastest runs of the two fastest blocks agree within ``tolerance`` (relative:
second / first - 1). One block (K = 1, or ``blocks=1``) cannot be checked. What it can and
cannot see: blocks disagree when the host changes within the run (a fraction of a second);
two whole runs whose blocks agree can still differ, by the host's speed over seconds and by
what each process gets (on a 2-vCPU Xeon guest, triad in L2: windows of runs 0.12 s apart in
one process agree within 1.5 % (median), processes 0.12 s apart differ by 3-11 %). Hence the
comparison with an earlier run: on that host, with other users busy, two runs in a row
differed by a median 13-24 % (max 33-100 %) before, 6.5-11 % (max 22-55 %) with the spread
and the comparison, and every pair beyond 3 % was reported by the second run
(benchmarks/results/bench-stability/).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import time
from typing import Callable


#: default relative agreement of the two fastest blocks (3 %)
TOLERANCE = 0.03
#: default blocks per round, and rounds at most
BLOCKS, ROUNDS = 3, 3
#: pause between blocks, s: decorrelates the blocks from disturbances shorter than this
PAUSE_S = 0.05
#: default span of the starts of the first round's blocks, s (``bench --spread-s``); the blocks of a
#: kernel in L1-L3 take about 0.2 s each (a process, calibration, runs of >= 10 ms), so that three
#: blocks span about this anyway and the pauses add little (benchmarks/results/bench-stability/)
SPREAD_S = 0.5


@dataclass(frozen=True)
class Earlier:
    """This run against the last one of the same case (kernel text, sizes, compiler and flags,
    CPU, cache mode, threads, host).

    Attributes:
        date: when the earlier run was measured (ISO 8601, local time).
        min_s_per_it: its fastest run, s/it.
        relative_difference: this run's fastest run / the earlier one's - 1 (no unit; signed).
        remeasured: whether one more round was measured because the two disagreed.
    """

    date: str
    min_s_per_it: float
    relative_difference: float
    remeasured: bool = False

    def to_dict(self) -> dict:
        """JSON-ready (naming rule of :mod:`loopmodel.report.schema`)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Stability:
    """How well the blocks of a benchmark agree.

    Attributes:
        block_min_s_per_it: the fastest run of each block, s/it, in the order measured.
        rounds: rounds of blocks measured (more than one: the first ones disagreed).
        tolerance: the relative agreement asked of the two fastest blocks.
        span_s: seconds spent measuring the blocks, pauses included (None: not timed).
        earlier: this run against an earlier one of the same case, where the two disagreed
            beyond ``tolerance`` (None: no earlier run, or they agreed).
    """

    block_min_s_per_it: tuple
    rounds: int
    tolerance: float = TOLERANCE
    span_s: float | None = None
    earlier: Earlier | None = None

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
    def runs_disagree(self) -> bool:
        """Whether an earlier run of the same case still disagrees beyond the tolerance after
        measuring again."""
        return self.earlier is not None and abs(self.earlier.relative_difference) > self.tolerance

    @property
    def verdict(self) -> str:
        """``"agree"`` (two blocks confirm the minimum, and no earlier run contradicts it),
        ``"disagree"`` (the blocks, or an earlier run after measuring again) or ``"unchecked"``
        (one block)."""
        if self.runs_disagree:
            return "disagree"
        if self.agreement is None:
            return "unchecked"
        return "agree" if self.agreement <= self.tolerance else "disagree"

    def note(self) -> str | None:
        """A one-line note where the blocks do not confirm the minimum; None where they do."""
        if self.agreement is None:
            return ("one block of runs (--blocks 1 or --repeat 1): the stability of the minimum is not checked "
                    "(two blocks or more confirm it)")
        if self.agreement > self.tolerance:
            return (f"blocks disagree: the fastest runs of the two fastest of {len(self.block_min_s_per_it)} blocks differ by "
                    f"{100 * self.agreement:.1f} % (asked: {100 * self.tolerance:g} %) after {self.rounds} round(s): "
                    "the host is busy or its clock moves; the minimum is kept, compare it with care and measure again")
        return None

    def earlier_note(self) -> str | None:
        """A one-line note where an earlier run of the same case disagreed; None otherwise."""
        e = self.earlier
        if e is None:
            return None
        said = (f"an earlier run of the same case ({e.date}) measured {e.min_s_per_it:.3e} s/it; this one differs by "
                f"{100 * e.relative_difference:+.1f} %")
        if not self.runs_disagree:
            return said + f" after measuring again (first more than {100 * self.tolerance:g} % apart)"
        return (said + (" after measuring again" if e.remeasured else "") + f" (asked: {100 * self.tolerance:g} %): "
                "runs seconds apart disagree: this host's speed moves; compare figures measured within one run")

    def text(self) -> str:
        """One line for a report: blocks, agreement, spread, verdict (and an earlier run that disagreed)."""
        if self.agreement is None:
            line = "1 block"
        else:
            line = (f"{len(self.block_min_s_per_it)} blocks in {self.rounds} round(s)"
                    + (f" over {self.span_s:.1f} s" if self.span_s is not None else "")
                    + f": two fastest within {100 * self.agreement:.1f} %, all within {100 * self.spread:.1f} %")
        if self.earlier is not None:
            line += f"; {100 * self.earlier.relative_difference:+.1f} % against an earlier run"
        return line + f" ({self.verdict})"

    def to_dict(self) -> dict:
        """JSON-ready (naming rule of :mod:`loopmodel.report.schema`)."""
        return {"block_min_s_per_it": list(self.block_min_s_per_it), "rounds": self.rounds,
                "tolerance": self.tolerance, "agreement": self.agreement, "spread": self.spread,
                "verdict": self.verdict, "span_s": self.span_s,
                "earlier": self.earlier.to_dict() if self.earlier else None}


def block_sizes(runs: int, blocks: int) -> list:
    """Runs per block: ``runs`` shared among ``min(blocks, runs)`` blocks, the first ones one
    run longer where they do not divide."""
    n = max(1, min(blocks, runs))
    return [runs // n + (i < runs % n) for i in range(n)]


def measure_in_blocks(measure_block: Callable, runs: int, blocks: int = BLOCKS, tolerance: float = TOLERANCE,
                      rounds: int = ROUNDS, pause_s: float = PAUSE_S, sleep: Callable = time.sleep,
                      spread_s: float = 0.0, now: Callable = time.monotonic) -> tuple:
    """Measure ``runs`` runs in blocks until the two fastest blocks agree (or ``rounds`` rounds).

    Args:
        measure_block: ``(runs) -> KernelMeasurement`` of one block (a process of its own).
        runs: K; blocks: blocks per round; tolerance: relative agreement asked (0.03 = 3 %).
        rounds: rounds at most (each measures ``blocks`` blocks again).
        pause_s: the shortest pause between blocks, s.
        spread_s: the starts of the first round's blocks are at least ``spread_s / (blocks - 1)``
            s apart (the pause before a block is stretched to that; 0: ``pause_s`` only); later
            rounds pause ``pause_s``. All pauses add up to at most
            ``spread_s + rounds * blocks * pause_s``.
        sleep, now: the function that waits and the monotonic clock, s (injectable for tests).

    Returns:
        ``(KernelMeasurement, Stability)``: the measurement of all runs of all blocks (its
        notes and calls per run those of the first block), and how the blocks agree.
    """
    sizes = block_sizes(runs, blocks)
    step = spread_s / (len(sizes) - 1) if len(sizes) > 1 else 0.0
    measured, minima = [], []
    started = now()
    for done in range(1, rounds + 1):
        for i, n in enumerate(sizes):
            if done > 1 or i == 0:
                if measured:
                    sleep(pause_s)
            else:
                sleep(min(max(pause_s, started + i * step - now()), max(pause_s, step)))
            m = measure_block(n)
            measured.append(m)
            minima.append(m.seconds_per_it_min)
        stability = Stability(tuple(minima), done, tolerance, now() - started)
        if stability.verdict != "disagree":
            break
    return merged(measured), stability


def merged(measured) -> object:
    """One :class:`~loopmodel.measure.kernel_bench.KernelMeasurement` of the runs of all of
    ``measured`` (a non-empty sequence; notes and calls per run those of the first)."""
    first = measured[0]
    calls = tuple(s for m in measured for s in m.seconds_per_call)
    notes = tuple(dict.fromkeys(n for m in measured for n in m.notes))
    return dataclasses.replace(first, seconds_per_call=calls, notes=notes)


def against_earlier(result: tuple, earlier: dict | None, measure_again: Callable) -> tuple:
    """Compare a fresh measurement with the last one of the same case and measure once more
    where their minima differ by more than the tolerance.

    Args:
        result: ``(KernelMeasurement, Stability)`` of :func:`measure_in_blocks`.
        earlier: ``{"date": str, "min_s_per_it": float}`` of the earlier run, or None.
        measure_again: ``() -> (KernelMeasurement, Stability)`` of one more round (called at
            most once).

    Returns:
        ``(KernelMeasurement, Stability)``: unchanged where nothing earlier exists or the two
        agree; else the runs of both measurements together, with
        :attr:`Stability.earlier` set (the difference that remains).
    """
    m, s = result
    if not earlier:
        return result
    before = earlier["min_s_per_it"]
    if abs(m.seconds_per_it_min / before - 1) <= s.tolerance:
        return result
    m2, s2 = measure_again()
    both = merged((m, m2))
    span = None if s.span_s is None or s2.span_s is None else s.span_s + s2.span_s
    rel = both.seconds_per_it_min / before - 1
    return both, Stability(s.block_min_s_per_it + s2.block_min_s_per_it, s.rounds + s2.rounds, s.tolerance, span,
                           Earlier(str(earlier["date"]), before, rel, remeasured=True))
