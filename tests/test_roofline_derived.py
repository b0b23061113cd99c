"""Roofline bandwidths derived from the ECM transfer rates where a machine model has no measurement
(loopmodel.machine.derived_bandwidth; cross-architecture-machine-models.txt §3.4.1-§3.4.2)."""
from __future__ import annotations

import dataclasses
import json
import math

import pytest
from hypothesis import given, settings, strategies as st

from helpers import KERNELS, run_cli
from loopmodel.errors import ModelError
from loopmodel.fileio.machine_files import builtin_names, load_machine
from loopmodel.machine.bandwidth import choose_bandwidth, has_measurements
from loopmodel.machine.derived_bandwidth import DERIVED_KERNEL, derived_bandwidth, roofline_bandwidth
from loopmodel.machine.model import Benchmarks, LinkBandwidth

ZEN = "Zen_EPYC-7451"


def _max_rate_bps(machine, level: str) -> float:
    """The ECM rate of one link into ``level`` in B/s: a half-duplex link's bandwidth, both directions of
    a full-duplex one (eq. 3: they run side by side), or the L1 load plus store limits (eq. 1)."""
    if level == machine.memory_hierarchy[0].level:
        ic = machine.in_core
        return (ic.load.bytes_per_cycle + ic.store.bytes_per_cycle) * machine.clock
    link = next(lk for lk in machine.links if lk.between[1] == level)
    bws = machine.link_bandwidths_cy(link)
    return (sum(bws) if link.duplex == "full" else bws[0]) * machine.clock


@pytest.mark.parametrize("name", builtin_names())
def test_derived_link_bandwidth_is_the_inverse_of_ecm_busy_time(name):
    """Bytes over the ECM busy time of the same loads and stores (cross-architecture paper eq. 3)."""
    from loopmodel.models.ecm import _contribution
    m = load_machine(name)
    for lk in m.links:
        try:
            bws = m.link_bandwidths_cy(lk)
        except ValueError:
            continue
        c = _contribution("x", dataclasses.replace(lk, penalty_load=0.0, penalty_store=0.0),
                          (bws, "", None), 3.0, 1.0, m.cacheline_size)
        got = derived_bandwidth(m, lk.between[1], 3, 1).bandwidth
        assert got == pytest.approx(4 * m.cacheline_size / c.busy * m.clock), (name, lk.between)


def test_zen_l1_from_load_and_store_limits():
    m = load_machine(ZEN)  # L1: 2 loads x 16 B (32 B/cy), 1 store x 16 B, 2 loads+stores per cy
    ch = derived_bandwidth(m, "L1", 2, 1)  # triad: 2 loads : 1 store
    assert ch.kernel == DERIVED_KERNEL and ch.cores == 1 and ch.derived
    # max(2/3 / 32, 1/3 / 16, 1 / 32) cy/B -> 32 B/cy
    assert ch.bandwidth == pytest.approx(32 * m.clock)
    only_stores = derived_bandwidth(m, "L1", 0, 1)
    assert only_stores.bandwidth == pytest.approx(16 * m.clock)


def test_zen_links_duplex_sharing_and_memory_domains():
    m = load_machine(ZEN)
    # L1-L2: [32, 32] B/cy full duplex: 3 loads : 1 store -> busy max(0.75/32, 0.25/32) per B
    assert derived_bandwidth(m, "L2", 3, 1).bandwidth == pytest.approx(32 / 0.75 * m.clock)
    # L2-L3: 32 B/cy half duplex, shared by 3 cores (a CCX): 1..3 cores one link, 4 cores two
    assert derived_bandwidth(m, "L3", 3, 1, cores=3).bandwidth == pytest.approx(32 * m.clock)
    assert derived_bandwidth(m, "L3", 3, 1, cores=4).bandwidth == pytest.approx(64 * m.clock)
    # memory: 29.9 GB/s per ccNUMA domain of 6 cores
    per = m.cores_per_numa_domain
    assert derived_bandwidth(m, "MEM", 3, 1, cores=per).bandwidth == pytest.approx(29.9e9)
    assert derived_bandwidth(m, "MEM", 3, 1, cores=per + 1).bandwidth == pytest.approx(2 * 29.9e9)
    # a private link adds up per core
    assert derived_bandwidth(m, "L2", 1, 0, cores=5).bandwidth == pytest.approx(5 * 32 * m.clock)


