"""Kerncraft's machine files (kerncraft-tool-paper.txt §2.2, Listing 2) converted to loopmodel's
schema (:class:`~loopmodel.machine.model.MachineModel`), which :mod:`loopmodel.fileio.machine_files`
then validates.

Every value read from a Kerncraft file is checked where it is read: a malformed file gives
one line naming the file, the Kerncraft key path (``memory hierarchy[1].cache per group.sets``)
and what is wrong, never a KeyError or ValueError from deep inside the conversion.
"""
from __future__ import annotations

import re
from pathlib import Path

from ..compiled.osaca_backend import ARCH
from ..errors import MachineError
from ..machine import fields as fx
from ..machine.vector_width import register_width
from ..units import UnitError, parse_quantity


def _bad(source: str, where: str, message: str):
    return MachineError(message, file=source, where=where)


def _omap(value, where: str = "", source: str = "<kerncraft>") -> dict:
    """A Kerncraft mapping as a dict: ``!!omap`` lists of pairs (PyYAML: tuples), mappings, or None.

    Raises:
        MachineError: ``value`` is neither a mapping nor a list of pairs.
    """
    if value is None:
        return {}
    if isinstance(value, dict):
        return dict(value)
    if isinstance(value, list):
        out = {}
        for item in value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                out[item[0]] = item[1]
            elif isinstance(item, dict):
                out.update(item)
            else:
                raise _bad(source, where, f"must be a mapping, got the list item {item!r}")
        return out
    raise _bad(source, where, f"must be a mapping, got {value!r}")


def _need(d: dict, key: str, where: str, source: str):
    """``d[key]``; a missing key is an error at ``where.key``."""
    if key not in d or d[key] is None:
        raise _bad(source, f"{where}.{key}" if where else key, "required key is missing")
    return d[key]


def _int(value, where: str, source: str, minimum: int = 0, maximum: int = 2 ** 40) -> int:
    """An integer ``minimum .. maximum`` written as a number or a string of ASCII digits (``20``, ``'20'``)."""
    if isinstance(value, bool) or not (isinstance(value, int) or (isinstance(value, float) and value.is_integer())
                                       or (isinstance(value, str) and re.fullmatch(r"\s*[0-9]+\s*", value))):
        raise _bad(source, where, f"'{value}' is not an integer")
    n = int(value) if not isinstance(value, str) or len(value.strip()) <= 20 else maximum + 1
    if n < minimum:
        raise _bad(source, where, f"{n} must be at least {minimum}")
    if n > maximum:
        raise _bad(source, where, f"{str(value).strip()[:24]} is more than {maximum}, beyond any real machine")
    return n


def _in_range(value: float, rng, where: str, source: str) -> None:
    """Refuse ``value`` (base units) outside the physical range ``rng`` (:class:`~loopmodel.machine.fields.Range`)."""
    try:
        rng.check(value)
    except ValueError as exc:
        raise _bad(source, where, str(exc)) from None


def _number(value, where: str, source: str) -> float:
    """A plain number (``2``, ``2.5``, ``'2.5'``)."""
    try:
        if isinstance(value, bool):
            raise ValueError
        return float(value)
    except (TypeError, ValueError):
        raise _bad(source, where, f"'{value}' is not a number") from None


def _leading(value, where: str, source: str, what: str) -> float:
    """The number a Kerncraft quantity starts with (``'64 B'`` -> 64, ``'8.00 B'`` -> 8)."""
    m = re.match(r"\s*(\d+(?:\.\d*)?)", str(value))
    if not m:
        raise _bad(source, where, f"'{value}' does not start with a number ({what})")
    return float(m.group(1))


#: bytes one L1 load (and the store) port moves per cycle where it is less than the SIMD width:
#: Sandy/Ivy Bridge, "two 16-byte loads and one 16-byte store per cycle" (Intel 64 and IA-32
#: Optimization Reference Manual, Sandy Bridge L1 DCache; ecm-model-slides.txt IVB example),
#: Zen 1, two 128-bit loads and one 128-bit store (AMD Software Optimization Guide for family
#: 17h; cross-architecture-machine-models.txt §3.2, "only two data paths")
_L1_PORT_BYTES = {"sandybridge": 16, "ivybridge": 16, "znver1": 16}


