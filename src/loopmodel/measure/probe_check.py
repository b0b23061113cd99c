"""The probe's self-check: which of its measurements can be trusted, by named thresholds.

Each check reads one figure from the raw measurements (:class:`~loopmodel.measure.probe.ProbeData`)
or from the link fit, compares it with its threshold and gives a verdict, ``ok`` or
``uncertain``:

* the clock's spread, (max - min) / median of its runs (:attr:`~loopmodel.measure.clock.ClockMeasurement.spread`);
* the link fit's residual: the RMS relative error of the best bandwidth/overlap hypothesis
  against the measured single-core transfers (:func:`loopmodel.models.link_fit.fit_links`);
* benchmark repetitions that disagree: per bandwidth point (cache levels and memory
  separately) the gap between its two fastest repetitions (the model takes the fastest: it is
  trustworthy when a second run reproduces it), per latency point and in-core instruction
  form the spread of its repetitions.

The figures follow roofline-measurement-thesis.txt §3.4 (report the spread of the
repetitions, not one figure). The re-run policy (which step to measure again, how often) is
:func:`loopmodel.workflows.hostmodel.build_checked_host_model`; what stays uncertain goes into
the model's ``probe.self_check`` (:meth:`SelfCheck.to_mapping`).
"""
from __future__ import annotations

from dataclasses import dataclass

from ..machine.probe_section import MEMORY_SPREAD_MAX, point_label, repetition_gap, self_check_summary


#: Clock runs may disagree by this much ((max - min) / median over all runs of the probe).
#: A quiet 2-vCPU KVM guest shows 4-8 % over the 20 runs spread across a quick probe (the
#: clock of a shared virtual host moves by a few % within seconds); 10 % leaves room for that,
#: while a clock disturbed by load or frequency changes (31-47 % seen) fails. Every cy figure
#: is a time multiplied by this clock, so it is uncertain by the same fraction.
CLOCK_SPREAD_MAX = 0.10
#: RMS relative residual of the chosen link hypothesis. On a quiet host the best hypothesis
#: leaves 15-19 % over the five benchmark kernels at three levels plus the training kernel
#: (what the ECM model with one bandwidth per link cannot express); above 25 % no hypothesis
#: explains the measured transfers and the link bandwidths, overlap and penalty are guesses.
LINK_RESIDUAL_MAX = 0.25
#: Gap between the two fastest repetitions of one cache-level bandwidth point, (t_2 - t_1) / t_2.
#: The model takes the fastest run (min-of-K, roofline-measurement-thesis.txt §3.4); it is
#: trustworthy when a second run comes within 5 % of it. The whole spread (max - min) / max is
#: no test of that on a shared host: one slow run of K (a timer tick, a hypervisor exit, the
#: other vCPU's tenant) makes it 10-70 % on a 2-vCPU guest while the fastest runs agree. After
#: a re-run the figure is that of the K fastest repetitions of all attempts
#: (:func:`loopmodel.measure.probe.fastest_of`).
CACHE_SPREAD_MAX = 0.05
#: The same for memory points: :data:`loopmodel.machine.probe_section.MEMORY_SPREAD_MAX` (10 %),
#: the rule ``analyze`` applies to the memory benchmark its ECM memory term uses.
#: Spread (max - min) / max of one pointer-chase size: latencies are stable to a few % on a
#: quiet host (one cache miss chain, no bandwidth sharing), so 10 %.
LATENCY_SPREAD_MAX = 0.10
#: Spread (max - min) / min of one instruction form's cycles: most forms agree within 2 %,
#: a few short ones reach 15 % on a quiet host; above 35 % the figure is one of two states.
INCORE_SPREAD_MAX = 0.35
#: Re-runs per step after the first attempt.
EXTRA_ATTEMPTS = 2
#: The re-runs together may take at most this fraction of the probe's own duration (and at
#: least :data:`RERUN_MIN_S`): a host too busy to settle in that time will not settle later.
RERUN_TIME_FRACTION = 0.5
RERUN_MIN_S = 20.0

#: step -> what a user loses when its check stays uncertain
CONSEQUENCE = {
    "clock": "cy figures (in-core, cy/CL, latencies) may be off by that much",
    "link fit": "link bandwidths, overlap and memory penalty explain the measured transfers only to that much",
    "bandwidth tables": "these benchmark bandwidths (and the fits that use them) may be off by that much",
    "latency": "these load latencies may be off by that much",
    "in-core": "these instruction throughputs/latencies may be off by that much",
}


