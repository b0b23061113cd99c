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

from .. import __version__

OPAQUE = "loopmodel_opaque"
KERNEL = "loopmodel_kernel"
MARK_START = "LOOPMODEL KERNEL START"
MARK_END = "LOOPMODEL KERNEL END"
_SWAP = re.compile(r"\bswap\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*;")


def kernel_loop_text(kernel, text: str) -> str:
    """The loop nest of ``text`` (the kernel file): from the first loop (or the ``#pragma``
    lines right before it) to the end, comments kept; ``swap(a, b);`` statements are
    replaced by a comment (the caller exchanges the pointers)."""
    lines = text.split("\n")
    first = kernel.loops[0].line - 1
    while first > 0 and lines[first - 1].strip().startswith("#pragma"):
        first -= 1
    body = "\n".join(lines[first:]).rstrip() + "\n"
    return _SWAP.sub(lambda m: f"/* swap({m.group(1)}, {m.group(2)}): after the call, in main */", body)


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


def _kernel_function(kernel, text: str, defines: dict, assume_aligned: int | None) -> list:
    out = ["/* The kernel, compiled as a function of its own: the compiler knows the arrays do not overlap",
           f"   (restrict) but not where they are{' beyond the assumed alignment' if assume_aligned else ''}. */",
           f"void {KERNEL}({_parameters(kernel, defines)})", "{"]
    for name, sc in kernel.scalars.items():
        out.append(f"    {sc.ctype} {name} = *{_scalar_arg(name)};")
    if assume_aligned:
        for name in kernel.arrays:
            out.append(f"    {name} = __builtin_assume_aligned({name}, {int(assume_aligned)});")
    out.append(f'    __asm__ volatile("# {MARK_START}");  /* marks the kernel in the assembly */')
    for line in kernel_loop_text(kernel, text).rstrip("\n").split("\n"):
        out.append(("    " + line) if line.strip() else "")
    out.append(f'    __asm__ volatile("# {MARK_END}");')
    for name in kernel.scalars:
        out.append(f"    *{_scalar_arg(name)} = {name};")
    out += ["}", ""]
    return out


def _main_function(kernel, defines: dict, repetitions: bool) -> list:
    out = ["int main(int argc, char **argv)", "{"]
    for name, arr in kernel.arrays.items():
        dims = _dims(arr, defines)
        inner = "".join(f"[{d}]" for d in dims[1:])
        total = " * ".join(str(d) for d in dims)
        ptr = f"(*{name}){inner}" if inner else f"*{name}"
        out.append(f"    {arr.ctype} {ptr} = aligned_alloc(4096, ((sizeof({arr.ctype}) * (size_t){total} + 4095) "
                   "/ 4096) * 4096);")
        out.append(f"    for (size_t q = 0; q < (size_t){total}; ++q)")
        out.append(f"        (({arr.ctype} *){name})[q] = ({arr.ctype})(q % 13) / 13 + 1;")
    for n, (name, sc) in enumerate(kernel.scalars.items()):
        out.append(f"    {sc.ctype} {name} = ({sc.ctype})(argc + {n + 1}) / 3;")
    args = ", ".join(list(kernel.arrays) + [f"&{s}" for s in kernel.scalars])
    out.append("    long reps = argc > 1 ? atol(argv[1]) : 1;" if repetitions else "    long reps = 1;")
    out.append("    for (long rep = 0; rep < reps; ++rep) {")
    out.append(f"        {KERNEL}_call({args});")
    for a, b in getattr(kernel, "swaps", ()) or ():
        out.append(f"        {{ void *loopmodel_t = {a}; {a} = {b}; {b} = loopmodel_t; }}  /* swap({a}, {b}) */")
    keep = list(kernel.arrays) + [f"&{s}" for s in kernel.scalars]
    out.append("        if (argc > 1000) {  /* never true: the compiler must assume the data is used */")
    out += [f"            {OPAQUE}({k});" for k in keep]
    out.append("        }")
    out.append("    }")
    out += [f"    {OPAQUE}({k});" for k in keep]
    for name in kernel.arrays:
        out.append(f"    free({name});")
    out += ["    return 0;", "}", ""]
    return out


def generate_c(kernel, text: str, defines: dict, repetitions: bool = True, assume_aligned: int | None = None) -> str:
    """C source of a program running the kernel (compiles and links on its own).

    Args:
        kernel: :class:`~loopmodel.ir.kernel.Kernel` parsed from ``text``.
        text: the kernel file's text.
        defines: size constant -> int (all constants of the kernel).
        repetitions: call the kernel ``argv[1]`` times (for running it).
        assume_aligned: bytes the kernel function may assume every array aligned to
            (``__builtin_assume_aligned``); None: no alignment knowledge.

    Returns:
        The program text: ``loopmodel_kernel`` (the loop nest between the
        ``# LOOPMODEL KERNEL START/END`` assembly markers), a weak ``loopmodel_opaque`` and
        ``main``.
    """
    swaps = [f"swap({a}, {b})" for a, b in (getattr(kernel, "swaps", ()) or ())]
    out = [f"/* Generated by loopmodel {__version__} from {kernel.source}",
           "   (" + ", ".join(f"{k}={v}" for k, v in sorted(defines.items())) + ").",
           "   The kernel loop nest verbatim in its own function (arrays passed in, alignment "
           + (f"assumed {int(assume_aligned)} B" if assume_aligned else "unknown") + "),",
           "   arrays on the heap in main, opaque calls keep the work alive"
           + (f"; {', '.join(swaps)} after each call" if swaps else "") + ". */",
           "#include <stdlib.h>", "#include <math.h>", ""]
    for name, value in sorted(defines.items()):
        out.append(f"#define {name} {value}")
    out += ["", "/* weak: may be replaced at link time, so the compiler cannot see through it */",
            f"__attribute__((weak)) void {OPAQUE}(void *p) {{ (void)p; }}", ""]
    out += _kernel_function(kernel, text, defines, assume_aligned)
    out += ["/* called through a volatile pointer: never inlined, nothing known at the call site */",
            f"static void (*volatile {KERNEL}_call)({_parameters(kernel, defines)}) = {KERNEL};", ""]
    out += _main_function(kernel, defines, repetitions)
    return "\n".join(out)


def opaque_c() -> str:
    """A second translation unit with a strong ``loopmodel_opaque`` (optional: the program
    defines a weak one; linking both keeps this one)."""
    return f"void {OPAQUE}(void *p) {{ (void)p; }}\n"
