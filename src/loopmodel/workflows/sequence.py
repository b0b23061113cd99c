"""A kernel function of several loop nests, analysed nest by nest and summed.

Each nest of a :class:`~loopmodel.ir.sequence.NestSequence` is analysed as a kernel of its own
(layer conditions or cache simulation, in-core model, ECM, Roofline: :class:`Analyzer`), with
the nest gcc runs followed as for one kernel (:func:`~loopmodel.workflows.executed.as_compiled`).
The function's time is the sum of the nests' times, each its ECM time per iteration times
its iterations and its repeats (a time loop around it):

    T_call = sum_k repeats_k · iterations_k · T_ECM,k / (it/CL)_k     [cy]

(cross-architecture-machine-models.txt §5.2.3: composing single-loop predictions is simple
with the time-based ECM model; the same sum as ``app``, :mod:`loopmodel.models.application`).
Each nest is analysed in its own steady state: the data it keeps in a cache between its own
runs stay there (``--sweeps repeated``); what the other nests of the function evict or leave
in the caches is not modelled, and notes say where that matters (:func:`_interleaved_note`,
:func:`_warm_note`). With ``--cache-predictor sim`` the traffic of every nest comes from a cache
simulation of the whole function instead (:func:`~loopmodel.predictors.sequence_simulation.simulate_function`:
nests interleaved as the code runs them, the caches passed on), where its size allows.
"""
from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass

from ..errors import EmptyPointError, LoopmodelError, ModelError
from ..predictors.layer_conditions import effective_sizes
from .analysis import Analyzer
from .executed import as_compiled


@dataclass(frozen=True)
class NestAnalysis:
    """One nest's analysis in a function.

    Attributes:
        nest: the :class:`~loopmodel.ir.sequence.SequenceNest`.
        result: its :class:`~loopmodel.workflows.analysis.AnalysisResult` (None: it does nothing
            at these sizes, :attr:`empty`).
        iterations: innermost iterations of one run of the nest.
        repeats: runs per call of the function (its time loops).
        cycles: core cycles of all its runs in one call (None: T_ECM unknown).
        bottleneck: the largest ECM term at the data location (``T_OL``, ``T_nOL``, ``T_L2L3``,
            ...; None without ECM).
        empty: why the nest does nothing at these sizes (None: it runs).
    """

    nest: object
    result: object
    iterations: int
    repeats: int
    cycles: float | None
    bottleneck: str | None
    empty: str | None = None


@dataclass(frozen=True)
class SequenceResult:
    """A function's analysis at one set of sizes.

    Attributes:
        sequence: the :class:`~loopmodel.ir.sequence.NestSequence`; machine: the machine model;
        defines: the sizes; nests: :class:`NestAnalysis` in execution order; notes: on the whole.
    """

    sequence: object
    machine: object
    defines: dict
    nests: tuple
    notes: tuple = ()

    @property
    def total_cycles(self) -> float | None:
        """Core cycles of one call (None where a nest's time is unknown)."""
        cycles = [n.cycles for n in self.nests if n.empty is None]
        return None if any(c is None for c in cycles) else float(sum(cycles))

    @property
    def seconds(self) -> float | None:
        """Seconds of one call on one core at the machine's clock (None: unknown)."""
        total = self.total_cycles
        return None if total is None else total / self.machine.clock

    @property
    def outer(self) -> tuple | None:
        """``(index, cycles per iteration)`` of the loop around every nest (a time loop the nests do not
        use: the first of each one's repeat loops, the same loop), None where there is none or the
        time is unknown."""
        firsts = {(n.nest.path[:1], n.nest.repeat[0].index) if n.nest.repeat else None for n in self.nests}
        total = self.total_cycles
        if len(firsts) != 1 or None in firsts or total is None:
            return None
        loop = self.nests[0].nest.repeat[0]
        trips = loop.iterations(self.defines)
        return (loop.index, total / trips) if trips else None

    def share(self, nest: NestAnalysis) -> float | None:
        """``nest``'s fraction of the call's time (None: unknown)."""
        total = self.total_cycles
        if total is None or nest.cycles is None:
            return None
        return nest.cycles / total if total else 0.0


