"""Document types of ``omp`` (see :mod:`loopmodel.report.doctypes`)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import NotRequired

from .base import Count, Envelope, Num, Strict

#: the benchmarked transitions (:data:`loopmodel.machine.coherence.TRANSITION_KEYS`): load or store,
#: the MESI state the chunk starts from, and whether the acting thread holds a valid copy
TransitionKey = Literal["L I", "L M own", "L M other", "L E own", "L E other", "L S own", "L S other",
                        "S I", "S M own", "S M other", "S E own", "S E other", "S S own", "S S other"]


class OmpTransition(Strict):
    """One coherence transition's part of a phase's time (:class:`loopmodel.models.omp_program.TransitionTime`;
    benchmark-based-coherence-model.txt §III-C, §IV)."""

    transition: Annotated[str, Field(description="the transition in the paper's notation, e.g. 'L_t from "
                                                 "(M,{0})'")]
    benchmark: Annotated[TransitionKey, Field(description="the benchmarked transition that times it, e.g. 'L M "
                                                          "other' (before any fallback to a measured key)")]
    time_s: Annotated[Num, Field(description="time of this transition summed over the threads, s")]
    share: Annotated[Num, Field(description="fraction of the phase's summed thread time (0..1)")]


class OmpPhaseMeasurement(Strict):
    """``--measure``: one executed phase as measured (:class:`loopmodel.measure.omp_bench.PhaseMeasurement`)."""

    time_s: Annotated[Num, Field(description="measured time of the phase, minimum over repetitions, s")]
    median_time_s: Annotated[Num, Field(description="median over repetitions, s")]
    spread: Annotated[Num, Field(description="(max - min) / min over repetitions")]
    error: Annotated[Num, Field(description="predicted / measured - 1; null when the measured time is 0")]


class OmpPhase(Strict):
    """One executed phase, in execution order: its predicted time by Algorithm 1 of
    benchmark-based-coherence-model.txt (§III-C) and the in-core time
    (:class:`loopmodel.models.omp_program.PhasePrediction`)."""

    index: Annotated[Count, Field(description="position in execution order, from 0")]
    line: Annotated[Count, Field(description="source line of the phase (its pragma or its for; 0: unknown)")]
    kind: Annotated[Literal["parallel", "sequential", "master", "single"],
                    Field(description="how the phase runs: 'parallel' (worksharing loop over the threads) or on "
                                      "one thread ('sequential', 'master', 'single')")]
    label: Annotated[str, Field(description="short text of the phase (e.g. 's += x[i] * y[i]')")]
    iteration: Annotated[Count | None, Field(description="iteration of the enclosing repeated block, from 0; null "
                                                         "outside repeats")]
    time_s: Annotated[Num, Field(description="predicted time of the phase after the preceding ones, fork/join "
                                             "overhead included, s")]
    memory_time_s: Annotated[Num, Field(description="memory time theta of Algorithm 1 (slowest thread), s")]
    core_time_s: Annotated[Num, Field(description="in-core time of the slowest thread, s; null where unknown (no C "
                                                  "code, or no in-core figure)")]
    bound: Annotated[Literal["memory", "in-core"], Field(description="whether the memory or the in-core time "
                                                                     "bounds the phase")]
    overhead_time_s: Annotated[Num, Field(description="fork/join overhead of a parallel loop, s (0 for the "
                                                      "others)")]
    transitions: Annotated[list[OmpTransition], Field(description="the transitions that make up the memory time, "
                                                                  "largest first")]
    hints: Annotated[list[str], Field(description="suggestions (e.g. parallel first-touch initialisation)")]
    notes: Annotated[list[str], Field(description="over-approximations the front end made for this phase")]
    measured: NotRequired[Annotated[OmpPhaseMeasurement, Field(description="--measure: the phase as measured")]]


class OmpRepeat(Strict):
    """A repeated block (an outer sequential loop around phases, e.g. a solver iteration)
    (:class:`loopmodel.models.omp_program.RepeatTime`)."""

    line: Annotated[Count, Field(description="source line of the block (0: unknown)")]
    count: Annotated[Count, Field(description="iterations of the block")]
    time_s_per_it: Annotated[list[Num], Field(description="predicted time of each iteration, s")]
    measured_time_s_per_it: NotRequired[Annotated[list[Num], Field(description="--measure: measured time of each "
                                                                               "iteration (sum of the phases' "
                                                                               "minima), s")]]


class OmpMeasurement(Strict):
    """``--measure``: the whole program as measured on this thread count
    (:class:`loopmodel.measure.omp_bench.ProgramMeasurement`)."""

    total_time_s: Annotated[Num, Field(description="measured time of one execution, minimum over repetitions, s")]
    speedup: Annotated[Num, Field(description="measured time on the first thread count / this one; null when a "
                                              "time is 0")]
    repetitions: Annotated[Count, Field(description="executions measured")]
    cpus: Annotated[list[Count], Field(description="CPU ids the threads were pinned to")]
    compiler_flags: Annotated[list[str], Field(description="flags the program was compiled with")]
    omp_wait_policy: Annotated[str, Field(description="OMP_WAIT_POLICY of the run ('active' unless the environment "
                                                      "sets it)")]
    error: Annotated[Num, Field(description="predicted / measured total time - 1; null when the measured time is "
                                            "0")]


class OmpThreadCount(Strict):
    """The program predicted (and with ``--measure`` measured) on one thread count
    (:class:`loopmodel.models.omp_program.OmpRow`)."""

    threads: Annotated[Count, Field(description="OpenMP threads")]
    total_time_s: Annotated[Num, Field(description="predicted time of one execution (sum of the phases), s")]
    speedup: Annotated[Num, Field(description="predicted time on the first thread count / this one")]
    phases: Annotated[list[OmpPhase], Field(description="executed phases, in execution order")]
    repeats: Annotated[list[OmpRepeat], Field(description="repeated blocks, in program order")]
    measured: NotRequired[Annotated[OmpMeasurement, Field(description="--measure: the program as measured")]]


class OmpDocument(Envelope):
    """``loopmodel omp --json``: an OpenMP program predicted per thread count with the coherence-aware model of
    benchmark-based-coherence-model.txt (per-thread chunks, their MESI states across the phases, each phase
    timed from the host's transition benchmarks), optionally measured."""

    program: Annotated[str, Field(description="the program file (OpenMP C or YAML program model)")]
    machine: Annotated[str, Field(description="the machine model as given to -m (name or file)")]
    notes: Annotated[list[str], Field(description="what the prediction assumes (front-end notes, untimed in-core "
                                                  "parts, fallback transitions)")]
    threads: Annotated[list[OmpThreadCount], Field(description="one entry per thread count, in the order asked "
                                                               "for")]


class OmpSizeThreadCount(Strict):
    """One thread count at one size point of ``omp -D`` over a range
    (:class:`loopmodel.workflows.omp_sizes.ThreadTime`)."""

    threads: Annotated[Count, Field(description="OpenMP threads")]
    total_time_s: Annotated[Num, Field(description="predicted time of one execution (sum of the phases), s")]
    speedup: Annotated[Num, Field(description="predicted time on the first thread count / this one, at this size")]
    phase_time_s: Annotated[list[Num], Field(description="predicted time of every executed phase, in the order of "
                                                         "'omp --json' phases (fork/join overhead included), s")]
    repeats: Annotated[list[OmpRepeat], Field(description="repeated blocks, in program order")]


class OmpSizesDocument(Envelope):
    """One line of ``loopmodel omp -D N=a:b:step --json`` (JSON Lines, one per size point): the program
    predicted at that size per thread count, the numbers of ``omp --json`` at that one size."""

    program: Annotated[str, Field(description="the program file (OpenMP C or YAML program model)")]
    machine: Annotated[str, Field(description="the machine model as given to -m (name or file)")]
    defines: Annotated[dict[str, Count], Field(description="the size constants of this point, as -D gave them")]
    threads: Annotated[list[OmpSizeThreadCount], Field(description="one entry per thread count, in the order asked "
                                                                   "for")]
