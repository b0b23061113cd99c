"""A compilable C program around the kernel (kerncraft-tool-paper.txt §2.5).

The generated file keeps the user's loop nest verbatim in a function of its own,
``loopmodel_kernel``, which takes every array as a ``restrict`` pointer parameter
(pointer-to-array types, so ``a[j][i]`` indexing is unchanged) and every scalar by
address (copied into a local of the same name, written back after the loop). ``main``
allocates the arrays on the heap, initialises them, gives scalars run-time values (from
``argc``, so that they are not constant-folded) and calls the kernel through a
``volatile`` function pointer, so the compiler can neither inline the kernel nor
propagate facts from the call site into it: the kernel is compiled as a function taking
its arrays from elsewhere, as in typical user code, and the compiler knows nothing about
their alignment. ``assume_aligned`` (``--assume-aligned BYTES``) tells it the arrays are
aligned to that many bytes (``__builtin_assume_aligned``), to model code whose arrays are
known to be aligned. A weak, empty ``loopmodel_opaque`` receives the data after the
calls so that nothing is dropped; being weak it cannot be inlined, and the file compiles
and links on its own (``loopmodel codegen KERNEL > k.c && cc k.c``). ``swap(a, b)``
statements of the kernel (``Kernel.swaps``) become pointer exchanges in ``main`` after
each call. It is meant to be read by users (``loopmodel codegen KERNEL``).
"""
from __future__ import annotations

import re

from ..errors import DefineError, ToolError
from ..ir.ctypes import headers
from ..version import __version__

OPAQUE = "loopmodel_opaque"
KERNEL = "loopmodel_kernel"
MARK_START = "LOOPMODEL KERNEL START"
MARK_END = "LOOPMODEL KERNEL END"
_FOR = re.compile(r"\bfor\s*\(")
_SWAP = re.compile(r"\bswap\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*;")
#: names the generated program declares or calls besides the kernel's own: a size constant of
#: one of them would be a macro over it, an array or scalar a second declaration in ``main``
PROGRAM_NAMES = frozenset({
    "again", "aligned_alloc", "argc", "argv", "atof", "atoi", "atol", "calloc", "clock_gettime", "cpu", "cpu_set_t",
    "el", "flush", "flush_n", "fpcr", "fprintf", "free", "main", "malloc", "min_time", "p", "pinned", "printf",
    "probe", "q", "r", "rep", "reps", "run", "runs", "sched_setaffinity", "seconds", "set", "stderr", "t", "t0",
    "timespec", "tv_nsec", "tv_sec"})


def comment_text(text) -> str:
    """``text`` (a file name: data) made safe inside a C block comment: no ``*/`` that would end
    it, no line breaks or other control characters, printable ASCII only."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in str(text))
    return clean.replace("*/", "*?/")


def kernel_loop_text(kernel, text: str) -> str:
    """The loop nest of ``text`` (the kernel file): from the first loop (or the ``#pragma``
    lines right before it) to the end, comments kept; ``swap(a, b);`` statements are
    replaced by a comment (the caller exchanges the pointers). Declarations on the first
    loop's line before it (a kernel function's parameters, written on its header's line by
    :func:`loopmodel.fileio.c_function.compiler_text`) are left out."""
    lines = text.split("\n")
    first = kernel.loops[0].line - 1
    start = _FOR.search(lines[first])
    if start and lines[first][:start.start()].strip():
        lines[first] = lines[first][start.start():]
    while first > 0 and lines[first - 1].strip().startswith("#pragma"):
        first -= 1
    body = "\n".join(lines[first:]).rstrip() + "\n"
    return _SWAP.sub(lambda m: f"/* swap({m.group(1)}, {m.group(2)}): after the call, in main */", body)


def _type_headers(kernel, text: str) -> tuple:
    """The headers that declare the typedef names (``ptrdiff_t``, ``int64_t``) of the kernel's
    types and its loop nest (:func:`loopmodel.ir.ctypes.headers`)."""
    words = re.findall(r"\w+", kernel_loop_text(kernel, text))
    words += [x.ctype for x in list(kernel.arrays.values()) + list(kernel.scalars.values())]
    return headers(words)


def _dims(arr, defines):
    return [int(d.evaluate(defines)) for d in arr.dims]


def _scalar_arg(name: str) -> str:
    return f"loopmodel_arg_{name}"


def _parameters(kernel, defines) -> str:
    """The kernel function's parameter list: arrays as restrict pointers, scalars by address."""
    params = []
    for name, arr in kernel.arrays.items():
        inner = "".join(f"[{d}]" for d in _dims(arr, defines)[1:])
        params.append(f"{arr.ctype} (*restrict {name}){inner}" if inner else f"{arr.ctype} *restrict {name}")
    params += [f"{sc.ctype} *{_scalar_arg(name)}" for name, sc in kernel.scalars.items()]
    return ", ".join(params) or "void"


