"""A compilable C program around the kernel (kerncraft-tool-paper.txt §2.5).

The kernel's part of the program is its loop nest as the front-end printed it from the checked
syntax tree (:attr:`loopmodel.ir.kernel.Kernel.code`, :mod:`loopmodel.fileio.c_print`), never
the kernel file's text: a comment, line ending, splice, directive or byte the parser did not
turn into a node cannot reach the compiler (docs/reference/trust.md). It sits in a function of
its own, ``loopmodel_kernel``, which takes every array as a pointer parameter (pointer-to-array
types, so ``a[j][i]`` indexing is unchanged), ``restrict`` where the kernel's array is distinct
(declared as an array, or a ``restrict`` parameter of a kernel function: a parameter declared
without it may overlap another, and the compiler then keeps its aliasing checks) and every scalar by address
(copied into a local of the same name, written back after the loop). Around that function
only, the kernel's names and size constants are freed of any macro of a header or of the
compiler (``linux``, ``stderr``, ``NULL``: ``#pragma push_macro`` and ``#undef`` before it,
``#pragma pop_macro`` after, which gcc, clang and the Intel compilers understand) and the
size constants are macros of their values. Every other identifier of the program starts with
``loopmodel_`` (which no kernel name may), so a kernel may name its arrays and scalars as C
allows (``q``, ``t``, ``r``, ``main``, ``free``). ``main`` allocates the arrays on the heap,
initialises them, gives scalars run-time values (from ``argc``, so that they are not
constant-folded) and calls the kernel through a ``volatile`` function pointer, so the compiler
can neither inline the kernel nor propagate facts from the call site into it: the kernel is
compiled as a function taking its arrays from elsewhere, as in typical user code, and the
compiler knows nothing about their alignment. ``assume_aligned`` (``--assume-aligned
BYTES``) tells it the arrays are aligned to that many bytes (``__builtin_assume_aligned``),
to model code whose arrays are known to be aligned. A weak, empty ``loopmodel_opaque``
receives the data after the calls so that nothing is dropped; being weak it cannot be
inlined, and the file compiles and links on its own (``loopmodel codegen KERNEL > k.c && cc
k.c``). ``swap(a, b)`` statements of the kernel (``Kernel.swaps``) become pointer exchanges in
``main`` after each call. It is meant to be read by users (``loopmodel codegen KERNEL``).
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
#: the prefix of every name of the generated program outside the kernel's own
PREFIX = "loopmodel_"
#: identifiers C reserves for the implementation (``__x``, ``_X``): not a kernel's to use
_RESERVED = re.compile(r"__|_[A-Z]")


def comment_text(text) -> str:
    """``text`` (a file name: data) made safe inside a C block comment: no ``*/`` that would end
    it, no line breaks or other control characters, printable ASCII only."""
    clean = "".join(c if " " <= c <= "~" else "?" for c in str(text))
    return clean.replace("*/", "*?/")


def _type_headers(kernel) -> tuple:
    """The headers that declare the typedef names (``ptrdiff_t``, ``int64_t``) of the kernel's
    types and its loop nest (:func:`loopmodel.ir.ctypes.headers`)."""
    words = re.findall(r"\w+", kernel.code)
    words += [x.ctype for x in list(kernel.arrays.values()) + list(kernel.scalars.values())]
    return headers(words)


def _dims(arr, defines):
    return [int(d.evaluate(defines)) for d in arr.dims]


def _scalar_arg(name: str) -> str:
    return f"{PREFIX}arg_{name}"


def _array_var(name: str) -> str:
    """``main``'s pointer to the array ``name``."""
    return f"{PREFIX}array_{name}"


def _block_var(name: str) -> str:
    """``main``'s allocated block of the array ``name`` (the array starts ``array_offset`` into it)."""
    return f"{PREFIX}block_{name}"


def _scalar_var(name: str) -> str:
    """``main``'s variable holding the scalar ``name``."""
    return f"{PREFIX}scalar_{name}"


