"""Reading machine files: loopmodel YAML, Kerncraft YAML, and the built-in library.

``load_machine("SkylakeSP_Gold-6148")`` finds a built-in model by name;
``load_machine("my.yml")`` reads a file in loopmodel's schema
(:class:`~loopmodel.machine.model.MachineModel`) or in Kerncraft's format
(kerncraft-tool-paper.txt §2.2, Listing 2), which is converted on the fly by
:func:`convert_kerncraft`. Errors name the file, the key path and the problem.
"""
from __future__ import annotations

import re
from pathlib import Path

from .. import cache
from ..errors import MachineError
from ..machine.model import MachineModel

# built-in models ship as package data (installed as plain files)
_BUILTIN_DIR = Path(__file__).resolve().parent.parent / "machines"


def builtin_names() -> list:
    """Names of the built-in machine models (file stems)."""
    return sorted(p.stem for p in _BUILTIN_DIR.glob("*.yml"))


def _builtin_path(name: str):
    cand = _BUILTIN_DIR / f"{name}.yml"
    return cand if cand.is_file() else None


def _read_bytes(path) -> bytes:
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        raise MachineError("machine file not found (and no built-in model of that name; "
                           "see 'loopmodel machine list')", file=str(path)) from None
    except OSError as exc:
        raise MachineError(f"cannot read machine file: {exc}", file=str(path)) from None


