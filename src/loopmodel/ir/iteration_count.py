"""The exact number of innermost iterations of a loop nest whose bounds are affine in the
indices of the loops around them (triangular nests: ``for i < N, for j < i, for k < j``).

A loop runs ``T = max(0, ceil(span / |step|))`` times at each point of the loops around it
(:meth:`~loopmodel.ir.kernel.Loop.iterations`); the nest runs the sum of the inner loops' counts
over the points of the outer ones. The sizes are numbers here (``defines``), so the bounds are
affine in the outer indices with numeric coefficients. From the innermost loop out, the count
of the loops inside is a polynomial in the outer indices; it is summed over the loop's values
``start + step*m``, ``m = 0 .. T-1``, with Faulhaber's formulas (exact for every integer
``T >= 0``). Where ``T`` is a polynomial itself at every point the outer loops run -- integer
bounds, index coefficients of the span divisible by ``|step|``, and ``T >= 0`` shown by the
lowest value of the span over the outer loops (:func:`_lowest`) -- it is substituted and the
next loop out is summed the same way: a nest of such loops (rectangular or triangular, unit
steps) is counted in closed form, in time independent of the sizes. At the first loop where
``T`` is not shown to be such a polynomial, the loops around it are enumerated, evaluating
``T`` and the closed form of the loops inside at each of their points, up to
:data:`ENUMERATION_BUDGET` points. No sympy: importing it alone takes longer than the counts.
"""
from __future__ import annotations

import math
from fractions import Fraction
from functools import lru_cache
from typing import Mapping

from .poly import Poly

#: The most points of the outer loops :func:`nest_iterations` enumerates (a ValueError beyond).
ENUMERATION_BUDGET = 2 * 10 ** 6

_M = "#m"  # the summed loop's iteration number, 0 .. T-1 (no C identifier)
_T = "#T"  # its trip count where it is no polynomial in the outer indices


def nest_iterations(loops, defines: Mapping) -> int:
    """The exact number of innermost iterations of a loop nest.

    Args:
        loops: :class:`~loopmodel.ir.kernel.Loop` s, outermost first, each with ``start`` and
            ``stop`` (exclusive) affine in the indices of the loops outside it and in size
            constants, and a non-zero integer ``step`` (negative: counting down).
        defines: size constant -> int; entries named like a loop index are ignored.

    Returns:
        The number of times the innermost body runs (1 for no loops).

    Raises:
        KeyError: a bound needs a symbol that is neither a size in ``defines`` nor an index of an
            outer loop (the symbol is ``args[0]``).
        ValueError: the count needs more than :data:`ENUMERATION_BUDGET` points of outer loops
            enumerated (bounds that are not shown to give a non-negative polynomial trip count).
    """
    loops = tuple(loops)
    return _count(loops, _numeric_bounds(loops, defines))


def _numeric_bounds(loops: tuple, defines: Mapping) -> list:
    """``[(start, stop)]`` per loop with the sizes of ``defines`` substituted: Polys in the outer
    indices only. Raises KeyError naming a symbol that is neither (sorted first)."""
    indices = {lp.index for lp in loops}
    sizes = {s: v for s, v in defines.items() if s not in indices}
    bounds, outer = [], set()
    for lp in loops:
        pair = (lp.start.subs(sizes), lp.stop.subs(sizes))
        missing = sorted((pair[0].symbols | pair[1].symbols) - outer)
        if missing:
            raise KeyError(missing[0])
        bounds.append(pair)
        outer.add(lp.index)
    return bounds


def _count(loops: tuple, bounds: list) -> int:
    """:func:`nest_iterations` of ``loops`` with their :func:`_numeric_bounds`."""
    count = Poly.const(1)
    for k in reversed(range(len(loops))):
        summed = _sum_over(count, loops[k], bounds[k])
        trips = _polynomial_trips(loops, bounds, k)
        if trips is None:
            return _enumerate(loops, bounds, k, summed)
        count = _compose(summed, _T, trips)
    return _integer(count.constant_value())


def _sum_over(count: Poly, loop, bound: tuple) -> Poly:
    """``sum(count at index = start + step*m for m in 0 .. T-1)`` as a Poly in the outer indices
    and the trip count ``T`` (symbol :data:`_T`): exact for every integer ``T >= 0``."""
    shifted = _compose(count, loop.index, bound[0] + loop.step * Poly.symbol(_M))
    total = Poly()
    for power, coef in _powers(shifted, _M).items():
        total = total + coef * _power_sum(power)
    return total


