"""The typed ``probe`` section of a probed machine file (:mod:`loopmodel.machine.probe_section`):
parsed once when the file is read, written back as read, refused with one line naming the file
and the key where it is malformed; and the ``memory-noisy`` tag, which applies the probe's
repetition rule to the memory benchmark the ECM memory term is built from.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
import yaml
from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

import kernel_strategies as ks
from loopmodel.errors import LoopmodelError, MachineError
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import machine_mapping, machine_text
from loopmodel.machine.probe_section import (MEMORY_SPREAD_MAX, BandwidthRow, ProbeSection, probe_section,
                                             repetition_gap)
from loopmodel.measure.probe_check import bandwidth_spread
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.confidence import memory_measurement

ROOT = Path(__file__).resolve().parents[1]
#: probed machine files of the repository (a ``probe`` section each)
PROBED = (ROOT / "tests" / "fixtures" / "host-probe-xeon-kvm.yml",
          ROOT / "tests" / "fixtures" / "confidence" / "host_validated.yml",
          ROOT / "benchmarks" / "results" / "incore-classic" / "probe-xeon-kvm-2c.yml")
HOST = PROBED[0]
TRIAD = ROOT / "examples" / "kernels" / "triad.c"


def _dump(data: dict) -> str:
    return yaml.safe_dump(data, sort_keys=False, width=110, default_flow_style=None, allow_unicode=True)


def _section_text(text: str) -> str:
    """The ``probe:`` block of a machine file's text (to the next top-level key)."""
    lines = text.splitlines(keepends=True)
    start = next(i for i, ln in enumerate(lines) if ln.startswith("probe:"))
    end = next((i for i in range(start + 1, len(lines)) if lines[i][:1].isalpha()), len(lines))
    return "".join(lines[start:end])


# ------------------------------------------------------------------------ reading and writing


@pytest.mark.parametrize("path", PROBED, ids=lambda p: p.name)
def test_a_probed_file_read_and_written_keeps_its_probe_section_byte_for_byte(path):
    text = path.read_text()
    model = load_machine(str(path))
    assert isinstance(model.probe, ProbeSection)
    assert _section_text(_dump(machine_mapping(model))) == _section_text(text)
    once = machine_text(machine_mapping(model), ["header"])  # the writer's text is a fixed point
    again = load_machine_text(once, path.parent)
    assert machine_text(machine_mapping(again), ["header"]) == once and again.probe == model.probe


def load_machine_text(text: str, folder: Path):
    out = folder / ".probe-roundtrip.yml"
    try:
        out.write_text(text)
        return load_machine(str(out))
    finally:
        out.unlink()


def test_typed_access_with_units():
    p = load_machine(str(HOST)).probe
    assert (p.hostname, p.date, p.model_name) == ("vm", "2026-11-26T17:28:09Z", "Intel(R) Xeon(R) Processor")
    assert "avx512f" in p.isa_flags and p.self_check is None and p.validation is None
    row = p.row("MEM", "copy", 2)
    assert row == BandwidthRow(2, 25.03, 24.99, 3)
    assert row.gap == pytest.approx(1 - 24.99 / 25.03)  # three repetitions: the median is the second fastest
    assert p.latency[0].size_B == 12288 and p.latency[0].cy_min == pytest.approx(5.078)
    assert {(q.op, q.kind) for q in p.in_core_points} >= {("ADD", "latency"), ("ADD", "throughput")}
    validated = load_machine(str(PROBED[1])).probe.validation
    assert validated.overall.count == 60 and validated.by_level_regime
    checked = load_machine(str(PROBED[2])).probe.self_check
    assert checked.verdict == "ok" and checked.check("memory bandwidth repetitions").figure_percent == 4.4
    assert checked.lines()[0] == "self-check: ok"
    assert load_machine("SkylakeSP_Gold-6148").probe is None