def _simd_width(data: dict, source: str = "<kerncraft>") -> int:
    """SIMD register width in bytes (not in Kerncraft files): on AArch64 ``-msve-vector-bits=N`` in
    the compiler flags, else 16 (NEON); on x86 the widest registers any compiler entry's flags
    enable (:func:`loopmodel.machine.vector_width.register_width`; 16 where none names a target).
    Which of them a compiler's loops use is decided per analysis from the compiler in use
    (:func:`~loopmodel.machine.vector_width.compiler_vector_width`)."""
    entries = [str(v) for v in _omap(data.get("compiler"), "compiler", source).values()]
    isa = str(data.get("isa", "")).lower()
    if isa.startswith("aarch64") or isa.startswith("arm"):
        bits = [int(b) for e in entries for b in re.findall(r"-msve-vector-bits=(\d+)", e)]
        return max(bits) // 8 if bits else 16
    return max((register_width(e.split()) or 16 for e in entries), default=16)


def convert_kerncraft(data: dict, source: str = "<kerncraft>") -> dict:
    """Convert a Kerncraft machine mapping into loopmodel's schema (a dict).

    Facts taken over: clock, topology, caches (sets, ways, line size, sharing,
    write-allocate/-back, victim caches via ``victims_to``), link bandwidths and
    duplex ("upstream throughput"), latency penalties, overlap ("transfers
    overlap"), FLOPs per cycle, analyzer port lists, compilers, and the streaming
    benchmark kernels and measurements (one thread per core) of
    kerncraft-tool-paper.txt §2.2, Listing 2.

    What Kerncraft files do not state (SIMD width, L1 load/store limits,
    latencies) is filled with conservative defaults that are written into
    ``description`` so the user sees them.

    Args:
        data: the YAML mapping of a Kerncraft machine file.
        source: the file name used in error messages and notes.

    Returns:
        A mapping in loopmodel's schema (validate it with :func:`validate`).

    Raises:
        MachineError: a required Kerncraft key is missing or malformed (one line naming
            ``source``, the Kerncraft key path and the problem).
    """
    if not isinstance(data, dict):
        raise MachineError("machine file must contain a YAML mapping", file=source)
    icm = _omap(data.get("in-core model"), "in-core model", source)
    in_core, assumed = _in_core(data, icm, source)
    cl_bytes = _cacheline_bytes(data, source)
    levels, links, overlap, victim_notes = _hierarchy(data, icm, cl_bytes, source)
    out = {
        "name": Path(source).stem,
        "description": "Converted from a Kerncraft machine file (" + Path(source).name + "); "
                       + "; ".join(assumed) + ".",
        "model_name": str(data.get("model name", "")),
        "micro_architecture": str(data.get("micro-architecture", icm.get("OSACA", icm.get("IACA", "")))),
        "isa": str(data.get("isa", "x86")),
        "clock": _clock(data, source),
        **_topology(data, source),
        "cacheline_size": f"{cl_bytes} B",
        "in_core": in_core,
        "memory_hierarchy": levels,
        "links": links,
        "overlap": overlap,
        "benchmarks": _benchmarks(data, source),
        "compiler": {str(k): str(v) for k, v in _omap(data.get("compiler"), "compiler", source).items()},
        "sources": [f"Kerncraft machine file {Path(source).name} (converted)"] + victim_notes,
    }
    return out


def _clock(data: dict, source: str) -> str:
    clock = _need(data, "clock", "", source)
    try:
        hz = parse_quantity(str(clock), "frequency")
    except UnitError as exc:
        raise _bad(source, "clock", str(exc)) from None
    _in_range(hz, fx.CLOCK, "clock", source)
    return str(clock)


def _topology(data: dict, source: str) -> dict:
    """Sockets, cores, threads and NUMA domains (integers >= 1)."""
    def count(key, default=None, maximum=int(fx.COUNT.hi)):
        value = _need(data, key, "", source) if default is None else data.get(key, default)
        return _int(value, key, source, minimum=1, maximum=maximum)

    return {"sockets": count("sockets", 1, 64), "cores_per_socket": count("cores per socket"),
            "threads_per_core": count("threads per core", 1, 16),
            "numa_domains_per_socket": count("NUMA domains per socket", 1)}