def read_yaml(path: str, raw: bytes | None = None) -> dict:
    """Load a YAML mapping (from ``raw`` if given); errors carry ``file:line:col``."""
    import yaml

    try:
        text = (_read_bytes(path) if raw is None else raw).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise MachineError(f"cannot read machine file: {exc}", file=str(path)) from None
    try:
        data = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        problem = getattr(exc, "problem", None) or str(exc).split("\n")[0]
        raise MachineError(f"YAML syntax error: {problem}", file=str(path),
                           line=mark.line + 1 if mark else None,
                           col=mark.column + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise MachineError("machine file must contain a YAML mapping", file=str(path))
    return data


def load_machine(name_or_path: str, overrides: dict | None = None) -> MachineModel:
    """Load a machine model by built-in name or file path.

    Args:
        name_or_path: built-in name (``loopmodel machine list``) or YAML path.
        overrides: top-level keys replaced before validation.

    Returns:
        The validated :class:`MachineModel`. Validated models are cached per
        user (:mod:`loopmodel.cache`) keyed by the file's bytes, the overrides
        and loopmodel's source (:func:`loopmodel.cache.code_digest`), so an unchanged
        file is not re-validated.

    Raises:
        MachineError: missing file, YAML error, or schema violation (one line
            with file and key path).
    """
    p = Path(name_or_path)
    builtin = None if (p.suffix in (".yml", ".yaml") or p.exists()) else _builtin_path(str(name_or_path))
    if builtin is None and not p.exists() and p.suffix not in (".yml", ".yaml"):
        raise MachineError(f"unknown machine '{name_or_path}': not a built-in model "
                           f"({', '.join(builtin_names())}) and no such file")
    path, source = (builtin, str(name_or_path)) if builtin is not None else (p, str(p))
    raw = _read_bytes(path)
    key = cache.make_key(raw, source, overrides)
    model = cache.load("machines", key)
    if isinstance(model, MachineModel):
        return model
    model = machine_from_dict(read_yaml(str(path), raw), source, overrides)
    cache.store("machines", key, model)
    return model


def is_kerncraft_format(data: dict) -> bool:
    return "memory hierarchy" in data or "kerncraft version" in data


def machine_from_dict(data: dict, source: str, overrides: dict | None = None) -> MachineModel:
    """Validate a machine mapping (either format); see :func:`load_machine`."""
    if is_kerncraft_format(data):
        data = convert_kerncraft(data, source)
    if overrides:
        data = {**data, **overrides}
    data.setdefault("name", Path(source).stem)
    return validate(data, source)


def validate(data: dict, source: str) -> MachineModel:
    """Validate a loopmodel-format mapping against the schema; returns the data model.

    Raises:
        MachineError: one line naming ``source``, the key path and the problem.
    """
    from pydantic import ValidationError

    from .machine_schema import MachineModelSchema, to_model

    try:
        return to_model(MachineModelSchema.model_validate(data))
    except ValidationError as exc:
        err = exc.errors()[0]
        where = _loc(err.get("loc", ()))
        msg = err.get("msg", "invalid value")
        msg = re.sub(r"^(Value error|Assertion failed), ", "", msg)
        if err.get("type") == "missing":
            msg = "required key is missing"
        elif err.get("type") == "extra_forbidden":
            msg = "unknown key"
        raise MachineError(msg, file=source, where=where or None) from None


def _loc(loc) -> str:
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        elif str(part).startswith(("function-", "list[", "dict[", "literal[")) or "[" in str(part):
            continue
        else:
            out += ("." if out else "") + str(part)
    return out


# --- Kerncraft format --------------------------------------------------------

def _omap(value) -> dict:
    """Kerncraft writes ``!!omap`` lists of pairs; PyYAML gives a list of tuples."""
    if isinstance(value, list):
        out = {}
        for item in value:
            if isinstance(item, (list, tuple)) and len(item) == 2:
                out[item[0]] = item[1]
            elif isinstance(item, dict):
                out.update(item)
        return out
    return dict(value or {})


#: bytes one L1 load (and the store) port moves per cycle where it is less than the SIMD width:
#: Sandy/Ivy Bridge, "two 16-byte loads and one 16-byte store per cycle" (Intel 64 and IA-32
#: Optimization Reference Manual, Sandy Bridge L1 DCache; ecm-model-slides.txt IVB example),
#: Zen 1, two 128-bit loads and one 128-bit store (AMD Software Optimization Guide for family
#: 17h; cross-architecture-machine-models.txt §3.2, "only two data paths")
_L1_PORT_BYTES = {"sandybridge": 16, "ivybridge": 16, "znver1": 16}


def _simd_width(data: dict) -> int:
    """SIMD width in bytes guessed from the ISA and compiler flags (not in Kerncraft files)."""
    flags = " ".join(str(v) for v in _omap(data.get("compiler")).values())
    isa = str(data.get("isa", "")).lower()
    if "sve-vector-bits=512" in flags:
        return 64
    if isa.startswith("aarch64") or isa.startswith("arm"):
        return 16
    if re.search(r"avx512|AVX512|zmm", flags):
        return 64
    if re.search(r"avx|AVX|znver|haswell|skylake", flags):
        return 32
    return 16


def convert_kerncraft(data: dict, source: str = "<kerncraft>") -> dict:
    """Convert a Kerncraft machine mapping into loopmodel's schema (a dict).

    Facts taken over: clock, topology, caches (sets, ways, line size, sharing,
    write-allocate/-back, victim caches via ``victims_to``), link bandwidths and
    duplex ("upstream throughput"), latency penalties, overlap ("transfers
    overlap"), FLOPs per cycle, analyzer port lists, compilers, and the streaming
    benchmark kernels and measurements (one thread per core).

    What Kerncraft files do not state (SIMD width, L1 load/store limits,
    latencies) is filled with conservative defaults that are written into
    ``description`` so the user sees them.

    Raises:
        MachineError: a required Kerncraft key is missing or malformed.
    """
    def need(key, where=None):
        d = data if where is None else where
        if key not in d:
            raise MachineError(f"Kerncraft machine file lacks '{key}'", file=source)
        return d[key]

    def size_str(v):
        s = str(v).strip()
        return s.replace("kB", "KiB").replace("MB", "MiB").replace("GB", "GiB") if re.search(r"[kMG]B$", s) else s

    simd = _simd_width(data)
    lanes_dp = simd // 8
    assumed = [f"SIMD width {simd} B guessed from compiler flags"]
    fpc = _omap(data.get("FLOPs per cycle"))
    flops: dict = {}
    throughput: dict = {}
    for prec, vals in fpc.items():
        vals = _omap(vals)
        if all(isinstance(v, (int, float)) for v in vals.values()) and "total" in vals:
            flops[prec] = {k: v for k, v in vals.items() if k in ("total", "ADD", "MUL", "FMA")}
    dp = flops.get("DP")
    if dp:
        for op in ("ADD", "MUL"):
            if dp.get(op):
                throughput[op] = dp[op] / lanes_dp
        if dp.get("FMA"):
            throughput["FMA"] = dp["FMA"] / (2 * lanes_dp)
    else:
        assumed.append("no FLOPs per cycle given: ADD/MUL/FMA throughputs assumed 1 per cycle")
        throughput = {"ADD": 1.0, "MUL": 1.0, "FMA": 1.0}
    assumed.append("L1 limits assumed: 2 loads and 1 store per cycle")
    cl = data.get("cacheline size", "64 B")
    cl_bytes = int(re.match(r"\s*(\d+)", str(cl)).group(1)) if re.match(r"\s*(\d+)", str(cl)) else 64

    in_core = {
        "simd_width": f"{simd} B",
        "throughput": throughput,
        "latency": {},
        "load": {"instructions_per_cycle": 2, "bytes_per_cycle": f"{2 * simd} B/cy"},
        "store": {"instructions_per_cycle": 1, "bytes_per_cycle": f"{simd} B/cy"},
        "load_store_per_cycle": 2,
        "flops_per_cycle": flops,
    }
    ports = {}
    for key, label in (("overlapping model", "overlapping"), ("non-overlapping model", "non_overlapping")):
        for analyzer, plist in _omap(_omap(data.get(key)).get("ports")).items():
            ports.setdefault(analyzer.lower(), {})[label] = [str(x) for x in plist]
    if ports:
        in_core["analyzer_ports"] = ports
    icm = _omap(data.get("in-core model"))
    if "LLVM-MCA" in icm:
        m = re.search(r"-mcpu=(\S+)", str(icm["LLVM-MCA"]))
        if m:
            in_core["llvm_mca_cpu"] = m.group(1)
    if "llvm_mca_cpu" not in in_core:
        # the CPU llvm-mca knows for the OSACA/IACA architecture code the file names
        from ..compiled.osaca_backend import ARCH

        by_code = {code: cpu for cpu, code in ARCH.items()}
        for key in ("OSACA", "IACA"):
            if str(icm.get(key, "")).upper() in by_code:
                in_core["llvm_mca_cpu"] = by_code[str(icm[key]).upper()]
                break
    port = min(simd, _L1_PORT_BYTES.get(in_core.get("llvm_mca_cpu", ""), simd))
    if port < simd:
        in_core["load"]["bytes_per_cycle"], in_core["store"]["bytes_per_cycle"] = f"{2 * port} B/cy", f"{port} B/cy"
        assumed.append(f"L1 data paths of {port} B per port and cycle ({in_core['llvm_mca_cpu']})")

    levels = []
    links = []
    overlap = ["T_OL"]
    hierarchy = need("memory hierarchy")
    if not isinstance(hierarchy, list) or not hierarchy:
        raise MachineError("Kerncraft 'memory hierarchy' must be a list", file=source)
    prev_name = None
    victim_targets = set()
    victim_sources = []
    for i, lv in enumerate(hierarchy):
        if not isinstance(lv, dict) or "level" not in lv:
            raise MachineError(f"'memory hierarchy'[{i}] lacks 'level'", file=source)
        name = str(lv["level"])
        entry = {"level": name}
        cpg = lv.get("cores per group")
        if cpg is not None:
            entry["cores_per_group"] = int(cpg)
        if lv.get("groups"):
            entry["groups"] = int(lv["groups"])
        cache = lv.get("cache per group")
        if name != "MEM":
            if cache:
                sets, ways = int(cache["sets"]), int(cache["ways"])
                line = int(re.match(r"\s*(\d+)", str(cache.get("cl_size", cl_bytes))).group(1))
                entry.update(sets=sets, ways=ways, size=f"{sets * ways * line} B",
                             replacement=str(cache.get("replacement_policy", "LRU")).upper()
                             .replace("RR", "RANDOM") if str(cache.get("replacement_policy", "LRU")).upper() in ("LRU", "FIFO", "RR", "RANDOM") else "LRU",
                             write_allocate=bool(cache.get("write_allocate", True)),
                             write_back=bool(cache.get("write_back", True)))
                if cache.get("victims_to"):
                    victim_targets.add(str(cache["victims_to"]))
            elif lv.get("size per group"):
                entry["size"] = size_str(lv["size per group"])
            else:
                raise MachineError(f"'memory hierarchy'[{i}] ({name}) has no cache description", file=source)
        if name in victim_targets:
            entry["type"] = "victim"
            entry["victim_clean"], entry["victim_clean_note"] = _victim_clean_default(data, icm, name, prev_name)
            victim_sources.append(entry["victim_clean_note"])
        levels.append(entry)
        up = lv.get("upstream throughput")
        if prev_name is not None:
            link = {"between": [prev_name, name]}
            bw, duplex = (up + [None, None])[:2] if isinstance(up, list) else (None, None)
            if bw is None:
                raise MachineError(f"'memory hierarchy'[{i}] ({name}) lacks 'upstream throughput'", file=source)
            bw = "measured" if "memory bandwidth" in str(bw) else str(bw)
            if duplex == "full-duplex":
                link["bandwidth"] = [bw, bw]
                link["duplex"] = "full"
            else:
                link["bandwidth"] = bw
            pl = lv.get("penalty cycles per cacheline load")
            ps = lv.get("penalty cycles per cacheline store", lv.get("penalty cycles per cachlinie store"))
            if pl:
                link["penalty_load"] = f"{pl} cy"
            if ps:
                link["penalty_store"] = f"{ps} cy"
            links.append(link)
            if lv.get("transfers overlap"):
                overlap.append(f"{prev_name}{name}")
        elif lv.get("transfers overlap"):
            overlap.append("T_nOL")
        prev_name = name

    bench = _omap(data.get("benchmarks"))
    kernels = {}
    for kname, k in _omap(bench.get("kernels")).items():
        k = _omap(k)
        rs, ws, rws = (_omap(k.get(x)) for x in ("read streams", "write streams", "read+write streams"))
        elem = "8 B"
        if rs.get("streams"):
            b = float(re.match(r"\s*([\d.]+)", str(rs.get("bytes", "8"))).group(1))
            elem = f"{b / rs['streams']:g} B"
        kernels[kname] = {"read_streams": int(rs.get("streams", 0)), "write_streams": int(ws.get("streams", 0)),
                          "read_write_streams": int(rws.get("streams", 0)),
                          "flops_per_iteration": float(k.get("FLOPs per iteration", 0)), "element_size": elem}
    measurements = {}
    for lvl, per_tpc in _omap(bench.get("measurements")).items():
        per_tpc = _omap(per_tpc)
        block = per_tpc.get(1) or per_tpc.get("1")
        if not block:
            continue
        entry = {"cores": [int(c) for c in block.get("cores", [])]}
        for kname, vals in _omap(block.get("results")).items():
            if kname in kernels:
                entry[kname] = [str(v) for v in vals]
        measurements[str(lvl)] = entry

    compilers = {str(k): str(v) for k, v in _omap(data.get("compiler")).items()}
    out = {
        "name": Path(source).stem,
        "description": "Converted from a Kerncraft machine file (" + Path(source).name + "); " + "; ".join(assumed) + ".",
        "model_name": str(data.get("model name", "")),
        "micro_architecture": str(data.get("micro-architecture", icm.get("OSACA", icm.get("IACA", "")))),
        "isa": str(data.get("isa", "x86")),
        "clock": str(need("clock")),
        "sockets": int(data.get("sockets", 1)),
        "cores_per_socket": int(need("cores per socket")),
        "threads_per_core": int(data.get("threads per core", 1)),
        "numa_domains_per_socket": int(data.get("NUMA domains per socket", 1)),
        "cacheline_size": f"{cl_bytes} B",
        "in_core": in_core,
        "memory_hierarchy": levels,
        "links": links,
        "overlap": overlap,
        "benchmarks": {"kernels": kernels, "measurements": measurements},
        "compiler": compilers,
        "sources": [f"Kerncraft machine file {Path(source).name} (converted)"] + victim_sources,
    }
    return out


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
                       "cross-architecture-machine-models.txt Table 3, EPYC 7451 daxpby T_L2L3 = 0.75 / 0.25 cy/it "
                       "in L3 / memory)")
    return True, (f"{level}: victim cache from a Kerncraft file (which cannot say whether clean evictions cost "
                  f"a transfer): clean {above} evictions count as transfers (victim_clean: true, the default: "
                  "cross-architecture-machine-models.txt §3.3, Table 3 for SKL, TX2, PWR9)")
