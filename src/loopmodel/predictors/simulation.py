"""Traffic predictor by cache simulation (kerncraft-tool-paper.txt §2.4.1).

The kernel's loop nest is run through the compiled simulator
(:mod:`loopmodel.cachesim`) with the machine's cache organisation (sets,
ways, line size, replacement policy, write-allocate, write-back or
write-through, inclusive / non-inclusive / victim levels; shared levels split
among ``cores`` as for layer conditions). Arrays are placed in declaration
order at ``alignment`` (default: page, 4096 B), array i shifted by i x ``padding`` bytes, so
associativity conflicts between arrays and rows appear as on real machines.

Sweeps (``sweeps``): ``"repeated"`` (the default) measures the steady state
of a kernel run again and again, as described below; ``"single"`` a kernel
run once: a cold hierarchy, one whole sweep counted from its first access,
then every cache flushed (the dirty lines left at the end are written back
eventually, so the written arrays are evicted once, as layer conditions count
them). A single sweep over a data set of at least four times the last
level's capacity is measured like a repeated one (nothing of a sweep
survives to the next; a window inside the sweep is its steady state).
Kernels with ``swap(x, y)`` calls (:attr:`~loopmodel.ir.kernel.Kernel.swaps`)
exchange the arrays' addresses between repeated sweeps.

Steady state as the paper describes (§2.4.1: warm up, then count a precise
window aligned to cache lines and array edges), with these choices:

* Warm-up is bounded by what the caches can hold, not by the arrays: it ends
  when every level is in steady state (:class:`~loopmodel.cachesim.nest.RunOptions`):
  full, or unable to fill further (a capacity of lines placed without its fill
  growing), then one more capacity placed since (so that the lines it evicts,
  clean and dirty, were touched in steady state), and two capacities placed
  within the current sweep. Counting placements alone is not enough for a
  victim (exclusive) level: lines loaded back from it leave it and return on
  their eviction from the level above, so it takes in many more lines than it
  fills with (cross-architecture-machine-models.txt §3.3). Large data sets
  (over four capacities of the last level) start the first sweep at the middle
  trip of the outermost loop, away from the array edges.
  If a whole sweep supplies fewer lines (a small data set), its steady state
  is periodic with the sweep (the kernel is assumed to run repeatedly, as in a
  benchmark): the next sweep is measured whole. With swaps, the period is the
  number of sweeps after which every array is back in its own memory
  (:meth:`~loopmodel.ir.kernel.Kernel.swap_period`): that many sweeps warm up
  and that many are measured. None of this is shortened for speed: where the
  caches' contents repeat from one period of an outer loop to the next (rows
  or planes of arrays of one shape, moved by whole cache lines), the simulator
  adds whole periods' counts instead of simulating them; where only the levels
  above the last repeat (the warm-up filling the last level), it replays their
  operations on the last level alone. Both give exactly the result of simulating
  every access (:class:`~loopmodel.cachesim.nest.RunOptions` ``fast_forward``).
* Long rows (1D kernels): one window of whole cache lines of the written array
  inside a row, at least two lines away from the row ends.
* Short rows (multi-dimensional kernels): whole rows, from the first
  line-aligned iteration of a row to the same point of a later row. Windows
  inside rows would sample the evictions (which belong to lines touched one
  cache capacity earlier) at a biased phase of the row period.
* The window's length: the write-backs counted in a window are the dirty lines
  placed in it plus the change of the dirty fill over it, and that fill varies
  with the period in which the arrays run through the sets of a large cache
  (thousands of units of work). The window is therefore whole periods of the
  set mapping (exact), or whole sweeps of a kernel run repeatedly (exact; where
  the wrap-around between sweeps is a small part of one), or several turnovers
  of the caches' capacity (see ``_windows``).
* The lines a level writes back in a window after the warm-up are corrected
  by the change of the dirty fill of that level and the levels above it over
  the window (the dirty lines a window leaves behind are written back after
  it, those it found were made dirty before it), as a single sweep's dirty
  lines are flushed at its end: the count is that of the lines made dirty in
  the window, whatever the phase at which the window cuts the fill of the
  caches (whole periods of every level change it by nothing). Not so for whole
  sweeps measured after a sweep that could not warm the caches up (a small
  data set): their dirty fill may still grow, and they are exact as counted.
* A window of whole rows that is not whole periods is settled when the traffic
  per unit of work of its second half agrees with its first half (2 %);
  otherwise it is doubled, up to 8 times the requested length or the end of
  the sweep: evictions out of a large cache come in bursts, which a short
  window samples at a biased phase.
* Per unit of work (one cache line of the written array,
  :meth:`~loopmodel.ir.kernel.Kernel.unit_of_work`) = per
  ``iterations_per_unit`` iterations counted in the window
  (kerncraft-tool-paper.txt §2.4.1: the statistic of "a precise number of loop
  iterations"), not per line of that array touched: where rows are a few
  lines long, the lines at their ends are shared with the next row or only
  partly used (a 4D stencil of 20 doubles per row touches 46 lines of the
  written array per 40.5 lines' worth of iterations), and the traffic those
  partial lines cause belongs to the work done, as a measurement counts it.

Placement: where the sets of some level split between those that can hold
their share of the whole data set (at most ``ways`` of its lines) and those
that cannot (:func:`_conflict_prone`, from the array layout, at the placement
asked for or the other one of :func:`_other_placement`), the reuse of the data
set depends on where the arrays lie; the kernel is then simulated at both
placements and a note names the levels whose traffic differs, with both
figures. Conflicts between the rows of one layer are not checked so (their
cost would be a second simulation of every kernel).

Results come in the same
:class:`~loopmodel.predictors.traffic.TrafficPrediction` structure as layer
conditions.
"""
from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace

