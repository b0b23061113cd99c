"""Machine files: the Kerncraft reference library, conversion, and the built-in models."""
from __future__ import annotations

import os

import pytest
import yaml

from helpers import BUILTINS, KERNCRAFT_BUILTINS, PAPER_BUILTINS, REFERENCE_MACHINES, reference_dir, reference_files, run_cli, run_cli_batch
from loopmodel.fileio.machine_files import builtin_names, load_machine, validate
from loopmodel.machine.model import MachineModel

REF_FILES = reference_files()
REF_IDS = [p.stem for p in REF_FILES]
needs_reference = pytest.mark.skipif(not REF_FILES, reason=f"no reference machine files at {REFERENCE_MACHINES}")


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    """All read-only CLI runs of this module, side by side: {key: CompletedProcess}."""
    cwd = tmp_path_factory.mktemp("machine-cli")
    jobs = {("convert", p.stem): (["machine", "convert", p], cwd) for p in REF_FILES}
    jobs.update({("show", n): (["machine", "show", n], cwd) for n in BUILTINS})
    jobs[("list",)] = (["machine", "list"], cwd)
    jobs[("show", "NoSuchMachine")] = (["machine", "show", "NoSuchMachine"], cwd)
    return run_cli_batch(jobs)


def test_reference_folder_present_or_skipped():
    d = reference_dir()  # skips when absent
    assert len(list(d.glob("*.yml"))) >= 10


# --- every reference file loads and converts ---------------------------------------------------------

@needs_reference
@pytest.mark.parametrize("path", REF_FILES, ids=REF_IDS)
def test_reference_file_loads(path):
    m = load_machine(str(path))
    assert isinstance(m, MachineModel)
    names = [lv.level for lv in m.memory_hierarchy]
    assert names[0] == "L1" and names[-1] == "MEM"
    assert len(m.links) == len(names) - 1
    assert m.clock > 1e8
    assert m.cacheline_size in (64.0, 128.0, 256.0)
    for lv in m.caches:
        assert lv.size and lv.size > 0
        if lv.sets and lv.ways:
            assert lv.sets * lv.ways * m.cacheline_size == lv.size
    # Kerncraft files name the model in their file name; the conversion keeps it
    assert m.name == path.stem


@needs_reference
@pytest.mark.parametrize("path", REF_FILES, ids=REF_IDS)
def test_reference_file_converts_via_cli(path, cli):
    p = cli[("convert", path.stem)]
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    data = yaml.safe_load(p.stdout)
    assert isinstance(data, dict)
    assert "memory hierarchy" not in data  # loopmodel schema, not Kerncraft's
    m = validate(data, "converted.yml")
    # lossless: the converted text is the same model as converting on the fly
    assert m == load_machine(str(path))


@needs_reference
def test_reference_file_not_modified_by_conversion(tmp_path):
    path = REF_FILES[0]
    before = path.read_bytes()
    out = tmp_path / "out.yml"
    p = run_cli("machine", "convert", path, "-o", out)
    assert p.returncode == 0, p.stderr
    assert p.stdout == ""
    assert path.read_bytes() == before
    assert validate(yaml.safe_load(out.read_text()), str(out)) == load_machine(str(path))


@needs_reference
def test_convert_refuses_to_overwrite(tmp_path):
    out = tmp_path / "existing.yml"
    out.write_text("keep me\n")
    mtime = os.stat(out).st_mtime_ns
    p = run_cli("machine", "convert", REF_FILES[0], "-o", out)
    assert p.returncode == 2
    assert out.read_text() == "keep me\n"
    assert os.stat(out).st_mtime_ns == mtime
    assert p.stdout == ""
    lines = p.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("loopmodel: ")
    assert "existing.yml" in lines[0] and "overwrit" in lines[0]
    assert "Traceback" not in p.stderr


@needs_reference
@pytest.mark.parametrize("name", sorted(n for n, f in PAPER_BUILTINS.items() if f))
def test_paper_models_agree_with_reference_cache_facts(name):
    """The cross-architecture models take cache organisation from the Kerncraft files of the same CPUs
    (clock and in-core figures from the paper's Tables 1-2)."""
    ref = load_machine(str(REFERENCE_MACHINES / PAPER_BUILTINS[name]))
    own = load_machine(name)
    assert ref.cores_per_socket == own.cores_per_socket
    for a, b in zip(ref.caches, own.caches):
        for attr in ("size", "sets", "ways", "cores_per_group"):
            assert getattr(a, attr) == getattr(b, attr), (a.level, attr)
        assert (a.type == "victim") == (b.type == "victim"), a.level


