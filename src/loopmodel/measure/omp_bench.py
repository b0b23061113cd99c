"""Benchmark mode for OpenMP programs: run the program's own phases, timed one by one, on T
pinned threads, to compare with the coherence-aware prediction
(:mod:`loopmodel.models.omp_program`).

The harness declares the program's arrays (64-byte aligned, static) and scalars, maps the
pages once, then repeats: flush every array from the caches (x86 ``clflush``, AArch64
``dc civac``; so every chunk starts in (I, ∅), the model's initial state), run the phases in
program order with ``omp_get_wtime`` between them. A parallel loop's implicit barrier makes
its time that of the slowest thread, as in Algorithm 1 (benchmark-based-coherence-model.txt
§III-C). Each phase's figure is the minimum over the repetitions, with the median and the
spread (max - min) / min reported (roofline-measurement-thesis.txt: repetition statistics).
"""
from __future__ import annotations

from dataclasses import dataclass

import atexit
import shutil
import statistics
import tempfile
from typing import Callable

from .. import gate, toolchain
from ..errors import ToolError
from ..ir.omp import OmpProgram, Repeat

_HEAD = r"""#define _GNU_SOURCE
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define LM_FLUSH_LINE(p) _mm_clflush(p)
#define LM_FENCE() _mm_mfence()
#elif defined(__aarch64__)
#define LM_FLUSH_LINE(p) __asm__ volatile("dc civac, %0" :: "r"(p) : "memory")
#define LM_FENCE() __asm__ volatile("dsb ish" ::: "memory")
#else
#error "no cache-line flush for this architecture"
#endif
static void lm_flush(void *p, size_t bytes) {
    char *c = (char *)p;
    for (size_t o = 0; o < bytes; o += 64) LM_FLUSH_LINE(c + o);
}
"""

_MAIN = r"""
int main(int argc, char **argv) {
    int lm_min_reps = atoi(argv[1]), lm_max_reps = atoi(argv[2]);
    double lm_min_time = atof(argv[3]);
    double *lm_t = malloc(sizeof(double) * (size_t)lm_max_reps * LM_PHASES);
    if (!lm_t) return 2;
    int lm_threads = 1;
    #pragma omp parallel
    {
        #pragma omp single
        lm_threads = omp_get_num_threads();
    }
%(touch)s
    double lm_start = omp_get_wtime();
    int lm_r = 0;
    for (; lm_r < lm_max_reps && (lm_r < lm_min_reps || omp_get_wtime() - lm_start < lm_min_time); ++lm_r) {
        double *lm_T = lm_t + (size_t)lm_r * LM_PHASES;
%(flush)s
        LM_FENCE();
        double lm_t0 = omp_get_wtime(), lm_t1;
%(body)s
    }
    double lm_check = 0.0%(check)s;
    printf("{\"threads\": %%d, \"repetitions\": %%d, \"checksum\": %%.17g, \"seconds\": [", lm_threads, lm_r, lm_check);
    for (int lm_p = 0; lm_p < LM_PHASES; ++lm_p) {
        printf(lm_p ? ", [" : "[");
        for (int lm_k = 0; lm_k < lm_r; ++lm_k) printf(lm_k ? ", %%.9e" : "%%.9e", lm_t[(size_t)lm_k * LM_PHASES + lm_p]);
        printf("]");
    }
    printf("]}\n");
    return 0;
}
"""


def _stamp(index: str) -> str:
    return f"lm_t1 = omp_get_wtime(); lm_T[{index}] = lm_t1 - lm_t0; lm_t0 = lm_t1;"


def _indent(code: str, pad: str) -> str:
    return "\n".join(pad + line for line in code.splitlines())


def harness_source(program: OmpProgram) -> str:
    """The C text of the timing harness for ``program`` (see the module docstring); phases
    are numbered in execution order (repeats unrolled), as
    :meth:`~loopmodel.ir.omp.OmpProgram.phases` yields them."""
    decls = [f"static {a.ctype} {a.declarator} __attribute__((aligned(64)));" for a in program.arrays.values()]
    decls += [f"static {ctype} {name};" for name, ctype in program.scalars]
    body = []
    for item, slices in program.item_slices():
        pos = slices[0][0]
        if isinstance(item, Repeat):
            n = len(item.body)
            body.append(f"        {item.code_head} {{")
            for j, ph in enumerate(item.body):
                body.append(_indent(ph.code, "            "))
                body.append("            " + _stamp(f"{pos} + {item.var} * {n} + {j}"))
            body.append("        }")
        else:
            body += [_indent(item.code, "        "), "        " + _stamp(str(pos))]
    executed = sum(1 for _ in program.phases())
    names = list(program.arrays)
    touch = "\n".join(f"    memset({a}, 0, sizeof {a});" for a in names)
    flush = "\n".join(f"        lm_flush({a}, sizeof {a});" for a in names)
    check = "".join(f" + (double){name}" for name, ctype in program.scalars if ctype in ("double", "float"))
    main = _MAIN % {"touch": touch, "flush": flush, "body": "\n".join(body), "check": check}
    return _HEAD + "\n".join(decls) + f"\n#define LM_PHASES {max(executed, 1)}\n" + main


