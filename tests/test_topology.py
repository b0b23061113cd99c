"""Host topology from sysfs fixture trees: this 2-vCPU KVM guest (captured), a synthetic
two-socket SMT machine, an AArch64 machine, and broken trees (notes, never an exception)."""
from __future__ import annotations

from pathlib import Path

import pytest

from loopmodel.measure.topology import parse_cpu_list, parse_size, read_topology

FIXTURES = Path(__file__).parent / "fixtures" / "sysfs"


def _write(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def _cpu_list(cpus) -> str:
    return ",".join(str(c) for c in cpus)


def _machine(root: Path, places: dict, caches: list, nodes: list | None, cpuinfo: str) -> Path:
    """A sysfs tree: ``places`` cpu -> (package, core); ``caches`` (level, type, size, ways, sets,
    sharing function cpu -> cpus); ``nodes`` lists of CPUs per NUMA node (None: no node folder)."""
    cpu = "sys/devices/system/cpu"
    _write(root, f"{cpu}/online", f"0-{max(places)}")
    for c, (pkg, core) in places.items():
        _write(root, f"{cpu}/cpu{c}/topology/physical_package_id", str(pkg))
        _write(root, f"{cpu}/cpu{c}/topology/core_id", str(core))
        for i, (level, ctype, size, ways, sets, share) in enumerate(caches):
            d = f"{cpu}/cpu{c}/cache/index{i}"
            for name, value in (("level", level), ("type", ctype), ("size", size), ("ways_of_associativity", ways),
                                ("number_of_sets", sets), ("coherency_line_size", 64),
                                ("shared_cpu_list", _cpu_list(share(c)))):
                _write(root, f"{d}/{name}", str(value))
    for n, members in enumerate(nodes or []):
        _write(root, f"sys/devices/system/node/node{n}/cpulist", _cpu_list(members))
    _write(root, "proc/cpuinfo", cpuinfo)
    return root


def test_this_kvm_guest_captured_tree():
    """Captured from this machine (2 vCPUs of an Intel Xeon under KVM): L1d 48 KiB 12-way, L2
    2 MiB 16-way per core, an "L3" of 480 MiB shared by both vCPUs as the hypervisor reports it."""
    t = read_topology(str(FIXTURES / "xeon-kvm-2c"))
    assert t.model_name == "Intel(R) Xeon(R) Processor" and t.vendor == "GenuineIntel"
    assert (t.cpus, t.sockets, t.cores, t.threads_per_core, t.cores_per_socket) == ((0, 1), 1, 2, 1, 2)
    assert t.numa_domains == ((0, 1),)
    assert [(c.level, c.type, c.size, c.ways, c.sets, c.line_size, c.shared_cores) for c in t.caches] == [
        (1, "Data", 48 * 1024, 12, 64, 64, 1), (2, "Unified", 2048 * 1024, 16, 2048, 64, 1),
        (3, "Unified", 491520 * 1024, 16, 491520, 64, 2)]
    assert all(c.size == c.ways * c.sets * c.line_size for c in t.caches)  # consistent, as reported
    assert t.simd_width == 64 and {"avx512f", "avx2", "fma"} <= set(t.isa)
    assert t.notes == ()


def test_two_socket_smt_machine(tmp_path):
    """2 sockets x 4 cores x 2 threads, Linux's usual numbering: CPUs 0-7 the first thread of each
    core (0-3 socket 0, 4-7 socket 1), CPUs 8-15 their SMT siblings; L1/L2 per core, L3 per socket."""
    places = {c: ((c % 8) // 4, c % 4) for c in range(16)}
    sibling = lambda c: sorted({c % 8, c % 8 + 8})  # noqa: E731
    socket = lambda c: sorted(x for x in range(16) if places[x][0] == places[c][0])  # noqa: E731
    caches = [(1, "Data", "32K", 8, 64, sibling), (1, "Instruction", "32K", 8, 64, sibling),
              (2, "Unified", "1024K", 16, 1024, sibling), (3, "Unified", "28160K", 11, 40960, socket)]
    nodes = [[c for c in range(16) if places[c][0] == s] for s in (0, 1)]
    root = _machine(tmp_path, places, caches, nodes,
                    "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) Gold 6148\n"
                    "flags\t\t: fpu sse2 avx fma avx2 avx512f avx512vl\n")
    t = read_topology(str(root))
    assert (len(t.cpus), t.sockets, t.cores, t.threads_per_core, t.cores_per_socket) == (16, 2, 8, 2, 4)
    assert [(c.level, c.shared_cores, len(c.shared_cpus)) for c in t.caches] == [(1, 1, 2), (2, 1, 2), (3, 4, 8)]
    assert t.caches[2].size == 28160 * 1024
    assert t.numa_domains == ((0, 1, 2, 3, 8, 9, 10, 11), (4, 5, 6, 7, 12, 13, 14, 15))
    assert t.simd_width == 64 and t.notes == ()


def test_aarch64_machine_without_numa_nodes(tmp_path):
    """4 Neoverse-style cores, ASIMD and SVE among the Features, no node folder in sysfs."""
    places = {c: (0, c) for c in range(4)}
    caches = [(1, "Data", "64K", 4, 256, lambda c: [c]), (2, "Unified", "1M", 8, 2048, lambda c: [c]),
              (3, "Unified", "32M", 16, 32768, lambda c: [0, 1, 2, 3])]
    cpuinfo = "".join(f"processor\t: {c}\nFeatures\t: fp asimd evtstrm sve\nCPU implementer\t: 0x41\n"
                      f"CPU part\t: 0xd40\n\n" for c in range(4))
    t = read_topology(str(_machine(tmp_path, places, caches, None, cpuinfo)))
    assert t.model_name == "implementer 0x41 part 0xd40" and t.vendor == "0x41"
    assert (t.sockets, t.cores, t.threads_per_core) == (1, 4, 1)
    assert [c.size for c in t.caches] == [64 << 10, 1 << 20, 32 << 20] and t.caches[2].shared_cores == 4
    assert t.simd_width == 16 and {"asimd", "sve"} <= set(t.isa)
    assert t.numa_domains == ((0, 1, 2, 3),)
    assert any("NUMA" in n for n in t.notes) and any("SVE" in n for n in t.notes)


def test_broken_trees_give_notes_not_exceptions(tmp_path):
    places = {0: (0, 0), 1: (0, 1)}
    caches = [(1, "Data", "lots", 8, 64, lambda c: [c]), (2, "Unified", "512K", 8, 1024, lambda c: [0, 1])]
    root = _machine(tmp_path, places, caches, [[0, 1]], "processor\t: 0\nflags\t: fpu\n")
    (root / "sys/devices/system/cpu/online").write_text("garbage\n")
    (root / "sys/devices/system/cpu/cpu1/topology/core_id").unlink()
    t = read_topology(str(root))
    assert t.cpus == (0, 1) and t.cores == 2  # CPUs from the cpuN folders; cpu1 counted as its own core
    assert [c.level for c in t.caches] == [2]  # the L1 with an unreadable size is left out
    assert t.simd_width is None
    text = " ".join(t.notes)
    for words in ("cpuN folders", "incomplete cache description", "SIMD width unknown", "no core/package ids"):
        assert words in text
    empty = read_topology(str(tmp_path / "nothing-here"))
    assert empty.cpus == (0,) and empty.caches == () and len(empty.notes) >= 4


@pytest.mark.parametrize("text,cpus", [("0-3", (0, 1, 2, 3)), ("0,2,4-5", (0, 2, 4, 5)), ("7", (7,)),
                                       ("0-1,1-2", (0, 1, 2))])
def test_cpu_lists(text, cpus):
    assert parse_cpu_list(text) == cpus


@pytest.mark.parametrize("text,size", [("48K", 49152), ("2048K", 2 << 20), ("32M", 32 << 20), ("1048576", 1 << 20),
                                       ("1G", 1 << 30)])
def test_cache_sizes(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("bad", ["x", "1-", "a-b"])
def test_bad_cpu_list_raises(bad):
    with pytest.raises(ValueError):
        parse_cpu_list(bad)