def _cacheline_bytes(data: dict, source: str) -> int:
    """``cacheline size`` in bytes (default 64 B when the file does not give it)."""
    value = data.get("cacheline size", "64 B")
    size = _leading(value, "cacheline size", source, "bytes per cache line")
    if size <= 0 or not size.is_integer():
        raise _bad(source, "cacheline size", f"'{value}' is not a whole positive number of bytes")
    _in_range(size, fx.LINE_SIZE, "cacheline size", source)
    return int(size)


# --- Kerncraft in-core part ----------------------------------------------------

def _in_core(data: dict, icm: dict, source: str) -> tuple:
    """``(in_core mapping, assumptions)``: throughputs from FLOPs per cycle, L1 limits, analyzer ports.

    A file with ``non-overlapping model: ports`` decides where stores count by those lists
    (``stores_in: ports``, :meth:`loopmodel.machine.model.MachineModel.ports_decide`), as the
    peer reads them (kerncraft-tool-paper.txt §2.3).
    """
    simd = _simd_width(data, source)
    assumed = [f"SIMD width {simd} B guessed from compiler flags"]
    flops = _flops_per_cycle(data, source)
    throughput = _throughputs(flops.get("DP"), simd // 8)
    if throughput is None:
        assumed.append("no FLOPs per cycle given: ADD/MUL/FMA throughputs assumed 1 per cycle")
        throughput = {"ADD": 1.0, "MUL": 1.0, "FMA": 1.0}
    assumed.append("L1 limits assumed: 2 loads and 1 store per cycle")
    in_core = {
        "simd_width": f"{simd} B",
        "throughput": throughput,
        "latency": {},
        "load": {"instructions_per_cycle": 2, "bytes_per_cycle": f"{2 * simd} B/cy"},
        "store": {"instructions_per_cycle": 1, "bytes_per_cycle": f"{simd} B/cy"},
        "load_store_per_cycle": 2,
        "flops_per_cycle": flops,
    }
    ports = _analyzer_ports(data, source)
    if ports:
        in_core["analyzer_ports"] = ports
    if any(p.get("non_overlapping") for p in ports.values()):  # the file says which ports do not overlap
        in_core["stores_in"] = "ports"
    cpu = _llvm_mca_cpu(icm)
    if cpu:
        in_core["llvm_mca_cpu"] = cpu
    port = min(simd, _L1_PORT_BYTES.get(cpu or "", simd))
    if port < simd:
        in_core["load"]["bytes_per_cycle"], in_core["store"]["bytes_per_cycle"] = f"{2 * port} B/cy", f"{port} B/cy"
        assumed.append(f"L1 data paths of {port} B per port and cycle ({cpu})")
    return in_core, assumed


def _flops_per_cycle(data: dict, source: str) -> dict:
    """``{precision: {total, ADD, MUL, FMA}}`` from ``FLOPs per cycle``.

    A precision counts only with a total and numbers throughout: Kerncraft's template writes
    ``INFORMATION_REQUIRED`` where a number is unknown, and such a precision is left out
    (without DP the converter assumes throughputs and says so in the description).
    """
    flops = {}
    for prec, vals in _omap(data.get("FLOPs per cycle"), "FLOPs per cycle", source).items():
        vals = _omap(vals, f"FLOPs per cycle.{prec}", source)
        if "total" in vals and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in vals.values()):
            flops[prec] = {k: v for k, v in vals.items() if k in ("total", "ADD", "MUL", "FMA")}
    return flops


def _throughputs(dp, lanes_dp: int):
    """Instructions per cycle of ADD/MUL/FMA from DP FLOPs per cycle, or None without them."""
    if not dp:
        return None
    throughput = {}
    for op in ("ADD", "MUL"):
        if dp.get(op):
            throughput[op] = dp[op] / lanes_dp
    if dp.get("FMA"):
        throughput["FMA"] = dp["FMA"] / (2 * lanes_dp)
    return throughput


def _analyzer_ports(data: dict, source: str) -> dict:
    """Per analyzer ``{overlapping: [...], non_overlapping: [...]}`` port names."""
    ports = {}
    for key, label in (("overlapping model", "overlapping"), ("non-overlapping model", "non_overlapping")):
        model = _omap(data.get(key), key, source)
        for analyzer, plist in _omap(model.get("ports"), f"{key}.ports", source).items():
            if not isinstance(plist, list):
                raise _bad(source, f"{key}.ports.{analyzer}", f"must be a list of port names, got {plist!r}")
            ports.setdefault(str(analyzer).lower(), {})[label] = [str(x) for x in plist]
    return ports


