"""The MESI transition benchmark (benchmark-based-coherence-model.txt §IV): the sizes helper,
the result parsing with a fake program, the machine file's ``coherence`` section (round trip and
errors), the probe's ``--coherence`` / ``--coherence-only`` wiring with fakes, and one small
real run."""
from __future__ import annotations

from pathlib import Path

import dataclasses
import json
import os
import shutil

import pytest
import yaml

import loopmodel.measure.coherence_bench as cb
import loopmodel.measure.probe as probe
from loopmodel.errors import MachineError, ToolError
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import coherence_mapping, machine_text
from loopmodel.machine.coherence import LOAD_KEYS, TRANSITION_KEYS, CoherenceTable
from loopmodel.measure.coherence_bench import coherence_sizes, measure_coherence, parse_output

KiB, MiB = 1024, 1024 * 1024
CPUS = sorted(os.sched_getaffinity(0))
TWO = len(CPUS) >= 2


def fake_program(times=None, missing_other=True, **override):
    """A runner standing in for coherence.c: each key's time grows with the size (1 ns per 100 B)."""
    calls = []

    def run(cmd, env):
        calls.append((cmd, env))
        keys, threads, sizes = cmd[1].split(","), int(cmd[2]), [int(s) for s in cmd[3].split(",")]
        team = [int(c) for c in cmd[5].split(",")]
        reps = int(cmd[4])
        gone = [k for k in keys if k.endswith("S other") and len(team) < 3 and missing_other]
        secs = {k: [[(times or {}).get(k, 1.0) * (2e-8 + s * 1e-11) * (1 + 0.01 * r) for r in range(reps)]
                    for s in sizes] for k in keys if k not in gone}
        out = {"threads": threads, "team": len(team), "repetitions": reps, "flush": "clflush",
               "timer_overhead": 1e-8, "region_overhead": 2e-7 * threads, "sizes": sizes, "cpus": team,
               "missing": gone, "seconds": secs, "check": "ok"}
        out.update(override)
        return "warming up\n" + json.dumps(out) + "\n"
    run.calls = calls
    return run


def small_table(**kw) -> CoherenceTable:
    return measure_coherence(CPUS[:2] if TWO else CPUS, [4 * KiB, 64 * KiB], [1, 2] if TWO else [1],
                             runner=fake_program(), **kw)


# ------------------------------------------------------------------ sizes
def test_sizes_are_powers_of_two_and_the_points_between_ascending():
    assert coherence_sizes(64 * KiB) == (4096, 6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536)
    assert coherence_sizes(100 * KiB, 4 * KiB)[-1] == 98304
    s = coherence_sizes(256 * MiB)
    assert s[0] == 4096 and s[-1] == 256 * MiB and len(s) == 33 and list(s) == sorted(s)
    assert all(x % 64 == 0 for x in s)
    with pytest.raises(ToolError):
        coherence_sizes(1024, 4096)
    with pytest.raises(ToolError):
        coherence_sizes(4096, 8)


# ------------------------------------------------------------------ fake program
@pytest.mark.skipif(not TWO, reason="needs two CPUs")
def test_fake_run_gives_a_table_with_missing_keys_in_notes():
    run = fake_program()
    t = measure_coherence(CPUS[:2], [64 * KiB, 4 * KiB], [2, 1], runner=run, repetitions=3)
    assert t.sizes == (4096, 65536) and t.threads == (1, 2) and t.cpus == tuple(CPUS[:2])
    assert set(t.seconds) == set(TRANSITION_KEYS) - {"L S other", "S S other"}
    assert any("'L S other' not measured at T=1" in n for n in t.notes)
    row = t.seconds["L M other"][2]
    assert row[0] == pytest.approx(2e-8 + 4096e-11 - 1e-8, rel=1e-3) and row[1] > row[0]
    assert t.spread["L M other"][1][0] == pytest.approx(0.02 * (2e-8 + 4096e-11) / (1e-8 + 4096e-11), rel=1e-2)
    assert t.region_overhead == {1: 2e-7, 2: 4e-7}
    assert t.element_size == 8 and t.stride == 8
    cmd, env = run.calls[0]
    assert cmd[2] == "1" and cmd[5] == ",".join(map(str, CPUS[:2]))  # T=1 still runs a team of two
    assert env["OMP_PROC_BIND"] == "false" and "OMP_PLACES" not in env