def _polynomial_trips(loops: tuple, bounds: list, k: int) -> Poly | None:
    """The trip count of loop ``k`` as a Poly in the outer indices, where it is one at every
    point the outer loops run: every bound so far with integer coefficients (integer indices),
    the span's index coefficients divisible by ``|step|`` (``ceil`` then only acts on its
    constant term) and its lowest value at least ``1 - |step|`` (``T >= 0``); else None."""
    step = abs(loops[k].step)
    if not all(_integral(p) for pair in bounds[:k + 1] for p in pair):
        return None
    start, stop = bounds[k]
    span = stop - start if loops[k].step > 0 else start - stop
    rest = span.terms.get((), 0)
    if any(c % step for m, c in span.terms.items() if m):
        return None
    low = _lowest(span, loops[:k], bounds[:k])
    if low is None or low < 1 - step:
        return None
    return (span - rest).divide_exact(step) + (-(-rest // step))


def _lowest(expr: Poly, loops: tuple, bounds: list):
    """A lower bound of ``expr`` (affine in the indices of ``loops``) over the points the loops
    run, by eliminating the indices from the innermost out (its lowest value for a positive
    coefficient, its highest for a negative one); None where a term is not affine."""
    for lp, (start, stop) in zip(reversed(loops), reversed(bounds)):
        parts = _powers(expr, lp.index)
        coef = parts.get(1, Poly())
        if set(parts) - {0, 1} or not coef.is_constant():
            return None
        if coef.is_zero():
            continue
        lowest, highest = (start, stop - 1) if lp.step > 0 else (stop + 1, start)
        expr = _compose(expr, lp.index, lowest if coef.constant_value() > 0 else highest)
    return expr.constant_value()


def _enumerate(loops: tuple, bounds: list, k: int, summed: Poly) -> int:
    """The count of the nest, enumerating the points of the loops outside loop ``k`` and
    evaluating ``summed`` (:func:`_sum_over` of loop ``k``) at each with its trip count.

    Raises:
        ValueError: more than :data:`ENUMERATION_BUDGET` points to visit, the points of each of
            the loops around loop ``k`` together (counted first).
    """
    points = sum(_count(loops[:j], bounds[:j]) for j in range(1, k + 1))
    if points > ENUMERATION_BUDGET:
        raise ValueError(f"counting the iterations of loop '{loops[k].index}' needs {points} points of the loops "
                         f"around it enumerated, more than {ENUMERATION_BUDGET}")
    names = [lp.index for lp in loops[:k]] + [_T]
    value, denominator = _evaluator(summed, names)
    ranges = [(lp.step, _evaluator(start, names)[0], _evaluator(stop, names)[0])
              for lp, (start, stop) in zip(loops[:k + 1], bounds[:k + 1])]
    total = _walk(ranges, k, value, [])
    return _integer(Fraction(total, denominator))


def _walk(ranges: list, k: int, value, point: list):
    """The sum of ``value(point + [T])`` over the points of the loops ``ranges[len(point):k]``
    around ``point``, with ``T`` the trip count of loop ``k`` there."""
    step, first, end = ranges[len(point)]
    start = first(point)
    trips = max(0, -(-(end(point) - start if step > 0 else start - end(point)) // abs(step)))
    if len(point) == k:
        return value(point + [trips]) if trips else 0
    return sum(_walk(ranges, k, value, point + [start + step * m]) for m in range(trips))


def _evaluator(poly: Poly, names: list) -> tuple:
    """``(value, denominator)``: ``value(point)`` is ``denominator * poly`` at ``point`` (values
    of ``names`` in order), with integer coefficients: fast where ``poly.evaluate`` is not."""
    terms = poly.terms
    denominator = math.lcm(*(Fraction(c).denominator for c in terms.values())) if terms else 1
    compiled = [(int(c * denominator), [(names.index(s), e) for s, e in m]) for m, c in terms.items()]

    def value(point: list):
        total = 0
        for coef, mono in compiled:
            for pos, exp in mono:
                coef = coef * point[pos] ** exp
            total += coef
        return total

    return value, denominator


def _powers(poly: Poly, symbol: str) -> dict:
    """``{exponent: coefficient Poly}`` of ``poly`` as a polynomial in ``symbol``."""
    out: dict = {}
    for mono, coef in poly.terms.items():
        exp = dict(mono).get(symbol, 0)
        rest = tuple(p for p in mono if p[0] != symbol)
        out.setdefault(exp, {})[rest] = coef
    return {exp: Poly(terms) for exp, terms in out.items()}


def _compose(poly: Poly, symbol: str, value: Poly) -> Poly:
    """``poly`` with the Poly ``value`` for ``symbol``."""
    total, power = Poly(), Poly.const(1)
    parts = _powers(poly, symbol)
    for exp in range(max(parts, default=0) + 1):
        if exp in parts:
            total = total + parts[exp] * power
        power = power * value
    return total


@lru_cache(maxsize=None)
def _power_sum(power: int) -> Poly:
    """``sum(m**power for m in range(T))`` as a Poly in ``T`` (symbol :data:`_T`): Faulhaber's
    formula, ``sum(C(p+1, j) * B_j * T**(p+1-j) for j <= p) / (p+1)`` with ``B_1 = -1/2``."""
    t = Poly.symbol(_T)
    total = Poly()
    for j in range(power + 1):
        term = Poly.const(Fraction(math.comb(power + 1, j)) * _bernoulli(j) / (power + 1))
        for _ in range(power + 1 - j):
            term = term * t
        total = total + term
    return total


@lru_cache(maxsize=None)
def _bernoulli(n: int) -> Fraction:
    """The Bernoulli number ``B_n`` with ``B_1 = -1/2``: ``sum(C(n+1, j) * B_j for j <= n) = 0``."""
    if n == 0:
        return Fraction(1)
    return -sum(math.comb(n + 1, j) * _bernoulli(j) for j in range(n)) / Fraction(n + 1)


def _integral(poly: Poly) -> bool:
    """Whether every coefficient of ``poly`` is an integer."""
    return all(Fraction(c).denominator == 1 for c in poly.terms.values())


def _integer(value) -> int:
    """``value`` (a count: an integral int or Fraction) as an int."""
    value = Fraction(value)
    if value.denominator != 1:
        raise AssertionError(f"a non-integral iteration count {value}")
    return int(value)
