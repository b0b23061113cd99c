"""Document types of ``scaling``, ``app``, ``energy`` (see :mod:`loopmodel.report.doctypes`)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import NotRequired

from .base import Count, Envelope, Num, Strict

#: the multicore models of :mod:`loopmodel.models.scaling` (``MODELS``)
MulticoreModel = Literal["contention", "saturation"]
#: page placement of :mod:`loopmodel.models.scaling` (``PLACEMENTS``)
Placement = Literal["first-touch", "one-domain"]
#: description of ``limit`` (scaling and energy points); not a closed set: ``shared <link>`` names a link
LIMIT = "what bounds the performance: 'core', 'memory' or 'shared <link>' (a non-scalable shared cache link)"


# --- scaling ---------------------------------------------------------------------------------

class ScalingPoint(Strict):
    """The prediction for one core count (:class:`loopmodel.models.scaling.ScalingPoint`)."""

    cores: Annotated[Count, Field(description="active cores n")]
    numa_domains: Annotated[Count, Field(description="ccNUMA domains in use (cores fill domains one after the "
                                                     "other)")]
    data_in: Annotated[str, Field(description="the memory level the data of the n cores are in (the data set split "
                                              "among them may fit caches one core's does not)")]
    T_ECM_cy_per_cl: Annotated[Num, Field(description="T_ECM of one of the n cores for the data location, from "
                                                      "the traffic with n active cores (data set and shared caches "
                                                      "split among them, as 'analyze --cores n'), cy/CL")]
    memory_busy_cy_per_cl: Annotated[Num, Field(description="T_Mem of one of the n cores, cy/CL (0: data in a "
                                                            "cache)")]
    it_s: Annotated[Num, Field(description="predicted performance of all cores, it/s")]
    flop_s: Annotated[Num, Field(description="predicted performance of all cores, FLOP/s (it/s times FLOPs per "
                                             "iteration)")]
    rate_cl_per_cy: Annotated[Num, Field(description="units of work (cache lines) per cycle of all cores, CL/cy")]
    utilization: Annotated[Num, Field(description="memory-bus utilization u(n) of the busiest domain (0..1); null "
                                                  "when the data are in a cache")]
    limit: Annotated[str, Field(description=LIMIT)]
    measured_it_s: NotRequired[Annotated[Num, Field(description="--measured: the measured performance at this "
                                                                "core count, it/s (only where one was measured)")]]
    relative_error: NotRequired[Annotated[Num, Field(description="--measured: predicted / measured - 1 (only "
                                                                 "where measured)")]]


class ScalingCurve(Strict):
    """Predicted performance per core count by one multicore model
    (:class:`loopmodel.models.scaling.ScalingResult`; contention model: cross-architecture-machine-models.txt
    §3.4.4, eq. 5; saturation model: ecm-model-slides.txt "ECM model – saturation")."""

    model: Annotated[MulticoreModel, Field(description="multicore model: 'contention' (paper eq. 5) or "
                                                       "'saturation' (min(n P(1), P_sat))")]
    placement: Annotated[Placement, Field(description="memory pages in every ccNUMA domain used ('first-touch') or "
                                                      "all in one domain ('one-domain')")]
    data_in: Annotated[str, Field(description="memory level the data are in (e.g. 'MEM', 'L3', 'L1')")]
    p0: Annotated[Num, Field(description="contention parameter p0 used (dimensionless, in (0, 0.75]; kept also "
                                         "for the saturation model)")]
    saturation_cores: Annotated[Count | None, Field(description="n_s = ceil(T_ECM / T_Mem), cores per ccNUMA domain "
                                                                "that saturate the memory interface; null when "
                                                                "nothing saturates (no memory traffic)")]
    saturated_per_domain_it_s: Annotated[Num, Field(description="P_sat of one ccNUMA domain, it/s; null when "
                                                                "nothing saturates")]
    points: Annotated[list[ScalingPoint], Field(description="one prediction per core count, ascending")]


class ScalingDocument(Envelope):
    """``loopmodel scaling --json``: the single-core ECM basis of a kernel and its predicted performance per
    core count, one curve per multicore model, optionally compared with (and p0 fitted to) measured points."""

    kernel: Annotated[str, Field(description="the kernel file")]
    machine: Annotated[str, Field(description="name of the machine model")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value (elements or iterations)")]
    clock_Hz: Annotated[Num, Field(description="core clock of the prediction, Hz")]
    single_core_T_ECM_cy_per_cl: Annotated[Num, Field(description="single-core T_ECM for the data location, "
                                                                  "cy/CL")]
    memory_busy_cy_per_cl: Annotated[Num, Field(description="T_Mem, time the memory interface is busy per unit of "
                                                            "work of one core, cy/CL (0: data in a cache)")]
    iterations_per_cl: Annotated[Num, Field(description="iterations per unit of work (one cache line of the "
                                                        "written array), it/CL")]
    flops_per_it: Annotated[Num, Field(description="floating-point operations per iteration, FLOP/it")]
    cores_per_numa_domain: Annotated[Count, Field(description="cores per ccNUMA domain of the machine model")]
    curves: Annotated[list[ScalingCurve], Field(description="one curve per model (two with --model both)")]
    fitted_p0: NotRequired[Annotated[Num, Field(description="--fit-p0: p0 fitted to the measured points "
                                                            "(dimensionless)")]]
    fit_rms_relative_error: NotRequired[Annotated[Num, Field(description="--fit-p0: rms of the relative errors "
                                                                         "of the fitted contention model")]]
    notes: Annotated[list[str], Field(description="remarks on the single-core analysis (the notes the table "
                                                  "prints)")]


# --- app -------------------------------------------------------------------------------------

class AppKernel(Strict):
    """One kernel of the application: its single-core ECM prediction and its time per application
    iteration per core count (:class:`loopmodel.models.application.KernelPrediction`)."""

    name: Annotated[str, Field(description="kernel label from the application file")]
    file: Annotated[str, Field(description="kernel file (resolved path)")]
    count: Annotated[Count, Field(description="invocations per application iteration")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value of this kernel")]
    placement: Annotated[Placement, Field(description="memory pages in every ccNUMA domain used ('first-touch') or "
                                                      "all in one domain ('one-domain')")]
    iterations_per_invocation: Annotated[Count, Field(description="innermost iterations of one invocation")]
    units_cl_per_invocation: Annotated[Num, Field(description="units of work of one invocation, CL (cache lines "
                                                              "of the written array)")]
    incore_source: Annotated[Literal["analytic", "llvm-mca", "osaca"],
                             Field(description="in-core model that gave T_OL and T_nOL")]
    T_OL_cy_per_cl: Annotated[Num, Field(description="overlapping in-core time T_OL, cy/CL")]
    T_nOL_cy_per_cl: Annotated[Num, Field(description="non-overlapping in-core time T_nOL, cy/CL")]
    dependency_cy_per_it: Annotated[Num, Field(description="critical-path latency of a loop-carried dependency, "
                                                           "cy/it (0: none)")]
    data_location: Annotated[str, Field(description="the memory level the kernel's data come from (one core)")]
    selected_T_ECM_cy_per_cl: Annotated[Num, Field(description="single-core T_ECM for data_location, cy/CL")]
    notation: Annotated[str, Field(description="the ECM prediction in the papers' notation, "
                                               "'{ T_OL || T_nOL | T_L1L2 | ... } cy/CL'")]
    time_s: Annotated[dict[str, Num], Field(description="core count (as text) -> time of all invocations per "
                                                        "application iteration, s")]
    saturation_cores: Annotated[Count | None, Field(description="n_s, cores per ccNUMA domain that saturate the "
                                                                "memory interface; null when nothing saturates")]


class AppDocument(Envelope):
    """``loopmodel app --json``: an application (an ordered sequence of loop kernels) predicted as the sum of
    the kernels' times per application iteration (cross-architecture-machine-models.txt §5)."""

    application: Annotated[str, Field(description="application name (the file's name, else the file name)")]
    file: Annotated[str, Field(description="the application file")]
    machine: Annotated[str, Field(description="name of the machine model")]
    clock_Hz: Annotated[Num, Field(description="core clock of the prediction (after --clock), Hz")]
    model: Annotated[MulticoreModel, Field(description="multicore model: 'contention' or 'saturation'")]
    cores: Annotated[list[Count], Field(description="core counts predicted, ascending")]
    total_s: Annotated[dict[str, Num], Field(description="core count (as text) -> time of one application "
                                                         "iteration, s")]
    kernels: Annotated[list[AppKernel], Field(description="the kernels, in execution order")]
    notes: Annotated[list[str], Field(description="what the prediction leaves out (synchronisation) or rests on "
                                                  "(which probe -m host rests on); the notes the table prints")]