@needs_reference
@pytest.mark.parametrize("name", KERNCRAFT_BUILTINS)
def test_reference_agrees_with_builtin(name):
    """The built-in models carry the facts of the Kerncraft descriptions of the same CPUs."""
    ref = load_machine(str(REFERENCE_MACHINES / f"{name}.yml"))
    own = load_machine(name)
    for attr in ("clock", "cores_per_socket", "sockets", "cacheline_size"):
        assert getattr(ref, attr) == getattr(own, attr), attr
    assert [lv.level for lv in ref.memory_hierarchy] == [lv.level for lv in own.memory_hierarchy]
    for a, b in zip(ref.caches, own.caches):
        for attr in ("size", "sets", "ways", "cores_per_group", "write_allocate", "write_back"):
            assert getattr(a, attr) == getattr(b, attr), (a.level, attr)
        # Kerncraft files cannot say 'inclusive' (pycachesim has no back-invalidation): only victim is compared
        assert (a.type == "victim") == (b.type == "victim"), a.level
    assert [lk.between for lk in ref.links] == [lk.between for lk in own.links]


@needs_reference
def test_reference_victim_caches_detected():
    assert load_machine(str(REFERENCE_MACHINES / "SkylakeSP_Gold-6148.yml")).memory_hierarchy[2].type == "victim"
    assert load_machine(str(REFERENCE_MACHINES / "IvyBridgeEP_E5-2690v2.yml")).memory_hierarchy[2].type == "non-inclusive"
    assert load_machine("IvyBridgeEP_E5-2690v2").memory_hierarchy[2].type == "inclusive"  # ours says so


@needs_reference
def test_reference_zen_overlap_list():
    """Zen: Kerncraft's 'transfers overlap' become overlapping ECM contributions."""
    m = load_machine(str(REFERENCE_MACHINES / "Zen_EPYC-7451.yml"))
    assert "T_OL" in m.overlap and "T_nOL" in m.overlap and "L1L2" in m.overlap


# --- built-in library ------------------------------------------------------------------------------

def test_builtin_names():
    assert builtin_names() == sorted(BUILTINS)


def test_machine_list_cli(cli):
    p = cli[("list",)]
    assert p.returncode == 0, p.stderr
    lines = [ln for ln in p.stdout.splitlines() if ln.strip()]
    assert sorted(ln.split()[0] for ln in lines) == sorted(BUILTINS)
    for ln in lines:
        assert len(ln.split()) > 1  # the model name follows the short name


@pytest.mark.parametrize("name", BUILTINS)
def test_machine_show_revalidates(name, cli):
    p = cli[("show", name)]
    assert p.returncode == 0, p.stderr
    data = yaml.safe_load(p.stdout)
    m = validate(data, f"{name}-shown.yml")
    assert m == load_machine(name)


def test_machine_show_units_explicit(cli):
    p = cli[("show", "IvyBridgeEP_E5-2690v2")]
    data = yaml.safe_load(p.stdout)
    assert data["clock"] == "3 GHz"
    assert data["cacheline_size"] == "64 B"
    assert data["memory_hierarchy"][0]["size"].endswith(" B")
    assert data["links"][0]["bandwidth"] == "32 B/cy"
    assert all(v.endswith("GB/s") for v in data["benchmarks"]["measurements"]["MEM"]["copy"])


def test_machine_show_unknown_name(cli):
    p = cli[("show", "NoSuchMachine")]
    assert p.returncode == 2
    assert p.stderr.count("\n") == 1 and p.stderr.startswith("loopmodel: ")
    assert "NoSuchMachine" in p.stderr and "IvyBridgeEP_E5-2690v2" in p.stderr


@pytest.mark.parametrize("name", BUILTINS)
def test_builtin_model_sanity(name):
    m = load_machine(name)
    assert m.name == name
    levels = [lv.level for lv in m.memory_hierarchy]
    assert levels == ["L1", "L2", "L3", "MEM"] or (name == "A64FX_FX1000" and levels == ["L1", "L2", "MEM"])
    sizes = [lv.size for lv in m.caches]
    assert sizes == sorted(sizes)
    assert m.memory_hierarchy[0].size in (32 * 1024, 48 * 1024, 64 * 1024)
    if name in KERNCRAFT_BUILTINS:
        assert "MEM" in m.benchmarks.measurements
    # every link bandwidth can be converted to B/cy
    for lk in m.links:
        bws = m.link_bandwidths_cy(lk, measured_bps=10e9)
        assert all(b > 0 for b in bws)


def test_load_machine_overrides():
    m = load_machine("IvyBridgeEP_E5-2690v2", overrides={"clock": "2.0 GHz"})
    assert m.clock == 2.0e9
    assert load_machine("IvyBridgeEP_E5-2690v2").clock == 3.0e9
