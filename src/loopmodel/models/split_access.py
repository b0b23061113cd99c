"""Cache-line-split vector accesses of a kernel, from its access offsets and loop bounds.

A vector access of W bytes at address x crosses a cache line of L bytes where
``x mod L + W > L``; the core then reads (or writes) both lines, which costs load (store)
port time beyond an aligned access: cross-architecture-machine-models.txt §3.4.1 counts the
in-core part in load-port cycles, and the extra cycles per split access are measured by
``machine probe`` (``in_core.load.split_extra`` / ``in_core.store.split_extra``, in units of an
aligned access's time).

Where the vectors of an access start follows from the code as compiled: compilers for cores with
cheap unaligned accesses do not peel the loop to align any access, so the first vector of a row
starts at the inner loop's lower bound. gcc 12.2 -O3 for skylake-avx512, core-avx2, corei7-avx and
znver1 vectorizes ``for (i = 1; i < n; ++i) a[i] = b[i];`` (global arrays and restrict pointers)
with unaligned ``vmovupd`` from i = 1 and no alignment prologue: both streams are 8 B off the line,
and so is ``a[i] = b[i + 1]`` from i = 0 for the load alone. This is the one rule of split accesses:
the analytic in-core model charges them, the compiled one adds them, and the ``split-loads``
confidence tag reads the figure the in-core result carries (:attr:`InCoreResult.split
<loopmodel.models.incore.InCoreResult>`). With
each array starting on a cache-line boundary (what allocators give large arrays and what
``loopmodel bench`` does), the misalignment of an access's vectors in a row is
``(flattened offset at the row's first iteration) x element size mod L``, and successive
vectors advance by W. Rows of a length that is not a multiple of L shift that misalignment from
row to row, so it is averaged over :data:`ROWS` consecutive rows of the next outer loop.
"""
from __future__ import annotations

from dataclasses import dataclass

import math

from ..ir.kernel import coefficient

#: rows of the next outer loop the misalignment is averaged over (every residue of 8 B
#: elements modulo a 64 B line appears within 8 rows)
ROWS = 8


@dataclass(frozen=True)
class SplitAccesses:
    """Split vector accesses per inner-loop iteration.

    Attributes:
        loads, stores: cache-line-split vector loads (stores) per iteration (a fraction: one
            vector serves ``lanes`` iterations, and only some of an access's vectors split).
        streams: ``(access text, share of its vectors that split)`` of the accesses with splits.
        width: the vector width in B the figures are for.
    """

    loads: float
    stores: float
    streams: tuple
    width: int

    def describe(self) -> str:
        """``"2 of 4 load streams ..."``: which accesses split and how often (for notes)."""
        parts = ", ".join(f"{name} {share:.0%}" for name, share in self.streams)
        return (f"{self.width} B vectors that cross a cache line (no peeling assumed, arrays line-aligned): {parts} "
                f"of the vectors; {self.loads:.3g} split loads and {self.stores:.3g} split stores per iteration")


def split_share(misalignment: int, width: int, line: int) -> float:
    """Share of the vectors of a stream that cross a line: the stream's vectors start at
    ``misalignment`` B into a line and advance by ``width`` B (``width`` <= ``line``, a power of
    two); a vector at ``x`` splits where ``x mod line + width > line``."""
    if width <= 0 or width > line:
        return 0.0
    steps = max(1, line // width)
    return sum(1 for k in range(steps) if (misalignment + k * width) % line + width > line) / steps


def _row_starts(kernel, defines: dict) -> list:
    """Index values at the first inner iteration of :data:`ROWS` consecutive rows (the next outer
    loop's first iterations; every other loop at its lower bound); [] where a bound is unknown."""
    base = dict(defines)
    try:
        for loop in kernel.loops[:-1]:
            base[loop.index] = int(loop.start.evaluate(base))
        inner = kernel.loops[-1]
        rows = []
        outer = kernel.loops[-2] if len(kernel.loops) > 1 else None
        for r in range(ROWS if outer is not None else 1):
            vals = dict(base)
            if outer is not None:
                vals[outer.index] = base[outer.index] + r * outer.step
            vals[inner.index] = int(inner.start.evaluate(vals))
            rows.append(vals)
        return rows
    except (KeyError, TypeError, ValueError):
        return []


def alignment_modulus(kernel, line: int) -> int | None:
    """The modulus m such that :func:`split_accesses` at any sizes depends on each size only modulo
    m: the cache line over the smallest power of two dividing every element size (``line / 8``
    for doubles), where every loop start and access offset is a polynomial with integer
    coefficients (an integer polynomial of the sizes modulo L depends only on the sizes modulo L,
    and a misalignment is such a polynomial times the element size, modulo the line); None where
    one is not, or the line is not a power of two."""
    if line < 1 or line & (line - 1):
        return None
    polys = [lp.start for lp in kernel.loops] + [a.offset for a in kernel.streamed_reads() + kernel.streamed_writes()]
    if any(getattr(c, "denominator", 1) != 1 for p in polys for c in p.terms.values()):
        return None
    grain = min((kernel.arrays[a].element_size & -kernel.arrays[a].element_size for a in kernel.arrays), default=line)
    return max(1, line // math.gcd(line, grain))


def simd_split_accesses(kernel, defines: dict, lanes: int, line: int) -> SplitAccesses | None:
    """:func:`split_accesses` for code with ``lanes`` SIMD lanes of the kernel's widest streamed
    element (vectors of ``lanes`` x that size, B); None where the bounds cannot be evaluated."""
    elem = max((kernel.arrays[a.array].element_size for a in kernel.streamed_reads() + kernel.streamed_writes()),
               default=8)
    return split_accesses(kernel, defines, lanes * elem, line)


def split_accesses(kernel, defines: dict, width: int, line: int) -> SplitAccesses | None:
    """Split vector loads and stores per iteration of ``kernel`` vectorized with ``width``-B vectors.

    Only unit-stride accesses count (a strided access is gathered or loaded element-wise). An
    access with a share s of split vectors contributes ``s / lanes`` split accesses per iteration,
    lanes = width / element size.

    Args:
        kernel: the kernel IR.
        defines: size constants (row lengths, loop bounds).
        width: vector bytes (a power of two; <= ``line``).
        line: cache-line bytes.

    Returns:
        :class:`SplitAccesses`, or None where the loop bounds or offsets cannot be evaluated.
    """
    rows = _row_starts(kernel, defines)
    if not rows:
        return None
    idx = kernel.inner_loop.index
    loads = stores = 0.0
    streams = []
    for kind, accesses in (("load", kernel.streamed_reads()), ("store", kernel.streamed_writes())):
        for a in dict.fromkeys(accesses):
            elem = kernel.arrays[a.array].element_size
            step = coefficient(a.offset, idx)
            if not step.is_constant() or abs(step.constant_value() * kernel.inner_loop.step) != 1 or width < elem:
                continue
            try:
                share = sum(split_share(int(a.offset.evaluate(v)) * elem % line, width, line) for v in rows) / len(rows)
            except (KeyError, TypeError, ValueError):
                return None
            if share:
                streams.append((f"{kind} {a}", share))
                if kind == "load":
                    loads += share * elem / width
                else:
                    stores += share * elem / width
    return SplitAccesses(loads, stores, tuple(streams), width)
