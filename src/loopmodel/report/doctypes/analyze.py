"""Document types of ``analyze`` (see :mod:`loopmodel.report.doctypes`)."""
from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import NotRequired

from .base import Count, Envelope, ErrorStats, Num, NumOrInf, Strict


class KernelLoop(Strict):
    """One loop of the perfect loop nest: ``for (index = start; index < stop; index += step)``."""

    index: Annotated[str, Field(description="loop index variable")]
    start: Annotated[str, Field(description="first index value (expression in outer indices and size constants)")]
    stop_exclusive: Annotated[str, Field(description="index bound, exclusive (expression)")]
    step: Annotated[int, Field(description="constant index increment per iteration (negative: counting down)")]


class KernelArray(Strict):
    """One array declared by the kernel."""

    type: Annotated[str, Field(description="C element type (double, float)")]
    element_size_B: Annotated[int, Field(description="bytes per element, B")]
    dims: Annotated[list[str], Field(description="declared extent of each dimension, outermost first (expressions)")]


class Recurrence(Strict):
    """A loop-carried dependency of the innermost loop (a reduction or a recursive array access)."""

    variable: Annotated[str, Field(description="the scalar or array written and read back")]
    distance_it: Annotated[int, Field(description="iterations between the write and the dependent read, it")]
    longest_chain: Annotated[list[str], Field(description="operations on the longest path from the dependent "
                                                          "read to the write")]
    reassociable: Annotated[bool, Field(description="a reduction a compiler may split into partial sums")]


class Kernel(Strict):
    """The parsed kernel: loop nest, arrays and operation counts per innermost iteration."""

    file: Annotated[str, Field(description="kernel file name")]
    loops: Annotated[list[KernelLoop], Field(description="the loop nest, outermost first")]
    arrays: Annotated[dict[str, KernelArray], Field(description="array name -> declaration")]
    loads_per_it: Annotated[int, Field(description="load instructions (scalar) per iteration, loop-invariant "
                                                   "accesses excluded")]
    stores_per_it: Annotated[int, Field(description="store instructions (scalar) per iteration")]
    operations_per_it: Annotated[dict[str, int], Field(description="operation type (ADD, MUL, DIV, ...) -> count "
                                                                   "per iteration, before FMA fusion")]
    fma_candidates_per_it: Annotated[int, Field(description="additions fed directly by a multiplication "
                                                            "(fusable to FMA) per iteration")]
    flops_per_it: Annotated[int, Field(description="floating-point operations per iteration (ADD+MUL+DIV+SQRT), "
                                                   "FLOP/it")]
    recurrences: Annotated[list[Recurrence], Field(description="loop-carried dependencies of the innermost loop")]
    pragmas: Annotated[list[str], Field(description="#pragma lines found before the loops")]
    swaps: Annotated[list[list[str]], Field(description="(x, y) array-name pairs of the swap(x, y) calls after "
                                                        "the nest, in order")]


class Machine(Strict):
    """The machine model the analysis used."""

    name: Annotated[str, Field(description="machine model name")]
    model_name: Annotated[str, Field(description="CPU model name")]
    clock_Hz: Annotated[Num, Field(description="core clock, Hz")]
    cacheline_size_B: Annotated[Num, Field(description="cache line size, B")]


class UnitOfWork(Strict):
    """The unit of work all per-CL figures refer to: one cache line of the written array."""

    definition: Annotated[str, Field(description="the rule, in words")]
    array: Annotated[str | None, Field(description="the array whose cache line is the unit (null: no array "
                                                   "moves with the inner loop)")]
    basis: Annotated[Literal["written", "read", "none"], Field(
        description="written array, read arrays when no written array moves with the inner loop, or none when "
                    "no array does (a cache line's worth of the loop's floating-point scalar values)")]
    address_step_B_per_it: Annotated[Num, Field(description="address step of that array per iteration, B/it "
                                                            "(0 with basis none)")]
    iterations_per_cl: Annotated[Num, Field(description="iterations per unit of work (CL), it/CL")]


