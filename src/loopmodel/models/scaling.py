"""Multicore scaling from the single-core ECM prediction.

Two models (cross-architecture-machine-models.txt §3.4.4; ecm-model-slides.txt
"ECM model – saturation"):

* ``saturation``: P(n) = min(n·P(1), P_sat) per ccNUMA domain, the slides' rule.
* ``contention``: the memory-bus utilization u(n) of the paper's eq. 5. For one core
  u(1) = T_Mem / T_ECM; for n cores

      u(n) = n·T_Mem / (T_ECM + T_p(n)),   T_p(n) = p0 · u(n-1) · (n-1) · T_Mem,

  i.e. the conflict time T_p is the probability that the bus is busy with the other
  n-1 cores, u(n-1), times the time they use it, (n-1)·T_Mem, scaled by the empirical
  parameter p0 (the equation itself is lost in the paper's extracted text; this is its
  reconstruction from the prose of §3.4.4). u is capped at 1 and P(n) = u(n)·P_sat with
  P_sat = work / T_Mem · f. The paper fits p0 per machine without printing the values;
  loopmodel accepts 0 < p0 <= 0.75 (default 0.5, ``fit_p0`` fits it to a measurement):
  on a grid of T_Mem/T_ECM in (0, 1] and n <= 64 the recursion gives a monotone u(n)
  that reaches 1 exactly for these p0, while from p0 = 0.76 on u(n) can drop when a
  core is added, which no bus does.

T_ECM is the single-core time for data in memory and T_Mem the time the memory
interface is busy per unit of work (bandwidth only; latency penalties slow a single
core but not the saturated interface); n_s, P_sat and the saturation rule are those of
:mod:`loopmodel.models.saturation`, shared with ``analyze --cores``. Cores fill ccNUMA domains one after the other
("close" affinity); with first-touch placement every domain has its own memory
interface and performance adds over domains; with ``one-domain`` placement (the paper's
Gauss-Seidel case) all cores share one domain's interface. Links with ``shared_by`` > 1
(non-scalable shared caches: EPYC's CCX L3, Power9's core-pair L2/L3) cap the
throughput of the cores sharing them at 1 / T_link (paper §5.2.2: "keeping the L2 and
L3 data-transfer rates constant for the cores sharing the resources").

Rates are in cache lines of work per cycle (CL/cy); performance in it/s = rate ·
it_per_CL · f.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..machine.model import P0_MAX  # the limit of contention_p0 is machine data; re-exported here
from .calibration import minimize_p0
from .saturation import domain_counts, domain_rate, saturated_rate, saturation_point, shared_cap

MODELS = ("contention", "saturation")
PLACEMENTS = ("first-touch", "one-domain")


@dataclass(frozen=True)
class ScalingPoint:
    """Prediction for ``cores`` active cores.

    Attributes:
        cores: active cores; domains: ccNUMA domains in use.
        rate_cl_per_cy: units of work (CL) per cycle, all cores together.
        it_per_s: iterations per second (rate · it_per_CL · clock).
        utilization: memory-bus utilization u(n) of the busiest domain (None
            when the data are in a cache).
        limit: what bounds this point: ``core``, ``memory`` or ``shared <link>``.
    """

    cores: int
    domains: int
    rate_cl_per_cy: float
    it_per_s: float
    utilization: float | None
    limit: str


@dataclass(frozen=True)
class ScalingResult:
    """Predicted performance per core count.

    Attributes:
        model, placement, location: inputs (``location``: level the data are in).
        p0: contention parameter used.
        single_core_cy_per_cl: T_ECM for the data location (cy/CL).
        memory_busy_cy_per_cl: T_Mem per core (cy/CL; 0 for data in a cache).
        saturation_cores: n_s = ceil(T_ECM / T_Mem) per domain, or None (data in a cache, no
            memory traffic): :func:`~loopmodel.models.saturation.saturation_point`, as ``analyze``.
        saturated_it_per_s: P_sat = it_per_CL · f / T_Mem of one domain in it/s (None: nothing saturates).
        points: :class:`ScalingPoint` per core count.
        it_per_cl, clock_hz: conversion factors.
    """

    model: str
    placement: str
    location: str
    p0: float
    single_core_cy_per_cl: float
    memory_busy_cy_per_cl: float
    saturation_cores: int | None
    saturated_it_per_s: float | None
    points: tuple
    it_per_cl: float
    clock_hz: float
    cores_per_domain: int


def utilization(n: int, t_ecm: float, t_mem: float, p0: float) -> float:
    """u(n) of the contention model (module docstring); 0 <= u <= 1."""
    if t_mem <= 0:
        return 0.0
    u = min(1.0, t_mem / t_ecm)
    for k in range(2, n + 1):
        u = min(1.0, k * t_mem / (t_ecm + p0 * u * (k - 1) * t_mem))
    return u


def _contention_rate(counts: list, t_ecm: float, t_mem: float, p0: float, one_domain: bool) -> tuple:
    """(CL/cy, u of the busiest domain, limit) of the contention model, cores per domain ``counts``."""
    n = sum(counts)
    if t_mem <= 0:
        return n / t_ecm, None, "core"
    us = [utilization(n, t_ecm, t_mem, p0)] if one_domain else [utilization(m, t_ecm, t_mem, p0) for m in counts]
    rate = sum(u / t_mem for u in us)
    return rate, max(us), "core" if rate >= n / t_ecm * (1 - 1e-9) else "memory"


def _point(n: int, ecm, machine, location: str, model: str, p0: float, one_domain: bool,
           it_per_cl: float) -> ScalingPoint:
    """Prediction for ``n`` cores: the saturation rule (:func:`~loopmodel.models.saturation.saturated_rate`,
    the rule of ``analyze --cores`` too) or the contention model, both capped by non-scalable caches."""
    t_ecm = ecm.T_ECM[location]
    t_mem = ecm.memory_busy if location == "MEM" else 0.0
    per_dom = machine.cores_per_numa_domain
    counts = domain_counts(n, per_dom)
    shared = ecm.shared_links.get(location, ())
    if model == "saturation":
        rate, limit = saturated_rate(n, t_ecm, t_mem, per_dom, shared, one_domain)
        busiest = n if one_domain else max(counts)
        u = domain_rate(busiest, t_ecm, t_mem) * t_mem if t_mem > 0 else None
    else:
        rate, u, limit = _contention_rate(counts, t_ecm, t_mem, p0, one_domain)
        rate, link = shared_cap(rate, n, t_ecm, shared)
        limit = f"shared {link}" if link else limit
    return ScalingPoint(n, len(counts), rate, rate * it_per_cl * machine.clock, u, limit)


def scaling(ecm, machine, cores: list, it_per_cl: float, model: str = "contention", p0: float | None = None,
            placement: str = "first-touch", location: str = "MEM") -> ScalingResult:
    """Predicted performance for each core count in ``cores``.

    Args:
        ecm: :class:`~loopmodel.models.ecm.ECMResult` (single core).
        machine: :class:`~loopmodel.machine.model.MachineModel` (clock, ccNUMA layout, links).
        cores: core counts (each >= 1).
        it_per_cl: iterations per CL of work.
        model: ``contention`` or ``saturation``.
        p0: contention parameter (default: the machine model's ``contention_p0``).
        placement: ``first-touch`` (each domain its own memory) or ``one-domain``.
        location: memory level the data are in (``MEM`` or a cache level).

    Returns:
        :class:`ScalingResult`.

    Raises:
        ValueError: unknown model, placement or location, a core count < 1, p0 outside (0, 0.75].
    """
    if model not in MODELS:
        raise ValueError(f"unknown scaling model '{model}' (choose {', '.join(MODELS)})")
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement '{placement}' (choose {', '.join(PLACEMENTS)})")
    if location not in ecm.T_ECM:
        raise ValueError(f"unknown data location '{location}' (choose {', '.join(ecm.T_ECM)})")
    if any(n < 1 for n in cores):
        raise ValueError("core counts must be at least 1")
    p0 = machine.contention_p0 if p0 is None else p0
    if not 0 < p0 <= P0_MAX:
        raise ValueError(f"p0 must be in (0, {P0_MAX}] (got {p0:g})")
    t_ecm = ecm.T_ECM[location]
    t_mem = ecm.memory_busy if location == "MEM" else 0.0
    one_domain = placement == "one-domain"
    points = tuple(_point(n, ecm, machine, location, model, p0, one_domain, it_per_cl) for n in cores)
    sat = saturation_point(t_ecm, t_mem)
    return ScalingResult(model, placement, location, p0, t_ecm, t_mem, sat.cores,
                         sat.it_per_s(it_per_cl, machine.clock), points, it_per_cl, machine.clock,
                         machine.cores_per_numa_domain)


def fit_p0(ecm, machine, measured: dict, it_per_cl: float, placement: str = "first-touch") -> tuple:
    """Least-squares fit of p0 to measured performance.

    Args:
        measured: core count -> measured it/s.

    Returns:
        ``(p0, rms_relative_error)``: p0 in (0, P0_MAX] by
        :func:`loopmodel.models.calibration.minimize_p0`.
    """
    def err(p):
        res = scaling(ecm, machine, sorted(measured), it_per_cl, "contention", p, placement)
        return math.sqrt(sum(((pt.it_per_s - measured[pt.cores]) / measured[pt.cores]) ** 2
                             for pt in res.points) / len(res.points))

    p = minimize_p0(err)
    return p, err(p)
