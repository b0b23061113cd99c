"""``bench``'s outputs: the JSON document and the table of the measurements
(:class:`~loopmodel.measure.bench.BenchResult`: min-of-K with median and max; s/it, cy/CL,
it/s, FLOP/s; the GB/s on each link from the model's traffic and the measured rate)."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .schema import document as envelope


def bench_notes(results) -> list:
    """The notes of the table and of the JSON document: how the kernel was run (runs, cache,
    threads, compiler), whether it came from the cache, then every point's own notes."""
    r0 = results[0]
    who = (f"{r0.threads} OpenMP threads (OMP_PLACES=cores, OMP_PROC_BIND=close)" if r0.openmp
           else f"1 thread pinned to CPU {r0.measurement.cpu}")
    notes = [f"{len(r0.measurement.seconds_per_call)} runs per size, data {r0.cache}, {who}; compiled with "
             f"{r0.measurement.compiler} {' '.join(r0.measurement.flags)}"]
    if any(r.cached for r in results):
        notes.append("from the per-user cache (--no-cache measures again)")
    return list(dict.fromkeys(notes + [n for r in results for n in r.notes]))


def document(results, curve: bool) -> dict:
    """The document of ``bench --json``, of the same shape for one size, a sweep of sizes and a
    range of thread counts (``curve``, whose ``points`` (``threads``, ``it_s``)
    ``loopmodel scaling --measured`` reads): ``{"schema_version", "loopmodel_version", "kernel",
    "points": [...], "notes": [...]}``."""
    del curve  # the same shape either way
    return envelope({"kernel": results[0].kernel,
                     "points": [{"threads": r.threads, "it_s": r.figures()["it_per_s"][0], **r.to_dict()}
                                for r in results],
                     "notes": bench_notes(results)})


def _sizes(r) -> str:
    return " ".join(f"{k}={v}" for k, v in r.defines.items())


def render(results, console) -> None:
    """The table of the measurements on ``console`` (rich), then the GB/s on each link, the
    counters per iteration where measured, and the notes."""
    t = Table(title="Measured (min-of-K; median and max of the runs)")
    for col in ("sizes", "cy/CL min", "median", "max", "cy/it", "s/it", "it/s", "FLOP/s", "CoV", "clock"):
        t.add_column(col, justify="left" if col == "sizes" else "right")
    for r in results:
        f, m = r.figures(), r.measurement
        t.add_row(_sizes(r), *(f"{x:.2f}" for x in f["cy_per_CL"]),
                  f"{f['cy_per_it'][0]:.3f}", f"{f['seconds_per_it'][0]:.3e}", f"{f['it_per_s'][0]:.3e}",
                  f"{f['FLOP_per_s'][0]:.3e}", f"{100 * m.cov:.1f} %", f"{r.clock_hz / 1e9:.3f} GHz")
    console.print(t)
    for r in results:
        gbs = {k: v / 1e9 for k, v in r.to_dict()["measurement"]["model_traffic_B_s"].items()}
        if gbs:
            console.print(_sizes(r) + ": GB/s on each link (model traffic x measured it/s): "
                          + ", ".join(f"{k} {v:.1f}" for k, v in gbs.items()))
        if r.stability is not None:
            console.print(escape(_sizes(r) + ": stability: " + r.stability.text()))
        c = r.measurement.counters
        if c:
            console.print(_sizes(r) + ": counters per iteration: " + ", ".join(
                f"{k.replace('_', ' ')} {v:.3g}" for k, v in c.items() if v is not None))
    for n in bench_notes(results):
        console.print(escape(f"note: {n}"))