def _parameters(kernel, defines, named: bool = True) -> str:
    """The kernel function's parameter list: arrays as pointers, ``restrict`` where the kernel's array
    is distinct (:attr:`loopmodel.ir.kernel.Array.distinct`: declared as an array, or a
    ``restrict`` parameter), scalars by address (without ``named``: the types alone, for the
    function pointer's declaration)."""
    params = []
    for name, arr in kernel.arrays.items():
        inner = "".join(f"[{d}]" for d in _dims(arr, defines)[1:])
        pointer = "*restrict " if arr.distinct else "*"
        decl = name if named else ""
        params.append(f"{arr.ctype} ({pointer}{decl}){inner}" if inner else f"{arr.ctype} {pointer}{decl}".rstrip())
    params += [f"{sc.ctype} *{_scalar_arg(name) if named else ''}".rstrip() for name, sc in kernel.scalars.items()]
    return ", ".join(params) or "void"


def parallel_pragma(kernel) -> str:
    """The ``#pragma omp parallel for`` that shares the outermost loop among threads (static
    schedule, a ``reduction`` clause per scalar reduction); '' when the kernel has OpenMP
    pragmas of its own.

    Raises:
        DefineError: the outermost loop cannot be shared: a written array is also read at
            another element (a dependence between iterations), or a recurrence that is not a
            reduction.
    """
    if any(p.split(" ", 1)[0] == "omp" for p in kernel.pragmas):
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
        op = "*" if re.search(rf"\b{re.escape(rec.variable)}\s*\*=", kernel.code) else "+"
        ops.append(f" reduction({op}: {rec.variable})")
    return "#pragma omp parallel for schedule(static)" + "".join(dict.fromkeys(ops))


def _kernel_names(kernel) -> list:
    """The kernel's own names in its function: arrays, scalars and loop indices."""
    return list(dict.fromkeys([*kernel.arrays, *kernel.scalars, *kernel.loop_indices]))


def _overlap_comment(kernel) -> tuple:
    """The two parts of the comment on what the compiler is told of the arrays' overlap: the
    ``restrict`` pointers are the kernel's distinct arrays; the others are pointers as the kernel
    declared them."""
    shared = [name for name, arr in kernel.arrays.items() if not arr.distinct]
    if not shared:
        return "the compiler knows the arrays do not overlap", "(restrict)"
    return ("the compiler knows the restrict arrays do not overlap",
            f"({', '.join(shared)}: parameters declared without restrict, which may overlap others),")


def _kernel_function(kernel, defines: dict, assume_aligned: int | None, threads: bool = False) -> list:
    names = [n for n in dict.fromkeys([*_kernel_names(kernel), *sorted(defines)]) if n != "defined"]  # never a macro
    out = ["/* the kernel's names are its own here: no macro of a header or of the compiler replaces them",
           "   (each one's definition is kept aside and restored after the function) */"]
    out += [f'#pragma push_macro("{name}")' for name in names] + [f"#undef {name}" for name in names]
    out += [f"#define {name} {value}" for name, value in sorted(defines.items())]
    told, why = _overlap_comment(kernel)
    out += [f"/* The kernel, compiled as a function of its own: {told}",
            f"   {why} but not where they are{' beyond the assumed alignment' if assume_aligned else ''}. */",
            f"void {KERNEL}({_parameters(kernel, defines)})", "{"]
    for name, sc in kernel.scalars.items():
        out.append(f"    {sc.ctype} {name} = *{_scalar_arg(name)};")
    for index in kernel.loop_indices:  # declared before the loop in the kernel file ('int i; for (i = 0; ...')
        if not re.search(rf"\bfor\s*\(\s*[A-Za-z_][\w\s]*?\s{re.escape(index)}\s*=", kernel.code):
            out.append(f"    long {index};")
    if assume_aligned:
        for name in kernel.arrays:
            out.append(f"    {name} = __builtin_assume_aligned({name}, {int(assume_aligned)});")
    out.append(f'    __asm__ volatile("# {MARK_START}");  /* marks the kernel in the assembly */')
    pragma = parallel_pragma(kernel) if threads else ""
    if pragma:
        out.append("    " + pragma)
    for line in kernel.code.rstrip("\n").split("\n"):
        out.append(("    " + line) if line.strip() else "")
    out.append(f'    __asm__ volatile("# {MARK_END}");')
    for name in kernel.scalars:
        out.append(f"    *{_scalar_arg(name)} = {name};")
    out += ["}"] + [f"#undef {name}" for name in sorted(defines)] + [f'#pragma pop_macro("{name}")' for name in names]
    return out + [""]


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
        var, block = _array_var(name), _block_var(name)
        ptr = f"(*{var}){inner}" if inner else f"*{var}"
        offset = array_offset(k, len(kernel.arrays))
        out.append(f"    char *{block} = aligned_alloc(4096, ((sizeof({arr.ctype}) * (size_t){total} + {offset} "
                   "+ 4095) / 4096) * 4096);")
        if checked:
            out.append(f'    if (!{block}) {{ fprintf(stderr, "cannot allocate array {name}\\n"); return 2; }}')
        out.append(f"    {arr.ctype} {ptr} = (void *)({block} + {offset});")
        if threads:  # first touch by the threads that work on the data (static schedule)
            out.append("    #pragma omp parallel for schedule(static)")
        out.append(f"    for (size_t {PREFIX}q = 0; {PREFIX}q < (size_t){total}; ++{PREFIX}q)")
        out.append(f"        (({arr.ctype} *){var})[{PREFIX}q] = ({arr.ctype})({PREFIX}q % 13) / 13 + 1;")
    for n, (name, sc) in enumerate(kernel.scalars.items()):
        out.append(f"    {sc.ctype} {_scalar_var(name)} = ({sc.ctype})({PREFIX}argc + {n + 1}) / 3;")
    return out


