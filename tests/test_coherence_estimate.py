"""The estimated MESI transition table (loopmodel.models.coherence_estimate): its rules on a
bundled model, properties over every bundled model and random sizes, the machine-file section
and its generator, and ``omp`` run end to end on a bundled model with the estimate."""
from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.fileio import coherence_estimate_section as gen
from loopmodel.fileio.machine_files import builtin_names, load_machine
from loopmodel.fileio.machine_writer import machine_text
from loopmodel.machine.bandwidth import choose_bandwidth
from loopmodel.machine.coherence import TRANSITION_KEYS
from loopmodel.models.coherence_estimate import (MLP_LINES, capacity_share, default_sizes, default_threads,
                                                 estimate_table, transfer_level)
from loopmodel.models.coherence_timing import Timing
from loopmodel.workflows import omp

ROOT = Path(__file__).resolve().parents[1]


def transition_seconds(m, key: str, size: float, threads: int) -> float:
    """One transition's estimated seconds: a table of one size and one thread count."""
    return estimate_table(m, sizes=(size,), threads=(threads,)).seconds[key][threads][0]
SKX = "SkylakeSP_Gold-6148"
OWN_OTHER = [("L M own", "L M other"), ("L E own", "L E other"), ("L S own", "L S other"),
             ("S M own", "S M other"), ("S E own", "S E other"), ("S S own", "S S other")]


@functools.lru_cache(maxsize=None)
def machine(name: str):
    return load_machine(name)


@functools.lru_cache(maxsize=None)
def skx_table(latency=None):
    return estimate_table(machine(SKX), core_to_core_latency=latency)


def per_byte(table, key, t, i):
    return table.seconds[key][t][i] / table.sizes[i]


def test_defaults_span_l1_to_beyond_the_last_level_cache_and_one_to_all_cores():
    t = skx_table()
    assert t.sizes[0] == 4096 and t.sizes[-1] == 2 ** 27 and t.sizes[-1] >= 4 * 28835840
    assert all(b == 2 * a for a, b in zip(t.sizes, t.sizes[1:]))
    assert t.threads == (1, 2, 4, 8, 16, 20, 40) == default_threads(machine(SKX))
    assert set(t.seconds) == set(TRANSITION_KEYS) and t.region_overhead == {} and t.cpus == ()
    assert any("ESTIMATED" in n and "not measured" in n for n in t.notes)


def test_every_row_grows_with_the_size():
    t = skx_table()
    for key, per_t in t.seconds.items():
        for row in per_t.values():
            assert all(b >= a for a, b in zip(row, row[1:])), key


def test_own_hit_is_faster_than_the_same_state_in_another_cache():
    t = skx_table()
    for own, other in OWN_OTHER:
        for th in (1, 20):
            assert t.seconds[own][th][0] < t.seconds[other][th][0], (own, th)


def test_memory_is_slower_than_l1_and_the_levels_step_down():
    t = skx_table()
    assert per_byte(t, "L M own", 1, -1) > 5 * per_byte(t, "L M own", 1, 0)
    assert per_byte(t, "L I", 1, 0) > 5 * per_byte(t, "L M own", 1, 0)
    assert per_byte(t, "S I", 1, 0) > per_byte(t, "L I", 1, 0)  # write-allocate and write-back
    # own hits by level at T=1: L1 (32 KiB), L2 (1 MiB), L3 (27.5 MiB), memory
    l1, l2, l3, mem = (per_byte(t, "L M own", 1, t.sizes.index(s)) for s in (1 << 15, 1 << 20, 1 << 24, 1 << 27))
    assert l1 < l2 < l3 < mem
    assert per_byte(t, "L M own", 1, -1) == pytest.approx(per_byte(t, "L I", 1, -1))


def test_more_threads_are_never_faster_and_memory_saturates_per_domain():
    t = skx_table()
    m = machine(SKX)
    for key, per_t in t.seconds.items():
        for a, b in zip(t.threads, t.threads[1:]):
            assert all(y >= x * (1 - 1e-12) for x, y in zip(per_t[a], per_t[b])), (key, a, b)
    big = -1
    bw = choose_bandwidth(m, "MEM", 1.0, 0.0).bandwidth
    assert t.sizes[big] * 20 / t.seconds["L I"][20][big] == pytest.approx(bw, rel=1e-9)  # saturated domain
    assert t.seconds["L I"][40][big] == pytest.approx(t.seconds["L I"][20][big])  # second socket: its own domain
    assert t.seconds["L I"][20][big] > 4 * t.seconds["L I"][1][big]


def test_modified_in_another_core_costs_the_owners_write_back():
    t = skx_table()
    # victim L3: clean lines are forwarded too; an inclusive L3 serves them without the owner
    assert t.seconds["L E other"][1][0] == t.seconds["L M other"][1][0]
    hsw = estimate_table(machine("HaswellEP_E5-2695v3"), sizes=(4096,), threads=(1,))
    assert hsw.seconds["L E other"][1][0] < hsw.seconds["L M other"][1][0]
    # beyond one socket no cache is shared: through memory
    assert transfer_level(machine(SKX), 40) == 3 and transfer_level(machine(SKX), 20) == 2
    assert t.seconds["L M other"][40][0] > t.seconds["L M other"][20][0]


