"""Document types of ``bench``, ``validate`` (and ``validate --corpus``), ``measure``, ``roofline`` (see :mod:`loopmodel.report.doctypes`)."""
from __future__ import annotations

from typing import Annotated, Literal, Optional

from pydantic import Field
from typing_extensions import NotRequired

from .base import Count, Envelope, ErrorStats, Num, NumOrInf, Strict

#: whether the kernel's data were warm (a warm-up call first) or cold (caches flushed before each run)
Cache = Literal["warm", "cold"]


# --- bench -----------------------------------------------------------------------------------

class Counters(Strict):
    """Hardware event counts of one kernel call per innermost iteration (``perf stat``, the
    difference of runs of R and 2R calls, roofline-measurement-thesis.txt §3.2); a value is null
    where its event was not counted."""

    instructions_per_it: Annotated[Num, Field(description="instructions retired per iteration")]
    loads_per_it: Annotated[Num, Field(description="L1 data-cache loads per iteration")]
    stores_per_it: Annotated[Num, Field(description="L1 data-cache stores per iteration")]
    memory_B_per_it: Annotated[Num, Field(description="bytes from memory per iteration (LLC load misses x cache "
                                                      "line size), B/it")]
    flops_per_it: Annotated[Num, Field(description="floating-point operations per iteration (vendor FP events, "
                                                   "weighted by lanes), FLOP/it")]


class EarlierRun(Strict):
    """The last fresh measurement of the same case (kernel text, sizes, compiler and flags, CPU,
    cache mode, threads, host) against this one."""

    date: Annotated[str, Field(description="when the earlier run was measured (ISO 8601, local time)")]
    min_s_per_it: Annotated[Num, Field(description="its fastest run, s/it")]
    relative_difference: Annotated[Num, Field(description="this run's fastest run / the earlier one's - 1 "
                                                          "(after measuring again)")]
    remeasured: Annotated[bool, Field(description="whether one more round was measured because the two disagreed")]


class Stability(Strict):
    """How the blocks of runs agree (:mod:`loopmodel.measure.stability`): the runs are taken in
    blocks spread over time and measured again until the fastest runs of the two fastest blocks
    agree within ``tolerance``."""

    block_min_s_per_it: Annotated[list[Num], Field(description="fastest run of each block, s/it, in the order "
                                                               "measured")]
    rounds: Annotated[Count, Field(description="rounds of blocks measured (more than one: the first disagreed)")]
    tolerance: Annotated[Num, Field(description="relative agreement asked of the two fastest blocks (0.03 = 3 %)")]
    agreement: Annotated[Num | None, Field(description="second-fastest block minimum / fastest - 1; null for one "
                                                       "block")]
    spread: Annotated[Num, Field(description="slowest block minimum / fastest - 1")]
    verdict: Annotated[Literal["agree", "disagree", "unchecked"], Field(
        description="agree: the fastest runs of two blocks agree within the tolerance; disagree: not after every "
                    "round, or an earlier run of the same case still differs by more than the tolerance after "
                    "measuring again (a note says so); unchecked: one block")]
    span_s: Annotated[Num | None, Field(description="seconds spent measuring the blocks, pauses included (--spread-s "
                                                    "stretches the pauses); null: not timed")]
    earlier: Annotated[EarlierRun | None, Field(
        description="this run against the last fresh measurement of the same case on this host, where the two "
                    "differed by more than the tolerance (one more round was then measured); null: no earlier run, "
                    "or they agreed")]


