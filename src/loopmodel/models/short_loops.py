"""In-core time of a short inner loop: pass quantization, remainder and loop entry overhead.

The ECM model predicts the runtime of steady-state loops (cross-architecture-machine-models.txt,
abstract and §3.1, model assumptions: the latency wind-up phase "can be neglected even for short
loops with only hundreds of iterations", and the runtime of an iteration is the time to retire
its instructions). An inner
loop of n iterations executed again and again by an outer loop is not in that state when n is
small: its compiled code does ``floor(n / p)`` passes of ``p`` iterations (SIMD lanes times
unrolling), then ``n mod p`` iterations in a remainder (scalar or narrower code), and every
entry of the loop costs a fixed overhead (setting up pointers and the counter, the exit
branch). Per inner-loop iteration, in cy/it (``t`` the steady-state time per iteration, so a
pass takes ``C = p·t``):

    T(n) = [ floor(n/p)·C + (n mod p)·max(r·C, t) + c_entry ] / n

with ``r`` the cost of one remainder iteration relative to a full pass and ``c_entry`` in cy
per loop entry, both measured on the host (``machine probe``, fitted by
:func:`fit_short_loop`). T(n) >= t; for n a multiple of p it decreases toward t as n grows.

A compiled loop block whose pass does more iterations than the inner loop has (``p > n``)
is the next outer loop, the inner loop unrolled completely into its body (a compiler does so
for a short loop whose trip count it knows): one pass then executes whole inner loops, entry
and remainder included, and its iterations are ``entries per pass x n``
(:func:`block_iterations`), not ``p``.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..ir.kernel import coefficient

#: inner loops of at least this many passes are taken as steady state (no change)
LONG_LOOP_PASSES = 16


@dataclass(frozen=True)
class ShortLoopFit:
    """The short-loop parameters fitted to a kernel measured at several inner trip counts.

    Attributes:
        entry_cy: cycles per inner-loop entry (``c_entry``), >= 0.
        remainder_ratio: cost of one remainder iteration / cost of one full pass (``r``), >= 0.
        pass_cy: fitted cycles per full pass of the measured kernel.
        residual: root-mean-square relative error of the fit over the points (no unit).
    """

    entry_cy: float
    remainder_ratio: float
    pass_cy: float
    residual: float


def is_short(n: int, per_pass: float) -> bool:
    """Whether an inner loop of ``n`` iterations with ``per_pass`` iterations per pass is short
    (fewer than :data:`LONG_LOOP_PASSES` passes)."""
    return n >= 1 and per_pass >= 1 and n < LONG_LOOP_PASSES * per_pass


def block_iterations(per_pass: float, n: int, row: float) -> float:
    """Inner-loop iterations one pass of a compiled block does.

    Args:
        per_pass: iterations per pass read from the block's pointer increment (the work
            access's advance per pass over its advance per inner-loop iteration).
        n: inner-loop trip count.
        row: the work access's advance per iteration of the next outer loop, in inner-loop
            iterations (a row of a 2-D array: its length, halo included).

    Returns:
        ``per_pass`` where it is at most ``n``; else (the block is the outer loop, the inner
        loop unrolled into it) ``max(1, round(per_pass / row)) x n``.
    """
    if per_pass <= n or n < 1 or row <= 0:
        return per_pass
    return max(1, round(per_pass / row)) * n


def quantization(n: int, per_pass: float, remainder_ratio: float) -> float:
    """Time of an inner loop of ``n`` iterations without the entry overhead, over ``n`` steady-state
    iterations: ``p·(floor(n/p) + (n mod p)·max(r, 1/p)) / n`` (>= 1; 1 for n a multiple of p).

    Raises:
        ValueError: n < 1 or per_pass < 1.
    """
    if n < 1 or per_pass < 1:
        raise ValueError(f"inner loop of {n} iterations, {per_pass} per pass")
    p = int(round(per_pass))
    passes, rest = divmod(n, p)
    return p * (passes + rest * max(remainder_ratio, 1.0 / p)) / n


def short_loop_cy_per_it(t: float, n: int, per_pass: float, entry_cy: float, remainder_ratio: float) -> float:
    """T(n) of the module docstring in cy/it: the time per iteration of an inner loop of ``n``
    iterations whose steady-state time is ``t`` cy/it; ``t`` itself for a long loop
    (:func:`is_short` false)."""
    if not is_short(n, per_pass):
        return t
    return t * quantization(n, per_pass, remainder_ratio) + entry_cy / n


def fit_short_loop(points, per_pass: float) -> ShortLoopFit:
    """Least-squares fit of ``cy per loop entry = floor(n/p)·C + (n mod p)·r·C + c_entry`` to
    measurements of one kernel at several inner trip counts (linear in ``C``, ``r·C``,
    ``c_entry``; relative errors weighted equally: each row divided by its measurement).

    Args:
        points: ``(n, cy per loop entry)`` pairs, at least 3 distinct n with at least one n >= p.
        per_pass: iterations per pass of the measured kernel's loop (its SIMD lanes).

    Returns:
        :class:`ShortLoopFit` (``c_entry`` and ``r`` clipped to >= 0; ``r`` 0 where no point
        has a remainder).

    Raises:
        ValueError: too few points, or none with a full pass.
    """
    p = int(round(per_pass))
    pts = [(int(n), float(y)) for n, y in points if n >= 1 and y > 0]
    if len({n for n, _ in pts}) < 3 or not any(n >= p for n, _ in pts):
        raise ValueError(f"need at least 3 trip counts, one of at least {p}")
    rows = [((n // p) / y, (n % p) / y, 1.0 / y) for n, y in pts]  # each row over its measurement
    coef = _least_squares(rows, [1.0] * len(rows))
    pass_cy = max(coef[0], 1e-9)
    ratio = max(coef[1] / pass_cy, 0.0) if any(n % p for n, _ in pts) else 0.0
    entry = max(coef[2], 0.0)
    errors = [((n // p) * pass_cy + (n % p) * ratio * pass_cy + entry) / y - 1 for n, y in pts]
    return ShortLoopFit(entry, ratio, pass_cy, math.sqrt(sum(e * e for e in errors) / len(errors)))


def _least_squares(rows, rhs) -> list:
    """Least-squares solution of ``rows · x = rhs`` (normal equations, Gaussian elimination with
    partial pivoting); unknowns that the rows do not determine are 0."""
    k = len(rows[0])
    m = [[sum(r[i] * r[j] for r in rows) for j in range(k)] + [sum(r[i] * b for r, b in zip(rows, rhs))]
         for i in range(k)]
    for c in range(k):
        piv = max(range(c, k), key=lambda i: abs(m[i][c]))
        m[c], m[piv] = m[piv], m[c]
        if abs(m[c][c]) < 1e-12:
            continue
        for i in range(k):
            if i != c:
                f = m[i][c] / m[c][c]
                m[i] = [a - f * b for a, b in zip(m[i], m[c])]
    return [m[i][k] / m[i][i] if abs(m[i][i]) >= 1e-12 else 0.0 for i in range(k)]


def inner_shape(kernel, defines: dict) -> tuple:
    """``(n, row)``: the inner loop's trip count at ``defines`` and the work access's advance per
    iteration of the next outer loop in inner-loop iterations (0 without one, or where the
    access does not move with the inner loop); ``(None, 0)`` where the trip count depends on an
    outer index (not a rectangular nest)."""
    n = inner_trips(kernel, defines)
    if n is None:
        return None, 0
    moving = kernel.work_accesses()
    if len(kernel.loops) < 2 or not moving:
        return n, 0
    inner, outer = kernel.loops[-1], kernel.loops[-2]
    for access in moving:  # the first (written first) that moves with both loops
        per_it = coefficient(access.offset, inner.index).subs(defines)
        per_row = coefficient(access.offset, outer.index).subs(defines)
        if per_it.is_constant() and per_row.is_constant() and per_it.constant_value() and per_row.constant_value():
            return n, abs(float(per_row.constant_value()) * outer.step /
                          (float(per_it.constant_value()) * inner.step))
    return n, 0


def inner_trips(kernel, defines: dict) -> int | None:
    """The inner loop's trip count at ``defines``; None where it depends on an outer index."""
    try:
        return kernel.loops[-1].iterations(defines)
    except KeyError:
        return None