class LayerConditionState(Strict):
    """One layer-condition state of a cache level: a reuse distance and whether the cache
    covers it (kerncraft-tool-paper.txt §2.4.2, Listing 5)."""

    condition: Annotated[str, Field(description="the condition C_req(t) <= cache size in B, or 'none (no reuse)'")]
    reuse_distance_it: Annotated[str, Field(description="reuse distance t, iterations (expression in the sizes)")]
    dimension: Annotated[int, Field(description="0 no reuse, 1 within a row, 2 across rows, 3 across planes")]
    requirement_B: Annotated[Num, Field(description="C_req(t) evaluated at the sizes, B")]
    fulfilled: Annotated[bool, Field(description="the condition holds at the sizes")]
    hits_per_it: Annotated[int, Field(description="accesses per iteration that hit in this state")]
    misses_per_it: Annotated[int, Field(description="accesses per iteration that miss in this state")]
    evicts_per_it: Annotated[Num, Field(description="elements of written arrays written back to the next level "
                                                    "per iteration (one per written array streaming through "
                                                    "the level; 1/trips for one kept over an outer loop's "
                                                    "trips)")]
    max_size_exact: Annotated[NumOrInf, Field(description="largest real value of the solved-for size with the "
                                                          "condition holding ('inf': any; null: none)")]
    transition_size: Annotated[NumOrInf, Field(description="max_size_exact rounded to the nearest integer "
                                                           "(Listing 5)")]
    largest_block_size: Annotated[NumOrInf, Field(description="max_size_exact rounded down (largest block "
                                                              "size keeping the condition)")]


class WholeDataSetCondition(Strict):
    """The whole-data-set condition D <= C_all of repeated sweeps (cross-architecture-machine-models.txt
    §3.4.4): when it holds the level keeps the data between sweeps."""

    data_set_B: Annotated[Num, Field(description="bytes of all arrays the nest touches, B")]
    capacity_B: Annotated[Num, Field(description="effective capacity compared with (a victim cache adds the "
                                                 "level above), B")]
    condition: Annotated[str, Field(description="the condition D <= capacity in B")]
    fulfilled: Annotated[bool, Field(description="the condition holds at the sizes")]
    held: Annotated[bool, Field(description="this level or one closer to the core holds the whole data set")]
    max_size_exact: Annotated[NumOrInf, Field(description="largest real value of the solved-for size with the "
                                                          "condition holding ('inf': any; null: none)")]
    transition_size: Annotated[NumOrInf, Field(description="max_size_exact rounded to the nearest integer")]
    largest_size: Annotated[NumOrInf, Field(description="max_size_exact rounded down: the largest size keeping "
                                                        "the whole data set (the figure the text report prints)")]


class LayerCondition(Strict):
    """Layer conditions of one cache level (kerncraft-tool-paper.txt §2.4.2)."""

    level: Annotated[str, Field(description="cache level name")]
    cache_size_B: Annotated[Num, Field(description="effective size (size x cache factor / cores sharing it), B")]
    variable: Annotated[str | None, Field(description="size constant the transition sizes are solved for "
                                                      "(null: the kernel has none)")]
    conditions: Annotated[list[LayerConditionState], Field(description="the states, smallest reuse distance "
                                                                       "first")]
    selected: Annotated[int, Field(description="index into conditions of the state the level is in within a "
                                               "sweep")]
    whole_data_set: Annotated[WholeDataSetCondition | None, Field(description="whole-data-set condition (null "
                                                                              "for --sweeps single)")]


class TrafficLevel(Strict):
    """Data traffic on the link between a level and the next one away from the core, per unit of work."""

    level: Annotated[str, Field(description="cache level name (L1: the L1<->L2 link)")]
    loads_cl_per_cl: Annotated[Num, Field(description="cache lines toward the core, CL/CL")]
    stores_cl_per_cl: Annotated[Num, Field(description="cache lines away from the core, CL/CL")]
    volume_B_per_cl: Annotated[Num, Field(description="bytes both directions, B/CL")]
    load_volume_B_per_cl: Annotated[Num, Field(description="bytes toward the core, B/CL")]
    store_volume_B_per_cl: Annotated[Num, Field(description="bytes away from the core, B/CL")]
    hits_cl_per_cl: Annotated[Num, Field(description="demand lookups hitting in the level, per CL")]
    misses_cl_per_cl: Annotated[Num, Field(description="demand lookups missing in the level, per CL")]
    evicts_cl_per_cl: Annotated[Num, Field(description="cache lines replaced in the level, CL/CL")]


