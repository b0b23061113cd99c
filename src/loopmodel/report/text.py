"""Terminal rendering of analysis results (rich's markup and tables; written without rich where
the output is no terminal, :mod:`loopmodel.report.plain`); the notation follows the papers."""
from __future__ import annotations

import math

from ..predictors.layer_conditions import largest_size
from ..units import format_bytes, format_fixed, format_si
from .output_units import convert
from .plain import Table, escape

_DIM = {1: "1D", 2: "2D", 3: "3D"}


def _fmt_unit(value: float | None, unit: str) -> str:
    """A converted time or rate with its unit; ``n/a`` for an unknown one."""
    if value is None:
        return "n/a"
    if unit in ("cy/CL", "cy/it"):
        return f"{format_fixed(value, 2)} {unit}"
    return format_si(value, unit)


def _lc_summary(res) -> list:
    """Lines in the style of kerncraft-tool-paper.txt Listing 5."""
    lines = []
    var = res.lc_variable
    by_dim: dict = {}
    for lv in res.lc_levels:
        for st in lv.states:
            if st.dimension >= 2:
                cur = by_dim.setdefault(st.dimension, {}).get(lv.level)
                if cur is None or st.distance.asymptotic_key() >= cur.distance.asymptotic_key():
                    by_dim[st.dimension][lv.level] = st
    for dim in sorted(by_dim):
        lines.append(f"{_DIM.get(dim, f'{dim}D')} Layer-Condition:")
        for level, st in by_dim[dim].items():
            lines.append(f"  {level}: {_condition(st, var, 'cache')}")
    whole = [(lv.level, lv.data_set) for lv in res.lc_levels if lv.data_set is not None]
    if whole:
        lines.append("Whole data set (repeated sweeps):")
        for level, st in whole:
            lines.append(f"  {level}: {_condition(st, var, 'capacity')}")
    return lines


def _condition(st, var, limit: str) -> str:
    """One layer or whole-data-set condition as text: the largest size of ``var`` keeping it
    (:func:`~loopmodel.predictors.layer_conditions.largest_size`, also the largest block size of a
    layer condition) and the exact real limit. ``limit`` names the right-hand side when no size
    variable is solved for; ``st.limit_note`` says why there is no limit (a condition not monotone
    in ``var``) or from which size on the loop runs."""
    ms = st.max_size
    why = f" ({st.limit_note})" if st.limit_note else ""
    if ms is None and st.limit_note.startswith("not monotone"):
        return f"no limit{why}"
    if ms is None:
        return f"never fulfilled{why}" if var else f"{st.requirement} B <= {limit}"
    if ms == math.inf:
        return "unconditionally fulfilled"
    return f"{var} <= {largest_size(ms)}   (exact {ms:.2f})"


def render(res, console, unit: str = "cy/CL", verbose: int = 0):
    """Print one analysis: header, LC, data traffic, ECM, Roofline sections and the notes."""
    _header(res, console, verbose)
    if "LC" in res.options.models:
        _lc_section(res, console, verbose)
    _traffic_section(res, console, verbose)
    if res.ecm:
        _ecm_section(res, console, unit, verbose)
        _confidence(res, console)
    for title, r in (("Roofline", res.roofline), ("RooflineASM", res.roofline_asm)):
        if r:
            _roofline(res, r, title, console, unit)
    if not res.ecm:
        _confidence(res, console)
    for n in res.notes:
        console.print(f"[dim]{escape('note: ' + n)}[/dim]")