def _keep(kernel) -> list:
    """What the opaque calls receive: every array and the address of every scalar."""
    return [_array_var(a) for a in kernel.arrays] + [f"&{_scalar_var(s)}" for s in kernel.scalars]


def _call_loop(kernel, count: str, indent: str = "    ") -> list:
    """``for (rep < count)``: one kernel call, the swaps, the never-taken opaque calls."""
    args = ", ".join(_keep(kernel))
    rep = f"{PREFIX}rep"
    out = [f"{indent}for (long {rep} = 0; {rep} < {count}; ++{rep}) {{", f"{indent}    {KERNEL}_call({args});"]
    for a, b in getattr(kernel, "swaps", ()) or ():
        x, y = _array_var(a), _array_var(b)
        out.append(f"{indent}    {{ void *{PREFIX}t = {x}; {x} = {y}; {y} = {PREFIX}t; }}  /* swap({a}, {b}) */")
    out.append(f"{indent}    if ({PREFIX}argc > 1000) {{  /* never true: the compiler must assume the data is used */")
    out += [f"{indent}        {OPAQUE}({k});" for k in _keep(kernel)]
    out += [f"{indent}    }}", f"{indent}}}"]
    return out


def _teardown(kernel) -> list:
    out = [f"    {OPAQUE}({k});" for k in _keep(kernel)]
    out += [f"    free({_block_var(name)});" for name in kernel.arrays]
    return out + ["    return 0;", "}", ""]


_MAIN = f"int main(int {PREFIX}argc, char **{PREFIX}argv)"


def _main_function(kernel, defines: dict, repetitions: bool) -> list:
    out = [_MAIN, "{"]
    out += _allocations(kernel, defines)
    out.append(f"    long {PREFIX}reps = {PREFIX}argc > 1 ? atol({PREFIX}argv[1]) : 1;" if repetitions
               else f"    long {PREFIX}reps = 1;")
    out += _call_loop(kernel, f"{PREFIX}reps")
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

