"""Compiling the generated program to assembly with the machine model's compiler and flags.

Compiler choice: ``--compiler`` if given, else the machine model's gcc-family compiler
entry (``gcc``, ``gcc-12``, ...; ``aarch64-linux-gnu-gcc`` for an AArch64 machine model on
another host). Flags: ``--compiler-flags`` if given, else the machine model's ``compiler``
entry for that compiler, with link-only flags (``-l...``) dropped. Errors are one line
(:class:`~loopmodel.errors.ToolError`).

Trust model (:mod:`loopmodel.gate`): the command line is trusted, a machine file is not (it
is data, often downloaded). Flags and compiler names taken from a machine file must pass
:func:`loopmodel.gate.check_flags` / :func:`loopmodel.gate.check_compiler_name` (an
allow-list: nothing that loads plugins, runs programs, reads response files or writes files)
unless the user passes ``--trust-machine-flags``; violations are one-line
:class:`~loopmodel.errors.MachineError` s (exit status 2), never a fallback.

:func:`fp_reassociation` tells from the compiler and flags whether floating-point
reductions may be split into partial sums (the analytic in-core model's assumption).
"""
from __future__ import annotations

from dataclasses import dataclass

import os
import re
import shlex
import shutil

from .. import gate, toolchain
from ..errors import MachineError, OptionError, ToolError
from .loop_report import GCC_REPORT_FLAG


@dataclass(frozen=True)
class CompilerChoice:
    """Compiler command and flags (list of str)."""

    command: str
    flags: tuple
    version: str


