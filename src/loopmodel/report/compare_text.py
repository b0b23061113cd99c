"""``compare``'s text report: one table, a row per machine model, and the footnotes of the
cells a model could not fill (rich's markup and tables; written without rich where the output
is no terminal, :mod:`loopmodel.report.plain`). The figures are those of the JSON objects
(:func:`loopmodel.report.compare_json.row_dict`); units: cy/CL and cy/it, it/s, FLOP/s (LUP/s
for a kernel without floating-point operations), nJ per iteration.
"""
from __future__ import annotations

from ..units import format_fixed, format_si
from .compare_json import row_dict
from .plain import Table, escape

#: the mark of a cell without a figure (its footnote says why)
MISSING = "—"


def level_order(rows: list) -> list:
    """The levels of every machine model, core side first, memory last (the models differ in depth)."""
    out: list = []
    for r in rows:
        prev = None
        for lvl in r["ecm_per_location"]:
            if lvl not in out:
                out.insert(out.index(prev) + 1 if prev is not None else 0, lvl)
            prev = lvl
    return out


class _Footnotes:
    """Footnote numbers by reason; a reason shared by several machine models is one footnote
    listing them (the model's name left out of its text)."""

    def __init__(self):
        self.reasons: dict = {}

    def mark(self, row: dict, column: str) -> str:
        """``'— [n]'`` for ``column`` of ``row`` (the row's footnote for that column, else the row's own)."""
        notes = [f for f in row["footnotes"] if f["column"] in (column, "analysis")]
        if not notes:
            return MISSING
        text = f"{notes[0]['column']}: {notes[0]['text']}".replace(f"machine model '{row['machine']}'",
                                                                    "the machine model")
        self.reasons.setdefault(text, [])
        if row["machine"] not in self.reasons[text]:
            self.reasons[text].append(row["machine"])
        return f"{MISSING}\\[{list(self.reasons).index(text) + 1}]"

    def lines(self) -> list:
        """``'[n] reason (machines)'`` per footnote, in the order of their marks."""
        return [f"\\[{i}] {escape(text)} ({', '.join(machines)})"
                for i, (text, machines) in enumerate(self.reasons.items(), 1)]


def _figure(value, digits: int = 2) -> str | None:
    return None if value is None else format_fixed(value, digits)


def _cells(row: dict, levels: list, rate_key: str, notes: _Footnotes) -> list:
    """The cells of one row (:func:`render`'s columns)."""
    def cell(text, column):
        return text if text is not None else notes.mark(row, column)

    ecm = row["ecm_per_location"]
    out = [escape(row["machine"])]
    for lvl in levels:
        fig = ecm.get(lvl)
        if fig is None and row["data_in"] is not None:
            out.append("")  # no such level in this machine model
        else:
            out.append(cell(_figure(fig and fig["cy_per_cl"]), "ECM"))
    sat, where = row["saturation_cores"], row["data_in"]
    here = None if where is None or row["T_ECM_cy_per_it"] is None else \
        f"{where} {format_fixed(row['T_ECM_cy_per_it'], 3)}"
    out += [cell(here, "ECM"),
            cell(None if row["T_ECM_cy_per_cl"] is None else (str(sat) if sat is not None else "none"), "ECM"),
            cell(row["roofline_bottleneck"], "Roofline")]
    one, socket, energy = row["core"][rate_key], row["socket"], row["energy"]
    out.append(cell(None if one is None else format_si(one, ""), "ECM"))
    moved = "" if socket is None or socket["data_in"] == where else f" ({socket['data_in']})"
    out.append(cell(None if socket is None else format_si(socket[rate_key], "") + moved, "socket"))
    out.append(cell(None if energy is None else f"{energy['energy_J_per_it'] * 1e9:.3f}", "energy"))
    return out


def render(doc: dict, console) -> None:
    """Print the comparison (``doc``: :func:`loopmodel.report.compare_json.to_dict`): a title
    line, the table (machine; ECM per data location, 1 core, cy/CL; the data location at the
    sizes and T_ECM there in cy/it; n_s; the Roofline bottleneck; performance of one core and
    of one socket; energy per iteration at the energy optimum) and its footnotes."""
    rows = doc["machines"]
    rate, rate_key = ("FLOP/s", "flop_s") if doc["flops_per_it"] else ("LUP/s", "lup_s")
    sizes = ", ".join(f"{n}={v}" for n, v in sorted(doc["defines"].items()))
    console.print(escape(f"{doc['kernel']}, sizes {sizes}: {len(rows)} machine model(s); socket figures by the "
                         f"{doc['multicore_model']} model"))
    levels = level_order(rows)
    t = Table(title="ECM per data location \\[cy/CL] (1 core); at the sizes: data location and T_ECM there, "
                    "saturation point, Roofline bottleneck, performance, energy", title_justify="left")
    t.add_column("machine")
    for lvl in levels:
        t.add_column(lvl, justify="right")
    for title in ("at sizes\n\\[cy/it]", "n_s", "bound", f"core\n\\[{rate}]", f"socket\n\\[{rate}]",
                  "E_opt\n\\[nJ/it]"):
        t.add_column(title, justify="left" if title in ("at sizes\n\\[cy/it]", "bound") else "right")
    notes = _Footnotes()
    for row in rows:
        t.add_row(*_cells(row, levels, rate_key, notes))
    console.print(t)
    console.print("at sizes: the data location and T_ECM there (1 core); n_s: cores per ccNUMA domain that saturate "
                  "the memory interface (none: no memory traffic); bound: the Roofline bottleneck (CPU or a level); "
                  "core: T_ECM at the sizes; socket: all cores of one socket (in brackets the level their shares of "
                  "the data fit in, where it is not the single core's); E_opt: energy per iteration at the "
                  "energy-optimal cores and clock ('loopmodel energy')")
    for line in notes.lines():
        console.print(line)