def parallel_pragma(kernel, text: str) -> str:
    """The ``#pragma omp parallel for`` that shares the outermost loop among threads (static
    schedule, a ``reduction`` clause per scalar reduction); '' when the kernel has OpenMP
    pragmas of its own.

    Raises:
        DefineError: the outermost loop cannot be shared: a written array is also read at
            another element (a dependence between iterations), or a recurrence that is not a
            reduction.
    """
    if re.search(r"^\s*#\s*pragma\s+omp\b", text, re.MULTILINE):
        return ""
    writes = {a.array: a for a in kernel.writes}
    for a in kernel.reads:
        if a.array in writes and not (a.offset - writes[a.array].offset).is_zero():
            raise DefineError(f"--threads: {a} reads an element of '{a.array}' that another iteration writes; "
                              "the outermost loop cannot be shared among threads", file=kernel.source)
    ops = []
    for rec in kernel.recurrences:
        if rec.variable in writes:
            continue
        if not rec.reassociable:
            raise DefineError(f"--threads: the recurrence in '{rec.variable}' is not a reduction; the loop cannot "
                              "be shared among threads", file=kernel.source)
        op = "*" if re.search(rf"\b{re.escape(rec.variable)}\s*\*=", text) else "+"
        ops.append(f" reduction({op}:{rec.variable})")
    return "#pragma omp parallel for schedule(static)" + "".join(dict.fromkeys(ops))


def _kernel_function(kernel, text: str, defines: dict, assume_aligned: int | None, threads: bool = False) -> list:
    out = ["/* The kernel, compiled as a function of its own: the compiler knows the arrays do not overlap",
           f"   (restrict) but not where they are{' beyond the assumed alignment' if assume_aligned else ''}. */",
           f"void {KERNEL}({_parameters(kernel, defines)})", "{"]
    for name, sc in kernel.scalars.items():
        out.append(f"    {sc.ctype} {name} = *{_scalar_arg(name)};")
    loops = kernel_loop_text(kernel, text)
    for index in kernel.loop_indices:  # declared before the loop in the kernel file ('int i; for (i = 0; ...')
        if not re.search(rf"\bfor\s*\(\s*[A-Za-z_][\w\s]*?\s{re.escape(index)}\s*=", loops):
            out.append(f"    long {index};")
    if assume_aligned:
        for name in kernel.arrays:
            out.append(f"    {name} = __builtin_assume_aligned({name}, {int(assume_aligned)});")
    out.append(f'    __asm__ volatile("# {MARK_START}");  /* marks the kernel in the assembly */')
    pragma = parallel_pragma(kernel, text) if threads else ""
    if pragma:
        out.append("    " + pragma)
    for line in loops.rstrip("\n").split("\n"):
        out.append(("    " + line) if line.strip() else "")
    out.append(f'    __asm__ volatile("# {MARK_END}");')
    for name in kernel.scalars:
        out.append(f"    *{_scalar_arg(name)} = {name};")
    out += ["}", ""]
    return out


#: suffix of the allocated block of an array (the array starts ``array_offset`` bytes into it)
BASE = "_loopmodel_block"
#: bytes of the page whose offsets the arrays' starts are spread over
PAGE = 4096


