"""The cost of entering and leaving a loop nest, once per execution of the whole nest.

The ECM model predicts the steady state of a loop (cross-architecture-machine-models.txt §3.1).
A nest executed again and again (a kernel called once per time step, or per repetition of a
benchmark) also pays, per execution, its call, the set-up of its pointers and counters and the
exit of its loop, whose branch the predictor misses once the loop is longer than it can count.
Per iteration that is ``c_nest / n`` for a nest of ``n`` iterations in all: on a Zen 4 guest a
triad in L1 took 51.6, 92.7, 176.1 and 341.4 cy per call at N = 152, 304, 608 and 1216, a line
of 0.272 cy/it (the model's steady state: 0.266) and 10.2 cy per call, so the steady-state
prediction was 12-20 % too fast for the corpus' L1 cases of a few hundred iterations
(benchmarks/results/nest-entry/). ``machine probe`` measures ``c_nest`` the same way
(:func:`fit_nest_entry`) and the analysis adds ``c_nest / n`` to both T_OL and T_nOL (nothing
else proceeds while the nest is entered and left), with a note.
"""
from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class NestEntryFit:
    """A straight line through cy per call against iterations per call.

    Attributes:
        entry_cy: cycles per execution of the nest (the intercept, clipped to >= 0).
        per_it_cy: cycles per iteration (the slope).
        residual: root-mean-square relative error of the line over the points (no unit).
    """

    entry_cy: float
    per_it_cy: float
    residual: float


def fit_nest_entry(points) -> NestEntryFit:
    """Least-squares line ``cy per call = c_nest + t · n`` through ``(n, cy per call)`` points
    (relative errors weighted equally: each row divided by its measurement).

    Raises:
        ValueError: fewer than 3 distinct n, or a point that is not positive.
    """
    pts = [(float(n), float(y)) for n, y in points]
    if len({n for n, _ in pts}) < 3 or any(n <= 0 or y <= 0 for n, y in pts):
        raise ValueError("need at least 3 distinct iteration counts, all times positive")
    # weighted normal equations of y/y = c/y + t n/y
    a11 = sum(1 / y ** 2 for _, y in pts)
    a12 = sum(n / y ** 2 for n, y in pts)
    a22 = sum(n * n / y ** 2 for n, y in pts)
    b1 = sum(1 / y for _, y in pts)
    b2 = sum(n / y for n, y in pts)
    det = a11 * a22 - a12 * a12
    c, t = (b1 * a22 - b2 * a12) / det, (a11 * b2 - a12 * b1) / det
    errors = [(c + t * n) / y - 1 for n, y in pts]
    return NestEntryFit(max(c, 0.0), t, math.sqrt(sum(e * e for e in errors) / len(errors)))


def entry_cy_per_it(entry_cy: float, iterations: float) -> float:
    """``c_nest / n``: the nest entry per iteration of a nest of ``iterations`` in all, cy/it
    (0 for an empty nest)."""
    return entry_cy / iterations if iterations >= 1 else 0.0