# --- energy ----------------------------------------------------------------------------------

class EnergyPower(Strict):
    """The chip power model W = W0 + (W1·f + W2·f²)·n in use (ecm-model-slides.txt, "A simple
    power model for multicore chips"; :func:`loopmodel.report.energy.power_dict`), base units."""

    W0_W: Annotated[Num, Field(description="static chip power W0, W")]
    W1_W_per_Hz: Annotated[Num, Field(description="dynamic power per active core, linear in the clock, W/Hz "
                                                  "(null where only per_core_W is known)")]
    W2_W_per_Hz2: Annotated[Num, Field(description="dynamic power per active core, quadratic in the clock, W/Hz^2 "
                                                   "(null where only per_core_W is known)")]
    per_core_W: Annotated[Num, Field(description="dynamic power per active core at at_clock_Hz, W, where W1 and W2 "
                                                 "are not known separately (a probe at one clock); else null")]
    at_clock_Hz: Annotated[Num, Field(description="the clock of per_core_W, Hz (null without it)")]
    clock_min_Hz: Annotated[Num, Field(description="lowest clock the chip can run at, Hz (null: not given)")]
    clock_max_Hz: Annotated[Num, Field(description="highest clock the chip can run at, Hz (null: not given)")]
    clock_step_Hz: Annotated[Num, Field(description="step between settable clocks, Hz (null: not given)")]
    source: Annotated[str, Field(description="where the coefficients come from (a citation, the probe, or the "
                                             "command line)")]
    notes: Annotated[list[str], Field(description="what the coefficients can and cannot say")]


