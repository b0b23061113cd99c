"""Layer-condition traffic predictor (kerncraft-tool-paper.txt §2.4.2).

For every array, the distinct accesses are sorted along the traversal and the
reuse distances between neighbours form the list ``L`` (one ``inf`` per array
for its leading access, or, for an array invariant in an outer loop, the
distance to its reuse in the next iteration of that loop). For each candidate
reuse distance ``t``:

    C_req(t) = sum(L_<=t) + t * count(L_>t)      [elements; here bytes, each
    hits(t)  = count(L_<=t)                        term weighted by the access'
    misses(t)= count(L_>t)                         bytes per iteration]

A cache of effective size ``C`` (:func:`effective_sizes`: size * factor / cores sharing it, a
victim cache with the level above added) is in the
state with the largest ``t`` whose ``C_req(t) <= C``. Misses of loads and of
write-allocating stores are loaded from the next level; every written array is
evicted once (kerncraft-tool-paper.txt §2.4.2; ecm-model-slides.txt "layer
condition"), except an output invariant in an outer loop whose reuse across it hits:
it stays in the cache and is written back once per iteration of the loop around
(:meth:`LayerConditionAnalysis._written_back`). Victim caches receive clean and dirty evictions
(cross-architecture-machine-models.txt §3.3, §5.2.1); with ``victim_clean: false``
only the dirty ones are transfers (Table 3, EPYC). Per unit of work:
:meth:`~loopmodel.ir.kernel.Kernel.unit_of_work`.

Repeated sweeps (the default, ``sweeps="repeated"``): kernels are run again
and again (benchmarks, time steps, solver iterations), so a cache that holds
the kernel's whole data set keeps it from one sweep to the next
(cross-architecture-machine-models.txt §3.4.4: "the entire data set fits
into core-private or scalable shared caches"). This is the whole-data-set
condition: the layer condition of kerncraft-tool-paper.txt §2.4.2 for the
loop around the nest, whose reuse distance is one sweep, so that every
access hits (Kerncraft's LayerConditionPredictor puts the same condition,
on all declared arrays, before the others). With ``D`` the bytes of all
arrays the nest touches (:func:`data_set`) and ``C_all`` the level's
effective size (:func:`effective_sizes`, the one the layer conditions use: size x
cache_factor / cores sharing it; a victim cache adds the level above, whose lines it
does not duplicate),

    D <= C_all   =>   no misses and no evictions in steady state,

and then neither in any level further from the core (no request reaches
them). A write-through level still passes every store on. With ``cores``
active cores a shared cache offers each its share, as for the other layer
conditions (and in Kerncraft), and the cores split the data set among them
(the outermost loop divided, as ``scaling`` and an OpenMP ``for`` do): each
core's part, about ``D / cores``, is compared with that share, i.e. the whole data
set with the caches of all active cores together (``capacity x cores``: a
shared cache once per group of cores sharing it, a private one per core). Parts
are whole trips of the outermost loop (:func:`data_set_parts`: T trips make
T / ceil(T / cores) parts of ceil(T / cores) trips, the part the cache simulation
runs), fewer than ``cores`` when T is not a multiple of them. ``sweeps="single"``
(a kernel run once) leaves that condition out: every array comes from memory
and every written array is evicted once, as above.

The symbolic part (``LayerConditionAnalysis``) depends only on the kernel and is
built once; :meth:`LayerConditionAnalysis.predict` evaluates it for one set of
sizes, fast enough for sweeps of thousands of sizes.
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass, replace
from fractions import Fraction

from ..errors import ModelError
from ..ir.kernel import Kernel, coefficient, strip_indices
from ..ir.point import check_point
from ..ir.poly import Poly
from ..units import format_bytes
from .traffic import LevelTraffic, TrafficPrediction, nt_stores_note

INF = None  # an infinite reuse distance (first access to an array)
#: ``sweeps`` values: the kernel runs again and again (steady state across sweeps), or once
SWEEPS = ("repeated", "single")


@dataclass(frozen=True)
class LCAccess:
    """One distinct access in layer-condition terms.

    Attributes:
        array: array name.
        offset: flattened offset (elements, Poly).
        distance: reuse distance in iterations (Poly) or None for infinity.
        element_size: bytes moved per iteration by this access' stream.
        is_load / is_store: read and/or written at this offset.
        reuse_loops: for the leading access of an array invariant in an outer loop, the indices
            in the nest (0: outermost) of the loops around the inner loop it is invariant in, from
            the innermost such loop outwards as long as it stays invariant, outermost first: its
            lines are reused across all their iterations at the same distance; empty for the other
            accesses, for arrays with no such loop and where a trip count of those loops depends on
            an outer index.
    """

    array: str
    offset: Poly
    distance: object
    element_size: int
    is_load: bool
    is_store: bool
    reuse_loops: tuple = ()

    def __str__(self):
        return f"{self.array}[{self.offset}]"


@dataclass(frozen=True)
class LCState:
    """One layer-condition state of a cache level.

    Attributes:
        distance: the reuse distance ``t`` (Poly; zero for "no reuse").
        dimension: 1 for reuse within a row, 2 across rows, 3 across planes.
        requirement: C_req(t) in bytes (Poly in the size constants).
        condition: C_req(t) <= effective cache size (evaluated; None if sizes unknown).
        hits, misses: accesses per iteration.
        evicts: written arrays' elements written back to the next level per iteration (one per
            written array streaming through the level; ``1 / trips`` for one kept across the
            iterations of an outer loop, :meth:`LayerConditionAnalysis._written_back`; None where
            not evaluated).
        requirement_bytes: evaluated C_req(t) (None if sizes unknown).
        max_size: largest real value of the solved-for size variable with the
            condition holding and the iteration space non-empty (None: holds
            for no such size, or no limit can be given; inf: always).
        limit_note: why ``max_size`` is None where that is not simply "never"
            (the condition is not monotone in the size), or the smallest size
            with a non-empty iteration space; empty otherwise.
    """

    distance: Poly
    dimension: int
    requirement: Poly
    hits: int
    misses: int
    condition: object = None
    requirement_bytes: object = None
    max_size: object = None
    limit_note: str = ""
    evicts: object = None


@dataclass(frozen=True)
class LCLevel:
    """Layer conditions of one cache level: all states and the selected one.

    Attributes:
        level: cache level name.
        cache_size: effective size in bytes (:func:`effective_sizes`: size x cache_factor / cores
            sharing it, plus the level above for a victim cache).
        states: the reuse-distance states (:class:`LCState`), smallest distance first.
        selected: index into ``states`` of the state the level is in within a sweep.
        data_set: the whole-data-set condition (repeated sweeps; None for a
            single sweep): an :class:`LCState` whose ``requirement`` is the data
            set in bytes, ``distance`` the iterations of one sweep (the reuse
            distance across sweeps; zero if not a closed form), ``dimension`` the
            nest depth + 1, no misses.
        capacity: bytes of the whole data set the active cores' caches of this level keep
            together, what the whole-data-set condition compares with (``cache_size`` times the
            parts of the data set, :func:`data_set_parts`).
        holds_data_set: the level (or one closer to the core) holds the whole
            data set across sweeps: no traffic on its link to the next level.
    """

    level: str
    cache_size: float  # effective bytes
    states: tuple
    selected: int  # index into states
    data_set: LCState | None = None
    capacity: float | None = None
    holds_data_set: bool = False

    @property
    def effective_state(self) -> LCState:
        """The state that determines the traffic: the whole-data-set one if held, else the selected one."""
        return self.data_set if self.holds_data_set else self.states[self.selected]


class LayerConditionAnalysis:
    """Symbolic layer-condition analysis of one kernel.

    Args:
        kernel: the kernel IR.

    A loop in which no array moves with the inner loop has no accesses here, one state (no reuse)
    per level, no whole-data-set condition and no traffic.

    With ``nt_stores``, the stores to arrays the kernel never reads are non-temporal, as in the
    cache simulation (:mod:`loopmodel.cachesim`: an NT store bypasses every cache level): those
    arrays take no cache capacity (no layer condition, not in the whole data set), cause no
    write-allocate and no eviction, and send one cache line per cache line written over the last
    link, to memory (roofline-measurement-thesis.txt §"MemL2": non-temporal stores counted apart
    from the cache-line traffic).

    Args:
        kernel: the kernel IR.
        nt_stores: stores to write-only arrays are non-temporal.

    Raises:
        ModelError: layer conditions do not apply (different index patterns of
            one array, non-unit stride in the inner loop, non-affine access).
    """

    def __init__(self, kernel: Kernel, nt_stores: bool = False):
        self.kernel = kernel
        self.notes = []
        #: write-only arrays with non-temporal stores: bytes per inner iteration, by array
        self.nt_bytes = {}
        self._nt = set(kernel.write_only_arrays) if nt_stores else set()
        self._low_memo = {}
        self.accesses = self._accesses()
        finite = [a.distance for a in self.accesses if a.distance is not INF]
        uniq = {}
        for d in finite:
            uniq.setdefault(d, d)
        self.distances = sorted(uniq.values(), key=lambda p: p.asymptotic_key())
        self.candidates = [Poly()] + self.distances
        self.requirements = [self._requirement(t) for t in self.candidates]
        self.variable = self._default_variable()
        self.data_set, self.data_set_parts = data_set(kernel)
        if self.nt_bytes:  # non-temporal stores leave nothing in the caches
            self.data_set_parts = {n: p for n, p in self.data_set_parts.items() if n not in self.nt_bytes}
            self.data_set = sum(self.data_set_parts.values(), Poly())
        self.sweep_iterations = _sweep_iterations(kernel)
        if nt_stores:
            self.notes.append(nt_stores_note(self.nt_bytes, " (no write-allocate, no layer condition); each CL "
                                             "written goes to memory over the last link"))

    # construction ---------------------------------------------------------
    def _accesses(self):
        k = self.kernel
        idx = k.loop_indices
        inner = k.inner_loop
        by_array: dict = {}
        reads = {(a.array, a.offset) for a in k.reads}
        writes = {(a.array, a.offset) for a in k.writes}
        for a in list(k.reads) + list(k.writes):
            by_array.setdefault(a.array, {})[a.offset] = a
        out = []
        for name in sorted(by_array):
            arr = k.arrays[name]
            offs = by_array[name]
            vecs = {o: tuple(coefficient(o, i) for i in idx) for o in offs}
            first = next(iter(vecs.values()))
            for o, v in vecs.items():
                if v != first:
                    a1, a2 = offs[next(iter(vecs))], offs[o]
                    raise ModelError(f"layer conditions do not apply: '{a1}' and '{a2}' traverse "
                                     f"'{name}' in different directions (transposed access); "
                                     "use cache simulation (--cache-predictor sim)", file=k.source, line=a2.line, col=a2.col)
            c_inner = first[-1]
            if c_inner.is_zero():
                self.notes.append(f"{name}: invariant in the inner loop (kept in a register/L1), no traffic counted")
                continue
            if not c_inner.is_constant() or abs(c_inner.constant_value() * inner.step) != 1:
                a = next(iter(offs.values()))
                raise ModelError(f"layer conditions do not apply: '{a}' has stride "
                                 f"{c_inner}*{inner.step} in the inner loop '{inner.index}' (only unit stride); "
                                 "use cache simulation (--cache-predictor sim)", file=k.source, line=a.line, col=a.col)
            if name in self._nt:
                self.nt_bytes[name] = arr.element_size
                continue
            direction = 1 if c_inner.constant_value() * inner.step > 0 else -1
            consts = {o: o - sum((Poly.symbol(i) * c for i, c in zip(idx, first)), Poly()) for o in offs}
            order = sorted(offs, key=lambda o: consts[o].asymptotic_key(), reverse=direction > 0)
            span = (consts[order[0]] - consts[order[-1]]) * direction
            lead, loop = self._outer_reuse(first, span)
            for pos, o in enumerate(order):
                if pos == 0:
                    dist = lead
                else:
                    dist = (consts[order[pos - 1]] - consts[o]) * direction
                out.append(LCAccess(name, o, dist, arr.element_size,
                                    (name, o) in reads, (name, o) in writes, loop if pos == 0 else ()))
        if not out and not self.nt_bytes:
            self.notes.append("no array is traversed by the inner loop: no data traffic counted at any level "
                              "(the loop works on values in registers)")
        return out

    def _outer_reuse(self, vec, span):
        """``(distance, loops)`` of the leading access when the array is invariant in an outer loop:
        its reuse distance (iterations of the loops inside the innermost such loop, less the span
        of the array's accesses) and :attr:`LCAccess.reuse_loops`; ``(INF, ())`` otherwise."""
        loops = self.kernel.loops
        for level in range(len(loops) - 2, -1, -1):
            if vec[level].is_zero():
                inner_trips = _trips(self.kernel, loops[level + 1:])
                if inner_trips is None:  # non-rectangular: no closed form
                    return INF, ()
                top = level
                while top > 0 and vec[top - 1].is_zero():
                    top -= 1
                run = tuple(range(top, level + 1))
                fixed = _trips(self.kernel, [loops[i] for i in run]) is not None
                return inner_trips - span, run if fixed else ()
        return INF, ()

    def _requirement(self, t: Poly) -> Poly:
        total = Poly()
        for a in self.accesses:
            if a.distance is not INF and _le_sym(a.distance, t):
                total = total + a.distance * a.element_size
            else:
                total = total + t * a.element_size
        return total

    def _default_variable(self):
        """The size constant the transition points are solved for: the row length.

        That is the stride of the loop just outside the inner loop (``N`` in
        ``a[j][i]`` and in the flattened ``a[j*N+i]``), as in the paper's
        Listing 5; kernels with one loop fall back to the innermost dimension.
        """
        idx = self.kernel.loop_indices
        if len(idx) >= 2:
            for a in self.accesses:
                syms = sorted(coefficient(a.offset, idx[-2]).symbols)
                if syms:
                    return syms[0]
        for a in self.accesses:
            dims = self.kernel.arrays[a.array].dims
            syms = sorted(dims[-1].symbols)
            if syms:
                return syms[0]
        return next(iter(sorted(self.kernel.constants)), None)

    # evaluation -----------------------------------------------------------
    def predict(self, machine, defines: dict, cores: int = 1, cache_factor: float = 1.0,
                solve_for: str | None = None, sweeps: str = "repeated"):
        """Evaluate the layer conditions for ``defines``.

        Args:
            machine: :class:`~loopmodel.machine.model.MachineModel`.
            defines: size constant -> integer value (all constants needed).
            cores: active cores; shared caches are divided among them, and so is the data set
                (the whole-data-set condition: each core's part in its share).
            cache_factor: effective fraction of each cache (1.0, or 0.5 for the
                "C/2" rule of ecm-model-slides.txt); applies to the
                whole-data-set condition too.
            solve_for: size constant for the transition points (default: the
                innermost dimension's constant).
            sweeps: ``"repeated"`` (steady state of a kernel run again and
                again: the whole-data-set condition applies) or ``"single"``
                (one sweep: every array is loaded from memory).

        Returns:
            ``(TrafficPrediction, [LCLevel ...])``; traffic in cache lines per
            unit of work.

        Raises:
            ValueError: ``sweeps`` is not one of :data:`SWEEPS`.
        """
        if sweeps not in SWEEPS:
            raise ValueError(f"sweeps must be one of {SWEEPS}, not {sweeps!r}")
        var = solve_for or self.variable
        dvals = []
        for a in self.accesses:
            dvals.append(math.inf if a.distance is INF else float(a.distance.evaluate(defines)))
        trips = self._write_back_trips(defines, sweeps)
        cand_vals = [0.0] + [float(d.evaluate(defines)) for d in self.distances]
        req_vals = [float(r.evaluate(defines)) for r in self.requirements]
        sizes = {s: v for s, v in defines.items() if s != var}
        low = self._smallest_nonempty(var, sizes, defines)
        cl = machine.cacheline_size
        it_per_unit = self.kernel.iterations_per_cacheline(cl, defines)  # one CL of the written array
        levels = []
        traffic = []
        caches = machine.caches
        held = False
        parts = data_set_parts(self.kernel, defines, cores)
        for cache, csize in zip(caches, effective_sizes(caches, cores, cache_factor)):
            states, best = self._states(dvals, trips, cand_vals, req_vals, csize, var, sizes, low, cache.write_back)
            together = csize * parts  # each core keeps its part of the data set in its share
            whole = self._data_set_state(defines, together, var, sizes, low, cache.write_back) \
                if sweeps == "repeated" and self.accesses else None
            held = held or (whole is not None and bool(whole.condition))  # nothing reaches the levels below
            levels.append(LCLevel(cache.level, csize, tuple(states), best, whole, together, held))
        # traffic per level from the selected states. A write-allocate anywhere above makes a
        # store miss a read request all the way down (the allocating level fetches the line
        # through the levels below, e.g. the L2 of a victim-L3 machine reads from memory).
        allocates = [any(c.write_allocate and c.write_back for c in caches[: i + 1]) for i in range(len(caches))]
        for li, (cache, lcl) in enumerate(zip(caches, levels)):
            if lcl.holds_data_set:
                traffic.append(self._held_traffic(cache, it_per_unit, cl))
            else:
                traffic.append(self._selected_traffic(machine, li, lcl, dvals, trips, cand_vals[lcl.selected],
                                                      allocates[li], it_per_unit))
        if self.nt_bytes:  # non-temporal stores pass the caches: one CL per CL written, to memory
            nt = sum(self.nt_bytes.values()) * it_per_unit / cl
            last = traffic[-1]
            traffic[-1] = replace(last, stores_cl=last.stores_cl + nt)
        # a victim level's misses are delivered to the level above, counted on its own link
        victim_notes = [c.victim_clean_note for c in caches if c.type == "victim" and c.victim_clean_note]
        notes = tuple(self.notes) + tuple(victim_notes) + tuple(self._sweep_notes(levels, defines, sweeps, cores)) + \
            tuple(_limit_notes(levels, var))
        tp = TrafficPrediction("LC", it_per_unit, tuple(traffic), notes)
        return tp, levels

    def _smallest_nonempty(self, var, sizes: dict, defines: dict):
        """:func:`_smallest_nonempty`, once per value of the sizes other than ``var`` (it does not
        depend on ``var``'s value: a sweep of ``var`` solves it once)."""
        key = (var, tuple(sorted(sizes.items())))
        if key not in self._low_memo:
            if len(self._low_memo) > 4096:
                self._low_memo.clear()
            self._low_memo[key] = _smallest_nonempty(self.kernel, var, defines)
        return self._low_memo[key]

    def write_back_loops(self, sweeps: str) -> dict:
        """Written arrays reused across outer loops that a cache keeping them writes back once per
        iteration of the loop around those loops (:meth:`_written_back`): ``{array: indices of
        the loops in the nest}`` (:attr:`LCAccess.reuse_loops`).

        Over repeated sweeps an array reused across the outermost loop meets its lines again in
        the next sweep at the same reuse distance, so it is never written back and is left out,
        unless ``swap()`` rotates it between sweeps.
        """
        swapped = {n for group in self.kernel.swap_groups() for n in group}
        written = {a.array for a in self.accesses if a.is_store}
        return {a.array: a.reuse_loops for a in self.accesses
                if a.reuse_loops and a.array in written
                and not (a.reuse_loops[0] == 0 and sweeps == "repeated" and a.array not in swapped)}

    def _write_back_trips(self, defines: dict, sweeps: str) -> list:
        """Per access, the iterations over which a kept output is written back once: the product
        of the trip counts of the loops of :meth:`write_back_loops` for a leading access, ``inf``
        for a leading access reused across an outer loop but never written back, else None."""
        loops = self.write_back_loops(sweeps)
        out = []
        for a in self.accesses:
            if not a.reuse_loops:
                out.append(None)
            elif a.array in loops:
                trips = _trips(self.kernel, [self.kernel.loops[i] for i in loops[a.array]])
                out.append(float(trips.evaluate(defines)))
            else:
                out.append(math.inf)
        return out

    def _written_back(self, dvals, trips, selected: int, tval: float, write_back: bool) -> dict:
        """Elements of each written array written back to the next level per iteration, by array.

        A written array streaming through the level is evicted once per element (one cache line per
        cache line written; kerncraft-tool-paper.txt §2.4.2). An array invariant in an outer loop
        whose reuse across that loop hits in the selected state (its leading access' distance within
        ``tval``) stays in the level over that loop's iterations: its lines, written again in every
        iteration, are written back once per iteration of the loop around it (or per sweep), that is
        ``1 / trips`` of an element per iteration, ``trips`` the iterations of the loops it is
        reused across (:meth:`_write_back_trips`; 0 for ``trips`` inf). A write-through level
        (``write_back`` false) passes every store on.

        Args:
            dvals: evaluated reuse distance per access (iterations; inf for none).
            trips: :meth:`_write_back_trips`.
            selected: index of the state (0: no reuse).
            tval: the state's reuse distance (iterations).
            write_back: the level is write-back.

        Returns:
            ``{array: elements per iteration}`` for the written arrays.
        """
        out = {a.array: 1.0 for a in self.accesses if a.is_store}
        if not write_back or not selected:
            return out
        for a, d, n in zip(self.accesses, dvals, trips):
            if a.array in out and n is not None and n >= 1 and d <= tval:
                out[a.array] = 1.0 / n
        return out

    def _selected_traffic(self, machine, li: int, lcl, dvals, trips, tval: float, allocates: bool,
                          it_per_unit) -> LevelTraffic:
        """Traffic between cache level ``li`` and the next from its selected layer-condition state:
        an access misses unless its reuse distance ``d`` is within the state's ``tval``; a missing
        store is also loaded where a write-allocate level sits above (``allocates``), and written
        arrays are written back as :meth:`_written_back` says (kerncraft-tool-paper.txt §2.4.2,
        layer conditions).
        """
        cache, cl = machine.caches[li], machine.cacheline_size
        sel = lcl.selected
        load_b = miss_b = 0.0
        size = {}
        for a, d in zip(self.accesses, dvals):
            miss = not (sel > 0 and d <= tval)
            size[a.array] = a.element_size
            if miss:
                miss_b += a.element_size
                if a.is_load or allocates:
                    load_b += a.element_size
        back = self._written_back(dvals, trips, sel, tval, cache.write_back)
        store_b = float(sum(f * size[n] for n, f in back.items()))
        nxt = machine.memory_hierarchy[li + 1]
        if nxt.type == "victim" and nxt.victim_clean:
            # every line entering this level is later evicted into the victim cache, and the lines
            # of an array kept over an outer loop once per iteration of the loop around it
            store_b = load_b + float(sum(f * size[n] for n, f in back.items() if f < 1.0))
        # lookups per unit: one per access and iteration; a missing stream misses once per line
        lookups = len(self.accesses) * it_per_unit
        misses = miss_b * it_per_unit / cl
        loads = load_b * it_per_unit / cl
        return LevelTraffic(cache.level, loads, store_b * it_per_unit / cl, lookups - misses, misses, int(cl), loads)

    def _data_set_state(self, defines, capacity, var, sizes, low, write_back: bool) -> LCState:
        """The whole-data-set condition ``D <= capacity`` as an :class:`LCState` (no misses; no
        write-backs unless the level is write-through)."""
        dbytes = float(self.data_set.evaluate(defines))
        n = len(self.accesses)
        evicts = 0.0 if write_back else float(len({a.array for a in self.accesses if a.is_store}))
        return LCState(self.sweep_iterations, len(self.kernel.loops) + 1, self.data_set, n, 0,
                       dbytes <= capacity, dbytes, *_limit_of(self.data_set, var, sizes, capacity, low), evicts)

    def _states(self, dvals, trips, cand_vals, req_vals, csize, var, sizes, low, write_back: bool):
        """The reuse-distance states of a cache of ``csize`` bytes and the index of the selected one."""
        states = []
        best = 0
        for ci, t in enumerate(self.candidates):
            tval = cand_vals[ci]
            hits = sum(1 for d in dvals if d <= tval and ci > 0)
            misses = len(dvals) - hits
            ok = req_vals[ci] <= csize
            if ok:
                best = ci
            evicts = float(sum(self._written_back(dvals, trips, ci, tval, write_back).values()))
            states.append(LCState(t, t.degree + 1 if ci else 0, self.requirements[ci], hits, misses,
                                  ok, req_vals[ci], *_limit_of(self.requirements[ci], var, sizes, csize, low), evicts))
        # a larger t satisfying implies all smaller ones do for monotone C_req; keep largest
        return states, best

    def _held_traffic(self, cache, it_per_unit, cl) -> LevelTraffic:
        """Traffic of a level holding the whole data set across sweeps: every lookup hits, nothing is
        loaded or evicted; a write-through level still passes every store on (one CL per CL written)."""
        written = {a.array: a.element_size for a in self.accesses if a.is_store}
        stores = 0.0 if cache.write_back else float(sum(written.values())) * it_per_unit / cl
        return LevelTraffic(cache.level, 0.0, stores, len(self.accesses) * it_per_unit, 0.0, int(cl), 0.0)

    def _sweep_notes(self, levels, defines, sweeps, cores: int = 1) -> list:
        """Report notes: where the whole data set stays (repeated sweeps) and what the swaps did."""
        notes = []
        k = self.kernel
        if sweeps == "repeated":
            first = next((lv for lv in levels if lv.holds_data_set), None)
            if first is not None:
                parts = ", ".join(f"{n} {format_bytes(float(p.evaluate(defines)))}"
                                  for n, p in self.data_set_parts.items())
                notes.append(f"repeated sweeps: {first.level} holds the whole data set "
                             f"({format_bytes(first.data_set.requirement_bytes)}: {parts}; capacity "
                             f"{format_bytes(first.capacity)}{_of_cores(cores)}), so no traffic beyond {first.level}; "
                             "'--sweeps single' for a kernel run once")
            if k.swaps:
                pairs = ", ".join(f"swap({x}, {y})" for x, y in k.swaps)
                notes.append(f"swaps applied: {pairs} between sweeps; the whole-data-set condition "
                             "counts the memory of every swapped array")
        elif k.swaps:
            notes.append("single sweep: the swap() calls after the loop nest have no effect")
        return notes


def data_set_parts(kernel, defines: dict, cores: int) -> float:
    """Parts of the data set that ``cores`` cores keep in their caches: the outermost loop's T trips
    split into parts of ceil(T / cores) trips, T / ceil(T / cores) of them (``cores`` when T is a
    multiple; 1 for one core or an empty loop)."""
    if cores <= 1:
        return 1.0
    trips = kernel.loops[0].iterations(defines)
    return trips / -(-trips // cores) if trips else 1.0


def _of_cores(cores: int) -> str:
    """`` in the shares of 20 cores, each sweeping its part`` for several cores (the capacity's meaning)."""
    return f" in the shares of {cores} cores, each sweeping its part" if cores > 1 else ""


def effective_sizes(caches, cores: int = 1, cache_factor: float = 1.0) -> tuple:
    """Bytes of distinct data each cache level keeps for one of ``cores`` active cores.

    Shape: one float per level of ``caches`` (closest to the core first), in bytes. A level offers
    ``size x cache_factor / sharers`` (sharers: the active cores sharing it, at most its
    ``cores_per_group``). A victim cache is exclusive of the level above (a line moves up on a hit
    and comes back on eviction), so the two together keep the sum of their sizes: a victim level's
    effective size adds the level above's (cross-architecture-machine-models.txt §3.3, §5.2.1).
    This holds with ``victim_clean: false`` too: clean evictions are still placed in the victim
    cache, only not counted as link transfers (the semantics of :mod:`loopmodel.cachesim`; Table
    3, EPYC: x is read from L3). Inclusive and non-inclusive levels keep their own size. The layer
    conditions and the whole-data-set condition of a level both compare with this size.
    """
    out = []
    for cache in caches:
        size = cache.size * cache_factor / min(max(cores, 1), cache.cores_per_group)
        out.append(size + out[-1] if cache.type == "victim" and out else size)
    return tuple(out)


def _sweep_iterations(kernel) -> Poly:
    """Inner iterations of one sweep of the nest (the reuse distance across sweeps); zero if the
    bounds of a loop depend on an outer index (no closed form here)."""
    total = _trips(kernel, kernel.loops)
    return Poly() if total is None else total


def _trips(kernel, loops) -> Poly | None:
    """Product of the trip counts of ``loops`` (iterations of their nest), None if a bound
    depends on a loop index (non-rectangular nest: no closed form here)."""
    total = Poly.const(1)
    for lp in loops:
        t = lp.trip_count
        if any(s in kernel.loop_indices for s in t.symbols):
            return None
        total = total * t
    return total


def data_set(kernel) -> tuple:
    """Bytes the loop nest touches per sweep, over all arrays: the whole data set ``D``.

    Per array, the bounding box of its accesses (per dimension, the lowest
    and highest index any access reaches over the loop ranges, at most the
    declared dimension; flattened arrays: the range from the lowest to the
    highest touched element), times the element size: exact for the stencils and streams layer conditions
    apply to, an upper bound otherwise (strides, triangular nests). Where a
    dimension's range has no closed form (bounds depending on outer indices,
    coefficients of unknown sign), the declared dimension is taken. Arrays
    the nest never touches are left out. Arrays that ``swap(x, y)`` calls
    rotate (:meth:`~loopmodel.ir.kernel.Kernel.swap_groups`) each take, over
    repeated sweeps, the box of the whole group, so the memory of every
    member counts.

    Returns:
        ``(total, parts)``: bytes as a :class:`~loopmodel.ir.poly.Poly` in the
        size constants, and ``{array: bytes (Poly)}`` in declaration order.
    """
    boxes = {}
    for a in list(kernel.reads) + list(kernel.writes):
        box = _access_box(kernel, a)
        boxes[a.array] = box if a.array not in boxes else _hull(boxes[a.array], box)
    for group in kernel.swap_groups():
        touched = [boxes[n] for n in group if n in boxes]
        if touched:
            box = touched[0]
            for other in touched[1:]:
                box = _hull(box, other)
            for n in group:
                boxes[n] = box
    parts = {}
    for name, arr in kernel.arrays.items():
        if name in boxes:
            elements = Poly.const(1)
            for d, (lo, hi) in enumerate(boxes[name]):
                elements = elements * _extent(lo, hi, arr.dims[d])
            parts[name] = elements * arr.element_size
    total = Poly()
    for p in parts.values():
        total = total + p
    return total, parts


def _access_box(kernel, access) -> list:
    """Per dimension of the array, ``(lowest, highest)`` index of ``access`` over the loop ranges
    (Polys), or ``(None, None)`` where that has no closed form."""
    idx = kernel.loop_indices
    out = []
    for expr in access.indices:
        lo = hi = strip_indices(expr, idx)
        for lp in kernel.loops:
            c = coefficient(expr, lp.index)
            if c.is_zero():
                continue
            bounds = lp.start.symbols | lp.stop.symbols
            positive = c.constant_value() > 0 if c.is_constant() else all(v > 0 for v in c.terms.values())
            negative = c.is_constant() and c.constant_value() < 0
            if bounds & set(idx) or not (positive or negative):
                lo = hi = None
                break
            # first and (a bound of) the last value of the index
            first, last = lp.start, lp.stop - (1 if lp.step > 0 else -1)
            small, large = (first, last) if lp.step > 0 else (last, first)
            lo = lo + c * (small if positive else large)
            hi = hi + c * (large if positive else small)
        out.append((lo, hi))
    return out


def _extent(lo, hi, dim: Poly) -> Poly:
    """Elements from ``lo`` to ``hi`` in a dimension of ``dim`` elements: at most ``dim`` (indices
    past a row's end, as in ``a[j][i-1]`` at ``i = 0``, touch the neighbouring row); ``dim`` where
    the range has no closed form."""
    if lo is None:
        return dim
    extent = hi - lo + 1
    over = extent - dim
    return dim if over.is_constant() and over.constant_value() > 0 else extent


def _hull(a: list, b: list) -> list:
    """Per-dimension union of two boxes from :func:`_access_box` (``None`` where not comparable)."""
    out = []
    for (lo1, hi1), (lo2, hi2) in zip(a, b):
        if lo1 is None or lo2 is None or not (lo1 - lo2).is_constant() or not (hi1 - hi2).is_constant():
            out.append((None, None))
            continue
        out.append((lo1 if (lo1 - lo2).constant_value() <= 0 else lo2,
                    hi1 if (hi1 - hi2).constant_value() >= 0 else hi2))
    return out


def _le_sym(a: Poly, b: Poly) -> bool:
    """Symbolic ``a <= b`` under the asymptotic ordering."""
    return a.asymptotic_key() <= b.asymptotic_key()


def _smallest_nonempty(kernel, var, defines: dict):
    """The smallest value >= 1 of the size ``var`` at which the kernel can run (every loop runs an
    iteration, every array has elements: :func:`~loopmodel.ir.point.check_point`), the other sizes
    as in ``defines``; None if there is none up to 2**62.

    Loop spans and array dimensions affine in ``var`` give it in closed form; otherwise (bounds on
    outer indices, a quadratic dimension) runnability is taken as monotone in ``var`` and bisected.
    """
    if var is None or var not in defines:
        return 1
    spans = [(lp.stop - lp.start) if lp.step > 0 else (lp.start - lp.stop) for lp in kernel.loops]
    low = 1
    for q in spans + [d for arr in kernel.arrays.values() for d in arr.dims]:
        c = _univariate(q, var, defines)  # q >= 1: a loop runs (integer bounds), a dimension exists
        if isinstance(c, list) and len(c) == 2 and c[1] > 0:
            low = max(low, math.ceil((1 - c[0]) / c[1]))
        elif isinstance(c, list) or c is None:
            return _bisect_runnable(kernel, var, defines)
        elif c < 1:
            return None
    return low


def _bisect_runnable(kernel, var, defines: dict):
    """:func:`_smallest_nonempty` by bisection with :func:`~loopmodel.ir.point.check_point`."""
    def runs(x):
        try:
            check_point(kernel, {**defines, var: x})
        except ModelError:
            return False
        return True

    hi = max(1, int(defines[var]))
    while not runs(hi):
        if hi > 2 ** 62:
            return None
        hi *= 2
    lo = 1
    if runs(lo):
        return lo
    while hi - lo > 1:  # runs(hi), not runs(lo)
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if runs(mid) else (mid, hi)
    return hi


def _nondecreasing_from(coeffs: list, low: float) -> bool:
    """Whether the polynomial ``sum(coeffs[k] x**k)`` does not decrease for ``x >= low``.

    Sufficient: every coefficient of the polynomial shifted to ``low`` (``p(low + y)``, Taylor
    shift) is non-negative. Otherwise its derivative must not be negative at 1025 points from
    ``low`` up to the Cauchy bound of the derivative's roots, beyond which it keeps the sign of
    its leading coefficient."""
    shifted = [Fraction(c) for c in coeffs]
    n = len(shifted)
    for i in range(n):  # Horner: shifted[k] becomes the k-th Taylor coefficient at ``low``
        for k in range(n - 2, i - 1, -1):
            shifted[k] += shifted[k + 1] * Fraction(low)
    if all(c >= 0 for c in shifted):
        return True
    deriv = [k * float(c) for k, c in enumerate(coeffs)][1:]
    while deriv and deriv[-1] == 0:
        deriv.pop()
    if not deriv or deriv[-1] < 0:
        return not deriv
    bound = 1 + max(abs(c / deriv[-1]) for c in deriv)

    def slope(x):
        v = 0.0
        for c in reversed(deriv):
            v = v * x + c
        return v

    return bound <= low or all(slope(low + (bound - low) * j / 1024) >= 0 for j in range(1025))


def _univariate(req: Poly, var, sizes: dict):
    """``req`` with every size but ``var`` substituted: its coefficients in ``var`` (a list), a
    number (no ``var`` left), or None (other symbols left)."""
    p = req.subs({k: v for k, v in sizes.items() if k != var})
    if p.symbols - {var}:
        return None
    if var not in p.symbols:
        return float(p.evaluate({}))
    return p.univariate_coefficients(var)


def _solve_max(req: Poly, var, sizes: dict, csize: float, low=1):
    """Largest real ``var >= low`` with ``req(var) <= csize``; None if none (or none that means
    anything: see :func:`_limit`), inf if all.

    ``low`` is the smallest size at which the kernel runs (:func:`_smallest_nonempty`; None: none).
    Pure-Python bisection on the univariate polynomial left after substituting the other sizes,
    where it does not decrease from ``low`` on (:func:`_nondecreasing_from`; C_req grows with the
    size for every stencil-like kernel).
    """
    if var is None or low is None:
        return None
    coeffs = _univariate(req, var, sizes)
    if coeffs is None:
        return None
    if not isinstance(coeffs, list):
        return math.inf if coeffs <= csize else None
    if not _nondecreasing_from(coeffs, low):
        return None
    coeffs = [float(c) for c in coeffs]

    def f(x):
        v = 0.0
        for c in reversed(coeffs):
            v = v * x + c
        return v

    lo = float(low)
    if f(lo) > csize:
        return None
    hi = 2.0 * lo
    while f(hi) <= csize:
        lo, hi = hi, hi * 2
        if hi > 1e18:
            return math.inf
    for _ in range(200):
        mid = (lo + hi) / 2
        if mid in (lo, hi):  # float resolution reached
            break
        if f(mid) <= csize:
            lo = mid
        else:
            hi = mid
        if hi - lo < min(1e-9 * max(1.0, lo), 0.25):
            break
    # an integer root (8*N - 16 <= 262144 at N = 32770) may lie just above the bisected bound: the
    # largest size keeping the condition is then that integer, not the one below
    k = math.floor(hi)
    return float(k) if lo < k and f(k) <= csize else lo


def _limit_of(req: Poly, var, sizes: dict, csize: float, low) -> tuple:
    """:func:`_limit`, remembered: it depends on the sizes other than ``var`` only, so a sweep of
    ``var`` solves each condition once per cache."""
    return _limit_memo(req, var, tuple(sorted(sizes.items())), csize, low)


@functools.lru_cache(maxsize=8192)
def _limit_memo(req: Poly, var, sizes: tuple, csize: float, low) -> tuple:
    return _limit(req, var, dict(sizes), csize, low)


def _limit(req: Poly, var, sizes: dict, csize: float, low) -> tuple:
    """``(max_size, limit_note)`` of a condition ``req <= csize`` for :class:`LCState`.

    A condition that holds only below ``low`` concerns a loop that does nothing (``k = 4 .. M-4``
    at ``M <= 8``, where the requirement counts a negative number of planes): never fulfilled,
    noting from which size on the loop runs; one that is not monotone in ``var`` from ``low`` on
    gets no limit, and the note says so.
    """
    value = _solve_max(req, var, sizes, csize, low)
    if value is not None or var is None:
        return value, ""
    if low is None:
        return None, f"no {var} with a non-empty iteration space"
    coeffs = _univariate(req, var, sizes)
    if isinstance(coeffs, list) and not _nondecreasing_from(coeffs, low):
        return None, f"not monotone in {var} for {var} >= {low}"
    return None, (f"{var} >= {low} for a non-empty iteration space" if low > 1 else "")


def _limit_notes(levels, var) -> list:
    """Notes on the conditions that get no limit because they are not monotone in ``var``."""
    notes = []
    for lv in levels:
        named = [(f"{st.dimension}D layer condition" if st.dimension else "layer condition", st) for st in lv.states]
        named += [("whole-data-set condition", lv.data_set)] if lv.data_set is not None else []
        for what, st in named:
            if st.limit_note.startswith("not monotone"):
                notes.append(f"{lv.level}: the {what} ({st.requirement} B <= capacity) is {st.limit_note}: "
                             "no limit on the size is reported")
    return notes


def largest_size(max_size):
    """The largest integer size keeping a condition, what the reports print as its limit.

    ``max_size`` (the largest real size keeping it, :attr:`LCState.max_size`) rounded down; None
    (never) and inf (always) are kept. The condition holds at this size and fails at the next one
    (C_req does not decrease with the size where a limit is given).
    """
    if max_size is None or max_size == math.inf:
        return max_size
    return math.floor(max_size)


@functools.lru_cache(maxsize=8192)
def transition_size(max_size):
    """Transition size as printed in kerncraft-tool-paper.txt Listing 5 (nearest integer)."""
    if max_size is None or max_size == math.inf:
        return max_size
    return int(Fraction(max_size).limit_denominator(10 ** 6) + Fraction(1, 2))