@pytest.mark.parametrize("probe, key", [
    ({"tables": {"MEM": {"copy": [{"threads": 1, "GB_per_s_max": "fast"}]}}}, "tables.MEM.copy[0].GB_per_s_max"),
    ({"tables": "x"}, "tables"),
    ({"latency": [{"size_B": 12288, "cy_min": "?"}]}, "latency[0].cy_min"),
    ({"in_core": {"points": [{"op": "ADD", "kind": "latency", "width_bytes": 8.5}]}}, "in_core.points[0].width_bytes"),
    ({"hostname": 3}, "hostname"),
    ({"self_check": {"checks": [{"name": "x", "figure_percent": "high"}]}}, "self_check.checks[0].figure_percent"),
])
def test_bad_probe_data_is_one_line_naming_the_file_and_the_key(tmp_path, probe, key):
    mapping = yaml.safe_load(HOST.read_text())
    mapping["probe"] = probe
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(mapping))
    with pytest.raises(MachineError) as err:
        load_machine(str(path))
    text = str(err.value)
    assert "\n" not in text and "bad.yml" in text and "probe" in text and f"'{key}'" in text, text
    assert isinstance(err.value, LoopmodelError)


def test_the_self_check_and_the_file_apply_one_repetition_rule():
    point = type("P", (), {"seconds": (1.0, 1.25, 3.0)})()
    assert bandwidth_spread(point) == repetition_gap(1.0, 1.25) == pytest.approx(0.2)
    # the same point as the file writes it (GB/s of the fastest, median and slowest run) has the same gap
    assert BandwidthRow(1, 1 / 1.0, 1 / 1.25, 3).gap == pytest.approx(0.2)
    assert BandwidthRow(1, 10.0, 9.0, 2).gap == pytest.approx(1 - 8.0 / 10.0)  # the median of two is their mean
    assert BandwidthRow(1, 10.0, 10.0, 1).gap == 0.0


# ------------------------------------------------------------------------ memory-noisy


def _row(threads: int, gap: float) -> dict:
    second = 10.0 * (1 - gap)
    return {"threads": threads, "GB_per_s_max": 10.0, "GB_per_s_median": second, "GB_per_s_min": second / 2,
            "spread": 1 - second / 20.0, "repetitions": 3}


def probed(machine, gaps: dict, default: float = 0.01):
    """``machine`` with a probe whose memory table has a point per benchmark kernel and core count
    of its measurements, the gap of its two fastest runs ``gaps.get((kernel, cores), default)``
    (and a (max - min) / max spread above 50 % everywhere: the whole spread is no test)."""
    table = machine.benchmarks.measurements["MEM"]
    rows = {k: [_row(c, gaps.get((k, c), default)) for c in table.cores] for k in table.bandwidths}
    return dataclasses.replace(machine, probe=probe_section({"hostname": "h", "tables": {"MEM": rows}}))


def run(machine, source_or_case, defines: dict, **options):
    options.setdefault("incore", "analytic")
    if isinstance(source_or_case, ks.KernelCase):
        return ks.analyze(source_or_case, machine, defines, **options)
    from loopmodel.fileio.c_kernel import parse_kernel
    kernel = parse_kernel(source_or_case, "k.c")[0]
    return Analyzer(kernel, machine, AnalyzerSettings(**options)).run(defines)


def test_case_9_the_tag_follows_the_memory_terms_benchmark_not_the_core_count():
    """triad on the probed Xeon guest at N=10^7: the ECM memory term uses the copy benchmark at 2
    cores (two fastest runs 0.2 % apart) whatever --cores; the triad point at 2 threads, which
    it does not use, spreads 11 % (max - min) / max. Same ECM numbers, same tags, none noisy."""
    source = TRIAD.read_text()
    machine = load_machine(str(HOST))
    one, two = (run(machine, source, {"N": 10 ** 7}, cores=c) for c in (1, 2))
    assert one.ecm.T_ECM == two.ecm.T_ECM
    point, gap = memory_measurement(one)
    assert (point.kernel, point.cores) == ("copy", 2) and gap == pytest.approx(1 - 24.99 / 25.03)
    assert memory_measurement(two) == (point, gap)
    assert "memory-noisy" not in one.confidence.tags and one.confidence.tags == two.confidence.tags


