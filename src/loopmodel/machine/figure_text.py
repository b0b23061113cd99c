"""Each figure of a machine model as a short text (pure; no I/O): the values of the machine
library document (:mod:`loopmodel.fileio.machine_catalog`) and of ``machine diff``, one row per
figure of :func:`loopmodel.machine.provenance.figure_keys`."""
from __future__ import annotations


def size_text(b: float) -> str:
    """A size in bytes as ``32 KiB`` / ``1.875 MiB`` (binary prefixes where a quarter unit divides it)."""
    for unit, scale in (("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if b >= scale and b % (scale // 4 or 1) == 0:
            return f"{b / scale:g} {unit}"
    return f"{b:g} B"


def cache_text(lv) -> str:
    """A cache level (:class:`~loopmodel.machine.model.CacheLevel`) as size, ways, policy and sharing."""
    kind = {"victim": "victim", "inclusive": "incl.", "non-inclusive": "non-incl."}[lv.type]
    shared = f", shared by {lv.cores_per_group}" if lv.cores_per_group > 1 else ""
    return f"{size_text(lv.size)} {lv.ways or '?'}-way {kind}{shared}"


def link_text(lk) -> str:
    """A link (:class:`~loopmodel.machine.model.Link`) as its bandwidth per direction (B/cy or GB/s),
    latency penalty (cy per CL) and sharing."""
    parts = []
    for bw in lk.bandwidth:
        parts.append("measured" if bw.unit == "measured" else
                     f"{bw.value / 1e9:g} GB/s" if bw.unit == "B/s" else f"{bw.value:g} B/cy")
    text = " + ".join(parts) if lk.duplex == "full" else parts[0]
    if lk.penalty_load:
        text += f" (+{lk.penalty_load:g} cy/CL)"
    if lk.shared_by > 1:
        text += f", shared by {lk.shared_by}"
    return text


def dp_flops(m) -> str:
    """Peak double-precision FLOPs per cycle of one core, or ``?`` where the model gives none."""
    dp = m.in_core.flops_per_cycle.get("DP")
    return f"{dp.total:g}" if dp else "?"


def figure_value(m, key: str) -> str:
    """The figure ``key`` (one of :func:`~loopmodel.machine.provenance.figure_keys`) of the machine
    model ``m`` as a short text with units.

    Raises:
        KeyError: ``key`` is not a figure any model has (a level or link ``m`` lacks gives ``—``).
    """
    ic = m.in_core
    if key.startswith("memory_hierarchy."):
        level = next((lv for lv in m.caches if lv.level == key.split(".", 1)[1]), None)
        return cache_text(level) if level else "—"
    if key.startswith("links."):
        link = next((lk for lk in m.links if f"links.{lk.between[0]}{lk.between[1]}" == key), None)
        return link_text(link) if link else "—"
    values = {
        "clock": f"{m.clock / 1e9:g} GHz",
        "cores_per_socket": f"{m.sockets} × {m.cores_per_socket} cores, {m.threads_per_core} thread(s) per core",
        "numa_domains_per_socket": str(m.numa_domains_per_socket),
        "in_core.simd_width": f"{ic.simd_width:g} B, {dp_flops(m)} DP FLOP/cy",
        "in_core.throughput": ", ".join(f"{k} {v:.3g}" for k, v in ic.throughput.items()) + " /cy",
        "in_core.latency": ", ".join(f"{k} {v:.3g}" for k, v in ic.latency.items()) + " cy" if ic.latency else "—",
        "in_core.load": f"{ic.load.instructions_per_cycle:g}/cy, {ic.load.bytes_per_cycle:g} B/cy"
                        + (f", LD+ST {ic.load_store_per_cycle:g}/cy" if ic.load_store_per_cycle else ""),
        "in_core.store": f"{ic.store.instructions_per_cycle:g}/cy, {ic.store.bytes_per_cycle:g} B/cy",
        "in_core.ports": f"stores in {ic.stores_in}, llvm-mca {ic.llvm_mca_cpu or '—'}",
        "overlap": ", ".join(m.overlap) + (f"; unless memory: {', '.join(m.overlap_unless_memory)}"
                                            if m.overlap_unless_memory else ""),
        "contention_p0": f"{m.contention_p0:g}",
        "benchmarks": ", ".join(_best_one_core(lvl, t) for lvl, t in m.benchmarks.measurements.items()) or "—",
        "coherence": f"{len(m.coherence.seconds)} transitions" if m.coherence else "—",
        "power": f"W0 {m.power.w0:g} W" if m.power else "—",
    }
    return values[key]


def _best_one_core(level: str, table) -> str:
    """``L2 70.3 GB/s``: the fastest kernel of a measured level at its smallest core count."""
    best = max((vals[0] for vals in table.bandwidths.values() if vals), default=0.0)
    return f"{level} {best / 1e9:.3g} GB/s at {table.cores[0]} core(s)" if best else level
