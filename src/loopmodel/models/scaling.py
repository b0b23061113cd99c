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

T_ECM is the time of one core for data in memory and T_Mem the time the memory
interface is busy per unit of work (bandwidth only; latency penalties slow a single
core but not the saturated interface); n_s, P_sat and the saturation rule are those of
:mod:`loopmodel.models.saturation`. The prediction for n cores, :func:`core_point`, is the
one function behind ``analyze --cores n`` and row n of ``scaling``: it takes the ECM result of
the analysis with n active cores (shared caches divided among them, the data set split among
them: a data set that fits the caches of n cores is not in memory at n cores, whatever it is at
one). Cores fill ccNUMA domains one after the other
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

from dataclasses import dataclass

import math

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
        core_cy_per_cl: T_ECM of one of the n cores for the data location (cy/CL), from the traffic
            with n active cores (the data set split among them, the shared caches too).
        memory_busy_cy_per_cl: T_Mem of one of the n cores (cy/CL; 0 for data in a cache).
        location: the memory level the n cores' data are in (the split data set may fit caches
            that one core's does not).
    """

    cores: int
    domains: int
    rate_cl_per_cy: float
    it_per_s: float
    utilization: float | None
    limit: str
    core_cy_per_cl: float = 0.0
    memory_busy_cy_per_cl: float = 0.0
    location: str = "MEM"


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


def core_point(n: int, ecm, machine, it_per_cl: float, model: str = "contention", p0: float | None = None,
               one_domain: bool = False, location: str | None = None) -> ScalingPoint:
    """Prediction for ``n`` cores, the one function of ``analyze --cores n`` (through
    :func:`loopmodel.models.prediction.predict`: first-touch placement, the data location) and of
    row n of :func:`scaling`.

    Args:
        n: active cores (>= 1).
        ecm: :class:`~loopmodel.models.ecm.ECMResult` of the analysis *with n active cores* (its traffic
            from the caches' shares and the data set's part of n cores), T_ECM known.
        machine: :class:`~loopmodel.machine.model.MachineModel` (clock, ccNUMA layout).
        it_per_cl: iterations per CL of work.
        model: ``saturation`` (:func:`~loopmodel.models.saturation.saturated_rate`: P(n) = min(n·P1, P_sat)
            per ccNUMA domain) or ``contention`` (module docstring, eq. 5); both capped by non-scalable
            shared caches.
        p0: contention parameter (None: the machine model's ``contention_p0``).
        one_domain: every page in one ccNUMA domain (``--placement one-domain``).
        location: memory level the data are in (a key of ``ecm.T_ECM``; None: ``ecm.location``, the
            data location of the n-core analysis).

    Returns:
        :class:`ScalingPoint` (rate in CL/cy, it/s).
    """
    p0 = machine.contention_p0 if p0 is None else p0
    location = location or ecm.location
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
    return ScalingPoint(n, len(counts), rate, rate * it_per_cl * machine.clock, u, limit, t_ecm, t_mem, location)


def scaling(ecm, machine, cores: list, it_per_cl: float, model: str = "contention", p0: float | None = None,
            placement: str = "first-touch", location: str | None = None, per_cores: dict | None = None) -> ScalingResult:
    """Predicted performance for each core count in ``cores``: :func:`core_point` per count.

    Args:
        ecm: :class:`~loopmodel.models.ecm.ECMResult` (single core).
        per_cores: core count -> ECMResult of the analysis with that many active cores (what
            ``scaling`` passes, so that row n equals ``analyze --cores n``); None: ``ecm`` for every
            count (the traffic of one core, as if the data set stayed where it is for one core).
        machine: :class:`~loopmodel.machine.model.MachineModel` (clock, ccNUMA layout, links).
        cores: core counts (each >= 1).
        it_per_cl: iterations per CL of work.
        model: ``contention`` or ``saturation``.
        p0: contention parameter (default: the machine model's ``contention_p0``).
        placement: ``first-touch`` (each domain its own memory) or ``one-domain``.
        location: memory level the data are in (``MEM`` or a cache level); None: each row at the data
            location of its own analysis (``per_cores[n].location``), the summary at ``ecm.location``.

    Returns:
        :class:`ScalingResult`.

    Raises:
        ValueError: unknown model, placement or location, a core count < 1, p0 outside (0, 0.75].
    """
    if model not in MODELS:
        raise ValueError(f"unknown scaling model '{model}' (choose {', '.join(MODELS)})")
    if placement not in PLACEMENTS:
        raise ValueError(f"unknown placement '{placement}' (choose {', '.join(PLACEMENTS)})")
    if location is not None and location not in ecm.T_ECM:
        raise ValueError(f"unknown data location '{location}' (choose {', '.join(ecm.T_ECM)})")
    if any(n < 1 for n in cores):
        raise ValueError("core counts must be at least 1")
    p0 = machine.contention_p0 if p0 is None else p0
    if not 0 < p0 <= P0_MAX:
        raise ValueError(f"p0 must be in (0, {P0_MAX}] (got {p0:g})")
    where = location or ecm.location
    t_ecm = ecm.T_ECM[where]
    t_mem = ecm.memory_busy if where == "MEM" else 0.0
    one_domain = placement == "one-domain"
    per_cores = per_cores or {}
    points = tuple(core_point(n, per_cores.get(n, ecm), machine, it_per_cl, model, p0, one_domain, location)
                   for n in cores)
    sat = saturation_point(t_ecm, t_mem)
    return ScalingResult(model, placement, where, p0, t_ecm, t_mem, sat.cores,
                         sat.it_per_s(it_per_cl, machine.clock), points, it_per_cl, machine.clock,
                         machine.cores_per_numa_domain)


def fit_p0(ecm, machine, measured: dict, it_per_cl: float, placement: str = "first-touch",
           per_cores: dict | None = None) -> tuple:
    """Least-squares fit of p0 to measured performance.

    Args:
        measured: core count -> measured it/s.
        per_cores: as for :func:`scaling`.

    Returns:
        ``(p0, rms_relative_error)``: p0 in (0, P0_MAX] by
        :func:`loopmodel.models.calibration.minimize_p0`.
    """
    def err(p):
        res = scaling(ecm, machine, sorted(measured), it_per_cl, "contention", p, placement, per_cores=per_cores)
        return math.sqrt(sum(((pt.it_per_s - measured[pt.cores]) / measured[pt.cores]) ** 2
                             for pt in res.points) / len(res.points))

    p = minimize_p0(err)
    return p, err(p)