@pytest.mark.skipif(not TWO, reason="needs two CPUs")
def test_contradicting_timings_are_noted():
    t = measure_coherence(CPUS[:2], [4 * KiB], [1], keys=("L I", "L M own", "L M other"),
                          runner=fake_program(times={"L I": 1.0, "L M own": 1.0, "L M other": 0.5}))
    assert any("flush may not have" in n for n in t.notes)
    assert any("'L M other' at 4096 B is faster" in n for n in t.notes)


@pytest.mark.parametrize("override,message", [
    ({"check": "bad"}, "does not match"), ({"threads": 5}, "does not match"),
    ({"seconds": {"L I": [[1e-6]]}}, "other transitions"), ({"cpus": [99, 98]}, "ran on CPUs"),
    ({"timer_overhead": "x"}, "malformed"), ({"seconds": {"L I": [[0.0], [1.0]]}}, "non-positive")])
def test_bad_results_are_one_line_tool_errors(override, message):
    run = fake_program(**override)
    with pytest.raises(ToolError, match=message) as exc:
        measure_coherence(CPUS[:1], [4096, 8192], [1], keys=("L I",), runner=run)
    assert "\n" not in str(exc.value)


def test_no_result_line_and_failing_program():
    with pytest.raises(ToolError, match="no result line"):
        parse_output("nothing\n", 1, [0], [4096], ("L I",))

    def failing(cmd, env):
        raise ToolError("the coherence benchmark failed with exit status 3: wrong values")
    with pytest.raises(ToolError, match="exit status 3"):
        measure_coherence(CPUS[:1], [4096], [1], keys=("L I",), runner=failing)


@pytest.mark.parametrize("kw,message", [
    ({"keys": ("L X",)}, "unknown coherence transition"), ({"sizes": [100]}, "multiples of 64"),
    ({"threads": [0]}, ">= 1"), ({"cpus": [100000]}, "may run on"), ({"threads": [len(CPUS) + 1]}, "CPUs given"),
    ({"repetitions": 0}, "repetitions")])
def test_bad_arguments(kw, message):
    args = {"cpus": CPUS[:1], "sizes": [4096], "threads": [1], **kw}
    with pytest.raises(ToolError, match=message):
        measure_coherence(args.pop("cpus"), args.pop("sizes"), args.pop("threads"), runner=fake_program(), **args)


def test_sizes_beyond_the_available_memory_are_dropped_with_a_note(monkeypatch):
    monkeypatch.setattr(cb, "available_memory", lambda: 64 * KiB)
    t = measure_coherence(CPUS[:1], [4096, 8192, 65536], [1], keys=("L I",), runner=fake_program())
    assert t.sizes == (4096, 8192) and any("left out" in n for n in t.notes)
    with pytest.raises(ToolError, match="fits in memory"):
        measure_coherence(CPUS[:1], [65536], [1], keys=("L I",), runner=fake_program())


def test_flush_buffer_only_without_a_flush_instruction():
    assert cb.flush_bytes(32 * MiB, "x86_64") == 0 and cb.flush_bytes(32 * MiB, "aarch64") == 0
    assert cb.flush_bytes(32 * MiB, "ppc64le") == 64 * MiB and cb.flush_bytes(None, "riscv64") == 64 * MiB


# ------------------------------------------------------------------ machine file section
def _example_mapping(table) -> dict:
    data = yaml.safe_load(open("src/loopmodel/machines/SkylakeSP_Gold-6148.yml"))
    return {**data, "coherence": coherence_mapping(table)}


def test_section_round_trips_write_read_equal(tmp_path):
    table = small_table()
    text = machine_text(_example_mapping(table), ["test"])
    assert "seconds [s]:" in text and "region overhead [s]:" in text and "element size [B]: 8" in text
    path = tmp_path / "m.yml"
    path.write_text(text)
    m = load_machine(str(path))
    assert m.coherence == table
    again = machine_text(_example_mapping(m.coherence), ["test"])
    assert again == text


def test_machine_files_without_the_section_load_unchanged():
    m = load_machine(str(Path(__file__).resolve().parents[1] / "examples" / "machines" / "EpycZen4_2vCPU.yml"))
    assert m.coherence is None


