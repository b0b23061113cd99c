"""How far to trust one prediction: the regimes a kernel at its sizes falls in (regime tags),
and the error the host's validation corpus measured for those regimes.

The tags are computed from the analysis result alone (kernel IR, traffic, ECM, in-core
result, machine model), so that ``validate --corpus`` groups its cases by the same tags that
``analyze`` attaches to a user's kernel.
"""
from __future__ import annotations

#: regime tag -> what it means (the vocabulary shared by ``analyze`` and ``validate --corpus``)
REGIMES = {
    "streaming": "unit-stride streams, no reuse between iterations beyond the cache line",
    "reduction": "a loop-carried sum or product (scalar accumulator)",
    "latency-bound": "a loop-carried dependency chain sets the in-core time",
    "stencil": "several accesses to one array at neighbouring offsets (reuse through layer conditions)",
    "in-place": "an array read and written in the same sweep (Gauss-Seidel style)",
    "strided": "an inner-loop access with a stride above one element (or transposed)",
    "split-loads": "loads not aligned to the SIMD width, crossing cache lines",
    "many-streams": "more concurrent streams than the hardware prefetchers track well",
    "short-inner-loop": "an inner loop of few iterations: loop overhead and remainder code matter",
    "expensive-ops": "division, square root or exponential in the loop body",
    "compute-bound": "the in-core time exceeds the data transfers",
    "single-precision": "float data",
    "near-capacity": "the data set is close to a cache's (effective) capacity",
    "memory-noisy": "memory-bound on a host whose memory measurements spread widely",
}


def regime_tags(result) -> tuple:
    """Regime tags (keys of :data:`REGIMES`) of an analysis result
    (:class:`~loopmodel.workflows.analysis.AnalysisResult`), in :data:`REGIMES` order."""
    return ()