#: argument checks and pinning, first lines of the timed ``main`` (every local ``loopmodel_``-named)
_TIMED_ARGS = r"""    if (loopmodel_argc < 4 || loopmodel_argc > 6) {
        fprintf(stderr, "usage: %s REPS_PER_RUN RUNS CPU [MIN_TIME_S [FLUSH_BYTES]]\n", loopmodel_argv[0]);
        return 2;
    }
    long loopmodel_reps = atol(loopmodel_argv[1]);
    int loopmodel_runs = atoi(loopmodel_argv[2]);
    int loopmodel_cpu = atoi(loopmodel_argv[3]);
    double loopmodel_min_time = loopmodel_argc > 4 ? atof(loopmodel_argv[4]) : 0.0;
    long loopmodel_flush_n = loopmodel_argc > 5 ? atol(loopmodel_argv[5]) / (long)sizeof(double) : 0;
    double *loopmodel_flush = loopmodel_flush_n > 0 ? calloc((size_t)loopmodel_flush_n, sizeof(double)) : NULL;
    if (loopmodel_flush_n > 0 && !loopmodel_flush) { fprintf(stderr, "cannot allocate the flush buffer\n"); return 2; }
    if (loopmodel_reps < 0 || loopmodel_runs < 1 || (loopmodel_reps == 0 && !(loopmodel_min_time > 0))) {
        fprintf(stderr, "REPS_PER_RUN >= 1 (0: calibrate, needs MIN_TIME_S > 0) and RUNS >= 1 expected\n");
        return 2;
    }
    double *loopmodel_seconds = malloc(sizeof(double) * (size_t)loopmodel_runs);
    if (!loopmodel_seconds) { fprintf(stderr, "cannot allocate the result array\n"); return 2; }
    int loopmodel_pinned = loopmodel_pin(loopmodel_cpu);  /* before the first touch: pages local to that CPU */
    loopmodel_flush_denormals();"""

#: the JSON result line, after the timed runs
_TIMED_OUTPUT = r"""    printf("{\"seconds\": [");
    for (int loopmodel_r = 0; loopmodel_r < loopmodel_runs; ++loopmodel_r)
        printf("%s%.9e", loopmodel_r ? ", " : "", loopmodel_seconds[loopmodel_r]);
    printf("], \"reps\": %ld, \"runs\": %d, \"cpu\": %d, \"pinned\": %s}\n", loopmodel_reps, loopmodel_runs,
           loopmodel_cpu, loopmodel_pinned ? "true" : "false");
    free(loopmodel_seconds);
    free(loopmodel_flush);"""


def _calibration(kernel) -> list:
    """REPS_PER_RUN 0: calls doubled until two runs in a row last MIN_TIME_S (a run the OS
    preempted does not end it early)."""
    out = [f"    for (long {PREFIX}probe = 1; {PREFIX}reps == 0; {PREFIX}probe *= 2) {{  /* calibration: doubling */",
           f"        double {PREFIX}t0 = {PREFIX}now();"]
    out += _call_loop(kernel, f"{PREFIX}probe", "        ")
    out += [f"        double {PREFIX}el = {PREFIX}now() - {PREFIX}t0;",
            f"        if ({PREFIX}el >= {PREFIX}min_time) {{  /* once more: a run the OS preempted also lasts that long */",
            f"            {PREFIX}t0 = {PREFIX}now();"]
    out += _call_loop(kernel, f"{PREFIX}probe", "            ")
    out += [f"            double {PREFIX}again = {PREFIX}now() - {PREFIX}t0;",
            f"            {PREFIX}el = {PREFIX}again < {PREFIX}el ? {PREFIX}again : {PREFIX}el;", "        }",
            f"        if ({PREFIX}el >= {PREFIX}min_time || {PREFIX}probe >= (1L << 30))",
            f"            {PREFIX}reps = {PREFIX}probe;", "    }"]
    return out


