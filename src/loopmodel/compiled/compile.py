"""Compiling the generated program to assembly with the machine model's compiler and flags.

Compiler choice: ``--compiler`` if given, else ``gcc`` (``aarch64-linux-gnu-gcc`` for an
AArch64 machine model on another host). Flags: ``--compiler-flags`` if given, else the
machine model's ``compiler`` entry for that compiler, with link-only flags (``-l...``)
dropped. Errors are one line (:class:`~loopmodel.errors.ToolError`).
"""
from __future__ import annotations

import os
import platform
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass

from ..errors import ToolError


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
    m = platform.machine().lower()
    return {"arm64": "aarch64", "x86_64": "x86", "amd64": "x86"}.get(m, m)


def choose_compiler(machine, compiler: str | None = None, flags: str | None = None) -> CompilerChoice:
    """The compiler and flags for ``machine``.

    Raises:
        ToolError: the compiler is not installed (the message says how to get it).
    """
    isa = (machine.isa or "x86").lower()
    target = CROSS.get(isa)
    cross = target is not None and _host_isa() != target[0]
    cmd = compiler or (target[1] if cross else "gcc")
    family = "clang" if "clang" in os.path.basename(cmd) else ("icc" if "icc" in cmd or "icx" in cmd else "gcc")
    if flags is None:
        flags = machine.compiler.get(family) or machine.compiler.get("gcc") or "-O3"
    parts = tuple(f for f in shlex.split(flags) if not f.startswith("-l"))
    path = shutil.which(cmd)
    if path is None:
        pkg = next((t[2] for t in CROSS.values() if t[1] == cmd), None)
        hint = (f" (install Debian's {pkg} to analyze {machine.isa} machines on this host)" if pkg else "")
        raise ToolError(f"compiler '{cmd}' not found{hint}; choose one with --compiler")
    from .. import cache

    return CompilerChoice(cmd, parts, cache.tool_version(path, _version))


def _version(path: str) -> str:
    try:
        return subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n")[0]
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"


def compile_to_assembly(c_source: str, choice: CompilerChoice) -> str:
    """Assembly text of ``c_source`` (compiled with ``-S``).

    Raises:
        ToolError: the compiler failed (its first error line is given).
    """
    with tempfile.TemporaryDirectory(prefix="loopmodel-") as d:
        src = os.path.join(d, "kernel.c")
        with open(src, "w", encoding="utf-8") as fh:
            fh.write(c_source)
        out = os.path.join(d, "kernel.s")
        cmd = [choice.command, *choice.flags, "-S", "-o", out, src]
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        except subprocess.TimeoutExpired:
            raise ToolError(f"{choice.command} did not finish within 120 s") from None
        if p.returncode != 0:
            errs = [ln for ln in p.stderr.splitlines() if "error" in ln] or p.stderr.splitlines() or ["(no output)"]
            raise ToolError(f"{choice.command} failed ({' '.join(shlex.quote(c) for c in choice.flags)}): "
                            f"{errs[0].replace(src, 'kernel.c')}")
        with open(out, encoding="utf-8") as fh:
            return fh.read()
