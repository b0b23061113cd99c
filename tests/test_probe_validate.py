"""``machine probe --validate`` and ``--validate-only`` with a synthetic probe and a fake corpus
run (no measurement): what goes into ``probe.validation``, that nothing else in the stored model
changes, the options that exclude each other, the self-check refusal coming first, and
``machine show`` of the section."""
from __future__ import annotations

import dataclasses
import types

import pytest
import yaml
from helpers import SNB, run_main_inprocess
from test_hostmodel import synthetic_probe
from test_probe_check import uncertain_model

import loopmodel.measure.probe as probe
import loopmodel.workflows.corpus as corpus
import loopmodel.workflows.probe as workflow_probe
from loopmodel.fileio.host_models import host_model_path
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import machine_mapping
from loopmodel.machine.probe_section import ErrorStats, from_mapping
from loopmodel.models import accuracy
from loopmodel.version import __version__
from loopmodel.workflows.corpus import CorpusRun

PROVENANCE = {"date": "2026-01-02T03:04:05Z", "cases": 6, "skipped": 1, "seed": 0, "repeat": 5, "host": "testhost",
              "cpu_model": "cpu"}


def fake_run(quick: bool, shift: float = 0.0) -> CorpusRun:
    """A corpus run of six cases (errors in fractions, ``shift`` added to each)."""
    cases = [("L1", ("short-inner-loop",), 0.05), ("L1", (), -0.1), ("L2", (), 0.2), ("L3", (), 0.5),
             ("MEM", ("many-streams",), 0.03), ("MEM", (), -0.07)]
    summary = accuracy.summarize(((lv, rg, e + shift) for lv, rg, e in cases), {**PROVENANCE, "quick": quick})
    return CorpusRun((), (("stencil2d", "L2", "compiler failed"),), summary, seconds=12.34)


