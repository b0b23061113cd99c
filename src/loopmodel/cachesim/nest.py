"""Loop nests for the simulator's driver (:meth:`loopmodel.cachesim.hierarchy.Hierarchy.run`): pure data.

A perfect loop nest of at most :data:`MAXD` loops with affine bounds, and affine
accesses into memory; the driver (``lm_run`` in ``_nest.c``) sweeps it again
and again until the hierarchy is in steady state, then counts a measurement
window (kerncraft-tool-paper.txt §2.4.1: warm up, then count a precise window
aligned to cache lines and array edges).
"""
from __future__ import annotations

from dataclasses import dataclass



MAXD = 8  # loops
MAXACC = 256  # accesses per iteration
PHASES = {"inner": 0, "before": 1, "after": 2}


@dataclass(frozen=True)
class NestLoop:
    """One loop: ``for (i = start + sum(start_coefs . outer); i < stop + sum(stop_coefs . outer); i += step)``.

    Attributes:
        start, stop: constant parts of the bounds (stop exclusive; ``>`` for a negative step).
        step: non-zero increment.
        start_coefs, stop_coefs: coefficients of the enclosing loops' indices
            (outermost first, one per enclosing loop; shorter tuples are zero-padded).
    """

    start: int
    stop: int
    step: int = 1
    start_coefs: tuple = ()
    stop_coefs: tuple = ()


@dataclass(frozen=True)
class NestAccess:
    """One access per iteration: address = ``bases[sweep % len(bases)] + sum(coefs . indices)`` bytes (mod 2**64).

    Attributes:
        bases: base address per sweep (bytes; several when arrays are swapped
            between sweeps, the nest's period in sweeps is then ``len(bases)``).
        coefs: bytes per unit of each loop index, outermost first (zero-padded).
        size: bytes accessed.
        kind: ``load``, ``store`` or ``nt`` (non-temporal store).
        phase: ``inner`` (every inner iteration), ``before`` (once before each
            row of the inner loop) or ``after`` (once after it): loop-invariant accesses.
    """

    bases: tuple
    coefs: tuple
    size: int
    kind: str = "load"
    phase: str = "inner"


@dataclass(frozen=True)
class LoopNest:
    """Loops (outermost first) and accesses (in the order they happen within an iteration).

    Attributes:
        loops: tuple of :class:`NestLoop` (1 to :data:`MAXD`).
        accesses: tuple of :class:`NestAccess` (at most :data:`MAXACC`, equal ``len(bases)``).
        work: index of the access whose cache lines are the unit of work; windows
            start where it is at a cache-line start.
        it_per_cl: inner iterations per cache line of the work access.
    """

    loops: tuple
    accesses: tuple
    work: int = 0
    it_per_cl: int = 1


@dataclass(frozen=True)
class RunOptions:
    """How :meth:`~loopmodel.cachesim.hierarchy.Hierarchy.run` warms up and measures.

    Warm-up (steady state of every level, victim and exclusive levels
    included): each level must be full, or have taken in one capacity of lines
    without its fill state growing (it cannot fill further; with ``fill_slack``,
    growing by at most capacity / ``fill_slack`` lines: it fills its last sets
    only by conflicts), and then have
    placed ``warm_caps_full`` capacities since that moment and
    ``warm_caps_sweep`` capacities within the current sweep (a capacity = sets x
    ways lines). A sweep (``len(bases)`` sweeps with swaps) that cannot warm
    the hierarchy up makes the next sweep(s) the measurement, whole.

    Attributes:
        target_it: inner iterations to measure.
        margin_it: inner iterations skipped at both ends of a row (long rows).
        max_sweeps: give up after this many sweeps.
        edges: do not measure rows in the first or last trip of an outer loop.
        start_mid: the first sweep starts at the middle trip of the outermost loop.
        max_it: hard limit on simulated inner iterations (0: none).
        cold: measure the first sweep whole, from a cold start (no warm-up).
        warm_caps_sweep, warm_caps_full: see above (capacities, >= 0).
        fill_slack: see above (0: a level that cannot fill does not grow at all over a capacity).
        max_target_it, settle_tol: a window of whole rows (multi-dimensional
            kernels) is settled when the lines loaded and stored per level per
            unit of work in its second half agree with its first half within
            ``settle_tol x max(1, rate)``; until then it is doubled (compared
            with everything measured before), up to ``max_target_it`` inner
            iterations (``<= target_it``: no check). Evictions out of a large cache
            come in bursts (a set's lines age together), so a window shorter
            than the bursts' period samples them at a biased phase.
        fast_forward: jump over whole periods of a loop once the simulated state repeats, shifted
            (``lm_run`` in ``_nest.c``): every loop whose iterations move all accesses by the same
            bytes repeats after the iterations that move them by whole cache lines; once the caches'
            contents at one period boundary are those at the boundary before, shifted by those
            lines, every later period repeats too (the set of a line is its number modulo the sets),
            and the driver adds whole periods' counts instead of simulating them. Where only the
            levels above the last repeat (the last level is filling, or its contents repeat over a
            longer period), and the last level does nothing to them (it evicts no line they may hold,
            a victim level gives each line back with the dirty bit it gave before), their operations
            on the last level repeat shifted too: the driver replays those of the period before on
            the last level alone and moves the levels above on (``lm_sink`` in ``_nest.c``). The
            results are those of simulating every access (False), which the tests compare it with.
    """

    target_it: int
    margin_it: int = 0
    max_sweeps: int = 4
    edges: bool = False
    start_mid: bool = False
    max_it: int = 0
    cold: bool = False
    warm_caps_sweep: int = 2
    warm_caps_full: int = 1
    fill_slack: int = 0
    max_target_it: int = 0
    settle_tol: float = 0.02
    fast_forward: bool = True


@dataclass(frozen=True)
class RunResult:
    """What a :meth:`~loopmodel.cachesim.hierarchy.Hierarchy.run` did (statistics: ``Hierarchy.stats``).

    Attributes:
        measured_it: inner iterations counted (0: no window could be measured).
        simulated_it: inner iterations simulated, warm-up included.
        warm_it: inner iterations before the hierarchy counted as warm.
        work_lines: distinct cache lines of the work access touched while counting.
        sweeps: sweeps started.
        warm: the hierarchy reached steady state (or the sweep fallback).
        stopped: ``max_it`` ended the run.
        dirty_start: dirty lines held per level when counting began (None: it never did); with
            :meth:`~loopmodel.cachesim.hierarchy.Hierarchy.dirty_lines` after the run, the change
            of each level's dirty fill over the window.
        jumped_it: of ``simulated_it``, inner iterations that fast-forwards jumped over (counted,
            not simulated access by access; see :attr:`RunOptions.fast_forward`).
    """

    measured_it: int
    simulated_it: int
    warm_it: int
    work_lines: int
    sweeps: int
    warm: bool
    stopped: bool = False
    dirty_start: tuple | None = None
    jumped_it: int = 0
