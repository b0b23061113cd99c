"""Re-measure only the in-core figures of a probed host model and write an updated copy.

    python benchmarks/probe_incore_update.py IN.yml OUT.yml [--rounds 3] [--force]

Runs the probe's in-core micro-benchmarks (:func:`loopmodel.measure.incore_bench.run_incore`,
every instruction form of this host, the probe's repetitions and min_time_s), ``--rounds``
times, keeping per form the round whose repetitions agree best (as the probe's self-check
re-runs do: ``loopmodel.measure.probe``), and writes OUT: IN with

* its ``in_core`` section's measured keys replaced by the new figures
  (:func:`loopmodel.workflows.hostmodel.measured_in_core`: throughput, latency and their
  ``*_by_width`` tables, load/store limits and ``split_extra``, ``flops_per_cycle``,
  ``store_forward_latency``, ``taken_branches_per_cycle``, ``instructions_per_cycle``), the
  keys the in-core benchmarks do not measure kept (``llvm_mca_cpu``, ``load_store_per_cycle``,
  ``inner_loop_*``, ...), at IN's ``simd_width``;
* ``probe.in_core`` replaced by the new points (min/median/max and spread per form) and their
  derived figures, and a line in ``probe.notes`` saying when and how they were re-measured.

Everything else (bandwidths, links, fits, the self-check of the original probe) is IN's. OUT
is validated before it is written; it must not exist unless ``--force``, and must differ from
IN; IN must come from this host (``probe.hostname``) unless ``--force``. Prints the new figures with their spread. About 5-10 s per round on a 2-vCPU guest.
"""
from __future__ import annotations

import argparse
import dataclasses
import datetime
import platform
import sys
from pathlib import Path

from loopmodel.fileio.machine_files import read_yaml
from loopmodel.fileio.machine_writer import machine_text
from loopmodel.measure.clock import measure_clock_hz
from loopmodel.measure.incore_bench import run_incore
from loopmodel.measure.topology import read_topology
from loopmodel.units import parse_quantity
from loopmodel.workflows.hostmodel import measured_in_core

#: the in_core keys the in-core benchmarks measure (replaced); every other key of IN is kept
MEASURED_KEYS = ("throughput", "latency", "latency_by_width", "throughput_by_width", "load", "store",
                 "flops_per_cycle", "store_forward_latency", "taken_branches_per_cycle", "instructions_per_cycle")


def best_of(results: list):
    """Per form the point whose repetitions agree best (smallest spread) over ``results``
    (:class:`~loopmodel.measure.incore_bench.InCoreBenchResult` of the same forms); the notes
    of every round."""
    first = results[0]
    points = []
    for p in first.points:
        same = [q for r in results for q in r.points if (q.op, q.width, q.kind, q.form) == (p.op, p.width, p.kind, p.form)]
        points.append(min(same, key=lambda q: q.spread))
    notes = tuple(dict.fromkeys(n for r in results for n in r.notes))
    return dataclasses.replace(first, points=tuple(points), notes=notes,
                               calibrated=all(r.calibrated for r in results))


def updated_mapping(mapping: dict, incore, when: str) -> dict:
    """``mapping`` (a host model's YAML data) with the in-core figures of ``incore`` (module
    docstring); a new dict, ``mapping`` is not changed."""
    out = dict(mapping)
    width = int(parse_quantity(str(mapping["in_core"]["simd_width"]), "size"))
    section = measured_in_core(incore, width)
    kept = {k: v for k, v in mapping["in_core"].items() if k not in MEASURED_KEYS}
    out["in_core"] = {**kept, **section}
    probe = dict(mapping.get("probe") or {})
    probe["in_core"] = incore.to_dict()
    probe["notes"] = [*probe.get("notes", []),
                      f"in_core and probe.in_core re-measured on {when} by benchmarks/probe_incore_update.py "
                      f"({len(incore.points)} forms; split_extra of loads from the mixed-stream pattern)"]
    out["probe"] = probe
    return out


def _print(incore, section: dict) -> None:
    for p in incore.points:
        print(f"{p.op:20s} {p.width:3d} B {p.kind:10s} cy min {p.cycles_min:8.3f} median {p.cycles_median:8.3f} "
              f"max {p.cycles_max:8.3f} spread {100 * p.spread:5.1f} %")
    for k in ("store_forward_latency", "taken_branches_per_cycle", "instructions_per_cycle"):
        print(f"{k}: {section.get(k)}")
    print(f"load.split_extra: {section['load'].get('split_extra')}, store.split_extra: "
          f"{section['store'].get('split_extra')}")
    derived = incore.to_dict()["derived"]
    print(f"split extra per form: {derived.get('load_split_extra')}; GPR store forwarding "
          f"{derived.get('store_forward_gpr_cy')} cy; loop branches/cy {derived.get('loop_branches_per_cycle')}")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("input")
    ap.add_argument("output")
    ap.add_argument("--rounds", type=int, default=3, help="in-core runs; per form the best-agreeing is kept")
    ap.add_argument("--repetitions", type=int, default=5)
    ap.add_argument("--min-time-s", type=float, default=0.005)
    ap.add_argument("--compiler", default="gcc")
    ap.add_argument("--force", action="store_true", help="overwrite OUT")
    a = ap.parse_args(argv)
    src, dst = Path(a.input), Path(a.output)
    if dst.resolve() == src.resolve() or (dst.exists() and not a.force):
        print(f"probe_incore_update: {dst} {'is the input' if dst.resolve() == src.resolve() else 'exists'}; "
              "give another OUT (or --force)", file=sys.stderr)
        return 2
    mapping = read_yaml(str(src))
    probed_on = (mapping.get("probe") or {}).get("hostname")
    if probed_on != platform.node() and not a.force:
        print(f"probe_incore_update: {src} was probed on '{probed_on}', this is '{platform.node()}': its other "
              "figures would not match (--force to write it anyway)", file=sys.stderr)
        return 2
    family = "aarch64" if platform.machine() in ("aarch64", "arm64") else "x86"
    topo = read_topology()
    hz = measure_clock_hz()
    rounds = [run_incore(family, topo.isa, hz, repetitions=a.repetitions, min_time_s=a.min_time_s,
                         compiler=a.compiler) for _ in range(max(1, a.rounds))]
    incore = best_of(rounds)
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    new = updated_mapping(mapping, incore, when)
    header = [ln[2:] if ln.startswith("# ") else ln[1:] for ln in src.read_text().splitlines() if ln.startswith("#")]
    dst.write_text(machine_text(new, header))
    _print(incore, new["in_core"])
    for n in incore.notes:
        print(f"note: {n}")
    print(f"wrote {dst}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