def _llvm_mca_cpu(icm: dict):
    """The llvm-mca CPU: ``-mcpu=`` of the LLVM-MCA entry, else the one for the OSACA/IACA code."""
    if "LLVM-MCA" in icm:
        m = re.search(r"-mcpu=(\S+)", str(icm["LLVM-MCA"]))
        if m:
            return m.group(1)

    by_code = {code: cpu for cpu, code in ARCH.items()}
    for key in ("OSACA", "IACA"):
        if str(icm.get(key, "")).upper() in by_code:
            return by_code[str(icm[key]).upper()]
    return None


# --- Kerncraft memory hierarchy ------------------------------------------------

def _hierarchy(data: dict, icm: dict, cl_bytes: int, source: str) -> tuple:
    """``(levels, links, overlap, victim notes)`` from ``memory hierarchy``."""
    hierarchy = _need(data, "memory hierarchy", "", source)
    if not isinstance(hierarchy, list) or not hierarchy:
        raise _bad(source, "memory hierarchy", "must be a non-empty list of levels")
    levels, links, overlap, notes = [], [], ["T_OL"], []
    victim_targets = set()
    prev = None
    for i, lv in enumerate(hierarchy):
        where = f"memory hierarchy[{i}]"
        if not isinstance(lv, dict):
            raise _bad(source, where, f"must be a mapping with 'level', got {lv!r}")
        name = str(_need(lv, "level", where, source))
        entry, victims_to = _level(lv, name, where, cl_bytes, source)
        victim_targets |= victims_to
        if name in victim_targets:
            entry["type"] = "victim"
            entry["victim_clean"], entry["victim_clean_note"] = _victim_clean_default(data, icm, name, prev)
            notes.append(entry["victim_clean_note"])
        levels.append(entry)
        if prev is not None:
            links.append(_link(lv, prev, name, where, source))
        if lv.get("transfers overlap"):
            overlap.append(f"{prev}{name}" if prev is not None else "T_nOL")
        prev = name
    return levels, links, overlap, notes


def _level(lv: dict, name: str, where: str, cl_bytes: int, source: str) -> tuple:
    """``(cache level mapping, {victims_to level})`` of one Kerncraft level."""
    entry = {"level": name}
    if lv.get("cores per group") is not None:
        entry["cores_per_group"] = _int(lv["cores per group"], f"{where}.cores per group", source, minimum=1,
                                        maximum=int(fx.COUNT.hi))
    if lv.get("groups"):
        entry["groups"] = _int(lv["groups"], f"{where}.groups", source, minimum=1, maximum=int(fx.COUNT.hi))
    if name == "MEM":
        return entry, set()
    cache = lv.get("cache per group")
    if cache:
        entry.update(_cache_per_group(cache, f"{where}.cache per group", cl_bytes, source))
        return entry, {str(cache["victims_to"])} if cache.get("victims_to") else set()
    if lv.get("size per group"):
        entry["size"] = _size_per_group(lv["size per group"], f"{where}.size per group", source)
        return entry, set()
    raise _bad(source, where, f"level {name} has no cache description ('cache per group' or 'size per group')")


def _cache_per_group(cache, where: str, cl_bytes: int, source: str) -> dict:
    """Sets, ways, size, replacement policy and write policies of ``cache per group``."""
    if not isinstance(cache, dict):
        raise _bad(source, where, f"must be a mapping (sets, ways, cl_size, ...), got {cache!r}")
    sets = _int(_need(cache, "sets", where, source), f"{where}.sets", source, minimum=1)
    ways = _int(_need(cache, "ways", where, source), f"{where}.ways", source, minimum=1, maximum=2 ** 16)
    line = int(_leading(cache.get("cl_size", cl_bytes), f"{where}.cl_size", source, "bytes per cache line"))
    _in_range(line, fx.LINE_SIZE, f"{where}.cl_size", source)
    _in_range(sets * ways * line, fx.CACHE_SIZE, where, source)
    policy = str(cache.get("replacement_policy", "LRU")).upper()
    return {"sets": sets, "ways": ways, "size": f"{sets * ways * line} B",
            "replacement": policy.replace("RR", "RANDOM") if policy in ("LRU", "FIFO", "RR", "RANDOM") else "LRU",
            "write_allocate": bool(cache.get("write_allocate", True)),
            "write_back": bool(cache.get("write_back", True))}