class BenchMeasurement(Strict):
    """The measurement of one kernel at one size and thread count (benchmark mode,
    kerncraft-tool-paper.txt §2.6; statistics of roofline-measurement-thesis.txt §3.4: min-of-K
    as the headline, median and max of the K runs); cycles at the clock measured around the runs."""

    time_min_s_per_it: Annotated[Num, Field(description="fastest run (min-of-K), s/it")]
    time_median_s_per_it: Annotated[Num, Field(description="median run, s/it")]
    time_max_s_per_it: Annotated[Num, Field(description="slowest run, s/it")]
    time_min_cy_per_it: Annotated[Num, Field(description="fastest run at clock_Hz, cy/it")]
    time_median_cy_per_it: Annotated[Num, Field(description="median run at clock_Hz, cy/it")]
    time_max_cy_per_it: Annotated[Num, Field(description="slowest run at clock_Hz, cy/it")]
    time_min_cy_per_cl: Annotated[Num, Field(description="fastest run at clock_Hz per cache line of work "
                                                         "(one CL of the written array), cy/CL")]
    time_median_cy_per_cl: Annotated[Num, Field(description="median run at clock_Hz per cache line of work, cy/CL")]
    time_max_cy_per_cl: Annotated[Num, Field(description="slowest run at clock_Hz per cache line of work, cy/CL")]
    model_traffic_B_s: Annotated[dict[str, Num], Field(
        description="link (L1L2, L2L3, L3MEM, ...) -> the model's bytes per iteration on it times max_it_s, B/s; "
                    "empty without a machine model (-m) or where the layer conditions do not apply")]
    max_it_s: Annotated[Num, Field(description="iterations per second of the fastest run, it/s")]
    max_lup_s: Annotated[Num, Field(description="lattice-site updates per second of the fastest run (one update "
                                                "per innermost iteration: equals max_it_s), LUP/s")]
    max_flop_s: Annotated[Num, Field(description="FLOPs per second of the fastest run (FLOPs per iteration "
                                                 "from the kernel), FLOP/s")]
    iqr_s_per_it: Annotated[Num, Field(description="interquartile range of the runs (third minus first quartile; "
                                                   "0 for one run), s/it")]
    cov: Annotated[Num, Field(description="coefficient of variation of the runs (sample standard deviation / "
                                          "mean; 0 for one run), fraction")]
    repetitions: Annotated[Count, Field(description="timed runs K (--repeat)")]
    calls_per_repetition: Annotated[Count, Field(description="kernel calls per timed run (calibrated to last "
                                                             ">= 10 ms with warm data; 1 with cold data)")]
    cache: Annotated[Cache, Field(description="warm: a warm-up call, then runs of calibrated calls; cold: a buffer "
                                              "of 4x the last cache streamed before each run of one call")]
    clock_Hz: Annotated[Num, Field(description="core clock during the runs (mean of the measurements before and "
                                               "after), Hz")]
    threads: Annotated[Count, Field(description="threads that ran the kernel together (1: one pinned thread)")]
    openmp: Annotated[bool, Field(description="whether OpenMP threads shared the outermost loop (--threads given, "
                                              "even 1) rather than one pinned thread")]
    counters: Annotated[Counters | None, Field(
        description="hardware counts per innermost iteration; null where counters are unavailable (a note says why)")]
    stability: Annotated[Stability | None, Field(
        description="how the blocks of runs agree; null where the runs were not taken in blocks")]
    compiler: Annotated[str, Field(description="compiler command that built the benchmark")]
    flags: Annotated[list[str], Field(description="compiler flags")]
    cpu: Annotated[Count | None, Field(description="CPU the benchmark was asked to be pinned to (--cpu; not used "
                                                   "with OpenMP threads); null: not pinned")]
    pinned: Annotated[bool, Field(description="whether pinning to cpu succeeded (false with OpenMP threads)")]


