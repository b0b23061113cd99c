"""Chip power, performance and energy to solution per operating point (cores n, clock f).

ecm-model-slides.txt, "A simple power model for multicore chips" (lines 776-810), and the
Z-plot "Energy to solution vs. performance on the socket (SNB)" after it:

1. power is a quadratic polynomial in the clock, the dynamic part linear in the active
   cores:  W(n, f) = W0 + (W1·f + W2·f²)·n   [W; f in Hz, W1 in W/Hz, W2 in W/Hz²];
2. performance P_ECM(n, f) is linear in n and f until it hits a bottleneck: the ECM model
   at clock f (core-cycle work takes the same cycles, so it scales with f; a memory
   bandwidth in B/s does not, so T_Mem in cycles grows with f) and the multicore model of
   :mod:`loopmodel.models.scaling` (``contention`` or ``saturation``);
3. energy to solution per unit of work is power over performance:
   E(n, f) = W(n, f) / P_ECM(n, f)   [J/it = W / (it/s)].

Cores fill the chips one after the other ("close"): W0 is paid once per chip in use,
ceil(n / cores per chip) of them. The energy-optimal operating point is the (n, f) of least
E; the performance-optimal one that of the largest P (among equals, the least E). For a
core-bound code E = W0/(n·f·c) + (W1 + W2·f)/c falls with n (all cores) and is least at
f = sqrt(W0 / (W2·n)); for a bandwidth-bound code the optimum is at the saturation point,
where more cores add power and no performance (the slides' "bandwidth barrier").

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import math

from .ecm import ecm_model
from .scaling import scaling

#: unit of work of the energy figures: one loop iteration
UNIT = "it"


@dataclass(frozen=True)
class OperatingPoint:
    """One (cores, clock) point.

    Attributes:
        cores: active cores n; clock_hz: core clock f, Hz.
        power_w: chip power W(n, f), W (all chips in use).
        it_per_s: performance P_ECM(n, f), iterations per second.
        energy_j_per_unit: E = W / P, J per iteration.
        limit: what bounds the performance (``core``, ``memory``, ``shared <link>``).
    """
    cores: int
    clock_hz: float
    power_w: float
    it_per_s: float
    energy_j_per_unit: float
    limit: str = ""


@dataclass(frozen=True)
class EnergyResult:
    """Energy and performance over a grid of operating points.

    Attributes:
        points: :class:`OperatingPoint` per (clock, cores), clocks ascending, then cores.
        energy_optimum: the point of least energy per unit of work.
        performance_optimum: the point of largest performance (least energy among equals).
        saving: 1 - E(energy optimum) / E(performance optimum): the fraction of energy the
            energy-optimal point saves (0..1).
        slowdown: 1 - P(energy optimum) / P(performance optimum): the fraction of performance
            it gives up (0..1).
        unit: the unit of work (:data:`UNIT`).
        model: the multicore model (``contention`` or ``saturation``).
        notes: what the figures assume.
        reference: the point of most cores at the highest clock (how a code is often run), or None.
        reference_saving: 1 - E(energy optimum) / E(reference) (0..1), or None.
    """
    points: tuple
    energy_optimum: OperatingPoint
    performance_optimum: OperatingPoint
    saving: float
    slowdown: float
    unit: str = UNIT
    model: str = "contention"
    notes: tuple = ()
    reference: OperatingPoint | None = None
    reference_saving: float | None = None


def chips_in_use(cores: int, cores_per_chip: int) -> int:
    """Chips with at least one active core when ``cores`` fill them one after the other."""
    return max(1, math.ceil(cores / cores_per_chip))


def chip_power(power, cores: int, clock_hz: float, cores_per_chip: int | None = None) -> float:
    """W(n, f) = W0 + (W1·f + W2·f²)·n (ecm-model-slides.txt, "A simple power model for multicore
    chips"), in W; W0 once per chip in use (``cores_per_chip``; None: one chip).

    Args:
        power: :class:`~loopmodel.machine.power.PowerSection` (W, W/Hz, W/Hz²).
        cores: active cores n >= 1; clock_hz: f in Hz.

    Raises:
        ValueError: n < 1, f <= 0, or a clock other than the one a ``per core`` figure was
            measured at.
    """
    if cores < 1 or not clock_hz > 0:
        raise ValueError(f"need cores >= 1 and a positive clock (got {cores}, {clock_hz:g} Hz)")
    chips = 1 if cores_per_chip is None else chips_in_use(cores, cores_per_chip)
    return chips * power.w0 + power.core_power(clock_hz) * cores


def operating_point(power, cores: int, clock_hz: float, it_per_s: float, limit: str = "",
                    cores_per_chip: int | None = None) -> OperatingPoint:
    """The :class:`OperatingPoint` of ``cores`` at ``clock_hz`` with performance ``it_per_s``
    (it/s > 0): E = W / P (slides, model assumption 5), J/it."""
    if not it_per_s > 0:
        raise ValueError(f"performance must be positive (got {it_per_s:g} it/s)")
    w = chip_power(power, cores, clock_hz, cores_per_chip)
    return OperatingPoint(cores, clock_hz, w, it_per_s, w / it_per_s, limit)


def optima(points) -> tuple:
    """``(energy optimum, performance optimum, saving, slowdown)`` of :class:`OperatingPoint`
    s (see :class:`EnergyResult`). Ties: the energy optimum prefers higher performance, then
    fewer cores and a lower clock; the performance optimum (equal within 1e-9 relative)
    prefers less energy.

    Raises:
        ValueError: no points.
    """
    if not points:
        raise ValueError("no operating points")
    e_opt = min(points, key=lambda p: (p.energy_j_per_unit, -p.it_per_s, p.cores, p.clock_hz))
    best = max(p.it_per_s for p in points)
    fastest = [p for p in points if p.it_per_s >= best * (1 - 1e-9)]
    p_opt = min(fastest, key=lambda p: (p.energy_j_per_unit, p.cores, p.clock_hz))
    saving = 1.0 - e_opt.energy_j_per_unit / p_opt.energy_j_per_unit
    slowdown = 1.0 - e_opt.it_per_s / p_opt.it_per_s
    return e_opt, p_opt, max(saving, 0.0), max(slowdown, 0.0)


def energy_grid(performance: dict, power, cores_per_chip: int | None = None, model: str = "contention",
                notes: tuple = ()) -> EnergyResult:
    """Energy and performance of every operating point, with the optima.

    Args:
        performance: ``{(cores, clock_Hz): (it/s, limit)}`` (:func:`ecm_performance`, or
            measured figures).
        power: :class:`~loopmodel.machine.power.PowerSection`.
        cores_per_chip: cores per chip (W0 once per chip in use); None: one chip.
        model, notes: kept in the result.

    Returns:
        :class:`EnergyResult`.

    Raises:
        ValueError: no points, a non-positive performance, or a clock the power data do not cover.
    """
    pts = tuple(operating_point(power, n, f, perf, limit, cores_per_chip)
                for (n, f), (perf, limit) in sorted(performance.items(), key=lambda kv: (kv[0][1], kv[0][0])))
    e_opt, p_opt, saving, slowdown = optima(pts)
    ref = max(pts, key=lambda p: (p.cores, p.clock_hz))
    ref_saving = max(0.0, 1.0 - e_opt.energy_j_per_unit / ref.energy_j_per_unit)
    return EnergyResult(pts, e_opt, p_opt, saving, slowdown, UNIT, model, tuple(notes), ref, ref_saving)


def ecm_performance(traffic, incore, machine, cores: list, clocks: list, model: str = "contention",
                    p0: float | None = None, placement: str = "first-touch", location: str | None = None,
                    memory_bandwidth: float | None = None, per_cores: dict | None = None) -> dict:
    """P_ECM(n, f): the ECM prediction at each clock with the multicore model.

    At clock f the machine model's clock is f (:func:`loopmodel.models.ecm.ecm_model`: in-core
    and cache-link times stay in cycles, a memory bandwidth in B/s becomes fewer B/cy at a
    higher clock), then :func:`loopmodel.models.scaling.scaling` per core count.

    Args:
        traffic: :class:`~loopmodel.predictors.traffic.TrafficPrediction` of the kernel.
        incore: :class:`~loopmodel.models.incore.InCoreResult` (cycles).
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        cores: core counts; clocks: clocks in Hz.
        model, p0, placement, location: as :func:`~loopmodel.models.scaling.scaling`.
        memory_bandwidth: B/s, the memory bus bandwidth (``--mem-bw``).
        per_cores: core count -> traffic of the analysis with that many active cores (row n of
            ``scaling``, :func:`~loopmodel.models.scaling.core_point`); None: ``traffic`` for all.

    Returns:
        ``{(cores, clock_Hz): (it/s, limit)}``.

    Raises:
        ModelError: the in-core time is unknown; ValueError: bad model inputs.
    """
    out = {}
    for f in clocks:
        m = dataclasses.replace(machine, clock=f)
        ecm = ecm_model(traffic, incore, m, memory_bandwidth).require_known()
        at_n = {n: ecm_model(t, incore, m, memory_bandwidth) for n, t in (per_cores or {}).items()}
        res = scaling(ecm, m, list(cores), traffic.iterations_per_unit, model, p0, placement, location, at_n)
        out.update({(pt.cores, f): (pt.it_per_s, pt.limit) for pt in res.points})
    return out
