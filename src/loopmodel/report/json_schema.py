"""JSON Schemas of the ``--json`` documents, generated from the report functions' output.

Each command's documents are produced by running the command on bundled inputs
(:data:`SAMPLES`), or, for the commands that measure, written by their document functions
from made-up measurements (:func:`measured_documents`); the schema is inferred from their structure (the keys every sample
has are required, mappings keyed by data -- levels, ports, sizes -- are
``additionalProperties``, a number may also be null: an unknown figure), so it is the shape the report code writes, not a second
description to keep in step by hand. ``python -m loopmodel.report.json_schema [DIR]``
writes ``DIR/<command>.schema.json`` (default ``docs/schema``); the tests check that the
committed files are what it writes, and that real output validates against them
(:func:`validate`: a small checker of the subset of JSON Schema written here, so that no
schema library is needed).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile

from .schema import SCHEMA_VERSION

#: object keys whose values are mappings keyed by data (level, port, size, define names)
MAP_KEYS = frozenset({
    "defines", "operations_per_it", "arrays", "components_cy_per_cl", "ports_cy_per_pass",
    "balanced_ports_cy_per_pass", "load_ports_cy_per_pass", "T_ECM_cy_per_cl", "T_transfer_cy_per_cl",
    "by_location", "total_s", "time_s", "reassociation", "model_traffic_B_s", "environment", "counters",
})

#: command -> argument lists (run from the repository root) whose ``--json`` output is the sample
SAMPLES = {
    "analyze": [["analyze", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=100000",
                 "-p", "LC", "-p", "ECM", "-p", "Roofline", "-p", "RooflineASM", "--json"],
                ["analyze", "examples/kernels/2d-5pt.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "-D", "M=1000",
                 "-P", "sim", "-i", "analytic", "--json"],
                ["analyze", "examples/kernels/dot.c", "-m", "Zen_EPYC-7451", "-D", "N=1000:3000:1000",
                 "-i", "analytic", "--json"],
                ["analyze", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1000", "-p", "LC",
                 "--json"]],
    "scaling": [["scaling", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=100000000",
                 "--model", "both", "--json"],
                ["scaling", "examples/kernels/daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=100000000",
                 "-c", "1:3", "--measured", "{measured}", "--fit-p0", "--json"]],
    "app": [["app", "examples/pcg/pcg.yml", "-m", "SkylakeSP_Gold-6148", "-c", "1,2", "--json"]],
    "energy": [["energy", "examples/kernels/triad.c", "-m", "SandyBridgeEP_E5-2680", "-D", "N=10000000",
                "--w0", "23.6 W", "--w1", "1.9 W/GHz", "--w2", "1.2 W/GHz^2", "--json"]],
    "omp": [["omp", "examples/omp/dot_thread0.c", "-m", "{coherence_machine}", "-D", "N=100000", "--json"],
            ["omp", "examples/omp/cg_banded.c", "-m", "{coherence_machine}", "-D", "N=20000", "--json"],
            ["omp", "examples/omp/dot_firsttouch.c", "-m", "{coherence_machine}", "-D", "N=4096", "--threads", "1",
             "--measure", "--min-time", "0.01", "--json"]],
}


def _type(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    return "object"


def infer(samples: list, key: str = "") -> dict:
    """The schema of a list of JSON values (all at the same place in their documents)."""
    types = {_type(v) for v in samples}
    if "number" in types:
        types.add("null")  # an unknown figure is null (the reports' convention)
    out: dict = {}
    if types != {"null"}:  # a key seen only as null: any type
        out["type"] = sorted(types)[0] if len(types) == 1 else sorted(types)
    objects = [v for v in samples if isinstance(v, dict)]
    if objects and key in MAP_KEYS:
        values = [x for o in objects for x in o.values()]
        out["additionalProperties"] = infer(values) if values else {}
    elif objects:
        names = list(dict.fromkeys(k for o in objects for k in o))
        out["properties"] = {k: infer([o[k] for o in objects if k in o], k) for k in names}
        out["required"] = [k for k in names if all(k in o for o in objects)]
        out["additionalProperties"] = False
    items = [x for v in samples if isinstance(v, list) for x in v]
    if items:
        out["items"] = infer(items, key)
    return out


def document_schema(command: str, docs: list) -> dict:
    """The schema of ``command``'s documents, inferred from ``docs``."""
    schema = {"$schema": "https://json-schema.org/draft/2020-12/schema",
              "$id": f"https://loopmodel/schema/{SCHEMA_VERSION}/{command}.schema.json",
              "title": f"loopmodel {command} --json (schema version {SCHEMA_VERSION})"}
    schema.update(infer(docs))
    schema["properties"]["schema_version"] = {"const": SCHEMA_VERSION}
    return schema


def validate(value, schema: dict, where: str = "$") -> list:
    """Errors (``'path: problem'``) of ``value`` against a schema written by :func:`infer`."""
    if "const" in schema:
        return [] if value == schema["const"] else [f"{where}: expected {schema['const']!r}"]
    types = schema.get("type")
    if types is not None:
        allowed = types if isinstance(types, list) else [types]
        if _type(value) not in allowed:
            return [f"{where}: {_type(value)}, expected {' or '.join(allowed)}"]
    errors = []
    if isinstance(value, dict):
        props = schema.get("properties", {})
        errors += [f"{where}: missing key {k!r}" for k in schema.get("required", ()) if k not in value]
        extra = schema.get("additionalProperties", True)
        for k, v in value.items():
            if k in props:
                errors += validate(v, props[k], f"{where}.{k}")
            elif extra is False:
                errors.append(f"{where}: unknown key {k!r}")
            elif isinstance(extra, dict):
                errors += validate(v, extra, f"{where}.{k}")
    if isinstance(value, list) and "items" in schema:
        for i, v in enumerate(value):
            errors += validate(v, schema["items"], f"{where}[{i}]")
    return errors