from ..cachesim.hierarchy import Hierarchy, LevelSpec
from ..errors import ModelError
from ..ir.iteration_count import nest_iterations
from ..ir.kernel import Loop, coefficient, strip_indices
from ..ir.poly import Poly
from .traffic import LevelTraffic, TrafficPrediction, nt_stores_note

from ..cachesim.nest import LoopNest, MAXD, NestAccess, NestLoop, RunOptions

BASE_ADDRESS = 1 << 40  # a page-aligned 64-bit heap-like address
#: the most lines one simulated level may hold: the simulator keeps 9 bytes per line (tag and
#: dirty flag), so 2**26 lines (4 GiB of 64 B lines, beyond any single core's share of a cache)
#: take 576 MiB
MAX_SIM_LINES = 2 ** 26
# a window of whole rows grows up to this factor until its two halves agree (RunOptions.settle_tol)
SETTLE_FACTOR = 8


COLUMN_WALK_PERIODS = 50  # reuse periods in one window of a column walk: phase error <= 1/50
#: the longest window of whole set periods (or whole sweeps) measured, in accesses (about 1 to 3 s of simulation)
MAX_WINDOW_ACCESSES = 1 << 25
#: whole sweeps are a window where the wrap-around between sweeps disturbs at most this share of a sweep
MAX_BOUNDARY_SHARE = 0.01
#: a window that cannot be a whole period spans this many turnovers of the caches' capacity
WINDOW_TURNOVERS = 4
#: a level of a rectangular nest's simulation that takes in a capacity of lines while its fill grows by at most
#: 1/FILL_SLACK of its capacity cannot fill further (:class:`~loopmodel.cachesim.nest.RunOptions`): a data set near
#: a large victim L3 fills its last sets only by conflicts, and the warm-up waited for a whole sweep (PolyBench 2mm
#: at its large sizes: 186 s, then 1.6 s with the same traffic)
FILL_SLACK = 64


