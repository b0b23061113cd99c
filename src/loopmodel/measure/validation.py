"""Model against measurement, per size: the row ``loopmodel validate`` shows for one set of
sizes (the ECM prediction for the data location, the benchmark-mode measurement, the relative
error), the summary per data location and the notes on how the measurement was made.

T_ECM: kerncraft-tool-paper.txt §2.3, cross-architecture-machine-models.txt eq. 4; the
measurement: :mod:`loopmodel.measure.bench` (min-of-K, roofline-measurement-thesis.txt §3.4).
"""
from __future__ import annotations

from dataclasses import dataclass

import statistics


#: the first note of ``validate``: how the measurement was made
MEASUREMENT_NOTE = ("measured with loopmodel bench (1 thread pinned, data warm, min-of-K), cy/CL at the clock "
                    "measured around each size; error = predicted / measured min - 1; in-core model = the ECM "
                    "prediction with the data in L1, in-core measured = the kernel benchmarked with its data in L1 "
                    "(min-of-K; sizes scaled down to fit in half of L1 where the row's data are not in L1)")


@dataclass(frozen=True)
class ValidationRow:
    """One size.

    Attributes:
        defines: the sizes. level: where the data come from (``L1`` .. ``MEM``).
        predicted: T_ECM for that location, cy/CL. ecm: the ECM notation.
        bench: :class:`~loopmodel.measure.bench.BenchResult`.
        parts: ``(name, cy/CL, overlapping)`` of T_OL, T_nOL and each transfer for that
            location (what the plot stacks).
        incore_modelled: the model's in-core time (T_ECM with data in L1), cy/CL.
        incore_measured: the kernel measured with its data in L1, cy/CL (the measurement itself
            for data in L1; None where not measured): whether an error comes from the core or
            from the transfers.
        incore_defines: the sizes ``incore_measured`` was measured at (None: not measured).
        incore_note: why the in-core time was not measured ("" where it was).
        window: the prediction at the memory bandwidth measured around the kernel's runs
            (:class:`~loopmodel.workflows.same_window.SameWindow`; None where the data are not in
            memory or there is no measured memory term). window_note: why there is none although
            there could be ("" otherwise). nest_note: the analysis' note where it analysed the nest
            the compiler runs instead of the one written ("" otherwise).
    """
    defines: dict
    level: str
    predicted: float
    ecm: str
    bench: object
    parts: tuple = ()
    incore_modelled: float = 0.0
    incore_measured: float | None = None
    incore_defines: dict | None = None
    incore_note: str = ""
    window: object = None
    window_note: str = ""
    nest_note: str = ""

    @property
    def measured(self) -> tuple:
        """Measured cy/CL (min, median, max)."""
        return self.bench.figures()["cy_per_CL"]

    @property
    def error(self) -> float:
        """predicted / measured (min) - 1."""
        return self.predicted / self.measured[0] - 1

    @property
    def window_error(self) -> float | None:
        """same-window prediction / measured (min) - 1; None without one."""
        return None if self.window is None else self.window.predicted_cy_per_cl / self.measured[0] - 1

    def to_dict(self) -> dict:
        """The point of ``validate --json`` (cy/CL, the clock in Hz)."""
        lo, med, hi = self.measured
        return {"defines": dict(self.defines), "data_location": self.level, "predicted_cy_per_cl": self.predicted,
                "measured_min_cy_per_cl": lo, "measured_median_cy_per_cl": med, "measured_max_cy_per_cl": hi,
                "relative_error": self.error, "ecm": self.ecm, "clock_Hz": self.bench.clock_hz,
                "incore_modelled_cy_per_cl": self.incore_modelled, "incore_measured_cy_per_cl": self.incore_measured,
                "incore_measured_defines": None if self.incore_defines is None else dict(self.incore_defines),
                "same_window": None if self.window is None else self._window()}

    def _window(self) -> dict:
        """The same-window prediction (JSON): the reference bandwidths and the prediction at them."""
        return {**self.window.bandwidths(), "predicted_cy_per_cl": self.window.predicted_cy_per_cl,
                "relative_error": self.window_error}


def summary(rows) -> dict:
    """Level -> ``{"points", "median_abs_error", "max_abs_error"}`` (fractions)."""
    out = {}
    for level in dict.fromkeys(r.level for r in rows):
        errs = [abs(r.error) for r in rows if r.level == level]
        out[level] = {"points": len(errs), "median_abs_error": statistics.median(errs), "max_abs_error": max(errs)}
    return out


def validation_notes(rows, extra_notes: tuple = ()) -> list:
    """The notes of the table and of the JSON document: how the measurement was made
    (:data:`MEASUREMENT_NOTE`), then ``extra_notes`` (e.g. which probe ``-m host`` rests on) and
    every size's benchmark notes and why an in-core time was not measured, each once."""
    scaled = {}  # sizes measured in L1 -> the rows' sizes they stand for
    for r in rows:
        if r.incore_defines is not None and r.incore_defines != r.defines:
            scaled.setdefault(_sizes(r.incore_defines), []).append(_sizes(r.defines))
    in_l1 = [f"in-core measured at {k} for {'; '.join(v)}" for k, v in scaled.items()]
    return list(dict.fromkeys([MEASUREMENT_NOTE, *extra_notes, *(n for r in rows for n in r.bench.notes),
                               *in_l1, *(r.incore_note for r in rows if r.incore_note),
                               *(r.window_note for r in rows if r.window_note),
                               *(r.nest_note for r in rows if r.nest_note)]))


def _sizes(defines: dict) -> str:
    return " ".join(f"{k}={v}" for k, v in sorted(defines.items()))
