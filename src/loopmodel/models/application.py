"""Application models: an ordered sequence of loop kernels (cross-architecture-machine-models.txt §5).

An application (e.g. one iteration of the paper's PCG solver, Algorithm 1) is a list of
kernels, each with its sizes and the number of invocations per application iteration.
Its runtime is the sum of the per-loop runtimes (§5.2.3: "Composing the model from
single-loop predictions is simple due to the time-based formulation of the ECM model"),
single- and multicore:

    T_app(n) = sum_k count_k · W_k / (rate_k(n) · f)

with W_k the units of work (cache lines of the written array) of one invocation of
kernel k and rate_k(n) its predicted throughput on n cores in CL/cy
(:mod:`loopmodel.models.scaling`). Loop-carried dependencies (the Gauss-Seidel sweeps)
enter through the in-core model: their T_OL is the critical path. Synchronisation costs
(OpenMP barriers of the wavefront, reductions across ccNUMA domains) are not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..errors import ModelError
from ..ir.application import AppKernel, AppSpec
from ..ir.iteration_count import nest_iterations
from .scaling import scaling


@dataclass(frozen=True)
class KernelPrediction:
    """Per-kernel results.

    Attributes:
        kernel: the :class:`AppKernel`; analysis: its single-core
        :class:`~loopmodel.workflows.analysis.AnalysisResult`; iterations: innermost iterations per
        invocation; units: CL of work per invocation; seconds: core count -> seconds for
        all ``count`` invocations; scaling: the :class:`~loopmodel.models.scaling.ScalingResult`.
    """

    kernel: AppKernel
    analysis: object
    iterations: int
    units: float
    seconds: dict
    scaling: object


#: what every application prediction leaves out (cross-architecture-machine-models.txt §5
#: sums the kernels' times; the synchronisation between them is not a loop kernel)
SYNCHRONISATION_NOTE = "synchronisation (OpenMP barriers, reductions) is not modelled"


@dataclass(frozen=True)
class AppPrediction:
    """Application runtime per core count (seconds per application iteration); ``notes``:
    what the prediction leaves out or rests on (text and JSON reports print all of them)."""

    spec: AppSpec
    machine: object
    model: str
    cores: tuple
    kernels: tuple
    total_seconds: dict
    notes: tuple = (SYNCHRONISATION_NOTE,)


def iterations(kernel, defines: dict) -> int:
    """Innermost-loop iterations of one invocation of ``kernel``, exact for triangular nests too
    (:func:`~loopmodel.ir.iteration_count.nest_iterations`).

    Raises:
        ModelError: a loop bound needs a size missing from ``defines``, or the nest needs more
            outer points enumerated than the count allows (one line each).
    """
    try:
        return nest_iterations(kernel.loops, defines)
    except KeyError as exc:
        missing = exc.args[0]
        raise ModelError(f"{kernel.source}: the loop bounds need the size '{missing}', which has no value") from None
    except ValueError as exc:
        raise ModelError(f"{kernel.source}: {exc}") from None


def predict(spec: AppSpec, analyses: list, machine, cores: list, model: str = "contention",
            p0: float | None = None, per_cores: list | None = None, notes: tuple = ()) -> AppPrediction:
    """Sum the per-kernel predictions.

    Args:
        spec: the application.
        analyses: one single-core :class:`~loopmodel.workflows.analysis.AnalysisResult` (with ECM)
            per kernel of ``spec``, same order.
        per_cores: per kernel, core count -> ECM result of its analysis with that many active
            cores (as ``scaling``'s rows); None: the single-core one for every count.
        machine: the machine model (clock, ccNUMA layout).
        cores: core counts.
        model: multicore model of :func:`loopmodel.models.scaling.scaling`.
        notes: notes of the inputs (e.g. which probe ``-m host`` rests on), put before
            :data:`SYNCHRONISATION_NOTE` in the prediction's ``notes``.

    Returns:
        :class:`AppPrediction`.

    Raises:
        ModelError: a kernel has no ECM prediction or an unsupported loop nest.
    """
    preds = []
    totals = {n: 0.0 for n in cores}
    for i, (k, res) in enumerate(zip(spec.kernels, analyses)):
        if res.ecm is None:
            raise ModelError(f"{k.path}: no ECM prediction for application kernel '{k.name}'")
        it = res.traffic.iterations_per_unit
        n_it = iterations(res.kernel, k.defines)
        units = n_it / it
        at_n = per_cores[i] if per_cores else None
        sc = scaling(res.ecm, machine, list(cores), it, model, p0, k.placement, per_cores=at_n)
        secs = {}
        for pt in sc.points:
            secs[pt.cores] = k.count * units / (pt.rate_cl_per_cy * machine.clock)
            totals[pt.cores] += secs[pt.cores]
        preds.append(KernelPrediction(k, res, n_it, units, secs, sc))
    return AppPrediction(spec, machine, model, tuple(cores), tuple(preds), totals,
                         tuple(dict.fromkeys((*notes, SYNCHRONISATION_NOTE))))