def _timed_main_function(kernel, defines: dict, threads: bool = False) -> list:
    """``main(REPS_PER_RUN RUNS CPU [MIN_TIME_S])``: pin, first touch, one warm-up call,
    calibration (:func:`_calibration`), RUNS timed runs."""
    out = [_MAIN, "{"]
    out += _TIMED_ARGS.split("\n")
    out += _allocations(kernel, defines, checked=True, threads=threads)
    out.append("    /* warm-up: data (and code) in the caches they are in during the timed runs */")
    out += _call_loop(kernel, "1")
    out += _calibration(kernel)
    out += [f"    for (int {PREFIX}run = 0; {PREFIX}run < {PREFIX}runs; ++{PREFIX}run) {{",
            f"        for (long {PREFIX}q = 0; {PREFIX}q < {PREFIX}flush_n; ++{PREFIX}q)"
            "  /* cold: the kernel's data evicted by the buffer */",
            f"            {PREFIX}flush[{PREFIX}q] += 1.0;",
            f"        if ({PREFIX}flush_n > 0) {OPAQUE}({PREFIX}flush);",
            f"        double {PREFIX}t0 = {PREFIX}now();"]
    out += _call_loop(kernel, f"{PREFIX}reps", "        ")
    out += [f"        {PREFIX}seconds[{PREFIX}run] = {PREFIX}now() - {PREFIX}t0;", "    }"]
    out += _TIMED_OUTPUT.split("\n")
    return out + _teardown(kernel)


def check_names(kernel) -> None:
    """Refuse a kernel that cannot be compiled as the program loopmodel generates: no C code
    (a kernel description), or a name (size constant, array, scalar, loop index) starting
    ``loopmodel_`` (the program's own names) or reserved for the C implementation (``__x``,
    ``_X``).

    Raises:
        ToolError: one line naming the kernel and the first such name.
    """
    if not kernel.code:
        raise ToolError("the kernel has no C code to compile (a kernel description): give the C kernel",
                        file=kernel.source)
    names = set(kernel.constants) | set(_kernel_names(kernel))
    clash = sorted(n for n in names if n.startswith(PREFIX) or _RESERVED.match(n))
    if clash:
        why = ("names starting 'loopmodel_' are the generated program's own" if clash[0].startswith(PREFIX)
               else "names starting '__' or '_' and a capital are reserved for the C implementation")
        raise ToolError(f"'{clash[0]}' cannot be compiled as a kernel name ({why}): rename it in the kernel",
                        file=kernel.source)


def generate_c(kernel, defines: dict, repetitions: bool = True, assume_aligned: int | None = None,
               timed: bool = False, threads: bool = False) -> str:
    """C source of a program running the kernel (compiles and links on its own).

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel` parsed from C (its :attr:`code`, the nest
            printed from the checked syntax tree, is the only kernel text in the program).
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
        ToolError: no C code, or a name the program cannot hold (:func:`check_names`).
    """
    check_names(kernel)
    swaps = [f"swap({a}, {b})" for a, b in (getattr(kernel, "swaps", ()) or ())]
    out = [f"/* Generated by loopmodel {__version__} from {comment_text(kernel.source)}",
           "   (" + ", ".join(f"{k}={v}" for k, v in sorted(defines.items())) + ").",
           "   The kernel loop nest, printed from the parsed kernel, in its own function (arrays passed in, "
           "alignment " + (f"assumed {int(assume_aligned)} B" if assume_aligned else "unknown") + "),",
           "   arrays on the heap in main, opaque calls keep the work alive"
           + (f"; {', '.join(swaps)} after each call" if swaps else "") + ". */"]
    if timed:
        out += ["/* " + TIMED_USAGE.replace("\n", "\n    ") + " */", "#define _GNU_SOURCE", "#include <sched.h>",
                "#include <stdio.h>", "#include <time.h>"]
    out += ["#include <stdlib.h>", "#include <math.h>"] + [f"#include <{h}>" for h in _type_headers(kernel)] + [""]
    out += ["/* weak: may be replaced at link time, so the compiler cannot see through it */",
            f"__attribute__((weak)) void {OPAQUE}(void *p) {{ (void)p; }}", ""]
    out += _kernel_function(kernel, defines, assume_aligned, threads and timed)
    out += ["/* called through a volatile pointer: never inlined, nothing known at the call site */",
            f"static void (*volatile {KERNEL}_call)({_parameters(kernel, defines, named=False)}) = {KERNEL};", ""]
    if timed:
        out += _TIMED_HELPERS.split("\n") + _timed_main_function(kernel, defines, threads)
    else:
        out += _main_function(kernel, defines, repetitions)
    return "\n".join(out)