def run_sample(argv: list, root: str, env: dict | None = None) -> list:
    """The JSON documents one command line prints (one per line for JSON Lines).

    Raises:
        RuntimeError: the command failed (its stderr in the message).
    """
    r = subprocess.run([sys.executable, "-m", "loopmodel.cli", *argv], capture_output=True, text=True, cwd=root,
                       env=env, timeout=300)
    if r.returncode:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")
    text = r.stdout.strip()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]


def coherence_machine(directory: str) -> str:
    """A machine file with a made-up coherence table (for the ``omp`` samples); its path."""
    import yaml

    from ..fileio.machine_writer import coherence_mapping, machine_text
    from ..machine.coherence import TRANSITION_KEYS, CoherenceTable
    from ..machines import __file__ as machines_init

    sizes = (4096, 65536, 1048576, 16777216)
    rate = {k: 2e10 / (1 + i % 5) for i, k in enumerate(TRANSITION_KEYS)}
    secs = {k: {t: tuple(s / rate[k] for s in sizes) for t in (1, 2)} for k in TRANSITION_KEYS}
    table = CoherenceTable(sizes, (1, 2), secs, region_overhead={1: 1e-7, 2: 5e-7}, cpus=(0, 1))
    with open(os.path.join(os.path.dirname(machines_init), "SkylakeSP_Gold-6148.yml"), encoding="utf-8") as fh:
        data = yaml.safe_load(fh)
    path = os.path.join(directory, "coherence.yml")
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(machine_text({**data, "coherence": coherence_mapping(table)}, ["schema sample"]))
    return path


def measured_documents() -> dict:
    """Command -> documents of the commands that run code (``bench``, ``validate``, ``measure``,
    ``roofline``), written by their document functions from made-up measurements."""
    from ..cli_bench import _document as bench_document
    from ..cli_roofline import document as roofline_document
    from ..cli_validate import document as validate_document
    from ..fileio.machine_files import load_machine
    from ..measure.bench import BenchResult
    from ..measure.cli_measure import to_document
    from ..measure.kernel_bench import KernelMeasurement
    from ..measure.stream import StreamPoint, StreamResult
    from ..roofline_measured import RooflinePoint, roofs
    from ..validation import ValidationRow

    def bench(n: int, threads: int) -> BenchResult:
        m = KernelMeasurement("k.c", {"N": n}, n, (1e-6, 1.1e-6, 1.3e-6), "gcc", ("-O3",), 0, 10, True,
                              "machine file", "gcc 12", ("a note",), {"instructions": 3.0} if threads == 1 else None)
        return BenchResult("k.c", {"N": n}, m, 3e9, 8, 2, notes=("a note",), threads=threads,
                           openmp=threads > 1, traffic={"L1L2": 24.0})

    stream = StreamResult("triad", 1000, 32000, "gcc", ("-O3",), (StreamPoint(1, 1e-3, 9e-4, 1.1e-3, 1e6, 3.2e7,
                          2.4e7, 32, 24, 10),), "host", "gcc 12", 5, 0.1)
    point = RooflinePoint("k.c", {"N": 1000}, "L1", 0.1, (2e9, 1.9e9, 1.8e9), 2.1e9, "warm")
    return {
        "bench": [bench_document([bench(1000, 1)], False), bench_document([bench(1000, 1), bench(1000, 2)], True)],
        "validate": [validate_document("k.c", [ValidationRow({"N": 1000}, "L1", 6.0, "{ 2 || 4 }", bench(1000, 1))])],
        "measure": [to_document(stream, 3e9), to_document(stream)],
        "roofline": [roofline_document(roofs(load_machine("SkylakeSP_Gold-6148")), [point], ["a note"])],
    }


def sample_documents(root: str) -> dict:
    """Command -> the documents of its :data:`SAMPLES` (run in ``root``, the repository) and of
    :func:`measured_documents`."""
    out = {}
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, LOOPMODEL_CACHE_DIR=os.path.join(tmp, "cache"))
        names = {"coherence_machine": coherence_machine(tmp), "measured": os.path.join(tmp, "measured.json")}
        with open(names["measured"], "w", encoding="utf-8") as fh:  # what bench --threads 1:N --json writes
            json.dump({"points": [{"threads": 1, "it_s": 9e8}, {"threads": 2, "it_s": 1.6e9}]}, fh)
        for command, runs in SAMPLES.items():
            out[command] = [d for argv in runs for d in run_sample([a.format(**names) for a in argv], root, env)]
    return {**out, **measured_documents()}


def schema_text(schema: dict) -> str:
    return json.dumps(schema, indent=1, sort_keys=False) + "\n"


def main(argv: list | None = None) -> int:
    """Write ``<DIR>/<command>.schema.json`` for every command of :data:`SAMPLES`."""
    argv = sys.argv[1:] if argv is None else argv
    directory = argv[0] if argv else os.path.join("docs", "schema")
    os.makedirs(directory, exist_ok=True)
    for command, docs in sample_documents(os.getcwd()).items():
        with open(os.path.join(directory, f"{command}.schema.json"), "w", encoding="utf-8") as fh:
            fh.write(schema_text(document_schema(command, docs)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
