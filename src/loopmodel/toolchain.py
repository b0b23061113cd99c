"""External tools: finding a compiler, compiling C, asking a tool for its version.

The one place where loopmodel runs a C compiler (the compiled in-core analysis compiles a
kernel to assembly, :mod:`loopmodel.compiled.compile`; the measurements build their
benchmark programs, :mod:`loopmodel.measure`; the SIMD level of compiler flags is read from
the predefined macros, :mod:`loopmodel.compiled.isa`) and asks a tool for its version.
It sits at the top of the package next to :mod:`loopmodel.cache` and
:mod:`loopmodel.errors`, which it alone uses, so that both ``compiled/`` and ``measure/``
import it without importing each other.

Errors are one line (:class:`~loopmodel.errors.ToolError`): a missing compiler is named;
a failed compilation gives the compiler, the file, the flags and the compiler's first error
line: ``gcc failed on kernel.c (flags: -O3): kernel.c:12:5: error: ...`` (the private
temporary directory is left out of the paths).
"""
from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import shutil
import tempfile

from . import cache, gate
from .errors import ToolError

#: seconds a compilation may take
COMPILE_TIMEOUT_S = 120
#: seconds a ``--version`` question may take
VERSION_TIMEOUT_S = 30

#: what :func:`compile_c` produces: output -> the flags that select it (before ``-o``)
_OUTPUTS = {"assembly": ("-S",), "executable": (), "macros": ("-dM", "-E"), "preprocessed": ("-E", "-P")}


def find_compiler(compiler: str) -> str:
    """Absolute path of ``compiler`` (a name looked up on the PATH, or a path).

    Raises:
        ToolError: not installed (the message names ``compiler``).
    """
    path = shutil.which(compiler) if compiler else None
    if path is None:
        raise ToolError(f"compiler '{compiler}' not found; choose one with --compiler")
    return os.path.abspath(path)  # the compiler runs in another directory


def compiler_identity(compiler: str) -> tuple:
    """What tells the compiler that ``compiler`` (a name looked up on the PATH, or a path) stands
    for now from any other: the path that will be run (:func:`find_compiler`), its real path,
    ``--version`` output (:func:`_version_output`, cached), size and modification time (ns) of
    the real file. A cache key holding it is another key for another ``gcc`` first on the PATH
    (a wrapper adding flags) or for the same compiler replaced or changed in place; a key holding
    only the name would serve the other compiler's results.

    Returns:
        ``(path, real path, version output, size, mtime ns)``; ``("not found", compiler)`` where
        there is no such compiler (the build then says so).
    """
    try:
        path = find_compiler(compiler)
    except ToolError:
        return ("not found", compiler)
    real = os.path.realpath(path)
    try:
        st = os.stat(real)
    except OSError:
        return (path, real, "unreadable")
    return (path, real, _version_output(path), st.st_size, st.st_mtime_ns)


def chosen_compiler(compiler: str) -> str:
    """:func:`find_compiler` for a compiler the person running loopmodel named on the command
    line (``--compiler``, trusted): its path, which :mod:`loopmodel.gate` then runs whatever its
    name (:func:`loopmodel.gate.allow_compiler`).

    Raises:
        ToolError: not installed.
    """
    path = find_compiler(compiler)
    gate.allow_compiler(path)
    return path


def compile_c(source: str, compiler: str, flags, output: str = "assembly", name: str = "kernel",
              directory: str | None = None, libraries=()) -> str:
    """Compile the C text ``source`` with ``compiler flags`` (run in a private directory).

    Args:
        source: C source text, written to ``name.c``.
        compiler: compiler command (name on the PATH or path).
        flags: compiler flags (sequence of str), placed before the output options.
        output: ``"assembly"`` (``-S``: returns the assembly text), ``"executable"``
            (compile and link: returns the executable's path, ``directory/name``) or
            ``"macros"`` (``-dM -E``: returns the predefined macros, one ``#define`` a line) or
            ``"preprocessed"`` (``-E -P``: returns the text the compiler proper reads).
        name: base name of the source and output files.
        directory: where the files go; required for ``"executable"`` (a private temporary
            directory of the caller, which keeps the program); otherwise a temporary
            directory removed afterwards. Nothing is written anywhere else.
        libraries: link options placed after the source (``("-lm",)``: a linker that drops
            libraries not needed so far, as Debian's gcc does with ``--as-needed``, would
            ignore them before it); only for ``"executable"``.

    Returns:
        The assembly or macro text, or the executable's path (see ``output``).

    Raises:
        ToolError: the compiler is missing (named), cannot be run, takes longer than
            :data:`COMPILE_TIMEOUT_S` seconds, or fails (its first error line, with
            ``name.c:line:col``). One line each.
    """
    return _compile(source, compiler, flags, output, name, directory, libraries)[0]