class ProbeCheckRow(Strict):
    """One FP class of the compiled block (operation, register width): the analyzer's figure next to
    the one the probe measured on the host (:class:`loopmodel.compiled.checked.CheckRow`)."""

    op: Annotated[Literal["ADD", "MUL", "FMA", "DIV", "SQRT"], Field(description="operation class")]
    width_B: Annotated[int, Field(description="register width, B (8: scalar double)")]
    kind: Annotated[Literal["latency", "throughput"], Field(description="latency, or reciprocal throughput")]
    instruction: Annotated[str, Field(description="the instruction whose analyzer figure is used")]
    count_per_pass: Annotated[int, Field(description="instructions of the class per pass of the block")]
    analyzer_cy: Annotated[Num, Field(description="analyzer's figure, cy (per instruction for throughput)")]
    probe_cy: Annotated[Num, Field(description="probe's figure, cy (per instruction for throughput)")]
    agrees: Annotated[bool, Field(description="within 15 % of the probe's")]


class CompiledLoopDoc(Strict):
    """One loop position of the compiled nest, from the compiler's optimisation report
    (:class:`loopmodel.compiled.loop_report.CompiledLoop`)."""

    depth: Annotated[int, Field(description="position in the nest, 0 outermost")]
    index: Annotated[str, Field(description="loop index that runs there (empty: the report does not say)")]
    vector_B: Annotated[int | None, Field(description="vector size of the vectorised loop, B (null: not "
                                                      "vectorised)")]
    epilogue_vector_B: Annotated[int | None, Field(description="vector size of the vectorised epilogue, B")]
    versioned_for_aliasing: Annotated[bool, Field(description="a run-time overlap check picks the vector or scalar "
                                                              "version")]
    unroll_factor: Annotated[int | None, Field(description="copies of the body per pass after unrolling")]
    completely_unrolled_iterations: Annotated[int | None, Field(description="iterations of a loop unrolled "
                                                                               "completely (the loop is gone)")]


class CompiledNestDoc(Strict):
    """What the compiler did to the kernel's loop nest (gcc's ``-fopt-info-vec-loop-optimized``)."""

    compiler: Annotated[str, Field(description="compiler whose report this is")]
    interchanged: Annotated[bool, Field(description="the compiler interchanged loops of the nest")]
    order: Annotated[list[str], Field(description="executed loop order, outermost first (empty: not reported)")]
    loops: Annotated[list[CompiledLoopDoc], Field(description="the loops by depth, outermost first")]


class CompiledBlock(Strict):
    """The compiled loop block and the analyzer's (llvm-mca, OSACA) port pressure per pass of it
    (kerncraft-tool-paper.txt §2.3)."""

    analyzer: Annotated[Literal["llvm-mca", "osaca"], Field(description="in-core analyzer")]
    analyzer_version: Annotated[str, Field(description="analyzer version")]
    compiler: Annotated[str, Field(description="compiler command")]
    compiler_version: Annotated[str, Field(description="compiler version")]
    flags: Annotated[list[str], Field(description="compiler flags")]
    block_label: Annotated[str, Field(description="assembly label of the analyzed loop block")]
    block: Annotated[str, Field(description="assembly text of the block")]
    iterations_per_pass: Annotated[Num, Field(description="kernel iterations per pass of the block, it")]
    pointer_increment_B_per_pass: Annotated[Num, Field(description="bytes the pointers advance per pass, B")]
    ports_cy_per_pass: Annotated[dict[str, Num], Field(description="port -> pressure reported by the analyzer, "
                                                                   "cy/pass")]
    block_throughput_cy_per_pass: Annotated[Num, Field(description="throughput bound of the block, cy/pass")]
    simulated_cy_per_pass: Annotated[Num, Field(description="analyzer's simulated time per pass, cy/pass")]
    balanced_ports_cy_per_pass: Annotated[dict[str, Num], Field(description="port -> pressure balanced as the "
                                                                            "ECM counts it, cy/pass")]
    load_ports_cy_per_pass: Annotated[dict[str, Num], Field(description="port -> pressure of the loads, cy/pass")]
    loops: NotRequired[Annotated[CompiledNestDoc, Field(
        description="what the compiler did to each loop of the nest, from its optimisation report (gcc only)")]]
    probe_check: NotRequired[Annotated[list[ProbeCheckRow], Field(
        description="the analyzer's latency and reciprocal throughput per FP class of the block next to the "
                    "probe's (host models only)")]]


