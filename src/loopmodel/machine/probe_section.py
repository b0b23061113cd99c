"""The ``probe`` section of a probed machine file, typed: the figures the models read, with
their units, parsed once when the file is read (:func:`probe_section`).

``loopmodel machine probe`` writes the section (:func:`loopmodel.measure.provenance.probe_section`):
the host, the date, every benchmark's repetition statistics, the fits, the self-check and, after
``validate --corpus``, the validation summary. What the models read from it is typed here:

* ``tables``: per level and benchmark kernel, one :class:`BandwidthRow` per thread count
  (GB/s of the fastest, median and slowest repetition; roofline-measurement-thesis.txt §3.4);
* ``latency``: the pointer chase per size (:class:`LatencyRow`, ns and cy);
* ``in_core.points``: the measured instruction forms (:class:`InCorePoint`, cy per instruction);
* ``topology``: the CPU's model name and ISA flags;
* ``self_check``: the probe's verdicts (:class:`SelfCheckSummary`);
* ``validation``: the error distribution of a corpus run (:class:`AccuracySummary`).

The rest (fits, sweeps, training runs, notes) is provenance for a reader: kept as read in
:attr:`ProbeSection.raw`, which the machine-file writer writes back unchanged, so a probed file
read and written again is the same text.

The one rule for "is a bandwidth measurement noisy" lives here as well (:func:`repetition_gap`,
:data:`MEMORY_SPREAD_MAX`): the probe's self-check applies it to the raw repetitions
(:mod:`loopmodel.measure.probe_check`), ``analyze`` to the memory benchmark its ECM memory term
is built from (:meth:`ProbeSection.memory_gap`).

Pure data; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass, field


#: Gap between the two fastest repetitions of one memory bandwidth point above which the point
#: is uncertain, (t_2 - t_1) / t_2 (:func:`repetition_gap`). The model takes the fastest run
#: (min-of-K, roofline-measurement-thesis.txt §3.4); it is trustworthy when a second run comes
#: within this of it. Memory bandwidth varies more between runs than a cache's (page placement,
#: other tenants on the memory bus), so 10 %. The whole spread (max - min) / max is no test on a
#: shared host: one slow run of K (a timer tick, a hypervisor exit, the other vCPU's tenant)
#: makes it 10-70 % on a 2-vCPU guest while the fastest runs agree.
MEMORY_SPREAD_MAX = 0.10

#: the self-check's name of the memory bandwidth check (:func:`loopmodel.measure.probe_check.self_check`)
MEMORY_CHECK = "memory bandwidth repetitions"


def repetition_gap(fastest_s: float, second_s: float) -> float:
    """How much slower the second-fastest repetition was than the fastest: (t_2 - t_1) / t_2
    (a fraction; times in s, or any quantity proportional to time); 0 where t_2 is not positive."""
    return (second_s - fastest_s) / second_s if second_s > 0 else 0.0


def point_label(key) -> str:
    """``('L1', 'daxpy', 2)`` -> ``'L1 daxpy at 2 cores'``; a size in B -> ``'12288 B'``: how the
    self-check names a measurement point in the machine file."""
    if isinstance(key, tuple) and len(key) == 3:
        level, kernel, threads = key
        return f"{level} {kernel} at {threads} core{'s' if threads > 1 else ''}"
    if isinstance(key, int):
        return f"{key} B"
    return str(key)


@dataclass(frozen=True)
class BandwidthRow:
    """One bandwidth point of ``probe.tables`` (GB/s without write-allocate traffic; the slowest
    repetition and the data set per thread stay in :attr:`ProbeSection.raw`).

    Attributes:
        threads: threads that ran the benchmark at once.
        GB_per_s_max, GB_per_s_median: GB/s of the fastest and the median repetition.
        repetitions: repetitions measured (K).
    """
    threads: int
    GB_per_s_max: float
    GB_per_s_median: float
    repetitions: int

    @property
    def gap(self) -> float:
        """:func:`repetition_gap` of this point (a fraction) from its statistics: exact for up to
        three repetitions (the median of two is their mean; of three, the second fastest), an
        upper bound beyond (the median run is no faster than the second fastest)."""
        if self.repetitions < 2 or self.GB_per_s_max <= 0:
            return 0.0
        second = 2 * self.GB_per_s_median - self.GB_per_s_max if self.repetitions == 2 else self.GB_per_s_median
        return repetition_gap(1.0 / self.GB_per_s_max, 1.0 / second) if second > 0 else 1.0


@dataclass(frozen=True)
class LatencyRow:
    """One pointer-chase size of ``probe.latency``: the size (B) and the cy per load of the fastest
    repetition (None where the clock was not measured; the ns figures stay in
    :attr:`ProbeSection.raw`)."""
    size_B: int
    cy_min: float | None = None


@dataclass(frozen=True)
class InCorePoint:
    """One measured instruction form of ``probe.in_core.points``: ``op`` (ADD, MUL, ...),
    ``kind`` (``latency`` or ``throughput``), register width in B, and its fastest cy per
    instruction (None where not measured)."""
    op: str
    kind: str
    width_bytes: int | None
    cy_per_instruction_min: float | None


@dataclass(frozen=True)
class CheckSummary:
    """One check of ``probe.self_check`` as written (:meth:`loopmodel.measure.probe_check.Check.to_mapping`):
    its figure and threshold in %, the verdict, the attempts, and the points above the threshold
    as ``(label, spread %)`` (:func:`point_label`)."""
    name: str
    step: str
    figure_percent: float
    threshold_percent: float
    verdict: str
    attempts: int = 1
    points: tuple = ()


@dataclass(frozen=True)
class SelfCheckSummary:
    """``probe.self_check``: the verdict, the checks (:class:`CheckSummary`), one line per check
    that stayed uncertain, the re-runs' time (s) and why they stopped early ('' if not)."""
    verdict: str
    checks: tuple = ()
    uncertain: tuple = ()
    rerun_s: float = 0.0
    stopped: str = ""

    def check(self, name: str) -> CheckSummary | None:
        """The check called ``name``, or None."""
        return next((c for c in self.checks if c.name == name), None)

    def lines(self) -> list:
        """The ``self-check:`` block of the probe's text output and of ``machine show``."""
        lines = [f"self-check: {self.verdict}"]
        for c in self.checks:
            lines.append(f"  {c.name}: {c.figure_percent} % (threshold {c.threshold_percent} %), "
                         f"{c.verdict}, {c.attempts} attempt{'s' if c.attempts != 1 else ''}")
        if self.rerun_s:
            lines.append(f"  re-runs took {self.rerun_s} s")
        if self.stopped:
            lines.append(f"  re-runs stopped: {self.stopped}")
        return lines + [f"  uncertain: {u}" for u in self.uncertain]


