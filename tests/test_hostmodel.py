"""The probed-model builder on synthetic measurements with known answers (no hardware needed):
effective capacities, link bandwidths and the overlap/duplex hypothesis, penalty and p0 fits,
schema validity of the written file, and `-m host`."""
from __future__ import annotations

import dataclasses

import pytest
import yaml

from loopmodel.fileio.machine_schema import validate_mapping
from loopmodel.fileio.machine_writer import machine_text
from loopmodel.workflows.hostmodel import BENCH_SOURCES, _analyze, build_host_model
from loopmodel.measure.bandwidth import BandwidthPoint
from loopmodel.measure.clock import ClockMeasurement
from loopmodel.measure.probe import BENCH_KERNELS, KERNELS, ProbeData, ProbeOptions, level_sizes
from loopmodel.measure.topology import CacheInfo, HostTopology
from loopmodel.models.link_fit import (Hypothesis, KernelTransfers, effective_capacities, fit_hypothesis, fit_links,
                                      hypotheses, predict)

CLOCK = 2.0e9
KiB, MiB = 1024, 1024 * 1024


def _arrays(kernel: str) -> int:
    from loopmodel.measure.bandwidth import kernel_info
    return kernel_info(kernel)["arrays"]


def point(kernel, threads, size, cy_cl, spread=0.02):
    """A point whose fastest repetition takes ``cy_cl`` cy/CL per thread at CLOCK."""
    n = size // (8 * _arrays(kernel))
    t = cy_cl / 8 / CLOCK * n * 10
    return BandwidthPoint(kernel, threads, size, 0, (t, t * (1 + spread), t * (1 + spread / 2)), 10, n)


