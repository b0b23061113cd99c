"""Reading an OpenMP program with some size constants left as symbols (the ones a size study
varies), so that the file is read once for all its sizes.

:class:`SweptResolver` is mixed into the resolvers of :mod:`loopmodel.fileio.omp_program`
(which define ``scope``, ``defines``, ``locals`` and ``fail``): where they compute the integers
of the program from the ``-D`` values, it keeps the swept constants as symbols and gives
:class:`~loopmodel.ir.poly.Poly` values instead, in the same places of the same
:class:`~loopmodel.ir.omp.OmpProgram` (a *form* of the program, :mod:`loopmodel.ir.omp_form`
evaluates it per size):

* a loop's ``lo`` and ``hi`` (before ``hi`` is raised to ``lo``), an access's coefficients
  and constant term, an array's dimensions;
* a repeat's count: its :class:`~loopmodel.ir.omp.LoopBound` (C; the count is its trips) or
  the count itself (YAML; below 0 is an error).

Whatever makes the integers other functions of the sizes than these (a bound that depends on
an outer loop, a descending loop, two loops over one variable in one nest, a coefficient that
is not an integer polynomial of the sizes) raises :class:`SizeDependent`: such a program is
read size by size. The code texts (for the measurement harness) are left empty, but a phase's
``loop_code`` names the swept constants its loop body uses (:func:`body_names`): what the
in-core analysis of the code at one size may depend on besides the accesses.
"""
from __future__ import annotations

from pycparser import c_ast

from ..ir.omp import AffineAccess, LoopBound, OmpArray
from ..ir.poly import Poly


class SizeDependent(Exception):
    """The program's integers are not the plain polynomials of the sizes that a form holds."""


class SweptResolver:
    """The resolver of :mod:`loopmodel.fileio.omp_program` with the constants named in
    :attr:`swept` kept as symbols (see the module text)."""

    swept: frozenset = frozenset()

    def resolve(self, poly: Poly, where, what: str) -> Poly:
        """``poly`` with the values of the other defines put in: a polynomial in the loop
        variables (degree 1 each, no products of two) and the swept constants, with integer
        coefficients.

        Raises:
            KernelError: an undefined name (as the per-size reading). SizeDependent: otherwise
                not such a polynomial.
        """
        loop_vars = {lb.var for lb in self.scope}
        for sym in sorted(poly.symbols - loop_vars - set(self.defines)):
            if sym in self.locals:
                raise self.fail(where, f"variable '{sym}' in {what}; only defines and loop variables are allowed")
            raise self.fail(where, f"{sym} has no value: give -D {sym}=...")
        value = poly.subs({k: v for k, v in self.defines.items() if k not in self.swept})
        for mono, c in value.terms.items():
            factors = [(s, e) for s, e in mono if s in loop_vars]
            if len(factors) > 1 or (factors and factors[0][1] != 1) or int(c) != c:
                raise SizeDependent(what)
        return value

    def loop(self, var, start: Poly, stop: Poly, step: int, where, notes: list) -> LoopBound:
        """A loop whose bounds depend on the sizes alone, ascending: ``LoopBound(var, start,
        stop, step)`` with polynomial bounds."""
        lo, hi = self.resolve(start, where, "loop bound"), self.resolve(stop, where, "loop bound")
        if (lo.symbols | hi.symbols) - self.swept or step < 0:
            raise SizeDependent(f"loop '{var}'")
        return LoopBound(var, lo, hi, step)

    def access(self, array: OmpArray, offset: Poly, kind: str, where, text: str, notes: list) -> AffineAccess:
        """An access with polynomial coefficients (one per loop variable that occurs, in loop
        order) and constant term."""
        value = self.resolve(offset, where, f"index of '{array.name}'")
        parts: dict = {}
        for mono, c in value.terms.items():
            var = next((s for s, _ in mono if s not in self.swept), None)
            rest = tuple((s, e) for s, e in mono if s != var)
            parts[var] = parts.get(var, Poly()) + Poly({rest: c})
        order = [lb.var for lb in self.scope]
        coeffs = tuple((v, parts[v]) for v in order if v in parts)
        return AffineAccess(array.name, kind, coeffs, parts.get(None, Poly()))

    def dimension(self, value: Poly, where, name: str) -> Poly:
        """An array dimension: the polynomial (its sign is checked per size)."""
        return value

    def merged(self, old: LoopBound, lb: LoopBound, notes: list) -> LoopBound:
        """Two loops over one variable in one nest: their union depends on the sizes."""
        raise SizeDependent(f"loops over '{lb.var}'")

    def count(self, lb: LoopBound) -> LoopBound:
        """A repeat loop's count: the loop (its trips per size)."""
        return lb

    def repeat_count(self, value: Poly, where) -> Poly:
        """A repeat count given as a number: the polynomial (its sign is checked per size)."""
        return value

    def code_text(self, node, head_only: bool = False) -> str:
        """For a loop nest, the swept constants its body uses (space-separated); else nothing."""
        if head_only or not isinstance(node, c_ast.For):
            return ""
        return " ".join(body_names(node, self.swept))


def body_names(node, names) -> list:
    """The ``names`` that occur in ``node`` outside the headers (initialisation, condition,
    step) of its ``for`` loops, sorted."""
    found: set = set()

    def walk(n):
        if isinstance(n, c_ast.ID) and n.name in names:
            found.add(n.name)
        for attr, child in n.children():
            if not (isinstance(n, c_ast.For) and attr in ("init", "cond", "next")):
                walk(child)

    walk(node)
    return sorted(found)