class Reassociation(Strict):
    """Whether the analytic in-core model split reductions into partial sums, and why."""

    assumed: Annotated[bool, Field(description="reductions taken as split into partial sums")]
    source: Annotated[str, Field(description="why: the option given, or the compiler and flags in use")]


class IncoreMeasurement(Strict):
    """The benchmark behind a measured in-core time (``--incore measured``): the kernel run on this
    host with its data in L1 (kerncraft-tool-paper.txt §2.3, benchmark mode)."""

    defines: Annotated[dict[str, int], Field(description="the sizes it ran at (scaled down from the requested "
                                                         "ones so that the data set fits in half of L1)")]
    data_set_B: Annotated[Num, Field(description="the kernel's arrays at those sizes, B")]
    l1_B: Annotated[Num, Field(description="the L1 capacity of the machine model, B")]
    inner_trips: Annotated[int | None, Field(description="inner-loop iterations per pass at those sizes (null: "
                                                         "they depend on an outer index)")]
    time_min_cy_per_cl: Annotated[Num, Field(description="fastest run (min-of-K), cy/CL: T_OL")]
    time_median_cy_per_cl: Annotated[Num, Field(description="median run, cy/CL")]
    time_max_cy_per_cl: Annotated[Num, Field(description="slowest run, cy/CL")]
    spread: Annotated[Num, Field(description="max / min - 1 over the runs")]
    repetitions: Annotated[int, Field(description="runs taken (K)")]
    clock_Hz: Annotated[Num, Field(description="core clock measured around the runs, Hz")]
    compiler: Annotated[str, Field(description="compiler command of the benchmark")]
    flags: Annotated[list[str], Field(description="its flags")]
    cached: Annotated[bool, Field(description="read from the per-user cache of benchmarks")]
    model_T_nOL_cy_per_cl: Annotated[Num, Field(description="the in-core model's T_nOL that splits the measured "
                                                             "time, cy/CL (T_nOL is it, capped so that the ECM time "
                                                             "in L1 is the measured time)")]


class Incore(Strict):
    """In-core execution time per unit of work (kerncraft-tool-paper.txt §2.3, eq. 1-2): analytic
    model, llvm-mca/OSACA on the compiled kernel, or the kernel measured with its data in L1."""

    source: Annotated[Literal["analytic", "llvm-mca", "osaca", "measured"], Field(
        description="in-core analysis used (measured: the kernel benchmarked on this host with its data in L1)")]
    T_OL_cy_per_cl: Annotated[Num, Field(description="overlapping in-core time T_OL, cy/CL (null: unknown, "
                                                     "the machine model lacks a throughput or latency)")]
    T_nOL_cy_per_cl: Annotated[Num, Field(description="non-overlapping (load/store) time T_nOL, cy/CL")]
    simd_lanes: Annotated[int, Field(description="SIMD lanes used (1 = scalar; compiled: iterations per pass)")]
    components_cy_per_cl: Annotated[dict[str, Num], Field(description="contribution (LD, ST, op types, ports, "
                                                                      "issue, dependency, ...) -> cy/CL")]
    operations_per_it: Annotated[dict[str, int], Field(description="operation type -> count per iteration after "
                                                                   "FMA fusion (empty for compiled analyses)")]
    dependency_cy_per_it: Annotated[Num, Field(description="critical-path latency of loop-carried dependencies, "
                                                           "cy/it (0: none; null: latency unknown)")]
    compiled: NotRequired[Annotated[CompiledBlock, Field(description="the compiled block (llvm-mca or OSACA "
                                                                     "analysis only)")]]
    reassociation: NotRequired[Annotated[Reassociation, Field(description="partial sums assumed (analytic "
                                                                          "model only)")]]
    origin: NotRequired[Annotated[dict[str, str], Field(description="T_OL, T_nOL -> what sets it: the port(s) "
                                                                    "and cy per pass, the loop-carried dependency "
                                                                    "chain, or the L1 data path (compiled analyses "
                                                                    "and measured only)")]]
    measurement: NotRequired[Annotated[IncoreMeasurement, Field(description="the benchmark of the measured in-core "
                                                                            "time (measured only)")]]