def test_core_to_core_latency_is_a_floor_per_line():
    lat = 80e-9
    slow = skx_table(lat)
    fast = skx_table()
    size = slow.sizes[0]
    assert slow.seconds["L M other"][1][0] >= size / 64 * lat / MLP_LINES
    assert slow.seconds["L M other"][1][0] > fast.seconds["L M other"][1][0]
    assert slow.seconds["L M own"] == fast.seconds["L M own"] and slow.seconds["L I"] == fast.seconds["L I"]
    assert any("80 ns" in n for n in slow.notes)


@pytest.mark.parametrize("args", [("L I", 0, 1), ("L I", 4096, 0)])
def test_bad_arguments_raise(args):
    with pytest.raises(ValueError):
        transition_seconds(machine(SKX), *args)
    with pytest.raises(ValueError):
        estimate_table(machine(SKX), core_to_core_latency=-1e-9)


@pytest.mark.parametrize("name", builtin_names())
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_properties_on_every_bundled_model(name, data):
    """Positive, finite, growing with size and threads; own <= other while the owner holds the
    whole chunk in its caches above the shared level; the table feeds Timing up to all cores."""
    m = machine(name)
    threads = default_threads(m)
    s1 = data.draw(st.floats(64, 2.0 ** 30), label="size")
    s2 = s1 * data.draw(st.floats(1.0, 64.0), label="factor")
    ta, tb = sorted(data.draw(st.lists(st.sampled_from(threads), min_size=2, max_size=2), label="threads"))
    for key in TRANSITION_KEYS:
        a = transition_seconds(m, key, s1, ta)
        assert 0 < a < math.inf
        assert transition_seconds(m, key, s2, ta) >= a * (1 - 1e-12), key
        assert transition_seconds(m, key, s1, tb) >= a * (1 - 1e-12), key
        assert transition_seconds(m, "L I", s1, ta) >= transition_seconds(m, "L M own", s1, ta) * (1 - 1e-12)
    x = transfer_level(m, ta)
    if x > 0 and s1 <= capacity_share(m, x - 1, ta):
        for own, other in OWN_OTHER:
            assert transition_seconds(m, own, s1, ta) <= transition_seconds(m, other, s1, ta), (own, other)
    table = estimate_table(m, sizes=(4096, 1 << 20), threads=threads)
    assert Timing(table).seconds("L M other", 8, s1, threads[-1]) > 0
    assert default_sizes(m)[-1] >= 4 * max(lv.size for lv in m.caches)


def test_section_reads_back_from_a_machine_file(tmp_path):
    m = machine(SKX)
    section = gen.estimated_section(m, 80e-9)
    data = yaml.safe_load((ROOT / "src/loopmodel/machines" / f"{SKX}.yml").read_text())
    data.pop("provenance", None)
    path = tmp_path / "skx.yml"
    path.write_text(machine_text({**data, "coherence": section}, ["test"]))
    back = load_machine(str(path)).coherence
    est = estimate_table(m, core_to_core_latency=80e-9)
    assert back.sizes == est.sizes and back.threads == est.threads and back.notes == est.notes
    for key in TRANSITION_KEYS:
        for t in est.threads:
            assert back.seconds[key][t] == pytest.approx(est.seconds[key][t], rel=1e-3)


def test_generator_prints_the_block_and_refuses_bad_arguments(capsys):
    assert gen.main([SKX, "--c2c-latency", "80ns", "--provenance"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# coherence: ESTIMATED") and "\ncoherence:\n" in out
    doc = yaml.safe_load(out)
    assert doc["provenance"]["coherence"]["estimated"] is True
    assert doc["coherence"]["threads"][-1] == 40
    assert gen.parse_latency("0.08 us") == pytest.approx(80e-9) and gen.parse_latency("8e-8 s") == pytest.approx(80e-9)
    for argv in ([], [SKX, "--c2c-latency"], [SKX, "--c2c-latency", "80"], ["NoSuchModel"]):
        assert gen.main(argv) == 2
        assert capsys.readouterr().err.count("\n") == 1


def test_omp_runs_on_a_bundled_model_with_the_estimate():
    m = machine(SKX)
    model = dataclasses.replace(m, coherence=estimate_table(m))
    result = omp.run(str(ROOT / "examples/omp/dot_thread0.c"), model,
                     omp.OmpOptions(define=("N=1000000",), threads="1,2,20,40"))
    times = [r.prediction.total_seconds for r in result.rows]
    assert [r.threads for r in result.rows] == [1, 2, 20, 40]
    assert all(0 < x < math.inf for x in times)
    assert times[1] < times[0]  # the parallel dot product gains from a second thread