@pytest.mark.parametrize("change,message", [
    (lambda c: c.pop("sizes [B]"), "'sizes [B]' is missing"),
    (lambda c: c.update({"speed": 1}), "unknown key 'speed'"),
    (lambda c: c.update({"sizes [B]": ["4 KiB", 8192]}), "'sizes [B]' must be a list of whole numbers"),
    (lambda c: c["seconds [s]"].update({"L Q": {1: [1e-6, 2e-6]}}), "unknown coherence transition 'L Q'"),
    (lambda c: c["seconds [s]"]["L I"].update({1: [1e-6]}), "one positive time per size"),
    (lambda c: c["seconds [s]"]["L I"].update({7: [1e-6, 2e-6]}), "T=7 is not among the threads"),
    (lambda c: c.update({"region overhead [s]": {1: "fast"}}), "region overhead"),
    (lambda c: c.update({"element size [B]": 0}), "element size"),
    (lambda c: c["spread"]["L I"].update({1: [0.1]}), "spread of 'L I'"),
])
def test_malformed_section_is_a_one_line_error_naming_file_and_key(tmp_path, change, message):
    mapping = _example_mapping(small_table())
    change(mapping["coherence"])
    path = tmp_path / "bad.yml"
    path.write_text(yaml.safe_dump(mapping, sort_keys=False))
    with pytest.raises(MachineError) as exc:
        load_machine(str(path))
    text = str(exc.value)
    assert str(path) in text and "coherence" in text and message in text and "\n" not in text


# ------------------------------------------------------------------ probe wiring
def test_probe_plan_threads_sizes_and_cpus():
    full = probe.ProbeOptions((1, 2), False, 5, 0.01, "gcc", True)
    cpus, threads, sizes, reps = probe.coherence_plan(full, 8 * MiB)
    assert threads == (1, 2) and reps == 5 and cpus == tuple(CPUS[:3])
    assert sizes[0] == 4096 and sizes[-1] == 32 * MiB and 48 * KiB in sizes
    quick = dataclasses.replace(full, quick=True, repetitions=3, cores=(1, 4))
    _, threads, qsizes, reps = probe.coherence_plan(quick, 8 * MiB)
    assert threads == (1, 4) and reps == 3 and len(qsizes) < len(sizes)
    assert all(s & (s - 1) == 0 for s in qsizes)


@pytest.fixture
def fake_measure(monkeypatch):
    calls = []

    def measure(cpus, sizes, threads, **kw):
        calls.append((cpus, sizes, threads, kw))
        return CoherenceTable(sizes=(4096, 8192), threads=(1,), seconds={"L M other": {1: (1e-6, 2e-6)}},
                              region_overhead={1: 2e-7}, cpus=(0,), notes=("'L S other' not measured",))
    monkeypatch.setattr(probe, "measure_coherence", measure)
    return calls


def test_probe_with_coherence_puts_the_table_into_the_model(fake_measure):
    from test_hostmodel import synthetic_probe

    from loopmodel.workflows.hostmodel import build_host_model
    table, info = probe.probe_coherence(probe.ProbeOptions((1,), True, 3, 0.01, "gcc", True), 8 * MiB)
    data = dataclasses.replace(synthetic_probe(), coherence=table, coherence_info=info)
    built = build_host_model(data)
    assert built.machine.coherence == table
    assert built.mapping["probe"]["coherence"]["repetitions"] == 3
    assert set(built.mapping["probe"]["coherence"]) >= {"date", "cpus", "repetitions", "compiler"}


def test_a_failing_coherence_step_is_a_note(monkeypatch):
    def broken(*a, **k):
        raise ToolError("cannot pin")
    monkeypatch.setattr(probe, "probe_coherence", broken)
    steps = probe._Steps(None)
    assert steps.attempt("coherence transitions", probe.probe_coherence) is None
    assert steps.notes == ["coherence transitions: not measured (cannot pin)"]


def test_probe_command_passes_coherence_and_help_lists_it(monkeypatch, tmp_path, capsys):
    from test_hostmodel import synthetic_probe

    from loopmodel.cli import main
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    seen = []
    monkeypatch.setattr(probe, "run_probe", lambda options, progress=None, root="/": seen.append(options)
                        or synthetic_probe())
    assert main(["machine", "probe", "--quick", "--coherence", "-o", str(tmp_path / "h.yml")]) == 0
    assert seen[0].coherence
    with pytest.raises(SystemExit):
        main(["machine", "probe", "--help"])
    out = capsys.readouterr().out
    assert "--coherence" in out and "--coherence-only" in out


