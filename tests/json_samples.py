"""Sample ``--json`` documents of every command for the schema tests: real output of the
commands run on bundled inputs (:data:`SAMPLES`) and, for the commands that measure, their
document functions applied to made-up measurements (:func:`measured_documents`)."""
from __future__ import annotations

import json
import os
import tempfile

import yaml

from loopmodel import gate
from loopmodel.fileio.machine_files import load_machine
from loopmodel.fileio.machine_writer import coherence_mapping, machine_text
from loopmodel.machine.coherence import TRANSITION_KEYS, CoherenceTable
from loopmodel.machines import __file__ as machines_init
from loopmodel.measure.bench import BenchResult
from loopmodel.measure.kernel_bench import KernelMeasurement
from loopmodel.measure.roofline import RooflinePoint, roofs
from loopmodel.measure.stream import StreamPoint, StreamResult
from loopmodel.measure.validation import ValidationRow
from loopmodel.report.bench import document as bench_document
from loopmodel.report.measure import document as to_document
from loopmodel.report.roofline import document as roofline_document
from loopmodel.report.validation import document as validate_document

#: command -> argument lists (run from the repository root) whose ``--json`` output the tests check
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
    "compare": [["compare", "examples/kernels/triad.c", "-m", "SkylakeSP_Gold-6148", "-m", "Zen_EPYC-7451", "-D",
                 "N=10000000", "-i", "analytic", "--json"]],
    "omp": [["omp", "examples/omp/dot_thread0.c", "-m", "{coherence_machine}", "-D", "N=100000", "--json"],
            ["omp", "examples/omp/cg_banded.c", "-m", "{coherence_machine}", "-D", "N=20000", "--json"],
            ["omp", "examples/omp/dot_firsttouch.c", "-m", "{coherence_machine}", "-D", "N=4096", "--threads", "1",
             "--measure", "--min-time", "0.01", "--json"]],
}


def run_sample(argv: list, root: str, env: dict | None = None) -> list:
    """The JSON documents one command line prints (one per line for JSON Lines).

    Raises:
        RuntimeError: the command failed (its stderr in the message).
    """
    r = gate.run_loopmodel(argv, root, env, 300)
    if r.returncode:
        raise RuntimeError(f"{' '.join(argv)}: {r.stderr.strip()}")
    text = r.stdout.strip()
    try:
        return [json.loads(text)]
    except json.JSONDecodeError:
        return [json.loads(line) for line in text.splitlines()]


def coherence_machine(directory: str) -> str:
    """A machine file with a made-up coherence table (for the ``omp`` samples); its path."""
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
    counted = {"instructions": 3.0, "loads": 2.0, "stores": 1.0, "memory_B": None, "flops": 2.0}

    def bench(n: int, threads: int) -> BenchResult:
        m = KernelMeasurement("k.c", {"N": n}, n, (1e-6, 1.1e-6, 1.3e-6), "gcc", ("-O3",), 0, 10, True,
                              "machine file", "gcc 12", ("a note",), counted if threads == 1 else None)
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
