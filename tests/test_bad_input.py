"""Bad input through the real command line: exit status 2 and exactly one line on stderr
that starts with 'loopmodel: ', names the file (with line:col for kernel problems where the
position is known) and says what is wrong -- never a traceback.

All cases run as separate ``python -m loopmodel.cli`` processes, side by side (module fixture),
each in its own directory under tmp_path; the tests then check one case each.
"""
from __future__ import annotations

import copy
import re
import subprocess
from dataclasses import dataclass, field

import pytest
import yaml

from helpers import IVB, KERNELS, run_cli, run_cli_batch, run_main_inprocess

TRIAD = (KERNELS / "triad.c").read_text()
TWO_D = (KERNELS / "2d-5pt.c").read_text()


@dataclass
class Case:
    id: str
    args: list                      # after 'loopmodel'; the kernel file is 'k.c' unless files say otherwise
    keyword: tuple                  # all must appear in the message (case-insensitive)
    files: dict = field(default_factory=dict)   # name -> text (kernel) or callable(base dict)->text (machine)
    where: str | None = None        # message must start with 'loopmodel: ' + where
    names: str | None = None        # the message must name this (file or argument)
    xfail: str | None = None        # reason, for known bugs (strict)
    pattern: str | None = None      # regex the message must match (re.match)
    via: str = "cli"                # "cli": own process; "main": loopmodel.cli.main() in-process

    @property
    def kernel(self):
        ks = [n for n in self.files if n.endswith(".c")]
        return ks[0] if ks else None


def kcase(id, text, keyword, where=None, defines=("-D", "N=100"), **kw):
    """A bad kernel file 'k_<id>.c' analysed on a valid built-in machine."""
    name = f"k_{id}.c"
    where = f"{name}:{where}: " if where else f"{name}: "
    return Case(id, ["analyze", name, "-m", IVB, *defines], keyword, {name: text}, where=where, names=name, **kw)


def mcase(id, mutate, keyword, where=None, xfail=None, extra=()):
    """A machine file 'm_<id>.yml' (the IvyBridge dump with one thing broken) used with a valid kernel."""
    name = f"m_{id}.yml"
    return Case(id, ["analyze", "k.c", "-m", name, "-D", "N=1000", *extra], keyword,
                {"k.c": TRIAD, name: mutate}, where=f"{name}: " + (where or ""), names=name, xfail=xfail)


def dcase(id, args, keyword, kernel=TRIAD, names=None, xfail=None):
    """Bad -D values or options with a valid kernel and machine."""
    return Case(id, ["analyze", "k.c", "-m", IVB, *args], keyword, {"k.c": kernel}, names=names, xfail=xfail)


def _set(path, value):
    """Mutation: set a nested key (path of keys/indices) in the machine dict."""
    def mutate(d):
        node = d
        for p in path[:-1]:
            node = node[p]
        node[path[-1]] = value
        return d
    return mutate


def _drop(key):
    def mutate(d):
        del d[key]
        return d
    return mutate


def _no_sets_ways(size):
    def mutate(d):
        lv = d["memory_hierarchy"][0]
        lv.pop("sets"), lv.pop("ways")
        lv["size"] = size
        return d
    return mutate