def test_memory_noisy_needs_memory_data_and_a_noisy_memory_term():
    machine = load_machine("SkylakeSP_Gold-6148")
    source = TRIAD.read_text()
    point, _ = memory_measurement(run(probed(machine, {}), source, {"N": 10 ** 7}))
    noisy = probed(machine, {(point.kernel, point.cores): 0.2})
    assert "memory-noisy" in run(noisy, source, {"N": 10 ** 7}).confidence.tags
    assert "memory-noisy" in run(noisy, source, {"N": 10 ** 7}, cores=2).confidence.tags  # whatever --cores
    assert "memory-noisy" not in run(noisy, source, {"N": 1000}).confidence.tags  # data in L1
    assert "memory-noisy" not in run(noisy, source, {"N": 10 ** 7}, memory_bandwidth=1e11).confidence.tags
    others = {(k, c): 0.5 for k in machine.benchmarks.measurements["MEM"].bandwidths
              for c in machine.benchmarks.measurements["MEM"].cores if (k, c) != (point.kernel, point.cores)}
    assert "memory-noisy" not in run(probed(machine, others), source, {"N": 10 ** 7}).confidence.tags
    assert "memory-noisy" not in run(machine, source, {"N": 10 ** 7}).confidence.tags  # no probe


MEASURED = tuple(n for n in ks.MACHINES if ks.load(n).link(ks.load(n).memory_hierarchy[-2].level).measured)


@settings(ks.PROPERTY_SETTINGS, max_examples=40)
@given(data=st.data(), name=st.sampled_from(MEASURED), cores=st.integers(2, 4),
       noisy_gap=st.floats(0.0, 0.3), other_gap=st.floats(0.0, 0.6))
def test_memory_noisy_is_the_probe_rule_on_the_memory_terms_benchmark(data, name, cores, noisy_gap, other_gap):
    """Over random kernels, sizes and machines with a measured memory bandwidth: the tag is set
    exactly where the data come from memory, the loop is not compute-bound and the benchmark point
    the ECM memory term is built from has its two fastest runs more than MEMORY_SPREAD_MAX apart;
    the other points do not matter, and where ``--cores`` leaves the ECM numbers as they are it
    leaves the tag as it is."""
    case = data.draw(ks.kernels())
    defines = data.draw(ks.sizes(case, 1e7, 1e8) if data.draw(st.booleans()) else ks.sizes(case, 1e3, 1e8))
    machine = ks.load(name)
    try:
        base = run(probed(machine, {}), case, defines)
    except LoopmodelError:
        assume(False)
    got = memory_measurement(base)
    assume(got is not None)
    key = (got[0].kernel, got[0].cores)
    table = machine.benchmarks.measurements["MEM"]
    gaps = {(k, c): other_gap for k in table.bandwidths for c in table.cores}
    gaps[key] = noisy_gap
    model = probed(machine, gaps)
    cores = min(cores, machine.cores_per_socket * machine.sockets)
    one, many = run(model, case, defines), run(model, case, defines, cores=cores)
    for res in (one, many):
        point, gap = memory_measurement(res)
        assert (point.kernel, point.cores) == key  # the saturated bandwidth: the same point at any --cores
        tags = set(res.confidence.tags)
        expected = res.confidence.level == "MEM" and "compute-bound" not in tags and gap > MEMORY_SPREAD_MAX
        assert ("memory-noisy" in tags) == expected
        event(f"memory-noisy: {expected}")
    if one.ecm.T_ECM == many.ecm.T_ECM and one.confidence.level == many.confidence.level:
        assert ("memory-noisy" in one.confidence.tags) == ("memory-noisy" in many.confidence.tags)