class BenchPoint(Strict):
    """One size and thread count of ``bench``: the measured figures, with ``threads`` and
    ``it_s`` on top (what ``loopmodel scaling --measured`` reads of a scaling curve)."""

    threads: Annotated[Count, Field(description="threads that ran the kernel together (1: one pinned thread)")]
    it_s: Annotated[Num, Field(description="iterations per second of the fastest run, all threads together "
                                           "(= measurement.max_it_s), it/s")]
    kernel: Annotated[str, Field(description="the C kernel file, as given")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value")]
    measurement: Annotated[BenchMeasurement, Field(description="the measured figures")]
    cached: Annotated[bool, Field(description="whether this result came from the per-user cache (--no-cache "
                                              "measures again)")]
    notes: Annotated[list[str], Field(description="what the figures cannot show (pinning failed, no counters, "
                                                  "cold-cache method, which probe -m host rests on)")]


class BenchDocument(Envelope):
    """``loopmodel bench --json``: a C kernel measured on this host, one point per size (a sweep)
    or per thread count (``--threads 1:N``, a scaling curve); the same shape either way."""

    kernel: Annotated[str, Field(description="the C kernel file, as given")]
    points: Annotated[list[BenchPoint], Field(description="one point per size and thread count, in the order "
                                                          "measured")]
    notes: Annotated[list[str], Field(description="how the kernel was run (runs, cache, threads, compiler), "
                                                  "then every point's notes; the notes the table prints")]


# --- validate --------------------------------------------------------------------------------

class ValidatePoint(Strict):
    """One size of ``validate``: the ECM prediction for the data location the layer conditions
    choose (kerncraft-tool-paper.txt §2.3) next to the measurement of benchmark mode (one pinned
    thread, warm data, min-of-K), both per cache line of work."""

    defines: Annotated[dict[str, Count], Field(description="size constant -> value")]
    data_location: Annotated[str, Field(description="memory level the data come from (a level name of the machine "
                                                    "model: L1, L2, L3, MEM, ...)")]
    predicted_cy_per_cl: Annotated[Num, Field(description="T_ECM for data_location, cy/CL")]
    measured_min_cy_per_cl: Annotated[Num, Field(description="fastest run (min-of-K) at clock_Hz, cy/CL")]
    measured_median_cy_per_cl: Annotated[Num, Field(description="median run at clock_Hz, cy/CL")]
    measured_max_cy_per_cl: Annotated[Num, Field(description="slowest run at clock_Hz, cy/CL")]
    relative_error: Annotated[Num, Field(description="predicted / measured min - 1, fraction")]
    ecm: Annotated[str, Field(description="the ECM notation of the prediction ({ T_OL || T_nOL | T_L1L2 | ... } "
                                          "cy/CL)")]
    clock_Hz: Annotated[Num, Field(description="core clock measured around the runs of this size, Hz")]
    incore_modelled_cy_per_cl: Annotated[Num, Field(description="the model's in-core time, T_ECM with the data in "
                                                                "L1 = max(T_OL, T_nOL), cy/CL")]
    incore_measured_cy_per_cl: Annotated[Optional[Num], Field(
        description="the kernel benchmarked with its data in L1 (sizes scaled down, --incore measured), cy/CL: "
                    "the measured in-core time beside the modelled one; the measurement itself where the data "
                    "are in L1; null where it could not be measured")]
    incore_measured_defines: Annotated[Optional[dict[str, int]], Field(
        description="the sizes incore_measured_cy_per_cl was measured at (null where not measured)")]
    same_window: Annotated[Optional[SameWindowDoc], Field(
        description="the prediction at the memory bandwidth measured right before and after the kernel's runs "
                    "(data in memory with a benchmarked memory term; null otherwise)")]


class WindowBandwidths(Strict):
    """The reference benchmark measured around a kernel's runs (the memory bandwidth of the
    measurement's minutes, :class:`loopmodel.workflows.same_window.SameWindow`)."""

    reference_kernel: Annotated[str, Field(description="the benchmark the ECM memory term was taken from")]
    reference_cores: Annotated[int, Field(description="its threads")]
    stored_B_s: Annotated[Num, Field(description="its figure in the machine model, B/s (as reported, no "
                                                 "write-allocate)")]
    before_B_s: Annotated[Num, Field(description="measured right before the kernel's runs, B/s")]
    after_B_s: Annotated[Num, Field(description="measured right after the kernel's runs, B/s")]
    window_B_s: Annotated[Num, Field(description="the mean of the two, B/s")]


class SameWindowDoc(WindowBandwidths):
    """The memory bandwidth of the measurement's minutes and the prediction at it
    (:class:`loopmodel.workflows.same_window.SameWindow`)."""

    predicted_cy_per_cl: Annotated[Num, Field(description="T_ECM with the memory term at window_B_s, cy/CL")]
    relative_error: Annotated[Num, Field(description="predicted_cy_per_cl / measured min - 1, fraction")]


class ValidateDocument(Envelope):
    """``loopmodel validate --json``: the ECM prediction next to the measurement on this host,
    one point per size."""

    kernel: Annotated[str, Field(description="the C kernel file, as given")]
    points: Annotated[list[ValidatePoint], Field(description="one point per size")]
    notes: Annotated[list[str], Field(description="how the measurement was made, which probe -m host rests on, "
                                                  "the benchmark's notes; the notes the table prints")]


# --- validate --corpus ------------------------------------------------------------------------

class CorpusSummary(ErrorStats):
    """|relative error| over every measured case, then per data location, regime tag and
    generator family."""

    by_level: Annotated[dict[str, ErrorStats], Field(description="data location (L1 .. MEM) -> statistics")]
    by_regime: Annotated[dict[str, ErrorStats], Field(description="regime tag (the analysis' tags, as analyze "
                                                                     "reports them) -> statistics")]
    by_family: Annotated[dict[str, ErrorStats], Field(description="corpus generator family -> statistics")]
    same_window: Annotated[Optional[CorpusSameWindow], Field(
        description="the memory cases with a same-window prediction: |error| from the stored model and from the "
                    "bandwidth measured around each case (null: no such case)")]


class CorpusSameWindow(Strict):
    """|error| of the memory cases judged against the stored model and against the memory
    bandwidth of the same minutes (:mod:`loopmodel.workflows.same_window`)."""

    stored: Annotated[ErrorStats, Field(description="predicted from the stored model")]
    window: Annotated[ErrorStats, Field(description="predicted with the memory term at the bandwidth measured "
                                                    "right before and after the case's runs")]


class CorpusWindowDoc(WindowBandwidths):
    """One corpus case's prediction at the memory bandwidth of its own minutes (cy/it)."""

    predicted_cy_per_it: Annotated[Num, Field(description="T_ECM with the memory term at window_B_s / iterations "
                                                          "per CL, cy/it")]
    relative_error: Annotated[Num, Field(description="predicted_cy_per_it / measured min - 1, fraction")]


class CorpusCaseDoc(Strict):
    """One kernel of the corpus at sizes that put its data in one memory level: the ECM
    prediction for that level next to the measurement of benchmark mode (one pinned thread,
    warm data, min-of-K), per innermost iteration."""

    name: Annotated[str, Field(description="kernel name in the corpus (example-*: a shipped example)")]
    families: Annotated[list[str], Field(description="what the generator made it to exercise")]
    regimes: Annotated[list[str], Field(description="regime tags of the analysis at these sizes")]
    data_location: Annotated[str, Field(description="memory level the data come from (L1, L2, L3, MEM, ...)")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value")]
    data_set_B: Annotated[Count, Field(description="all arrays of the kernel at these sizes, B")]
    predicted_cy_per_it: Annotated[Num, Field(description="T_ECM for data_location / iterations per CL, cy/it")]
    measured_min_cy_per_it: Annotated[Num, Field(description="fastest run (min-of-K) at clock_Hz, cy/it")]
    measured_median_cy_per_it: Annotated[Num, Field(description="median run at clock_Hz, cy/it")]
    measured_max_cy_per_it: Annotated[Num, Field(description="slowest run at clock_Hz, cy/it")]
    relative_error: Annotated[Num, Field(description="predicted / measured min - 1, fraction")]
    ecm: Annotated[str, Field(description="the ECM notation of the prediction, cy/CL")]
    clock_Hz: Annotated[Num, Field(description="core clock measured around the runs of this case, Hz")]
    same_window: Annotated[Optional[CorpusWindowDoc], Field(
        description="the prediction at the memory bandwidth measured right before and after the case's runs "
                    "(data in memory with a benchmarked memory term, measured afresh; null otherwise)")]
    analysed_as_compiled: Annotated[Optional[str], Field(
        description="the analysis' note where it analysed the nest gcc runs (loops interchanged) instead of the "
                    "one written; data_location is then that nest's (null otherwise)")]


class SkippedCase(Strict):
    """A placed case that was not predicted or measured."""

    name: Annotated[str, Field(description="kernel name in the corpus")]
    data_location: Annotated[str, Field(description="the memory level it was placed in")]
    reason: Annotated[str, Field(description="why (compiler, model or run failure), one line")]


class CorpusDocument(Envelope):
    """``loopmodel validate --corpus --json``: the prediction error of the model on this host
    over the validation corpus, per data location and per regime, and every case."""

    machine: Annotated[str, Field(description="the machine model, as given (-m)")]
    seed: Annotated[Count, Field(description="seed of the kernel generator")]
    quick: Annotated[bool, Field(description="the quick corpus (a dozen kernels, fewer runs)")]
    repetitions: Annotated[Count, Field(description="runs per case (min-of-K over them)")]
    duration_s: Annotated[Num, Field(description="wall time of the whole run, s")]
    summary: Annotated[CorpusSummary, Field(description="|error| statistics")]
    cases: Annotated[list[CorpusCaseDoc], Field(description="one row per measured case, in corpus order")]
    skipped: Annotated[list[SkippedCase], Field(description="placed cases left out, with the reason")]
    notes: Annotated[list[str], Field(description="how it was measured, the host, cases not placed or skipped, "
                                                  "the benchmarks' notes")]


# --- measure ---------------------------------------------------------------------------------

class OmpEnvironment(Strict):
    """The OpenMP environment of every run of the streaming benchmark (besides OMP_NUM_THREADS)."""

    OMP_PROC_BIND: Annotated[Literal["close"], Field(description="thread binding: close")]
    OMP_PLACES: Annotated[Literal["cores"], Field(description="places: one per core")]
    OMP_DYNAMIC: Annotated[Literal["false"], Field(description="no dynamic adjustment of the thread count")]


class MeasurePoint(Strict):
    """One thread count of ``measure``: times over the repetitions, rates from the median."""

    threads: Annotated[Count, Field(description="OpenMP threads, as the benchmark reported from inside its "
                                                "parallel region")]
    time_median_s_per_sweep: Annotated[Num, Field(description="median time of one sweep over all elements, s")]
    time_min_s_per_sweep: Annotated[Num, Field(description="fastest repetition, time of one sweep, s")]
    time_max_s_per_sweep: Annotated[Num, Field(description="slowest repetition, time of one sweep, s")]
    it_s: Annotated[Num, Field(description="elements updated per second at the median time, all threads "
                                           "together, it/s")]
    bandwidth_B_s: Annotated[Num, Field(description="it_s x volume_B_per_it (write-allocate counted), B/s")]
    bandwidth_no_wa_B_s: Annotated[Num, Field(description="it_s x volume_no_wa_B_per_it (STREAM convention, no "
                                                          "write-allocate), B/s")]
    volume_B_per_it: Annotated[Count, Field(description="bytes per iteration counted with write-allocate (daxpby "
                                                        "24, triad 32), B/it")]
    volume_no_wa_B_per_it: Annotated[Count, Field(description="bytes per iteration without write-allocate "
                                                              "(24), B/it")]
    sweeps: Annotated[Count, Field(description="timed sweeps in all repetitions together")]


class MeasureDocument(Envelope):
    """``loopmodel measure --json``: measured daxpby or triad bandwidth on this host per OpenMP
    thread count (a STREAM-like benchmark, OMP_PROC_BIND=close OMP_PLACES=cores)."""

    kernel: Annotated[Literal["daxpby", "triad"], Field(description="the streaming kernel")]
    formula: Annotated[Literal["y[i] = a*x[i] + b*y[i]", "a[i] = b[i] + s*c[i]"], Field(
        description="what the kernel computes")]
    host: Annotated[str, Field(description="CPU model, architecture and CPU count of the measuring host")]
    compiler: Annotated[str, Field(description="compiler command (--compiler)")]
    compiler_version: Annotated[str, Field(description="the compiler's --version line (empty if unknown)")]
    flags: Annotated[list[str], Field(description="compiler flags (--flags, split like a shell)")]
    environment: Annotated[OmpEnvironment, Field(description="OpenMP environment variables of every run")]
    n_elements: Annotated[Count, Field(description="elements per array")]
    size_B: Annotated[Count, Field(description="total size of all arrays (--size rounded down to whole "
                                               "elements), B")]
    repetitions: Annotated[Count, Field(description="repetitions per thread count (median, min and max over "
                                                    "them)")]
    min_time_s: Annotated[Num, Field(description="shortest duration of one repetition (--min-time), s")]
    volume_B_per_it: Annotated[Count, Field(description="bytes per iteration counted with write-allocate (daxpby "
                                                        "24, triad 32), B/it")]
    volume_no_wa_B_per_it: Annotated[Count, Field(description="bytes per iteration without write-allocate "
                                                              "(24), B/it")]
    points: Annotated[list[MeasurePoint], Field(description="one point per thread count, in the order requested")]
    clock_Hz: NotRequired[Annotated[Num, Field(description="core clock measured on one core (dependent integer "
                                                           "additions), Hz; only with --clock")]]


# --- roofline --------------------------------------------------------------------------------

class ComputeRoof(Strict):
    """The compute roof: peak double-precision FLOP/s of the machine model (FLOPs per cycle x clock)."""

    kind: Annotated[Literal["compute"], Field(description="compute: a horizontal roof")]
    label: Annotated[str, Field(description="text of the roof in the plot")]
    peak_flop_s: Annotated[Num, Field(description="peak DP performance, FLOP/s")]


class BandwidthRoof(Strict):
    """A bandwidth roof: a memory level's best measured single-core bandwidth from the machine
    model's benchmark tables (kerncraft-tool-paper.txt §1.2.1)."""

    kind: Annotated[Literal["bandwidth"], Field(description="bandwidth: a diagonal roof")]
    label: Annotated[str, Field(description="text of the roof in the plot (level, GB/s, benchmark kernel)")]
    bandwidth_B_s: Annotated[Num, Field(description="best single-core bandwidth of the level, B/s")]


class RooflinePoint(Strict):
    """One kernel at one size and cache mode (roofline-measurement-thesis.txt §2, §4): the model's
    arithmetic intensity on the link into the level the data come from, the measured FLOP/s with
    the spread over the runs, and the FLOP/s T_ECM predicts."""

    kernel: Annotated[str, Field(description="the C kernel file, as given")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value (the constants this kernel "
                                                           "declares)")]
    data_location: Annotated[str, Field(description="memory level the data come from (cold: the last, memory; "
                                                    "warm: where the layer conditions put them)")]
    arithmetic_intensity_flop_per_B: Annotated[NumOrInf, Field(
        description="FLOPs per byte of the model's traffic into data_location (L1: the bytes the core loads and "
                    "stores), FLOP/B ('inf': no traffic)")]
    measured_max_flop_s: Annotated[Num, Field(description="fastest run (min-of-K), FLOP/s")]
    measured_median_flop_s: Annotated[Num, Field(description="median run, FLOP/s")]
    measured_min_flop_s: Annotated[Num, Field(description="slowest run, FLOP/s")]
    predicted_flop_s: Annotated[Num, Field(description="FLOP/s of T_ECM for data_location at the machine model's "
                                                       "clock, FLOP/s (null: T_ECM unknown or 0)")]
    cache: Annotated[Cache, Field(description="warm data or cold (caches flushed before each run of one call)")]


class RooflineDocument(Envelope):
    """``loopmodel roofline --json``: measured Roofline points of one or more kernels on this
    host (one pinned thread), with the roofs of the machine model."""

    roofs: Annotated[list[Annotated[ComputeRoof | BandwidthRoof, Field(discriminator="kind")]], Field(
        description="the compute roof (if the model has DP FLOPs per cycle), then one bandwidth roof per level "
                    "with a single-core benchmark")]
    points: Annotated[list[RooflinePoint], Field(description="one point per kernel, cache mode and size; a kernel "
                                                             "without FLOPs has none (a note says so)")]
    notes: Annotated[list[str], Field(description="notes: kernels left out, which probe -m host rests on")]