def _header(res, console, verbose: int):
    """The command line and the unit of work; with ``verbose`` the kernel's loops, arrays,
    operations, dependencies and pragmas (kernel text escaped: ``a[n]`` is not rich markup)."""
    k, m, opt = res.kernel, res.machine, res.options
    d = " ".join(f"-D {n}={v}" for n, v in sorted(res.defines.items()))
    console.print(f"[bold]loopmodel[/bold] {escape(k.source)}  -m {escape(m.name)}  {d}  --cores {opt.cores}  "
                  f"--sweeps {opt.sweeps}")
    work = k.unit_of_work(m.cacheline_size, res.defines)
    console.print(escape(f"unit of work (CL of work): {work.describe()}"))
    if verbose:
        console.print("  loops: " + "; ".join(f"{lp.index} = {lp.start} .. {lp.stop} (exclusive) step {lp.step}"
                                              for lp in k.loops))
        for name, a in k.arrays.items():
            console.print(escape(f"  array {name}: {a.ctype}[{']['.join(str(x) for x in a.dims)}] "
                                 f"({a.element_size} B/element)"))
        console.print(f"  per iteration: {k.loads_per_iteration()} loads, {k.stores_per_iteration()} stores, "
                      f"operations {dict(k.operations)}, {k.fma_candidates} FMA candidates, {k.flops_per_iteration} FLOP")
        for r in k.recurrences:
            console.print(escape(f"  loop-carried dependency on '{r.variable}' (distance {r.distance} it, longest "
                                 f"chain {' -> '.join(r.graph.longest_chain()[1])}"
                                 f"{', reduction' if r.reassociable else ''})"))
        if k.pragmas:
            console.print(escape("  pragmas: " + "; ".join(k.pragmas)))


def _lc_section(res, console, verbose: int):
    console.print("\n[bold]----- LC -----[/bold]")
    for line in _lc_summary(res):  # plain text (a condition's note names sizes, e.g. a[N] of a kernel)
        console.print(escape(line))
    t = Table(title="Layer conditions (selected state per level)", title_justify="left")
    for col in ("level", "effective size", "reuse distance \\[it]", "condition", "hits/it", "misses/it", "evicts/it"):
        t.add_column(col, justify="right" if col not in ("level", "condition") else "left")
    for lv in res.lc_levels:
        st = lv.effective_state
        if lv.holds_data_set:  # repeated sweeps: the whole data set stays in this level
            cond = f"whole data set {st.requirement_bytes:.0f} B <= {lv.capacity:.0f} B" if st.condition \
                else "whole data set held by a level above"
            t.add_row(lv.level, format_bytes(lv.cache_size), "one sweep", cond, str(st.hits), "0", f"{st.evicts:.4g}")
            continue
        cond = "no reuse" if st.distance.is_zero() else f"{st.requirement} B <= {lv.cache_size:.0f} B"
        t.add_row(lv.level, format_bytes(lv.cache_size), str(st.distance), cond, str(st.hits), str(st.misses),
                  f"{st.evicts:.4g}")
    console.print(t)
    if verbose:
        for lv in res.lc_levels:
            for st in lv.states:
                mark = "*" if st is lv.states[lv.selected] else " "
                console.print(f"   {mark} {lv.level}: t = {st.distance}: C_req = {st.requirement} B "
                              f"= {st.requirement_bytes:.0f} B {'<=' if st.condition else '>'} {lv.cache_size:.0f} B, "
                              f"hits {st.hits}, misses {st.misses}")
            ds = lv.data_set
            if ds is not None:
                mark = "*" if lv.holds_data_set else " "
                console.print(f"   {mark} {lv.level}: whole data set D = {ds.requirement} B "
                              f"= {ds.requirement_bytes:.0f} B {'<=' if ds.condition else '>'} "
                              f"{lv.capacity:.0f} B (repeated sweeps)")


def _traffic_section(res, console, verbose: int):
    m = res.machine
    t = Table(title=f"Data traffic per CL of work ({res.traffic.iterations_per_unit:g} it), predictor {res.traffic.predictor}",
              title_justify="left")
    sim = res.traffic.predictor == "SIM"
    cols = ("link", "loads [CL]", "stores [CL]", "volume [B]") + (("hits", "misses", "evicts [CL]") if sim else ())
    for col in cols:
        t.add_column(col, justify="right" if col != "link" else "left")
    levels = [lv.level for lv in m.memory_hierarchy]
    for i, lt in enumerate(res.traffic.levels):
        row = [f"{lt.level}-{levels[i + 1]}", f"{lt.loads_cl:.4g}", f"{lt.stores_cl:.4g}", f"{lt.bytes:.4g}"]
        if sim:
            row += [f"{lt.hits:.4g}", f"{lt.misses:.4g}", f"{lt.evicts_cl:.4g}"]
        t.add_row(*row)
    console.print(t)
    if sim and res.simulation is not None and verbose:
        si = res.simulation
        console.print(f"cache simulation: {si.warmup_iterations} iterations warm-up, {si.measured_iterations} "
                      f"measured ({si.simulated_iterations} simulated, {si.sweeps} sweep(s)); hits/misses are "
                      "lookups per CL of work")
        console.print("  levels: " + ", ".join(f"{lv.name} {lv.sets}x{lv.ways} {lv.policy} {lv.kind}"
                                                for lv in si.levels))
        console.print("  arrays: " + ", ".join(f"{n} @ {a:#x} ({sz} B)" for n, (a, sz) in si.layout.items()))


