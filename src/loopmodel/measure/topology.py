"""Topology of the host from the Linux kernel's sysfs and ``/proc/cpuinfo``.

The first step of building a machine model of the user's own machine (as Kerncraft's
``likwid_bench_auto.py`` does with likwid-topology, kerncraft-tool-paper.txt §2.2): which
CPUs there are, how they group into cores, sockets and NUMA domains, every cache level with
its size, associativity, line size and the cores sharing it, and the instruction-set
extensions that decide the SIMD width.

Everything is read from files under a root directory (``/`` on the host, a fixture tree in
tests): ``sys/devices/system/cpu/online``, ``cpuN/topology/{physical_package_id,core_id}``,
``cpuN/cache/indexK/{level,type,size,ways_of_associativity,number_of_sets,
coherency_line_size,shared_cpu_list}``, ``sys/devices/system/node/nodeN/cpulist`` and
``proc/cpuinfo``. Nothing is executed. What is missing (a container without sysfs, a VM
that hides its caches) is left out and said in :attr:`HostTopology.notes`; it never raises
for a missing or malformed file.

Sizes are what the kernel reports; a virtual machine may report a cache larger than the
CPU it runs on shares with this guest (a 480 MiB "L3" on a 2-vCPU KVM guest), so the
effective capacity is for a measurement to decide, not this module.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field


# SIMD register width in bytes by instruction-set extension, widest first
_SIMD = (("avx512f", 64), ("avx", 32), ("sse2", 16), ("asimd", 16))
_ISA_FLAGS = ("sse2", "sse4_2", "avx", "fma", "avx2", "avx512f", "avx512vl", "avx512_fp16",
              "asimd", "fphp", "sve", "sve2", "vsx", "altivec")


@dataclass(frozen=True)
class CacheInfo:
    """One cache level as one CPU sees it.

    Attributes:
        level: 1, 2, 3, ...
        type: ``"Data"``, ``"Instruction"`` or ``"Unified"``.
        size: bytes.
        ways, sets: associativity and number of sets (None where not reported).
        line_size: bytes per cache line.
        shared_cpus: the logical CPUs sharing this cache.
        shared_cores: the physical cores among them (SMT siblings count once).
    """
    level: int
    type: str
    size: int
    ways: int | None
    sets: int | None
    line_size: int
    shared_cpus: tuple
    shared_cores: int


@dataclass(frozen=True)
class HostTopology:
    """What the kernel says about the host's CPUs and caches.

    Attributes:
        model_name: CPU model string (``/proc/cpuinfo``; on AArch64 the implementer/part).
        vendor: ``GenuineIntel``, ``AuthenticAMD``, ``ARM`` implementer code, or ``""``.
        cpus: online logical CPUs.
        sockets: distinct physical packages.
        cores: physical cores in all (distinct package/core pairs).
        threads_per_core: logical CPUs per core (SMT).
        numa_domains: CPUs of each NUMA node, in node order (one domain of all CPUs
            where sysfs has no nodes).
        caches: data and unified caches of the first online CPU, by level (instruction
            caches are left out: loop kernels' data traffic does not pass them).
        isa: instruction-set extensions found among the CPU flags (subset of a fixed list).
        simd_width: widest SIMD register in bytes (64 AVX-512, 32 AVX, 16 SSE2/NEON), or
            None where no known extension is listed.
        notes: what could not be read and what was assumed instead.
    """
    model_name: str
    vendor: str
    cpus: tuple
    sockets: int
    cores: int
    threads_per_core: int
    numa_domains: tuple
    caches: tuple
    isa: tuple
    simd_width: int | None
    notes: tuple = field(default=())

    @property
    def cores_per_socket(self) -> int:
        return max(1, self.cores // max(1, self.sockets))


def allowed_cpus() -> tuple:
    """The logical CPUs this process may run on, ascending (its affinity mask; every CPU
    ``0 .. os.cpu_count() - 1`` where the platform has no affinity call)."""
    if hasattr(os, "sched_getaffinity"):
        return tuple(sorted(os.sched_getaffinity(0)))
    return tuple(range(os.cpu_count() or 1))


def parse_cpu_list(text: str) -> tuple:
    """``"0-3,8,10-11"`` -> ``(0, 1, 2, 3, 8, 10, 11)``.

    Raises:
        ValueError: not a CPU list.
    """
    out = []
    for part in text.strip().split(","):
        if not part:
            continue
        m = re.fullmatch(r"(\d+)(?:-(\d+))?", part.strip())
        if not m:
            raise ValueError(f"not a CPU list: {text.strip()!r}")
        lo, hi = int(m.group(1)), int(m.group(2) or m.group(1))
        out.extend(range(lo, hi + 1))
    return tuple(sorted(set(out)))


def parse_size(text: str) -> int:
    """sysfs cache size (``"48K"``, ``"2048K"``, ``"32M"``, ``"1048576"``) in bytes.

    Raises:
        ValueError: not a size.
    """
    m = re.fullmatch(r"\s*(\d+)\s*([KMG]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"not a cache size: {text.strip()!r}")
    return int(m.group(1)) * {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}[m.group(2).upper()]


def read_topology(root: str = "/") -> HostTopology:
    """The host's topology from the files under ``root`` (see the module docstring).

    Args:
        root: the file-system root (``/``; a fixture tree in tests).

    Returns:
        :class:`HostTopology`; what is missing is in its ``notes``.
    """
    notes: list = []
    cpu_dir = os.path.join(root, "sys", "devices", "system", "cpu")
    cpus = _online_cpus(cpu_dir, notes)
    info = _cpuinfo(os.path.join(root, "proc", "cpuinfo"), notes)
    places = {c: _place(cpu_dir, c, info) for c in cpus}
    core_of = {c: p for c, p in places.items() if p is not None}
    if len(core_of) < len(cpus):
        notes.append("no core/package ids in sysfs for some CPUs: each such CPU counted as a core of socket 0")
        core_of.update({c: (0, ("cpu", c)) for c in cpus if c not in core_of})
    sockets = len({p for p, _ in core_of.values()}) or 1
    cores = len(set(core_of.values())) or 1
    caches = _caches(cpu_dir, cpus[0] if cpus else 0, core_of, notes)
    isa = tuple(f for f in _ISA_FLAGS if f in info["flags"])
    simd = next((w for flag, w in _SIMD if flag in info["flags"]), None)
    if simd is None:
        notes.append("no known SIMD extension among the CPU flags: SIMD width unknown")
    if "sve" in info["flags"]:
        notes.append("SVE: the vector length is not in /proc/cpuinfo; NEON's 16 B assumed")
    return HostTopology(info["model"], info["vendor"], cpus, sockets, cores, max(1, len(cpus) // cores),
                        _numa(root, cpus, notes), caches, isa, simd, tuple(notes))


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read().strip()
    except OSError:
        return None


def _online_cpus(cpu_dir: str, notes: list) -> tuple:
    text = _read(os.path.join(cpu_dir, "online"))
    try:
        cpus = parse_cpu_list(text) if text else ()
    except ValueError:
        cpus = ()
    if not cpus:
        found = sorted(int(n[3:]) for n in _listdir(cpu_dir) if re.fullmatch(r"cpu\d+", n))
        cpus = tuple(found) or (0,)
        notes.append(f"{os.path.join(cpu_dir, 'online')} unreadable: CPUs taken from the cpuN folders "
                     f"({len(cpus)})" if found else "no CPU list in sysfs: one CPU assumed")
    return cpus


def _listdir(path: str) -> list:
    try:
        return os.listdir(path)
    except OSError:
        return []


def _place(cpu_dir: str, cpu: int, info: dict):
    """(package id, core id) of a CPU from sysfs, else from /proc/cpuinfo, else None."""
    top = os.path.join(cpu_dir, f"cpu{cpu}", "topology")
    pkg, core = _read(os.path.join(top, "physical_package_id")), _read(os.path.join(top, "core_id"))
    if pkg is not None and core is not None and pkg.lstrip("-").isdigit() and core.isdigit():
        return int(pkg), int(core)
    return info["places"].get(cpu)


def _cpuinfo(path: str, notes: list) -> dict:
    text = _read(path)
    out = {"model": "", "vendor": "", "flags": set(), "places": {}}
    if text is None:
        notes.append(f"{path} unreadable: no CPU model name or flags")
        return out
    for block in text.split("\n\n"):
        kv = dict(_kv(ln) for ln in block.splitlines() if ":" in ln)
        out["model"] = out["model"] or kv.get("model name", "") or _arm_name(kv)
        out["vendor"] = out["vendor"] or kv.get("vendor_id", "") or kv.get("CPU implementer", "")
        out["flags"] |= set((kv.get("flags") or kv.get("Features") or "").split())
        if kv.get("processor", "").isdigit() and kv.get("physical id", "").isdigit() and kv.get("core id", "").isdigit():
            out["places"][int(kv["processor"])] = (int(kv["physical id"]), int(kv["core id"]))
    return out


def _kv(line: str) -> tuple:
    k, _, v = line.partition(":")
    return k.strip(), v.strip()


def _arm_name(kv: dict) -> str:
    if "CPU part" not in kv:
        return ""
    return f"implementer {kv.get('CPU implementer', '?')} part {kv['CPU part']}"


def _caches(cpu_dir: str, cpu: int, core_of: dict, notes: list) -> tuple:
    base = os.path.join(cpu_dir, f"cpu{cpu}", "cache")
    out = []
    for name in sorted(_listdir(base), key=lambda n: int(n[5:]) if n[5:].isdigit() else 0):
        if not re.fullmatch(r"index\d+", name):
            continue
        cache = _cache(os.path.join(base, name), core_of)
        if cache is None:
            notes.append(f"{os.path.join(base, name)}: incomplete cache description, left out")
        elif cache.type != "Instruction":
            out.append(cache)
    if not out:
        notes.append(f"{base}: no cache information in sysfs")
    return tuple(sorted(out, key=lambda c: c.level))


def _cache(path: str, core_of: dict) -> CacheInfo | None:
    level, ctype, size = (_read(os.path.join(path, f)) for f in ("level", "type", "size"))
    if not (level and level.isdigit() and ctype and size):
        return None
    try:
        size_b = parse_size(size)
        shared = parse_cpu_list(_read(os.path.join(path, "shared_cpu_list")) or "")
    except ValueError:
        return None
    ways, sets, line = (_int(_read(os.path.join(path, f))) for f in
                        ("ways_of_associativity", "number_of_sets", "coherency_line_size"))
    cores = len({core_of[c] for c in shared if c in core_of}) or 1
    return CacheInfo(int(level), ctype, size_b, ways, sets, line or 64, shared, cores)


def _int(text: str | None) -> int | None:
    return int(text) if text and text.isdigit() and int(text) > 0 else None


def _numa(root: str, cpus: tuple, notes: list) -> tuple:
    node_dir = os.path.join(root, "sys", "devices", "system", "node")
    nodes = sorted((int(n[4:]), n) for n in _listdir(node_dir) if re.fullmatch(r"node\d+", n))
    domains = []
    for _, n in nodes:
        try:
            members = parse_cpu_list(_read(os.path.join(node_dir, n, "cpulist")) or "")
        except ValueError:
            members = ()
        if members:
            domains.append(members)
    if not domains:
        notes.append("no NUMA nodes in sysfs: one NUMA domain of all CPUs assumed")
        return (cpus,)
    return tuple(domains)


def one_cpu_per_core(cpus, root: str = "/") -> tuple:
    """The first logical CPU of each physical core among ``cpus`` (in their order): SMT
    siblings of a CPU already taken are left out. A CPU whose core sysfs does not give counts
    as a core of its own."""
    cpu_dir = os.path.join(root, "sys/devices/system/cpu")
    seen, out = set(), []
    for c in cpus:
        place = _place(cpu_dir, c, {"places": {}})
        if place is None or place not in seen:
            out.append(c)
            if place is not None:
                seen.add(place)
    return tuple(out)
