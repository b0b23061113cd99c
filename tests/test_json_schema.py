"""One output schema: every ``--json`` document carries ``schema_version`` and
``loopmodel_version`` and conforms to its declared type (:mod:`loopmodel.report.doctypes`),
whose keys follow one naming rule (units in the key, :mod:`loopmodel.report.schema`) and carry a
description; the committed JSON Schemas (``docs/schema/<command>.schema.json``) and the
machine-file reference are what their generators write."""
import os
import re
import shutil
from pathlib import Path

import pytest

from loopmodel import __version__
import json_samples
from loopmodel.report import doctypes, json_schema
from loopmodel.report.schema import SCHEMA_VERSION

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schema"

#: a key: snake_case words; unit tokens and model names (T_OL, T_ECM, W0) may be upper case
KEY = re.compile(r"^[A-Za-z][A-Za-z0-9]*(_[A-Za-z0-9]+)*$")
#: spellings the rule replaced: lower-case hz, *_per_s rates, unit words, unit-less byte/cycle counts
OLD = re.compile(r"(_hz$|_per_s$|_per_s_|seconds|bytes|cycles|^unit$|^units$|_FLOP_|GB_)")


#: the samples compile (analyze's RooflineASM, omp --measure) and run llvm-mca
TOOLS = bool(shutil.which("llvm-mca") and shutil.which("gcc"))


@pytest.fixture(scope="module")
def samples():
    if not TOOLS:
        pytest.skip("the schema samples need gcc and llvm-mca")
    return json_samples.sample_documents(str(ROOT))


@pytest.fixture(scope="module")
def others(tmp_path_factory):
    """Documents of other inputs than the samples the schemas were generated from."""
    tmp = tmp_path_factory.mktemp("schema")
    machine = json_samples.coherence_machine(str(tmp))
    env = dict(os.environ, LOOPMODEL_CACHE_DIR=str(tmp / "cache"))
    runs = {
        "analyze": ["analyze", "examples/kernels/triad.c", "-m", "HaswellEP_E5-2695v3", "-D", "N=2000000",
                    "-i", "analytic", "--cores", "4", "--json"],
        "scaling": ["scaling", "examples/kernels/triad.c", "-m", "Zen_EPYC-7451", "-D", "N=50000000", "--json"],
        "app": ["app", "examples/pcg/pcg.yml", "-m", "HaswellEP_E5-2695v3", "--incore", "analytic", "--json"],
        "energy": ["energy", "examples/kernels/daxpy.c", "-m", "SandyBridgeEP_E5-2680", "-D", "N=10000000",
                   "--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2", "--clock", "1.2:2.7:0.5 GHz",
                   "--json"],
        "omp": ["omp", "examples/omp/dot_firsttouch.c", "-m", machine, "-D", "N=100000", "--threads", "1,2",
                "--json"],
    }
    return {c: json_samples.run_sample(argv, str(ROOT), env) for c, argv in runs.items()}


def _declared_keys(schema):
    """Every key a schema declares (``properties`` of every object, ``$defs`` included); the
    keys of mappings keyed by data (``additionalProperties``) are data, not declared."""
    if isinstance(schema, dict):
        for k, v in schema.items():
            if k == "properties":
                yield from v
            yield from _declared_keys(v)
    elif isinstance(schema, list):
        for v in schema:
            yield from _declared_keys(v)


def test_every_document_has_the_envelope_and_conforms_to_its_type(samples, others):
    for command, docs in list(samples.items()) + list(others.items()):
        for doc in docs:
            assert list(doc)[:2] == ["schema_version", "loopmodel_version"], command
            assert doc["schema_version"] == SCHEMA_VERSION and doc["loopmodel_version"] == __version__
            assert doctypes.check(command, doc) == [], command


def test_every_declared_key_follows_the_naming_rule():
    for command in doctypes.DOCUMENTS:
        bad = sorted({k for k in _declared_keys(doctypes.json_schema(command)) if not KEY.match(k) or OLD.search(k)})
        assert not bad, f"{command}: keys against the naming rule: {bad}"


def test_every_declared_key_is_described():
    """Every field of every document type carries a description (with its unit)."""
    for command in doctypes.DOCUMENTS:
        schema = doctypes.json_schema(command)
        objects = [schema, *schema.get("$defs", {}).values()]
        missing = [f"{o.get('title')}.{k}" for o in objects for k, v in o.get("properties", {}).items()
                   if "description" not in v]
        assert not missing, f"{command}: keys without a description: {missing}"


def test_a_sweep_line_has_the_shape_of_one_point(samples):
    lines = [d for d in samples["analyze"] if d["kernel"]["file"].endswith("dot.c")]
    assert len(lines) == 3 and all(doctypes.check("analyze", d) == [] for d in lines)


