"""Machine-model parameters fitted to measurements on the host.

The ECM model's data-transfer time of a link is its busy time plus an optional latency
penalty per cache line (cross-architecture-machine-models.txt §3.1: "the sum of the actual
data transfer time and an optional latency penalty"; §3.4.3), for machines whose buffers
cannot keep enough transfers in flight for the link to be saturated by one core. Its value
is not printed in any data sheet: it is what single-core memory-bound measurements need
beyond the busy time. (The contention model's p0, the other fitted parameter, is
:func:`loopmodel.models.scaling.fit_p0`.)

Pure functions on plain numbers; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PenaltySample:
    """One single-core measurement of a kernel with its data in memory.

    Attributes:
        t_ol: the kernel's T_OL in cy/CL (overlapping in-core time; 0 if unknown).
        t_transfer: the non-overlapping part of T_ECM^Mem without a memory penalty, cy/CL
            (T_nOL + T_L1L2 + ... + the memory link's busy time, ECM eq. 4).
        cl_over_link: cache lines crossing the memory link per CL of work (the count the
            penalty is charged for, loads and write-backs).
        measured: the measured time in cy/CL.
    """
    t_ol: float
    t_transfer: float
    cl_over_link: float
    measured: float

    def predicted(self, penalty: float) -> float:
        """T_ECM^Mem = max(T_OL, t_transfer + penalty x CL over the link), cy/CL (eq. 4)."""
        return max(self.t_ol, self.t_transfer + penalty * self.cl_over_link)


@dataclass(frozen=True)
class PenaltyFit:
    """The fitted penalty and how well it explains the samples.

    Attributes:
        penalty: cy per cache line over the memory link (>= 0).
        error_before, error_after: mean |relative error| of the predictions without and with
            the penalty, in per cent.
        predicted: the prediction of each sample with the penalty, cy/CL.
    """
    penalty: float
    error_before: float
    error_after: float
    predicted: tuple


def _mean_error(samples, penalty: float) -> float:
    return 100 * sum(abs(s.predicted(penalty) - s.measured) / s.measured for s in samples) / len(samples)


def _squared_error(samples, penalty: float) -> float:
    return sum(((s.predicted(penalty) - s.measured) / s.measured) ** 2 for s in samples)


def fit_latency_penalty(samples) -> PenaltyFit:
    """Least-squares fit (relative errors) of one memory-link penalty to ``samples``.

    Args:
        samples: :class:`PenaltySample` sequence, at least one with ``cl_over_link > 0``.

    Returns:
        :class:`PenaltyFit`; the penalty is 0 where the busy times already explain (or
        over-predict) the measurements.

    Raises:
        ValueError: no samples, a non-positive measured time, negative model times, or no
            sample with traffic over the memory link.
    """
    samples = tuple(samples)
    if not samples:
        raise ValueError("no samples to fit a latency penalty to")
    for s in samples:
        if s.measured <= 0 or s.t_transfer < 0 or s.t_ol < 0 or s.cl_over_link < 0:
            raise ValueError(f"bad sample {s}: measured time must be > 0, model times and CL >= 0")
    if not any(s.cl_over_link > 0 for s in samples):
        raise ValueError("no sample moves data over the memory link: the penalty is undetermined")
    # the objective is piecewise smooth in the penalty: a grid over [0, largest useful value],
    # then a ternary refinement around the best grid point
    top = max(s.measured / s.cl_over_link for s in samples if s.cl_over_link > 0)
    grid = [top * k / 400 for k in range(401)]
    best = min(grid, key=lambda p: _squared_error(samples, p))
    lo, hi = max(0.0, best - top / 400), min(top, best + top / 400)
    for _ in range(60):
        a, b = lo + (hi - lo) / 3, hi - (hi - lo) / 3
        if _squared_error(samples, a) <= _squared_error(samples, b):
            hi = b
        else:
            lo = a
    p = (lo + hi) / 2
    if _squared_error(samples, 0.0) <= _squared_error(samples, p):
        p = 0.0
    return PenaltyFit(p, _mean_error(samples, 0.0), _mean_error(samples, p),
                      tuple(s.predicted(p) for s in samples))
