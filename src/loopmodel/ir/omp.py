"""OpenMP program model (benchmark-based-coherence-model.txt §III-A): a sequence of phases,
each a loop nest that is sequential, a static ``parallel for`` / ``for`` worksharing loop, or a
``master``/``single`` section, over arrays with affine indices; repeated blocks (an outer
sequential loop around phases, e.g. a solver's iteration) keep their structure.

All sizes are concrete (``-D`` values already substituted). Indices are flattened, row-major,
in elements: ``index = offset + sum(coeff x var)``. Pure data; no I/O. The per-thread chunks
of a phase for T threads are computed by :mod:`loopmodel.models.omp_program`.
"""
from __future__ import annotations

from dataclasses import dataclass, field


PHASE_KINDS = ("parallel", "sequential", "master", "single")


@dataclass(frozen=True)
class OmpArray:
    """An array: ``name``, C element type ``ctype``, ``element_size`` in bytes, ``dims`` in
    elements (outermost first)."""
    name: str
    ctype: str = "double"
    element_size: int = 8
    dims: tuple = ()

    @property
    def declarator(self) -> str:
        """The C declarator: ``x[1000]``, ``a[100][200]``."""
        return self.name + "".join(f"[{d}]" for d in self.dims)

    @property
    def length(self) -> int:
        """Elements in the whole array."""
        n = 1
        for d in self.dims:
            n *= d
        return n


@dataclass(frozen=True)
class LoopBound:
    """One loop: ``var`` from ``lo`` to ``hi`` (exclusive) by ``step`` (> 0). Bounds that depend on
    outer loop variables (triangular loops) are widened to their box by the front end, with a
    note."""
    var: str
    lo: int
    hi: int
    step: int = 1

    @property
    def trips(self) -> int:
        return max(0, -(-(self.hi - self.lo) // self.step))


@dataclass(frozen=True)
class AffineAccess:
    """A read or write of ``array`` at flat element index ``offset + sum(c x var)``;
    ``coeffs``: tuple of ``(var, c)``. ``kind``: ``"read"`` or ``"write"``."""
    array: str
    kind: str
    coeffs: tuple = ()
    offset: int = 0


@dataclass(frozen=True)
class Phase:
    """One loop nest of the program.

    Attributes:
        kind: one of :data:`PHASE_KINDS`. ``parallel``: the outermost loop is shared among the
            threads with ``schedule(static)``; the others run on thread 0 alone.
        loops: :class:`LoopBound` tuple, outermost first.
        accesses: :class:`AffineAccess` tuple in source order.
        line: the source line of the phase (its pragma, or its ``for``).
        label: short text for reports (e.g. ``"s += x[i] * y[i]"``).
        code: the phase's C text including its pragma line and the scalar statements that run
            with it (for the measurement harness; empty for YAML programs).
        loop_code: the loop nest alone, sizes substituted (for the in-core analysis; empty for
            YAML programs).
        notes: over-approximations made by the front end.
    """
    kind: str
    loops: tuple
    accesses: tuple
    line: int = 0
    label: str = ""
    code: str = ""
    notes: tuple = ()
    loop_code: str = ""

    @property
    def simd(self) -> bool:
        """The loop carries an OpenMP ``simd`` directive (its reductions may be reassociated)."""
        return any(line.strip().startswith("#pragma omp") and " simd" in line for line in self.code.splitlines())


@dataclass(frozen=True)
class Repeat:
    """An outer sequential loop of ``count`` iterations (variable ``var``) around ``body``
    (:class:`Phase` tuple), e.g. a solver iteration; ``code_head`` is its ``for (...)`` line."""
    count: int
    body: tuple
    var: str = "iter"
    line: int = 0
    code_head: str = ""


@dataclass(frozen=True)
class OmpProgram:
    """A whole program: ``arrays`` (name -> :class:`OmpArray`), ``scalars`` ((name, ctype)
    tuple), ``items`` (:class:`Phase` or :class:`Repeat`, in program order), ``notes``
    (front-end over-approximations), ``source`` (file name)."""
    arrays: dict
    items: tuple
    scalars: tuple = ()
    notes: tuple = ()
    source: str = ""
    defines: dict = field(default_factory=dict)

    def item_slices(self) -> tuple:
        """``((item, ((start, stop), ...)), ...)`` for every item in program order: the index range
        of the executed phases (as :meth:`phases` yields them) of a :class:`Phase` (one range)
        or of each iteration of a :class:`Repeat` (one range per iteration)."""
        out, pos = [], 0
        for item in self.items:
            n = len(item.body) if isinstance(item, Repeat) else 1
            count = item.count if isinstance(item, Repeat) else 1
            out.append((item, tuple((pos + k * n, pos + (k + 1) * n) for k in range(count))))
            pos += n * count
        return tuple(out)

    def phases(self):
        """``(phase, iteration)`` pairs in execution order; ``iteration`` is ``None`` outside
        repeats, else 0..count-1."""
        for item in self.items:
            if isinstance(item, Repeat):
                for k in range(item.count):
                    for ph in item.body:
                        yield ph, k
            else:
                yield item, None