def array_offset(k: int, n: int) -> int:
    """Bytes the ``k``-th of ``n`` arrays starts after its page-aligned allocation: ``k`` x the
    page divided evenly among the arrays, in whole 64 B cache lines.

    Arrays that all start on a page boundary have the same address bits 0-11 at the same index,
    and a load of one array is then taken for a dependence on a store to another at an index
    as many elements away as their starts differ modulo 4 KiB (4K aliasing): it waits for the
    store. Spreading the starts evenly over the page puts the nearest such pair as far apart as
    the number of arrays allows (2048 B = 256 doubles for two arrays), beyond the stores in
    flight of the loops the model describes; every array stays cache-line aligned (what the
    compiled code may assume)."""
    spacing = (PAGE // max(1, n)) // 64 * 64
    return (k * spacing) % PAGE


def _allocations(kernel, defines: dict, checked: bool = False, threads: bool = False) -> list:
    """Heap allocation (page aligned) and initialisation of every array, then the scalars'
    run-time values; ``checked``: a failed allocation ends the program (exit status 2)."""
    out = []
    for k, (name, arr) in enumerate(kernel.arrays.items()):
        dims = _dims(arr, defines)
        inner = "".join(f"[{d}]" for d in dims[1:])
        total = " * ".join(str(d) for d in dims)
        ptr = f"(*{name}){inner}" if inner else f"*{name}"
        offset = array_offset(k, len(kernel.arrays))
        out.append(f"    char *{name}{BASE} = aligned_alloc(4096, ((sizeof({arr.ctype}) * (size_t){total} + {offset} "
                   "+ 4095) / 4096) * 4096);")
        if checked:
            out.append(f'    if (!{name}{BASE}) {{ fprintf(stderr, "cannot allocate array {name}\\n"); return 2; }}')
        out.append(f"    {arr.ctype} {ptr} = (void *)({name}{BASE} + {offset});")
        if threads:  # first touch by the threads that work on the data (static schedule)
            out.append("    #pragma omp parallel for schedule(static)")
        out.append(f"    for (size_t q = 0; q < (size_t){total}; ++q)")
        out.append(f"        (({arr.ctype} *){name})[q] = ({arr.ctype})(q % 13) / 13 + 1;")
    for n, (name, sc) in enumerate(kernel.scalars.items()):
        out.append(f"    {sc.ctype} {name} = ({sc.ctype})(argc + {n + 1}) / 3;")
    return out


def _keep(kernel) -> list:
    """What the opaque calls receive: every array and the address of every scalar."""
    return list(kernel.arrays) + [f"&{s}" for s in kernel.scalars]


def _call_loop(kernel, count: str, indent: str = "    ") -> list:
    """``for (rep < count)``: one kernel call, the swaps, the never-taken opaque calls."""
    args = ", ".join(_keep(kernel))
    out = [f"{indent}for (long rep = 0; rep < {count}; ++rep) {{", f"{indent}    {KERNEL}_call({args});"]
    for a, b in getattr(kernel, "swaps", ()) or ():
        out.append(f"{indent}    {{ void *loopmodel_t = {a}; {a} = {b}; {b} = loopmodel_t; }}  /* swap({a}, {b}) */")
    out.append(f"{indent}    if (argc > 1000) {{  /* never true: the compiler must assume the data is used */")
    out += [f"{indent}        {OPAQUE}({k});" for k in _keep(kernel)]
    out += [f"{indent}    }}", f"{indent}}}"]
    return out


def _teardown(kernel) -> list:
    out = [f"    {OPAQUE}({k});" for k in _keep(kernel)]
    out += [f"    free({name}{BASE});" for name in kernel.arrays]
    return out + ["    return 0;", "}", ""]


def _main_function(kernel, defines: dict, repetitions: bool) -> list:
    out = ["int main(int argc, char **argv)", "{"]
    out += _allocations(kernel, defines)
    out.append("    long reps = argc > 1 ? atol(argv[1]) : 1;" if repetitions else "    long reps = 1;")
    out += _call_loop(kernel, "reps")
    return out + _teardown(kernel)


#: what the timed program (``generate_c(..., timed=True)``) does; its comment in the source
TIMED_USAGE = """Benchmark: PROGRAM REPS_PER_RUN RUNS CPU [MIN_TIME_S [FLUSH_BYTES]]
Pins itself to CPU (none if CPU < 0), flushes denormals to zero, allocates and first-touches
the arrays, calls the kernel once (warm-up: the data are in the caches they fit in,
roofline-measurement-thesis.txt §2.3), then, if REPS_PER_RUN is 0, calibrates: doubles the
number of calls from 1 until a run of them and the one after it both last at least MIN_TIME_S
seconds (a run the OS preempted does not end the calibration early); then times
RUNS runs of REPS_PER_RUN calls each (CLOCK_MONOTONIC), each run after reading and writing a
buffer of FLUSH_BYTES (> 0: cold caches for the data, thesis §3.3), and prints one JSON line
{"seconds": [per run], "reps": REPS_PER_RUN, "runs": RUNS, "cpu": CPU, "pinned": true|false}.
Errors: one line on stderr, exit status 2."""

#: helpers of the timed ``main``: the clock, pinning, denormals flushed to zero
_TIMED_HELPERS = r"""static double loopmodel_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* pins the process to `cpu` (none if cpu < 0); 1 if pinned */
static int loopmodel_pin(int cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set) == 0;
}

/* denormal operands and results as zero: values that decay over many calls cannot slow the kernel */
static void loopmodel_flush_denormals(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_ldmxcsr(__builtin_ia32_stmxcsr() | 0x8040);  /* FTZ | DAZ */
#elif defined(__aarch64__)
    unsigned long fpcr;
    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    __asm__ volatile("msr fpcr, %0" : : "r"(fpcr | (1UL << 24)));  /* FZ */
#endif
}
"""

#: argument checks and pinning, first lines of the timed ``main``
_TIMED_ARGS = r"""    if (argc < 4 || argc > 6) {
        fprintf(stderr, "usage: %s REPS_PER_RUN RUNS CPU [MIN_TIME_S [FLUSH_BYTES]]\n", argv[0]);
        return 2;
    }
    long reps = atol(argv[1]);
    int runs = atoi(argv[2]);
    int cpu = atoi(argv[3]);
    double min_time = argc > 4 ? atof(argv[4]) : 0.0;
    long flush_n = argc > 5 ? atol(argv[5]) / (long)sizeof(double) : 0;
    double *flush = flush_n > 0 ? calloc((size_t)flush_n, sizeof(double)) : NULL;
    if (flush_n > 0 && !flush) { fprintf(stderr, "cannot allocate the flush buffer\n"); return 2; }
    if (reps < 0 || runs < 1 || (reps == 0 && !(min_time > 0))) {
        fprintf(stderr, "REPS_PER_RUN >= 1 (0: calibrate, needs MIN_TIME_S > 0) and RUNS >= 1 expected\n");
        return 2;
    }
    double *seconds = malloc(sizeof(double) * (size_t)runs);
    if (!seconds) { fprintf(stderr, "cannot allocate the result array\n"); return 2; }
    int pinned = loopmodel_pin(cpu);  /* before the first touch: pages local to that CPU */
    loopmodel_flush_denormals();"""

#: the JSON result line, after the timed runs
_TIMED_OUTPUT = r"""    printf("{\"seconds\": [");
    for (int r = 0; r < runs; ++r)
        printf("%s%.9e", r ? ", " : "", seconds[r]);
    printf("], \"reps\": %ld, \"runs\": %d, \"cpu\": %d, \"pinned\": %s}\n", reps, runs, cpu,
           pinned ? "true" : "false");
    free(seconds);
    free(flush);"""


def _timed_main_function(kernel, defines: dict, threads: bool = False) -> list:
    """``main(REPS_PER_RUN RUNS CPU [MIN_TIME_S])``: pin, first touch, one warm-up call,
    calibration (REPS_PER_RUN 0: doubled until two runs in a row last MIN_TIME_S, so that a
    preempted run does not end it early), RUNS timed runs."""
    out = ["int main(int argc, char **argv)", "{"]
    out += _TIMED_ARGS.split("\n")
    out += _allocations(kernel, defines, checked=True, threads=threads)
    out.append("    /* warm-up: data (and code) in the caches they are in during the timed runs */")
    out += _call_loop(kernel, "1")
    out += ["    for (long probe = 1; reps == 0; probe *= 2) {  /* calibration: doubling */",
            "        double t0 = loopmodel_now();"]
    out += _call_loop(kernel, "probe", "        ")
    out += ["        double el = loopmodel_now() - t0;",
            "        if (el >= min_time) {  /* once more: a run the OS preempted also lasts that long */",
            "            t0 = loopmodel_now();"]
    out += _call_loop(kernel, "probe", "            ")
    out += ["            double again = loopmodel_now() - t0;", "            el = again < el ? again : el;", "        }",
            "        if (el >= min_time || probe >= (1L << 30))", "            reps = probe;",
            "    }", "    for (int run = 0; run < runs; ++run) {",
            "        for (long q = 0; q < flush_n; ++q)  /* cold: the kernel's data evicted by the buffer */",
            "            flush[q] += 1.0;",
            f"        if (flush_n > 0) {OPAQUE}(flush);",
            "        double t0 = loopmodel_now();"]
    out += _call_loop(kernel, "reps", "        ")
    out += ["        seconds[run] = loopmodel_now() - t0;", "    }"]
    out += _TIMED_OUTPUT.split("\n")
    return out + _teardown(kernel)


def _check_names(kernel) -> None:
    """Refuse a kernel whose size constant, array or scalar has a name of the generated program
    (:data:`PROGRAM_NAMES`, or one starting ``loopmodel_``).

    Raises:
        ToolError: the first such name (one line naming the kernel): the program cannot be built.
    """
    names = set(kernel.constants) | set(kernel.arrays) | set(kernel.scalars)
    clash = sorted(n for n in names if n in PROGRAM_NAMES or n.startswith("loopmodel_"))
    if clash:
        raise ToolError(f"'{clash[0]}' is also a name in the program loopmodel generates around the kernel "
                          f"({', '.join(sorted(PROGRAM_NAMES))}, loopmodel_*): rename it in the kernel to compile it",
                          file=kernel.source)


def generate_c(kernel, text: str, defines: dict, repetitions: bool = True, assume_aligned: int | None = None,
               timed: bool = False, threads: bool = False) -> str:
    """C source of a program running the kernel (compiles and links on its own).

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel` parsed from ``text``.
        text: the kernel file's text.
        defines: size constant -> int (all constants of the kernel).
        repetitions: call the kernel ``argv[1]`` times (for running it).
        assume_aligned: bytes the kernel function may assume every array aligned to
            (``__builtin_assume_aligned``); None: no alignment knowledge.
        timed: a benchmark ``main`` instead (``repetitions`` is then ignored; Linux:
            ``sched_setaffinity``), see :data:`TIMED_USAGE`.
        threads: with ``timed``: the outermost loop shared among OpenMP threads
            (:func:`parallel_pragma`) and the arrays first-touched in parallel (compile with
            ``-fopenmp``; the thread count and placement come from ``OMP_*``).

    Returns:
        The program text: ``loopmodel_kernel`` (the loop nest between the
        ``# LOOPMODEL KERNEL START/END`` assembly markers), a weak ``loopmodel_opaque`` and
        ``main``.

    Raises:
        ToolError: a name of the kernel that the program uses too (:data:`PROGRAM_NAMES`).
    """
    _check_names(kernel)
    swaps = [f"swap({a}, {b})" for a, b in (getattr(kernel, "swaps", ()) or ())]
    out = [f"/* Generated by loopmodel {__version__} from {comment_text(kernel.source)}",
           "   (" + ", ".join(f"{k}={v}" for k, v in sorted(defines.items())) + ").",
           "   The kernel loop nest verbatim in its own function (arrays passed in, alignment "
           + (f"assumed {int(assume_aligned)} B" if assume_aligned else "unknown") + "),",
           "   arrays on the heap in main, opaque calls keep the work alive"
           + (f"; {', '.join(swaps)} after each call" if swaps else "") + ". */"]
    if timed:
        out += ["/* " + TIMED_USAGE.replace("\n", "\n    ") + " */", "#define _GNU_SOURCE", "#include <sched.h>",
                "#include <stdio.h>", "#include <time.h>"]
    out += ["#include <stdlib.h>", "#include <math.h>"] + [f"#include <{h}>" for h in _type_headers(kernel, text)] + [""]
    for name, value in sorted(defines.items()):
        out.append(f"#define {name} {value}")
    out += ["", "/* weak: may be replaced at link time, so the compiler cannot see through it */",
            f"__attribute__((weak)) void {OPAQUE}(void *p) {{ (void)p; }}", ""]
    out += _kernel_function(kernel, text, defines, assume_aligned, threads and timed)
    out += ["/* called through a volatile pointer: never inlined, nothing known at the call site */",
            f"static void (*volatile {KERNEL}_call)({_parameters(kernel, defines)}) = {KERNEL};", ""]
    if timed:
        out += _TIMED_HELPERS.split("\n") + _timed_main_function(kernel, defines, threads)
    else:
        out += _main_function(kernel, defines, repetitions)
    return "\n".join(out)