def _ecm_section(res, console, unit: str, verbose: int):
    k, m, opt = res.kernel, res.machine, res.options
    e = res.ecm
    console.print("\n[bold]----- ECM -----[/bold]")
    ic = res.incore
    if verbose:
        comps = ", ".join(f"{n} = {format_fixed(v, 2)}" for n, v in ic.components.items())
        console.print(escape(f"in-core ({ic.source}, {ic.lanes} SIMD lanes): {comps} cy/CL"))
        if getattr(ic, "measurement", None) is not None:
            _measured_line(ic.measurement, console)
        if res.compiled is not None:
            _port_table(res, console)
        for c in e.contributions:
            bw = "+".join(f"{b:.1f}" for b in c.bandwidth)
            console.print(escape(f"  T_{c.name} = {format_fixed(c.cycles, 2)} cy/CL  ({c.bytes_in:g} B in, "
                                 f"{c.bytes_out:g} B out at {bw} B/cy from {c.source}; penalty "
                                 f"{format_fixed(c.penalty, 2)} cy)"))
        _by_location(res, console, unit)
    console.print(e.notation())
    console.print(e.prediction_notation())
    if e.unknown:
        console.print(escape(f"T_OL n/a: {e.unknown}; T_ECM n/a"))
        console.print("data transfers (eq. 4 without T_OL, lower bounds of T_ECM): { "
                      + " \\ ".join(format_fixed(v, 1) for v in e.T_transfer.values()) + " } cy/CL")
        console.print("saturation point n/a (needs T_ECM)")
    it = res.traffic.iterations_per_unit
    flops = k.flops_per_iteration
    rows = [(lvl, v) for lvl, v in e.T_ECM.items()]
    who = "1 core" if opt.cores == 1 else f"per core of {opt.cores}"
    t = Table(title=f"ECM prediction, {who} (data in level); unit {unit}", title_justify="left")
    for lvl, v in rows:
        t.add_column(lvl, justify="right")
    t.add_row(*(_fmt_unit(convert(v, unit, it, m.clock, flops), unit) for _, v in rows))
    console.print(t)
    _multicore_lines(res, console, unit)


def _multicore_lines(res, console, unit) -> None:
    """The saturation point and the n-core figure, both read from the point's
    :class:`~loopmodel.models.prediction.Prediction` (the figures ``scaling`` row n prints)."""
    p, m, it = res.prediction, res.machine, res.traffic.iterations_per_unit
    if p is None or p.single_core_cy_per_cl is None:
        return
    one = _fmt_unit(convert(p.single_core_cy_per_cl, unit, it, m.clock, res.kernel.flops_per_iteration), unit)
    console.print(f"prediction: data in {p.location}, T_ECM({p.location}) = {one}"
                  + ("" if p.cores == 1 else f" per core of {p.cores}"))
    sat = p.saturation
    if sat.cores is not None:  # one definition with `scaling` (models.saturation)
        psat = format_si(sat.it_per_s(it, m.clock), "it/s")
        where = (f"saturating at {sat.cores} cores per ccNUMA domain" if p.saturates_in_domain else
                 f"no saturation within a ccNUMA domain (n_s = {sat.cores} > its {p.cores_per_domain} cores)")
        console.print(f"{where} (T_Mem = {format_fixed(sat.memory_busy_cy_per_cl, 2)} cy/CL, P_sat = {psat} "
                      "per domain)")
    else:  # repeated sweeps over a data set that stays in a cache
        console.print(f"no memory traffic (data in {p.location}): nothing to saturate")
    if p.cores > 1:
        flops = res.kernel.flops_per_iteration
        rule = ("contention model, cross-architecture paper eq. 5" if p.multicore_model == "contention" else
                "P(n) = min(n P1, P_sat) per ccNUMA domain")
        console.print(f"{p.cores} cores, data in {p.location}: "
                      f"{_fmt_unit(convert(p.cy_per_cl, unit, it, m.clock, flops), unit)} (aggregate throughput, "
                      f"{rule}; row {p.cores} of 'scaling --model {p.multicore_model}'; "
                      f"--multicore-model for the other model)")


