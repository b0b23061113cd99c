"""Cache simulation of a whole kernel function: its loop nests run one after the other on one
simulated hierarchy, the caches passed on from nest to nest and from call to call.

The analysis of a function of several nests takes each nest in its own steady state
(:mod:`loopmodel.workflows.sequence`); this simulation is what it is checked against: it
counts each nest's traffic with the caches as the nests before it left them (the data one nest
leaves in a cache are the warm state of the next), in the second of two calls (the first warms
the hierarchy up). The arrays lie as one layout for the whole function
(:func:`~loopmodel.predictors.simulation.place_arrays`), each nest runs whole, as often as its
time loops say (kerncraft-tool-paper.txt §2.4.1: the cache simulation of Kerncraft, here over the
function), interleaved in the loops they share as the code interleaves them. Its cost is the
function's iterations and runs: :data:`MAX_ITERATIONS` and :data:`MAX_RUNS` bound it.
"""
from __future__ import annotations

import dataclasses

from ..cachesim.hierarchy import Hierarchy
from ..cachesim.nest import NestLoop, RunOptions
from ..errors import ModelError
from ..ir.iteration_count import nest_iterations
from ..ir.poly import Poly
from .simulation import SimulationPredictor, level_specs, place_arrays
from .traffic import LevelTraffic, TrafficPrediction

#: most innermost iterations of one call simulated (two calls are run)
MAX_ITERATIONS = 50_000_000
#: most runs of the simulator per call (nests interleaved in shared loops run once per iteration of them)
MAX_RUNS = 200_000
_STATS = ("load_lines", "store_lines", "hits", "misses", "evicts")


def simulate_function(sequence, machine, defines: dict, calls: int = 2) -> tuple:
    """Per nest of ``sequence`` (a :class:`~loopmodel.ir.sequence.NestSequence`), its traffic in the
    last of ``calls`` calls of the function.

    The nests run as the code runs them: nests that share enclosing loops
    (:attr:`~loopmodel.ir.sequence.SequenceNest.path`) run interleaved in them (gemm's scaling of a
    row of ``C``, then its update, for each ``i``; each nest of a time step, for each ``t``).

    Returns:
        One :class:`~loopmodel.predictors.traffic.TrafficPrediction` per nest, in execution order:
        its ``levels`` core side first, in cache lines per unit of work of that nest (one CL of its
        written array); a nest that does not run at ``defines`` has zeros.

    Raises:
        ModelError: more than :data:`MAX_ITERATIONS` iterations or :data:`MAX_RUNS` runs of a nest
            per call, a level too large to simulate, a bound that is not affine at ``defines``.
    """
    cl = int(machine.cacheline_size)
    specs, _ = level_specs(machine)
    total = sum(n.kernel.total_iterations(n.sizes(defines)) * n.repeats(defines) for n in sequence.nests)
    if total > MAX_ITERATIONS:
        raise ModelError(f"cache simulation of the whole function: {total} iterations per call, more than "
                         f"{MAX_ITERATIONS}: give smaller sizes")
    layout = place_arrays(sequence, defines)
    run = _Run(Hierarchy(specs), specs, defines)
    run.nests = [SimulationPredictor(n.kernel).loop_nest(n.sizes(defines), layout, cl) for n in sequence.nests]
    for _ in range(calls):
        run.reset()
        run.block(list(range(len(sequence.nests))), sequence.nests, 0, {})
    return tuple(_per_unit(run.sums[k], n, defines, specs, cl) for k, n in enumerate(sequence.nests))