def _size_per_group(value, where: str, source: str) -> str:
    """``size per group`` with Kerncraft's kB/MB/GB read as KiB/MiB/GiB."""
    s = str(value).strip()
    s = s.replace("kB", "KiB").replace("MB", "MiB").replace("GB", "GiB") if re.search(r"[kMG]B$", s) else s
    try:
        _in_range(parse_quantity(s, "size"), fx.CACHE_SIZE, where, source)
    except UnitError as exc:
        raise _bad(source, where, str(exc)) from None
    return s


def _link(lv: dict, upper: str, name: str, where: str, source: str) -> dict:
    """The link from ``upper`` to this level: ``upstream throughput`` [bandwidth, duplex] and penalties."""
    up = lv.get("upstream throughput")
    bw, duplex = (list(up) + [None, None])[:2] if isinstance(up, list) else (None, None)
    if bw is None:
        raise _bad(source, f"{where}.upstream throughput",
                   f"level {name} needs [bandwidth, duplex], e.g. ['32 B/cy', 'half-duplex'], got {up!r}")
    if duplex not in (None, "half-duplex", "full-duplex"):
        raise _bad(source, f"{where}.upstream throughput", f"duplex '{duplex}' is not 'half-duplex' or 'full-duplex'")
    bw = "measured" if "memory bandwidth" in str(bw) else str(bw)
    if bw != "measured":
        per_s = bw.rstrip().endswith("/s")
        try:
            value = parse_quantity(bw, "bandwidth_s" if per_s else "bandwidth_cy")
        except UnitError as exc:
            raise _bad(source, f"{where}.upstream throughput", str(exc)) from None
        _in_range(value, fx.BANDWIDTH_S if per_s else fx.BANDWIDTH_CY, f"{where}.upstream throughput", source)
    link = {"between": [upper, name]}
    if duplex == "full-duplex":
        link["bandwidth"], link["duplex"] = [bw, bw], "full"
    else:
        link["bandwidth"] = bw
    store_key = "penalty cycles per cacheline store"
    if store_key not in lv:
        store_key = "penalty cycles per cachlinie store"  # a misspelling found in Kerncraft files
    for key, field_name in (("penalty cycles per cacheline load", "penalty_load"), (store_key, "penalty_store")):
        value = lv.get(key)
        if value:
            _in_range(_number(value, f"{where}.{key}", source), fx.PENALTY, f"{where}.{key}", source)
            link[field_name] = f"{value} cy"
    return link


# --- Kerncraft benchmarks --------------------------------------------------------

def _benchmarks(data: dict, source: str) -> dict:
    """Benchmark kernels and the one-thread-per-core measurements (kerncraft-tool-paper.txt §2.2)."""
    bench = _omap(data.get("benchmarks"), "benchmarks", source)
    where = "benchmarks.kernels"
    kernels = {name: _bench_kernel(k, f"{where}.{name}", source)
               for name, k in _omap(bench.get("kernels"), where, source).items()}
    measurements = {}
    where = "benchmarks.measurements"
    for lvl, per_tpc in _omap(bench.get("measurements"), where, source).items():
        table = _measurement(per_tpc, kernels, f"{where}.{lvl}", source)
        if table is not None:
            measurements[str(lvl)] = table
    return {"kernels": kernels, "measurements": measurements}


def _streams(k: dict, key: str, where: str, source: str) -> dict:
    s = _omap(_need(k, key, where, source), f"{where}.{key}", source)
    return {"streams": _int(_need(s, "streams", f"{where}.{key}", source), f"{where}.{key}.streams", source),
            "bytes": s.get("bytes")}


def _bench_kernel(k, where: str, source: str) -> dict:
    """One benchmark kernel: stream counts, FLOPs per iteration and element size (bytes)."""
    k = _omap(k, where, source)
    rs, ws, rws = (_streams(k, key, where, source) for key in ("read streams", "write streams", "read+write streams"))
    elem = "8 B"
    if rs["streams"]:
        b = _leading(rs["bytes"] if rs["bytes"] is not None else "8", f"{where}.read streams.bytes", source, "bytes")
        elem = f"{b / rs['streams']:g} B"
    return {"read_streams": rs["streams"], "write_streams": ws["streams"], "read_write_streams": rws["streams"],
            "flops_per_iteration": _number(k.get("FLOPs per iteration", 0), f"{where}.FLOPs per iteration", source),
            "element_size": elem}


