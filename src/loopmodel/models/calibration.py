"""Machine-model parameters fitted to measurements on the host: one-dimensional least-squares
searches (:func:`grid_minimum`), the contention model's p0 (:func:`minimize_p0`, used by
:func:`loopmodel.models.scaling.fit_p0`) and the in-core load+store limit
(:func:`fit_load_store_limit`).

Pure functions on plain numbers; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..machine.model import P0_MAX


def grid_minimum(objective, grid) -> float:
    """The argument minimising ``objective`` (a 1-D fit error): the best point of ``grid``
    (sorted), refined by golden-section search between its two neighbours (the objective need
    not be convex elsewhere); the grid point itself where the refinement is no better."""
    i = min(range(len(grid)), key=lambda k: objective(grid[k]))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, len(grid) - 1)]
    g = (5 ** 0.5 - 1) / 2
    for _ in range(80):
        a, b = hi - g * (hi - lo), lo + g * (hi - lo)
        if objective(a) <= objective(b):
            hi = b
        else:
            lo = a
    return min((lo + hi) / 2, grid[i], key=objective)


def minimize_p0(objective) -> float:
    """The p0 in (0, P0_MAX] that minimises ``objective(p0)`` (a fit error): :func:`grid_minimum`
    over a 121-point log grid from P0_MAX/1000 up to P0_MAX."""
    return grid_minimum(objective, [P0_MAX * 10 ** (-k / 40) for k in range(120, -1, -1)])


@dataclass(frozen=True)
class LoadStoreFit:
    """The combined load+store limit f_LDST of the in-core model fitted to L1 measurements.

    Attributes:
        per_cycle: load and store instructions per cycle together (None: no limit improves the fit).
        error_before, error_after: mean |relative error| in per cent without and with it.
    """
    per_cycle: float | None
    error_before: float
    error_after: float


def _ldst_error(samples, f) -> float:
    return sum(((max(t, n / f if f else 0.0) - m) / m) ** 2 for n, t, m in samples)


def _ldst_mean(samples, f) -> float:
    return 100 * sum(abs(max(t, n / f if f else 0.0) - m) / m for n, t, m in samples) / len(samples)


def fit_load_store_limit(samples) -> LoadStoreFit:
    """Least-squares f_LDST of cross-architecture-machine-models.txt §3.4.1 eq. (1),
    T_nOL = max(n_LD / f_LD, n_ST / f_ST, (n_LD + n_ST) / f_LDST), from kernels measured with
    their data in L1 (where T_ECM = max(T_OL, T_nOL)).

    Args:
        samples: ``(load+store instructions per CL, max(T_OL, n_LD/f_LD, n_ST/f_ST) in cy/CL,
            measured cy/CL)`` tuples; measured > 0.
    Returns:
        :class:`LoadStoreFit`; ``per_cycle`` None where the other limits already explain (or
        over-predict) the measurements.
    Raises:
        ValueError: no samples or a non-positive measurement or instruction count.
    """
    samples = [(float(n), float(t), float(m)) for n, t, m in samples]
    if not samples or any(m <= 0 or n <= 0 for n, _, m in samples):
        raise ValueError("need samples with instruction counts and measured times > 0")
    grid = [2 ** (k / 32) for k in range(-32, 129)]  # 0.5 .. 16 instructions/cy
    f = grid_minimum(lambda x: _ldst_error(samples, x), grid)
    if _ldst_error(samples, None) <= _ldst_error(samples, f):
        return LoadStoreFit(None, _ldst_mean(samples, None), _ldst_mean(samples, None))
    return LoadStoreFit(f, _ldst_mean(samples, None), _ldst_mean(samples, f))