def assembly_and_report(source: str, compiler: str, flags, report_flag: str) -> tuple:
    """``(assembly, optimisation report)``: :func:`compile_c` with ``-S`` and ``report_flag`` (a
    report option that writes to the standard error, e.g. gcc's ``-fopt-info-vec-loop-optimized``);
    the report is the compiler's standard error (its messages about ``kernel.c``).

    Raises:
        ToolError: as :func:`compile_c`.
    """
    return _compile(source, compiler, flags, "assembly", extra=(report_flag,))


def _compile(source: str, compiler: str, flags, output: str = "assembly", name: str = "kernel",
             directory: str | None = None, libraries=(), extra=()) -> tuple:
    """``(what compile_c returns, the compiler's standard error with the directory left out)``;
    ``extra``: flags loopmodel adds after ``flags`` (an error line shows ``flags`` only)."""
    if output not in _OUTPUTS:
        raise ValueError(f"unknown compiler output {output!r}")
    if directory is None:
        if output == "executable":
            raise ValueError("an executable needs a directory to live in")
        with tempfile.TemporaryDirectory(prefix="loopmodel-") as d:
            return _compile(source, compiler, flags, output, name, d, libraries, extra)
    path = find_compiler(compiler)
    flags = tuple(flags)
    src = os.path.join(directory, f"{name}.c")
    out = os.path.join(directory, name + {"assembly": ".s", "macros": ".h", "preprocessed": ".i"}.get(output, ""))
    with open(src, "w", encoding="utf-8") as fh:
        fh.write(source)
    libs = tuple(libraries) if output == "executable" else ()
    p = _run_compiler([path, *flags, *extra, *_OUTPUTS[output], "-o", out, src, *libs], compiler, flags, name,
                      directory, source)
    stderr = p.stderr.replace(directory + os.sep, "")
    if output == "executable":
        return out, stderr
    with open(out, encoding="utf-8") as fh:
        return fh.read(), stderr


def compile_first(source: str, compiler: str, flag_sets, name: str, directory: str, libraries=()) -> tuple:
    """Compile ``source`` into an executable with the first of ``flag_sets`` that works (e.g.
    with the native-architecture flag, then without): ``(executable path, flags)``.

    Raises:
        ToolError: compiler missing, or no flag set compiles (the last compiler error line).
    """
    error = None
    for flags in flag_sets:
        try:
            return compile_c(source, compiler, flags, "executable", name, directory, libraries), tuple(flags)
        except ToolError as exc:
            error = exc
    raise error


def _run_compiler(cmd: list, compiler: str, flags: tuple, name: str, directory: str, source: str = ""):
    """Run one compiler command line through :func:`loopmodel.gate.compile_c` and return the
    completed process; a failure is one :class:`ToolError` line."""
    p = gate.compile_c(cmd[0], cmd[1:], source, directory, COMPILE_TIMEOUT_S, f"{compiler} compiling {name}.c")
    if p.returncode != 0 or not os.path.exists(cmd[cmd.index("-o") + 1]):
        first = _first_error(p.stderr).replace(directory + os.sep, "")
        shown = " ".join(shlex.quote(f) for f in flags)
        raise ToolError(f"{compiler} failed on {name}.c (flags: {shown}): {first}")
    return p


def _first_error(stderr: str) -> str:
    """The compiler's first error line (``file:line:col: error: ...``, an undefined reference),
    else its first line of output."""
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errs = [ln for ln in lines if ("error" in ln.lower() or "undefined reference" in ln)
            and "ld returned" not in ln]
    return (errs or lines or ["(no output)"])[0]


def tool_version(path: str, pattern: str | None = None) -> str:
    """The version of the executable ``path``, from its ``--version`` output.

    The output is cached per user (:mod:`loopmodel.cache`) by the executable's real path,
    size and modification time, so a warm analysis starts no ``--version`` process and an
    upgraded tool is asked again.

    Args:
        path: the tool's executable (as found on the PATH).
        pattern: regular expression whose first group is the version (``r"LLVM version
            ([\\d.]+)"``); None: the first non-empty line (``gcc (Debian 12.2.0-14) 12.2.0``).

    Returns:
        The version string, ``'unknown'`` when the tool cannot be run or says no version.
    """
    text = _version_output(path)
    if pattern is not None:
        m = re.search(pattern, text)
        return m.group(1) if m else "unknown"
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "unknown")


