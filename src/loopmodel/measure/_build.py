"""Compiling and running the measurement programs; every failure is a one-line ToolError."""
from __future__ import annotations

import os
import shlex
import shutil
import subprocess

from ..errors import ToolError


def find_compiler(compiler: str) -> str:
    """Full path of ``compiler``.

    Raises:
        ToolError: not installed.
    """
    path = shutil.which(compiler) if compiler else None
    if path is None:
        raise ToolError(f"compiler '{compiler}' not found; choose one with --compiler")
    return path


def compiler_version(path: str) -> str:
    """First line of ``COMPILER --version`` (``'unknown'`` if it cannot be run)."""
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired):
        return "unknown"
    return (out.splitlines() or ["unknown"])[0].strip()


def compile_program(source: str, name: str, directory: str, compiler: str, flags) -> str:
    """Write ``source`` to ``directory/name.c``, compile and link it; return the executable's path.

    ``directory`` is a private temporary directory of the caller: nothing is written
    anywhere else.

    Raises:
        ToolError: compiler missing, or compilation failed (the first error line is given,
            with the temporary path replaced by the file name).
    """
    path = find_compiler(compiler)
    src = os.path.join(directory, f"{name}.c")
    exe = os.path.join(directory, name)
    with open(src, "w", encoding="utf-8") as fh:
        fh.write(source)
    cmd = [path, *flags, "-o", exe, src]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=directory)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{compiler} did not finish compiling {name}.c within 120 s") from None
    except OSError as exc:
        raise ToolError(f"cannot run {compiler}: {exc.strerror or exc}") from None
    if p.returncode != 0 or not os.path.exists(exe):
        lines = [ln.strip() for ln in p.stderr.splitlines() if ln.strip()]
        errs = [ln for ln in lines if ("error" in ln.lower() or "undefined reference" in ln)
                and "ld returned" not in ln] or lines or ["(no output)"]
        first = errs[0].replace(src, f"{name}.c").replace(exe, name).replace(directory + os.sep, "")
        raise ToolError(f"{compiler} {' '.join(shlex.quote(f) for f in flags)} failed on {name}.c: {first}")
    return exe
