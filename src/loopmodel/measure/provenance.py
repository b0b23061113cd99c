"""The ``probe`` section of a probed machine file: every raw figure and fit, as plain data.

A user reads here what was measured (each benchmark's min, median and max over its
repetitions and the spread), how the fitted parameters came out (residuals of every
hypothesis tried), what could not be measured, and the command that reproduces it
(roofline-measurement-thesis.txt §3.4: report the repetition statistics, not a single figure).
Units are in the key names (``_B``, ``_GB_per_s``, ``_cy``, ``_ns``, ``_Hz``).
"""
from __future__ import annotations

from .probe import KERNELS, data_caches


def _r(x: float, digits: int = 4) -> float:
    return float(f"{x:.{digits}g}")


def bandwidth_row(p) -> dict:
    """One bandwidth point: size, threads, GB/s max (min-of-K time), median, min, spread."""
    hi, med, lo = p.bytes_per_s_max, p.bytes_per_s_median, p.bytes_per_s_min
    return {"threads": p.threads, "bytes_per_thread_B": p.bytes_per_thread, "GB_per_s_max": _r(hi / 1e9),
            "GB_per_s_median": _r(med / 1e9), "GB_per_s_min": _r(lo / 1e9),
            "spread": _r((hi - lo) / hi, 3), "repetitions": len(p.seconds)}


def _topology(topo) -> dict:
    return {"model_name": topo.model_name, "vendor": topo.vendor, "cpus": len(topo.cpus), "sockets": topo.sockets,
            "cores": topo.cores, "threads_per_core": topo.threads_per_core,
            "numa_domains": [list(d) for d in topo.numa_domains], "isa": list(topo.isa),
            "simd_width_B": topo.simd_width,
            "caches": [{"level": c.level, "type": c.type, "size_B": c.size, "ways": c.ways, "sets": c.sets,
                        "line_size_B": c.line_size, "shared_cpus": list(c.shared_cpus),
                        "shared_cores": c.shared_cores} for c in data_caches(topo)]}


def _streams(data) -> list:
    """Aggregate bandwidth of K concurrent read streams, and relative to the first point's."""
    rows, base = [], None
    for p in data.streams:
        k = int(p.kernel.split(":")[1])
        total = 8 * k * p.elements_per_thread * p.sweeps / min(p.seconds)
        base = base or total
        rows.append({"streams": k, "GB_per_s_max": _r(total / 1e9), "relative_to_first": _r(total / base, 3)})
    return rows


def _offsets(data) -> list:
    out = []
    for kernel, level, a, b in data.offsets:
        ba, bb = a.bytes_per_s_max, b.bytes_per_s_max
        out.append({"kernel": kernel, "level": level, "aligned_GB_per_s": _r(ba / 1e9),
                    "offset_8B_GB_per_s": _r(bb / 1e9), "time_ratio_misaligned": _r(ba / bb, 3)})
    return out


def probe_section(data, fits: dict, notes: list) -> dict:
    """The ``probe`` mapping of a machine file (plain YAML data).

    Args:
        data: :class:`~loopmodel.measure.probe.ProbeData`.
        fits: the builder's fit reports (effective capacities, links, penalty, p0).
        notes: what was assumed or could not be measured.
    """
    out = {**{k: v for k, v in data.host.items() if v is not None}}
    opts = data.options
    if opts is not None:
        cores = f"{opts.cores[0]}:{opts.cores[-1]}" if len(opts.cores) > 1 else str(opts.cores[0])
        out["command"] = (f"loopmodel machine probe{' --quick' if opts.quick else ''}"
                          f"{' --coherence' if opts.coherence else ''}"
                          f"{' --power' if getattr(opts, 'power', False) else ''} --cores {cores}")
        out["repetitions"], out["min_time_s"] = opts.repetitions, opts.min_time_s
    out["topology"] = _topology(data.topology)
    if data.clock is not None:
        out["clock"] = {k: (_r(v, 6) if isinstance(v, float) else v) for k, v in data.clock.to_dict().items()}
    if data.incore is not None:
        out["in_core"] = data.incore.to_dict()
    if data.latency is not None:
        hz = data.clock.median_hz if data.clock else None
        out["latency"] = [{"size_B": p.size_bytes, "ns_min": _r(p.ns_min), "ns_median": _r(p.ns_median),
                           "ns_max": _r(p.ns_max), **({"cy_min": _r(p.cycles(hz))} if hz else {})}
                          for p in data.latency.points]
    out["sweep"] = {k: [bandwidth_row(p) for p in pts] for k, pts in data.sweep.items()}
    out["tables"] = {lv: {k: [bandwidth_row(p) for p in pts] for k, pts in per.items() if k in KERNELS}
                     for lv, per in data.tables.items()}
    out["concurrent_streams"] = _streams(data)
    out["misaligned"] = _offsets(data)
    out["training"] = [{**t, "seconds_per_it": _r(t["seconds_per_it"]), "clock_Hz": _r(t["clock_Hz"], 5)}
                       for t in data.training]
    if data.coherence_info:
        out["coherence"] = _plain(data.coherence_info)
    if getattr(data, "power_info", None):
        out["power"] = _plain(data.power_info)
    out["fits"] = _plain(fits)
    out["notes"] = list(dict.fromkeys(notes))
    return out


def _plain(x):
    """Numbers rounded, tuples as lists, keys as strings: YAML-safe plain data."""
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    if isinstance(x, float):
        return _r(x, 6)
    return x