def test_the_checker_reports_unknown_missing_and_mistyped_keys():
    doc = {"schema_version": SCHEMA_VERSION, "loopmodel_version": "x", "kernel": "k.c", "points": [], "notes": []}
    assert doctypes.check("validate", doc) == []
    assert doctypes.check("validate", {**doc, "schema_version": "0"})[0].startswith("$.schema_version:")
    assert doctypes.check("validate", {**doc, "kernel": 3}) == ["$.kernel: Input should be a valid string"]
    assert doctypes.check("validate", {**doc, "extra_s": 1.0}) == ["$.extra_s: Extra inputs are not permitted"]
    missing = {k: v for k, v in doc.items() if k != "points"}
    assert doctypes.check("validate", missing) == ["$.points: Field required"]


def test_committed_schemas_are_up_to_date():
    assert sorted(p.name for p in SCHEMAS.glob("*.schema.json")) == sorted(f"{c}.schema.json" for c in doctypes.DOCUMENTS)
    for command in doctypes.DOCUMENTS:
        text = json_schema.schema_text(json_schema.document_schema(command))
        assert (SCHEMAS / f"{command}.schema.json").read_text() == text, (
            f"docs/schema/{command}.schema.json is stale: run python -m loopmodel.report.json_schema")


def test_machine_file_reference_is_up_to_date():
    from loopmodel.fileio.machine_reference import reference

    text = reference()
    assert (ROOT / "docs" / "machine-file.md").read_text() == text, (
        "docs/machine-file.md is stale: run python -m loopmodel.fileio.machine_reference docs/machine-file.md")
    for key in ("`clock`", "`cores_per_socket`", "`memory_hierarchy[]`", "`penalty_load`", "`contention_p0`"):
        assert key in text
    assert "| `clock` | number | Hz (with a unit: '2.7 GHz'); physical range 1 MHz .. 100 GHz | yes |" in text
    assert "| `throughput` | mapping of number | instructions/cy per operation type, each 0.0001 .. 64 instructions/cy" in text


def test_machine_file_reference_lists_every_key_the_section_readers_accept():
    """The coherence and power sections are read by conversions with their own key tables: the
    reference documents exactly those keys, one table row each; the benchmark kernels' keys
    are the BenchmarkKernel fields."""
    from loopmodel.fileio.machine_reference import reference
    from loopmodel.machine import fields as fx

    text = reference()
    for docs, known in ((fx.COHERENCE_KEY_DOCS, fx.COHERENCE_KEYS), (fx.POWER_KEY_DOCS, fx.POWER_KEYS)):
        assert [row[0] for row in docs] == list(known)
        for key, *_ in docs:
            assert f"| `{key}` |" in text
    assert "| `seconds [s]` | mapping of mapping of list of number | s per size | yes |" in text
    assert "| `W0` | text | W (with a unit: '23.6 W') | yes |" in text
    assert "## `benchmarks.kernels{name}` (BenchmarkKernel)" in text
    assert "| `read_streams` | integer | >= 0; <= 64 | yes |" in text


def test_library_defaults_equal_the_cli_defaults():
    """``AnalyzerSettings()`` analyses as ``loopmodel analyze`` without options does (in-core ``auto``)."""
    from loopmodel.workflows.analysis import MODELS, AnalyzerSettings
    from loopmodel.cli import build_parser
    from loopmodel.units import parse_quantity
    from loopmodel.workflows.analyze import AnalyzeOptions, peer_models

    args = build_parser().parse_args(["analyze", "k.c", "-m", "m"])
    o = AnalyzerSettings()
    assert args.incore is None and o.incore == peer_models(args.pmodel)[1] == "auto"
    assert AnalyzeOptions().incore is None and AnalyzeOptions().cores == args.cores
    assert (o.cores, o.cache_factor, o.cache_predictor, o.sweeps, o.nt_stores, o.reassociate, o.vectorize) == (
        args.cores, args.cache_factor, args.cache_predictor, args.sweeps, args.nt_stores, args.reassociate,
        not args.scalar)
    assert o.array_alignment == parse_quantity(args.array_alignment, "size")
    assert args.array_padding == "0 B" and o.array_padding == 0 and o.models == MODELS


def test_documents_carry_no_infinity_or_nan(samples, others):
    """JSON has neither: an infinite figure is "inf", an undefined one null (report.schema.finite)."""
    import json
    import math

    from loopmodel.report.schema import finite

    assert [finite(x) for x in (1.5, 2, math.inf, -math.inf, math.nan, None)] == [1.5, 2.0, "inf", "-inf", None, None]
    for command, docs in list(samples.items()) + list(others.items()):
        for doc in docs:
            json.dumps(doc, allow_nan=False)