class EcmContribution(Strict):
    """One data-transfer contribution of the ECM model: a link between two levels
    (cross-architecture-machine-models.txt §3.4.2, eq. 3)."""

    name: Annotated[str, Field(description="link name (L1L2, L2L3, L3MEM, ...)")]
    time_cy_per_cl: Annotated[Num, Field(description="busy time + latency penalty, cy/CL")]
    busy_cy_per_cl: Annotated[Num, Field(description="link busy time, cy/CL")]
    penalty_cy_per_cl: Annotated[Num, Field(description="latency penalty, cy/CL")]
    in_B_per_cl: Annotated[Num, Field(description="bytes toward the core, B/CL")]
    out_B_per_cl: Annotated[Num, Field(description="bytes away from the core, B/CL")]
    bandwidth_B_per_cy: Annotated[list[Num], Field(description="bandwidth used, [toward core] or [toward core, "
                                                               "away from core], B/cy")]
    bandwidth_source: Annotated[str, Field(description="where the bandwidth comes from: the machine model, "
                                                       "--mem-bw (a bus bandwidth, write-allocate traffic "
                                                       "included, used as given), or a benchmark kernel, its "
                                                       "cores, its figure as reported and the write-allocate "
                                                       "factor that makes it a bus bandwidth")]


class EcmLocation(Strict):
    """The ECM prediction with the data in one memory level."""

    T_ECM_cy_per_cl: Annotated[Num, Field(description="T_ECM for data in this level, cy/CL (null: T_OL "
                                                      "unknown)")]
    contributions: Annotated[list[EcmContribution], Field(description="data-transfer contributions, core side "
                                                                      "first")]


class Performance(Strict):
    """One time per unit of work in every unit ``--unit`` offers (null: unknown)."""

    cy_per_cl: Annotated[Num, Field(description="cy/CL")]
    cy_per_it: Annotated[Num, Field(description="cy/it")]
    it_s: Annotated[NumOrInf, Field(description="it/s ('inf' for a time of 0)")]
    flop_s: Annotated[NumOrInf, Field(description="FLOP/s ('inf' for a time of 0)")]
    lup_s: Annotated[NumOrInf, Field(description="LUP/s, one lattice-site update per iteration ('inf' for a time "
                                                 "of 0)")]


class Ecm(Strict):
    """Execution-Cache-Memory model (cross-architecture-machine-models.txt §3.4.2-3.4.4;
    ecm-model-slides.txt): contributions, prediction per data location, saturation."""

    T_OL_cy_per_cl: Annotated[Num, Field(description="overlapping in-core time T_OL, cy/CL (null: unknown)")]
    T_nOL_cy_per_cl: Annotated[Num, Field(description="non-overlapping in-core time T_nOL, cy/CL")]
    contributions: Annotated[list[EcmContribution], Field(description="data-transfer contributions for data in "
                                                                      "memory, core side first")]
    by_location: Annotated[dict[str, EcmLocation], Field(description="level -> prediction with the data in it")]
    memory_busy_cy_per_cl: Annotated[Num, Field(description="T_Mem: time the memory interface is busy (no "
                                                            "latency penalties), cy/CL")]
    T_ECM_cy_per_cl: Annotated[dict[str, Num], Field(description="level -> single-core T_ECM for data there, "
                                                                 "cy/CL (null: T_OL unknown)")]
    T_transfer_cy_per_cl: Annotated[dict[str, Num], Field(description="level -> eq. 4 without T_OL (data-transfer "
                                                                      "part of T_ECM), cy/CL")]
    unknown: Annotated[str | None, Field(description="why T_OL and T_ECM are unknown (null: all known)")]
    overlapping: Annotated[list[str], Field(description="contributions that overlap (machine model)")]
    saturation_cores: Annotated[Count | None, Field(description="n_s = ceil(T_ECM^Mem / T_Mem), cores per ccNUMA "
                                                                "domain (null: no memory traffic or unknown)")]
    saturated_per_domain_it_s: Annotated[Num, Field(description="P_sat of one ccNUMA domain, it/s (null: no "
                                                                "memory traffic)")]
    notation: Annotated[str, Field(description="{ T_OL || T_nOL | T_L1L2 | ... } cy/CL")]
    prediction_notation: Annotated[str, Field(description="{ T_ECM^L1 \\ T_ECM^L2 \\ ... } cy/CL")]
    data_location: Annotated[str, Field(description="the memory level the data come from (L1 ... MEM)")]
    selected_T_ECM_cy_per_cl: Annotated[Num, Field(description="single-core T_ECM for data_location (one of --cores "
                                                               "cores), cy/CL (null: unknown)")]
    multicore_model: Annotated[str, Field(description="n-core model of multicore_cy_per_cl: contention "
                                                      "(cross-architecture paper eq. 5) or saturation")]
    multicore_cy_per_cl: Annotated[Num, Field(description="aggregate time of --cores cores, data in data_location, "
                                                          "cy/CL (null: unknown); row --cores of 'scaling --model "
                                                          "multicore_model'")]
    performance: Annotated[Performance, Field(description="multicore_cy_per_cl in every unit")]


