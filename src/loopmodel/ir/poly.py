"""Exact multivariate polynomials with rational coefficients over size symbols.

Array dimensions, loop bounds and access offsets of a kernel are polynomials in
the problem-size constants (``N``, ``M``, ...). They stay symbolic until ``-D``
values are given (kerncraft-tool-paper.txt §2.1). We keep them in this small,
immutable, hashable form instead of sympy expressions because the whole
analysis must run in well under the 0.45 s it takes merely to import sympy.
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping, Union

Number = Union[int, Fraction]
_BIG = 2 ** 40
Monomial = tuple  # sorted tuple of (symbol, exponent) pairs; () is the constant term


def _mono_mul(a: Monomial, b: Monomial) -> Monomial:
    d = dict(a)
    for s, e in b:
        d[s] = d.get(s, 0) + e
    return tuple(sorted(d.items()))


def _mono_degree(m: Monomial) -> int:
    return sum(e for _, e in m)


class Poly:
    """An immutable polynomial ``sum(coef * prod(sym**exp))``.

    Coefficients are ``int`` or :class:`fractions.Fraction` (exact). Supports
    ``+ - *`` with other polys and numbers, equality, hashing, evaluation with a
    mapping ``{symbol: number}`` (:meth:`evaluate`).
    """

    __slots__ = ("_terms", "_hash", "_text")

    def __init__(self, terms: Mapping[Monomial, Number] | None = None):
        clean = {}
        for m, c in (terms or {}).items():
            if c != 0:
                if isinstance(c, Fraction) and c.denominator == 1:
                    c = int(c)
                clean[m] = c
        self._terms = clean
        self._hash = None
        self._text = None

    def __reduce__(self):
        """Pickle the terms only: the cached hash is of this process's string hashing
        (PYTHONHASHSEED), wrong in the process that loads the pickle (a cached kernel)."""
        return Poly, (self._terms,)

    # construction -------------------------------------------------------
    @classmethod
    def const(cls, value: Number) -> "Poly":
        return cls({(): value})

    @classmethod
    def symbol(cls, name: str) -> "Poly":
        return cls({((name, 1),): 1})

    @classmethod
    def coerce(cls, value) -> "Poly":
        if isinstance(value, Poly):
            return value
        if isinstance(value, (int, Fraction)):
            return cls.const(value)
        raise TypeError(f"cannot make a polynomial from {value!r}")

    # inspection ---------------------------------------------------------
    @property
    def terms(self) -> dict:
        return dict(self._terms)

    @property
    def symbols(self) -> frozenset:
        return frozenset(s for m in self._terms for s, _ in m)

    def is_constant(self) -> bool:
        return len(self._terms) == 0 or (len(self._terms) == 1 and () in self._terms)

    def constant_value(self) -> Number:
        """The value of a constant polynomial; raises ValueError otherwise."""
        if not self.is_constant():
            raise ValueError(f"{self} is not constant")
        return self._terms.get((), 0)

    @property
    def degree(self) -> int:
        return max((_mono_degree(m) for m in self._terms), default=0)

    def is_zero(self) -> bool:
        return not self._terms

    # arithmetic ---------------------------------------------------------
    def __add__(self, other):
        other = Poly.coerce(other)
        t = dict(self._terms)
        for m, c in other._terms.items():
            t[m] = t.get(m, 0) + c
        return Poly(t)

    __radd__ = __add__

    def __neg__(self):
        return Poly({m: -c for m, c in self._terms.items()})

    def __sub__(self, other):
        other = Poly.coerce(other)
        t = dict(self._terms)
        for m, c in other._terms.items():
            t[m] = t.get(m, 0) - c
        return Poly(t)

    def __rsub__(self, other):
        return Poly.coerce(other) - self

    def __mul__(self, other):
        other = Poly.coerce(other)
        t: dict = {}
        for m1, c1 in self._terms.items():
            for m2, c2 in other._terms.items():
                m = _mono_mul(m1, m2)
                t[m] = t.get(m, 0) + c1 * c2
        return Poly(t)

    __rmul__ = __mul__

    def divide_exact(self, value: int) -> "Poly":
        return Poly({m: Fraction(c) / value for m, c in self._terms.items()})

    def subs(self, values: Mapping[str, Number]) -> "Poly":
        """Substitute numbers for some symbols; returns a Poly."""
        t: dict = {}
        for m, c in self._terms.items():
            rest = []
            for s, e in m:
                if s in values:
                    c = c * Fraction(values[s]) ** e
                else:
                    rest.append((s, e))
            key = tuple(rest)
            t[key] = t.get(key, 0) + c
        return Poly(t)

    def evaluate(self, values: Mapping[str, Number]) -> Number:
        """Exact value with all symbols substituted; KeyError names a missing symbol."""
        total: Number = 0
        for m, c in self._terms.items():
            v = c
            for s, e in m:
                v = v * values[s] ** e
            total += v
        return total

    def univariate_coefficients(self, symbol: str) -> list:
        """Coefficients ``[c0, c1, ...]`` of a polynomial in one symbol only."""
        if self.symbols - {symbol}:
            raise ValueError(f"{self} has symbols other than {symbol}")
        coeffs = [0] * (self.degree + 1)
        for m, c in self._terms.items():
            coeffs[dict(m).get(symbol, 0)] += c
        return coeffs

    # ordering -----------------------------------------------------------
    def asymptotic_key(self):
        """Sort key ordering polynomials as all symbols grow large together.

        The exact value with every symbol set to 2**40: orders ``2 < N-1 <
        N**2-N`` the way a user reads reuse distances when no sizes are given.
        """
        return self.evaluate({s: _BIG for s in self.symbols})

    # comparison/hash ----------------------------------------------------
    def __eq__(self, other):
        if isinstance(other, (int, Fraction)):
            other = Poly.const(other)
        if not isinstance(other, Poly):
            return NotImplemented
        return self._terms == other._terms

    def __hash__(self):
        if self._hash is None:
            self._hash = hash(frozenset(self._terms.items()))
        return self._hash

    # printing -----------------------------------------------------------
    def __str__(self) -> str:
        if self._text is None:
            self._text = self._render()
        return self._text

    def _render(self) -> str:
        if not self._terms:
            return "0"
        parts = []
        for m in sorted(self._terms, key=lambda m: (-_mono_degree(m), m)):
            c = self._terms[m]
            mono = "*".join(s if e == 1 else f"{s}**{e}" for s, e in m)
            if not mono:
                parts.append((c < 0, str(abs(c))))
            elif abs(c) == 1:
                parts.append((c < 0, mono))
            else:
                parts.append((c < 0, f"{abs(c)}*{mono}"))
        out = ("-" if parts[0][0] else "") + parts[0][1]
        for neg, txt in parts[1:]:
            out += (" - " if neg else " + ") + txt
        return out

    def __repr__(self) -> str:
        return f"Poly({self})"