@dataclass(frozen=True)
class ErrorStats:
    """|relative error| over ``count`` cases (fractions: 0.05 is 5 %)."""

    count: int
    median: float
    p90: float
    max: float

    def to_mapping(self) -> dict:
        """``{"count", "median_abs_error", "p90_abs_error", "max_abs_error"}`` (plain numbers)."""
        return {"count": self.count, "median_abs_error": _round(self.median), "p90_abs_error": _round(self.p90),
                "max_abs_error": _round(self.max)}


@dataclass(frozen=True)
class AccuracySummary:
    """The error distribution of a validation corpus run (``probe.validation``;
    computed by :func:`loopmodel.models.accuracy.summarize`).

    Attributes:
        overall: :class:`ErrorStats` over every case (None: no case).
        by_level: data location (``L1`` .. ``MEM``) -> :class:`ErrorStats`.
        by_regime: regime tag -> :class:`ErrorStats` over the cases carrying it.
        by_level_regime: ``(level, regime)`` -> :class:`ErrorStats`.
        provenance: where the figures come from (``date``, ``cases``, ``seed``, ``quick``...).
    """

    overall: ErrorStats | None
    by_level: dict
    by_regime: dict
    by_level_regime: dict = field(default_factory=dict)
    provenance: dict = field(default_factory=dict)

    def to_mapping(self) -> dict:
        """Plain data for a machine file's ``probe.validation`` and for JSON documents."""
        return {"overall": self.overall.to_mapping() if self.overall else None,
                "by_level": {k: v.to_mapping() for k, v in self.by_level.items()},
                "by_regime": {k: v.to_mapping() for k, v in self.by_regime.items()},
                "by_level_regime": {f"{lv}/{rg}": v.to_mapping() for (lv, rg), v in self.by_level_regime.items()},
                "provenance": dict(self.provenance)}


def _round(x: float) -> float:
    return float(f"{x:.4g}")


def _stats_from(mapping) -> ErrorStats | None:
    if not isinstance(mapping, dict):
        return None
    try:
        return ErrorStats(int(mapping["count"]), float(mapping["median_abs_error"]), float(mapping["p90_abs_error"]),
                          float(mapping["max_abs_error"]))
    except (KeyError, TypeError, ValueError):
        return None