def test_power9_upper_cache_group_and_shared_by():
    m = load_machine("Power9_8335-GTX")  # L1-L2 [64, 16] full duplex, shared_by 2
    one = derived_bandwidth(m, "L2", 1, 0, cores=1).bandwidth
    assert one == pytest.approx(64 * m.clock)
    assert derived_bandwidth(m, "L2", 1, 0, cores=2).bandwidth == pytest.approx(one)
    assert derived_bandwidth(m, "L2", 1, 0, cores=3).bandwidth == pytest.approx(2 * one)
    assert derived_bandwidth(m, "L2", 0, 1).bandwidth == pytest.approx(16 * m.clock)


def test_measured_keeps_priority():
    m = load_machine("HaswellEP_E5-2695v3")
    assert has_measurements(m, "MEM")
    got = roofline_bandwidth(m, "MEM", 3, 1, cores=1)
    assert got == choose_bandwidth(m, "MEM", 3, 1, cores=1) and not got.derived
    bare = dataclasses.replace(m, benchmarks=Benchmarks())
    derived = roofline_bandwidth(bare, "L2", 3, 1, cores=1)
    assert derived.kernel == DERIVED_KERNEL and derived.derived
    with pytest.raises(ModelError, match="measured bandwidth"):  # its memory link is 'measured'
        roofline_bandwidth(bare, "MEM", 3, 1)


def test_measured_link_without_measurement_is_a_model_error():
    m = load_machine(ZEN)
    mem = m.links[-1]
    odd = dataclasses.replace(m, links=m.links[:-1] + [dataclasses.replace(mem, bandwidth=(LinkBandwidth(None, "measured"),))])
    with pytest.raises(ModelError, match="no measured bandwidths for MEM"):
        derived_bandwidth(odd, "MEM", 1, 1)
    with pytest.raises(ModelError, match="no level"):
        derived_bandwidth(m, "L9", 1, 1)


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(builtin_names()), reads=st.integers(0, 8), writes=st.integers(0, 4),
       cores=st.integers(1, 64))
def test_every_builtin_model_gives_finite_roofline_bandwidths(name, reads, writes, cores):
    m = load_machine(name)
    for lv in m.memory_hierarchy:
        ch = roofline_bandwidth(m, lv.level, reads, writes, cores=cores)
        assert math.isfinite(ch.bandwidth) and ch.bandwidth > 0, (name, lv.level)
        if not has_measurements(m, lv.level):
            rate = _max_rate_bps(m, lv.level)
            assert derived_bandwidth(m, lv.level, reads, writes, 1).bandwidth <= rate * (1 + 1e-12)
            assert ch.bandwidth <= cores * rate * (1 + 1e-12)


def test_cli_roofline_on_zen_text_and_json():
    args = ("analyze", KERNELS / "triad.c", "-m", ZEN, "-D", "N=10000000", "-p", "Roofline")
    p = run_cli(*args)
    assert p.returncode == 0, p.stderr
    assert "Roofline skipped" not in p.stdout and DERIVED_KERNEL in p.stdout
    assert "derived from the machine model's ECM transfer rates" in " ".join(p.stdout.split())
    doc = json.loads(run_cli(*args, "--json").stdout)
    roof = doc["roofline"]
    assert [lv["level"] for lv in roof["levels"]] == ["L1", "L2", "L3", "MEM"]
    assert all(lv["bandwidth_kernel"] == DERIVED_KERNEL and lv["bandwidth_B_s"] > 0 for lv in roof["levels"])
    assert roof["levels"][-1]["bandwidth_B_s"] == pytest.approx(29.9e9)
    assert roof["bottleneck"] == "MEM"
    assert any("ECM transfer rates, not measured" in n for n in doc["notes"])
    from loopmodel.report import doctypes
    assert doctypes.check("analyze", doc) == []
