"""The bundled machine library: every figure sourced, the provenance section, the generated
document (docs/machines.md) and ``machine diff``."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from helpers import run_cli
from loopmodel.errors import MachineError
from loopmodel.fileio.machine_catalog import catalog
from loopmodel.fileio.machine_files import builtin_names, load_machine, validate
from loopmodel.fileio.machine_writer import machine_mapping
from loopmodel.machine.figure_text import figure_value
from loopmodel.machine.provenance import FigureSource, estimated, figure_keys, unsourced
from loopmodel.workflows.machine import diff

ROOT = Path(__file__).resolve().parent.parent


def _mapping(name: str = "Zen_EPYC-7451") -> dict:
    return machine_mapping(load_machine(name))


@pytest.mark.parametrize("name", builtin_names())
def test_every_bundled_figure_has_a_source(name):
    """Each bundled model names the source of every figure, and says how each estimate was made."""
    m = load_machine(name)
    assert unsourced(m) == []
    for key, entry in estimated(m):
        assert entry.reason.strip(), key


@pytest.mark.parametrize("name", builtin_names())
def test_every_figure_has_a_text(name):
    m = load_machine(name)
    for key in figure_keys(m):
        assert figure_value(m, key).strip()


def test_provenance_round_trip():
    data = _mapping()
    data["provenance"] = {"clock": {"source": "data sheet"},
                          "links.L3MEM": {"source": "STREAM", "estimated": True, "reason": "80 % of the peak"}}
    m = validate(data, "x.yml")
    assert m.provenance["clock"] == FigureSource("data sheet")
    assert m.provenance["links.L3MEM"].estimated
    assert validate(machine_mapping(m), "y.yml") == m
    assert [k for k, _ in estimated(m)] == ["links.L3MEM"]


@pytest.mark.parametrize("entry, words", [
    ({"links.L9MEM": {"source": "s"}}, "'links.L9MEM' is not a figure"),
    ({"clock": {"source": "s", "estimated": True}}, "needs a 'reason'"),
    ({"clock": {"source": ""}}, "non-empty"),
    ({"clock": {"source": "s", "by": "me"}}, "unknown key 'by'"),
    ({"clock": "data sheet"}, "must be a mapping"),
])
def test_provenance_refusals_are_one_line(entry, words):
    data = _mapping()
    data["provenance"] = entry
    with pytest.raises(MachineError) as exc:
        validate(data, "bad.yml")
    text = str(exc.value)
    assert words in text and "bad.yml" in text and "\n" not in text


def test_the_machine_library_document_is_current():
    text = (ROOT / "docs" / "machines.md").read_text()
    assert text == catalog(), "docs/machines.md is stale: run python -m loopmodel.fileio.machine_catalog docs/machines.md"


def test_the_document_lists_every_model_and_estimate():
    text = catalog()
    for name in builtin_names():
        assert f"## {name}\n" in text
        for key, entry in estimated(load_machine(name)):
            assert " ".join(entry.reason.split()).replace("|", "\\|") in text


def test_diff_marks_what_differs():
    rows = diff("SkylakeSP_Gold-6148", "SkylakeSP_Gold-6148_SNC")
    by_key = {r[0]: r for r in rows}
    assert by_key["clock"][1] == "2.4 GHz" and by_key["clock"][2] == "2.2 GHz"
    assert by_key["memory_hierarchy.L1"][1] == by_key["memory_hierarchy.L1"][2]
    assert by_key["in_core.throughput"][1] == by_key["in_core.throughput"][2]


def test_diff_cli_and_a_missing_level():
    p = run_cli("machine", "diff", "SkylakeSP_Gold-6148", ROOT / "examples" / "machines" / "EpycZen4_2vCPU.yml")
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].split()[0] == "figure"
    clock = next(ln for ln in lines if ln.startswith("clock "))
    assert clock.endswith("*")  # differs
    assert any(ln.startswith("benchmarks ") for ln in lines)


def test_diff_unknown_model_is_one_line():
    p = run_cli("machine", "diff", "SkylakeSP_Gold-6148", "NoSuchMachine")
    assert p.returncode != 0 and p.stderr.count("\n") == 1 and "NoSuchMachine" in p.stderr


def test_show_prints_the_sources():
    p = run_cli("machine", "show", "Zen_EPYC-7451")
    assert p.returncode == 0, p.stderr
    data = yaml.safe_load(p.stdout)
    assert set(data["provenance"]) == set(figure_keys(load_machine("Zen_EPYC-7451")))


@pytest.mark.parametrize("name", builtin_names())
def test_estimated_coherence_sections_are_current(name):
    """A bundled model's estimated coherence section is the estimate of its current figures
    (regenerate with python -m loopmodel.fileio.coherence_estimate_section NAME after a change)."""
    import dataclasses

    from loopmodel.fileio.coherence_estimate_section import estimated_section
    from loopmodel.fileio.machine_writer import coherence_mapping
    m = load_machine(name)
    if not m.provenance.get("coherence") or not m.provenance["coherence"].estimated:
        pytest.skip("measured coherence section")
    assert coherence_mapping(m.coherence) == estimated_section(dataclasses.replace(m, coherence=None))
