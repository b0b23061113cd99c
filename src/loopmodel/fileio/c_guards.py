"""``if`` conditions on loop indices as restrictions of a nest's iteration space.

PolyBench's nussinov guards statements with ``if (j-1 >= 0)``, ``if (i+1 < n)`` and
``if (i < j-1) ... else ...``; the statements a condition guards are a nest of their own
(:mod:`loopmodel.fileio.c_nests`), and the condition becomes loop bounds, so that trip counts,
traffic and layer conditions count exactly the iterations that run:

* a condition is a conjunction (``&&``) of comparisons of expressions affine in the loop
  indices and sizes (``<``, ``<=``, ``>``, ``>=``, ``==``); its negation (the ``else`` branch)
  must be one again (``!(a < b)`` is ``a >= b``; ``!(x && y)`` is refused);
* each comparison ``e >= 0`` bounds the innermost loop whose index it names, with coefficient
  +1 or -1 (``j >= i + 1`` raises ``j``'s start to ``i + 1``), in a loop of step +1 or -1;
* the new bound replaces the loop's own where it is the tighter one for every outer iteration
  (:func:`loopmodel.ir.extent.index_range`); where the old one is, the condition always holds
  there and changes nothing; where neither is (the bounds cross), it is refused.

The compiled nest (for the in-core analyzers) is printed from the loops as written: its body
is the guarded statements', its trip counts the unguarded ones (a note says so).
"""
from __future__ import annotations

import dataclasses

from pycparser import c_ast

from ..ir.extent import index_range, sign, size_floors
from ..ir.kernel import coefficient
from ..ir.poly import Poly

_FLIP = {"<": ">=", "<=": ">", ">": "<=", ">=": "<", "==": "!=", "!=": "=="}
ACCEPTED = "accepted: comparisons of affine index expressions joined by &&, e.g. if (j > i), if (i + 1 < n && j >= 1)"


def apply_guards(builder, guards: tuple) -> list:
    """Restrict ``builder``'s loops (a :class:`~loopmodel.fileio.c_kernel.KernelBuilder` after the
    nest) by the ``(condition, holds)`` of ``guards``; returns the notes, one per condition.

    Raises:
        KernelError: a condition outside the accepted form, on sizes only, on an index with a
            coefficient other than +-1, in a loop whose step is not +-1, or whose bound crosses
            the loop's own (naming the condition's line).
    """
    notes = []
    for cond, holds in guards:
        for expr in _constraints(builder, cond, holds):
            what = _restrict(builder, expr, cond)
            if what:
                notes.append(f"line {_line(cond)}: the condition {'holds' if holds else 'fails'} for {what}")
    return notes


def _line(node) -> int:
    return node.coord.line - 1 if node.coord else 0


def _constraints(builder, cond, holds: bool) -> list:
    """``cond`` (or its negation) as affine expressions ``e`` meaning ``e >= 0``."""
    if isinstance(cond, c_ast.UnaryOp) and cond.op == "!":
        return _constraints(builder, cond.expr, not holds)
    if isinstance(cond, c_ast.BinaryOp) and cond.op in ("&&", "||"):
        if (cond.op == "&&") != holds:
            where = " (in an else branch)" if not holds else ""
            raise builder.err(cond, f"'{cond.op}'{where} makes a union of iteration spaces: not supported ({ACCEPTED})")
        return _constraints(builder, cond.left, holds) + _constraints(builder, cond.right, holds)
    if _names_data(builder, cond):
        raise builder.err(cond, "an 'if' on data (array elements or scalars) is not supported: only conditions on "
                                f"loop indices and sizes restrict the iteration space ({ACCEPTED})")
    if isinstance(cond, c_ast.BinaryOp) and cond.op in _FLIP:
        op = cond.op if holds else _FLIP[cond.op]
        indices = builder.loop_indices()
        a = builder.affine(cond.left, indices, "a condition")
        b = builder.affine(cond.right, indices, "a condition")
        forms = {"<": [b - a - 1], "<=": [b - a], ">": [a - b - 1], ">=": [a - b], "==": [a - b, b - a]}
        if op not in forms:
            raise builder.err(cond, f"'!=' on loop indices splits the iteration space in two: not supported ({ACCEPTED})")
        return forms[op]
    raise builder.err(cond, f"this 'if' condition is not supported ({ACCEPTED})")


def _names_data(builder, cond) -> bool:
    """Whether a condition reads an array element or a scalar (it depends on data)."""
    stack = [cond]
    while stack:
        n = stack.pop()
        if isinstance(n, c_ast.ArrayRef) or isinstance(n, c_ast.ID) and n.name in builder.scalars:
            return True
        stack.extend(child for _, child in n.children())
    return False


def _restrict(builder, expr: Poly, cond) -> str | None:
    """Bound the innermost loop ``expr >= 0`` names; what it restricts (None: nothing)."""
    loops = builder.loops
    k = next((k for k in range(len(loops) - 1, -1, -1) if not coefficient(expr, loops[k].index).is_zero()), None)
    if k is None:
        raise builder.err(cond, f"an 'if' on sizes only is not supported (it names no loop index; {ACCEPTED})")
    loop = loops[k]
    c = coefficient(expr, loop.index)
    if not c.is_constant() or abs(c.constant_value()) != 1 or abs(loop.step) != 1:
        raise builder.err(cond, f"the condition bounds loop '{loop.index}' only with a coefficient of +-1 in a loop "
                                f"of step +-1 ({ACCEPTED})")
    rest = expr - c * Poly.symbol(loop.index)
    lower = c.constant_value() > 0  # index >= -rest, else index <= rest
    value = -rest if lower else rest
    # with step +1 a lower bound is the start, an upper one the stop (exclusive); counting down, the reverse
    if (loop.step > 0) == lower:
        field, new, tighter = "start", value, (1 if loop.step > 0 else -1)
    else:
        field, new, tighter = "stop", (value + 1 if loop.step > 0 else value - 1), (-1 if loop.step > 0 else 1)
    old = getattr(loop, field)
    choice = _tighter(new - old, loops[:k], tighter)
    if choice is None:
        raise builder.err(cond, f"the condition bounds loop '{loop.index}' at {new}, tighter than its {field} {old} "
                                f"for some sizes or outer iterations and not for others: not supported ({ACCEPTED})")
    if not choice:
        return None
    builder.loops[k] = dataclasses.replace(loop, **{field: new})
    return f"{loop.index} {'from' if field == 'start' else 'up to (exclusive)'} {new}"


def _tighter(diff: Poly, outer: list, tighter: int) -> bool | None:
    """Whether the new bound is the tighter one for every outer iteration (``diff`` = new - old;
    ``tighter`` +1: a larger value is tighter); False: the old one always is; None: they cross."""
    found = index_range(diff, outer) if outer else (diff, diff)
    if found is None:
        return None
    floors = size_floors(outer)
    low, high = (sign(p, floors) for p in found)
    if low == high == 0:
        return False
    if tighter > 0:
        return True if low is not None and low >= 0 else False if high is not None and high <= 0 else None
    return True if high is not None and high <= 0 else False if low is not None and low >= 0 else None