class _Run:
    """One simulated call: the nests' runs on the hierarchy, their statistics summed per nest."""

    def __init__(self, hier, specs, defines: dict):
        self.hier, self.specs, self.defines = hier, specs, defines
        self.nests: list = []
        self.sums: list = []
        self.runs = 0

    def reset(self) -> None:
        self.sums = [{spec.name: dict.fromkeys(_STATS, 0) for spec in self.specs} for _ in self.nests]
        self.runs = 0

    def block(self, members: list, nests: tuple, depth: int, env: dict) -> None:
        """Run the nests ``members`` (indices; they share the loops above ``depth``, whose indices
        ``env`` fixes) in order: consecutive ones that share the loop at ``depth`` interleaved in it."""
        k = 0
        while k < len(members):
            first = nests[members[k]]
            group = [members[k]]
            while k + len(group) < len(members) and first.interleaved_with(nests[members[k + len(group)]], depth):
                group.append(members[k + len(group)])
            if len(group) == 1:
                self.whole(group[0], first, depth, env)
            else:
                loop = first.loops[depth]
                for value in _values(loop, {**self.defines, **env}):
                    self.block(group, nests, depth + 1, {**env, loop.index: value})
            k += len(group)

    def whole(self, k: int, nest, depth: int, env: dict) -> None:
        """Run nest ``k`` with the loops above ``depth`` fixed by ``env``: the repeat loops left
        as often as they run, the kernel's loops whole."""
        loop_nest = self.nests[k]
        if loop_nest is None:
            return
        fixed = max(0, depth - len(nest.repeat))
        pinned = _pinned(loop_nest, nest.kernel.loops[:fixed], env)
        runs = _count(nest.repeat[depth:], {**self.defines, **env}) if depth < len(nest.repeat) else 1
        its = _count(nest.kernel.loops, {**self.defines, **env}, fixed)
        if not its:
            return
        for _ in range(runs):
            self.runs += 1
            if self.runs > MAX_RUNS:
                raise ModelError(f"cache simulation of the whole function: more than {MAX_RUNS} runs of its nests "
                                 "per call: give smaller sizes")
            self.hier.run(pinned, RunOptions(its, max_sweeps=1, cold=True))
            for name, st in self.hier.stats().items():
                if name in self.sums[k]:
                    for key in _STATS:
                        self.sums[k][name][key] += st[key]


def _values(loop, env: dict) -> range:
    start, stop = int(loop.start.evaluate(env)), int(loop.stop.evaluate(env))
    return range(start, stop, loop.step)


def _count(loops: tuple, env: dict, fixed: int = 0) -> int:
    """Iterations of ``loops`` (their first ``fixed`` ones at the values of ``env``)."""
    pinned = [dataclasses.replace(lp, start=Poly.const(env[lp.index]), stop=Poly.const(env[lp.index] + lp.step))
              for lp in loops[:fixed]]
    return nest_iterations(tuple(pinned) + tuple(loops[fixed:]), env)


def _pinned(loop_nest, loops: tuple, env: dict):
    """``loop_nest`` with its first loops (``loops``, the kernel's) run once, at their ``env`` values."""
    if not loops:
        return loop_nest
    fixed = [NestLoop(env[lp.index], env[lp.index] + lp.step, lp.step) for lp in loops]
    return dataclasses.replace(loop_nest, loops=tuple(fixed) + tuple(loop_nest.loops[len(loops):]))


def _per_unit(sums: dict, nest, defines: dict, specs, cl: int) -> TrafficPrediction:
    """A nest's summed statistics per unit of work (one CL of its written array)."""
    own = nest.sizes(defines)
    its = nest.kernel.total_iterations(own) * nest.repeats(defines)
    per_unit = nest.kernel.unit_of_work(cl, own).iterations
    scale = per_unit / its if its else 0.0
    levels = tuple(LevelTraffic(spec.name, sums[spec.name]["load_lines"] * scale, sums[spec.name]["store_lines"] * scale,
                                sums[spec.name]["hits"] * scale, sums[spec.name]["misses"] * scale, cl,
                                sums[spec.name]["evicts"] * scale) for spec in specs)
    return TrafficPrediction("SIM", per_unit, levels, (FUNCTION_NOTE,))


#: the note with each nest's traffic from :func:`simulate_function`
FUNCTION_NOTE = ("data traffic from a cache simulation of the whole function (its nests interleaved as the code runs "
                 "them, the caches passed on from nest to nest; second call counted)")


class FunctionTraffic:
    """One nest's traffic from :func:`simulate_function`, as a traffic predictor: what
    :class:`~loopmodel.workflows.analysis.Analyzer` asks its cache simulation for (``predict``)."""

    def __init__(self, traffic: TrafficPrediction):
        self.traffic = traffic

    def predict(self, *_args, **_kwargs) -> tuple:
        """``(TrafficPrediction, None)``: the simulated traffic (no simulation run of the nest alone)."""
        return self.traffic, None