class EnergyPoint(Strict):
    """One operating point (cores, clock): chip power, performance and energy to solution
    (:class:`loopmodel.models.power.OperatingPoint`)."""

    cores: Annotated[Count, Field(description="active cores n")]
    clock_Hz: Annotated[Num, Field(description="core clock f, Hz")]
    power_W: Annotated[Num, Field(description="chip power W(n, f) of all chips in use, W")]
    it_s: Annotated[Num, Field(description="performance P_ECM(n, f), it/s")]
    energy_J_per_unit: Annotated[Num, Field(description="energy to solution E = W / P per unit of work, J per "
                                                        "work_unit (J/it)")]
    work_unit: Annotated[Literal["it"], Field(description="the unit of work of the energy figures: 'it' (one loop "
                                                          "iteration)")]
    limit: Annotated[str, Field(description=LIMIT)]


class EnergySaving(Strict):
    """What the energy-optimal point saves, and gives up, against the performance-optimal one."""

    energy_fraction: Annotated[Num, Field(description="1 - E(energy optimum) / E(performance optimum), 0..1")]
    slowdown_fraction: Annotated[Num, Field(description="1 - P(energy optimum) / P(performance optimum), 0..1")]
    energy_J_per_unit: Annotated[Num, Field(description="E(performance optimum) - E(energy optimum), J per unit of "
                                                        "work (J/it)")]
    vs_all_cores_highest_clock_fraction: Annotated[Num, Field(description="1 - E(energy optimum) / E(reference), "
                                                                          "0..1; null without a reference point")]


class EnergyDocument(Envelope):
    """``loopmodel energy --json``: energy to solution and performance of a kernel per operating point (cores,
    clock), from the ECM and multicore models and the chip power model (ecm-model-slides.txt, "A simple power
    model for multicore chips" and the Z-plot after it), with the energy- and performance-optimal points."""

    kernel: Annotated[str, Field(description="the kernel file")]
    machine: Annotated[str, Field(description="name of the machine model")]
    defines: Annotated[dict[str, Count], Field(description="size constant -> value (elements or iterations)")]
    data_in: Annotated[str, Field(description="memory level the data are in (e.g. 'MEM', 'L1')")]
    power: Annotated[EnergyPower, Field(description="the chip power model used")]
    model: Annotated[MulticoreModel, Field(description="multicore model: 'contention' or 'saturation'")]
    points: Annotated[list[EnergyPoint], Field(description="every operating point, clocks ascending, then cores")]
    optimum: Annotated[EnergyPoint, Field(description="the energy-optimal point (least J/it)")]
    performance_optimum: Annotated[EnergyPoint, Field(description="the performance-optimal point (most it/s; among "
                                                                  "equals the least J/it)")]
    saving: Annotated[EnergySaving, Field(description="the energy optimum against the performance optimum")]
    reference: Annotated[EnergyPoint | None, Field(description="most cores at the highest clock (how a code is "
                                                               "often run); null when there is none")]
    notes: Annotated[list[str], Field(description="what the figures assume")]