def test_coherence_only_updates_the_stored_model_and_keeps_the_rest(monkeypatch, tmp_path, capsys, fake_measure):
    from test_hostmodel import synthetic_probe

    from loopmodel.cli import main
    from loopmodel.fileio.host_models import host_model_path
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    assert main(["machine", "probe", "--coherence-only"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no probe of this host" in err
    monkeypatch.setattr(probe, "run_probe", lambda options, progress=None, root="/": synthetic_probe())
    assert main(["machine", "probe", "--quick"]) == 0
    before = load_machine("host")
    old_text = host_model_path().read_text()
    assert main(["machine", "probe", "--coherence-only", "--cores", "1"]) == 0
    after = load_machine("host")
    assert after.coherence is not None and after.coherence.seconds["L M other"][1] == (1e-6, 2e-6)
    assert dataclasses.replace(after, coherence=None, probe=None) == dataclasses.replace(before, probe=None)
    assert {k: v for k, v in after.probe.raw.items() if k != "coherence"} == before.probe.raw
    assert after.probe.raw["coherence"]["compiler"] == "gcc"
    new_text = host_model_path().read_text()
    assert new_text.splitlines()[0] == old_text.splitlines()[0]
    assert fake_measure[0][2] == (1,)
    assert main(["machine", "probe", "--coherence-only", "--cores", "1"]) == 0  # replaces, does not add
    assert load_machine("host").coherence == after.coherence
    assert not list(host_model_path().parent.glob("*.tmp*"))


# ------------------------------------------------------------------ one small real run
@pytest.mark.skipif(shutil.which("gcc") is None or not TWO, reason="needs gcc with OpenMP and two CPUs")
def test_real_run_is_plausible():
    keys = ("L I", "L M own", "L M other", "S M own", "S I")
    t = measure_coherence(CPUS[:2], [4 * KiB, 64 * KiB], [1, 2], keys=keys, repetitions=2)
    assert t.threads == (1, 2) and set(t.seconds) == set(keys)
    for key in keys:
        for row in t.seconds[key].values():
            assert all(x > 0 for x in row) and row[1] > row[0]  # 16x the data takes longer
    assert all(0 < s < 1e-2 for s in t.region_overhead.values())
    assert t.seconds["L I"][1][1] > t.seconds["L M own"][1][1]  # a flushed chunk comes from memory
    assert set(LOAD_KEYS) & set(t.seconds) == {"L I", "L M own", "L M other"}


def test_machine_show_prints_the_section_so_that_it_loads_back(tmp_path, capsys):
    from loopmodel.cli import main
    table = small_table()
    path = tmp_path / "m.yml"
    path.write_text(machine_text(_example_mapping(table), ["test"]))
    assert main(["machine", "show", str(path)]) == 0
    shown = tmp_path / "shown.yml"
    shown.write_text(capsys.readouterr().out)
    assert load_machine(str(shown)).coherence == table
    assert main(["machine", "show", str(Path(__file__).resolve().parents[1] / "examples" / "machines"
                                         / "EpycZen4_2vCPU.yml")]) == 0
    assert "coherence" not in capsys.readouterr().out


def test_coherence_only_cannot_go_with_no_store(monkeypatch, tmp_path, capsys):
    from loopmodel.cli import main
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path))
    assert main(["machine", "probe", "--coherence-only", "--no-store"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--no-store" in err


def test_coherence_and_coherence_only_exclude_each_other(capsys):
    from loopmodel.cli import main
    with pytest.raises(SystemExit):
        main(["machine", "probe", "--coherence", "--coherence-only"])
    assert "not allowed with" in capsys.readouterr().err


def test_one_cpu_per_core_leaves_smt_siblings_out(tmp_path):
    from loopmodel.measure.topology import one_cpu_per_core
    for cpu, core in ((0, 0), (1, 1), (2, 0), (3, 1)):
        top = tmp_path / "sys/devices/system/cpu" / f"cpu{cpu}" / "topology"
        top.mkdir(parents=True)
        (top / "physical_package_id").write_text("0\n")
        (top / "core_id").write_text(f"{core}\n")
    assert one_cpu_per_core([0, 1, 2, 3], str(tmp_path)) == (0, 1)
    assert one_cpu_per_core([2, 3, 5], str(tmp_path)) == (2, 3, 5)  # cpu5: no sysfs entry
