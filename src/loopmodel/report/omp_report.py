"""Terminal tables of ``loopmodel omp``: the program per thread count, then its phases with
the transitions that dominate them (benchmark-based-coherence-model.txt's chunk states)."""
from __future__ import annotations

import sys

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from ..models.omp_program import measured_iterations
from .omp_json import omp_notes


def format_seconds(s: float) -> str:
    """``1.5e-6`` -> ``'1.50 µs'`` (s, ms, µs, ns)."""
    for unit, f in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if abs(s) >= f:
            return f"{s / f:.3g} {unit}" if s / f >= 100 else f"{s / f:.2f} {unit}"
    return f"{s / 1e-9:.1f} ns"


def _error(pred: float, meas: float) -> str:
    return f"{100 * (pred / meas - 1):+.1f} %" if meas > 0 else "-"


def _totals_table(rows):
    t = Table()
    measured = rows[0].measured is not None
    cols = ["threads", "predicted", "speed-up"] + (["measured (min)", "measured speed-up", "error"] if measured else [])
    for c in cols:
        t.add_column(c, justify="right")
    for r in rows:
        cells = [str(r.threads), format_seconds(r.prediction.total_seconds), f"{r.speedup:.2f}"]
        if measured:
            m = r.measured
            cells += [format_seconds(m.total_seconds), f"{r.measured_speedup:.2f}",
                      _error(r.prediction.total_seconds, m.total_seconds)]
        t.add_row(*cells)
    return t


def _dominant(ph) -> str:
    parts = ", ".join(f"{100 * x.share:.0f} % {x.transition}" for x in ph.transitions[:2])
    if ph.bound == "in-core":
        return f"in-core bound ({format_seconds(ph.core_seconds)} > memory {format_seconds(ph.memory_seconds)})"
    return parts


def _phase_table(rows):
    last = rows[-1]
    t = Table(title=f"phases (time of one execution after the preceding phases); transitions at {last.threads} "
                    "thread(s)")
    for c in ("#", "line", "kind", "it", "phase"):
        t.add_column(c, justify="left")
    for r in rows:
        t.add_column(f"T={r.threads}", justify="right")
        if r.measured is not None:
            t.add_column(f"meas. T={r.threads}", justify="right")
    t.add_column(f"dominant transitions (T={last.threads})", justify="left")
    for k, ph in enumerate(last.prediction.phases):
        cells = [str(ph.index), str(ph.line), ph.kind, "" if ph.iteration is None else str(ph.iteration),
                 escape(ph.label)]
        for r in rows:
            cells.append(format_seconds(r.prediction.phases[k].seconds))
            if r.measured is not None:
                cells.append(format_seconds(r.measured.phases[k].seconds))
        cells.append(escape(_dominant(ph)))
        t.add_row(*cells)
    return t


def render(rows, program, program_name: str, machine_name: str, extra_notes: tuple = ()) -> None:
    """Print the tables, the repeats' time per iteration, hints and notes to stdout."""
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 160)
    # a line of its own: as the title of the narrow totals table it would wrap
    console.print(escape(f"{program_name} on {machine_name}: coherence-aware prediction"))
    console.print(_totals_table(rows))
    console.print(_phase_table(rows))
    for r in rows:
        meas = measured_iterations(program, r.measured) if r.measured is not None else ()
        for j, rp in enumerate(r.prediction.repeats):
            text = ", ".join(format_seconds(s) for s in rp.seconds)
            line = f"T={r.threads}: repeat at line {rp.line}, predicted per iteration: {text}"
            if meas:
                line += "; measured: " + ", ".join(format_seconds(s) for s in meas[j])
            console.print(line)
    last = rows[-1].prediction
    for ph in last.phases:
        for h in ph.hints:
            console.print(escape(f"hint (phase {ph.index}, line {ph.line}): {h}"))
    for n in omp_notes(rows, extra_notes):
        console.print(escape(f"note: {n}"))