def _percent(x: float) -> str:
    return f"{x * 100:.0f} %" if x >= 0.1 else f"{x * 100:.1f} %"


def accuracy_line(c, levels) -> str | None:
    """``model accuracy on this host: median 4 %, p90 11 % for this regime (L2 / stencil, n=37)``
    from a :class:`~loopmodel.workflows.confidence.Confidence` with a band (``levels``: the machine's
    level names), else None."""
    b = c.band
    if b is None:
        return None
    if c.basis == "overall":
        what = f"over all validation cases (n={b.count})"
    elif c.basis in levels:
        what = f"for data in {c.basis} (n={b.count})"
    else:
        what = f"for this regime ({c.basis}, n={b.count})"
    return f"model accuracy on this host: median {_percent(b.median)}, p90 {_percent(b.p90)} {what}"


def _confidence(res, console) -> None:
    """The accuracy line (where the machine model has validation figures), the regime tags and
    the notes on poorly modelled regimes (:mod:`loopmodel.workflows.confidence`)."""
    c = res.confidence
    if c is None:
        return
    line = accuracy_line(c, [lv.level for lv in res.machine.memory_hierarchy])
    if line:
        console.print(escape(line))
    console.print(escape(f"regimes (data in {c.level}): {', '.join(c.tags) or 'none'}"))
    for n in c.notes:
        console.print(escape(n))


