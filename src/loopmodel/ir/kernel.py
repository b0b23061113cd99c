"""Kernel IR: the pure-data description of a loop kernel (no I/O, no model).

Everything the models need from the C code (kerncraft-tool-paper.txt §2.1):
arrays with element size and symbolic dimensions, the perfectly nested loops,
every distinct array access as an affine index expression, and per-iteration
counts of loads, stores and arithmetic operations by type. Sizes are
:class:`~loopmodel.ir.poly.Poly` objects over the size constants (``N``,
``M``) and loop indices; they stay symbolic until ``-D`` values are given.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Mapping

from ..errors import ModelError
from .ctypes import is_integer
from .dependency import DependencyGraph
from .iteration_count import nest_iterations
from .poly import Poly

#: Operation types counted in the loop body. FLOPs are ADD+MUL+DIV+SQRT
#: (a fused FMA counts two); the other calls are their own operation types.
OPERATION_TYPES = ("ADD", "MUL", "DIV", "SQRT", "EXP", "LOG", "POW", "FABS", "FMIN", "FMAX")
FLOP_TYPES = ("ADD", "MUL", "DIV", "SQRT")


@dataclass(frozen=True)
class Array:
    """A declared array.

    Attributes:
        name: C identifier.
        ctype: ``"double"`` or ``"float"``.
        element_size: bytes per element.
        dims: dimension sizes, outermost first, as polynomials in size constants.
        distinct: whether the compiler may assume that no other array overlaps it: an array
            declared as one (``double a[N]``), or a kernel function's pointer or array parameter
            declared ``restrict`` (C11 §6.7.3.1); False for a parameter without ``restrict``,
            which the caller may pass overlapping another.
    """

    name: str
    ctype: str
    element_size: int
    dims: tuple
    distinct: bool = True

    @property
    def strides(self) -> tuple:
        """Row-major strides in elements, one per dimension (Poly)."""
        strides = []
        acc = Poly.const(1)
        for d in reversed(self.dims):
            strides.append(acc)
            acc = acc * d
        return tuple(reversed(strides))

    @property
    def size_elements(self) -> Poly:
        total = Poly.const(1)
        for d in self.dims:
            total = total * d
        return total


@dataclass(frozen=True)
class Scalar:
    """A declared scalar (lives in a register; causes no memory traffic)."""

    name: str
    ctype: str
    element_size: int


@dataclass(frozen=True)
class Loop:
    """One loop of the perfect nest: ``for (index = start; index < stop; index += step)``.

    ``stop`` is exclusive (``<=`` bounds are normalised by ``+1``); ``start`` and
    ``stop`` are affine in outer loop indices and size constants. ``step`` is a
    non-zero integer.
    """

    index: str
    start: Poly
    stop: Poly
    step: int
    line: int = 0

    @property
    def trip_count(self) -> Poly:
        """Number of iterations as a polynomial (exact for |step| = 1)."""
        span = self.stop - self.start
        if self.step < 0:
            span = self.start - self.stop
        return span if abs(self.step) == 1 else span.divide_exact(abs(self.step))

    def iterations(self, defines: Mapping) -> int:
        """Number of iterations for the given sizes: ceil(span / |step|), at least 0.

        ``for (i = 0; i < 10; i += 3)`` runs i = 0, 3, 6, 9: 4 iterations, where
        :attr:`trip_count` (span / step, for symbolic use) gives 10/3.

        Raises:
            KeyError: a bound needs a symbol missing from ``defines`` (e.g. an outer index).
        """
        span = self.stop - self.start if self.step > 0 else self.start - self.stop
        value = Fraction(span.evaluate(defines))
        return max(0, -(-value // abs(self.step)))


@dataclass(frozen=True)
class Access:
    """One distinct array reference.

    Attributes:
        array: array name.
        indices: per-dimension index expressions (Poly over loop indices and sizes).
        offset: flattened row-major offset in elements (Poly).
        line, col: position of the first occurrence in the kernel file.
    """

    array: str
    indices: tuple
    offset: Poly
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        return self.array + "".join(f"[{i}]" for i in self.indices)


@dataclass(frozen=True)
class Recurrence:
    """A loop-carried dependency of the innermost loop.

    Attributes:
        variable: the scalar or array carrying the dependency.
        distance: iterations between the write and the dependent read (>= 1).
        graph: :class:`~loopmodel.ir.dependency.DependencyGraph` of the operations on the
            paths from the dependent read to the write; the in-core model takes the path with
            the longest latency (:meth:`~loopmodel.ir.dependency.DependencyGraph.longest_chain`).
        reassociable: True for reductions (``s += ...``) a compiler may split
            into partial sums.
    """

    variable: str
    distance: int
    graph: DependencyGraph
    reassociable: bool


@dataclass(frozen=True)
class UnitOfWork:
    """The unit of work of a kernel (see :meth:`Kernel.unit_of_work`).

    Attributes:
        iterations: innermost iterations per unit (it/CL).
        array: the array one cache line of which is the unit (None: no array moves with the inner loop).
        access: the access of ``array`` that defines it (None with ``array``).
        basis: ``"written"``, ``"read"`` when no written array moves with the inner loop, or
            ``"none"`` when no array does (a CL's worth of the loop's scalar values).
        step_bytes: bytes the access advances per innermost iteration (0 for ``"none"``).
        cacheline_size: bytes per cache line.
    """

    iterations: int | float
    array: str | None
    access: Access | None
    basis: str
    step_bytes: int | float
    cacheline_size: int | float

    def describe(self) -> str:
        """``"1 CL of the written array 'a' = 8 it (64 B CL / 8 B address step per it)"`` for reports."""
        if self.array is None:
            return (f"no array moves with the inner loop (no data traffic): 1 unit = {self.iterations:g} it "
                    f"({self.cacheline_size:g} B CL / {self.cacheline_size / self.iterations:g} B per scalar value)")
        head = f"1 CL of the {self.basis} array '{self.array}' = {self.iterations:g} it"
        if self.step_bytes >= self.cacheline_size:
            return head + f" (address step {self.step_bytes:g} B per it >= {self.cacheline_size:g} B CL: a new CL every it)"
        return head + f" ({self.cacheline_size:g} B CL / {self.step_bytes:g} B address step per it)"


@dataclass(frozen=True)
class Kernel:
    """The whole kernel.

    Attributes:
        source: kernel file name (for messages).
        arrays, scalars: declarations by name.
        loops: the loop nest, outermost first.
        reads, writes: distinct array accesses (an access both read and written
            appears in both).
        operations: per innermost-loop iteration, count by operation type
            (:data:`OPERATION_TYPES`), before FMA fusion.
        fma_candidates: additions fed directly by a multiplication (fusable).
        recurrences: loop-carried dependencies of the innermost loop.
        constants: size constants (symbols) used by the kernel.
        pragmas: ``#pragma`` lines found before loops (e.g. ``omp parallel for``).
        swaps: ``(x, y)`` name pairs, in order, of the ``swap(x, y);`` calls after
            the loop nest (Kerncraft's kernel grammar): between two sweeps of
            the nest, arrays ``x`` and ``y`` (identical type and dimensions)
            trade places, as a time-stepping code swaps its two grid pointers.
            They change nothing inside one sweep (operation counts, accesses,
            reuse distances and layer-condition states, in-core model, a
            single sweep's traffic); they change which memory the next sweep
            touches (:meth:`storage_at_sweep`): for repeated sweeps the
            whole data set counts the memory of every swapped array, the
            cache simulation exchanges the arrays' addresses between sweeps,
            and a generated benchmark program swaps the pointers.
        index_values: loop indices used as values in the arithmetic (``x = (i + 0.5) * dx``),
            outermost first: each use converts the integer index to floating point.
        code: the loop nest as C, printed from the checked syntax tree with its pragmas
            printed from their typed model (:func:`loopmodel.fileio.c_print.nest_code`): the
            only kernel text a compiled program holds; '' for a kernel read from a description
            without C code.
        parameters: the integer parameters of the kernel function (the sizes a caller passes,
            ``int n``), used by the loops or not: ``-D`` may give one the loops do not use.
    """

    source: str
    arrays: Mapping
    scalars: Mapping
    loops: tuple
    reads: tuple
    writes: tuple
    operations: Mapping
    fma_candidates: int
    recurrences: tuple = ()
    constants: frozenset = field(default_factory=frozenset)
    pragmas: tuple = ()
    swaps: tuple = ()
    index_values: tuple = ()
    code: str = ""
    parameters: frozenset = field(default_factory=frozenset)

    @property
    def loop_indices(self) -> tuple:
        return tuple(lp.index for lp in self.loops)

    @property
    def inner_loop(self) -> Loop:
        return self.loops[-1]

    @property
    def flops_per_iteration(self) -> int:
        """FLOPs per innermost iteration: ADD + MUL + DIV + SQRT; 0 for a kernel without a
        floating-point array or scalar (:meth:`floating_point`: its arithmetic is integer)."""
        if not self.floating_point():
            return 0
        return sum(self.operations.get(op, 0) for op in FLOP_TYPES)

    def floating_point(self) -> bool:
        """Whether an array or scalar of the kernel has a floating-point type (else all its
        arithmetic is on integers; the operation counts do not tell the two apart)."""
        return any(not is_integer(d.ctype) for d in list(self.arrays.values()) + list(self.scalars.values()))

    def integer_valued(self, name: str) -> bool:
        """Whether the array or scalar ``name`` has an integer type (False where not declared)."""
        decl = self.arrays.get(name) or self.scalars.get(name)
        return decl is not None and is_integer(decl.ctype)

    @property
    def largest_element_size(self) -> int:
        """Bytes of the widest array element (8 without arrays): it sets the SIMD lanes of
        mixed float/double code (cross-architecture-machine-models.txt eq. 6)."""
        return max((a.element_size for a in self.arrays.values()), default=8)

    @property
    def written_arrays(self) -> tuple:
        return tuple(sorted({a.array for a in self.writes}))

    @property
    def write_only_arrays(self) -> tuple:
        """Arrays the kernel writes and never reads, sorted (their stores can be non-temporal)."""
        read = {a.array for a in self.reads}
        return tuple(name for name in self.written_arrays if name not in read)

    def address_step_bytes(self, access: Access, defines: Mapping | None = None) -> int | float:
        """Bytes by which ``access`` moves per innermost iteration (``|coefficient x step| x element size``).

        Args:
            access: one of the kernel's accesses.
            defines: size constant -> value, for a stride that depends on sizes
                (``a[i][j]`` traversed along ``i``).

        Returns:
            bytes per iteration (0 for an access invariant in the inner loop).

        Raises:
            ModelError: the stride depends on a size constant that ``defines`` lacks.
        """
        c = coefficient(access.offset, self.inner_loop.index)
        if defines:
            c = c.subs(defines)
        if not c.is_constant():
            raise ModelError(f"the stride of '{access}' in the inner loop depends on {', '.join(sorted(c.symbols))}; "
                             "give its value with -D", file=self.source, line=access.line or None)
        return to_number(abs(Fraction(c.constant_value()) * self.inner_loop.step) * self.arrays[access.array].element_size)

    def unit_of_work(self, cacheline_size: float, defines: Mapping | None = None) -> "UnitOfWork":
        """The unit of work all per-CL figures refer to: one cache line of the written array.

        The field's convention (kerncraft-tool-paper.txt §1.2.1 "a basic unit of
        work that spans the length of a cache line", §2.4; Kerncraft counts it per
        cache line of the written array): the innermost iterations in which the
        written array's address advances by one cache line,

            it/CL = CL / (element size x |address step per iteration in elements|),

        the address step being the index coefficient of the inner loop index times
        the loop step (``i += 2`` over ``a[i]``: 2 elements; ``a[2*i]``: 2). If
        several arrays are written, the one that crosses a cache line in the fewest
        iterations (largest step in bytes) defines the unit; if none moves with the
        inner loop (a reduction, or a result kept in a register such as ``y[i]`` in
        a matrix-vector product), the read arrays that move do. A step of a cache
        line or more writes a new cache line every iteration: one iteration per unit.
        A loop in which no array moves (numerical integration, arrays only
        invariant in the inner loop) has no cache line of work and no data
        traffic; its unit is one cache line's worth of its floating-point
        values (``CL / largest scalar element size``: 8 it for doubles on 64 B
        lines), so that its cy/CL compare with a SIMD vector of those values.

        Args:
            cacheline_size: bytes per cache line.
            defines: size constant -> value (needed only for size-dependent strides).

        Returns:
            :class:`UnitOfWork` (iterations per unit as int when integral, else float).

        Raises:
            ModelError: an unresolved size-dependent stride.
        """
        moving = [a for a in self.writes if not self.is_inner_invariant(a)]
        basis = "written"
        if not moving:
            moving = [a for a in self.reads if not self.is_inner_invariant(a)]
            basis = "read"
        if not moving:
            size = max((s.element_size for s in self.scalars.values() if s.ctype in ("float", "double")), default=8)
            return UnitOfWork(to_number(Fraction(cacheline_size) / size), None, None, "none", 0,
                              to_number(Fraction(cacheline_size)))
        steps = [(self.address_step_bytes(a, defines), a) for a in moving]
        step, access = max(steps, key=lambda sa: sa[0])  # max() keeps the first of equal steps
        cl = Fraction(cacheline_size)
        iterations = cl / min(Fraction(step), cl)
        return UnitOfWork(to_number(iterations), access.array, access, basis, step, to_number(cl))

    def iterations_per_cacheline(self, cacheline_size: float, defines: Mapping | None = None) -> int | float:
        """Innermost iterations per unit of work (one CL of the written array); see :meth:`unit_of_work`."""
        return self.unit_of_work(cacheline_size, defines).iterations

    def is_inner_invariant(self, access: Access) -> bool:
        """True if the access does not move with the inner loop (kept in a register): the
        :func:`coefficient` of the inner index in its offset is zero, i.e. no term of the offset
        has the index to the first power (the terms' coefficients are non-zero, and removing the
        index from two such terms leaves two different monomials)."""
        one = (self.inner_loop.index, 1)
        return not any(one in m for m in access.offset.terms)

    def streamed_reads(self) -> tuple:
        """Reads that move with the inner loop (loop-invariant ones are hoisted to registers)."""
        return tuple(a for a in self.reads if not self.is_inner_invariant(a))

    def streamed_writes(self) -> tuple:
        return tuple(a for a in self.writes if not self.is_inner_invariant(a))

    def work_accesses(self) -> tuple:
        """The accesses that move with the inner loop, those to written arrays first (the first
        one is the work access that pointer increments are measured against)."""
        written = set(self.written_arrays)
        return tuple(sorted(self.streamed_writes() + self.streamed_reads(), key=lambda a: a.array not in written))

    def loads_per_iteration(self) -> int:
        """Load instructions per iteration (scalar), loop-invariant accesses excluded."""
        return len(self.streamed_reads())

    def stores_per_iteration(self) -> int:
        return len(self.streamed_writes())

    def bytes_loaded_per_iteration(self) -> int:
        return sum(self.arrays[a.array].element_size for a in self.streamed_reads())

    def bytes_stored_per_iteration(self) -> int:
        return sum(self.arrays[a.array].element_size for a in self.streamed_writes())

    def total_iterations(self, defines: Mapping) -> int:
        """Innermost iterations of the whole nest at ``defines``, exact for triangular nests too
        (bounds affine in outer indices): :func:`~loopmodel.ir.iteration_count.nest_iterations`,
        the product of the loops' :meth:`Loop.iterations` for a rectangular nest.

        Raises:
            KeyError: a bound needs a size missing from ``defines``.
            ValueError: bounds the closed form does not cover, needing more outer points
                enumerated than :data:`~loopmodel.ir.iteration_count.ENUMERATION_BUDGET`.
        """
        return nest_iterations(self.loops, defines)

    def free_constants(self, defines: Mapping) -> list:
        return sorted(self.constants - set(defines))

    def storage_at_sweep(self, sweep: int) -> dict:
        """Which declared array's memory each array name refers to in sweep ``sweep`` (0-based).

        Sweep 0 uses every array's own memory; after each sweep the
        :attr:`swaps` are applied in order, each exchanging the memory of its
        two names (a pointer swap). Without swaps every name keeps its memory.

        Returns:
            ``{array name: name of the array whose memory it uses}``.
        """
        where = {name: name for name in self.arrays}
        for _ in range(sweep % self.swap_period()):
            for x, y in self.swaps:
                where[x], where[y] = where[y], where[x]
        return where

    def swap_period(self) -> int:
        """Sweeps after which the :attr:`swaps` restore every array to its own memory (1 without swaps).

        The swaps of one sweep compose to a permutation of the arrays'
        memory; the period is the least common multiple of its cycle lengths.
        """
        where = {name: name for name in self.arrays}
        for x, y in self.swaps:
            where[x], where[y] = where[y], where[x]
        period, seen = 1, set()
        for start in where:
            length, cur = 0, start
            while cur not in seen:
                seen.add(cur)
                cur = where[cur]
                length += 1
            if length:
                period = period * length // math.gcd(period, length)
        return period

    def swap_groups(self) -> tuple:
        """Sets of array names whose memory the :attr:`swaps` rotate among (groups of two or more).

        Returns:
            tuple of sorted tuples of array names (each name in at most one group).
        """
        parent = {name: name for name in self.arrays}

        def root(n):
            while parent[n] != n:
                n = parent[n]
            return n

        for x, y in self.swaps:
            parent[root(x)] = root(y)
        groups: dict = {}
        for name in self.arrays:
            groups.setdefault(root(name), []).append(name)
        return tuple(tuple(sorted(g)) for g in sorted(groups.values()) if len(g) > 1)


def coefficient(expr: Poly, var: str) -> Poly:
    """Coefficient of the (affine) loop index ``var`` in ``expr``."""
    out = {}
    one = (var, 1)
    for m, c in expr.terms.items():
        if one in m:  # a monomial names a symbol once, in sorted (symbol, exponent) pairs
            key = tuple(p for p in m if p != one)
            out[key] = out.get(key, 0) + c
    return Poly(out)


def strip_indices(expr: Poly, indices) -> Poly:
    """The part of ``expr`` that depends on no loop index."""
    idx = set(indices)
    return Poly({m: c for m, c in expr.terms.items() if not any(s in idx for s, _ in m)})


def to_number(value) -> int | float:
    """An exact Fraction/int as int when integral, else float."""
    if isinstance(value, Fraction):
        return int(value) if value.denominator == 1 else float(value)
    return value
