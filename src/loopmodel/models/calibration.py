"""Machine-model parameters fitted to measurements on the host.

The ECM model's data-transfer time of a link is its busy time plus an optional latency
penalty per cache line (cross-architecture-machine-models.txt §3.1: "the sum of the actual
data transfer time and an optional latency penalty"; §3.4.3), for machines whose buffers
cannot keep enough transfers in flight for the link to be saturated by one core. Its value
is not printed in any data sheet: it is what single-core memory-bound measurements need
beyond the busy time. (The contention model's p0, the other fitted parameter, is
:func:`fit_p0_curve` here, from plain numbers of one ccNUMA domain, or
:func:`loopmodel.models.scaling.fit_p0` from an ECM result and a machine model, placement and
ccNUMA domains included; both search with :func:`minimize_p0`.) :func:`fit_link_bandwidth` finds per-level plateaus of a
working-set sweep.

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
    # the objective is piecewise smooth in the penalty: a grid over [0, largest useful value]
    top = max(s.measured / s.cl_over_link for s in samples if s.cl_over_link > 0)
    p = grid_minimum(lambda q: _squared_error(samples, q), [top * k / 400 for k in range(401)])
    if _squared_error(samples, 0.0) <= _squared_error(samples, p):
        p = 0.0
    return PenaltyFit(p, _mean_error(samples, 0.0), _mean_error(samples, p),
                      tuple(s.predicted(p) for s in samples))


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
    from .scaling import P0_MAX
    return grid_minimum(objective, [P0_MAX * 10 ** (-k / 40) for k in range(120, -1, -1)])


@dataclass(frozen=True)
class P0Fit:
    """The fitted contention parameter p0 of one ccNUMA domain.

    Attributes:
        p0: in (0, P0_MAX].
        error: mean |relative error| of the predicted throughput, in per cent.
        points: (cores, predicted, measured) per core count, in the unit of the measurements.
    """
    p0: float
    error: float
    points: tuple


def _p0_error(cores, measured, t_ecm, t_mem, scale, p0) -> float:
    from .scaling import utilization
    return sum(((scale * utilization(n, t_ecm, t_mem, p0) / t_mem - m) / m) ** 2 for n, m in zip(cores, measured))


def fit_p0_curve(cores, measured, t_ecm: float, t_mem: float, scale: float = 1.0) -> P0Fit:
    """Least-squares p0 of the contention model (cross-architecture-machine-models.txt
    §3.4.4, eq. 5) for a measured memory-bound 1..N-core curve of one ccNUMA domain.

    The prediction is :func:`loopmodel.models.scaling.utilization` u(n) / T_Mem CL/cy,
    multiplied by ``scale`` (e.g. clock in Hz x B per CL for B/s; 1 for CL/cy).

    Args:
        cores: core counts (>= 1), at least 2 distinct points.
        measured: throughput per count (> 0), in the unit ``scale`` converts CL/cy to.
        t_ecm, t_mem: single-core T_ECM and T_Mem in cy/CL (> 0).
    Returns:
        :class:`P0Fit`; p0 minimises the squared relative error over (0, P0_MAX]
        (log grid, then golden-section refinement).
    Raises:
        ValueError: fewer than 2 points, lengths differ, non-positive values.
    """
    from .scaling import utilization
    cores, measured = [int(n) for n in cores], [float(m) for m in measured]
    if len(cores) != len(measured) or len(cores) < 2:
        raise ValueError("need at least 2 (cores, measured) points of equal length")
    if min(cores) < 1 or min(measured) <= 0 or t_ecm <= 0 or t_mem <= 0 or scale <= 0:
        raise ValueError("core counts must be >= 1; throughputs, T_ECM, T_Mem, scale > 0")
    p0 = minimize_p0(lambda p: _p0_error(cores, measured, t_ecm, t_mem, scale, p))
    pred = [scale * utilization(n, t_ecm, t_mem, p0) / t_mem for n in cores]
    error = 100 * sum(abs(p - m) / m for p, m in zip(pred, measured)) / len(cores)
    return P0Fit(p0, error, tuple(zip(cores, pred, measured)))


@dataclass(frozen=True)
class LevelPlateau:
    """Single-core streaming throughput of one memory level.

    Attributes:
        level: the level's name.
        plateau: median throughput well inside the level (unit of the measurements, e.g. B/cy).
        capacity: effective capacity in bytes: the largest size within 10 % of the plateau.
        spread: (max - min) / plateau of the points used for the median.
    """
    level: str
    plateau: float
    capacity: float
    spread: float


def _plateau_end(sizes, measured, lo: float, plateau: float) -> float:
    """Largest size of the run of points within 10 % of ``plateau`` that starts above ``lo``."""
    end = None
    for s, m in sorted(zip(sizes, measured)):
        if s <= lo:
            continue
        if abs(m - plateau) <= 0.1 * plateau:
            end = s
        elif end is not None:
            break
    return end


def fit_link_bandwidth(sizes, measured, capacities: dict) -> tuple:
    """Plateau and effective capacity per level from a working-set sweep
    (cross-architecture-machine-models.txt §3.3: per-level transfer rates).

    Args:
        sizes: working-set sizes in bytes (> 0), at least 2.
        measured: throughput per size (> 0), e.g. B/cy (higher is faster).
        capacities: level name -> nominal capacity in bytes, inner to outer (dict order);
            the last level may be float('inf') for memory.
    Returns:
        tuple of :class:`LevelPlateau`, one per level that has points well inside its range
        (sizes in (2 x previous capacity, capacity / 2]; for memory > 4 x the last capacity).
    Raises:
        ValueError: fewer than 2 points, lengths differ, non-positive values.
    """
    sizes, measured = [float(s) for s in sizes], [float(m) for m in measured]
    if len(sizes) != len(measured) or len(sizes) < 2:
        raise ValueError("need at least 2 (size, measured) points of equal length")
    if min(sizes) <= 0 or min(measured) <= 0 or any(c <= 0 for c in capacities.values()):
        raise ValueError("sizes, throughputs and capacities must be > 0")
    out, prev = [], 0.0
    for name, cap in capacities.items():
        hi = cap / 2 if cap != float("inf") else float("inf")
        lo = 2 * prev if cap != float("inf") else 4 * prev
        inside = sorted(m for s, m in zip(sizes, measured) if lo < s <= hi)
        prev = cap
        if not inside:
            continue
        k = len(inside)
        plateau = (inside[(k - 1) // 2] + inside[k // 2]) / 2
        out.append(LevelPlateau(name, plateau, _plateau_end(sizes, measured, lo, plateau),
                                (inside[-1] - inside[0]) / plateau))
    return tuple(out)


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
