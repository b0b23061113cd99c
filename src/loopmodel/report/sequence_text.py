"""Text report of a kernel function of several loop nests (:mod:`loopmodel.workflows.sequence`):
one row per nest (its loops, iterations, data location, ECM prediction, share of the time and
bottleneck), the total per call, then the notes; with ``-v`` each nest's full report
(:func:`loopmodel.report.text.render`)."""
from __future__ import annotations

from rich.markup import escape
from rich.table import Table

from .text import render


def _num(value, digits: int = 4) -> str:
    return "n/a" if value is None else f"{value:.{digits}g}"


def render_sequence(res, console, unit: str = "cy/CL", verbose: int = 0) -> None:
    """Print a :class:`~loopmodel.workflows.sequence.SequenceResult` (``unit``: of each nest's
    full report with ``verbose``; the table gives cy/CL and cy/it)."""
    seq, m = res.sequence, res.machine
    d = " ".join(f"-D {n}={v}" for n, v in sorted(res.defines.items()))
    console.print(f"[bold]loopmodel[/bold] {escape(seq.source)}  -m {escape(m.name)}  {escape(d)}  "
                  f"{len(seq.nests)} loop nests, analysed one by one and summed")
    t = Table(title="Loop nests (single core, in execution order)", title_justify="left")
    for col in ("nest", "iterations", "runs", "data in", "T_ECM [cy/CL]", "cy/it", "cycles per call", "share",
                "bottleneck"):
        t.add_column(col, justify="left" if col in ("nest", "data in", "bottleneck") else "right")
    for n in res.nests:
        if n.empty is not None:
            t.add_row(escape(n.nest.label), "0", str(n.repeats), "-", "-", "-", "0", "0 %", "does not run")
            continue
        ecm = n.result.ecm
        per_unit = n.result.traffic.iterations_per_unit
        cy_it = None if ecm is None or ecm.selected is None else ecm.selected / per_unit
        share = res.share(n)
        t.add_row(escape(n.nest.label), str(n.iterations), str(n.repeats), n.result.location,
                  _num(None if ecm is None else ecm.selected), _num(cy_it), _num(n.cycles),
                  "n/a" if share is None else f"{100 * share:.1f} %", n.bottleneck or "n/a")
    console.print(t)
    total = res.total_cycles
    if total is None:
        console.print("total: n/a (a nest's ECM time is unknown: see its notes)")
    else:
        outer = res.outer
        per = f"; {outer[1]:.4g} cy per iteration of '{outer[0]}'" if outer else ""
        console.print(f"total: {total:.4g} cy per call = {res.seconds * 1e3:.4g} ms at {m.clock / 1e9:.3g} GHz "
                      f"(single core){per}")
    for n in res.notes:
        console.print(f"[dim]{escape('note: ' + n)}[/dim]")
    seen = set(res.notes)
    for n in res.nests:
        for note in (n.result.notes if n.result is not None else (n.empty,)):
            if note not in seen:
                seen.add(note)
                console.print(f"[dim]{escape(f'note ({n.nest.label}): {note}')}[/dim]")
    if verbose:
        for n in res.nests:
            if n.result is not None:
                console.print(f"\n[bold]===== nest at {escape(n.nest.label)} =====[/bold]")
                render(n.result, console, unit, verbose - 1)