@pytest.fixture
def host(monkeypatch, tmp_path):
    """A private cache with the synthetic probe as this host's measurement; ``host.calls`` records
    each corpus run as ``(machine, machine_name, quick, fresh)``, ``host.shift`` moves its errors."""
    monkeypatch.setenv("LOOPMODEL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(probe, "run_probe", lambda options, progress=None, root="/": synthetic_probe())
    state = types.SimpleNamespace(calls=[], shift=0.0, dir=tmp_path)

    def run_corpus(machine, machine_name, quick=False, progress=None, fresh=False):
        state.calls.append((machine, machine_name, quick, fresh))
        return fake_run(quick, state.shift)
    monkeypatch.setattr(workflow_probe, "run_corpus", run_corpus)
    return state


def stored_mapping() -> dict:
    return yaml.safe_load(host_model_path().read_text())


def untimed(mapping: dict, *drop) -> dict:
    """``mapping`` without the self-check's re-run time (the fits take a different time each probe)
    and without the ``probe`` keys ``drop``."""
    check = {k: v for k, v in mapping["probe"]["self_check"].items() if k != "rerun_s"}
    return dict(mapping, probe={**{k: v for k, v in mapping["probe"].items() if k not in drop}, "self_check": check})


def expected(quick: bool, probe_date: str, shift: float = 0.0) -> dict:
    """What ``probe.validation`` must hold: the summary's mapping with the run's provenance."""
    summary = fake_run(quick, shift).summary
    prov = {**summary.provenance, "seconds": 12.3, "loopmodel_version": __version__, "model_probe_date": probe_date}
    return dataclasses.replace(summary, provenance=prov).to_mapping()


def test_validate_stores_the_summary_in_the_new_model(host):
    p = run_main_inprocess(["machine", "probe", "--quick", "--validate", "-o", "v.yml"], host.dir)
    assert p.returncode == 0, p.stderr
    written = yaml.safe_load((host.dir / "v.yml").read_text())
    assert written["probe"]["validation"] == expected(True, "2026-01-01T00:00:00Z")
    assert stored_mapping() == written
    (machine, name, quick, fresh), = host.calls
    assert name == "host" and quick and fresh and machine.probe.date == "2026-01-01T00:00:00Z"
    back = load_machine("host").probe.validation
    assert back == from_mapping(expected(True, "2026-01-01T00:00:00Z"))
    assert back.by_level["L3"] == ErrorStats(1, 0.5, 0.5, 0.5) and back.provenance["cases"] == 6
    assert "validation: quick corpus (seed 0) on 2026-01-02T03:04:05Z, 6 case(s) measured, 1 skipped, 12.3 s" \
        in p.stderr
    assert "  MEM: n=2, |error| median 5.0 %, p90 7.0 %, max 7.0 %" in p.stderr
    assert "note: skipped stencil2d in L2: compiler failed" in p.stderr
    plain = run_main_inprocess(["machine", "probe", "--quick", "--no-store", "-o", "plain.yml"], host.dir)
    assert plain.returncode == 0, plain.stderr
    assert untimed(written, "validation") == untimed(yaml.safe_load((host.dir / "plain.yml").read_text()))
    assert len(host.calls) == 1


def test_validate_without_quick_runs_the_full_corpus_and_no_store_names_no_host(host):
    p = run_main_inprocess(["machine", "probe", "--validate", "--no-store"], host.dir)
    assert p.returncode == 0, p.stderr
    assert yaml.safe_load(p.stdout)["probe"]["validation"]["provenance"]["quick"] is False
    assert [c[1:] for c in host.calls] == [("the probed model", False, True)]
    assert not host_model_path().exists()


def test_validate_only_updates_that_key_and_keeps_the_rest(host):
    assert run_main_inprocess(["machine", "probe", "--quick"], host.dir).returncode == 0
    old_text, old = host_model_path().read_text(), stored_mapping()
    p = run_main_inprocess(["machine", "probe", "--validate-only", "--quick", "-o", "copy.yml"], host.dir)
    assert p.returncode == 0, p.stderr
    new = stored_mapping()
    assert new["probe"]["validation"] == expected(True, old["probe"]["date"])
    assert dict(new, probe={k: v for k, v in new["probe"].items() if k != "validation"}) == old
    new_text = host_model_path().read_text()
    comments = [ln for ln in new_text.splitlines() if ln.startswith("#")]
    assert comments == [ln for ln in old_text.splitlines() if ln.startswith("#")] and comments
    assert (host.dir / "copy.yml").read_text() == new_text
    assert p.stderr.startswith(f"validation added to {host_model_path()} and written to copy.yml\n")
    assert host.calls[0][1:] == ("host", True, True)
    host.shift = 0.01
    assert run_main_inprocess(["machine", "probe", "--validate-only"], host.dir).returncode == 0  # replaces
    again = stored_mapping()
    assert again["probe"]["validation"] == expected(False, old["probe"]["date"], 0.01)
    assert dict(again, probe={k: v for k, v in again["probe"].items() if k != "validation"}) == old
    assert not list(host_model_path().parent.glob("*.tmp*"))


def test_validate_only_without_a_stored_model_is_one_line(host):
    p = run_main_inprocess(["machine", "probe", "--validate-only", "--quick"], host.dir)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "no probe of this host yet" in p.stderr
    assert host.calls == []


@pytest.mark.parametrize("extra, named", [
    (["--validate"], "--validate"), (["--coherence-only"], "--coherence-only"), (["--coherence"], "--coherence"),
    (["--power"], "--power"), (["--no-store"], "--no-store"), (["--cores", "1"], "--cores")])
def test_validate_only_refuses_options_of_a_probe(host, extra, named):
    p = run_main_inprocess(["machine", "probe", "--validate-only", *extra], host.dir)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and p.stdout == ""
    assert p.stderr.startswith("loopmodel: --validate-only ") and p.stderr.rstrip().endswith(f"go with {named}")
    assert host.calls == []


def test_validate_cannot_go_with_coherence_only(host):
    p = run_main_inprocess(["machine", "probe", "--validate", "--coherence-only"], host.dir)
    assert p.returncode == 2 and p.stderr.count("\n") == 1 and "--coherence-only" in p.stderr
    assert host.calls == []


def test_a_refused_probe_is_not_validated(host, monkeypatch):
    monkeypatch.setattr(workflow_probe, "build_checked_host_model", lambda d: uncertain_model())
    p = run_main_inprocess(["machine", "probe", "--quick", "--validate"], host.dir)
    assert p.returncode == 2 and "self-check left 1 measurement(s) uncertain" in p.stderr
    assert host.calls == [] and not host_model_path().exists()


def test_machine_show_prints_the_validation_block(host):
    assert run_main_inprocess(["machine", "probe", "--quick", "--validate"], host.dir).returncode == 0
    p = run_main_inprocess(["machine", "show", "host"], host.dir)
    assert p.returncode == 0, p.stderr
    comments = [ln for ln in p.stdout.splitlines() if ln.startswith("#")]
    at = comments.index("# validation: quick corpus (seed 0) on 2026-01-02T03:04:05Z, 6 case(s) measured, 1 skipped, "
                        f"12.3 s, loopmodel {__version__}")
    assert comments[0].startswith("# self-check: ") and at > 0
    assert comments[at + 1:] == ["#   L1: n=2, |error| median 7.5 %, p90 10.0 %, max 10.0 %",
                                 "#   L2: n=1, |error| median 20.0 %, p90 20.0 %, max 20.0 %",
                                 "#   L3: n=1, |error| median 50.0 %, p90 50.0 %, max 50.0 %",
                                 "#   MEM: n=2, |error| median 5.0 %, p90 7.0 %, max 7.0 %",
                                 "#   all: n=6, |error| median 8.5 %, p90 50.0 %, max 50.0 %",
                                 "#   regimes: 2 with cases (many-streams, short-inner-loop)"]
    assert yaml.safe_load(p.stdout)["probe"]["validation"] == stored_mapping()["probe"]["validation"]


def test_machine_show_without_validation_prints_no_block(tmp_path):
    mapping = machine_mapping(load_machine(SNB))
    mapping["probe"] = {"hostname": "old", "fits": {}}
    (tmp_path / "old.yml").write_text(yaml.safe_dump(mapping))
    p = run_main_inprocess(["machine", "show", "old.yml"], tmp_path)
    assert p.returncode == 0 and "# validation" not in p.stdout and "validation:" not in p.stdout


def test_validation_lines_order_levels_and_survive_a_strangers_section():
    full = {"count": 1, "median_abs_error": 0.1, "p90_abs_error": 0.2, "max_abs_error": 0.3}
    lines = workflow_probe.validation_lines(from_mapping({"by_level": {"MEM": full, "L2": "junk", "L1": {"count": 3}},
                                                          "overall": None}))
    assert lines == ["validation: corpus (seed ?) on an unknown date, ? case(s) measured, 0 skipped",
                     "  MEM: n=1, |error| median 10.0 %, p90 20.0 %, max 30.0 %",
                     "  regimes: 0 with cases"]  # entries that do not read are left out when the file is read


def test_validate_model_reports_progress_per_case_and_measures_fresh(monkeypatch):
    seen = []

    def run_corpus(machine, machine_name, quick=False, progress=None, fresh=False):
        progress(1, 2, types.SimpleNamespace(kernel=types.SimpleNamespace(name="triad"), level="L2"), None)
        return fake_run(quick)
    monkeypatch.setattr(workflow_probe, "run_corpus", run_corpus)
    got = workflow_probe.validate_model(load_machine(SNB), SNB, True, lambda *a: seen.append(a))
    assert seen == [("validation: triad in L2", 1, 2)]
    assert got.summary.provenance["model_probe_date"] is None and got.summary.provenance["seconds"] == 12.3


def test_fresh_corpus_cases_do_not_take_a_benchmark_from_the_cache(monkeypatch, tmp_path):
    """``fresh`` reaches the benchmark as ``use_cache=False``; the analysis still uses the cache."""
    res = types.SimpleNamespace(ecm=types.SimpleNamespace(T_ECM={"L1": 8.0}, notation=lambda: "{...}"),
                                traffic=types.SimpleNamespace(iterations_per_unit=8),
                                confidence=types.SimpleNamespace(tags=("streaming",)), location="L1",
                                prediction=types.SimpleNamespace(location="L1", single_core_cy_per_cl=8.0),
                                notes=(), machine=types.SimpleNamespace(memory_hierarchy=(
                                    types.SimpleNamespace(level="L1"), types.SimpleNamespace(level="MEM"))))
    analyzers, benches = [], []
    written = types.SimpleNamespace(run=lambda d: res, kernel=None,  # analytic: the nest as written
                                    options=types.SimpleNamespace(incore="analytic", kernel_text=None))
    monkeypatch.setattr(corpus, "kernel_analyzer", lambda path, m, f, use_cache: analyzers.append(use_cache)
                        or (None, written))
    monkeypatch.setattr(corpus.measure_bench, "run_bench", lambda *a, **k: benches.append(a[6]) or "bench")
    case = corpus.CorpusCase(types.SimpleNamespace(name="k", source="x"), "L1", {"N": 8})
    for fresh in (False, True):
        got = corpus.measure_case(case, str(tmp_path), None, 1, 0, True, "m", fresh)
        assert got.predicted_cy_per_it == 1.0
    assert analyzers == [True, True] and benches == [True, False]
