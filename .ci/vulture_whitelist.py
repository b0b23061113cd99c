"""Names vulture (``vulture src/loopmodel .ci/vulture_whitelist.py --min-confidence 60``) reports as
unused that are used: by frameworks, by C code, by attribute access vulture cannot see. Bare names,
one group per reason. The --json document types (report/doctypes, TypedDict declarations whose
keys pydantic reads) are left out of the scan (.ci/run: --exclude)."""
# ruff: noqa
# flake8: noqa

# The package root's lazy public names: module hooks called by Python
__getattr__, __dir__

# pcpp's hooks, called by its Preprocessor (fileio.c_preprocess)
on_error, on_directive_unknown, on_include_not_found, on_unknown_macro_in_expr, on_file_open, rewrite_paths

# pydantic model configuration (fileio.app_file)
model_config

# pycparser NodeVisitor methods, called by name by NodeVisitor.visit (fileio.omp_program, fileio.c_print)
visit_ArrayRef, visit_ID, visit_FuncCall, visit_Pragma

# cffi struct field written for the C cache simulator (cachesim.hierarchy)
nacc

# dataclass fields set positionally by their constructors and kept in the records (reports,
# caches, machine files): cachesim.nest.RunResult, compiled.asm.AsmBlock and KernelShape,
# models.ecm.ECMResult, predictors.simulation.SimulationInfo, machine.model (machine-file keys)
stopped, first_line, max_element_bytes, memory_contribution, sweep_mode, micro_architecture, ADD, MUL, FMA

# the operation vocabulary of the kernel IR, referenced by docstrings (ir.kernel)
OPERATION_TYPES

# inspection API: the cache simulator's (trace, contents: used by benchmarks/pycachesim_suite.py and
# the equivalence tests), the coherence chunk states' (assign, state_at), the bandwidth
# benchmark's build flags (bandwidth_flags) and the size columns built from per-size programs
# (ir.omp_sizes.program_sizes: tests/test_omp_sizes.py), read by tests and benchmarks to check
# the model
trace, contents, assign, state_at, bandwidth_flags, program_sizes

# the Python API: a documented constructor, a property of Result, Jupyter's display hook, and a
# function reached through the package root's lazy names only (loopmodel.omp_sweep)
from_file, layer_conditions, _repr_html_, omp_sweep

# a study's table in memory (workflows.sweep.run_study): the library counterpart of
# `loopmodel sweep STUDY` (which writes rows as they come), used by the tests and benchmarks
run_study

