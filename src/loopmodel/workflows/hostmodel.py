"""A machine model of the host from its measurements (:class:`~loopmodel.measure.probe.ProbeData`).

What is read (topology, clock, in-core figures, per-level bandwidth tables) goes into the
model as measured; what the model assumes is fitted, not guessed
(cross-architecture-machine-models.txt §3.3–3.4):

* the effective capacity of every cache, from the single-core working-set sweep
  (:func:`loopmodel.models.link_fit.effective_capacities`);
* the bandwidth of every cache-to-cache link and the overlap and duplex rules, from the
  single-core times of Kerncraft's benchmark kernels (kerncraft-tool-paper.txt §2.2) with their
  data in each level, each hypothesis fitted and the one with the smallest residual kept
  (:func:`loopmodel.models.link_fit.fit_links`); the ECM model itself (this package's
  analysis of the benchmark kernels as C loops) says how many bytes cross each link;
* the memory link's latency penalty (§3.3, eq. 3) from the single-core memory times, fitted
  under each overlap hypothesis with the link bandwidths
  (:func:`loopmodel.models.link_fit.fit_hypothesis`), next to the estimate from the measured
  latency and bandwidth;
* the in-core model's combined load+store limit from the L1 times
  (:func:`loopmodel.models.calibration.fit_load_store_limit`);
* the contention parameter p0 (§3.4.4, eq. 5) from the 1..N-core memory curves
  (:func:`loopmodel.models.scaling.fit_p0`).

With ``--coherence`` the measured MESI transition table goes into the ``coherence`` section
as measured (benchmark-based-coherence-model.txt §IV), its provenance into ``probe.coherence``.
With ``--power`` the fitted chip power model W0, W1, W2 (or W0 and the power per core at the
one clock measured) goes into the ``power`` section, the runs into ``probe.power``.

The result is a plain mapping in the machine-file format, validated against the schema,
with a ``probe`` section holding every raw figure and fit (provenance).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import time

from ..compiled.llvm_mca import find_llvm_mca
from ..errors import LoopmodelError, MachineError
from ..fileio.c_kernel import parse_kernel
from ..fileio.machine_schema import validate_mapping
from ..fileio.machine_writer import coherence_mapping, power_mapping
from ..machine.bandwidth import write_allocate_factor
from ..measure.host_cpu import llvm_mca_cpu_for, llvm_mca_cpus, mca_latency_check
from ..measure.incore_bench import in_core_section, split_extra
from ..measure import probe as measure_probe
from ..measure.probe import (BENCH_KERNELS, ELEMENT, KERNELS, TRAINING_SOURCE, cy_per_cl, data_caches,
                             effective_sizes, host_flags, point_seconds_per_it)
from ..measure.probe_check import EXTRA_ATTEMPTS, RERUN_MIN_S, RERUN_TIME_FRACTION, self_check
from ..measure.provenance import probe_section
from ..models.calibration import fit_load_store_limit
from ..models.link_fit import KernelTransfers, fit_links
from ..models.scaling import fit_p0
from ..models.nest_entry import fit_nest_entry
from ..models.short_loops import fit_short_loop
from .analysis import Analyzer, AnalyzerSettings

#: the benchmark kernels as loopmodel C kernels (the ECM model's view of them)
BENCH_SOURCES = {
    "load": "double a[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n    s = s + a[i];\n",
    "copy": "double a[N], b[N];\n\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i];\n",
    "update": "double a[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n    a[i] = s * a[i];\n",
    "triad": "double a[N], b[N], c[N], d[N];\n\nfor (int i = 0; i < N; ++i)\n    a[i] = b[i] + c[i] * d[i];\n",
    "daxpy": "double a[N], b[N];\ndouble s;\n\nfor (int i = 0; i < N; ++i)\n    a[i] = a[i] + s * b[i];\n",
}


@dataclass(frozen=True)
class HostModel:
    """A probed machine model.

    Attributes:
        mapping: the machine file's content (plain YAML data), validated.
        machine: the validated :class:`~loopmodel.machine.model.MachineModel`.
        notes: what had to be assumed or could not be measured.
        self_check: the :class:`~loopmodel.measure.probe_check.SelfCheck` of the measurements
            (:func:`build_checked_host_model`), None where not checked.
    """
    mapping: dict
    machine: object
    notes: tuple
    self_check: object = None


def build_host_model(data) -> HostModel:
    """The machine model of the probed host.

    Args:
        data: :class:`~loopmodel.measure.probe.ProbeData`.
    Returns:
        :class:`HostModel`.
    Raises:
        MachineError: the measurements cannot make a valid model (no clock, no memory
            measurement); one line saying what is missing.
    """
    if data.clock is None:
        raise MachineError("the clock could not be measured, so no cycle-based model can be built")
    if "MEM" not in data.tables:
        raise MachineError("no memory bandwidth could be measured, so the memory link has no bandwidth")
    if not data_caches(data.topology):
        raise MachineError("the caches could not be read (no /sys/devices/system/cpu/cpu*/cache here, e.g. in a "
                           "container): a machine model needs their sizes; probe on the host itself")
    data = dataclasses.replace(data, host=dict(data.host))  # the llvm-mca choice is added to it; not the caller's
    notes = list(data.notes)
    effective = effective_sizes(data.topology, data.sweep)
    mapping = _skeleton(data, effective, notes)
    fits = {"effective_capacity_B": effective}
    machine = validate_mapping(mapping, "<probe>")
    mapping, fits["load_store_limit"] = _fit_load_store(mapping, machine, data, notes)
    machine = validate_mapping(mapping, "<probe>")
    transfers = _transfers(machine, data)
    mapping, fits["links"] = _fit_links(mapping, transfers, notes)
    machine = validate_mapping(mapping, "<probe>")
    fits["latency_estimate"] = _latency_estimate(data, machine)
    mapping, fits["contention_p0"] = _fit_p0(mapping, machine, data, notes)
    mapping, fits["short_loops"] = fit_short_loops(mapping, data, notes)
    mapping, fits["nest_entry"] = fit_nest_entry_cy(mapping, data, notes)
    if data.coherence is not None:
        mapping["coherence"] = coherence_mapping(data.coherence)
        notes += [f"coherence: {n}" for n in data.coherence.notes]
    if getattr(data, "power", None) is not None:
        mapping["power"] = power_mapping(data.power)
        notes += [f"power: {n}" for n in data.power.notes]
    mapping["probe"] = probe_section(data, fits, notes)
    machine = validate_mapping(mapping, "<probe>")
    return HostModel(mapping, machine, tuple(notes))


#: the order in which failing steps are measured again: the clock first (every cy figure
#: depends on it), the link fit's inputs last (the table re-runs may already have fixed it)
RERUN_ORDER = ("clock", "bandwidth tables", "latency", "in-core", "link fit")


def build_checked_host_model(data, remeasure=measure_probe.remeasure, fit=build_host_model,
                             now=time.monotonic) -> HostModel:
    """The model of the probed host after its self-check (:mod:`loopmodel.measure.probe_check`).

    Each check that fails has its step measured again (:func:`loopmodel.measure.probe.remeasure`
    keeps per point the better measurement) and the model fitted again, up to
    :data:`~loopmodel.measure.probe_check.EXTRA_ATTEMPTS` re-runs per step and a total time of
    :data:`~loopmodel.measure.probe_check.RERUN_TIME_FRACTION` of the probe's duration (at
    least :data:`~loopmodel.measure.probe_check.RERUN_MIN_S` s). What stays uncertain is
    written into ``probe.self_check`` of the model.

    Args:
        data: :class:`~loopmodel.measure.probe.ProbeData`.
        remeasure: ``remeasure(data, step, points) -> ProbeData`` (the probe's).
        fit: ``fit(data) -> HostModel`` (:func:`build_host_model`).
        now: clock in seconds (``time.monotonic``).
    Returns:
        :class:`HostModel` with ``self_check`` set.
    Raises:
        MachineError: as :func:`build_host_model`.
    """
    start = now()
    budget = max(RERUN_MIN_S, RERUN_TIME_FRACTION * float(data.host.get("duration_s") or 0.0))
    attempts: dict = {}
    stopped = ""
    while True:
        model = fit(data)
        check = self_check(data, link_residual(model.mapping), attempts)
        plan = rerun_plan(check, attempts)
        if not plan or stopped:
            break
        for step, points in plan:
            if now() - start >= budget:
                stopped = f"time bound of {budget:.0f} s reached"
                break
            data = remeasure(data, step, points)
            attempts[step] = attempts.get(step, 1) + 1
    check = dataclasses.replace(check, rerun_s=now() - start, stopped=stopped)
    mapping = {**model.mapping, "probe": {**model.mapping["probe"], "self_check": check.to_mapping()}}
    return HostModel(mapping, validate_mapping(mapping, "<probe>"), model.notes, check)


def rerun_plan(check, attempts: dict) -> list:
    """``[(step, points), ...]`` to measure again: the steps of the failing checks that have
    re-runs left, in :data:`RERUN_ORDER`; ``points`` are the failing points' keys."""
    todo: dict = {}
    for c in check.checks:
        if not c.ok and attempts.get(c.step, 1) < 1 + EXTRA_ATTEMPTS:
            todo.setdefault(c.step, []).extend(k for k, _ in c.points)
    return [(step, tuple(todo[step])) for step in RERUN_ORDER if step in todo]


def link_residual(mapping: dict) -> float | None:
    """RMS relative residual (a fraction) of the chosen link hypothesis in a model's
    ``probe.fits.links``; None where the links were not fitted."""
    chosen = (((mapping.get("probe") or {}).get("fits") or {}).get("links") or {}).get("chosen")
    return chosen["residual_percent"] / 100 if chosen else None


def _skeleton(data, effective: dict, notes: list) -> dict:
    """The model before the fits: topology, clock, in-core, hierarchy, placeholder links."""
    topo, hz = data.topology, data.clock.median_hz
    cores = max(topo.cores, 1)
    return {
        "name": f"host-{data.host.get('hostname', 'unknown')}",
        "description": f"{topo.model_name or 'unknown CPU'}: measured by loopmodel machine probe on "
                       f"{data.host.get('date', '?')}",
        "model_name": topo.model_name, "micro_architecture": data.host.get("native_cpu") or "",
        "isa": "aarch64" if data.host.get("machine") in ("aarch64", "arm64") else "x86",
        "clock": f"{hz / 1e9:.3f} GHz", "sockets": max(topo.sockets, 1),
        "cores_per_socket": max(cores // max(topo.sockets, 1), 1), "threads_per_core": max(topo.threads_per_core, 1),
        "numa_domains_per_socket": max(len(topo.numa_domains) // max(topo.sockets, 1), 1),
        "cacheline_size": f"{_line(topo)} B",
        "in_core": _in_core(data, notes),
        "memory_hierarchy": _hierarchy(topo, effective, notes),
        "links": _placeholder_links(topo),
        "overlap": ["T_OL"],
        "benchmarks": _benchmarks(data),
        "compiler": {data.options.compiler if data.options else "gcc": data.host.get("compiler_flags") or host_flags()},
        "sources": ["every figure measured on this host by 'loopmodel machine probe' (see the probe section): "
                    "topology from sysfs, clock from a dependent-add chain, in-core figures from instruction "
                    "micro-benchmarks, bandwidths from the benchmark kernels of the Kerncraft paper (Hammer et al.) §2.2; "
                    "link bandwidths, overlap, duplex, latency penalty and p0 fitted "
                    "(Hofmann et al., Bridging the Architecture Gap §3.3-3.4)"],
    }


def _line(topo) -> int:
    caches = data_caches(topo)
    return caches[0].line_size if caches else 64


def _in_core(data, notes: list) -> dict:
    """The ``in_core`` section: measured instruction figures at the SIMD width the compiler
    uses on this host, with the llvm-mca CPU model that fits it (and its latencies checked)."""
    isa_width = data.topology.simd_width or 16
    width = data.host.get("simd_width_B") or isa_width
    if width < isa_width:
        notes.append(f"the compiler vectorizes with {width} B registers here ({data.host.get('compiler_flags')}), "
                     f"although the ISA has {isa_width} B: the in-core figures are those of {width} B instructions")
    section = _measured_in_core(data, width, notes)
    native = data.host.get("native_cpu")
    cpu = _llvm_mca_cpu(native, notes) if native else None
    data.host["llvm_mca_cpu"] = cpu
    if cpu and (data.incore is None or _check_llvm_mca(data, cpu, width, notes)):
        section["llvm_mca_cpu"] = cpu
    elif cpu:
        notes.append(f"in_core.llvm_mca_cpu is left out, so that '--incore auto' uses the analytic model with the "
                     f"measured figures; add 'llvm_mca_cpu: {cpu}' to the file to use llvm-mca anyway")
    return section


def measured_in_core(incore, width: int) -> dict:
    """The ``in_core`` section of the measured figures ``incore``
    (:class:`~loopmodel.measure.incore_bench.InCoreBenchResult`) at ``width`` B
    (:func:`~loopmodel.measure.incore_bench.in_core_section`) with ``load.split_extra`` and
    ``store.split_extra`` (:func:`~loopmodel.measure.incore_bench.split_extra`, measured by the
    probe). The load figure comes from the mixed-stream pattern of a stencil (an aligned, a split
    and an unaligned stream, LOAD_SPLIT_MIXED) because that is how a kernel's split loads run,
    between aligned ones, and what the models charge per split load
    (:mod:`loopmodel.models.split_access`); a loop of split loads alone charges each both lines
    back to back and reads higher (its figure stays in ``probe.in_core.derived.load_split_extra``).
    Measurements without the mixed form (older probes) give the single-stream figure; the store
    figure is the single-stream one.

    Raises:
        ToolError: LOAD or STORE throughput was not measured.
    """
    section = in_core_section(incore, width)
    for kind in ("load", "store"):
        extra, _ = split_extra(incore, kind)
        if extra is not None:
            section[kind] = {**section[kind], "split_extra": round(extra, 3)}
    return section


def _measured_in_core(data, width: int, notes: list) -> dict:
    if data.incore is not None:
        try:
            return measured_in_core(data.incore, width)
        except LoopmodelError as exc:
            notes.append(f"in-core figures incomplete ({exc})")
    notes.append("in-core figures not measured: one ADD, MUL and FMA, two loads and one store of full SIMD "
                 "width per cycle are ASSUMED; treat T_OL and T_nOL with care")
    return {"simd_width": f"{width} B", "throughput": {"ADD": 1, "MUL": 1, "FMA": 1, "DIV": 0.1},
            "latency": {"ADD": "4 cy", "MUL": "4 cy", "FMA": "4 cy", "DIV": "15 cy"},
            "load": {"instructions_per_cycle": 2, "bytes_per_cycle": f"{2 * width} B/cy"},
            "store": {"instructions_per_cycle": 1, "bytes_per_cycle": f"{width} B/cy"}}


def _llvm_mca_cpu(native: str, notes: list) -> str | None:
    path = find_llvm_mca()
    if path is None:
        notes.append("llvm-mca not found: no llvm-mca CPU model chosen (the analytic in-core model is used)")
        return None
    cpu, note = llvm_mca_cpu_for(native, llvm_mca_cpus(path))
    if note:
        notes.append(note)
    return cpu


def _check_llvm_mca(data, cpu: str, width: int, notes: list) -> bool:
    """Whether llvm-mca's model ``cpu`` has this host's ADD, MUL and FMA latencies (within 20 %)."""
    measured = {op: data.incore.latency(op, width) for op in ("ADD", "MUL", "FMA")}
    rows, warn = mca_latency_check(cpu, {k: v for k, v in measured.items() if v}, width,
                                   data.host.get("machine") in ("aarch64", "arm64"))
    data.host["llvm_mca_latency_check"] = list(rows)
    notes.extend(warn)
    return not warn


def _hierarchy(topo, effective: dict, notes: list) -> list:
    caches = data_caches(topo)
    line = _line(topo)
    cores = max(topo.cores, 1)
    out = []
    for c in caches:
        name = f"L{c.level}"
        ways = c.ways or 8
        size = min(effective.get(name, c.size), c.size)
        sets = max(int(size // (ways * line)), 1)
        if size < 0.9 * c.size:
            notes.append(f"{name}: effective capacity {size / 2**20:.3g} MiB measured, the system reports "
                         f"{c.size / 2**20:.3g} MiB; the model uses the effective capacity")
        out.append({"level": name, "size": f"{sets * ways * line} B", "sets": sets, "ways": ways,
                    "cores_per_group": max(c.shared_cores, 1), "groups": max(cores // max(c.shared_cores, 1), 1),
                    "replacement": "LRU", "write_allocate": True, "write_back": True})
    if caches:
        notes.append("cache inclusion cannot be read from sysfs: every level is modelled non-inclusive")
    per_domain = max(cores // max(len(topo.numa_domains), 1), 1)
    out.append({"level": "MEM", "cores_per_group": per_domain})
    return out


def _placeholder_links(topo) -> list:
    names = [f"L{c.level}" for c in data_caches(topo)] + ["MEM"]
    links = [{"between": [a, b], "bandwidth": "64 B/cy"} for a, b in zip(names, names[1:-1])]
    links.append({"between": [names[-2], "MEM"], "bandwidth": "measured"})
    return links


def _benchmarks(data) -> dict:
    kernels = {k: {**v, "element_size": f"{ELEMENT} B"} for k, v in BENCH_KERNELS.items()}
    meas = {}
    for level, per_kernel in data.tables.items():
        if not per_kernel:
            continue
        counts = sorted(set.intersection(*[{p.threads for p in pts} for pts in per_kernel.values()]))
        if not counts:
            continue
        table = {"cores": counts}
        for k in KERNELS:
            if k in per_kernel:
                by = {p.threads: p for p in per_kernel[k]}
                table[k] = [f"{by[n].bytes_per_s_max / 1e9:.3f} GB/s" for n in counts]
        meas[level] = table
    return {"kernels": kernels, "measurements": meas}


def _analysis(machine, kernel_name: str):
    """Analysis of one benchmark kernel (ECM, analytic in-core model, reductions split: the
    benchmark's loads are independent), data set far beyond the caches."""
    kernel, _ = parse_kernel(BENCH_SOURCES[kernel_name], f"<{kernel_name} benchmark>")
    opts = AnalyzerSettings(models=("ECM",), incore="analytic", reassociate=True, use_cache=False)
    return Analyzer(kernel, machine, opts).run({"N": 10_000_000})


def _analyze(machine, kernel_name: str):
    """ECM result of one benchmark kernel (:func:`_analysis`)."""
    return _analysis(machine, kernel_name).ecm


def _fit_load_store(mapping: dict, machine, data, notes: list) -> tuple:
    """The in-core model's combined load+store limit fitted to the benchmark kernels in L1
    (:func:`loopmodel.models.calibration.fit_load_store_limit`)."""
    samples = []
    for k in KERNELS:
        measured = _measured_levels(data, k, machine.clock, machine.cacheline_size).get(0)
        if measured is None:
            continue
        res = _analysis(machine, k)
        inc, kern = res.incore, res.kernel
        per_cl = machine.cacheline_size / ELEMENT
        n = (kern.loads_per_iteration() + kern.stores_per_iteration()) / max(inc.lanes, 1) * per_cl
        other = max([inc.T_OL or 0.0, inc.components.get("LD", 0.0), inc.components.get("ST", 0.0)])
        samples.append((n, other, measured))
    try:
        fit = fit_load_store_limit(samples)
    except ValueError as exc:
        notes.append(f"load+store limit not fitted ({exc})")
        return mapping, None
    report = {"per_cycle": fit.per_cycle and round(fit.per_cycle, 3), "error_before_percent": round(fit.error_before, 2),
              "error_after_percent": round(fit.error_after, 2)}
    if fit.per_cycle is None:
        return mapping, report
    in_core = {**mapping["in_core"], "load_store_per_cycle": round(fit.per_cycle, 3)}
    return {**mapping, "in_core": in_core}, report


def _measured_levels(data, kernel: str, clock: float, line: float) -> dict:
    """Level index -> single-core cy/CL of ``kernel`` (from the per-level tables)."""
    names = [f"L{c.level}" for c in data_caches(data.topology)] + ["MEM"]
    out = {}
    for i, name in enumerate(names):
        pts = [p for p in data.tables.get(name, {}).get(kernel, []) if p.threads == 1]
        if pts:
            out[i] = cy_per_cl(pts[0], clock, line)
    return out


def _transfers(machine, data) -> list:
    """One :class:`~loopmodel.models.link_fit.KernelTransfers` per benchmark kernel: the ECM
    model's in-core times and bytes per link, and the measured single-core times."""
    out = []
    for k in KERNELS:
        ecm = _analyze(machine, k)
        parts = ecm.by_location["MEM"]
        links = tuple((c.bytes_in, c.bytes_out) for c in parts)
        measured = _measured_levels(data, k, machine.clock, machine.cacheline_size)
        out.append(KernelTransfers(k, ecm.T_OL or 0.0, ecm.T_nOL, links, parts[-1].bandwidth[0], measured))
    return out + _training_transfers(machine, data)


def _training_transfers(machine, data) -> list:
    """One :class:`~loopmodel.models.link_fit.KernelTransfers` per training point: the ECM
    model's view of the training kernel at that size (its own layer-condition traffic) and its
    time in cy/CL at the clock measured around it."""
    if not data.training:
        return []
    kernel, _ = parse_kernel(TRAINING_SOURCE, "<training kernel>")
    analyzer = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic", use_cache=False))
    names = [lv.level for lv in machine.memory_hierarchy]
    out = []
    for t in data.training:
        if t["level"] not in names:
            continue
        res = analyzer.run(t["defines"])
        parts = res.ecm.by_location["MEM"]
        measured = t["seconds_per_it"] * t["clock_Hz"] * res.traffic.iterations_per_unit
        out.append(KernelTransfers(f"{t['kernel']} ({t['level']})", res.ecm.T_OL or 0.0, res.ecm.T_nOL,
                                   tuple((c.bytes_in, c.bytes_out) for c in parts), parts[-1].bandwidth[0],
                                   {names.index(t["level"]): measured}))
    return out


def _fit_links(mapping: dict, transfers: list, notes: list) -> tuple:
    """Link bandwidths, duplex, overlap and memory penalty of the best hypothesis
    (:func:`loopmodel.models.link_fit.fit_links`) written into ``mapping``; the report of all."""
    try:
        fits = fit_links(transfers)
    except ValueError as exc:
        notes.append(f"link bandwidths not fitted ({exc}): 64 B/cy per cache link and no memory penalty ASSUMED")
        return mapping, {"hypotheses": [], "chosen": None}
    best = fits[0]
    links = [dict(lk) for lk in mapping["links"]]
    for j, bw in enumerate(best.bandwidths):
        links[j]["bandwidth"] = f"{bw:.2f} B/cy" if best.hypothesis.duplex == "half" else [f"{bw:.2f} B/cy"] * 2
        links[j]["duplex"] = best.hypothesis.duplex
    links[-1]["penalty_load"] = links[-1]["penalty_store"] = f"{best.penalty:.2f} cy"
    names = [a + b for a, b in (lk["between"] for lk in links)]
    report = {"hypotheses": [_hypothesis_row(f, names) for f in fits], "chosen": _hypothesis_row(best, names),
              "errors": [{"kernel": k, "level": lv, "predicted_cy_per_cl": round(p, 3),
                          "measured_cy_per_cl": round(m, 3)} for k, lv, p, m in best.errors]}
    return {**mapping, "links": links, "overlap": best.hypothesis.names(names)}, report


def _hypothesis_row(fit, names) -> dict:
    h = fit.hypothesis
    return {"overlap": h.names(names), "duplex": h.duplex, "bandwidths_B_per_cy": [round(b, 3) for b in fit.bandwidths],
            "penalty_cy_per_cl": round(fit.penalty, 3), "residual_percent": round(fit.residual, 2)}


def _latency_estimate(data, machine) -> dict | None:
    """Little's law view: memory latency (cy) and single-core memory bandwidth (B/cy, the copy
    benchmark's with its write-allocate traffic, :func:`~loopmodel.machine.bandwidth.write_allocate_factor`)
    give the cache lines in flight; reported next to the fitted penalty, not used."""
    if data.latency is None or not data.latency.points:
        return None
    lat = max(data.latency.points, key=lambda p: p.size_bytes)
    pts = data.tables.get("MEM", {}).get("copy", [])
    one = [p for p in pts if p.threads == 1]
    if not one:
        return None
    bw = one[0].bytes_per_s_max * write_allocate_factor(machine.benchmarks.kernels["copy"]) / machine.clock
    lat_cy = lat.cycles(machine.clock)
    return {"memory_latency_cy": round(lat_cy, 1), "single_core_B_per_cy": round(bw, 3),
            "lines_in_flight": round(lat_cy * bw / machine.cacheline_size, 2)}


def _fit_p0(mapping: dict, machine, data, notes: list) -> tuple:
    """p0 per kernel from its 1..N-core memory curve; the median is the model's."""
    line = machine.cacheline_size
    per_kernel = {}
    for k in KERNELS:
        pts = data.tables.get("MEM", {}).get(k, [])
        measured = {p.threads: 1.0 / point_seconds_per_it(p) * p.threads for p in pts}
        if len(measured) < 2:
            continue
        try:
            p0, rms = fit_p0(_analyze(machine, k).require_known(), machine, measured, line / ELEMENT)
        except LoopmodelError as exc:
            notes.append(f"p0 not fitted to {k}: {exc}")
            continue
        per_kernel[k] = {"p0": round(p0, 4), "rms_error_percent": round(100 * rms, 2)}
    if not per_kernel:
        notes.append("p0 not fitted (fewer than two core counts measured in memory): 0.5 ASSUMED")
        return mapping, {"p0": None, "per_kernel": {}}
    vals = sorted(v["p0"] for v in per_kernel.values())
    p0 = (vals[(len(vals) - 1) // 2] + vals[len(vals) // 2]) / 2
    return {**mapping, "contention_p0": round(max(p0, 1e-4), 4)}, {"p0": round(p0, 4), "per_kernel": per_kernel}


def fit_nest_entry_cy(mapping: dict, data, notes: list) -> tuple:
    """``in_core.nest_entry_cy`` from the probe's nest-entry step
    (:func:`loopmodel.models.nest_entry.fit_nest_entry`: cy per call = seconds per iteration x
    clock x N, against N).

    Returns:
        ``(mapping, report)``: the mapping with the field where the step measured enough points,
        else unchanged with a note; ``report`` the points and the fit, or None.
    """
    pts = [(p["n"], p["seconds_per_it"] * p["clock_Hz"] * p["n"]) for p in getattr(data, "nest_entry", ())]
    if not pts:
        return mapping, None
    report = {"points": [{"n": n, "cy_per_call": round(y, 3)} for n, y in pts]}
    try:
        fit = fit_nest_entry(pts)
    except ValueError as exc:
        notes.append(f"nest entry: not fitted ({exc})")
        return mapping, report
    report.update(entry_cy=round(fit.entry_cy, 3), per_it_cy=round(fit.per_it_cy, 4),
                  rms_relative_error=round(fit.residual, 4))
    return {**mapping, "in_core": {**mapping["in_core"], "nest_entry_cy": round(fit.entry_cy, 3)}}, report


def fit_short_loops(mapping: dict, data, notes: list) -> tuple:
    """``in_core.inner_loop_entry_cy`` and ``inner_loop_remainder_ratio`` fitted to the probe's
    short-loop step (:func:`loopmodel.models.short_loops.fit_short_loop`: cy per loop entry =
    seconds per iteration x clock x N, against N; iterations per pass: the double-precision SIMD
    lanes of ``in_core.simd_width``).

    Returns:
        ``(mapping, report)``: the mapping with the two fields where the step measured enough
        points, else unchanged with a note; ``report`` the points (n, cy per entry) and the fit,
        or None.
    """
    pts = [(p["n"], p["seconds_per_it"] * p["clock_Hz"] * p["n"]) for p in getattr(data, "short_loops", ())]
    if not pts:
        return mapping, None
    width = mapping["in_core"]["simd_width"]
    lanes = max(1, int((float(width.split()[0]) if isinstance(width, str) else float(width)) // ELEMENT))
    report = {"points": [{"n": n, "cy_per_entry": round(y, 3)} for n, y in pts], "iterations_per_pass": lanes}
    try:
        fit = fit_short_loop(pts, lanes)
    except ValueError as exc:
        notes.append(f"short inner loops: loop entry overhead not fitted ({exc})")
        return mapping, report
    report.update(entry_cy=round(fit.entry_cy, 3), remainder_ratio=round(fit.remainder_ratio, 3),
                  pass_cy=round(fit.pass_cy, 3), rms_relative_error=round(fit.residual, 4))
    in_core = {**mapping["in_core"], "inner_loop_entry_cy": round(fit.entry_cy, 3),
               "inner_loop_remainder_ratio": round(fit.remainder_ratio, 3)}
    return {**mapping, "in_core": in_core}, report