class SequenceAnalyzer:
    """Analyses every nest of a function with the same machine and settings."""

    def __init__(self, sequence, machine, settings):
        self.sequence = sequence
        self.machine = machine
        self.options = settings
        self.kernel = sequence

    def run(self, defines: dict) -> SequenceResult:
        """Analyse every nest at ``defines`` (size constant -> int) and sum their times.

        Raises:
            LoopmodelError: a nest's analysis failed (one line naming the nest's line).
        """
        simulated, note = self._function_traffic(defines)
        nests = tuple(self._nest(nest, defines, traffic) for nest, traffic in zip(self.sequence.nests, simulated))
        notes = list(self.options.notes) + [n for n in (note, _interleaved_note(self.sequence, self.options.cache_predictor),
                             _warm_note(self.sequence, self.machine, defines, nests, self.options.cores,
                                        self.options.cache_factor)) if n]
        if all(n.empty for n in nests):
            raise EmptyPointError(f"no nest of {self.sequence.source} runs at these sizes: {nests[0].empty}")
        return SequenceResult(self.sequence, self.machine, dict(defines), nests, tuple(notes))

    def _function_traffic(self, defines: dict) -> tuple:
        """``(per nest: its traffic predictor or None, note)``: with ``--cache-predictor sim``, the
        cache simulation of the whole function (:func:`simulate_function`), where its size allows."""
        none = (None,) * len(self.sequence.nests)
        if self.options.cache_predictor != "sim":
            return none, None
        simulation = _function_simulation()
        try:
            traffic = simulation.simulate_function(self.sequence, self.machine, defines)
        except (ModelError, ValueError) as exc:
            return none, f"{getattr(exc, 'message', exc)}; each nest simulated on its own instead"
        return tuple(simulation.FunctionTraffic(t) for t in traffic), None

    def _nest(self, nest, defines: dict, traffic=None) -> NestAnalysis:
        kernel = nest.kernel
        own = nest.sizes(defines)
        repeats = nest.repeats(defines)
        settings = dataclasses.replace(self.options, notes=())
        try:
            analyzer = Analyzer(kernel, self.machine, settings)
            if traffic is not None:
                analyzer.sim = traffic  # the nest as the whole function's simulation saw it (source order)
            else:
                analyzer = as_compiled(analyzer, self.machine, own)
            result = analyzer.run(own)
        except EmptyPointError as exc:
            return NestAnalysis(nest, None, 0, repeats, 0.0, None, str(exc))
        except LoopmodelError as exc:
            raise type(exc)(f"nest at {nest.label}: {exc.message}", file=exc.file, line=exc.line) from None
        try:
            iterations = kernel.total_iterations(own)
        except ValueError as exc:  # a count that needs more enumeration than its budget
            raise ModelError(f"nest at {nest.label}: {exc}", file=self.sequence.source) from None
        ecm, traffic = result.ecm, result.traffic
        if ecm is None or ecm.selected is None:
            return NestAnalysis(nest, result, iterations, repeats, None, None)
        cycles = repeats * iterations * ecm.selected / traffic.iterations_per_unit
        return NestAnalysis(nest, result, iterations, repeats, cycles, bottleneck(ecm))


def _function_simulation():
    """:mod:`loopmodel.predictors.sequence_simulation`, loaded with ``--cache-predictor sim`` only: an
    analysis that does not simulate does not import the simulator (benchmarks/speed_check.py)."""
    return importlib.import_module("..predictors.sequence_simulation", __package__)


def bottleneck(ecm) -> str:
    """The largest term of the ECM model at the data location: ``T_OL``, ``T_nOL`` or a data
    transfer (``T_L2L3``) (ecm-model-slides.txt: the term that dominates the prediction)."""
    terms = [("T_OL", ecm.T_OL or 0.0), ("T_nOL", ecm.T_nOL)]
    terms += [(f"T_{c.name}", c.cycles) for c in ecm.by_location.get(ecm.location, ())]
    return max(terms, key=lambda t: t[1])[0]


def _interleaved_note(sequence, predictor: str) -> str | None:
    """The note on nests that run interleaved in shared loops (gemm's two nests in each ``i``),
    where each is analysed in its own steady state (not with ``--cache-predictor sim``)."""
    if predictor == "sim":
        return None
    groups = [(a, b) for a, b in zip(sequence.nests, sequence.nests[1:]) if a.interleaved_with(b)]
    if not groups:
        return None
    a, b = groups[0]
    return (f"nests {a.label} and {b.label}{' (and others)' if len(groups) > 1 else ''} run interleaved in their "
            "shared loops: the data one leaves in a cache for the other within an iteration are not reused in their own "
            "steady states (--cache-predictor sim simulates the whole function, interleaved, at sizes it can)")


def _warm_note(sequence, machine, defines: dict, nests: tuple, cores: int = 1, cache_factor: float = 1.0) -> str | None:
    """The note where the nests' own steady states may not hold: a nest's data stay in a cache
    level on their own, but the function's data do not fit there (then the other nests evict them
    between its runs, or leave some warm for it: neither is modelled). The capacities are the
    layer conditions' (:func:`~loopmodel.predictors.layer_conditions.effective_sizes`)."""
    caches = machine.caches
    if not caches:
        return None
    sizes = effective_sizes(caches, cores, cache_factor)
    total = sum(int(a.size_elements.evaluate(defines)) * a.element_size for a in sequence.arrays.values())
    fits = next((c.level for c, size in zip(caches, sizes) if total <= size), "MEM")
    order = [lv.level for lv in machine.memory_hierarchy]
    inside = [n.nest.label for n in nests if n.empty is None and n.result is not None
              and order.index(n.result.location) < order.index(fits)]
    if not inside:
        return None
    where = "memory" if fits == "MEM" else f"{fits}"
    return (f"each nest is analysed in its own steady state: the data of {', '.join(inside[:3])}"
            f"{' ...' if len(inside) > 3 else ''} stay in a cache on their own, but the function touches "
            f"{total / 2**20:.3g} MiB, which only {where} holds: what the other nests evict (or leave warm) between "
            "its runs is not modelled (--cache-predictor sim simulates the whole function where its size allows)")