def from_mapping(mapping) -> AccuracySummary | None:
    """The summary stored by :meth:`AccuracySummary.to_mapping` (a machine file's
    ``probe.validation``); None for anything that is not one (a stranger's file may hold
    anything: entries that do not read are left out)."""
    if not isinstance(mapping, dict):
        return None

    def table(key):
        got = mapping.get(key)
        return {k: s for k, v in got.items() if (s := _stats_from(v))} if isinstance(got, dict) else {}

    pairs = {tuple(k.split("/", 1)): v for k, v in table("by_level_regime").items() if "/" in k}
    prov = mapping.get("provenance")
    return AccuracySummary(_stats_from(mapping.get("overall")), table("by_level"), table("by_regime"), pairs,
                           dict(prov) if isinstance(prov, dict) else {})


@dataclass(frozen=True)
class ProbeSection:
    """The ``probe`` section of a machine model measured on its host.

    Attributes:
        raw: the section as read (plain YAML data), written back unchanged by the writer.
        hostname, date: the host probed and when (ISO 8601), or None.
        model_name: the CPU's model name (``topology.model_name``), '' where not recorded.
        isa_flags: the ISA flags the probe found (``topology.isa``).
        tables: level (``L1`` .. ``MEM``) -> benchmark kernel -> :class:`BandwidthRow` per thread count.
        latency: :class:`LatencyRow` per pointer-chase size.
        in_core_points: :class:`InCorePoint` per measured instruction form.
        self_check: :class:`SelfCheckSummary`, or None for a probe from before the self-check.
        validation: :class:`AccuracySummary`, or None where no corpus was validated.
    """
    raw: dict
    hostname: str | None = None
    date: str | None = None
    model_name: str = ""
    isa_flags: tuple = ()
    tables: dict = field(default_factory=dict)
    latency: tuple = ()
    in_core_points: tuple = ()
    self_check: SelfCheckSummary | None = None
    validation: AccuracySummary | None = None

    def row(self, level: str, kernel: str, threads: int) -> BandwidthRow | None:
        """The bandwidth point of ``kernel`` in ``level`` at ``threads`` threads, or None."""
        return next((r for r in self.tables.get(level, {}).get(kernel, ()) if r.threads == threads), None)

    def memory_gap(self, kernel: str, threads: int) -> float | None:
        """:func:`repetition_gap` of the memory point of ``kernel`` at ``threads`` (a fraction), or
        None where not measured. Where the self-check recorded its memory check, its verdict on
        the point stands (it saw every repetition): a point it lists has its figure, one it does
        not is within :data:`MEMORY_SPREAD_MAX`; else the figure from the point's statistics
        (:attr:`BandwidthRow.gap`)."""
        row = self.row("MEM", kernel, threads)
        if row is None:
            return None
        check = self.self_check.check(MEMORY_CHECK) if self.self_check else None
        if check is None:
            return row.gap
        listed = dict(check.points).get(point_label(("MEM", kernel, threads)))
        return listed / 100 if listed is not None else min(row.gap, MEMORY_SPREAD_MAX)


# ----------------------------------------------------------------------------- parsing


def _num(x, where: str, optional: bool = False) -> float | None:
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise ValueError(f"'{where}' must be a number")
    return float(x)


def _whole(x, where: str, optional: bool = False) -> int | None:
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, int) or x < 0:
        raise ValueError(f"'{where}' must be a whole number >= 0")
    return x


def _text(x, where: str) -> str | None:
    if x is not None and not isinstance(x, str):
        raise ValueError(f"'{where}' must be text")
    return x


def _mapping(x, where: str) -> dict:
    if x is None:
        return {}
    if not isinstance(x, dict):
        raise ValueError(f"'{where}' must be a mapping")
    return x


def _rows(x, where: str) -> list:
    if x is None:
        return []
    if not isinstance(x, list) or not all(isinstance(r, dict) for r in x):
        raise ValueError(f"'{where}' must be a list of mappings")
    return x


def _bandwidth_row(r: dict, where: str) -> BandwidthRow:
    return BandwidthRow(_whole(r.get("threads"), f"{where}.threads"), _num(r.get("GB_per_s_max"), f"{where}.GB_per_s_max"),
                        _num(r.get("GB_per_s_median"), f"{where}.GB_per_s_median"),
                        _whole(r.get("repetitions"), f"{where}.repetitions"))