class RooflineLevel(Strict):
    """One bandwidth roof (kerncraft-tool-paper.txt §1.2.1, §2.3): the link into a level."""

    level: Annotated[str, Field(description="L1 (registers<->L1), L2 (L1<->L2), ..., MEM")]
    volume_B_per_cl: Annotated[Num, Field(description="data volume on the link, B/CL")]
    intensity_flop_per_B: Annotated[Num, Field(description="arithmetic intensity, FLOP/B (null: no FLOPs)")]
    bandwidth_B_s: Annotated[Num, Field(description="measured streaming bandwidth, B/s; where the machine model has "
                                                    "no measurement for the level, derived from its ECM transfer "
                                                    "rates (bandwidth_kernel 'ECM transfer rate', with a note)")]
    bandwidth_kernel: Annotated[str, Field(description="benchmark kernel of the bandwidth ('ECM transfer rate': "
                                                       "derived from the machine model's link rates, not measured)")]
    measured_cores: Annotated[int, Field(description="core count of the bandwidth measurement (summed over the "
                                                     "ccNUMA domains whose bandwidths are added; the cores of the "
                                                     "prediction where derived from the ECM transfer rates)")]
    performance_flop_s: Annotated[NumOrInf, Field(description="roof, FLOP/s (null for a kernel without FLOPs; "
                                                              "'inf': no data on this link)")]
    performance_it_s: Annotated[NumOrInf, Field(description="roof, it/s (it/CL x clock / time_cy_per_cl; 'inf': no "
                                                            "data on this link)")]
    time_cy_per_cl: Annotated[NumOrInf, Field(description="time on this roof, cy/CL ('inf': a bandwidth of 0)")]


class Roofline(Strict):
    """Roofline model (kerncraft-tool-paper.txt §1.2.1, §2.3, Listing 4); RooflineASM takes the CPU roof
    from the compiled block."""

    cores: Annotated[int, Field(description="core count of the prediction")]
    cpu_performance_flop_s: Annotated[Num, Field(description="CPU roof, FLOP/s (null: unknown, or a kernel "
                                                             "without FLOPs)")]
    cpu_performance_it_s: Annotated[NumOrInf, Field(description="CPU roof, it/s (it/CL x clock / "
                                                                "cpu_time_cy_per_cl; null: unknown)")]
    cpu_time_cy_per_cl: Annotated[Num, Field(description="CPU roof, cy/CL (null: unknown)")]
    cpu_roof_source: Annotated[str, Field(description="'T_OL of the <source> in-core model' (the in-core "
                                                      "time ECM uses), 'peak FLOP/s (T_OL unknown)', or the "
                                                      "analyzer of the compiled block")]
    levels: Annotated[list[RooflineLevel], Field(description="bandwidth roofs, core side first")]
    bottleneck: Annotated[str | None, Field(description="CPU or the level of the limiting roof (null: unknown)")]
    performance_flop_s: Annotated[NumOrInf, Field(description="predicted performance, FLOP/s (null: unknown, or a "
                                                              "kernel without FLOPs; 'inf': a time of 0)")]
    performance_it_s: Annotated[NumOrInf, Field(description="predicted performance, it/s (null: unknown; 'inf': a "
                                                            "time of 0)")]
    time_cy_per_cl: Annotated[Num, Field(description="predicted time, cy/CL (null: unknown)")]
    unknown: Annotated[str | None, Field(description="why the CPU roof is unknown (null: known)")]


class SimulatedArray(Strict):
    """Placement of one array in the cache simulation."""

    address_B: Annotated[int, Field(description="start address, B")]
    size_B: Annotated[int, Field(description="array size, B")]


