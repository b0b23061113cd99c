"""``bench``'s outputs: the JSON document, the table of the measurements
(:class:`~loopmodel.measure.bench.BenchResult`: min-of-K with median and max; s/it, cy/CL,
it/s, FLOP/s; the GB/s on each link from the model's traffic and the measured rate) and their
picture (min-of-K with a bar to the max of the runs, roofline-measurement-thesis.txt §4)."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .ecm_plot import log_x_wanted, plain_log_x
from .figures import finish, pyplot
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


def plot(results, curve: bool, title: str):
    """The measurements as a picture: with ``curve`` (one size, several thread counts) it/s per
    thread count, else cy/CL over the size constant that varies (the point's index where none
    does); each point the best run (min time, so the max it/s) with a bar to the worst.
    Returns the matplotlib figure (its one line, labelled ``measured``).

    Raises:
        ToolError: matplotlib is not installed.
    """
    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.8, 4.0))
    names = list(results[0].defines)
    var = next((n for n in names if len({r.defines[n] for r in results}) > 1), None)
    if curve:
        xs, key, label, ylabel = [r.threads for r in results], "it_per_s", "threads", "performance [it/s]"
    else:
        xs, key, label, ylabel = ([r.defines[var] for r in results] if var else list(range(len(results))),
                                  "cy_per_CL", var or "point", "time per cache line of work [cy/CL]")
    best = [r.figures()[key][0] for r in results]
    worst = [r.figures()[key][2] for r in results]
    spread = [[max(b - w, 0.0) for b, w in zip(best, worst)], [0.0] * len(best)] if curve \
        else [[0.0] * len(best), [max(w - b, 0.0) for b, w in zip(best, worst)]]
    ax.errorbar(xs, best, yerr=spread, fmt="ko-" if curve else "ko", ms=4, capsize=2, lw=1,
                label="measured (best of the runs, bar to the worst)")
    if not curve and var and log_x_wanted(xs):
        plain_log_x(ax)
    ax.set_xlabel(label)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    return finish(fig, ax, title, "upper left", None)