@dataclass(frozen=True)
class Check:
    """One check.

    Attributes:
        name: what is checked (``clock spread``, ``link fit residual``, ``cache bandwidth
            repetitions``, ...).
        step: the probe step that measures it again (``clock``, ``link fit``, ``bandwidth
            tables``, ``latency``, ``in-core``).
        figure: the measured figure (a fraction: 0.31 is 31 %); the worst point's spread for
            the per-point checks.
        threshold: the largest figure that passes (a fraction).
        attempts: how many times the step was measured (1: no re-run).
        points: the points above the threshold, as ``(key, spread)`` pairs; key is the
            point's identity (``(level, kernel, threads)``, a size in B, a form name).
    """
    name: str
    step: str
    figure: float
    threshold: float
    attempts: int = 1
    points: tuple = ()

    @property
    def ok(self) -> bool:
        return self.figure <= self.threshold and not self.points

    @property
    def verdict(self) -> str:
        return "ok" if self.ok else "uncertain"

    def reason(self) -> str:
        """One line a user understands: figure, attempts, threshold, what it costs."""
        tries = f"after {self.attempts} attempt{'s' if self.attempts > 1 else ''}"
        limit = f"(threshold {100 * self.threshold:.0f} %)"
        if not self.points:
            what = "spread" if self.step == "clock" else "RMS residual"
            return f"{self.step}: {what} {100 * self.figure:.0f} % {tries} {limit}: {CONSEQUENCE[self.step]}"
        worst = ", ".join(point_label(k) for k, _ in sorted(self.points, key=lambda p: -p[1])[:4])
        more = f" and {len(self.points) - 4} more" if len(self.points) > 4 else ""
        return (f"{self.name}: {len(self.points)} point{'s' if len(self.points) > 1 else ''} disagree by up to "
                f"{100 * self.figure:.0f} % {tries} {limit}, {worst}{more}: {CONSEQUENCE[self.step]}")

    def to_mapping(self) -> dict:
        out = {"name": self.name, "step": self.step, "figure_percent": round(100 * self.figure, 1),
               "threshold_percent": round(100 * self.threshold, 1), "verdict": self.verdict,
               "attempts": self.attempts}
        if self.points:
            out["points"] = [{"point": point_label(k), "spread_percent": round(100 * s, 1)} for k, s in self.points]
        return out


@dataclass(frozen=True)
class SelfCheck:
    """All checks of one probe, with the time the re-runs took (s) and why they stopped early."""
    checks: tuple
    rerun_s: float = 0.0
    stopped: str = ""

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    @property
    def uncertain(self) -> tuple:
        """One line per check that stayed uncertain (:meth:`Check.reason`)."""
        return tuple(c.reason() for c in self.checks if not c.ok)

    def lines(self) -> list:
        """The ``self-check:`` block of the probe's text output and of ``machine show``."""
        return self_check_summary(self.to_mapping()).lines()

    def to_mapping(self) -> dict:
        """``probe.self_check`` of the machine file (plain YAML data)."""
        out = {"verdict": "ok" if self.ok else "uncertain", "checks": [c.to_mapping() for c in self.checks],
               "uncertain": list(self.uncertain), "rerun_s": round(self.rerun_s, 1)}
        if self.stopped:
            out["stopped"] = self.stopped
        return out


def bandwidth_spread(p) -> float:
    """Gap between a bandwidth point's two fastest repetitions, (t_2 - t_1) / t_2 (as
    bandwidth: how much slower the second-best run was); 0 with fewer than two."""
    fastest = sorted(p.seconds)[:2]
    return repetition_gap(*fastest) if len(fastest) == 2 else 0.0


def latency_spread(p) -> float:
    """(max - min) / max of a pointer-chase point's ns per load."""
    return (p.ns_max - p.ns_min) / p.ns_max if p.ns_max > 0 else 0.0


def table_points(data) -> dict:
    """``(level, kernel, threads)`` -> bandwidth point of the per-level tables."""
    return {(lv, k, p.threads): p for lv, per in data.tables.items() for k, pts in per.items() for p in pts}


def _per_point(name: str, step: str, spreads: dict, threshold: float, attempts: int) -> Check:
    bad = tuple((k, s) for k, s in spreads.items() if s > threshold)
    return Check(name, step, max(spreads.values()), threshold, attempts, bad)


def self_check(data, link_residual: float | None, attempts: dict | None = None) -> SelfCheck:
    """The checks of one probe's measurements.

    Args:
        data: :class:`~loopmodel.measure.probe.ProbeData`.
        link_residual: RMS relative residual of the chosen link hypothesis (a fraction), None
            where the links were not fitted (no check then).
        attempts: step -> how many times it was measured (1 where missing).
    Returns:
        :class:`SelfCheck`: one :class:`Check` per measured figure (a step not measured has none).
    """
    n = dict(attempts or {})
    checks = []
    if data.clock is not None:
        checks.append(Check("clock spread", "clock", data.clock.spread, CLOCK_SPREAD_MAX, n.get("clock", 1)))
    if link_residual is not None:
        checks.append(Check("link fit residual", "link fit", link_residual, LINK_RESIDUAL_MAX, n.get("link fit", 1)))
    points = table_points(data)
    cache = {k: bandwidth_spread(p) for k, p in points.items() if k[0] != "MEM"}
    mem = {k: bandwidth_spread(p) for k, p in points.items() if k[0] == "MEM"}
    tries = n.get("bandwidth tables", 1)
    if cache:
        checks.append(_per_point("cache bandwidth repetitions", "bandwidth tables", cache, CACHE_SPREAD_MAX, tries))
    if mem:
        checks.append(_per_point("memory bandwidth repetitions", "bandwidth tables", mem, MEMORY_SPREAD_MAX, tries))
    if data.latency is not None and data.latency.points:
        lat = {p.size_bytes: latency_spread(p) for p in data.latency.points}
        checks.append(_per_point("latency repetitions", "latency", lat, LATENCY_SPREAD_MAX, n.get("latency", 1)))
    if data.incore is not None and data.incore.points:
        inc = {f"{p.op} {p.kind} ({p.form})": p.spread for p in data.incore.points}
        checks.append(_per_point("in-core repetitions", "in-core", inc, INCORE_SPREAD_MAX, n.get("in-core", 1)))
    return SelfCheck(tuple(checks))
