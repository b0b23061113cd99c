"""The memory prediction at the bandwidth of the same minutes as the measurement.

On a shared host the memory bandwidth moves by up to 2x within minutes (a Zen 4 guest: 36 of 45
corpus cases in memory ran 40-150 % faster at their best than predicted, their own runs spread
by 30-130 %); the probe's figure is one moment of it. So ``validate`` measures the benchmark
the ECM memory term was taken from (same kernel, same cores: the contribution's
:class:`~loopmodel.machine.bandwidth.ChosenBandwidth`) right before and right after the kernel's
runs, and gives beside the prediction from the stored model the prediction with the memory
term at the bandwidth of that window: the memory contribution's busy time scales with stored /
window bandwidth (both as the benchmark reports them, without write-allocate), and T_ECM is
eq. 4 again (:func:`loopmodel.models.ecm.combine`). The model's error and the host's drift are
then told apart.
"""
from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from ..errors import ToolError
from ..measure.bandwidth import run_bandwidth
from ..measure.stream import run_stream
from ..models.ecm import combine

#: data set of the reference benchmark: this many times the last cache, at least 256 MiB
REFERENCE_CACHE_FACTOR = 4
REFERENCE_MIN_B = 256 * 2**20


@dataclass(frozen=True)
class SameWindow:
    """The memory bandwidth of the measurement's minutes and the prediction at it.

    Attributes:
        kernel: the reference benchmark (the one the ECM memory term was taken from).
        cores: its threads.
        stored_B_s: the figure in the machine model, B/s (as the benchmark reports it).
        before_B_s, after_B_s: the reference measured right before and right after the kernel's
            runs (fastest repetition), B/s.
        predicted_cy_per_cl: T_ECM with the memory term at the mean of the two, cy/CL.
    """

    kernel: str
    cores: int
    stored_B_s: float
    before_B_s: float
    after_B_s: float
    predicted_cy_per_cl: float

    @property
    def window_B_s(self) -> float:
        """The mean of the two reference measurements, B/s."""
        return (self.before_B_s + self.after_B_s) / 2

    def bandwidths(self) -> dict:
        """The reference benchmark and its bandwidths as the JSON documents carry them (B/s)."""
        return {"reference_kernel": self.kernel, "reference_cores": self.cores, "stored_B_s": self.stored_B_s,
                "before_B_s": self.before_B_s, "after_B_s": self.after_B_s, "window_B_s": self.window_B_s}


def memory_term(res, level: str):
    """The contribution of ``res`` for data in ``level`` whose bandwidth is a benchmark of memory
    (a :class:`~loopmodel.models.ecm.Contribution` with ``measured`` at the last level), or None."""
    last = res.machine.memory_hierarchy[-1].level
    if level != last or res.ecm is None:
        return None
    return next((c for c in res.ecm.by_location.get(level, ())
                 if c.measured is not None and c.measured.level == last and c.measured.reported), None)


def reference(term, machine) -> float:
    """The reference benchmark of ``term`` measured now, fastest repetition, B/s without
    write-allocate (the convention of the stored figure): ``loopmodel measure``'s program for
    daxpby (:func:`~loopmodel.measure.stream.run_stream`), the probe's for the others
    (:func:`~loopmodel.measure.bandwidth.run_bandwidth`).

    Raises:
        ToolError: the benchmark cannot be built or run, or is unknown (one line).
    """
    caches = machine.caches
    size = max(REFERENCE_MIN_B, REFERENCE_CACHE_FACTOR * int(caches[-1].size if caches else 0))
    threads = max(1, min(term.measured.cores, os.cpu_count() or 1))
    if term.measured.kernel == "daxpby":
        p = run_stream("daxpby", [threads], size, repetitions=3, min_time_s=0.05).points[0]
        return p.bytes_per_s_no_wa * p.seconds_per_sweep / p.seconds_per_sweep_min  # the fastest sweep
    return run_bandwidth(term.measured.kernel, threads, size // threads, repetitions=3).bytes_per_s_max


def prediction(res, level: str, term, before: float, after: float) -> SameWindow:
    """:class:`SameWindow` of ``res`` for data in ``level`` from the reference measured ``before``
    and ``after`` (B/s): the memory term ``term``'s busy time x stored / window, eq. 4 again."""
    stored = term.measured.reported
    scale = stored / ((before + after) / 2)
    parts = [dataclasses.replace(c, busy=c.busy * scale, cycles=c.busy * scale + c.penalty) if c is term else c
             for c in res.ecm.by_location[level]]
    return SameWindow(term.measured.kernel, term.measured.cores, stored, before, after,
                      combine(res.incore, parts, res.machine))


def measured_around(res, level: str, measure):
    """``(measure(), SameWindow or None, note)``: the kernel's measurement ``measure()`` (a
    :class:`~loopmodel.measure.bench.BenchResult`) with the reference benchmark run right before
    and after it where the data of ``res`` are in memory with a benchmarked memory term; a note
    where there is none although there could be (the reference failed, the kernel's figures came
    from the cache)."""
    term = memory_term(res, level)
    if term is None or res.incore is None or res.incore.T_OL is None:
        return measure(), None, ""
    try:
        before = reference(term, res.machine)
    except ToolError as exc:
        return measure(), None, f"no same-window prediction: {exc}"
    out = measure()
    if out.cached:
        return out, None, "no same-window prediction: the kernel's figures came from the cache (--no-cache)"
    try:
        after = reference(term, res.machine)
    except ToolError as exc:
        return out, None, f"no same-window prediction: {exc}"
    return out, prediction(res, level, term, before, after), ""
