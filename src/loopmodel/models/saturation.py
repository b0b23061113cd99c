"""The saturation point of the memory interface: one definition for ``analyze`` and ``scaling``.

Sources:

* ecm-model-slides.txt, "ECM model – saturation": performance scales linearly with the
  cores until the bandwidth bottleneck is hit, P(n) = min(n·P_ECM^Mem, b_S / B_C^Mem),
  and n_s = ceil(T_ECM^Mem / T_L3Mem) (example: { 8 || 6 | 9 | 9 | 19 } cy -> T_ECM^Mem
  = 43 cy, n_s = ceil(43 / 19) = 3).
* kerncraft-tool-paper.txt §3.2: n_s = T_ECM,Mem / T_L3-Mem; beyond it "the minimum runtime
  as given by the saturated memory bandwidth".
* cross-architecture-machine-models.txt §3.4.4: the multicore estimate takes the single-core
  estimate T_ECM and "the time the memory interface is busy transferring data", T_Mem, the
  sum of all data-link *busy* times that involve main memory (with a victim L3 fed from
  memory: T_L2Mem + T_L3Mem); the memory-saturation performance is P_sat = work / T_Mem · f.
  §3.1 and §3.4.3: a latency penalty is added to a link's busy time to give its data-transfer
  time in the *single-core* T_ECM (too few buffers to keep one core's transfers in flight);
  it is not time the interface is busy, so it is not in T_Mem.

Hence, with T_Mem the memory busy time without penalties (cy per CL of work):

    n_s   = ceil(T_ECM^Mem / T_Mem)                      cores per ccNUMA domain
    P_sat = it_per_CL · f / T_Mem                         it/s per ccNUMA domain
    P(n)  = min(n · P(1), P_sat) per domain, cores filling domains one after the other

With no memory traffic (T_Mem = 0, e.g. repeated sweeps over a data set held in a cache)
nothing saturates: n_s and P_sat are None and P(n) = n · P(1).

Non-scalable shared caches (links with ``shared_by`` > 1: EPYC's CCX L3, Power9's core-pair
L2/L3) cap the cores sharing them at 1 / T_link CL/cy (cross-architecture paper §5.2.2).
"""
from __future__ import annotations

from dataclasses import dataclass

import math



@dataclass(frozen=True)
class SaturationPoint:
    """Saturation of one ccNUMA domain's memory interface.

    Attributes:
        cores: n_s, cores per ccNUMA domain at which the memory interface saturates; None when
            nothing saturates (no memory traffic) or T_ECM is unknown.
        memory_busy_cy_per_cl: T_Mem, cy per CL of work the memory interface is busy (no
            latency penalties); the aggregate time per CL of a saturated domain.
    """

    cores: int | None
    memory_busy_cy_per_cl: float

    def it_per_s(self, it_per_cl: float, clock_hz: float) -> float | None:
        """P_sat = it_per_CL · f / T_Mem in it/s per domain; None with no memory traffic."""
        if self.memory_busy_cy_per_cl <= 0:
            return None
        return it_per_cl * clock_hz / self.memory_busy_cy_per_cl


def saturation_point(t_ecm_mem: float | None, t_mem: float) -> SaturationPoint:
    """n_s = ceil(T_ECM^Mem / T_Mem) (module docstring).

    Args:
        t_ecm_mem: single-core T_ECM for data in memory, cy/CL (latency penalties included);
            None when unknown.
        t_mem: memory interface busy time T_Mem, cy/CL (penalties excluded).

    Returns:
        :class:`SaturationPoint` (``cores`` None with no memory traffic or unknown T_ECM).
    """
    if t_ecm_mem is None or t_mem <= 0:
        return SaturationPoint(None, max(t_mem, 0.0))
    return SaturationPoint(max(1, math.ceil(t_ecm_mem / t_mem - 1e-9)), t_mem)


def domain_counts(cores: int, cores_per_domain: int) -> list:
    """Active cores per ccNUMA domain with "close" affinity (domains filled one after the other)."""
    ndom = math.ceil(cores / cores_per_domain)
    return [min(cores_per_domain, cores - d * cores_per_domain) for d in range(ndom)]


def domain_rate(m: int, t_ecm: float, t_mem: float) -> float:
    """CL/cy of ``m`` cores on one memory interface by the saturation rule: min(m / T_ECM, 1 / T_Mem)."""
    return m / t_ecm if t_mem <= 0 else min(m / t_ecm, 1.0 / t_mem)


def shared_cap(rate: float, cores: int, t_ecm: float, shared: tuple) -> tuple:
    """``(rate, name)``: ``rate`` (CL/cy) capped by non-scalable shared caches.

    Args:
        rate: aggregate CL/cy of ``cores`` cores before the caps.
        shared: ``(link name, shared_by, busy cy/CL)`` per non-scalable link; cores fill the
            groups of ``shared_by`` cores in order, each group limited to min(k / T_ECM, 1 / busy).

    Returns:
        the capped rate and the name of the link that caps it (None when none does).
    """
    name = None
    for link, group, busy in shared:
        sizes = {}
        for core in range(cores):
            sizes[core // group] = sizes.get(core // group, 0) + 1
        capped = sum(min(k / t_ecm, 1.0 / busy) for k in sizes.values())
        if capped < rate - 1e-12:
            rate, name = capped, link
    return rate, name


def saturated_rate(cores: int, t_ecm: float, t_mem: float, cores_per_domain: int, shared: tuple = (),
                   one_domain: bool = False) -> tuple:
    """P(n) = min(n·P(1), P_sat) per ccNUMA domain, in CL of work per cycle for all cores.

    Args:
        cores: active cores (>= 1); t_ecm: single-core T_ECM (cy/CL); t_mem: T_Mem (cy/CL).
        cores_per_domain: cores per ccNUMA domain (filled one after the other).
        shared: non-scalable links, see :func:`shared_cap`.
        one_domain: all data in one domain (all cores share its interface).

    Returns:
        ``(rate CL/cy, limit)``, limit ``core``, ``memory`` or ``shared <link>``.
    """
    if one_domain and t_mem > 0:
        rate = domain_rate(cores, t_ecm, t_mem)
    else:
        rate = sum(domain_rate(m, t_ecm, t_mem) for m in domain_counts(cores, cores_per_domain))
    limit = "core" if rate >= cores / t_ecm * (1 - 1e-9) else "memory"
    rate, link = shared_cap(rate, cores, t_ecm, shared)
    return rate, (f"shared {link}" if link else limit)
