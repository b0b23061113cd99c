"""Roofline bandwidths derived from a machine model's ECM transfer rates, where none is measured.

The Roofline divides each link's data volume by a streaming bandwidth (kerncraft-tool-paper.txt
§2.2/§2.3: measured with the benchmark kernel whose read/write streams match the kernel's).
Where ``benchmarks.measurements`` lacks a level, the bandwidth of that level is derived from the
transfer rates the ECM model already uses (cross-architecture-machine-models.txt §3.4.1-§3.4.2):

* ``L1`` (registers <-> L1): the L1 load and store limits, §3.4.1 eq. 1. A byte mix of a share
  ``f_r`` reads and ``f_w`` writes takes ``max(f_r / b_LD, f_w / b_ST, 1 / b_LDST)`` cy per byte,
  with ``b_LD`` = min(load bytes/cy, load instructions/cy x SIMD width), ``b_ST`` likewise and
  ``b_LDST`` = combined load/store instructions/cy x SIMD width (every access at the widest
  SIMD width: the largest rate the core allows);
* a cache or ``MEM`` level: the link from that level toward the core, §3.4.2 eq. 3: the busy time
  per byte is ``1 / b`` for a half-duplex link (loads and evictions add up) and
  ``max(f_r / b_in, f_w / b_out)`` for two uni-directional links (``duplex: full``); a bandwidth
  in GB/s (the memory link) is converted to B/cy with the clock.

The rate in B/cy is the inverse of that time; times the clock it is B/s of one link. With ``n``
active cores the links in use add up: a link shared by ``s`` cores (``shared_by``, or the
upper cache's ``cores_per_group`` where larger: one link per cache instance) gives
``ceil(n / s)`` links; memory gives one link per ccNUMA domain in use, ``ceil(n / cores per
domain)`` (§3.4.4: the memory-bandwidth saturation is per domain; cores fill the domains one
after the other, as :mod:`loopmodel.machine.bandwidth` adds measured domains). Latency
penalties are left out: the figure is a transfer rate, an upper bound of the bandwidth, so the
Roofline stays an upper bound of the performance.

The bus rates include write-allocate traffic as the link volumes do (no correction applies).
"""
from __future__ import annotations

import math

from ..errors import ModelError
from ..units import format_si
from .bandwidth import ChosenBandwidth, choose_bandwidth, has_measurements

#: ``kernel`` of a derived :class:`~loopmodel.machine.bandwidth.ChosenBandwidth` (the Roofline's
#: "bw kernel" column and JSON ``bandwidth_kernel``)
DERIVED_KERNEL = "ECM transfer rate"


def roofline_bandwidth(machine, level: str, read_streams: float, write_streams: float, cores: int = 1,
                       correct_write_allocate: bool = True) -> ChosenBandwidth:
    """The Roofline bandwidth of ``level`` with ``cores`` active cores: the measured one where the
    machine model has measurements for the level (:func:`~loopmodel.machine.bandwidth.choose_bandwidth`,
    kerncraft-tool-paper.txt §2.2), else the one derived from the ECM transfer rates
    (:func:`derived_bandwidth`).

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        level: ``L1`` (registers <-> L1), ``L2`` ... ``MEM`` (the link into that level).
        read_streams, write_streams: the kernel's traffic at that level (only their ratio matters).
        cores: active cores (>= 1).
        correct_write_allocate: for a measured figure (see ``choose_bandwidth``).

    Returns:
        :class:`~loopmodel.machine.bandwidth.ChosenBandwidth` in B/s (``derived`` set when derived).

    Raises:
        ModelError: no measurement and no transfer rate for the level.
    """
    if has_measurements(machine, level):
        return choose_bandwidth(machine, level, read_streams, write_streams, cores=cores,
                                correct_write_allocate=correct_write_allocate)
    return derived_bandwidth(machine, level, read_streams, write_streams, cores)


