"""The validation corpus: the generator (deterministic per seed, every family, only kernels the
front end parses and the model analyses), the packaged examples (the same bytes as
examples/kernels), the placement (each case's data in its level on two machine models)."""
from __future__ import annotations

from pathlib import Path

import pytest

from loopmodel.fileio.c_kernel import parse_kernel
from loopmodel.fileio.machine_files import load_machine
from loopmodel.measure import corpus
from loopmodel.measure.corpus import FAMILIES, corpus_kernels
from loopmodel.measure.probe import MEMORY_MIN_B
from loopmodel.workflows import corpus as placement
from loopmodel.workflows.analysis import Analyzer, AnalyzerSettings
from loopmodel.workflows.confidence import REGIMES
from loopmodel.workflows.validate import data_level

ROOT = Path(__file__).resolve().parents[1]
PROBED = str(ROOT / "tests" / "fixtures" / "host-probe-xeon-kvm.yml")
BUILTIN = "SkylakeSP_Gold-6148"


def test_the_generator_is_a_function_of_its_seed():
    a, b = corpus_kernels(0), corpus_kernels(0)
    assert a == b
    assert [k.source for k in corpus_kernels(1)] != [k.source for k in a]
    for seed in range(4):
        names = [k.name for k in corpus_kernels(seed)]
        assert len(names) == len(set(names))


@pytest.mark.parametrize("quick", [False, True])
def test_every_family_is_covered(quick):
    kernels = corpus_kernels(0, quick)
    assert 10 <= len(kernels) <= 14 if quick else 50 <= len(kernels) <= 70
    seen = {f for k in kernels for f in k.families}
    assert seen == set(FAMILIES)
    assert sum(k.name.startswith("example-") for k in kernels) >= (2 if quick else 10)
    # the families that are regimes use the regime vocabulary's spelling
    assert {"streaming", "many-streams", "reduction", "stencil", "in-place", "strided", "expensive-ops",
            "compute-bound", "single-precision", "short-inner-loop"} <= set(REGIMES) & seen


def test_quick_is_a_subset_of_full():
    full = {k.name: k for k in corpus_kernels(2)}
    assert all(full[k.name] == k for k in corpus_kernels(2, quick=True))


def test_every_kernel_parses_and_the_model_analyses_it():
    machine = load_machine(BUILTIN)
    kernels = {k.source: k for seed in range(4) for k in corpus_kernels(seed)}  # each text once
    assert len(kernels) > 100
    for k in kernels.values():
        kernel, _ = parse_kernel(k.source, f"{k.name}.c")
        assert set(k.scaled) | set(k.fixed) == set(kernel.constants), k.name
        res = Analyzer(kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic",
                                                         use_cache=False)).run(k.defines(k.min_size))
        assert res.ecm.T_ECM.get("L1") is not None, (k.name, res.ecm.unknown)


def test_the_packaged_examples_are_the_examples():
    examples = sorted(p.name for p in (ROOT / "examples" / "kernels").glob("*.c"))
    packaged = Path(corpus.__file__).parent / "corpus_kernels"
    assert sorted(p.name for p in packaged.glob("*.c")) == examples
    assert sorted(f"{stem}.c" for stem in corpus.EXAMPLES) == examples
    for name in examples:
        assert (packaged / name).read_bytes() == (ROOT / "examples" / "kernels" / name).read_bytes(), name
    assert "examples/kernels" not in "".join(k.source for k in corpus.example_kernels())


@pytest.mark.parametrize("machine_name", [BUILTIN, PROBED])
def test_each_case_puts_its_data_in_its_level(machine_name):
    machine = load_machine(machine_name)
    levels = [lv.level for lv in machine.memory_hierarchy]
    last_cache = machine.memory_hierarchy[-2].size
    cases, notes = placement.corpus_cases(machine, seed=1, quick=True, limit_B=2**30)
    assert len(cases) >= 4 * 10 and all("cache simulation" in n or "iterations" in n for n in notes)
    analyzers = {}
    for c in cases:
        kernel, _ = parse_kernel(c.kernel.source, "k.c")
        if machine_name == PROBED or not c.kernel.max_levels:  # the simulation once is enough
            analyzer = analyzers.setdefault(c.kernel.name, Analyzer(kernel, machine, AnalyzerSettings(
                models=("ECM",), incore="analytic", use_cache=False)))
            assert data_level(analyzer.run(c.defines)) == c.level, (c.kernel.name, c.defines)
        assert c.data_B == placement.data_bytes(kernel, c.defines)
        if c.level == "MEM":
            assert max(placement.MEM_FACTOR * last_cache, MEMORY_MIN_B) <= c.data_B <= 2**30
        else:  # the whole data set fits the level's capacity
            assert c.data_B <= machine.memory_hierarchy[levels.index(c.level)].size, (c.kernel.name, c.level)
    # every kernel in every level of this hierarchy (those that need the simulation in the first ones)
    assert {(c.kernel.name, c.level) for c in cases} == {(k.name, lv) for k in corpus_kernels(1, True)
                                                         for lv in levels[:k.max_levels or None]
                                                         if not (k.name.startswith("matmat") and lv == "MEM")}


def test_cases_that_cannot_be_placed_get_a_note():
    machine = load_machine(BUILTIN)
    big = corpus.CorpusKernel("big-3d", "double a[N][N][N], b[N][N][N];\nfor (int k = 1; k < N-1; ++k)\n"
                              "for (int j = 1; j < N-1; ++j)\nfor (int i = 1; i < N-1; ++i)\n"
                              "b[k][j][i] = a[k][j][i-1] + a[k][j][i+1];\n", ("stencil",), ("N",), min_size=48)
    cases, notes = placement.place_kernel(big, machine, limit_B=2**24)
    assert [c.level for c in cases] == ["L3"]  # 1.7 MiB at N=48: beyond L1 and L2; memory beyond 16 MiB
    assert len(notes) == 3 and all(n.startswith("big-3d: not placed in ") for n in notes)
    simulated = corpus.CorpusKernel("strided", "double a[2*N], b[N];\nfor (int i = 0; i < N; ++i)\n"
                                    "b[i] = a[2*i];\n", ("strided",), ("N",), min_size=64, max_levels=2)
    cases, notes = placement.place_kernel(simulated, machine, limit_B=2**30)
    assert [c.level for c in cases] == ["L1", "L2"] and all("cache simulation" in n for n in notes)


def test_memory_cases_stay_within_the_available_memory(monkeypatch):
    monkeypatch.setattr(placement, "available_memory", lambda: 2**31)
    assert placement.memory_limit_B() == 2**29
    monkeypatch.setattr(placement, "available_memory", lambda: None)
    assert placement.memory_limit_B() == placement.MEM_LIMIT_B


def test_no_case_runs_too_long_per_call():
    cases, notes = placement.corpus_cases(load_machine("Zen_EPYC-7451"), seed=0, quick=True, limit_B=2**30)
    assert any(n.startswith("matmat-ikj-") and "not placed in MEM: one call would run" in n for n in notes)
    for c in cases:
        kernel, _ = parse_kernel(c.kernel.source, "k.c")
        its = 1
        for loop in kernel.loops:
            its *= loop.iterations(c.defines)
        assert its <= placement.MAX_ITERATIONS
