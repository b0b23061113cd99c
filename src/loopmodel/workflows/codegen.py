"""``codegen``: the compilable C program loopmodel builds around a kernel (the program the
compiled in-core analysis and ``bench`` compile; kerncraft-tool-paper.txt §3.3)."""
from __future__ import annotations

from dataclasses import dataclass

from ..compiled.codegen import generate_c
from ..errors import DefineError
from ..fileio.c_kernel import load_c_kernel
from ..fileio.defines import one_point, sweep
from ..fileio.kernel_yaml import YAML_SUFFIXES
from .inputs import alignment_bytes, kernel_reference, size_defines
from .options import function_option, include_option, option


@dataclass(frozen=True)
class CodegenOptions:
    """``codegen``'s options."""

    define: tuple = option((), "size constant (one value each)", "-D", "--define", metavar="NAME=VALUE")
    function: str | None = function_option()
    include: tuple = include_option()
    assume_aligned: str | None = option(
        None, "compiled kernel: the compiler may assume every array aligned to BYTES (a power of two, e.g. 32); "
              "default: no alignment knowledge, as for arrays passed in from elsewhere", "--assume-aligned",
        metavar="BYTES")


def run(kernel: str, options: CodegenOptions) -> str:
    """The C program around the kernel file ``kernel`` at the sizes of ``options.define``.

    Raises:
        DefineError: a YAML kernel description (no code), a size without a value, a bad
            ``--assume-aligned`` (one line). KernelError: an unreadable or unsupported kernel.
    """
    if str(kernel).lower().endswith(YAML_SUFFIXES):
        raise DefineError("codegen needs a C kernel; a YAML kernel description has no code", file=kernel)
    parsed = load_c_kernel(kernel_reference(kernel, options))
    model = parsed.kernel
    point = one_point(sweep(size_defines(options), parsed.defaults), "codegen")
    missing = model.free_constants(point)
    if missing:
        raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size>")
    return generate_c(model, point, assume_aligned=alignment_bytes(options.assume_aligned))