class SweepPrinter:
    """Streams a sweep (a ``-D`` range) as a plain aligned table, one row per size point.

    The title and header are written once, when the first point arrives; each later point
    is written (and flushed) as soon as it is computed, so the memory held does not grow
    with the sweep and the first rows appear at once. Column widths come from the header,
    the first row and the widest sizes of the sweep. The ECM notation, whose width changes
    along a sweep, is the last column and open on the right, so a wider one later does not
    break the table's borders.

    Args:
        write: ``str -> None`` (e.g. ``sys.stdout.write``); flush: ``() -> None``.
        unit: one of :data:`loopmodel.report.output_units.UNITS`.
        widest: constant -> the widest value the sweep gives it (aligns the size columns).
    """

    def __init__(self, write, flush, unit: str = "cy/CL", widest: dict | None = None):
        self.write, self.flush, self.unit = write, flush, unit
        self.widest = widest or {}
        self.names = self.widths = self.right = None
        self.open_right = False  # the last column (the ECM notation) has no right border
        self.unknown = {}  # why cells are n/a (one entry per reason, not per point)

    def add(self, r) -> None:
        """Write the row of one :class:`~loopmodel.workflows.analysis.AnalysisResult` (header first)."""
        cells = self._cells(r)
        for m in (r.ecm, r.roofline):
            if m is not None and m.unknown:
                self.unknown.setdefault(m.unknown, None)
        if self.widths is None:
            self._header(r, cells)
        self._line("│", "│", "│", [c.rjust(w) if right else c.ljust(w)
                                    for c, w, right in zip(cells, self.widths, self.right)])
        self.flush()

    def close(self) -> None:
        """Write the bottom border and why cells are n/a (nothing if no row was written)."""
        if self.widths is not None:
            self._rule("└", "┴", "┘", "─")
            for reason in self.unknown:
                self.write(f"note: n/a: {reason}\n")
            self.flush()

    def _columns(self, r) -> list:
        cols = [(n, True) for n in self.names]
        if r.ecm:
            cols += [(f"ECM {lvl}", True) for lvl in r.ecm.T_ECM] + [("data in", False)]
        if r.roofline:
            cols += [("Roofline", True), ("bottleneck", False)]
        return cols + [("LC state (L1..)", False)] + ([("ECM notation", False)] if r.ecm else [])

    def _cells(self, r) -> list:
        if self.names is None:
            self.names = sorted(r.defines)
        it, clock, fl, unit = r.traffic.iterations_per_unit, r.machine.clock, r.kernel.flops_per_iteration, self.unit
        row = [str(r.defines[n]) for n in self.names]
        if r.ecm:
            row += [_fmt_unit(convert(v, unit, it, clock, fl), unit) for v in r.ecm.T_ECM.values()]
            row.append(r.location)
        if r.roofline:
            row += [_fmt_unit(convert(r.roofline.time, unit, it, clock, fl), unit), r.roofline.bottleneck or "n/a"]
        row.append(" ".join("all" if lv.holds_data_set else f"{_DIM.get(lv.states[lv.selected].dimension, '-')}"
                            for lv in r.lc_levels))
        if r.ecm:
            row.append(r.ecm.notation().replace(" cy/CL", ""))
        return row

    def _header(self, r, cells) -> None:
        cols = self._columns(r)
        self.right = [right for _, right in cols]
        self.open_right = cols[-1][0] == "ECM notation"
        # a figure column has room for one more digit than its first row (9.50 -> 10.50)
        self.widths = [max(len(title), len(cell) + (right and title not in self.names),
                           len(str(self.widest.get(title, ""))))
                       for (title, right), cell in zip(cols, cells)]
        self.write(f"{r.kernel.source} on {r.machine.name}, {r.options.cores} core(s), "
                   f"{r.options.sweeps} sweeps; unit {self.unit}\n")
        self._rule("┏", "┳", "┓", "━")
        self._line("┃", "┃", "┃", [t.rjust(w) if right else t.ljust(w)
                                    for (t, right), w in zip(cols, self.widths)])
        self._rule("┡", "╇", "┩", "━")

    def _rule(self, left, mid, right, fill) -> None:
        end = fill if self.open_right else right
        self.write(left + mid.join(fill * (w + 2) for w in self.widths) + end + "\n")

    def _line(self, left, mid, right, cells) -> None:
        line = left + " " + f" {mid} ".join(cells)
        self.write((line.rstrip() if self.open_right else line + " " + right) + "\n")


def _port_table(res, console) -> None:
    """Port pressure of the compiled loop block (cy per pass and cy/CL) and the block itself."""
    ci = res.compiled
    table = ci.port_table
    per_cl = table.cy_per_cl_per_pass
    t = Table(title=f"Port pressure ({ci.analyzer} {ci.analyzer_version}, block {ci.block_label}, "
                    f"{ci.iterations_per_pass:g} it per pass)", title_justify="left")
    for col in ("port", "reported cy/pass", "balanced cy/pass", "loads cy/pass", "cy/CL", "role"):
        t.add_column(col, justify="left" if col in ("port", "role") else "right")
    for row in table.rows:
        t.add_row(row.port, f"{row.reported:.2f}", f"{row.balanced:.2f}", f"{row.loads:.2f}",
                  f"{row.counted_cy_per_cl:.2f}", row.role)
    t.add_row("block throughput", f"{ci.block_throughput:.2f}", "", "", f"{ci.block_throughput * per_cl:.2f}", "")
    t.add_row("simulated", f"{ci.cycles_per_pass:.2f}", "", "", f"{ci.cycles_per_pass * per_cl:.2f}", "")
    console.print(t)
    origin = res.incore.origin or {}
    for name, value in (("T_OL", res.incore.T_OL), ("T_nOL", res.incore.T_nOL)):
        if name in origin and value is not None:
            console.print(f"{name} = {value:.2f} cy/CL from {origin[name]}", markup=False, highlight=False)
    console.print(f"compiled with {ci.compiler} {' '.join(ci.flags)}; loop block:")
    for ln in ci.block.rstrip("\n").split("\n"):
        console.print("    " + ln, markup=False, highlight=False)


