"""Whether a kernel can run at given sizes: every array physical, the iteration space not empty.

The models assume a loop nest that runs at least once over arrays that exist: at sizes where
an array has no element, the arrays need more bytes than :data:`MAX_DATA_BYTES`, or a loop
runs no iteration, they would print confident figures for a kernel that does nothing (or
cannot be placed in memory), so the point is refused instead (:func:`check_point`).
"""
from __future__ import annotations

from fractions import Fraction
from typing import Mapping

from ..errors import EmptyPointError, ModelError

#: The most bytes all arrays of a kernel may take together at one point: 2**62 (4 EiB), more
#: than any 64-bit machine addresses (x86-64 and AArch64 address at most 2**57 bytes); it
#: keeps byte counts, reuse distances and simulated addresses within 64-bit integers and floats.
MAX_DATA_BYTES = 2 ** 62


def check_point(kernel, defines: Mapping) -> None:
    """Refuse sizes at which ``kernel`` cannot run.

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel`.
        defines: size constant -> int (every constant of the kernel).

    Raises:
        EmptyPointError: an array dimension below 1, or a loop that runs no iteration at these
            sizes (an empty iteration space; ``file:line`` of the loop where known).
        ModelError: arrays of more than :data:`MAX_DATA_BYTES` bytes in all, or a loop bound
            beyond 2**62 in magnitude. One line each, naming the sizes.
    """
    sizes = ", ".join(f"{n}={defines[n]}" for n in sorted(kernel.constants) if n in defines) or "these sizes"
    total = 0
    for name, arr in kernel.arrays.items():
        for dim in arr.dims:
            if dim.evaluate(defines) < 1:
                raise EmptyPointError(f"array '{name}' has a dimension {dim} = {dim.evaluate(defines)} at {sizes}; "
                                 "dimensions must be at least 1", file=kernel.source)
        total += arr.size_elements.evaluate(defines) * arr.element_size
    if total > MAX_DATA_BYTES:
        raise ModelError(f"the arrays take {total} bytes at {sizes}, more than 2**62 (4 EiB), which no 64-bit "
                         "machine addresses", file=kernel.source)
    _check_iterations(kernel, defines, sizes)


def _check_iterations(kernel, defines: Mapping, sizes: str) -> None:
    """Refuse a loop that runs no iteration for any values of the loops around it.

    The values each loop index takes are bounded by intervals (bounds are affine in the
    outer indices): a loop whose largest ``stop`` is not beyond its smallest ``start`` in the
    direction of its step runs no iteration. A bound that is not affine is not judged.
    """
    ranges: dict = {}
    for loop in kernel.loops:
        start, stop = _interval(loop.start, defines, ranges), _interval(loop.stop, defines, ranges)
        if start is None or stop is None:
            return
        if max(abs(v) for v in start + stop) > MAX_DATA_BYTES:
            raise ModelError(f"loop '{loop.index}' has a bound beyond 2**62 at {sizes} ({loop.index} from "
                             f"{loop.start} to {loop.stop})", file=kernel.source, line=loop.line or None)
        if loop.step > 0:
            first, last = start[0], stop[1] - 1  # stop is exclusive
        else:
            first, last = stop[0] + 1, start[1]
        if last < first:
            way = "up" if loop.step > 0 else "down"
            raise EmptyPointError(f"loop '{loop.index}' runs no iteration at {sizes} ({loop.index} from {loop.start} {way} "
                             f"to {loop.stop}, exclusive): the iteration space is empty", file=kernel.source,
                             line=loop.line or None)
        ranges[loop.index] = (first, last)


def _interval(poly, defines: Mapping, ranges: dict):
    """``(min, max)`` of ``poly`` over the outer indices' ``ranges`` at ``defines``, or None
    where a term is not affine in the indices."""
    lo = hi = Fraction(0)
    for mono, coef in poly.subs(defines).terms.items():
        if not mono:
            lo, hi = lo + coef, hi + coef
            continue
        if len(mono) != 1 or mono[0][1] != 1 or mono[0][0] not in ranges:
            return None
        a, b = (coef * v for v in ranges[mono[0][0]])
        lo, hi = lo + min(a, b), hi + max(a, b)
    return lo, hi


def skipped_note(count: int, total: int, first: str) -> str:
    """The one note of a sweep that skipped ``count`` of its ``total`` points at which the kernel does
    nothing (:class:`~loopmodel.errors.EmptyPointError`); ``first``: the message of the first."""
    return (f"{count} of {total} points skipped: the kernel does nothing there (the first: {first})")