#: machine-model ISA -> (host ISA name, cross compiler, Debian package)
CROSS = {"aarch64": ("aarch64", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
         "arm64": ("aarch64", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu"),
         "ppc64le": ("ppc64le", "powerpc64le-linux-gnu-gcc", "gcc-powerpc64le-linux-gnu"),
         "power": ("ppc64le", "powerpc64le-linux-gnu-gcc", "gcc-powerpc64le-linux-gnu")}


def is_aarch64(machine) -> bool:
    """Whether ``machine``'s ISA is AArch64 (assembly syntax of its compiled kernels)."""
    return CROSS.get((machine.isa or "").lower(), (None,))[0] == "aarch64"


def _host_isa() -> str:
    m = toolchain.host_machine().lower()
    return {"arm64": "aarch64", "x86_64": "x86", "amd64": "x86"}.get(m, m)


def compiler_family(command: str) -> str:
    """``'gcc'``, ``'clang'``, ``'icc'`` or ``'icx'`` for a compiler command (path or name).

    ``cc``, cross compilers (``aarch64-linux-gnu-gcc``) and unknown names count as gcc;
    ``armclang`` as clang; ``icpc``/``icpx`` as icc/icx."""
    base = os.path.basename(command)
    if "clang" in base:
        return "clang"
    if "icx" in base or "icpx" in base:
        return "icx"
    if "icc" in base or "icpc" in base:
        return "icc"
    return "gcc"


@dataclass(frozen=True)
class CompilerSetting:
    """Which compiler and flags an analysis uses, before anything is run.

    Attributes:
        command: compiler command (``--compiler``, the machine file's gcc-family entry, or
            the default ``gcc`` / cross compiler).
        family: :func:`compiler_family` of ``command``.
        flags: flags (tuple of str, link-only ``-l...`` dropped).
        dropped: the link-only ``-l...`` flags left out of ``flags`` (loopmodel links what its
            programs need); a machine file's are still checked against the allow-list.
        flags_from: ``"--compiler-flags"``, ``"machine file (compiler.<key>)"`` or ``"default"``.
        machine_key: the machine file's ``compiler`` key the flags came from (None otherwise).
        command_from_machine: the command is a machine file's ``compiler`` key.
        cross: a cross compiler for a machine of another ISA than the host's.
    """

    command: str
    family: str
    flags: tuple
    flags_from: str
    machine_key: str | None = None
    command_from_machine: bool = False
    cross: bool = False
    dropped: tuple = ()


def resolve_compiler(machine, compiler: str | None = None, flags: str | None = None) -> CompilerSetting:
    """The compiler and flags for ``machine`` (pure: nothing is looked up on the PATH or run).

    Args:
        machine: :class:`~loopmodel.machine.model.MachineModel`.
        compiler: ``--compiler`` (trusted), or None.
        flags: ``--compiler-flags`` (trusted, shell-split), or None.

    Raises:
        ToolError: ``flags`` cannot be split like a shell would.
        MachineError: the machine file's flags cannot be split like a shell would.
    """
    isa = (machine.isa or "x86").lower()
    target = CROSS.get(isa)
    cross = target is not None and _host_isa() != target[0]
    entries = dict(machine.compiler or {})
    from_machine = False
    if compiler:
        cmd = compiler
    elif cross:
        cmd = target[1]
    else:
        cmd = next((k for k in entries if _GCC_NAME.fullmatch(os.path.basename(k))), "gcc")
        from_machine = cmd in entries
    family = compiler_family(cmd)
    key = None
    if flags is None:
        base = os.path.basename(cmd)
        key = next((k for k in (base, family) if k in entries), None)
        if key is None and family == "icx" and "icc" in entries:
            key = "icc"  # the classic compiler's flags: icx accepts them
        if key is None:
            key = next((k for k in entries if compiler_family(k) == family), None)
        if key is None and "gcc" in entries:
            key = "gcc"
        text, origin = (entries[key], f"machine file (compiler.{key})") if key else ("-O3", "default")
    else:
        text, origin = flags, "--compiler-flags"
    try:
        words = shlex.split(str(text))
    except ValueError as exc:
        if key is not None:
            raise MachineError(f"cannot split the compiler flags {text!r}: {exc}", where=f"compiler.{key}") from None
        raise OptionError(f"--compiler-flags: cannot split {text!r}: {exc}") from None
    parts = tuple(f for f in words if not f.startswith("-l"))
    dropped = tuple(f for f in words if f.startswith("-l"))
    return CompilerSetting(cmd, family, parts, origin, key, from_machine, cross, dropped)


def choose_compiler(machine, compiler: str | None = None, flags: str | None = None,
                    trust_machine: bool = False, machine_file: str | None = None) -> CompilerChoice:
    """The compiler and flags for ``machine``, checked (see the trust model above) and found.

    Args:
        machine, compiler, flags: as :func:`resolve_compiler`.
        trust_machine: ``--trust-machine-flags``: take the machine file's flags and
            compiler name as they are.
        machine_file: the machine file's path or built-in name (for error messages).

    Raises:
        MachineError: a flag or compiler name from the machine file is not allowed.
        ToolError: the compiler is not installed (the message says how to get it).
    """
    setting = resolve_compiler(machine, compiler, flags)
    if not trust_machine:
        origin = machine_file or f"machine model '{machine.name}'"
        if setting.command_from_machine:
            gate.check_compiler_name(setting.command, origin)
        if setting.machine_key is not None:
            gate.check_flags(setting.flags + setting.dropped, origin, f"compiler.{setting.machine_key}")
    cmd, parts = setting.command, setting.flags
    path = shutil.which(cmd)
    if path is None:
        pkg = next((t[2] for t in CROSS.values() if t[1] == cmd), None)
        hint = (f" (install Debian's {pkg} to analyze {machine.isa} machines on this host)" if pkg else "")
        error = ToolError if compiler is None else OptionError  # --compiler names it explicitly
        raise error(f"compiler '{cmd}' not found{hint}; choose one with --compiler")
    if compiler or trust_machine:
        gate.allow_compiler(path)  # named by the person running loopmodel
    return CompilerChoice(cmd, parts, toolchain.tool_version(path))


#: a machine file's ``compiler`` key naming a gcc (the default compiler): gcc, cc, with prefix/version
_GCC_NAME = re.compile(r"(?:.*-)?g?cc(?:-\d+(?:\.\d+)*)?")


def fp_reassociation(command: str, flags) -> tuple:
    """Whether the compiler may split floating-point reductions into partial sums, and why.

    gcc (and cc, cross gcc): only when -fassociative-math is in effect together with
    -fno-signed-zeros and -fno-trapping-math (gcc 12 disables -fassociative-math otherwise,
    with a warning); -funsafe-math-optimizations, -ffast-math and -Ofast imply all three.
    The last -O level counts (-Ofast then -O3 is -O3); explicit -f options override -Ofast
    in either order. clang: the same rule (it follows gcc), trapping math off by default,
    -ffp-model=fast/precise/strict. icc/icx: reassociate by default (-fp-model fast=1)
    unless -fp-model precise, strict, consistent (or source, double, extended; icx also
    -ffp-model=precise/strict, -fno-fast-math).

    Args:
        command: compiler command (name or path).
        flags: compiler flags (sequence of str).

    Returns:
        ``(assumed: bool, reason: str)``; the reason names the deciding flag(s).
    """
    family = compiler_family(command)
    flags = list(flags)
    if family in ("icc", "icx"):
        return _intel_reassociation(family, flags)
    level = next((f for f in reversed(flags) if re.fullmatch(r"-O(?:[0-3sgz]|fast)?", f)), None)
    st = _fast_state(level == "-Ofast", trapping=family != "clang")
    for f in flags:
        _apply_fp_flag(st, f)
    assumed = st["assoc"] and not st["signed_zeros"] and not st["trapping"]
    name = os.path.basename(command)
    if assumed:
        why = "with " + " ".join(st["why"]) if st["why"] else "by default"
        return True, f"{name} reassociates floating-point reductions {why}"
    needed = ("-ffast-math, -Ofast, or -fassociative-math with -fno-signed-zeros"
              + (" and -fno-trapping-math" if family != "clang" else ""))
    given = f" ({' '.join(st['why'])} given)" if st["why"] else ""
    return False, f"{name} keeps the source order of floating-point reductions: {needed} not in effect{given}"


def _fast_state(fast: bool, trapping: bool) -> dict:
    return {"assoc": fast, "signed_zeros": not fast, "trapping": trapping and not fast,
            "why": ["-Ofast"] if fast else []}


def _apply_fp_flag(st: dict, f: str) -> None:
    """Update the gcc/clang floating-point state with one flag (left to right)."""
    on = {"-ffast-math": True, "-fno-fast-math": False, "-funsafe-math-optimizations": True,
          "-fno-unsafe-math-optimizations": False, "-ffp-model=fast": True, "-ffp-model=precise": False,
          "-ffp-model=strict": False}
    if f in on:
        st["assoc"], st["signed_zeros"], st["trapping"] = on[f], not on[f], not on[f] and st["trapping"]
        if f == "-ffp-model=strict":
            st["trapping"] = True
    elif f in ("-fassociative-math", "-fno-associative-math"):
        st["assoc"] = f == "-fassociative-math"
    elif f in ("-fsigned-zeros", "-fno-signed-zeros"):
        st["signed_zeros"] = f == "-fsigned-zeros"
    elif f in ("-ftrapping-math", "-fno-trapping-math"):
        st["trapping"] = f == "-ftrapping-math"
    else:
        return
    st["why"].append(f)


def _intel_reassociation(family: str, flags: list) -> tuple:
    model = None
    for i, f in enumerate(flags):
        value = flags[i + 1] if f == "-fp-model" and i + 1 < len(flags) else (
            f.split("=", 1)[1] if f.startswith(("-fp-model=", "-ffp-model=")) else None)
        if value is not None:
            if value not in ("except", "no-except"):  # modifiers, not models
                model = value
        elif f == "-fno-fast-math":
            model = "precise"
        elif f == "-ffast-math":
            model = "fast"
    if model is not None and not model.startswith("fast"):
        return False, f"{family} keeps the source order of floating-point reductions with -fp-model {model}"
    return True, (f"{family} reassociates floating-point reductions by default (-fp-model fast=1)"
                  if model is None else f"{family} reassociates floating-point reductions with -fp-model {model}")


_OMP = re.compile(r"^(\s*)#\s*pragma\s+omp\b(.*)$")
_OMP_SIMD_CLAUSES = r"\b(safelen|simdlen|linear|aligned|reduction|collapse|private)\s*\([^)]*\)"


def single_core_source(c_source: str) -> str:
    """``c_source`` as one core runs it: OpenMP work-sharing pragmas removed.

    With ``-fopenmp`` (a machine file's flags often have it) gcc outlines the body of an
    ``#pragma omp parallel for`` loop into a function of its own, started by
    ``GOMP_parallel``: the marked kernel region then holds no loop, or the wrong one, and the
    in-core analysis (of one core, kerncraft-tool-paper.txt §2.3) would not see the kernel's
    loop. So every ``#pragma omp`` line is replaced by an empty line (line numbers kept),
    except that its ``simd`` part, a single-core vectorization hint, stays: ``#pragma omp
    parallel for simd reduction(+:s)`` becomes ``#pragma omp simd reduction(+:s)``. The flags
    are left as they are (dropping ``-fopenmp`` would also drop ``omp simd``), so a kernel with
    the pragma compiles to the same loop block as the kernel without it. A continued pragma
    (trailing backslash) is removed with its continuation lines.

    Args:
        c_source: the generated program (:func:`.codegen.generate_c`).

    Returns:
        The program text; unchanged when it has no ``#pragma omp``.
    """
    out, cont = [], False
    for ln in c_source.split("\n"):
        if cont:
            cont = ln.rstrip().endswith("\\")
            out.append("")
            continue
        m = _OMP.match(ln)
        if not m:
            out.append(ln)
            continue
        cont = ln.rstrip().endswith("\\")
        words = m.group(2).split()
        if "simd" in words and not cont and "declare" not in words:
            clauses = " ".join(c.group(0) for c in re.finditer(_OMP_SIMD_CLAUSES, m.group(2)))
            out.append(f"{m.group(1)}#pragma omp simd {clauses}".rstrip())
        elif "declare" in words:
            out.append(ln)  # declare simd/reduction: declarations, no threads
        else:
            out.append("")
    return "\n".join(out)


def assembly_and_report(c_source: str, choice: CompilerChoice) -> tuple:
    """``(assembly, optimisation report or None)`` of ``c_source``: gcc's report of the loops it
    vectorised, unrolled, versioned and interchanged (:data:`.loop_report.GCC_REPORT_FLAG`);
    other compilers give none (None) and the assembly alone.

    Raises:
        ToolError: as :func:`compile_to_assembly`.
    """
    if compiler_family(choice.command) != "gcc" or "clang" in choice.version.lower():
        return compile_to_assembly(c_source, choice), None
    return toolchain.assembly_and_report(c_source, choice.command, choice.flags, GCC_REPORT_FLAG)


def compile_to_assembly(c_source: str, choice: CompilerChoice) -> str:
    """Assembly text of ``c_source`` (compiled with ``-S``, :func:`loopmodel.toolchain.compile_c`).

    Raises:
        ToolError: the compiler is missing or failed (its first error line is given,
            ``kernel.c:line:col: error: ...``).
    """
    return toolchain.compile_c(c_source, choice.command, choice.flags, "assembly", "kernel")