def derived_bandwidth(machine, level: str, read_streams: float, write_streams: float,
                      cores: int = 1) -> ChosenBandwidth:
    """Bandwidth of ``level`` for ``cores`` cores derived from the ECM transfer rates (module
    docstring: cross-architecture-machine-models.txt §3.4.1 eq. 1 for L1, §3.4.2 eq. 3 for a
    link, §3.4.4 for memory per ccNUMA domain): rate (B/cy) x clock (Hz) x links in use.

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        level: ``L1`` (the first cache level: its load/store limits) or a later level (the link
            from it toward the core).
        read_streams, write_streams: the kernel's loads and stores at that level (any unit; only
            their ratio matters; both 0 counts as loads only).
        cores: active cores (>= 1).

    Returns:
        :class:`~loopmodel.machine.bandwidth.ChosenBandwidth`: ``bandwidth`` in B/s, ``kernel``
        :data:`DERIVED_KERNEL`, ``cores`` the cores asked, ``derived`` the rate, clock and links.

    Raises:
        ModelError: ``level`` is not in the memory hierarchy, or its link's rate is ``measured``
            (a benchmark figure the machine model does not hold).
    """
    total = read_streams + write_streams
    f_r, f_w = (read_streams / total, write_streams / total) if total > 0 else (1.0, 0.0)
    names = [lv.level for lv in machine.memory_hierarchy]
    if level not in names:
        raise ModelError(f"machine model '{machine.name}' has no level {level}")
    if level == names[0]:
        rate, what = _l1_rate(machine, f_r, f_w)
        share, unit = max(1, machine.memory_hierarchy[0].cores_per_group), "core"
    else:
        rate, what = _link_rate(machine, level, f_r, f_w)
        share, unit = _sharing(machine, level)
    links = math.ceil(max(1, cores) / share)
    bw = rate * machine.clock * links
    per = f" (one per {share} cores)" if unit == "link" and share > 1 else ""
    how = (f"{level} {format_si(bw, 'B/s')} = {rate:.4g} B/cy ({what}) x {format_si(machine.clock, 'Hz')} "
           f"x {links} {unit}{'s' if links > 1 else ''}{per}")
    return ChosenBandwidth(level, DERIVED_KERNEL, bw, max(1, cores), derived=how)


def _l1_rate(machine, f_r: float, f_w: float) -> tuple:
    """``(B/cy, description)`` of registers <-> L1 for a byte mix ``f_r`` reads, ``f_w`` writes
    (eq. 1 of cross-architecture-machine-models.txt §3.4.1 at the widest SIMD width)."""
    ic = machine.in_core
    width = ic.simd_width
    b_ld, b_st = ic.load.bytes_per_cycle_at(width), ic.store.bytes_per_cycle_at(width)
    t = max(f_r / b_ld, f_w / b_st)
    what = f"L1 loads {b_ld:g} B/cy, stores {b_st:g} B/cy"
    if ic.load_store_per_cycle:
        t = max(t, 1.0 / (ic.load_store_per_cycle * width))
        what += f", loads+stores {ic.load_store_per_cycle * width:g} B/cy"
    return 1.0 / t, f"{what}; {_mix(f_r, f_w)}"


def _link_rate(machine, level: str, f_r: float, f_w: float) -> tuple:
    """``(B/cy, description)`` of the link from ``level`` toward the core for a byte mix ``f_r``
    reads, ``f_w`` writes (eq. 3 of cross-architecture-machine-models.txt §3.4.2, duplex rules)."""
    link = next((lk for lk in machine.links if lk.between[1] == level), None)
    if link is None:
        raise ModelError(f"machine model '{machine.name}' has no link into {level}")
    try:
        bws = machine.link_bandwidths_cy(link)
    except ValueError:
        raise ModelError(f"machine model '{machine.name}' has no measured bandwidths for {level} "
                         "(benchmarks.measurements), and its link into it takes the measured bandwidth; "
                         "give the link bandwidth explicitly") from None
    name = f"{link.between[0]}-{link.between[1]}"
    what = (f"{name} {bws[0]:g} B/cy toward the core, {bws[-1]:g} B/cy away, full duplex" if link.duplex == "full"
            else f"{name} {bws[0]:g} B/cy, half duplex")
    return 1.0 / link.busy_cy(f_r, f_w, bws), f"{what}; {_mix(f_r, f_w)}"


def _sharing(machine, level: str) -> tuple:
    """``(cores per link, unit name)`` of the link into ``level``: memory per ccNUMA domain, a
    cache link per ``max(shared_by, cores_per_group of the upper cache)`` cores (module docstring)."""
    names = [lv.level for lv in machine.memory_hierarchy]
    k = names.index(level)
    if k == len(names) - 1:
        return machine.cores_per_numa_domain, "ccNUMA domain"
    link = next(lk for lk in machine.links if lk.between[1] == level)
    share = max(link.shared_by, machine.memory_hierarchy[k - 1].cores_per_group, 1)
    return share, "link"


def _mix(f_r: float, f_w: float) -> str:
    return f"{f_r:.3g} read : {f_w:.3g} write"