def _version_output(path: str) -> str:
    """``path --version``'s standard output, cached by the executable's path, size and mtime."""
    try:
        st = os.stat(path)
    except OSError:
        return _ask_version(path)
    key = cache.make_key("tool-version", os.path.realpath(path), st.st_size, st.st_mtime_ns)
    hit = cache.load("tools", key)
    if isinstance(hit, str):
        return hit
    text = _ask_version(path)
    if text:
        cache.store("tools", key, text)
    return text


def _ask_version(path: str) -> str:
    """Run ``path --version`` (the one version probe): its stdout, '' when it cannot be run."""
    p = _query(path, ["--version"])
    return p.stdout if p is not None else ""


def _query(path: str, args):
    """``path args`` with no input, within the version timeout; None when it cannot be run."""
    try:
        return gate.run_tool(path, list(args), os.path.basename(str(path)), VERSION_TIMEOUT_S)
    except ToolError:
        return None


def run_program(cmd: list, what: str, timeout: float, env: dict | None = None) -> str:
    """Run a benchmark program built by :func:`compile_c` (in its own directory, through
    :func:`loopmodel.gate.run_program`); its stdout.

    Args:
        cmd: the program and its arguments.
        what: how errors name it (``"the latency benchmark"``).
        timeout: seconds.
        env: environment (default: this process's).

    Raises:
        ToolError: not a program built by :func:`compile_c` in this process, timeout, cannot
            start, killed by a signal or a non-zero exit status (with the first line of its
            stderr). One line each.
    """
    p = gate.run_program(cmd, what, timeout, env)
    if p.returncode != 0:
        first = next((ln.strip() for ln in p.stderr.splitlines() if ln.strip()), "(no output)")
        how = (f"was killed by signal {-p.returncode}" + (" (out of memory?)" if p.returncode == -9 else "")
               if p.returncode < 0 else f"failed with exit status {p.returncode}")
        raise ToolError(f"{what} {how}: {first}")
    return p.stdout


def tool_output(path: str, args) -> str:
    """Standard output and error of ``path args`` (a query such as ``gcc -march=native -Q
    --help=target`` or ``llvm-mca -mcpu=help``, no input); '' when it cannot be run."""
    p = _query(path, args)
    return p.stdout + p.stderr if p is not None else ""


def package_version(name: str) -> str:
    """Version of the Python package ``name`` (a tool used as a library, such as OSACA): its
    distribution metadata, else the module's ``__version__`` (a source checkout on the path);
    ``'not installed'`` if it cannot be imported, ``'unknown'`` if it says no version.

    importlib.metadata (with the email package it reads metadata with) is loaded here, by name:
    only a tool used as a library needs it, and importing it costs more than a warm analysis's
    other work (benchmarks/import_time.py)."""
    metadata = importlib.import_module("importlib.metadata")
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        pass
    try:
        module = importlib.import_module(name)
    except ImportError:
        return "not installed"
    return str(getattr(module, "__version__", "unknown"))


def json_result(stdout: str) -> dict | None:
    """The last line of a benchmark program's ``stdout`` that starts with ``{``, parsed as a JSON
    object; None where there is none or it is not a JSON object (the caller says which program)."""
    line = next((ln for ln in reversed(stdout.splitlines()) if ln.startswith("{")), None)
    try:
        data = json.loads(line) if line is not None else None
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


#: machine names of the x86 family (:func:`host_machine`), whose compilers take ``-march``
_X86 = ("x86_64", "amd64", "i686", "i386")


def host_machine() -> str:
    """The host's machine name, ``platform.machine()`` (``'x86_64'``, ``'aarch64'``): on POSIX
    ``os.uname().machine``, which is what platform returns there, without importing platform
    (about 1.5 ms; every analysis asks, :func:`loopmodel.compiled.compile.resolve_compiler`);
    platform itself, loaded by name, where there is no ``os.uname`` (Windows)."""
    uname = getattr(os, "uname", None)
    return uname().machine if uname is not None else importlib.import_module("platform").machine()


def native_arch_flag(machine: str | None = None) -> str:
    """The flag that optimises for the CPU the compiler runs on: ``-march=native`` on x86,
    ``-mcpu=native`` elsewhere (AArch64, POWER: their gcc has no ``-march=native``).

    Args:
        machine: :func:`host_machine` of the host (None: this one).
    """
    return "-march=native" if (machine or host_machine()).lower() in _X86 else "-mcpu=native"
