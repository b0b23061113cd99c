"""Execution-Cache-Memory model (cross-architecture-machine-models.txt §3.4.2-3.4.4).

Per link (eq. 3): busy time = (loads + stores)·CL / b for one half-duplex link,
max(loads·CL / b_in, stores·CL / b_out) for two uni-directional links, plus the
latency penalty per CL. Single-core time for data in level k (eq. 4): the sum
of the non-overlapping contributions up to k, then the maximum with the
overlapping ones. Which contributions overlap is machine data (``overlap``,
``overlap_unless_memory``; paper Table 2); write-through levels and victim caches
fed directly from memory change which links carry what (:func:`contributions_for`).
On Intel only T_OL overlaps:

    T_ECM^L1 = max(T_OL, T_nOL),  T_ECM^L2 = max(T_OL, T_nOL + T_L1L2), ...

Notation ``{ T_OL || T_nOL | T_L1L2 | T_L2L3 | T_L3Mem } cy/CL`` and
``{ T_ECM^L1 \\ T_ECM^L2 \\ ... } cy/CL`` (ecm-model-slides.txt "ECM model –
composition/prediction"). Saturation (:mod:`loopmodel.models.saturation`, the one
definition shared with ``scaling``): n_s = ceil(T_ECM^Mem / T_Mem) with T_Mem the memory
busy time without latency penalties, P(n) = min(n·P(1), P_sat) per ccNUMA domain; the n-core
prediction is :func:`loopmodel.models.scaling.core_point`.

When the in-core model cannot give T_OL (the machine model lacks an operation's
throughput or latency), the data-transfer contributions and ``T_transfer`` (eq. 4
without T_OL) are still computed; T_OL, T_ECM, n_s and the multicore time are None
(unknown) and ``unknown`` says why: a confident number would be wrong.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ..errors import ModelError
from ..machine.bandwidth import ChosenBandwidth, choose_bandwidth
from ..units import format_fixed
from .location import data_location
from .saturation import SaturationPoint, saturation_point


def _fmt(value) -> str:
    """One cy/CL figure of the notation, one decimal rounded half up (2.25 -> 2.3, as the
    reports' tables and the JSON's 2.25 round; :func:`~loopmodel.units.format_fixed`);
    ``n/a`` for an unknown one."""
    return "n/a" if value is None else format_fixed(value, 1)


@dataclass(frozen=True)
class Contribution:
    """One data-transfer contribution (link between two levels).

    Attributes:
        name: ``L1L2``, ``L2L3``, ``L3MEM``...
        cycles: busy time + penalty in cy/CL.
        busy: link busy time in cy/CL; penalty: latency penalty in cy/CL.
        bytes_in / bytes_out: bytes per CL of work toward / away from the core.
        bandwidth: B/cy per direction used.
        source: where the bandwidth came from (machine file or benchmark kernel).
        measured: the benchmark point the bandwidth was taken from
            (:class:`~loopmodel.machine.bandwidth.ChosenBandwidth`: level, kernel, cores), None for
            a figure of the machine file or ``--mem-bw``.
    """

    name: str
    cycles: float
    busy: float
    penalty: float
    bytes_in: float
    bytes_out: float
    bandwidth: tuple
    source: str
    measured: ChosenBandwidth | None = None


@dataclass(frozen=True)
class ECMResult:
    """ECM prediction in cy/CL.

    Attributes:
        T_OL, T_nOL: in-core contributions (T_OL None: unknown, see ``unknown``).
        contributions: data-transfer contributions, core side first.
        T_ECM: level -> cy/CL for data in that level (``L1`` ... ``MEM``); values
            None when T_OL is unknown.
        overlapping: contributions that overlap (machine model).
        saturation_cores: n_s = ceil(T_ECM^Mem / memory_busy), cores per ccNUMA domain that
            saturate the memory interface (:func:`~loopmodel.models.saturation.saturation_point`);
            None when T_ECM is unknown or there is no memory traffic (nothing to saturate).
        memory_contribution: T of the memory link(s) incl. latency penalties (their part
            of the single-core T_ECM^Mem), cy/CL.
        by_location: level -> contributions when the data are in that level.
        memory_busy: cy/CL the memory interface is busy transferring data
            (T_Mem of the contention model, paper §3.4.4; penalties excluded).
        T_transfer: level -> cy/CL of eq. 4 without T_OL: max(T_nOL + the
            non-overlapping transfers, each overlapping transfer) -- the data-transfer
            part of T_ECM, a lower bound of it, known even when T_OL is not.
        unknown: why T_OL (and so T_ECM) is unknown, e.g. the operation whose
            throughput the machine model lacks; None when everything is known.
        location: the data location (:func:`~loopmodel.models.location.data_location`, the one
            rule); :attr:`selected` is T_ECM there.
    """

    T_OL: float
    T_nOL: float
    contributions: tuple
    T_ECM: dict
    overlapping: tuple
    saturation_cores: int
    memory_contribution: float
    levels: tuple = field(default=())
    by_location: dict = field(default_factory=dict)
    memory_busy: float = 0.0
    T_transfer: dict = field(default_factory=dict)
    unknown: str | None = None
    cores_per_domain: int = 1
    shared_links: dict = field(default_factory=dict)
    location: str = "MEM"

    @property
    def selected(self) -> float | None:
        """T_ECM for the data location, cy/CL (None: T_OL unknown): the single-core figure every
        report and command reads."""
        return self.T_ECM[self.location]

    @property
    def saturation(self) -> SaturationPoint:
        """n_s and T_Mem of one ccNUMA domain (P_sat = it_per_CL · f / T_Mem)."""
        return SaturationPoint(self.saturation_cores, self.memory_busy)

    def notation(self) -> str:
        """``{ T_OL || T_nOL | T_L1L2 | ... } cy/CL`` (``n/a`` for an unknown T_OL)."""
        parts = " | ".join(_fmt(c.cycles) for c in self.contributions)
        return f"{{ {_fmt(self.T_OL)} || {_fmt(self.T_nOL)} | {parts} }} cy/CL"

    def prediction_notation(self) -> str:
        """``{ T_ECM^L1 \\ T_ECM^L2 \\ ... } cy/CL`` (``n/a`` for unknown values)."""
        return "{ " + " \\ ".join(_fmt(v) for v in self.T_ECM.values()) + " } cy/CL"

    def require_known(self) -> "ECMResult":
        """This result, for callers that need T_ECM (scaling, applications).

        Raises:
            ModelError: T_OL is unknown (``unknown`` says why).
        """
        if self.unknown:
            raise ModelError(f"no ECM prediction: {self.unknown}")
        return self


#: ``bandwidth_source`` of the memory link under ``--mem-bw`` (the one definition of what it means)
MEM_BW_SOURCE = "--mem-bw: the memory bus bandwidth, all bytes moved (write-allocate traffic included), used as given"


def link_bandwidth(machine, lt, link, memory_bandwidth):
    """``(bandwidths B/cy per direction, source text, benchmark point or None)`` of ``link``.

    Every bandwidth here is a bus bandwidth: bytes the link moves per second, write-allocate
    traffic included, as the contributions count bytes (eq. 3). A measured (benchmark) figure is
    converted to it (:func:`~loopmodel.machine.bandwidth.choose_bandwidth`, the factor named in
    the source); ``memory_bandwidth`` (``--mem-bw``) *is* one, and replaces every direction of the
    link into memory, measured or given in the machine file.

    Args:
        lt: the link's traffic (its ``loads_cl`` and ``stores_cl`` choose the benchmark of a
            ``measured`` link); link: the :class:`~loopmodel.machine.model.Link`;
            memory_bandwidth: ``--mem-bw`` in B/s, or None.

    Raises:
        ModelError: a ``measured`` link without benchmark measurements.
    """
    if memory_bandwidth is not None and link.between[1] == "MEM":
        return [memory_bandwidth / machine.clock] * len(link.bandwidth), MEM_BW_SOURCE, None
    if not link.measured:
        return machine.link_bandwidths_cy(link), "machine model", None
    ch = choose_bandwidth(machine, link.between[1], lt.loads_cl, lt.stores_cl)
    source = (f"{ch.kernel} benchmark, {ch.cores} cores: {ch.reported / 1e9:.4g} GB/s as reported "
              f"x {ch.bandwidth / ch.reported:.4g} for write-allocate traffic")
    return machine.link_bandwidths_cy(link, ch.bandwidth), source, ch


def mem_bw_note(traffic, machine, memory_bandwidth: float) -> str:
    """The note of ``--mem-bw``: what it means, and the machine file's figure it replaces in the same
    terms (a STREAM-type figure given as it is would make the memory term too slow by the
    write-allocate factor)."""
    link = machine.link(machine.memory_hierarchy[-2].level)
    lt = traffic.levels[-1]
    try:
        bws, source, _ = link_bandwidth(machine, lt, link, None)
    except (ModelError, ValueError):
        default = "the machine file gives no memory bandwidth"
    else:
        default = f"without it: {bws[0] * machine.clock / 1e9:.4g} GB/s ({source})"
    return (f"--mem-bw {memory_bandwidth / 1e9:.4g} GB/s is the memory bus bandwidth, write-allocate traffic "
            f"included, used as given; {default}")


def _contribution(name, link, bandwidth, in_cl, out_cl, cl) -> Contribution:
    """Eq. 3: busy time per direction combined by the link's duplex mode, plus the penalty;
    ``bandwidth`` as :func:`link_bandwidth` gives it."""
    bws, source, measured = bandwidth
    b_in, b_out = in_cl * cl, out_cl * cl
    busy = link.busy_cy(b_in, b_out, bws)
    penalty = in_cl * link.penalty_load + out_cl * link.penalty_store
    return Contribution(name, busy + penalty, busy, penalty, b_in, b_out, tuple(bws), source, measured)


def contributions_for(traffic, machine, location: int, bandwidths: list) -> list:
    """Data-transfer contributions when the data set is in memory level ``location``.

    ``location`` indexes ``machine.memory_hierarchy`` (0 = L1, last = MEM). Links
    between the core and the data location carry the predicted traffic; links beyond
    it carry only the stores of write-through levels (cross-architecture paper §3.3:
    every store of a write-through L1 goes to L2, wherever the data are). A victim
    level with ``memory_bypass`` (paper §5.2.1: memory delivers to L2, the L3 receives
    L2's evictions): its upper link carries all misses of the level above when the data
    are in it, only the hits in it (and the evictions) when the data are further out;
    the memory link is split into ``{upper}MEM`` (lines delivered to the level above)
    and ``{victim}MEM`` (write-backs). Returns a list of :class:`Contribution`.
    """
    cl = machine.cacheline_size
    names = [lv.level for lv in machine.memory_hierarchy]
    out = []
    tl = traffic.levels
    for k, lt in enumerate(tl):
        link = machine.link(lt.level)
        bw = bandwidths[k]
        name = machine.link_name(link.between)
        cache = machine.memory_hierarchy[k]
        nxt = machine.memory_hierarchy[k + 1]
        if k >= location:
            if not cache.write_back and lt.stores_cl > 0:  # write-through: stores go on regardless
                out.append(_contribution(name, link, bw, 0.0, lt.stores_cl, cl))
            continue
        if nxt.type == "victim" and nxt.memory_bypass and k + 1 < len(tl):
            served = lt.loads_cl if location == k + 1 else max(lt.loads_cl - tl[k + 1].loads_cl, 0.0)
            out.append(_contribution(name, link, bw, served, lt.stores_cl, cl))
            continue
        if cache.type == "victim" and cache.memory_bypass and nxt.level == "MEM" and link.duplex != "full" and k > 0:
            out.append(_contribution(f"{names[k - 1]}MEM", link, bw, lt.loads_cl, 0.0, cl))
            out.append(_contribution(name, link, bw, 0.0, lt.stores_cl, cl))
            continue
        out.append(_contribution(name, link, bw, lt.loads_cl, lt.stores_cl, cl))
    return out


def memory_involved(parts: list) -> bool:
    """Whether a link into memory carries traffic among the contributions ``parts`` (cy/CL > 0)."""
    return any(c.name.endswith("MEM") and c.cycles > 0 for c in parts)


def transfer_time(incore, parts: list, machine) -> float:
    """Eq. 4 without T_OL, in cy/CL: the non-overlapping contributions (T_nOL and the
    transfers) add up; the result is the maximum of that sum and the overlapping transfers.
    A name in ``machine.overlap`` overlaps; one in ``machine.overlap_unless_memory``
    overlaps unless a link into memory carries traffic (paper Table 2, TX2: "all, if Mem
    involved"): the rule follows the traffic, not the column, so data held in a cache give the
    same time in the memory column as in their own."""
    overlap = set(machine.overlap) | (set() if memory_involved(parts) else set(machine.overlap_unless_memory))
    items = [("T_nOL", incore.T_nOL)] + [(c.name, c.cycles) for c in parts]
    non = sum(v for n, v in items if n not in overlap)
    return max([non] + [v for n, v in items if n in overlap])


def combine(incore, parts: list, machine) -> float | None:
    """Eq. 4: T_ECM = max(T_OL, :func:`transfer_time`) in cy/CL (``T_OL`` always overlaps);
    None when the in-core model could not give T_OL."""
    if incore.T_OL is None:
        return None
    return max(incore.T_OL, transfer_time(incore, parts, machine))


def ecm_model(traffic, incore, machine, memory_bandwidth: float | None = None,
              unknown: str | None = None) -> ECMResult:
    """Combine in-core and data-transfer contributions into the ECM prediction.

    Args:
        traffic: :class:`~loopmodel.predictors.traffic.TrafficPrediction`.
        incore: :class:`~loopmodel.models.incore.InCoreResult`; ``T_OL`` None means
            unknown: T_ECM and n_s are then None too.
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        memory_bandwidth: B/s, the memory bus bandwidth (write-allocate traffic included, used as
            given: ``--mem-bw``) replacing the machine file's for the link into memory.
        unknown: why T_OL is unknown (kept in :attr:`ECMResult.unknown`).

    Returns:
        :class:`ECMResult`; ``contributions`` are those for data in memory,
        ``by_location`` those for every data location (eq. 3-4 of the
        cross-architecture paper).

    Raises:
        ModelError: no memory bandwidth can be determined.
    """
    bandwidths = [link_bandwidth(machine, lt, machine.link(lt.level), memory_bandwidth) for lt in traffic.levels]
    levels = [lv.level for lv in machine.memory_hierarchy]
    t_ecm, t_transfer, by_loc = {}, {}, {}
    for d, level in enumerate(levels):
        parts = contributions_for(traffic, machine, d, bandwidths)
        by_loc[level] = tuple(parts)
        t_transfer[level] = transfer_time(incore, parts, machine)
        t_ecm[level] = combine(incore, parts, machine)
    contribs = by_loc[levels[-1]]
    mem_parts = [c for c in contribs if c.name.endswith("MEM")]
    busy = memory_busy(contribs)
    unknown = (unknown or "T_OL unknown") if t_ecm[levels[-1]] is None else None
    ns = saturation_point(t_ecm[levels[-1]], busy).cores
    names = [machine.caches[0].level] + [c.name for c in contribs]
    shared = {level: shared_links(parts, machine) for level, parts in by_loc.items()}
    return ECMResult(incore.T_OL, incore.T_nOL, tuple(contribs), t_ecm, tuple(sorted(machine.overlap)),
                     ns, sum(c.cycles for c in mem_parts), tuple(names), by_loc, busy, t_transfer, unknown,
                     machine.cores_per_numa_domain, shared, data_location(traffic, machine.memory_hierarchy))


def memory_busy(parts) -> float:
    """T_Mem, cy/CL: the busy times (latency penalties excluded) of the contributions ``parts`` that
    involve memory (``L3MEM``; with a victim L3 fed from memory ``L2MEM`` too), the time the memory
    interface is busy (cross-architecture-machine-models.txt §3.4.4)."""
    return sum(c.busy for c in parts if c.name.endswith("MEM"))


def shared_links(parts, machine) -> tuple:
    """``(link name, shared_by, busy cy/CL)`` of each non-scalable shared link (``shared_by`` > 1 in
    the machine model) that carries traffic among the contributions ``parts`` (cross-architecture
    paper §5.2.2: the cores sharing such a cache share its data-transfer rate)."""
    busy = {c.name: c.busy for c in parts}
    out = []
    for link in machine.links:
        name = machine.link_name(link.between)
        group = link.shared_by
        if group > 1 and busy.get(name, 0) > 0:
            out.append((name, group, busy[name]))
    return tuple(out)