def _measurement(per_tpc, kernels: dict, where: str, source: str):
    """The one-thread-per-core table of a level as ``{cores: [...], kernel: [bandwidths]}``, or None."""
    per_tpc = _omap(per_tpc, where, source)
    key = 1 if per_tpc.get(1) else "1"
    block = per_tpc.get(key)
    if not block:
        return None
    where = f"{where}.{key}"
    block = _omap(block, where, source)
    cores = block.get("cores", [])
    if not isinstance(cores, list):
        raise _bad(source, f"{where}.cores", f"must be a list of core counts, got {cores!r}")
    entry = {"cores": [_int(c, f"{where}.cores", source, minimum=1, maximum=int(fx.COUNT.hi)) for c in cores]}
    for name, vals in _omap(block.get("results"), f"{where}.results", source).items():
        here = f"{where}.results.{name}"
        if name not in kernels:
            raise _bad(source, here, f"kernel '{name}' is not defined in benchmarks.kernels")
        if not isinstance(vals, list) or len(vals) != len(cores):
            raise _bad(source, here, f"must list one bandwidth per core count ({len(cores)})")
        for v in vals:
            try:
                _in_range(parse_quantity(str(v), "bandwidth_s"), fx.BANDWIDTH_S, here, source)
            except UnitError as exc:
                raise _bad(source, here, str(exc)) from None
        entry[name] = [str(v) for v in vals]
    return entry


#: Clean evictions into a victim L3 cost no transfer on Zen-family CPUs: cross-architecture-
#: machine-models.txt Table 3, EPYC 7451 (Zen), daxpby: T_L2L3 = 0.75 cy/it with data in L3
#: (x and y read from the L3, y written back: the clean x is in the L3 but its eviction is not
#: counted) and 0.25 cy/it in memory (8 B: the write-back of y only).
_NO_CLEAN_VICTIM = re.compile(r"\bzen|znver", re.IGNORECASE)


def _victim_clean_default(data: dict, icm: dict, level: str, above) -> tuple:
    """``(victim_clean, note)`` for a victim level of a Kerncraft file (the format cannot state it).

    Evidence (cross-architecture-machine-models.txt): §3.3 "a victim cache typically implies
    additional traffic since it receives both modified and unmodified cache lines", and Table 3
    (§5.2.1, daxpby) counts the clean evictions on SKL, TX2 and PWR9 (T_L2L3 = 1 cy/it = 32 B
    with data in L3) but not on the EPYC (Zen): 0.75 cy/it = 24 B in L3, 0.25 cy/it = 8 B in
    memory. So: false for the Zen family (micro-architecture, llvm-mca CPU or model name naming
    Zen/znver; Zen 2 and later are assumed to behave as the measured Zen), true otherwise.
    Kerncraft itself does not decide this: its cache simulator forwards every evicted line
    to ``victims_to`` and counts it (clean too), its layer conditions ignore ``victims_to``
    and count only evictions of written arrays, for every machine.
    """
    what = " ".join(str(x) for x in (data.get("micro-architecture", ""), icm.get("OSACA", ""),
                                       icm.get("IACA", ""), icm.get("LLVM-MCA", ""), data.get("model name", "")))
    if _NO_CLEAN_VICTIM.search(what):
        return False, (f"{level}: victim cache from a Kerncraft file (which cannot say whether clean evictions "
                       f"cost a transfer): clean {above} evictions are placed in it without a counted transfer "
                       "(victim_clean: false, the default for the Zen family, as measured on Zen: "
                       "Hofmann et al., Bridging the Architecture Gap Table 3, EPYC 7451 daxpby T_L2L3 = 0.75 / 0.25 cy/it "
                       "in L3 / memory)")
    return True, (f"{level}: victim cache from a Kerncraft file (which cannot say whether clean evictions cost "
                  f"a transfer): clean {above} evictions count as transfers (victim_clean: true, the default: "
                  "Hofmann et al., Bridging the Architecture Gap §3.3, Table 3 for SKL, TX2, PWR9)")