def topology(l3=64 * MiB, cores=2):
    caches = (CacheInfo(1, "Data", 32 * KiB, 8, 64, 64, (0,), 1), CacheInfo(2, "Unified", 1 * MiB, 16, 1024, 64, (0,), 1),
              CacheInfo(3, "Unified", l3, 16, l3 // 1024, 64, tuple(range(cores)), cores))
    return HostTopology("Test CPU", "GenuineIntel", tuple(range(cores)), 1, cores, 1, (tuple(range(cores)),),
                        caches, ("sse2", "avx", "avx2", "fma"), 32, ())


# ------------------------------------------------------------------ link_fit, pure
STREAMS = {"load": (64, 0), "copy": (128, 64), "update": (64, 64), "triad": (256, 64), "daxpy": (128, 64)}


def _kernels(hyp, true_bw, penalty=0.0, mem_bw=6.0):
    out = []
    for name, (b_in, b_out) in STREAMS.items():
        k = KernelTransfers(name, 1.0, 2.0, ((b_in, b_out),) * 3, mem_bw, {})
        meas = {lv: predict(k, lv, true_bw, hyp, penalty) for lv in (1, 2, 3)}
        out.append(dataclasses.replace(k, measured=meas))
    return out


@pytest.mark.parametrize("hyp", [Hypothesis((), False, "half"), Hypothesis((2,), False, "half"),
                                 Hypothesis((0, 1, 2), False, "full"), Hypothesis((), False, "full")])
def test_fit_links_recovers_known_hypothesis_bandwidths_and_penalty(hyp):
    true_bw = (32.0, 12.0)
    fits = fit_links(_kernels(hyp, true_bw, penalty=3.0))
    best = fits[0]
    assert best.hypothesis == hyp
    assert best.bandwidths == pytest.approx(true_bw, rel=1e-3)
    assert best.penalty == pytest.approx(3.0, rel=0.02)
    assert best.residual < 0.1 < fits[-1].residual
    assert len(fits) == len(hypotheses(3)) == 16


def test_hypothesis_names_for_the_machine_file():
    names = ["L1L2", "L2L3", "L3MEM"]
    assert Hypothesis((), False, "half").names(names) == ["T_OL"]
    assert Hypothesis((2,), False, "half").names(names) == ["T_OL", "L3MEM"]
    assert Hypothesis((0, 1, 2), True, "full").names(names) == ["T_OL", "T_nOL", "L1L2", "L2L3", "L3MEM"]


def test_no_penalty_where_busy_times_already_explain_memory():
    fits = fit_links(_kernels(Hypothesis((), False, "half"), (32.0, 12.0)))
    assert fits[0].penalty == 0.0


def test_fit_hypothesis_needs_a_measurement_beyond_each_cache_link():
    k = KernelTransfers("load", 1.0, 1.0, ((64, 0), (64, 0)), 8.0, {2: 10.0})
    with pytest.raises(ValueError, match="level 1"):
        fit_hypothesis([k], Hypothesis((), False, "half"))
    with pytest.raises(ValueError, match="no kernels"):
        fit_links([])


def test_effective_capacity_of_a_level_far_smaller_than_reported():
    sizes = [2 ** k for k in range(12, 30)]  # 4 KiB .. 512 MiB
    def bw(s):
        return 100 if s <= 24 * KiB else 50 if s <= 768 * KiB else 30 if s <= 8 * MiB else 10
    levels = effective_capacities(sizes, [bw(s) for s in sizes], {"L1": 32 * KiB, "L2": MiB, "L3": 480 * MiB})
    assert [lv.capacity for lv in levels] == [32 * KiB, MiB, 8 * MiB]  # L1, L2 end where reported
    assert [lv.plateau for lv in levels] == [100, 50, 30]


def test_level_sizes_inside_each_level_and_refused_when_a_shared_cache_is_too_small():
    eff = {"L1": 32 * KiB, "L2": MiB, "L3": 8 * MiB}
    one = level_sizes(eff, {"L3": 2}, 1)
    assert one["L1"] < 16 * KiB and 64 * KiB < one["L2"] < 512 * KiB and 2 * MiB < one["L3"] <= 4 * MiB
    assert one["MEM"] >= 128 * MiB
    tiny = level_sizes({"L1": 32 * KiB, "L2": MiB, "L3": 3 * MiB}, {"L3": 2}, 2)
    assert tiny["L3"] is None


# ------------------------------------------------------------------ the builder
TRUTH = {"L1L2": 32.0, "L2L3": 16.0}


def _truth_machine(topo, overlap=("T_OL",)):
    """A 'true' machine: half duplex, 32/16 B/cy, 8 B/cy memory, ``overlap``."""
    data = ProbeData({"hostname": "t", "machine": "x86_64", "date": "2026-01-01"}, topo,
                     ClockMeasurement(int(CLOCK), (1.0,), (1.0,)), tables={"MEM": {}})
    from loopmodel.workflows.hostmodel import _skeleton
    mapping = _skeleton(data, {"L1": 32 * KiB, "L2": MiB, "L3": 8 * MiB}, [])
    mapping["links"][0]["bandwidth"] = f"{TRUTH['L1L2']} B/cy"
    mapping["links"][1]["bandwidth"] = f"{TRUTH['L2L3']} B/cy"
    mapping["links"][2]["bandwidth"] = "8 B/cy"
    mapping["overlap"] = list(overlap)
    return validate_mapping(mapping, "<truth>")


def _truth_times(topo):
    """cy/CL per kernel and level from a 'true' machine: serial, half duplex, 32/16 B/cy."""
    machine = _truth_machine(topo)
    return {k: _analyze(machine, k).T_ECM for k in KERNELS}


def synthetic_probe(l3_nominal=64 * MiB):
    topo = topology(l3_nominal)
    truth = _truth_times(topo)
    sizes = {"L1": 8 * KiB, "L2": 256 * KiB, "L3": 3 * MiB, "MEM": 256 * MiB}
    tables = {}
    for level, size in sizes.items():
        for k in KERNELS:
            t1 = truth[k][level] * (1.25 if level == "MEM" else 1.0)  # memory: slower than the busy time
            pts = [point(k, 1, size, t1)]
            if level == "MEM":  # two cores: 1.9x the throughput, not 2x
                pts.append(point(k, 2, size // 2, t1 * 2 / 1.9))
            tables.setdefault(level, {})[k] = pts
    sweep = {"copy": [point("copy", 1, s, truth["copy"]["L1" if s <= 16 * KiB else "L2" if s <= 512 * KiB
                                                     else "L3" if s <= 8 * MiB else "MEM"])
                      for s in [2 ** e for e in range(12, 29)]]}
    return ProbeData({"hostname": "testhost", "machine": "x86_64", "date": "2026-01-01T00:00:00Z",
                      "loopmodel": "0", "compiler": "gcc"}, topo,
                     ClockMeasurement(int(CLOCK), (1.0, 1.0, 1.0), (1.0, 1.01, 1.02)), None, None, sweep, tables,
                     options=ProbeOptions((1, 2), False, 5, 0.01, "gcc"))


@pytest.fixture(scope="module")
def built():
    return build_host_model(synthetic_probe())


def test_builder_recovers_the_true_link_bandwidths_and_rules(built):
    m = built.machine
    assert m.overlap == ["T_OL"]
    assert m.links[0].bandwidth[0].value == pytest.approx(32.0, rel=0.02)
    assert m.links[1].bandwidth[0].value == pytest.approx(16.0, rel=0.02)
    fits = built.mapping["probe"]["fits"]["links"]
    assert fits["chosen"]["overlap"] == ["T_OL"] and fits["chosen"]["duplex"] == "half"
    assert fits["hypotheses"][0]["residual_percent"] < 1


def test_builder_uses_the_effective_l3_capacity_and_says_so(built):
    l3 = built.machine.memory_hierarchy[2]
    assert 4 * MiB <= l3.size <= 8 * MiB
    assert any("effective capacity" in n and "L3" in n for n in built.notes)


def test_builder_fits_a_penalty_that_explains_single_core_memory_times(built):
    chosen = built.mapping["probe"]["fits"]["links"]["chosen"]
    assert chosen["penalty_cy_per_cl"] > 0 and built.machine.links[-1].penalty_load == pytest.approx(chosen["penalty_cy_per_cl"], abs=0.006)
    mem = [e for e in built.mapping["probe"]["fits"]["links"]["errors"] if e["level"] == 3]
    assert len(mem) == 5
    assert all(abs(e["predicted_cy_per_cl"] / e["measured_cy_per_cl"] - 1) < 0.05 for e in mem)


def test_builder_fits_p0_to_the_memory_curve(built):
    p0 = built.mapping["probe"]["fits"]["contention_p0"]
    assert set(p0["per_kernel"]) == set(KERNELS)
    assert built.machine.contention_p0 == pytest.approx(p0["p0"], rel=1e-3)
    assert all(v["rms_error_percent"] < 10 for v in p0["per_kernel"].values())


def test_builder_without_in_core_measurement_says_what_it_assumed(built):
    assert any("ASSUMED" in n and "in-core" in n for n in built.notes)


def test_written_file_is_schema_valid_and_reads_back(built, tmp_path):
    text = machine_text(built.mapping, ["test header"])
    assert text.startswith("# test header\n")
    data = yaml.safe_load(text)
    again = validate_mapping(data, "x")
    assert again.links == built.machine.links
    assert data["probe"]["hostname"] == "testhost"
    assert data["probe"]["tables"]["MEM"]["copy"][0]["spread"] == pytest.approx(0.0196, rel=0.05)
    assert set(data["benchmarks"]["measurements"]) == {"L1", "L2", "L3", "MEM"}
    assert data["benchmarks"]["measurements"]["MEM"]["cores"] == [1, 2]
    assert data["benchmarks"]["measurements"]["L1"]["cores"] == [1]


def test_builder_refuses_without_clock_or_memory():
    from loopmodel.errors import MachineError
    data = synthetic_probe()
    with pytest.raises(MachineError, match="clock"):
        build_host_model(dataclasses.replace(data, clock=None))
    with pytest.raises(MachineError, match="memory"):
        build_host_model(dataclasses.replace(data, tables={}))


def test_bench_sources_match_kerncraft_stream_semantics():
    from loopmodel.fileio.c_kernel import parse_kernel
    for name, text in BENCH_SOURCES.items():
        kernel, _ = parse_kernel(text, name)
        k = BENCH_KERNELS[name]
        writes = {a.name for a in kernel.accesses if a.write} if hasattr(kernel, "accesses") else None
        if writes is not None:
            assert len(writes) == k["write_streams"]


# ------------------------------------------------------------------ the command and -m host
@pytest.fixture
def fake_probe(monkeypatch, tmp_path):
    import loopmodel.measure.probe as probe
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    calls = []

    def run_probe(options, progress=None, root="/"):
        calls.append(options)
        return synthetic_probe()
    monkeypatch.setattr(probe, "run_probe", run_probe)
    return calls


def test_probe_command_writes_a_valid_file_and_keeps_it_for_minus_m_host(fake_probe, tmp_path, capsys):
    from loopmodel.cli import main
    from loopmodel.fileio.host_models import host_model_path
    from loopmodel.fileio.machine_files import load_machine
    out = tmp_path / "host.yml"
    assert main(["machine", "probe", "-o", str(out), "--quick"]) == 0
    err = capsys.readouterr().err
    assert "kept for '-m host'" in err and "overlap T_OL" in err
    assert fake_probe[0].quick and fake_probe[0].repetitions == 3
    m = load_machine(str(out))
    assert m.probe.hostname == "testhost" and m.name == "host-testhost"
    assert host_model_path().read_text() == out.read_text()
    assert load_machine("host") == m
    assert main(["analyze", "examples/kernels/daxpy.c", "-m", "host", "-D", "N=1000000", "-p", "ECM"]) == 0
    text = capsys.readouterr().out
    assert "probe of this host 'testhost' from 2026-01-01T00:00:00Z" in text


def test_probe_command_never_overwrites_without_force(fake_probe, tmp_path, capsys):
    from loopmodel.cli import main
    out = tmp_path / "host.yml"
    out.write_text("mine\n")
    assert main(["machine", "probe", "-o", str(out)]) == 2
    assert "exists" in capsys.readouterr().err and out.read_text() == "mine\n"
    assert not fake_probe  # refused before measuring
    assert main(["machine", "probe", "-o", str(out), "--force", "--no-store"]) == 0
    assert out.read_text().startswith("# loopmodel machine model of the host 'testhost'")


def test_probe_command_rejects_more_cores_than_the_process_may_use(fake_probe, capsys):
    from loopmodel.cli import main
    assert main(["machine", "probe", "--cores", "1:100000"]) == 2
    assert "may use" in capsys.readouterr().err and not fake_probe


@pytest.mark.parametrize("cores,message", [("0", "must be >= 1"), ("0:2", "must be >= 1"), ("1:x", "--cores: cannot read")])
def test_probe_command_rejects_bad_core_counts_before_measuring(fake_probe, capsys, cores, message):
    from loopmodel.cli import main
    assert main(["machine", "probe", "--cores", cores]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and not fake_probe


def test_minus_m_host_without_a_probe_is_a_one_line_hint(monkeypatch, tmp_path, capsys):
    from loopmodel.cli import main
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    assert main(["analyze", "examples/kernels/daxpy.c", "-m", "host", "-D", "N=1000"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "loopmodel machine probe" in err


def test_host_model_path_is_keyed_by_host_and_cpu(monkeypatch, tmp_path):
    from loopmodel.fileio.host_models import host_model_path
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    a, b = host_model_path("h/x", "CPU A"), host_model_path("h/x", "CPU B")
    assert a != b and a.parent == tmp_path / "hosts" and a.name.startswith("h_x-")


# ------------------------------------------------------------------ in-core from measurement
def fake_incore(clock=CLOCK, add_latency=2.0):
    from loopmodel.measure.incore_bench import InCoreBenchResult, InstructionPoint
    pts = []
    for op, lat, ipc in (("ADD", add_latency, 2.0), ("MUL", 4.0, 2.0), ("FMA", 4.0, 2.0), ("DIV", 13.0, 0.25)):
        pts.append(InstructionPoint(op, 32, "latency", f"v{op.lower()}pd", lat, lat, lat * 1.01))
        pts.append(InstructionPoint(op, 32, "throughput", f"v{op.lower()}pd", 1 / ipc, 1 / ipc, 1.01 / ipc))
    pts.append(InstructionPoint("LOAD", 32, "throughput", "vmovapd", 1 / 3, 1 / 3, 0.34))
    pts.append(InstructionPoint("STORE", 32, "throughput", "vmovapd", 0.5, 0.5, 0.51))
    return InCoreBenchResult("x86", clock, tuple(pts))


def test_incore_at_another_clock_scales_the_cycles():
    r = fake_incore().at_clock(2 * CLOCK)
    assert r.clock_hz == 2 * CLOCK and r.latency("ADD", 32) == pytest.approx(4.0)
    assert r.throughput("LOAD", 32) == pytest.approx(1.5)


def test_builder_takes_measured_in_core_at_the_compilers_width():
    data = dataclasses.replace(synthetic_probe(), incore=fake_incore())
    data.host["simd_width_B"] = 32
    built = build_host_model(data)
    ic = built.machine.in_core
    assert ic.simd_width == 32 and ic.latency["ADD"] == pytest.approx(2.0) and ic.throughput["DIV"] == 0.25
    assert ic.load.instructions_per_cycle == pytest.approx(3.0)
    assert not any("ASSUMED" in n and "in-core" in n for n in built.notes)
    assert not any("registers here" in n for n in built.notes)  # the fixture's ISA has 32 B too: nothing to say
    built64 = build_host_model(dataclasses.replace(data, topology=dataclasses.replace(data.topology, simd_width=64)))
    assert any("although the ISA has 64 B" in n for n in built64.notes)


@pytest.mark.skipif(__import__("shutil").which("llvm-mca") is None, reason="llvm-mca needed")
def test_llvm_mca_model_with_wrong_latencies_is_left_out_with_a_note():
    data = dataclasses.replace(synthetic_probe(), incore=fake_incore(add_latency=1.0))
    data.host.update(simd_width_B=32, native_cpu="icelake-client")
    built = build_host_model(data)
    assert built.machine.in_core.llvm_mca_cpu is None
    assert any("assumes a latency of 4 cy for ADD; 1 cy measured" in n for n in built.notes)
    assert any("llvm_mca_cpu is left out" in n for n in built.notes)
    good = dataclasses.replace(synthetic_probe(), incore=fake_incore(add_latency=4.0))
    good.host.update(simd_width_B=32, native_cpu="icelake-client")
    assert build_host_model(good).machine.in_core.llvm_mca_cpu == "icelake-client"


def test_compiler_simd_width_reads_the_registers_of_a_vectorized_loop():
    from loopmodel.measure.host_cpu import compiler_simd_width
    assert compiler_simd_width("gcc", ["-O3"]) in (16, None)  # x86-64 baseline: SSE2 (None on other ISAs)
    assert compiler_simd_width("no-such-compiler-xyz", ["-O3"]) is None
    if __import__("platform").machine() == "x86_64":
        assert compiler_simd_width("gcc", ["-O3", "-mavx2"]) == 32
        assert compiler_simd_width("gcc", ["-O3", "-mavx512f", "-mprefer-vector-width=512"]) == 64


def test_split_loads_of_misaligned_neighbours_are_charged_in_the_in_core_model():
    from loopmodel.fileio.c_kernel import parse_kernel_file
    from loopmodel.models.incore import analytic_incore
    from loopmodel.models.split_access import simd_split_accesses
    k, _ = parse_kernel_file("examples/kernels/2d-5pt.c")
    at = {"M": 1000, "N": 1000}
    split = simd_split_accesses(k, at, 4, 64)  # i from 1, not peeled: 3 of the 4 row loads are 8 B off
    assert split.loads > 0 and split.stores > 0
    d, _ = parse_kernel_file("examples/kernels/daxpy.c")
    assert simd_split_accesses(d, {"N": 1000}, 4, 64).loads == 0
    data = dataclasses.replace(synthetic_probe(), incore=fake_incore())
    data.host["simd_width_B"] = 32
    m = build_host_model(data).machine
    charged = dataclasses.replace(m, in_core=dataclasses.replace(
        m.in_core, load=dataclasses.replace(m.in_core.load, split_extra=1.0), load_store_per_cycle=None))
    plain = analytic_incore(k, m, 8, defines=at).components["LD"]
    with_split = analytic_incore(k, charged, 8, defines=at)
    # each split vector load costs one more load slot: 4 lanes x split loads per iteration
    assert with_split.components["LD"] == pytest.approx(plain * (k.loads_per_iteration() + 4 * split.loads)
                                                        / k.loads_per_iteration())
    assert with_split.split == split
    assert any("split loads" in n for n in with_split.notes)


def test_builder_without_caches_from_sysfs_is_a_one_line_error():
    from loopmodel.errors import MachineError
    data = synthetic_probe()
    with pytest.raises(MachineError, match="caches could not be read"):
        build_host_model(dataclasses.replace(data, topology=dataclasses.replace(data.topology, caches=())))


def test_probe_command_with_a_missing_compiler_fails_before_measuring(fake_probe, capsys):
    from loopmodel.cli import main
    assert main(["machine", "probe", "--compiler", "no-such-cc-xyz"]) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no-such-cc-xyz" in err and not fake_probe



def test_training_kernel_decides_between_overlap_hypotheses_the_streams_cannot_tell_apart():
    """Truth: the L2-L3 transfers overlap everything else. The streaming kernels have little
    in-core time, the training kernel much; with its three points the builder finds the rule."""
    from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
    from loopmodel.fileio.c_kernel import parse_kernel
    from loopmodel.measure.probe import TRAINING_SOURCE
    topo = topology()
    truth = _truth_machine(topo, ("T_OL", "L2L3"))
    times = {k: _analyze(truth, k).T_ECM for k in KERNELS}
    sizes = {"L1": 8 * KiB, "L2": 256 * KiB, "L3": 3 * MiB, "MEM": 256 * MiB}
    tables = {lv: {k: [point(k, 1, size, times[k][lv])] for k in KERNELS} for lv, size in sizes.items()}
    for k in KERNELS:  # two cores saturate the true 8 B/cy (write-allocate included) memory link
        st = BENCH_KERNELS[k]
        r, w, rw = st["read_streams"], st["write_streams"], st["read_write_streams"]
        rate = 8.0 * (r + w) / (r + 2 * w - rw)  # B/cy without write-allocate traffic
        tables["MEM"][k].append(point(k, 2, sizes["MEM"] // 2, 2 * 64 * (r + w) / rate))
    kernel, _ = parse_kernel(TRAINING_SOURCE, "t")
    an = Analyzer(kernel, truth, AnalyzerSettings(models=("ECM",), incore="analytic", use_cache=False))
    training = []
    for level, n in (("L2", 150), ("L3", 600), ("MEM", 4096)):
        res = an.run({"N": n})
        cy = res.ecm.T_ECM[level]
        training.append({"kernel": "box9", "level": level, "defines": {"N": n},
                         "seconds_per_it": cy / CLOCK / res.traffic.iterations_per_unit, "clock_Hz": CLOCK})
    sweep = {"copy": [point("copy", 1, s, times["copy"]["L1" if s <= 16 * KiB else "L2" if s <= 512 * KiB
                                                     else "L3" if s <= 8 * MiB else "MEM"])
                      for s in [2 ** e for e in range(12, 29)]]}
    data = ProbeData({"hostname": "t", "machine": "x86_64", "date": "2026-01-01"}, topo,
                     ClockMeasurement(int(CLOCK), (1.0,), (1.0,)), None, None, sweep, tables,
                     options=ProbeOptions((1,), False, 5, 0.01, "gcc"), training=tuple(training))
    built = build_host_model(data)
    assert built.machine.overlap == ["T_OL", "L2L3"]
    assert built.machine.links[1].bandwidth[0].value == pytest.approx(16.0, rel=0.03)
    assert any(e["kernel"] == "box9 (L3)" for e in built.mapping["probe"]["fits"]["links"]["errors"])
    assert len(built.mapping["probe"]["training"]) == 3


def test_machine_notes_name_the_probe_only_for_minus_m_host(built):
    from loopmodel.fileio.host_models import machine_notes
    (note,) = machine_notes("host", built.machine)
    assert "probe of this host 'testhost' from 2026-01-01T00:00:00Z" in note
    assert machine_notes("IvyBridgeEP_E5-2690v2", built.machine) == ()
    assert machine_notes("host.yml", built.machine) == ()


def test_atomic_replacement_leaves_no_temporary_file(tmp_path):
    from loopmodel.fileio.output import replace_atomically, write_output
    f = tmp_path / "m.yml"
    f.write_text("old\n")
    replace_atomically(str(f), "new\n")
    assert f.read_text() == "new\n" and [p.name for p in tmp_path.iterdir()] == ["m.yml"]
    with pytest.raises(OSError):
        replace_atomically(str(tmp_path / "no-such-dir" / "m.yml"), "x")
    write_output(str(f), "forced\n", "-o", force=True)
    assert f.read_text() == "forced\n"


def test_write_allocate_factor_follows_each_benchmark_s_streams():
    """copy moves 3 bytes per 2 counted (b read, a allocated and written back), the three-read
    triad 5 per 4, update and daxpy none extra (they store to lines they read), load none;
    the ECM/Roofline bandwidth choice scales the table by the same factor."""
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.machine.bandwidth import choose_bandwidth, write_allocate_factor

    m = load_machine("SkylakeSP_Gold-6148")
    factors = {k: write_allocate_factor(v) for k, v in m.benchmarks.kernels.items()}
    assert factors == {"copy": 1.5, "daxpy": 1.0, "load": 1.0, "triad": 1.25, "update": 1.0}
    for reads, writes, kernel in ((2, 1, "copy"), (4, 1, "triad"), (1, 0, "load"), (1, 1, "update")):
        raw = choose_bandwidth(m, "MEM", reads, writes, correct_write_allocate=False)
        got = choose_bandwidth(m, "MEM", reads, writes)
        assert got.kernel == raw.kernel == kernel and got.bandwidth == pytest.approx(raw.bandwidth * factors[kernel])


def test_latency_estimate_counts_the_copy_benchmark_s_write_allocate_from_its_streams():
    """Little's law in the builder's report: single-core copy bandwidth with write-allocate
    (x 3/2 for copy's streams; a machine whose 'copy' were an in-place kernel gets x 1)."""
    from types import SimpleNamespace

    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.workflows.hostmodel import _latency_estimate
    from loopmodel.machine.model import BenchmarkKernel

    m = load_machine("SkylakeSP_Gold-6148")
    lat = SimpleNamespace(size_bytes=1 << 30, cycles=lambda clock: 200.0)
    data = SimpleNamespace(latency=SimpleNamespace(points=[lat]),
                           tables={"MEM": {"copy": [SimpleNamespace(threads=1, bytes_per_s_max=8e9)]}})
    est = _latency_estimate(data, m)
    assert est["single_core_B_per_cy"] == round(8e9 * 1.5 / m.clock, 3)
    assert est["lines_in_flight"] == round(200.0 * 8e9 * 1.5 / m.clock / 64, 2)
    in_place = BenchmarkKernel(read_streams=1, write_streams=1, read_write_streams=1)
    other = dataclasses.replace(m, benchmarks=dataclasses.replace(
        m.benchmarks, kernels={**m.benchmarks.kernels, "copy": in_place}))
    assert _latency_estimate(data, other)["single_core_B_per_cy"] == round(8e9 / m.clock, 3)


# ------------------------------------------------------------------ the in-core section: every width, pipeline, splits
#: cy per instruction of the fake AVX2 host's forms (throughput loops) and latencies
FAKE_TP = {"ADD": 0.5, "MUL": 0.5, "FMA": 0.5, "DIV": 4.0, "SQRT": 4.5, "LOAD": 0.5, "STORE": 1.0,
           "LOAD_LINE": 0.5, "STORE_LINE": 1.0, "LOAD_SPLIT": 1.5, "STORE_SPLIT": 2.0, "LOAD_UNALIGNED": 0.5,
           "STORE_UNALIGNED": 1.0, "LOAD_SPLIT_MIXED": 0.5 * (1 + 1 / 3 * 0.8), "LOAD_SPLIT_2STREAMS": 1.4,
           "BRANCH": 1.0, "LOOP_BRANCH": 1.0, "ISSUE": 0.25}
FAKE_LAT = {"ADD": 4.0, "MUL": 4.0, "FMA": 4.0, "DIV": 13.0, "SQRT": 15.0, "STORE_FORWARD": 5.0,
            "STORE_FORWARD_GPR": 1.0}


def fake_full_incore(clock=CLOCK):
    """Every form of an AVX2 host (32 B), scalar ADD at 3 cy: split loads cost 2 extra aligned
    loads' time alone and 0.8 in the mixed pattern (1 of its 3 streams splits at 32 B)."""
    from loopmodel.measure import incore_bench as ib
    pts = []
    for f in ib.instruction_forms("x86", ("sse2", "avx", "fma", "avx2")):
        cy = (3.0 if (f.op, f.width) == ("ADD", 8) else FAKE_LAT[f.op]) if f.kind == "latency" else FAKE_TP[f.op]
        pts.append(ib.InstructionPoint(f.op, f.width, f.kind, f.form, cy, cy, cy * 1.01))
    return ib.InCoreBenchResult("x86", clock, tuple(pts), (), True)


def test_builder_writes_every_width_the_pipeline_figures_and_the_mixed_split_cost():
    data = dataclasses.replace(synthetic_probe(), incore=fake_full_incore())
    data.host["simd_width_B"] = 32
    built = build_host_model(data)
    ic = built.machine.in_core
    assert ic.latency["ADD"] == 4.0 and ic.latency_by_width["ADD"] == {8: 3.0, 16: 4.0, 32: 4.0}
    assert ic.throughput_by_width["SQRT"] == {8: pytest.approx(0.222), 16: pytest.approx(0.222),
                                              32: pytest.approx(0.222)}
    assert ic.store_forward_latency == 5.0 and ic.instructions_per_cycle == 4.0
    assert ic.taken_branches_per_cycle == pytest.approx(1.02)
    # load.split_extra from the mixed streams (0.8), not from the loop of split loads alone (2.0)
    assert ic.load.split_extra == pytest.approx(0.8) and ic.store.split_extra == pytest.approx(1.0)
    derived = built.mapping["probe"]["in_core"]["derived"]
    assert derived["load_split_extra"]["LOAD_SPLIT"] == pytest.approx(2.0)
    assert derived["load_split_extra"]["LOAD_SPLIT_2STREAMS"] == pytest.approx(1.8)
    assert derived["store_forward_gpr_cy"] == 0.0


def test_probe_command_writes_and_shows_the_in_core_keys(monkeypatch, tmp_path, capsys):
    import yaml

    import loopmodel.measure.probe as probe
    from loopmodel.cli import main
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))

    def run_probe(options, progress=None, root="/"):
        data = dataclasses.replace(synthetic_probe(), incore=fake_full_incore())
        data.host["simd_width_B"] = 32
        return data
    monkeypatch.setattr(probe, "run_probe", run_probe)
    out = tmp_path / "host.yml"
    assert main(["machine", "probe", "-o", str(out), "--quick", "--no-store"]) == 0
    written = yaml.safe_load(out.read_text())["in_core"]
    assert written["latency_by_width"]["ADD"] == {8: 3.0, 16: 4.0, 32: 4.0}  # widths as numbers
    assert written["load"]["split_extra"] == pytest.approx(0.8) and written["store_forward_latency"] == 5.0
    capsys.readouterr()
    assert main(["machine", "show", str(out)]) == 0
    shown = capsys.readouterr().out
    assert "    ADD: {8: 3.0, 16: 4.0, 32: 4.0}\n" in shown and "  store_forward_latency: 5.0\n" in shown
    assert "  taken_branches_per_cycle: 1.02\n" in shown and "  instructions_per_cycle: 4.0\n" in shown
    shown_ic = yaml.safe_load(shown)["in_core"]  # the self-check lines are YAML comments
    assert shown_ic["latency_by_width"] == written["latency_by_width"]
    assert shown_ic["throughput_by_width"] == written["throughput_by_width"]


def test_machine_files_load_with_and_without_the_in_core_keys():
    from loopmodel.fileio.machine_files import load_machine
    from loopmodel.fileio.machine_writer import machine_mapping
    plain = load_machine("SkylakeSP_Gold-6148").in_core
    assert plain.latency_by_width == {} and plain.throughput_by_width == {}
    assert plain.store_forward_latency is None and plain.taken_branches_per_cycle is None
    assert "latency_by_width" not in machine_mapping(load_machine("SkylakeSP_Gold-6148"))["in_core"]
    data = dataclasses.replace(synthetic_probe(), incore=fake_full_incore())
    data.host["simd_width_B"] = 32
    m = build_host_model(data).machine
    mapping = machine_mapping(m)
    assert mapping["in_core"]["throughput_by_width"]["ADD"] == {8: 2.0, 16: 2.0, 32: 2.0}
    from loopmodel.fileio.machine_schema import validate_mapping
    assert validate_mapping(mapping, "shown.yml").in_core == m.in_core  # loads back to an equal model
