"""The range an affine index takes over a loop nest, symbolically: the extent of an array
that a kernel receives as a pointer (``double *a`` indexed ``a[i*N+j]``) or without its first
dimension (``double a[][M]``).

Kerncraft's kernels declare every array with its dimensions (kerncraft-tool-paper.txt §2.1);
a kernel written as a C function often does not. The elements it touches are then the
extent the models need (data set, cache simulation, the generated program's allocation): from
the smallest to the largest value of the index over the iteration space.

Each loop index is eliminated from the innermost loop out: an index with a positive
coefficient takes its largest value for the maximum (``stop - 1`` for an ascending loop,
``start`` for a descending one), its smallest for the minimum, and the reverse for a negative
coefficient; the bounds are affine in the outer indices, so the result stays affine in them
until the outermost loop is eliminated. Size constants are positive integers, and at least as
large as every loop needs to run once (:func:`size_floors`: ``for (i = 2; i < N-2; ++i)`` needs
``N >= 5``), so a coefficient whose terms are all positive (``N``, ``2*N*M``) is positive, and so
is one whose negative terms are covered by positive terms of monomials they divide once the
floors are taken out (``N - 1``, ``N*M - N``, ``N - 2`` with ``N >= 5``: :func:`sign`); one such
as ``N - M`` has no known sign and the range is not found. For unit steps the result is exact when the
loop bounds allow the extreme values at once (a rectangular or triangular nest whose every
loop runs at least once); a step of ``s`` may overstate the maximum by up to ``s - 1``.
"""
from __future__ import annotations

import math

from .kernel import coefficient
from .poly import Poly


def size_floors(loops) -> dict:
    """The least value of each size constant at which every loop of the nest runs at least once
    (constant -> int >= 1), from the loops whose span is ``a*S + b`` in one constant ``S``
    (``a > 0``): ``a*S + b >= 1``. Loops whose bounds hold outer indices give none."""
    floors: dict = {}
    for lp in loops:
        span = lp.stop - lp.start if lp.step > 0 else lp.start - lp.stop
        if len(span.symbols) != 1 or span.degree != 1:
            continue
        (s,) = span.symbols
        a, b = coefficient(span, s), span.subs({s: 0})
        if a.is_constant() and a.constant_value() > 0:
            need = math.ceil((1 - b.constant_value()) / a.constant_value())
            floors[s] = max(floors.get(s, 1), need)
    return floors


def sign(poly: Poly, floors: dict | None = None) -> int | None:
    """The sign of a polynomial in size constants (integers >= 1, and at least their ``floors``,
    constant -> int) where it is the same for all of them: +1 (>= 0, not the zero polynomial),
    -1 (<= 0) or 0 (the zero polynomial); None where :func:`_covered` cannot show either."""
    if poly.is_zero():
        return 0
    shifted = _shift(poly, floors or {})
    if _covered(shifted):
        return 1
    if _covered(-shifted):
        return -1
    return None


def _shift(poly: Poly, floors: dict) -> Poly:
    """``poly`` with ``S + floor - 1`` for each constant ``S`` of ``floors``: a polynomial in
    constants >= 1 again."""
    out = Poly()
    for mono, coef in poly.terms.items():
        term = Poly.const(coef)
        for s, e in mono:
            base = Poly.symbol(s) + (floors.get(s, 1) - 1)
            for _ in range(e):
                term = term * base
        out = out + term
    return out


def _divides(small: tuple, big: tuple) -> bool:
    """Whether monomial ``small`` divides ``big`` (then ``small <= big`` for symbols >= 1)."""
    exps = dict(big)
    return all(exps.get(s, 0) >= e for s, e in small)


def _covered(poly: Poly) -> bool:
    """Whether ``poly >= 0`` for all symbols >= 1 by covering: each negative term ``-c*m`` is
    paid for by positive terms whose monomials ``m`` divides (each at least ``m``), their
    coefficients used once (``N*M - N - 1``: yes; ``N - M``: not shown)."""
    budget = {m: c for m, c in poly.terms.items() if c > 0}
    for m, c in sorted(poly.terms.items(), key=lambda mc: -len(mc[0])):
        need = -c
        for big in sorted(budget, key=len):
            if need <= 0:
                break
            if _divides(m, big):
                used = min(need, budget[big])
                budget[big] -= used
                need -= used
        if need > 0:
            return False
    return True


def _substitute(expr: Poly, index: str, value: Poly) -> Poly:
    """``expr`` (affine in ``index``) with ``value`` for ``index``."""
    c = coefficient(expr, index)
    return expr - c * Poly.symbol(index) + c * value


def index_range(expr: Poly, loops) -> tuple | None:
    """``(smallest, largest)`` value of ``expr`` over the iteration space of ``loops``.

    Args:
        expr: affine in the loop indices, polynomial in size constants.
        loops: :class:`~loopmodel.ir.kernel.Loop` s, outermost first.

    Returns:
        two Polys in the size constants, or None where a coefficient's sign is unknown.
    """
    floors = size_floors(loops)
    low = high = expr
    for loop in reversed(loops):
        first = loop.start if loop.step > 0 else loop.stop + 1
        last = loop.stop - 1 if loop.step > 0 else loop.start
        out = []
        for bound, pick in ((low, -1), (high, 1)):
            s = sign(coefficient(bound, loop.index), floors)
            if s is None:
                return None
            out.append(bound if s == 0 else _substitute(bound, loop.index, last if s == pick else first))
        low, high = out
    return low, high