def _trips(lp) -> int:
    """Trip count of a :class:`~loopmodel.cachesim.nest.NestLoop` whose bounds are constants."""
    span = lp.stop - lp.start if lp.step > 0 else lp.start - lp.stop
    return max(0, -(-span // abs(lp.step)))


def _rectangular(nest) -> bool:
    """Whether every loop bound of ``nest`` (a :class:`~loopmodel.cachesim.nest.LoopNest`) is free of
    outer indices (no triangular loop)."""
    return not any(any(lp.start_coefs) or any(lp.stop_coefs) for lp in nest.loops)


def _sweep_iterations(nest) -> int:
    """Inner iterations of one sweep of ``nest`` (a :class:`~loopmodel.cachesim.nest.LoopNest`), exact
    where bounds hold outer indices (a triangular nest: :func:`~loopmodel.ir.iteration_count.nest_iterations`),
    at least 1."""
    names = [f"x{d}" for d in range(len(nest.loops))]

    def bound(const: int, coefs: tuple) -> Poly:
        return Poly.const(const) + sum((c * Poly.symbol(n) for c, n in zip(coefs, names)), Poly())
    loops = [Loop(names[d], bound(lp.start, lp.start_coefs), bound(lp.stop, lp.stop_coefs), lp.step)
             for d, lp in enumerate(nest.loops)]
    return max(1, nest_iterations(loops, {}))


def _line_aligned(acc, loops, cl: int):
    """``acc`` (a :class:`~loopmodel.cachesim.nest.NestAccess`), moved to the start of its step where
    that keeps every access in the same cache lines: windows start where the work access is at a
    line start, which a strided one may never be (``float x[2*i+1]``: 4 B past every 8 B step; the
    window then never ended). Its addresses are ``base + sum(coefs . indices)``; all of them lie
    ``r`` past a multiple of ``g = gcd(cl, coefs x steps, coefs x outer-index terms of the starts)``, and
    ``r + size <= g`` keeps each access inside the line of that multiple."""
    g = math.gcd(cl, *(c * lp.step for c, lp in zip(acc.coefs, loops)),
                 *(c * v for c, lp in zip(acc.coefs, loops) for v in lp.start_coefs))
    start = sum(c * lp.start for c, lp in zip(acc.coefs, loops))
    shifts = {(b + start) % g for b in acc.bases}
    if len(shifts) != 1 or not 0 < next(iter(shifts)) <= g - acc.size:
        return acc
    r = shifts.pop()
    return dataclasses.replace(acc, bases=tuple(b - r for b in acc.bases))


def _boundary_share(kernel, defines: dict) -> float:
    """The share of a sweep's outermost trips that the wrap-around to the next sweep disturbs: the
    spread of the outermost index offsets of an array's accesses (``a[k-1]`` .. ``a[k+1]``: 2 trips
    whose data a sweep's start loads again, the reuse across trips being broken there) over the
    outermost trip count; 0 where no array is reused across outermost trips."""
    idx = kernel.loop_indices
    trips = kernel.loops[0].iterations(defines)
    offsets = {}
    for acc in kernel.reads + kernel.writes:
        const, coefs = _affine(acc.offset, idx, defines, f"index of {acc}")
        if coefs[0]:
            offsets.setdefault(acc.array, []).append(const // coefs[0])
    spread = max((max(v) - min(v) for v in offsets.values()), default=0)
    return spread / max(1, trips)


def _set_period(nest, sets: int, cl: int) -> int:
    """Trips of the outermost loop after which every access of ``nest`` is back in the same cache set
    of a level of ``sets`` sets, at the same offset in its line: the least common multiple, over the
    accesses, of ``sets x cl / gcd(sets x cl, bytes the access moves per trip)``."""
    mod, period = sets * cl, 1
    for acc in nest.accesses:
        period = math.lcm(period, mod // math.gcd(mod, abs(acc.coefs[0] * nest.loops[0].step)))
    return period


def _windows(nest, specs, cl: int, target: int, margin: int, boundary) -> list:
    """Measurement windows to try, best first: ``[(kind, iterations, max_target_it)]``.

    The counted write-backs are the dirty lines placed in the window plus the dirty lines held at its
    start minus those held at its end; the dirty fill of a cache level varies along the period in which
    the arrays' lines run through its sets (a large level: thousands of units of work), so a window of
    an arbitrary length over- or under-counts by that variation (2 % of a 27.5 MiB L3 against a window
    of 8000 units: 1.7 write-backs per unit where one line is written). Whole periods count exactly
    (kerncraft-tool-paper.txt §2.4.1: a precise window):

    * ``"period"``: with loop bounds free of outer indices, the pattern of sets repeats after
      :func:`_set_period` trips of the outermost loop; of every level if that period is at most
      :data:`MAX_WINDOW_ACCESSES` accesses, else whole periods of the last level spanning two turnovers of
      the caches' capacity (the levels above, at other phases, then err little). Offered where it fits in a
      row (1D) or in half a sweep (the first sweep of a large data set starts at its middle);
    * ``"sweeps"`` (``boundary`` not None: repeated sweeps, the boundary at most
      :data:`MAX_BOUNDARY_SHARE` of a sweep, see :func:`_boundary_share`): the steady state repeats
      with the sweep (``len(nest.accesses[0].bases)`` sweeps with swaps);
    * ``"long"`` (multi-dimensional): :data:`WINDOW_TURNOVERS` turnovers of the caches' capacity,
      a window of whole rows doubled once if its halves disagree (``max_target_it``);
    * ``"settle"``: ``target`` iterations (1D: the turnovers of ``"long"``), grown until settled; the
      last resort, where a multi-dimensional nest leaves no room for more between the warm-up and
      its boundary planes (an error of up to about 2 % in the write-backs of a large level).
    """
    loops = nest.loops
    trips = [_trips(lp) for lp in loops]
    last = specs[-1]
    lines_per_it = sum(min(1.0, abs(a.coefs[-1] * loops[-1].step) / cl) for a in nest.accesses) or 1.0
    # iterations that place the caches' capacity (a level's dirty fill varies with those above it)
    turnover = int(sum(s.sets * s.ways for s in specs) / lines_per_it)
    longest = max(target, MAX_WINDOW_ACCESSES // len(nest.accesses))

    def whole(period, least=target):  # the shortest window of whole periods of at least ``least`` iterations
        return -(-max(least, target) // period) * period

    out = []
    if _rectangular(nest):
        per_trip = math.prod(trips[1:])
        every = math.lcm(*(_set_period(nest, s.sets, cl) for s in specs)) * per_trip
        window = whole(every) if every <= longest else \
            whole(_set_period(nest, last.sets, cl) * per_trip, min(longest, 2 * turnover))
        room = trips[0] - 2 * margin - nest.it_per_cl if len(loops) == 1 else (trips[0] // 2 - 2) * per_trip
        if window <= min(room, longest):
            out.append(("period", window, 0))
    sweep = whole(_sweep_iterations(nest) * len(nest.accesses[0].bases))
    if boundary is not None and boundary <= MAX_BOUNDARY_SHARE and sweep <= longest:
        out.append(("sweeps", sweep, 0))
    window = max(target, min(longest, WINDOW_TURNOVERS * turnover))
    if len(loops) > 1 and window > target:
        out.append(("long", window, 2 * window))
        window = target
    return out + [("settle", window, SETTLE_FACTOR * window)]


def _window_iterations(kernel, defines: dict, unit, cl: int, target: int) -> int:
    """Iterations to measure: ``target``, or for a column walk (the work array steps a cache line or
    more per iteration) at least :data:`COLUMN_WALK_PERIODS` periods of its line reuse. Such a line
    is used again in each of the next ``CL / element size`` outer iterations (``B[k][j]`` with k
    innermost: j .. j+7 for doubles), so the misses of the levels that hold a column come once per
    period of that many rows; a window of a few rows would count them in whole periods or not at
    all (an ijk matrix product showed no L2 misses at all)."""
    elems_per_cl = cl // kernel.arrays[unit.access.array].element_size
    if unit.iterations >= elems_per_cl or len(kernel.loops) < 2:
        return target
    # rows of the inner loop: its mean trip count where its bounds hold outer indices (triangular)
    outer = nest_iterations(kernel.loops[:-1], defines)
    rows = -(-nest_iterations(kernel.loops, defines) // outer) if outer else 0
    return max(target, COLUMN_WALK_PERIODS * elems_per_cl * rows)


@dataclass(frozen=True)
class SimulationInfo:
    """How a simulation ran (for the report and JSON).

    Attributes:
        measured_iterations: inner iterations counted in the measurement windows.
        simulated_iterations: inner iterations simulated in total (warm-up included).
        warmup_iterations: inner iterations before the hierarchy counted as warm.
        sweeps: sweeps of the loop nest started.
        layout: ``{array: (start address, bytes)}``.
        levels: the simulated :class:`~loopmodel.cachesim.hierarchy.LevelSpec` per level.
        sweep_mode: ``"repeated"`` or ``"single"`` (what was asked for).
        cold: the measurement is one cold sweep, counted whole, caches flushed after it.
    """

    measured_iterations: int
    simulated_iterations: int
    warmup_iterations: int
    sweeps: int
    layout: dict
    levels: tuple
    sweep_mode: str = "repeated"
    cold: bool = False


def place_arrays(kernel, defines: dict, alignment: int = 4096, padding: int = 0) -> dict:
    """Array start addresses in declaration order.

    Without padding each array starts at the next multiple of ``alignment``
    after the previous array's end; array ``i`` (0-based) is then shifted by
    ``i * padding`` bytes, so that padding changes the arrays' relative
    positions (and with them the cache sets they share).

    Returns:
        ``{name: (address, size in bytes)}`` (addresses are 64-bit ints).
    """
    out = {}
    addr = BASE_ADDRESS
    for i, (name, arr) in enumerate(kernel.arrays.items()):
        addr = -(-addr // alignment) * alignment
        nbytes = int(arr.size_elements.evaluate(defines)) * arr.element_size
        out[name] = (addr + i * padding, nbytes)
        addr += i * padding + nbytes
    return out


def _affine(poly, indices, defines, what):
    """``poly`` (after -D substitution) as (constant, [coefficient per loop index]); ints."""
    p = poly.subs(defines)
    coefs = []
    for ix in indices:
        c = coefficient(p, ix)
        if not c.is_constant():
            raise ModelError(f"cache simulation: {what} is not affine in the loop indices")
        coefs.append(int(c.constant_value()))
    const = strip_indices(p, indices)
    if not const.is_constant():
        raise ModelError(f"cache simulation: {what} depends on undefined constants {sorted(const.symbols)}")
    return int(const.constant_value()), coefs


def _first_part(nest, cores: int):
    """``nest`` with its outermost loop cut to its first ceil(T / ``cores``) trips: the iterations one
    core runs when the cores split the loop nest, as a static OpenMP schedule of the outermost loop
    does, and the layer conditions' whole-data-set condition assumes (each core's part of the data
    set in its share of the caches; :func:`~loopmodel.predictors.layer_conditions.data_set_parts`)."""
    if cores <= 1:
        return nest
    outer = nest.loops[0]
    part = max(1, -(-_trips(outer) // cores))
    loops = (replace(outer, stop=outer.start + part * outer.step),) + tuple(nest.loops[1:])
    return replace(nest, loops=loops)


def level_specs(machine, cores: int = 1, cache_factor: float = 1.0) -> tuple:
    """Simulated organisation of the machine's caches (shared levels split among ``cores``; with a
    ``cache_factor`` below 1 each level keeps that fraction of its sets, at least one, as the
    layer conditions take that fraction of each size: the "C/2" rule of ecm-model-slides.txt).

    Returns:
        ``(tuple of LevelSpec, notes)``.

    Raises:
        ModelError: a level without the data needed (sets/ways or size), or one of more than
            :data:`MAX_SIM_LINES` lines.
    """
    cl = int(machine.cacheline_size)
    specs, notes = [], []
    for i, c in enumerate(machine.caches):
        if c.sets and c.ways:
            sets, ways = c.sets, c.ways
        else:
            ways = c.ways or 8
            sets = max(1, int(round(c.size / (ways * cl))))
            notes.append(f"{c.level}: sets/ways not given; simulated as {sets} sets x {ways} ways")
        share = min(max(cores, 1), c.cores_per_group)
        if share > 1:
            sets = max(1, sets // share)
        if cache_factor != 1:
            sets = max(1, int(round(sets * cache_factor)))
        policy = c.replacement
        if policy == "PLRU":
            notes.append(f"{c.level}: pseudo-LRU simulated as LRU")
            policy = "LRU"
        if c.type == "victim" and c.victim_clean_note:
            notes.append(c.victim_clean_note)
        if sets * ways > MAX_SIM_LINES:
            raise ModelError(f"cache simulation: {c.level} holds {sets * ways} lines ({sets} sets x {ways} ways), "
                             f"more than the {MAX_SIM_LINES} the simulator holds; use the layer conditions "
                             "(--cache-predictor lc)")
        specs.append(LevelSpec(c.level, int(sets), int(ways), cl, policy, c.write_allocate, c.write_back,
                               c.type, seed=0x853C49E6748FEA9B ^ (i + 1), victim_clean=c.victim_clean))
    return tuple(specs), notes


class SimulationPredictor:
    """Cache-simulation traffic predictor for one kernel.

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel` (at most 8 loops).

    Raises:
        ModelError: too deep a nest.
    """

    def __init__(self, kernel):
        if len(kernel.loops) > MAXD:
            raise ModelError(f"cache simulation supports at most {MAXD} nested loops", file=kernel.source)
        self.kernel = kernel
        idx = kernel.loop_indices
        # order within an iteration: loads as they first appear, then stores
        acc = [(a, "load") for a in kernel.reads] + [(a, "store") for a in kernel.writes]
        self._accesses = acc
        # nothing to simulate: no array moves with the inner loop (a compute-only loop)
        self._still = not any(not coefficient(a.offset, idx[-1]).is_zero() for a, _ in acc)
        self._read_arrays = {a.array for a in kernel.reads}

    def predict(self, machine, defines: dict, cores: int = 1, alignment: int = 4096, padding: int = 0,
                nt_stores: bool = False, target_units: int = 8000, sweeps: str = "repeated",
                cache_factor: float = 1.0):
        """Simulate the kernel for ``defines``.

        Args:
            machine: :class:`~loopmodel.machine.model.MachineModel`.
            defines: size constant -> int.
            cores: active cores: shared caches split, and the data set too (one core's part is
                simulated, :func:`_first_part`, as the layer conditions compare it).
            alignment, padding: array placement (bytes), see :func:`place_arrays`.
            nt_stores: stores to arrays that are never read are non-temporal
                (bypass the caches, no write-allocate).
            target_units: cache lines of the written array to measure.
            sweeps: ``"repeated"`` (steady state of a kernel run again and
                again) or ``"single"`` (a kernel run once; see the module docstring).
            cache_factor: fraction of each cache's sets simulated (:func:`level_specs`).

        Returns:
            ``(TrafficPrediction, SimulationInfo)``; traffic in cache lines per
            unit of work (``iterations_per_unit`` iterations: one CL of the written array),
            hits/misses/evicts per unit. Where the reuse of the data set depends on where the
            arrays lie (see the module docstring), a second simulation at the other placement,
            and a note with both figures.
            A loop in which no array moves with the inner loop: no traffic, and
            ``None`` for the :class:`SimulationInfo` (nothing simulated).

        Raises:
            ModelError: nothing could be measured, or the simulator is not built.
            ValueError: ``sweeps`` is neither ``"repeated"`` nor ``"single"``.
        """
        if sweeps not in ("repeated", "single"):
            raise ValueError(f"sweeps must be 'repeated' or 'single', not {sweeps!r}")
        k = self.kernel
        specs, notes = level_specs(machine, cores, cache_factor)
        notes += _option_notes(specs, alignment, padding, nt_stores, cache_factor, k.write_only_arrays)
        if self._still:
            cl = int(machine.cacheline_size)
            zero = tuple(LevelTraffic(s.name, 0.0, 0.0, 0.0, 0.0, cl, 0.0) for s in specs)
            return TrafficPrediction("SIM", k.unit_of_work(cl, defines).iterations, zero, tuple(notes) + (
                "cache simulation: no array is traversed by the inner loop: no data traffic at any level, "
                "nothing simulated",)), None
        cl = int(machine.cacheline_size)
        unit = k.unit_of_work(cl, defines)  # one CL of the written array
        run = dict(cores=cores, nt_stores=nt_stores, sweeps=sweeps, target_units=target_units)
        levels, info, run_notes = self._simulate(specs, defines, unit, cl, (alignment, padding), **run)
        notes += run_notes
        other = _other_placement(alignment, padding, cl)
        if _conflict_prone(self._touched(place_arrays(k, defines, *other), cores), specs, cl) or \
                _conflict_prone(self._touched(info.layout, cores), specs, cl):
            other_levels = self._simulate(specs, defines, unit, cl, other, **run)[0]
            notes += _placement_notes(levels, other_levels, (alignment, padding), other)
        notes += _sweep_notes(k, sweeps, info.cold)
        return TrafficPrediction("SIM", unit.iterations, tuple(levels), tuple(notes)), info

    def _simulate(self, specs, defines: dict, unit, cl: int, placement: tuple, *, cores: int, nt_stores: bool,
                  sweeps: str, target_units: int) -> tuple:
        """One simulation with the arrays at ``placement`` = ``(alignment, padding)`` (bytes, see
        :func:`place_arrays`): ``(list of LevelTraffic, SimulationInfo, notes)``; arguments as for
        :meth:`predict`.

        Raises:
            ModelError: nothing could be measured.
        """
        k = self.kernel
        notes = []
        layout = place_arrays(k, defines, *placement)
        nest = _first_part(self._nest(defines, layout, unit, nt_stores, sweeps, cl), cores)
        last = specs[-1]
        # large data sets warm up inside the iteration space, away from its edges; small ones from the
        # start (a sweep then may not supply the warm-up, and the next sweep is measured whole)
        data_lines = sum(size for _, size in layout.values()) / cl / max(cores, 1)
        start_mid = data_lines >= 4 * last.sets * last.ways
        cold = sweeps == "single" and not start_mid
        target = _window_iterations(k, defines, unit, cl, target_units * nest.it_per_cl)
        boundary = _boundary_share(k, defines) if sweeps == "repeated" or start_mid else None
        hier, res, kind = _measure(nest, specs, cl, target, start_mid, cold, boundary)
        if res.measured_it == 0:
            # short rows or few outer trips: measure whole rows, boundaries included
            hier, res, kind = _measure(nest, specs, cl, target, False, cold, boundary, edges=False)
            notes.append("cache simulation: rows too short for a window away from the boundaries; "
                         "boundary iterations are included")
        if res.measured_it == 0:
            raise ModelError("cache simulation: the loop nest has too few iterations to measure "
                             "one cache line of work", file=k.source)
        levels = self._per_unit(hier, specs, res, unit, cl, kind != "cold")
        info = SimulationInfo(res.measured_it, res.simulated_it, res.warm_it, res.sweeps,
                              layout, specs, sweeps, cold)
        return levels, info, notes

    def loop_nest(self, defines: dict, layout: dict, cl: int):
        """The kernel as the simulator's :class:`~loopmodel.cachesim.nest.LoopNest`, its arrays at
        ``layout`` (``{name: (address, bytes)}``, e.g. a whole function's, :func:`place_arrays`),
        run once (no swaps); None where no array moves with the inner loop (nothing to simulate).

        Raises:
            ModelError: a bound or index that is not affine at ``defines``, or addresses beyond 64 bits.
        """
        if self._still:
            return None
        return self._nest(defines, layout, self.kernel.unit_of_work(cl, defines), False, "single", cl)

    def _touched(self, layout: dict, cores: int) -> list:
        """Byte ranges ``[(start, end)]`` of the arrays the kernel accesses in ``layout``, the first
        ``1/cores`` of each (one core's part, :func:`_first_part`)."""
        used = {a.array for a, _ in self._accesses}
        return [(start, start + size // max(cores, 1)) for name, (start, size) in layout.items() if name in used]

    def _nest(self, defines: dict, layout: dict, unit, nt_stores: bool, sweeps: str, cl: int):
        """The kernel as a :class:`~loopmodel.cachesim.nest.LoopNest` (byte addresses per ``layout``)."""
        k = self.kernel
        idx = k.loop_indices
        loops = []
        for lp in k.loops:
            c0, cs = _affine(lp.start, idx, defines, f"start of loop '{lp.index}'")
            e0, es = _affine(lp.stop, idx, defines, f"bound of loop '{lp.index}'")
            loops.append(NestLoop(c0, e0, lp.step, tuple(cs), tuple(es)))
        nbase = k.swap_period() if sweeps == "repeated" else 1
        accesses = []
        for a, what in self._accesses:
            es = k.arrays[a.array].element_size
            c0, cs = _affine(a.offset, idx, defines, f"index of {a}")
            # swapped arrays use each other's memory in later sweeps
            bases = tuple(layout[k.storage_at_sweep(sweep)[a.array]][0] + c0 * es for sweep in range(nbase))
            nt = what == "store" and nt_stores and a.array not in self._read_arrays
            kind = "nt" if nt else what
            phase = ("after" if what == "store" else "before") if cs[-1] == 0 else "inner"
            accesses.append(NestAccess(bases, tuple(c * es for c in cs), es, kind, phase))
        if any(abs(v) >= 2 ** 63 for lp in loops for v in (lp.start, lp.stop, *lp.start_coefs, *lp.stop_coefs)) \
                or any(abs(c) >= 2 ** 63 for acc in accesses for c in acc.coefs):
            raise ModelError("cache simulation: the loop bounds or address steps need more than 64 bits at "
                             "these sizes", file=k.source)
        work = next(i for i, (a, _) in enumerate(self._accesses)
                    if (a.array, a.offset) == (unit.access.array, unit.access.offset))
        accesses[work] = _line_aligned(accesses[work], loops, cl)
        return LoopNest(tuple(loops), tuple(accesses), work, max(1, int(unit.iterations)))

    def _per_unit(self, hier, specs, res, unit, cl: int, correct: bool) -> list:
        """Counted statistics per unit of work, as :class:`LevelTraffic` per level (``correct``: the
        write-backs corrected by the change of the dirty fill over the window, where recorded)."""
        st = hier.stats()
        scale = unit.iterations / res.measured_it  # per unit of work: per iterations_per_unit iterations
        # the dirty lines a window leaves in a level or above it are written back after it, those it
        # found there were made dirty before it: corrected by that change, a window counts the
        # write-backs of the lines made dirty in it, free of where it cuts the dirty fill of the caches
        correct = correct and res.dirty_start is not None
        end = hier.dirty_lines() if correct else (0,) * len(specs)
        start = res.dirty_start if correct else (0,) * len(specs)
        levels, change = [], 0
        for spec, d0, d1 in zip(specs, start, end):
            s = st[spec.name]
            change += d1 - d0
            stores = max(0, s["store_lines"] + change) + s["through_bytes"] / cl
            levels.append(LevelTraffic(spec.name, s["load_lines"] * scale, stores * scale,
                                       s["hits"] * scale, s["misses"] * scale, cl, s["evicts"] * scale))
        return levels


def _measure(nest, specs, cl: int, target: int, start_mid: bool, cold: bool, boundary, edges: bool = True) -> tuple:
    """Run ``nest`` on a fresh hierarchy of ``specs``: ``(Hierarchy, RunResult, kind of window)``,
    statistics counted in the measurement window (the first of :func:`_windows` that works, see there
    for ``boundary``; ``cold``: one cold sweep, caches flushed after it).

    A window of whole set periods must lie in the sweep where the warm-up ended: one that runs into the
    next sweep starts or ends where the caches hold the other end of the iteration space (at another
    phase of the period; in a multi-dimensional nest, with the boundary planes). Such a window is tried
    again from the first trip of a large data set's first sweep (which starts at its middle trip) where
    the warm-up and the window fit in the whole sweep (a ``"long"`` one shortened to the room there,
    if that is at least ``target``), else the next kind of window is used.
    """
    nbase = len(nest.accesses[0].bases)
    if cold:  # one sweep from a cold start, counted whole; flushed below
        hier = Hierarchy(specs)
        res = hier.run(nest, RunOptions(target, max_sweeps=2 * nbase + 2, cold=True))
        hier.counting = True
        hier.flush()  # the dirty lines left in the caches are written back eventually
        hier.counting = False
        return hier, res, "cold"
    margin = 2 * nest.it_per_cl if edges else 0
    sweep_it = _sweep_iterations(nest)
    per_trip = sweep_it // max(1, _trips(nest.loops[0]))
    # the first sweep of a large data set starts at the middle trip of the outermost enclosing loop
    skip = _trips(nest.loops[0]) // 2 * per_trip if len(nest.loops) > 1 else 0

    # a rectangular nest's traffic per iteration is the same in every part of a sweep: a level that fills its
    # last sets only by conflicts is warm (FILL_SLACK); a triangular one's changes along the sweep (the rows grow),
    # so its window is the next whole sweep where the first cannot warm every level exactly
    slack = FILL_SLACK if _rectangular(nest) else 0

    def run(window, grow, mid):
        hier = Hierarchy(specs)
        return hier, hier.run(nest, RunOptions(window, margin_it=margin, edges=edges, start_mid=mid,
                                               max_sweeps=2 * nbase + 2 + -(-window // sweep_it), max_target_it=grow,
                                               fill_slack=slack))

    for kind, window, grow in _windows(nest, specs, cl, target, margin, boundary):
        hier, res = run(window, grow, start_mid)
        if kind not in ("period", "long") or not _wrapped(res, sweep_it, skip if start_mid else 0):
            break
        # from the first trip on (whose rows start no window) there may be room for the warm-up, known
        # now, and the window where half a sweep had none; a "long" window shrinks to that room
        room = sweep_it - max(res.warm_it, per_trip) - per_trip
        fit = window if window <= room else (room if kind == "long" and room >= target else 0)
        if fit and (fit < window or start_mid and skip):
            hier, res = run(fit, fit if fit < window else grow, False)
            if not _wrapped(res, sweep_it, 0):
                break
    return hier, res, kind


def _wrapped(res, sweep_it: int, skipped: int) -> bool:
    """The window of ``res`` touches a sweep after the one where the warm-up ended (sweeps of
    ``sweep_it`` inner iterations; the first sweep skipped ``skipped`` of them)."""
    def sweep_of(it):
        return (it + skipped) // sweep_it

    start = res.simulated_it - res.measured_it
    return res.measured_it > 0 and sweep_of(res.simulated_it - 1) > sweep_of(min(start, res.warm_it))


def _other_placement(alignment: int, padding: int, cl: int) -> tuple:
    """The placement a simulation at ``(alignment, padding)`` is compared with: arrays one after the
    other at cache-line alignment (``(cl, 0)``) for the default page-aligned placement, else the
    default ``(4096, 0)``."""
    return (cl, 0) if (alignment, padding) == (4096, 0) else (4096, 0)


def _set_fill_range(ranges, sets: int, cl: int) -> tuple:
    """``(fewest, most)`` cache lines of the byte ranges ``[(start, end)]`` that map to one set of a
    level of ``sets`` sets (set = line address mod ``sets``); a line shared by two ranges counts once."""
    spans = sorted((start // cl, -(-end // cl)) for start, end in ranges if end > start)
    merged = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    base, steps = 0, {0: 0, sets: 0}  # every set gets n // sets lines, n % sets sets from lo on one more
    for lo, hi in merged:
        base += (hi - lo) // sets
        first, extra = lo % sets, (hi - lo) % sets
        for a, b in ((first, min(sets, first + extra)), (0, max(0, first + extra - sets))):
            if b > a:
                steps[a] = steps.get(a, 0) + 1
                steps[b] = steps.get(b, 0) - 1
    fills, level = [], base
    for at in sorted(steps)[:-1]:  # the fill is constant from one breakpoint to the next
        level += steps[at]
        fills.append(level)
    return min(fills), max(fills)


def _conflict_prone(ranges, specs, cl: int) -> bool:
    """Some level's sets split between those that hold their share of the data set (at most ``ways``
    lines) and those that cannot: the whole data set's reuse then depends on where the arrays lie
    (associativity conflicts; a fully associative level would hold all or none of it)."""
    for spec in specs:
        fewest, most = _set_fill_range(ranges, spec.sets, cl)
        if fewest <= spec.ways < most:
            return True
    return False


def _placement_notes(levels, other_levels, placement: tuple, other: tuple) -> list:
    """One note naming the levels whose traffic differs (more than 1 %, 0.01 CL) between the arrays at
    ``placement`` and at ``other`` (``(alignment, padding)`` in bytes), with the figures at both."""
    def where(place):
        alignment, padding = place
        return f"--array-alignment {alignment}" + (f" --array-padding {padding}" if padding else "")

    diffs = []
    names = [lv.level for lv in levels] + ["MEM"]
    for i, (lv, alt) in enumerate(zip(levels, other_levels)):
        here, there = lv.loads_cl + lv.stores_cl, alt.loads_cl + alt.stores_cl
        if abs(here - there) > max(0.01, 0.01 * max(here, there)):
            diffs.append(f"{names[i]}-{names[i + 1]} {here:.2f} CL per CL of work ({where(placement)}) against "
                         f"{there:.2f} ({where(other)})")
    if not diffs:
        return []
    return [f"cache simulation: the traffic depends on where the arrays lie (associativity conflicts): "
            f"{'; '.join(diffs)}; set --array-alignment / --array-padding as the program places its arrays"]


def _option_notes(specs, alignment: int, padding: int, nt_stores: bool, cache_factor: float, nt_arrays) -> list:
    """Report notes on the options that shape a simulation, where they differ from the defaults."""
    notes = []
    if (alignment, padding) != (4096, 0):
        notes.append(f"arrays placed at multiples of {alignment} B (--array-alignment), array i shifted by "
                     f"i x {padding} B (--array-padding)")
    if nt_stores:
        notes.append(nt_stores_note(nt_arrays))
    if cache_factor != 1:
        sizes = ", ".join(f"{s.name} {s.sets} x {s.ways}" for s in specs)
        notes.append(f"--cache-factor {cache_factor:g}: that fraction of each cache's sets simulated (sets x ways: "
                     f"{sizes})")
    return notes


def _sweep_notes(kernel, sweeps: str, cold: bool) -> list:
    """Report notes on the sweep semantics of a simulation."""
    notes = []
    if sweeps == "single":
        notes.append("single sweep: one cold sweep counted whole, dirty lines written back at its end"
                     if cold else "single sweep of a data set over 4x the last-level cache: measured in "
                     "steady state (no data survives a sweep)")
        if kernel.swaps:
            notes.append("single sweep: the swap() calls after the loop nest have no effect")
    elif kernel.swaps:
        pairs = ", ".join(f"swap({x}, {y})" for x, y in kernel.swaps)
        notes.append(f"swaps applied: {pairs} between sweeps (the arrays exchange addresses; "
                     f"steady state over {kernel.swap_period()} sweeps)")
    return notes
