"""Names vulture (``vulture src/loopmodel .ci/vulture_whitelist.py --min-confidence 60``) reports as
unused that are used: by frameworks, by C code, by attribute access vulture cannot see. Bare names,
one group per reason."""
# ruff: noqa
# flake8: noqa

# Keys of the --json document types (report.doctypes): TypedDict fields, read by pydantic to
# write the JSON Schemas and to check documents
OMP_DYNAMIC, OMP_PLACES, OMP_PROC_BIND, T_ECM_MEM_cy_per_cl, T_ECM_cy_per_cl, T_OL_cy_per_cl, T_nOL_cy_per_cl,
T_transfer_cy_per_cl, W0_W, W1_W_per_Hz, W2_W_per_Hz2, address_B, address_step_B_per_it, analyzer,
analyzer_version, application, arithmetic_intensity_flop_per_B, array, arrays, assumed, at_clock_Hz,
balanced_ports_cy_per_pass, bandwidth_B_per_cy, bandwidth_B_s, bandwidth_kernel, bandwidth_no_wa_B_s,
bandwidth_source, basis, benchmark, block, block_label, block_throughput_cy_per_pass, bottleneck, bound,
busy_cy_per_cl, by_location, cache, cache_size_B, cached, cacheline_size_B, calls_per_repetition, capacity_B,
clock_Hz, clock_max_Hz, clock_min_Hz, clock_step_Hz, cold_single_sweep, compiled, compiler, compiler_flags,
compiler_version, components_cy_per_cl, condition, conditions, contributions, core_time_s, cores,
cores_per_numa_domain, count, counters, cov, cpu, cpu_performance_flop_s, cpu_performance_it_s,
cpu_roof_source, cpu_time_cy_per_cl, cpus, curves, cy_per_cl, cy_per_it, data_in, data_location, data_set_B,
defines, definition, dependency_cy_per_it, dimension, dims, distance_it, ecm, element_size_B,
energy_J_per_unit, energy_fraction, environment, error, evicts_cl_per_cl, evicts_per_it, file,
fit_rms_relative_error, fitted_p0, flags, flop_s, flops_per_it, fma_candidates_per_it, formula, fulfilled,
held, hints, hits_cl_per_cl, hits_per_it, host, in_B_per_cl, incore, incore_source, index,
instructions_per_it, intensity_flop_per_B, iqr_s_per_it, it_s, iteration, iterations_per_cl,
iterations_per_invocation, iterations_per_pass, kernel, kernels, kind, label, largest_block_size,
largest_size, layer_conditions, level, levels, limit, line, line_size_B, load_ports_cy_per_pass,
load_volume_B_per_cl, loads_cl_per_cl, loads_per_it, longest_chain, loopmodel_version, loops, lup_s, machine,
max_flop_s, max_it_s, max_lup_s, max_size_exact, measured, measured_cores, measured_it_s, measured_iterations,
measured_max_cy_per_cl, measured_max_flop_s, measured_median_cy_per_cl, measured_median_flop_s,
measured_min_cy_per_cl, measured_min_flop_s, measured_time_s_per_it, measurement, median_time_s,
memory_B_per_it, memory_busy_cy_per_cl, memory_time_s, min_time_s, misses_cl_per_cl, misses_per_it, model,
model_name, model_traffic_B_s, multicore_T_ECM_MEM_cy_per_cl, n_elements, name, notation, notes, numa_domains,
omp_wait_policy, openmp, operations_per_it, optimum, origin, out_B_per_cl, overhead_time_s, overlapping, p0,
peak_flop_s, penalty_cy_per_cl, per_core_W, performance, performance_flop_s, performance_it_s,
performance_optimum, phases, pinned, placement, pointer_increment_B_per_pass, points, policy,
ports_cy_per_pass, power, power_W, pragmas, predicted_cy_per_cl, predicted_flop_s, prediction_notation,
program, rate_cl_per_cy, reassociable, reassociation, recurrences, reference, relative_error, repeats,
repetitions, requirement_B, reuse_distance_it, roofline, roofline_asm, roofs, saturated_per_domain_it_s,
saturation_cores, saving, schema_version, selected, sets, share, simd_lanes, simulated_cy_per_pass,
simulated_iterations, simulation, single_core_T_ECM_cy_per_cl, size_B, slowdown_fraction, source, speedup,
spread, start, step, stop_exclusive, store_volume_B_per_cl, stores_cl_per_cl, stores_per_it, swaps, sweeps,
threads, time_cy_per_cl, time_max_cy_per_cl, time_max_cy_per_it, time_max_s_per_it, time_max_s_per_sweep,
time_median_cy_per_cl, time_median_cy_per_it, time_median_s_per_it, time_median_s_per_sweep,
time_min_cy_per_cl, time_min_cy_per_it, time_min_s_per_it, time_min_s_per_sweep, time_s, time_s_per_it,
total_s, total_time_s, traffic, traffic_predictor, transition, transition_size, transitions, type,
unit_of_work, units_cl_per_invocation, unknown, utilization, variable, volume_B_per_cl, volume_B_per_it,
volume_no_wa_B_per_it, vs_all_cores_highest_clock_fraction, warmup_iterations, ways, whole_data_set,
work_unit, write_allocate, write_back

# The package root's lazy public names: module hooks called by Python
__getattr__, __dir__

# pydantic model configuration (fileio.app_file)
model_config

# pycparser NodeVisitor methods, called by name by NodeVisitor.visit (fileio.omp_program)
visit_ArrayRef, visit_ID, visit_FuncCall

# cffi struct field written for the C cache simulator (cachesim.hierarchy)
nacc

# dataclass fields set positionally by their constructors and kept in the records (reports,
# caches, machine files): cachesim.nest.RunResult, compiled.asm.AsmBlock and KernelShape,
# models.ecm.ECMResult, predictors.simulation.SimulationInfo, machine.model (machine-file keys)
stopped, first_line, max_element_bytes, memory_contribution, sweep_mode, micro_architecture, ADD, MUL, FMA

# the operation vocabulary of the kernel IR, referenced by docstrings (ir.kernel)
OPERATION_TYPES

# documented public functions and methods used by the tests only (kept: the tests check the
# simulator, the coherence states, the define syntax and the energy model through them)
trace, contents, assign, state_at, parse_define, expand, core_bound_optimal_clock, bandwidth_flags