class SimulatedLevel(Strict):
    """One simulated cache level."""

    level: Annotated[str, Field(description="cache level name")]
    sets: Annotated[int, Field(description="number of sets")]
    ways: Annotated[int, Field(description="associativity")]
    line_size_B: Annotated[int, Field(description="cache line size, B")]
    policy: Annotated[Literal["LRU", "FIFO", "RANDOM"], Field(description="replacement policy (PLRU simulated "
                                                                          "as LRU)")]
    write_allocate: Annotated[bool, Field(description="stores allocate lines")]
    write_back: Annotated[bool, Field(description="write-back (false: write-through)")]
    type: Annotated[Literal["inclusive", "non-inclusive", "victim"], Field(description="cache type")]


class Simulation(Strict):
    """How the cache simulation ran (kerncraft-tool-paper.txt §2.4.1)."""

    measured_iterations: Annotated[int, Field(description="inner iterations counted in the measurement")]
    simulated_iterations: Annotated[int, Field(description="inner iterations simulated in total (warm-up "
                                                           "included)")]
    warmup_iterations: Annotated[int, Field(description="inner iterations before the caches counted as warm")]
    sweeps: Annotated[int, Field(description="sweeps of the loop nest started")]
    cold_single_sweep: Annotated[bool, Field(description="the measurement is one cold sweep, counted whole")]
    arrays: Annotated[dict[str, SimulatedArray], Field(description="array name -> placement")]
    levels: Annotated[list[SimulatedLevel], Field(description="simulated levels, core side first")]


class ErrorBand(ErrorStats):
    """The host validation's |relative error| (predicted / measured - 1) for this prediction's
    regime: the most specific entry of the machine model's ``probe.validation`` with enough cases."""

    basis: Annotated[str, Field(description="which entry: 'L2 / stencil' (data location and regime, the "
                                            "largest p90 of the prediction's regimes), 'stencil' (regime), "
                                            "'L2' (data location) or 'overall'")]


class Confidence(Strict):
    """How far to trust the prediction: regime tags, the host's error band, cautions."""

    regimes: Annotated[list[str], Field(description="regime tags of the kernel at these sizes (streaming, "
                                                    "stencil, latency-bound, near-capacity, ...)")]
    level: Annotated[str, Field(description="the prediction's data location (L1 .. MEM)")]
    band: Annotated[ErrorBand | None, Field(description="the host validation's error for this regime (null: "
                                                        "the machine model has no validation with enough cases)")]
    notes: Annotated[list[str], Field(description="regimes known to be poorly modelled: from the host's "
                                                  "validation, or cautions where it has no figures")]


class AnalyzeDocument(Envelope):
    """``loopmodel analyze --json``: one analysis of a kernel on a machine at one set of sizes
    (a -D range prints one document per line, JSON Lines)."""

    kernel: Annotated[Kernel, Field(description="the parsed kernel")]
    machine: Annotated[Machine, Field(description="the machine model")]
    defines: Annotated[dict[str, int], Field(description="size constant -> value")]
    cores: Annotated[int, Field(description="active cores (--cores)")]
    sweeps: Annotated[Literal["repeated", "single"], Field(description="sweep mode (--sweeps)")]
    iterations_per_cl: Annotated[Num, Field(description="iterations per unit of work, it/CL")]
    unit_of_work: Annotated[UnitOfWork, Field(description="the unit all per-CL figures refer to")]
    layer_conditions: Annotated[list[LayerCondition], Field(description="per cache level, core side first (empty "
                                                                        "when layer conditions do not apply)")]
    traffic: Annotated[list[TrafficLevel], Field(description="predicted traffic per link, core side first")]
    notes: Annotated[list[str], Field(description="remarks on the analysis")]
    traffic_predictor: Annotated[Literal["LC", "SIM"], Field(description="layer conditions or cache simulation")]
    incore: Annotated[Incore | None, Field(description="in-core analysis (null when no requested model needs it)")]
    ecm: NotRequired[Annotated[Ecm, Field(description="ECM model (-p ECM)")]]
    roofline: NotRequired[Annotated[Roofline, Field(description="Roofline model (-p Roofline; absent when it "
                                                                "was skipped)")]]
    roofline_asm: NotRequired[Annotated[Roofline, Field(description="Roofline with the CPU roof from the compiled "
                                                                    "block (-p RooflineASM)")]]
    simulation: NotRequired[Annotated[Simulation, Field(description="cache simulation run (-P sim, or where "
                                                                    "layer conditions do not apply)")]]
    confidence: Annotated[Confidence | None, Field(description="how far to trust the prediction (null: not "
                                                               "assessed)")]