CASES = [
    # ---- kernels ----------------------------------------------------------------------------------
    kcase("syntax_paren", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = (1.0;\n", ("syntax error",), "3:14"),
    kcase("syntax_semicolon", "double a[N]\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n", ("syntax error", "for"), "2:1"),
    kcase("syntax_char", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0 @ 2.0;\n", ("illegal character", "@"),
          "3:14"),
    kcase("syntax_no_position", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0 +;\n", ("syntax error",)),
    kcase("pointer_decl", "double *a;\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n", ("pointer", "'a'"), "1:8"),
    kcase("pointer_deref", "double a[N];\ndouble s;\nfor (int i=0; i<N; i++)\n  *a = s;\n", ("pointer",), "4:4"),
    kcase("if", "double a[N];\nfor (int i=0; i<N; i++)\n  if (i) a[i] = 1.0;\n", ("'if'",), "3:7"),
    kcase("while", "double a[N];\nint i;\nwhile (i < N) a[i] = 1.0;\n", ("while",), "3:1"),
    kcase("while_in_loop", "double a[N];\nfor (int j=0; j<N; j++) {\n  while (j < N) a[j] = 1.0;\n}\n", ("while",),
          "3:3"),
    kcase("call", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = foo(a[i]);\n", ("foo",), "3:10"),
    kcase("indirect", "double a[N], b[N];\nfor (int i=0; i<N; i++)\n  a[b[i]] = 1.0;\n", ("indirect",), "3:5"),
    kcase("undefined", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = q * 2.0;\n", ("undefined", "'q'"), "3:10"),
    kcase("step_variable", "double a[N];\nint n;\nfor (int i=0; i<N; i+=n)\n  a[i] = 1.0;\n", ("step", "constant"),
          "3:20"),
    kcase("step_zero", "double a[N];\nfor (int i=0; i<N; i+=0)\n  a[i] = 1.0;\n", ("step", "zero"), "2:20"),
    kcase("step_direction", "double a[N];\nfor (int i=0; i<N; i--)\n  a[i] = 1.0;\n", ("direction",), "2:15"),
    kcase("if_data", "double a[N];\nfor (int i=0; i<N; i++)\n  if (a[i] > 0.0) a[i] = 1.0;\n", ("'if' on data",),
          "3:7"),
    kcase("empty", "", ("empty",)),
    kcase("only_comment", "/* nothing here */\n", ("empty",)),
    kcase("long_double_array", "long double a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1;\n", ("'long double'",
                                                                                               "double"), "1:13"),
    kcase("hash_define_float", "#define N 1.5\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("integer", "1.5"), "2:10", defines=()),
    kcase("preproc_error", "#if 1\n#error no kernel here\n#endif\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("#error no kernel here",), "2"),
    kcase("non_affine", "double a[N];\nfor (int i=0; i<N; i++)\n  a[i*i] = 1.0;\n", ("not affine",), "3:5"),
    kcase("index_count", "double a[N][N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n", ("2 dimension", "1"), "3:3"),
    kcase("assign_index", "double a[N];\nfor (int i=0; i<N; i++)\n  i = 3;\n", ("loop index", "'i'"), "3:3"),
    kcase("include_missing", "#include \"sizes.h\"\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 2.0;\n",
          ("not found",), "1"),
    kcase("no_loop", "double a[N];\ndouble s;\n", ("no for-loop",)),
    kcase("if_not_equal", "double a[N], b[N];\nfor (int i=0; i<N; i++)\n  if (i != 3) a[i] = b[i];\n", ("'!='",),
          "3:7"),
    kcase("increment_stmt", "double a[N];\nint n;\nfor (int i=0; i<N; i++)\n  n++;\n", ("increment",), "4:3"),
    kcase("declared_twice", "double a[N];\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("declared twice",), "2:8"),
    kcase("no_dims", "double a[];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n", ("dimensions",), "1:8"),
    kcase("equal_cond", "double a[N];\nfor (int i=0; i<N; i++)\n  for (int k=0; k==N; k++)\n    a[i] = 1.0;\n",
          ("condition", "'k'"), "3:17"),
    kcase("transposed", "double a[N][N], b[N][N];\nfor (int j=0; j<N; j++)\n  for (int i=0; i<N; i++)\n"
          "    b[j][i] = a[i][j];\n", ("layer conditions do not apply", "stride"), "4:15",
          defines=("-D", "N=100", "-p", "LC")),  # with ECM/Roofline the traffic falls back to simulation
    kcase("hash_define_word", "#define N abc\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("no constant 'N'", "abc")),
    kcase("deref_scalar", "double a[N]; double s;\nfor (int i=0; i<N; i++)\n  a[i] = *s;\n", ("pointer",), "3:11"),
    kcase("empty_iteration_space", TWO_D, ("loop 'j'", "no iteration", "M=1, N=1", "empty"), "6",
          defines=("-D", "N=1", "-D", "M=1", "--incore", "analytic")),
    kcase("empty_inner_loop", TWO_D, ("loop 'i'", "no iteration", "M=5, N=2"), "7",
          defines=("-D", "N=2", "-D", "M=5", "--incore", "analytic")),
    kcase("empty_triangular", "double a[N][N];\nfor (int j=0; j<N; j++)\n  for (int i=j+N; i<N; i++)\n"
          "    a[j][i] = 1.0;\n", ("loop 'i'", "no iteration"), "3"),
    kcase("array_beyond_2_62_bytes", "double a[N][N][N];\nfor (int k=0; k<N; k++)\n  for (int j=0; j<N; j++)\n"
          "    for (int i=0; i<N; i++)\n      a[k][j][i] = 1.0;\n", ("2**62", "N=4000000"),
          defines=("-D", "N=4000000")),
    kcase("loop_bound_beyond_2_62", "double a[N];\nfor (int i=0; i<N*N; i++)\n  a[i] = 1.0;\n",
          ("loop 'i'", "beyond 2**62"), "2", defines=("-D", f"N={2 ** 40}", "--cache-predictor", "sim")),
    kcase("array_dimension_zero", "double a[N-2];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("'a'", "dimension", "N=2"), defines=("-D", "N=2")),
    kcase("hash_define_huge", "#define N 99999999999999999999\ndouble a[N];\nfor (int i=0; i<N; i++)\n  a[i] = 1.0;\n",
          ("#define N", "larger than 2**62"), "1:1", defines=()),
    kcase("statement_too_many_tokens", "double a[N], b[N];\nfor (int i=0; i<N; i++)\n  a[i] = "
          + " + ".join(f"b[i]*{k}.0" for k in range(2000)) + ";\n", ("more than 10000 tokens",), "3"),
    kcase("expression_too_deep", "double a[N], b[N];\nfor (int i=0; i<N; i++)\n  a[i] = "
          + " + ".join(f"b[i]*{k}.0" for k in range(150)) + ";\n", ("nested more than 100",), "3"),
    Case("missing_kernel", ["analyze", "nonexistent.c", "-m", IVB, "-D", "N=10"], ("cannot read", "no such file"),
         where="nonexistent.c: ", names="nonexistent.c"),
    Case("kernel_not_utf8", ["analyze", "k_latin1.c", "-m", IVB, "-D", "N=10"], ("utf-8",),
         {"k_latin1.c": b"/* \xe9t\xe9 */\ndouble a[N];\nfor (int i=0;i<N;i++) a[i]=1.0;\n"}, where="k_latin1.c:1: ",
         names="k_latin1.c"),
    # ---- machine files ------------------------------------------------------------------------------
    Case("yaml_syntax", ["analyze", "k.c", "-m", "m_yaml_syntax.yml", "-D", "N=1000"], ("not valid yaml",),
         {"k.c": TRIAD, "m_yaml_syntax.yml": "yaml-syntax"}, names="m_yaml_syntax.yml",
         pattern=r"loopmodel: m_yaml_syntax\.yml:\d+:\d+: not valid YAML: "),
    mcase("missing_clock", _drop("clock"), ("clock", "missing"), "clock: "),
    mcase("clock_no_unit", _set(["clock"], "3.0"), ("clock", "unit", "hz"), "clock: "),
    mcase("clock_number", _set(["clock"], 3.0), ("clock", "no unit"), "clock: "),
    mcase("clock_bad_unit", _set(["clock"], "3 GB"), ("clock", "GB", "hz"), "clock: "),
    mcase("unknown_key", _set(["frobnicate"], 1), ("frobnicate", "unknown key"), "frobnicate: "),
    mcase("negative_throughput", _set(["in_core", "throughput", "ADD"], -1.0), ("throughput", "ADD", ">= 0"),
          "in_core.throughput: "),
    mcase("unknown_operation", _set(["in_core", "throughput", "FOO"], 1.0), ("unknown operation", "FOO")),
    mcase("link_not_adjacent", _set(["links", 1, "between"], ["L1", "L3"]), ("links[1]", "adjacent")),
    mcase("last_not_mem", _set(["memory_hierarchy", 3, "level"], "DRAM"), ("memory_hierarchy", "last level", "MEM")),
    mcase("sets_ways_size", _set(["memory_hierarchy", 0, "sets"], 65), ("memory_hierarchy[0]", "sets*ways")),
    mcase("last_level_removed", lambda d: (d["memory_hierarchy"].pop(), d)[1], ("memory_hierarchy", "MEM")),
    mcase("bandwidth_word", _set(["links", 0, "bandwidth"], "fast"), ("links[0].bandwidth", "fast")),
    mcase("unknown_overlap", _set(["overlap"], ["T_OL", "L9L10"]), ("overlap", "L9L10")),
    mcase("not_a_mapping", "- just\n- a list\n", ("mapping",)),
    mcase("empty_machine", "", ("mapping",)),
    mcase("duplex_one_bw", _set(["links", 0, "duplex"], "full"), ("links[0]", "two bandwidths")),
    mcase("measured_l1", _set(["links", 0, "bandwidth"], "measured"), ("links[0]", "measured")),
    mcase("bandwidth_no_unit", _set(["links", 0, "bandwidth"], "32"), ("links[0].bandwidth", "unit")),
    mcase("victim_first", _set(["memory_hierarchy", 0, "type"], "victim"), ("memory_hierarchy[0]", "victim")),
    mcase("measurements_length", _set(["benchmarks", "measurements", "MEM", "copy"], ["1 GB/s"]),
          ("measurements.MEM.copy", "one bandwidth per core count")),
    Case("unknown_builtin", ["analyze", "k.c", "-m", "IvyBridge", "-D", "N=10"], ("unknown machine", "built-in"),
         {"k.c": TRIAD}, names="IvyBridge"),
    Case("missing_machine_file", ["analyze", "k.c", "-m", "nosuch.yml", "-D", "N=10"], ("not found",),
         {"k.c": TRIAD}, where="nosuch.yml: ", names="nosuch.yml"),
    # degenerate quantities: zero and negative sizes, clocks, bandwidths; 'measured' without data
    mcase("zero_link_bandwidth", _set(["links", 0, "bandwidth"], "0 B/cy"), ("bandwidth",)),
    mcase("zero_clock", _set(["clock"], "0 GHz"), ("clock",), "clock: "),
    mcase("zero_load_bytes", _set(["in_core", "load", "bytes_per_cycle"], "0 B/cy"), ("bytes_per_cycle",)),
    mcase("zero_measured_bandwidth", _set(["benchmarks", "measurements", "MEM", "copy"], ["0 GB/s"] * 10),
          ("bandwidth",)),
    mcase("negative_link_bandwidth", _set(["links", 0, "bandwidth"], "-32 B/cy"), ("bandwidth",)),
    mcase("negative_cache_size", _no_sets_ways("-32 KiB"), ("size",)),
    mcase("negative_clock", _set(["clock"], "-3 GHz"), ("clock",), "clock: "),
    # quantities beyond their physical range (loopmodel.machine.fields; docs/machine-file.md)
    mcase("clock_huge", _set(["clock"], "1e300 GHz"), ("clock", "too large"), "clock: "),
    mcase("clock_tiny", _set(["clock"], "1e-30 GHz"), ("physical range", "1 MHz .. 100 GHz"), "clock: "),
    mcase("throughput_zero", _set(["in_core", "throughput", "ADD"], 0), ("throughput of ADD", "physical range"),
          "in_core.throughput: "),
    # the probe's in-core keys (in_core.latency_by_width, throughput_by_width, store_forward_latency)
    mcase("latency_by_width_zero", _set(["in_core", "latency_by_width"], {"ADD": {8: 0}}),
          ("latency of ADD at 8 B", "> 0 and <= 1000 cy"), "in_core.latency_by_width: "),
    mcase("latency_by_width_huge", _set(["in_core", "latency_by_width"], {"DIV": {64: 5000}}),
          ("latency of DIV at 64 B", "physical range"), "in_core.latency_by_width: "),
    mcase("latency_by_width_odd_width", _set(["in_core", "latency_by_width"], {"ADD": {12: 4}}),
          ("width 12 is not one of 4, 8, 16, 32, 64 B",), "in_core.latency_by_width: "),
    mcase("throughput_by_width_unknown_op", _set(["in_core", "throughput_by_width"], {"ADDX": {8: 1}}),
          ("unknown operation type 'ADDX'",), "in_core.throughput_by_width: "),
    mcase("throughput_by_width_bool", _set(["in_core", "throughput_by_width"], {"ADD": {8: True}}),
          ("throughput of ADD at 8 B must be a number",), "in_core.throughput_by_width: "),
    mcase("throughput_by_width_huge", _set(["in_core", "throughput_by_width"], {"ADD": {8: 65}}),
          ("throughput of ADD at 8 B", "> 0 and <= 64"), "in_core.throughput_by_width: "),
    mcase("store_forward_zero", _set(["in_core", "store_forward_latency"], 0), ("physical range",),
          "in_core.store_forward_latency: "),
    mcase("link_bandwidth_tiny", _set(["links", 0, "bandwidth"], "1e-300 B/cy"), ("physical range", "B/cy"),
          "links[0].bandwidth: "),
    mcase("link_bandwidth_gbs_tiny", _set(["links", 0, "bandwidth"], "1 MB/s"), ("at clock", "physical range"),
          "links[0].bandwidth: "),
    mcase("sets_huge", _set(["memory_hierarchy", 0, "sets"], 10 ** 25), ("less than or equal",),
          "memory_hierarchy[0].sets: ", extra=("--cache-predictor", "sim")),
    mcase("cache_size_huge", _no_sets_ways("1e30 B"), ("physical range", "1 TiB"), "memory_hierarchy[0].size: "),
    mcase("cores_huge", _set(["cores_per_socket"], 10 ** 9), ("physical range",), "cores_per_socket: "),
    mcase("line_size_huge", _set(["cacheline_size"], "1 GiB"), ("physical range",), "cacheline_size: "),
    mcase("measured_without_benchmarks", _set(["benchmarks"], {}), ("measured",)),
    # ---- -D values ------------------------------------------------------------------------------------
    dcase("define_not_int", ["-D", "N=abc"], ("N=abc", "not an integer"), names="-D N=abc"),
    dcase("define_zero", ["-D", "N=0"], ("N=0", "positive"), names="-D N=0"),
    dcase("define_negative", ["-D", "N=-5"], ("positive",), names="-D N=-5"),
    dcase("define_bad_name", ["-D", "1N=5"], ("1N", "not a valid constant name"), names="-D 1N=5"),
    dcase("define_range_reversed", ["-D", "N=10:5"], ("N=10:5", "below"), names="-D N=10:5"),
    dcase("define_range_too_many", ["-D", "N=1:5:2:3"], ("start:stop",), names="-D N=1:5:2:3"),
    dcase("define_unknown_constant", ["-D", "X=5", "-D", "N=5"], ("'X'", "no constant"), names="-D X"),
    dcase("define_missing", [], ("no value for N", "-D N="), names="k.c"),
    dcase("define_no_value", ["-D", "N="], ("missing value",), names="-D N="),
    dcase("define_no_equals", ["-D", "N"], ("no value for N",), names="k.c"),
    dcase("define_float", ["-D", "N=1.5"], ("not an integer",), names="-D N=1.5"),
    dcase("define_kerncraft_zero_points", ["-D", "N=1-10:0"], ("number of points",), names="-D N=1-10:0"),
    dcase("define_huge", ["-D", "N=" + "9" * 400], ("larger than 2**62", "400 characters"), names="-D N=9999"),
    dcase("define_fullwidth_digits", ["-D", "N=\uff11\uff10\uff10"], ("not an integer", "ASCII"),
          names="-D N=\uff11"),
    dcase("define_log_base_one", ["-D", "N=10-1000:4log1"], ("base of the logarithm",), names="-D N=10-1000:4log1"),
    dcase("define_missing_second", ["-D", "N=10"], ("no value for M",), kernel=TWO_D, names="k.c"),
    # ---- options --------------------------------------------------------------------------------------
    dcase("mem_bw_no_unit", ["-D", "N=5", "--mem-bw", "5"], ("--mem-bw", "unit", "B/s")),
    dcase("mem_bw_wrong_unit", ["-D", "N=5", "--mem-bw", "5 GB"], ("--mem-bw", "GB")),
    dcase("unknown_model", ["-D", "N=5", "-p", "Foo"], ("unknown model", "Foo")),
    dcase("cores_zero", ["-D", "N=5", "--cores", "0"], ("--cores", "at least 1")),
    dcase("cores_not_int", ["-D", "N=5", "--cores", "x"], ("--cores", "invalid int")),
    dcase("cache_factor", ["-D", "N=5", "--cache-factor", "0"], ("--cache-factor",)),
    dcase("unit_choice", ["-D", "N=5", "--unit", "GB/s"], ("--unit", "invalid choice")),
    dcase("lc_variable", ["-D", "N=5", "--lc-variable", "Q"], ("--lc-variable", "Q")),
    dcase("mem_bw_zero", ["-D", "N=5", "--mem-bw", "0 GB/s"], ("--mem-bw",)),
    dcase("mem_bw_negative", ["-D", "N=5", "--mem-bw=-5 GB/s"], ("--mem-bw",)),
    dcase("mem_bw_tiny", ["-D", "N=5", "--mem-bw", "1e-300 GB/s"], ("--mem-bw", "physical range")),
    dcase("clock_option_tiny", ["-D", "N=5", "--clock", "1e-30 GHz"], ("--clock", "physical range")),
    dcase("alignment_zero", ["-D", "N=1000", "--array-alignment", "0"], ("--array-alignment", ">= 1")),
    dcase("alignment_unit", ["-D", "N=1000", "--array-alignment", "3 GHz"], ("--array-alignment", "GHz")),
    dcase("padding_negative", ["-D", "N=1000", "--array-padding=-64"], ("--array-padding", ">= 0")),
    dcase("padding_fraction", ["-D", "N=1000", "--array-padding", "1.5 B"], ("--array-padding", "whole number")),
    dcase("cache_predictor_choice", ["-D", "N=1000", "--cache-predictor", "pycachesim"],
          ("--cache-predictor", "invalid choice")),
]

IDS = [c.id for c in CASES]
assert len(IDS) == len(set(IDS))

# The cases named in the specification (and the known bugs) each run as a separate process;
# these further cases go through loopmodel.cli.main() in-process to keep the suite fast.
IN_PROCESS = {
    "syntax_semicolon", "syntax_char", "syntax_no_position", "while_in_loop", "step_zero", "step_direction",
    "only_comment", "increment_stmt", "declared_twice", "no_dims", "equal_cond", "transposed",
    "kernel_not_utf8", "clock_number", "unknown_operation", "empty_machine", "duplex_one_bw", "measured_l1",
    "bandwidth_no_unit", "victim_first", "measurements_length", "missing_machine_file", "define_negative",
    "define_range_too_many", "define_no_value", "define_no_equals", "define_float",
    "define_kerncraft_zero_points", "define_missing_second", "cores_not_int", "cache_factor", "unit_choice",
    "lc_variable", "hash_define_word", "deref_scalar", "last_level_removed", "bandwidth_word", "alignment_zero",
    "alignment_unit", "padding_negative", "padding_fraction", "cache_predictor_choice",
    "empty_inner_loop", "empty_triangular", "array_dimension_zero", "define_log_base_one", "clock_tiny",
    "link_bandwidth_gbs_tiny", "cache_size_huge", "cores_huge", "line_size_huge", "mem_bw_tiny", "clock_option_tiny",
}
assert IN_PROCESS <= set(IDS)
for _c in CASES:
    if _c.id in IN_PROCESS:
        _c.via = "main"


def _machine_text(spec, base: dict, base_text: str) -> str:
    if callable(spec):
        return yaml.safe_dump(spec(copy.deepcopy(base)), sort_keys=False)
    if spec == "yaml-syntax":
        return base_text.replace("\nclock: 3 GHz\n", "\nclock: [3 GHz\n", 1)
    return spec


@pytest.fixture(scope="module")
def base_machine():
    p = run_cli("machine", "show", IVB)
    assert p.returncode == 0, p.stderr
    return yaml.safe_load(p.stdout), p.stdout


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory, base_machine):
    """Write every case's files, run all cases concurrently; {id: (process, dir, kernel bytes before)}."""
    base, base_text = base_machine
    jobs, dirs, before = {}, {}, {}
    for case in CASES:
        d = tmp_path_factory.mktemp(case.id)
        for name, spec in case.files.items():
            if name.endswith((".yml", ".yaml")):
                (d / name).write_text(_machine_text(spec, base, base_text))
            elif isinstance(spec, bytes):
                (d / name).write_bytes(spec)
            else:
                (d / name).write_text(spec)
        if case.kernel:
            before[case.id] = (d / case.kernel).read_bytes()
        if case.via == "cli":
            jobs[case.id] = (case.args, d)
        dirs[case.id] = d
    # control: the unbroken machine dump is valid, so each machine case fails for its one change
    ok = tmp_path_factory.mktemp("control")
    (ok / "m_ok.yml").write_text(yaml.safe_dump(base, sort_keys=False))
    (ok / "k.c").write_text(TRIAD)
    jobs["__control__"] = (["analyze", "k.c", "-m", "m_ok.yml", "-D", "N=1000"], ok)
    res = run_cli_batch(jobs)
    for case in CASES:
        if case.via == "main":
            res[case.id] = run_main_inprocess(case.args, dirs[case.id])
    return {k: (res[k], dirs.get(k), before.get(k)) for k in res}


def test_at_least_30_cases():
    assert len(CASES) >= 30
    assert sum(1 for c in CASES if c.via == "cli") >= 30
    assert sum(1 for c in CASES if c.id.startswith(("syntax", "pointer", "if", "while")) or c.kernel) >= 20


def test_control_machine_is_valid(outcomes):
    p = outcomes["__control__"][0]
    assert p.returncode == 0, p.stderr
    assert "----- ECM -----" in p.stdout


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id, marks=[pytest.mark.xfail(reason=c.xfail, strict=True)]
                                               if c.xfail else []) for c in CASES])
def test_bad_input(case, outcomes):
    p, d, before = outcomes[case.id]
    err = p.stderr
    assert "Traceback" not in err, err
    assert p.returncode == 2, (p.returncode, err)
    assert err.endswith("\n") and err.count("\n") == 1, f"not exactly one line: {err!r}"
    line = err.rstrip("\n")
    assert line.startswith("loopmodel: "), line
    if case.where is not None:
        assert line.startswith("loopmodel: " + case.where), line
    if case.names is not None:
        assert case.names in line, line
    if case.pattern is not None:
        assert re.match(case.pattern, line), line
    for kw in case.keyword:
        assert kw.lower() in line.lower(), f"{kw!r} not in {line!r}"
    assert p.stdout == "", p.stdout
    if before is not None:
        assert (d / case.kernel).read_bytes() == before, "input kernel file was modified"


def test_kernel_positions_are_one_based_and_point_at_the_construct(outcomes):
    """The reported line:col lies on the offending text in the file."""
    checked = 0
    for case in CASES:
        if not case.kernel or case.xfail or not isinstance(case.files[case.kernel], str):
            continue
        p = outcomes[case.id][0]
        m = re.match(rf"loopmodel: {re.escape(case.kernel)}:(\d+):(\d+): ", p.stderr)
        if not m:
            continue
        line, col = int(m.group(1)), int(m.group(2))
        lines = case.files[case.kernel].split("\n")
        assert 1 <= line <= len(lines), case.id
        assert 1 <= col <= len(lines[line - 1]), case.id
        assert not lines[line - 1][col - 1].isspace(), case.id
        checked += 1
    assert checked >= 20


def test_console_script_reports_like_module(tmp_path):
    """The installed 'loopmodel' entry point behaves like python -m loopmodel.cli."""
    import shutil

    exe = shutil.which("loopmodel")
    if exe is None:
        pytest.skip("console script not on PATH")
    k = tmp_path / "bad.c"
    k.write_text("double a[N];\nfor (int i=0; i<N; i++)\n  if (i) a[i] = 1.0;\n")
    p = subprocess.run([exe, "analyze", "bad.c", "-m", IVB, "-D", "N=10"], capture_output=True, text=True,
                       cwd=tmp_path)
    assert p.returncode == 2
    assert p.stderr.startswith("loopmodel: bad.c:3:7: this 'if' condition is not supported (accepted: comparisons")


def test_transposed_access_falls_back_to_simulation(tmp_path):
    """Not an error when a model other than LC is asked for: the traffic comes from the cache simulation."""
    import json

    (tmp_path / "t.c").write_text("double a[N][N], b[N][N];\nfor(int j=0;j<N;j++) for(int i=0;i<N;i++) "
                                  "b[j][i]=a[i][j]+a[j][i];\n")
    p = run_main_inprocess(["analyze", "t.c", "-m", IVB, "-D", "N=2000", "--json"], tmp_path)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["traffic_predictor"] == "SIM"
    assert doc["layer_conditions"] == []
    assert any("layer conditions do not apply" in n and "cache simulation instead" in n for n in doc["notes"])
    # a[i][j] walks a column: every iteration touches a new line of a (8 CL per CL of b), b and a[j][i] stream
    assert 9.5 <= doc["traffic"][0]["loads_cl_per_cl"] <= 10.5