def _measured_line(m, console) -> None:
    """The benchmark of a measured in-core time: min / median / max cy/CL, spread, sizes."""
    lo, med, hi = m.cy_per_cl
    sizes = ", ".join(f"{k}={v}" for k, v in sorted(m.defines.items()))
    console.print(f"  measured with the data in L1: min {lo:.2f} / median {med:.2f} / max {hi:.2f} cy/CL (spread "
                  f"{m.spread:.0%}, {m.runs} runs, {m.clock_hz / 1e9:.2f} GHz) at {sizes} ({m.data_set_B / 1024:.3g} "
                  f"KiB of {m.l1_B / 1024:.3g} KiB L1)", markup=False, highlight=False)


def _roofline(res, r, title, console, unit) -> None:
    """One Roofline table (the in-core CPU roof or RooflineASM); performances in the result's
    ``work_unit`` per second (FLOP/s, or it/s for a kernel without FLOPs)."""
    k, m = res.kernel, res.machine
    rate = f"{r.work_unit}/s"
    console.print(f"\n[bold]----- {title} -----[/bold]")
    t = Table(title=f"Bottlenecks ({r.cores} core{'s' if r.cores > 1 else ''})", title_justify="left")
    for col in ("level", "a. intensity", "performance", "bandwidth", "bw kernel"):
        t.add_column(col, justify="right" if col != "level" else "left")
    t.add_row("CPU", "", format_si(r.cpu_performance, rate) if r.cpu_performance else "n/a", "",
              r.cpu_source)
    for lv in r.levels:
        ai = f"{lv.intensity:.3g} FLOP/B" if lv.intensity is not None else "-"
        t.add_row(lv.level, ai, "no traffic" if lv.bytes == 0 else format_si(lv.performance, rate),
                  format_si(lv.bandwidth, "B/s"), lv.kernel)
    console.print(t)
    if r.work_unit != "FLOP":
        console.print("no floating-point operations: no FLOP roof; the CPU roof is the in-core time, "
                      "performance in iterations per second")
    if r.unknown:
        bw = r.bandwidth_bound()
        console.print(escape(f"performance n/a: {r.unknown}; the bandwidth roofs alone allow at most "
                             f"{format_si(bw.performance, rate)} ({bw.level})"))
        return
    kind = "CPU bound" if r.bottleneck == "CPU" else "Cache or mem bound"
    console.print(f"{kind} with {r.cores} core(s)")
    time = convert(r.time, unit, res.traffic.iterations_per_unit, m.clock, k.flops_per_iteration)
    console.print(f"{format_si(r.performance, rate)} due to {r.bottleneck} bottleneck ({_fmt_unit(time, unit)})")


def _by_location(res, console, unit) -> None:
    """Contributions for every data location (cross-architecture paper Table 3 layout)."""
    e, m, k = res.ecm, res.machine, res.kernel
    it = res.traffic.iterations_per_unit
    u = unit if unit in ("cy/CL", "cy/it") else "cy/CL"

    def fmt(v, missing="-"):
        return missing if v is None else f"{convert(v, u, it, m.clock, k.flops_per_iteration):.4g}"

    t = Table(title=f"Contributions per data location ({u}; transfer time, penalty apart)", title_justify="left")
    t.add_column("contribution")
    for lvl in e.by_location:
        t.add_column(f"data in {lvl}", justify="right")
    t.add_row("T_OL (T_comp)", *[fmt(e.T_OL, "n/a")] * len(e.by_location))
    t.add_row("T_nOL (T_LD/ST)", *[fmt(e.T_nOL)] * len(e.by_location))
    names = []
    for parts in e.by_location.values():
        names += [c.name for c in parts if c.name not in names]
    for n in names:
        cells, pens = [], []
        for parts in e.by_location.values():
            c = next((c for c in parts if c.name == n), None)
            cells.append(fmt(c.busy) if c else "-")
            pens.append(c.penalty if c else 0.0)
        t.add_row(f"T_{n}", *cells)
        if any(pens):
            t.add_row(f"  penalty {n}", *[fmt(p) for p in pens])
    if e.unknown:
        t.add_row("data transfers", *[fmt(v) for v in e.T_transfer.values()])
    t.add_row("T_ECM", *[fmt(v, "n/a") for v in e.T_ECM.values()])
    console.print(t)