def _tables(v) -> dict:
    out = {}
    for level, per in _mapping(v, "tables").items():
        out[str(level)] = {str(k): tuple(_bandwidth_row(r, f"tables.{level}.{k}[{i}]")
                                         for i, r in enumerate(_rows(rows, f"tables.{level}.{k}")))
                           for k, rows in _mapping(per, f"tables.{level}").items()}
    return out


def _latency(v) -> tuple:
    return tuple(LatencyRow(_whole(r.get("size_B"), f"latency[{i}].size_B"),
                            _num(r.get("cy_min"), f"latency[{i}].cy_min", optional=True))
                 for i, r in enumerate(_rows(v, "latency")))


def _in_core_points(v) -> tuple:
    out = []
    for i, p in enumerate(_rows(_mapping(v, "in_core").get("points"), "in_core.points")):
        where = f"in_core.points[{i}]"
        op, kind = _text(p.get("op"), f"{where}.op"), _text(p.get("kind"), f"{where}.kind")
        if op is None or kind is None:
            raise ValueError(f"'{where}' needs 'op' and 'kind'")
        out.append(InCorePoint(op, kind, _whole(p.get("width_bytes"), f"{where}.width_bytes", optional=True),
                               _num(p.get("cy_per_instruction_min"), f"{where}.cy_per_instruction_min", optional=True)))
    return tuple(out)


def _check(c: dict, where: str) -> CheckSummary:
    points = tuple((str(p.get("point")), _num(p.get("spread_percent"), f"{where}.points[{j}].spread_percent"))
                   for j, p in enumerate(_rows(c.get("points"), f"{where}.points")))
    return CheckSummary(str(c.get("name")), str(c.get("step")), _num(c.get("figure_percent"), f"{where}.figure_percent"),
                        _num(c.get("threshold_percent"), f"{where}.threshold_percent"), str(c.get("verdict")),
                        _whole(c.get("attempts", 1), f"{where}.attempts"), points)


def self_check_summary(v) -> SelfCheckSummary | None:
    """``probe.self_check`` as written (:meth:`loopmodel.measure.probe_check.SelfCheck.to_mapping`)
    typed; None for None.

    Raises:
        ValueError: the key that is wrong and what is wrong (one line).
    """
    if v is None:
        return None
    v = _mapping(v, "self_check")
    uncertain = v.get("uncertain") or []
    if not isinstance(uncertain, list) or not all(isinstance(u, str) for u in uncertain):
        raise ValueError("'self_check.uncertain' must be a list of text")
    checks = tuple(_check(c, f"self_check.checks[{i}]") for i, c in enumerate(_rows(v.get("checks"), "self_check.checks")))
    return SelfCheckSummary(str(v.get("verdict", "?")), checks, tuple(uncertain),
                            _num(v.get("rerun_s", 0.0), "self_check.rerun_s"),
                            _text(v.get("stopped"), "self_check.stopped") or "")


def probe_section(v) -> ProbeSection | None:
    """``probe``: what ``loopmodel machine probe`` measured, typed (:class:`ProbeSection`). A file
    writes ``{hostname, date, topology: {model_name, isa: [...]}, tables: {level: {kernel:
    [{threads, GB_per_s_max, GB_per_s_median, GB_per_s_min, spread, repetitions}]}}, latency:
    [{size_B, ns_min, ns_median, ns_max, cy_min}], in_core: {points: [{op, kind, width_bytes,
    cy_per_instruction_min}]}, self_check: {...}, validation: {...}, fits: {...}, ...}`` (units in
    the key names); the keys not named here are provenance, kept as written. None for an absent
    or empty section.

    Raises:
        ValueError: the key of the section that is wrong and what is wrong (one line), e.g.
            ``'tables.MEM.copy[0].GB_per_s_max' must be a number``.
    """
    if v is None or isinstance(v, ProbeSection):
        return v
    v = _mapping(v, "probe")
    if not v:
        return None
    topo = _mapping(v.get("topology"), "topology")
    isa = topo.get("isa") or []
    if not isinstance(isa, list):
        raise ValueError("'topology.isa' must be a list")
    date = v.get("date")
    date = date.isoformat() if hasattr(date, "isoformat") else date  # YAML reads an unquoted timestamp as a datetime
    return ProbeSection(v, _text(v.get("hostname"), "hostname"), _text(date, "date"),
                        _text(topo.get("model_name"), "topology.model_name") or "", tuple(str(f) for f in isa),
                        _tables(v.get("tables")), _latency(v.get("latency")), _in_core_points(v.get("in_core")),
                        self_check_summary(v.get("self_check")), from_mapping(v.get("validation")))