@dataclass(frozen=True)
class PhaseMeasurement:
    """One executed phase: ``seconds`` (min over repetitions), ``median_seconds``, ``spread``
    ((max - min) / min)."""
    seconds: float
    median_seconds: float
    spread: float


@dataclass(frozen=True)
class ProgramMeasurement:
    """The program measured on ``threads`` threads pinned to ``cpus``: ``phases``
    (:class:`PhaseMeasurement`, execution order), ``total_seconds`` (min over repetitions of a
    whole execution), ``repetitions``, ``compiler_flags``, ``wait_policy`` (``OMP_WAIT_POLICY``:
    ``active`` unless the environment sets it: threads spin between phases, as the measured
    fork/join overhead of the model assumes; sleeping threads add their wake-up to a parallel
    phase that follows a long sequential one)."""
    threads: int
    cpus: tuple
    phases: tuple
    total_seconds: float
    repetitions: int
    compiler_flags: tuple = ()
    wait_policy: str = "active"


FLAGS = ("-O3", "-fopenmp")


def _check_code(program: OmpProgram) -> None:
    """Raises ToolError where a phase has no C code (a YAML program describes accesses only)."""
    if any(not ph.code for ph, _ in program.phases()):
        raise ToolError("--measure needs an OpenMP C program (a YAML program has no code to run)")


def build_harness(program: OmpProgram, compiler: str = "gcc", directory: str | None = None) -> tuple:
    """Compile the harness: ``(executable path, flags)``.

    Raises:
        ToolError: a YAML program (no C code to run), compiler missing or failing (its first
            error line).
    """
    _check_code(program)
    if directory is None:
        directory = tempfile.mkdtemp(prefix="loopmodel-omp-")
        atexit.register(shutil.rmtree, directory, True)
    flags = FLAGS + (toolchain.native_arch_flag(),)
    flags = tuple(f for f in flags if f)
    exe = toolchain.compile_c(harness_source(program), compiler, flags, "executable", "omp_program",
                              directory, libraries=("-lm",))
    return exe, flags


def parse_harness_output(stdout: str, phases: int, threads: int) -> dict:
    """The harness's JSON line as a dict, checked.

    Raises:
        ToolError: no JSON, the wrong number of phases, or a team of another size (the
            OpenMP runtime limited the threads).
    """
    out = toolchain.json_result(stdout)
    if not out or "seconds" not in out:
        raise ToolError("the OpenMP program harness printed no result")
    if len(out["seconds"]) != max(phases, 1) or not out.get("repetitions"):
        raise ToolError("the OpenMP program harness returned the wrong number of phases")
    if out.get("threads") != threads:
        raise ToolError(f"the OpenMP runtime ran {out.get('threads')} threads instead of {threads} "
                        "(OMP_THREAD_LIMIT?)")
    return out


def measure_program(program: OmpProgram, threads: int, cpus, *, min_repetitions: int = 5,
                    max_repetitions: int = 1000, min_time_s: float = 0.2, compiler: str = "gcc",
                    executable: tuple | None = None,
                    runner: Callable[[list, float, dict], str] | None = None) -> ProgramMeasurement:
    """Run ``program`` on ``threads`` threads pinned to the first ``threads`` of ``cpus``.

    Args:
        program: :class:`~loopmodel.ir.omp.OmpProgram` from C (phases carry their code).
        threads: T >= 1.
        cpus: logical CPU ids, at least T.
        min_repetitions, max_repetitions, min_time_s: repetitions run until both
            ``min_repetitions`` and ``min_time_s`` seconds are reached, at most ``max_repetitions``.
        executable: ``(path, flags)`` from :func:`build_harness` (built here if None).
        runner: ``runner(command, timeout_s, environment) -> stdout``; tests pass a fake one.
    Returns:
        :class:`ProgramMeasurement`.
    Raises:
        ToolError: a YAML program (no C code to run), too few CPUs, compiler or run failure.
    """
    _check_code(program)
    cpus = tuple(cpus)[:threads]
    if len(cpus) < threads:
        raise ToolError(f"--measure: {threads} threads but only {len(cpus)} usable CPUs")
    exe, flags = executable or (("omp_program", ()) if runner else build_harness(program, compiler))
    env = gate.program_env(OMP_NUM_THREADS=threads, OMP_PROC_BIND="close", OMP_DYNAMIC="false",
                           OMP_PLACES=",".join(f"{{{int(c)}}}" for c in cpus))
    env.setdefault("OMP_WAIT_POLICY", "active")
    cmd = [exe, str(min_repetitions), str(max_repetitions), repr(float(min_time_s))]
    run = runner or (lambda c, t, e: toolchain.run_program(c, "the OpenMP program harness", t, e))
    n = sum(1 for _ in program.phases())
    out = parse_harness_output(run(cmd, 120.0 + 20 * min_time_s, env), n, threads)
    per_rep = [list(col) for col in out["seconds"]]
    phases = tuple(PhaseMeasurement(min(v), statistics.median(v), (max(v) - min(v)) / min(v) if min(v) > 0 else 0.0)
                   for v in per_rep[:n])
    totals = [sum(col[k] for col in per_rep[:n]) for k in range(out["repetitions"])]
    return ProgramMeasurement(threads, cpus, phases, min(totals), out["repetitions"], tuple(flags),
                              env["OMP_WAIT_POLICY"])
