"""The one place that decides what reaches a subprocess: compilers, their flags, analyzers,
the programs loopmodel builds, ``perf``, and their environment.

Trust model (DEVELOPERS.md "Data from strangers"): the person running loopmodel is trusted
with what they type on the command line (``--compiler``, ``--compiler-flags``,
``--trust-machine-flags``; the same keyword arguments of the Python API). Everything read
from a file is data and may come from anyone: kernels, machine files, study files,
application files, OpenMP programs. Data may not choose what runs, and a study file cannot
grant trust. So:

* a compiler named by data must be a known compiler name (:func:`check_compiler_name`):
  no path, no script;
* compiler flags from data pass an allow-list (:func:`check_flags`): nothing that loads
  plugins, runs programs, reads response files, links or writes files, and only the ``-f``
  options a performance engineer sets (:data:`F_OPTIONS`, each value checked by its kind), so
  no option changes how the compiler reads the kernel (``-finput-charset=``) or adds code to
  it (sanitizers, instrumentation); ``-D``/``-U`` only as plain
  macro definitions of macro-style names (:data:`MACRO_FLAG`), which :func:`compile_c`
  refuses when the compiled program uses that name (``-Dmain=...`` would replace the
  program's entry point);
* environment values passed to a program are plain words (:func:`program_env`);
* a subprocess starts only here, and only one of: a compiler found on the PATH
  (:func:`compile_c`), a known tool found on the PATH (:func:`run_tool`: llvm-mca, a
  compiler's ``--version`` or target query), a program that :func:`compile_c` built in a
  private directory during this process (:func:`run_program`; under perf,
  :func:`run_counted`), or this Python running loopmodel itself (:func:`run_loopmodel`, for
  the documentation's sample generator).
* compilers and tools run within resource limits set in the child (:func:`_limits`: address
  space, file size, CPU time, no core files), the programs loopmodel built within CPU-time
  and core-file limits only; a child stopped by one is a one-line error.

``tests/test_gate.py`` scans every module of the package (AST) and fails when a module
other than this one imports :mod:`subprocess` (an import statement, or by name with
``importlib.import_module``, as this module loads it when a process starts: :func:`_subprocess`)
or calls ``os.system``, ``os.popen``, ``os.exec*``, ``os.spawn*`` or ``os.fork``, so a new path
cannot bypass these checks.
Errors are one line: :class:`~loopmodel.errors.MachineError` (or the caller's class) for data
that asks for something not allowed, :class:`~loopmodel.errors.ToolError` for a tool that
fails.
"""
from __future__ import annotations

import importlib
import math
import os
import re
import sys

from .errors import MachineError, ToolError

# ---------------------------------------------------------------- compiler names and flags

#: compiler names data may give: gcc, cc, clang, icc, icx, armclang, with an optional cross
#: prefix (``aarch64-linux-gnu-``) and version suffix (``-12``); no path
COMPILER_NAME = re.compile(r"(?:[a-z0-9_]+-)*(?:gcc|cc|clang|icc|icx|armclang)(?:-\d+(?:\.\d+)*)?")

#: a ``-D``/``-U`` flag data may give: a macro-style name (capitals, digits, underscores:
#: ``NDEBUG``, ``_POSIX_C_SOURCE``), optionally ``=`` and a value of letters, digits and
#: ``_ . + -`` (no spaces, quotes, parentheses, braces or semicolons)
MACRO_FLAG = re.compile(r"-(?P<op>[DU])(?P<name>_?[A-Z][A-Z0-9_]*)(?:=(?P<value>[\w.+-]*))?")

#: flags data may give (full match), besides :data:`MACRO_FLAG` and the -f options of
#: :data:`F_OPTIONS`; see :func:`check_flags` (patterns compiled as a flag first reaches them:
#: a machine file's flags need the first few). No linking or output options: a machine file's
#: ``-l`` flags are dropped before compiling, and only ``-lm`` (the C library's maths, which
#: loopmodel links itself) is accepted, for the machine files that name it.
_ALLOWED_FLAGS = (
    r"-O(?:[0-3sgz]|fast)?",                              # optimisation level
    r"-(?:march|mtune|mcpu|mfpu|mabi|mprefer-vector-width|msve-vector-bits)=[\w.+-]+",
    r"-m(?!llvm\b)[a-z0-9][\w.+-]*(?:=[\w.+,-]+)?",      # -mavx2, -mno-fma, -m64, -mcmodel=small
    r"-std=(?:gnu|c)[\w+.-]*", r"-ansi", r"-pedantic(?:-errors)?", r"-w", r"-W[a-z][\w=+-]*",  # no -Wl, -Wa, -Wp,
    r"-g(?:[0-3]|gdb[0-3]?|dwarf(?:-\d)?)?", r"-pthread", r"-pipe", r"-nostdinc", r"-lm",
    r"--target=[\w.-]+", r"--param=[\w-]+=\d+",
    r"-x(?:Host|[A-Z][\w.-]*)", r"-ax[A-Z][\w.,-]*",       # Intel: -xCORE-AVX2, -axAVX
    r"-q(?:no-)?openmp(?:-simd)?", r"-qopt-(?!report)[\w-]+(?:=[\w.-]+)?", r"-qoverride-limits",
    r"-nolib-inline", r"-ipo\d*", r"-no-?(?:vec|prec-div|prec-sqrt|ip|ansi-alias)", r"-ansi-alias",
    r"-prec-(?:div|sqrt)", r"-restrict", r"-unroll(?:\d+|-aggressive)?", r"-ip",
)

#: value kinds of :data:`F_OPTIONS`: ``-fNAME`` and ``-fno-NAME``; ``-fNAME`` only (no ``no-``
#: form); ``-fNAME=N`` with N an integer; ``-fNAME``, ``-fno-NAME`` or ``-fNAME=N[:M[:N2[:M2]]]``
#: with integers 0..4096 (gcc's ``-falign-loops=32:16``). A frozenset: ``-fNAME=VALUE`` with
#: VALUE one of its members.
SWITCH, ON, INT, ALIGN = "switch", "on", "int", "align"

_FP_CONTRACT = frozenset({"off", "on", "fast", "fast-honor-pragmas"})
_COST_MODEL = frozenset({"unlimited", "dynamic", "cheap", "very-cheap"})

#: the -f options data may give (name without ``-f``/``-fno-`` -> value kind): what a performance
#: engineer sets (optimisation, loops, vectorisation, scheduling, inlining, aliasing,
#: floating-point semantics, alignment, code generation). Everything else is refused, since -f
#: options also change how the compiler reads the source (``-finput-charset=``,
#: ``-fexec-charset=``, ``-fextended-identifiers``, ``-fpreprocessed``, ``-fdirectives-only``:
#: the compiler would compile other code than loopmodel parsed), load or run code (plugins,
#: ``-flto``'s linker plugin, ``-fuse-ld=``, ``-fresolution=``, ``-fself-test=``), add code to
#: the program (sanitizers, ``-finstrument-functions``, ``-fpatchable-function-entry``,
#: ``-fcf-protection``, profiling) or read and write files (profiles, dumps, records,
#: ``-fdebug-prefix-map``).
F_OPTIONS = {
    # loops, vectorisation, scheduling
    "unroll-loops": SWITCH, "unroll-all-loops": SWITCH, "peel-loops": SWITCH,
    "tree-vectorize": SWITCH, "tree-loop-vectorize": SWITCH, "tree-slp-vectorize": SWITCH,
    "vectorize": SWITCH, "slp-vectorize": SWITCH,                        # clang
    "vect-cost-model": _COST_MODEL, "simd-cost-model": _COST_MODEL,
    "tree-loop-distribution": SWITCH, "tree-loop-distribute-patterns": SWITCH, "loop-interchange": SWITCH,
    "loop-unroll-and-jam": SWITCH, "graphite": SWITCH, "graphite-identity": SWITCH,
    "loop-nest-optimize": SWITCH, "loop-parallelize-all": SWITCH, "tree-parallelize-loops": INT,
    "split-loops": SWITCH, "unswitch-loops": SWITCH, "version-loops-for-strides": SWITCH,
    "predictive-commoning": SWITCH, "prefetch-loop-arrays": SWITCH, "ivopts": SWITCH,
    "gcse": SWITCH, "gcse-lm": SWITCH, "gcse-sm": SWITCH, "gcse-las": SWITCH, "gcse-after-reload": SWITCH,
    "schedule-insns": SWITCH, "schedule-insns2": SWITCH, "sched-pressure": SWITCH, "modulo-sched": SWITCH,
    "expensive-optimizations": SWITCH,
    # inlining, aliasing, language and code generation
    "omit-frame-pointer": SWITCH, "strict-aliasing": SWITCH, "strict-overflow": SWITCH, "wrapv": SWITCH,
    "inline": SWITCH, "inline-functions": SWITCH, "inline-small-functions": SWITCH, "ipa-cp": SWITCH,
    "ipa-cp-clone": SWITCH, "builtin": SWITCH, "common": SWITCH, "pic": SWITCH, "PIC": SWITCH,
    "pie": SWITCH, "PIE": SWITCH, "plt": SWITCH, "alias": SWITCH, "fnalias": SWITCH,   # Intel: -fno-alias
    "argument-alias": SWITCH, "argument-noalias": SWITCH, "argument-noalias-global": SWITCH,
    "argument-noalias-anything": SWITCH, "freestanding": SWITCH, "hosted": SWITCH,
    "openmp": SWITCH, "openmp-simd": SWITCH, "iopenmp": SWITCH, "verbose-asm": SWITCH, "asynchronous-unwind-tables": SWITCH,
    "unwind-tables": SWITCH, "exceptions": SWITCH, "stack-protector": SWITCH,
    "stack-protector-strong": ON, "stack-protector-all": ON,
    # floating point
    "fast-math": SWITCH, "math-errno": SWITCH, "unsafe-math-optimizations": SWITCH,
    "associative-math": SWITCH, "reciprocal-math": SWITCH, "finite-math-only": SWITCH,
    "signed-zeros": SWITCH, "trapping-math": SWITCH, "rounding-math": SWITCH, "signaling-nans": SWITCH,
    "cx-limited-range": SWITCH, "fp-contract": _FP_CONTRACT,
    "excess-precision": frozenset({"fast", "standard", "16"}),
    "fp-model": frozenset({"fast", "precise", "strict"}),               # clang's -ffp-model=
    "denormal-fp-math": frozenset({"ieee", "preserve-sign", "positive-zero"}),
    # alignment
    "align-functions": ALIGN, "align-loops": ALIGN, "align-jumps": ALIGN, "align-labels": ALIGN,
}

#: options taking the next word as value: option -> allowed values (Intel's ``-fp-model fast``;
#: also joined, ``-fp-model=precise``)
_PAIRED = {"-fp-model": r"fast(?:=[12])?|precise|strict|consistent|source|double|extended|(?:no-)?except",
           "-target": r"[\w.-]+"}

_TRUST_HINT = ("pass the flags you want with --compiler-flags, or --trust-machine-flags if you trust the machine "
               "file")


def check_compiler_name(name: str, origin: str, where: str | None = None, error=MachineError) -> None:
    """Accept a compiler name from data (a machine or study file): a known compiler, no path.

    Raises:
        ``error`` (default :class:`~loopmodel.errors.MachineError`): one line naming
        ``origin``, ``where`` and the name.
    """
    if not isinstance(name, str) or not COMPILER_NAME.fullmatch(name):
        raise error(f"compiler '{name}' is not a known compiler name (gcc, clang, icc, icx, cc, armclang, cross "
                    "and versioned forms such as aarch64-linux-gnu-gcc-12; no path): name it with --compiler, or "
                    "pass --trust-machine-flags to use the machine file's", file=origin, where=where)


def check_flags(flags, origin: str, where: str | None = None, error=MachineError) -> None:
    """Accept compiler flags from data (a machine or study file): the allow-list.

    Allowed: optimisation levels, -march/-mtune/-mcpu and other -m options (not -mllvm), the -f
    options of :data:`F_OPTIONS` with values of their kind (``-funroll-loops``, ``-fno-alias``,
    ``-ffp-contract=fast``, ``-falign-loops=32``; no charset, plugin, sanitizer, instrumentation,
    profile or dump option), -D/-U of macro-style names with plain values (:data:`MACRO_FLAG`),
    -std=c*/gnu*, warnings (not the -Wl,/-Wa,/-Wp, pass-throughs), -g, -pthread, -lm, Intel's
    -x/-ax/-q/-fp-model and a few more (:data:`_ALLOWED_FLAGS`). Everything else is refused:
    -wrapper, -B, -specs=, @file, -o, -save-temps, -I/-include, -Xlinker/-Xassembler/-Xclang,
    -mllvm, -trigraphs, linking (-l<lib> but -lm, -static, -nostdlib, -pie), ...
    Flags typed on the command line (``--compiler-flags``) are trusted and not checked here.

    Raises:
        ``error`` (default :class:`~loopmodel.errors.MachineError`): one line naming
        ``origin``, ``where`` and the first flag refused.
    """
    flags = list(flags)
    i = 0
    while i < len(flags):
        f = flags[i]
        if f in _PAIRED:
            if i + 1 < len(flags) and re.fullmatch(_PAIRED[f], flags[i + 1]):
                i += 2
                continue
        elif flag_allowed(f):
            i += 1
            continue
        raise error(f"compiler flag '{f}' is not allowed from a data file ({_refusal(f)}); {_TRUST_HINT}",
                    file=origin, where=where)


def _refusal(flag) -> str:
    """Why ``flag`` is refused, for :func:`check_flags`'s message."""
    if isinstance(flag, str) and flag.startswith(("-D", "-U")):
        return ("only -DNAME or -DNAME=VALUE with a macro-style NAME (capitals, digits, _) and a plain VALUE "
                "(no spaces, quotes, parentheses, braces or semicolons)")
    if isinstance(flag, str) and flag.startswith("-f"):
        return ("only the optimisation, vectorisation, floating-point, alignment and code-generation -f options "
                "of loopmodel.gate.F_OPTIONS, with values of their kind")
    return "it could run programs, link or write files"


def flag_allowed(flag: str) -> bool:
    """One flag on the allow-list (:func:`check_flags`)."""
    if not isinstance(flag, str):
        return False
    if flag.startswith(("-D", "-U")):
        return MACRO_FLAG.fullmatch(flag) is not None
    if flag.startswith("-fp-model="):  # Intel's joined spelling of -fp-model VALUE
        return re.fullmatch(_PAIRED["-fp-model"], flag[len("-fp-model="):]) is not None
    if flag.startswith("-f"):
        return _f_option_allowed(flag[2:])
    return any(re.fullmatch(p, flag) for p in _ALLOWED_FLAGS)


def _f_option_allowed(text: str) -> bool:
    """``-f`` + ``text`` is an option of :data:`F_OPTIONS` in a form its kind allows."""
    name, eq, value = text.partition("=")
    negated = name.startswith("no-")
    kind = F_OPTIONS.get(name[3:] if negated else name)
    if kind is None:
        return False
    if not eq:
        return kind in (SWITCH, ALIGN) or (kind == ON and not negated)
    return not negated and _f_value_allowed(kind, value)


def _f_value_allowed(kind, value: str) -> bool:
    """``value`` (after ``=``) is one of ``kind``: an integer, alignments, one of a set."""
    if kind == INT:
        return re.fullmatch(r"[0-9]{1,6}", value) is not None
    if kind == ALIGN:
        parts = value.split(":")
        return len(parts) <= 4 and all(re.fullmatch(r"[0-9]{1,4}", p) and int(p) <= 4096 for p in parts)
    return isinstance(kind, frozenset) and value in kind


_IDENTIFIER = r"[A-Za-z_]\w*"


def check_macros_unused(flags, source: str, what: str) -> None:
    """Refuse ``-D``/``-U`` flags naming an identifier that ``source`` uses.

    A macro of that name would replace code of the program loopmodel generated (``-Dmain=...``
    replaces its entry point); no such flag has a meaning for loopmodel's programs.

    Raises:
        ToolError: one line naming the flag and the program.
    """
    names = {m.group("name") for f in flags if isinstance(f, str) and (m := re.match(_ANY_MACRO, f))}
    if not names:
        return
    used = names & set(re.findall(_IDENTIFIER, source))
    if used:
        name = sorted(used)[0]
        raise ToolError(f"compiler flag -D/-U {name}: '{name}' is a name {what} uses; a macro of that name would "
                        "replace its code")


_ANY_MACRO = r"-[DU](?P<name>[A-Za-z_]\w*)"


# ---------------------------------------------------------------- environment

#: an environment value a program may get: plain words (``close``, ``{0},{1}``, ``16``)
_ENV_VALUE = r"[\w.,:{}+-]*"
#: the variables loopmodel sets for its programs
_ENV_NAMES = frozenset({"OMP_NUM_THREADS", "OMP_PROC_BIND", "OMP_PLACES", "OMP_DYNAMIC", "OMP_WAIT_POLICY",
                        "OMP_SCHEDULE", "GOMP_SPINCOUNT"})


def program_env(base: dict | None = None, **values) -> dict:
    """The environment for a program loopmodel runs: ``base`` (default: this process's) with
    ``values`` set (``OMP_NUM_THREADS=2``); a value None removes the variable.

    Raises:
        ValueError: a name loopmodel does not set, or a value that is not plain words
            (:data:`_ENV_VALUE`): a programming error, since the values come from loopmodel's
            own code and checked numbers.
    """
    env = dict(os.environ if base is None else base)
    for name, value in values.items():
        if name not in _ENV_NAMES:
            raise ValueError(f"environment variable {name} is not one loopmodel sets")
        if value is None:
            env.pop(name, None)
            continue
        text = str(value)
        if not re.fullmatch(_ENV_VALUE, text):
            raise ValueError(f"environment value {name}={text!r} is not plain words")
        env[name] = text
    return env


# ---------------------------------------------------------------- running things

#: tools :func:`run_tool` starts (basename, full match); perf only through :func:`run_counted`
_TOOLS = r"llvm-mca(?:-\d+)?|" + COMPILER_NAME.pattern
#: executables :func:`compile_c` built in this process (their absolute paths)
_BUILT: set = set()
#: compilers of other names the person running loopmodel chose (``--compiler``), real paths
_CHOSEN: set = set()


def allow_compiler(path: str) -> None:
    """Let :func:`run_tool` ask the compiler at ``path`` questions (its version, its target
    options) although its name is not a known compiler's: the person running loopmodel
    named it (``--compiler``, trusted). Data never reaches this: a compiler named by a
    machine or study file passes :func:`check_compiler_name` instead."""
    _CHOSEN.add(os.path.realpath(path))


def _subprocess():
    """:mod:`subprocess`, loaded by name when a process is about to start: a warm analysis starts
    none, and subprocess (with threading, selectors and signal) costs about 3 ms to import."""
    return importlib.import_module("subprocess")


def _completed(cmd: list, what: str, timeout: float, limits: str | None = None, **kw):
    """``subprocess.run(cmd)`` with text output captured, standard input empty unless ``input``
    is given, the resource limits of ``limits`` (``"tool"``, ``"program"`` or None:
    :func:`_limits`) set in the child; one-line errors, also for a child stopped by a limit."""
    subprocess = _subprocess()
    if "input" not in kw:
        kw["stdin"] = subprocess.DEVNULL
    bounds = _limits(limits, timeout) if limits else {}
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                           preexec_fn=_preexec(bounds), **kw)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{what} did not finish within {timeout:.3g} s") from None
    except FileNotFoundError:
        raise ToolError(f"cannot run {what}: not found") from None
    except OSError as exc:
        raise ToolError(f"cannot run {what}: {exc.strerror or exc}") from None
    except subprocess.SubprocessError as exc:  # the limits could not be set in the child
        raise ToolError(f"cannot run {what}: {exc}") from None
    stopped = _stopped_by_limit(p, what, bounds) if bounds and p.returncode != 0 else None
    if stopped:
        raise ToolError(stopped)
    return p


# ---------------------------------------------------------------- resource limits

#: address space (``RLIMIT_AS``) of a compiler or tool (:func:`compile_c`, :func:`run_tool`):
#: a kernel's compilation needs some hundred MiB; a kernel that makes cc1 read ``/dev/zero``
#: would grow until the machine swaps
TOOL_MEMORY_LIMIT_B = 4 << 30
#: largest file a compiler or tool may write (``RLIMIT_FSIZE``): no kernel's assembly or
#: program is that large
TOOL_FILE_LIMIT_B = 512 << 20
#: CPU seconds (``RLIMIT_CPU``) of a child; None: its wall-clock timeout rounded up, +1 s (for
#: a program, times the CPUs this process may use: the limit counts all its threads). It also
#: bounds what the timeout cannot stop: the timeout kills the child, not the processes the
#: child started (cc1 under the gcc driver, the program under perf)
CPU_LIMIT_S: int | None = None


def _limits(kind: str, timeout: float | None) -> dict:
    """The resource limits of a child (``resource`` constant name -> soft limit): a compiler or
    tool (``kind == "tool"``) gets memory, file-size, CPU and no core files; a program
    loopmodel built, or perf counting one (``"program"``), only CPU and no core files, since a
    benchmark may rightly allocate many GiB of arrays (a memory limit would also count perf's
    own buffers), and a file-size limit has nothing to bound there."""
    out = {"RLIMIT_CORE": 0}
    cpu = CPU_LIMIT_S if CPU_LIMIT_S is not None else (None if timeout is None else math.ceil(timeout) + 1)
    if cpu is not None:
        out["RLIMIT_CPU"] = cpu * (_cpus() if kind == "program" and CPU_LIMIT_S is None else 1)
    if kind == "tool":
        out.update(RLIMIT_AS=TOOL_MEMORY_LIMIT_B, RLIMIT_FSIZE=TOOL_FILE_LIMIT_B)
    return out


def _cpus() -> int:
    """The CPUs this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _preexec(limits: dict):
    """The function the child runs before it starts the command: sets ``limits`` (soft and
    hard limit, never above this process's hard limit; the CPU hard limit 1 s later, so a
    child that survives SIGXCPU gets SIGKILL). None without limits, or where :mod:`resource`
    is missing (not Unix): the child then runs with this process's limits. :mod:`resource` is
    loaded here, when a process starts (a warm analysis starts none), and the values are
    computed before the fork: the child only calls ``setrlimit``, as a child of a process with
    threads must do no more."""
    if not limits:
        return None
    try:
        resource = importlib.import_module("resource")
    except ImportError:
        return None
    settings = []
    for name, value in limits.items():
        which = getattr(resource, name, None)
        if which is None:
            continue
        hard = resource.getrlimit(which)[1]
        top = value + 1 if name == "RLIMIT_CPU" else value
        if hard != resource.RLIM_INFINITY:
            value, top = min(value, hard), min(top, hard)
        settings.append((which, (value, top)))
    setrlimit = resource.setrlimit

    def set_limits():
        for which, pair in settings:
            try:
                setrlimit(which, pair)
            except (OSError, ValueError):  # a limit this system does not take: the others still hold
                pass
    return set_limits


#: a compiler's or tool's report that it could not allocate memory (a line's start, after
#: program names: ``cc1: out of memory allocating ...``; not a quoted source line)
_OUT_OF_MEMORY = (r"(?mi)^(?:[\w.+/-]+: )*(?:LLVM ERROR: |(?:fatal )?error: )?(?:out of memory|(?:virtual )?memory "
                  r"exhausted|cannot allocate memory|terminate called after throwing an instance of 'std::bad_alloc')")


def _stopped_by_limit(p, what: str, limits: dict) -> str | None:
    """The one-line error for a child ``p`` stopped by one of ``limits``: killed by SIGXCPU or
    SIGXFSZ, a tool killed by SIGKILL (past the CPU hard limit, or out of memory), or a
    compiler's report of that about a program it started (gcc: ``CPU time limit exceeded
    signal terminated program cc1``, ``cc1: out of memory allocating ...``); None for any
    other failure (the caller's error)."""
    signal = importlib.import_module("signal")
    sig = -p.returncode if p.returncode < 0 else None
    memory = limits.get("RLIMIT_AS")
    err = (p.stderr or "") if memory else ""  # a tool's report; a program's stderr is its own
    if "RLIMIT_CPU" in limits and (sig == getattr(signal, "SIGXCPU", None) or "CPU time limit exceeded" in err):
        return f"{what} exceeded its CPU-time limit ({limits['RLIMIT_CPU']} s)"
    if "RLIMIT_FSIZE" in limits and (sig == getattr(signal, "SIGXFSZ", None) or "File size limit exceeded" in err):
        return f"{what} wrote a file larger than its {_size(limits['RLIMIT_FSIZE'])} limit"
    if memory and re.search(_OUT_OF_MEMORY, err):
        return f"{what} ran out of its {_size(memory)} memory limit"
    if memory and (sig == getattr(signal, "SIGKILL", None) or "Killed signal terminated program" in err):
        return f"{what} was killed (SIGKILL: out of memory, or past its CPU-time limit)"
    return None


def _size(n: int) -> str:
    return f"{n / 2**30:g} GiB" if n >= 2**30 else f"{n / 2**20:g} MiB"


def compile_c(compiler_path: str, args: list, source: str, directory: str, timeout: float, what: str):
    """Run the compiler ``compiler_path args`` in ``directory`` (the caller's private
    temporary directory, where the source file is); returns the completed process.

    ``source`` is the C text being compiled: ``-D``/``-U`` flags that name an identifier it
    uses are refused (:func:`check_macros_unused`). An ``-o FILE`` output whose name ends in
    no C/assembly suffix is recorded as an executable that :func:`run_program` may start.
    The compiler (and what it starts: cc1, as, ld) runs within a tool's resource limits
    (:func:`_limits`: :data:`TOOL_MEMORY_LIMIT_B` of address space, :data:`TOOL_FILE_LIMIT_B`
    per file, CPU seconds of about ``timeout``, no core file): the kernel is data, and a
    kernel that makes the compiler read ``/dev/zero`` stops at the limit.

    Raises:
        ToolError: the compiler is not an absolute path to an executable file, nor a known
            compiler name or one chosen on the command line (:func:`allow_compiler`), a ``-D``
            flag names a name of the program, the compiler cannot be started, does not
            finish within ``timeout`` seconds or is stopped by a limit (one line).
    """
    _check_executable(compiler_path, what)
    if not COMPILER_NAME.fullmatch(os.path.basename(compiler_path)) and os.path.realpath(compiler_path) not in _CHOSEN:
        raise ToolError(f"'{compiler_path}' is not a known compiler name; name it with --compiler to use it")
    check_macros_unused(args, source, "the generated program")
    p = _completed([compiler_path, *args], what, timeout, "tool", cwd=directory)
    if p.returncode == 0 and "-o" in args:
        out = os.path.realpath(os.path.join(directory, args[args.index("-o") + 1]))
        if not out.endswith((".s", ".h", ".o", ".i")):
            _BUILT.add(out)
    return p


def run_tool(path: str, args: list, what: str, timeout: float, input: str | None = None):
    """Run a known tool (llvm-mca, a compiler asked a question) ``path args``; returns
    the completed process (text output captured; stdin is ``input`` or empty). The tool runs
    within a tool's resource limits, as a compiler (:func:`compile_c`).

    Raises:
        ToolError: ``path`` is not an absolute path to an executable whose name is a known
            tool, or it cannot be started, does not finish within ``timeout`` s or is stopped
            by a limit (one line).
    """
    _check_executable(path, what)
    if not re.fullmatch(_TOOLS, os.path.basename(path)) and os.path.realpath(path) not in _CHOSEN:
        raise ToolError(f"'{os.path.basename(path)}' is not a tool loopmodel runs")
    if input is None:
        return _completed([path, *args], what, timeout, "tool")
    return _completed([path, *args], what, timeout, "tool", input=input)


def run_program(cmd: list, what: str, timeout: float, env: dict | None = None):
    """Run a program that :func:`compile_c` built in this process, ``cmd[0] cmd[1:]``, in its
    own directory (counted by perf: :func:`run_counted`). Returns the completed process.

    Only CPU time (about ``timeout`` on every CPU this process may use: an OpenMP program's
    threads add up) and core files are limited: a benchmark rightly allocates many GiB of
    arrays, so it gets no memory or file-size limit (its code is loopmodel's, its sizes the
    user's).

    Raises:
        ToolError: ``cmd[0]`` was not built by loopmodel in this process, the program cannot
            be started, does not finish within ``timeout`` seconds or exceeds its CPU-time
            limit (one line).
    """
    exe = os.path.realpath(cmd[0])
    if exe not in _BUILT:
        raise ToolError(f"{what}: '{cmd[0]}' is not a program loopmodel built")
    return _completed(list(cmd), what, timeout, "program", env=env, cwd=os.path.dirname(exe))


def run_counted(perf_path: str, perf_args: list, cmd: list, what: str, timeout: float):
    """``perf perf_args -- cmd``: a program :func:`compile_c` built (or ``true``, to ask whether
    perf counts here), counted by perf; returns the completed process. The limits of
    :func:`run_program` (CPU time, no core file; perf and the program): a memory limit would
    also bound perf's own buffers, which perf sizes itself.

    Raises:
        ToolError: not perf, not such a program, or perf cannot start, finish in time or
            stay within its CPU-time limit.
    """
    _check_executable(perf_path, what)
    if os.path.basename(perf_path) != "perf" or (cmd != ["true"] and os.path.realpath(cmd[0]) not in _BUILT):
        raise ToolError(f"{what}: only loopmodel's own programs are counted with perf")
    return _completed([perf_path, *perf_args, "--", *cmd], what, timeout, "program")


def run_loopmodel(argv: list, cwd: str, env: dict | None, timeout: float):
    """This Python running ``loopmodel argv`` (the documentation's sample documents): no resource
    limits, since loopmodel itself is not data, and its own compilers and programs get theirs."""
    return _completed([sys.executable, "-m", "loopmodel.cli", *map(str, argv)], "loopmodel", timeout,
                      cwd=cwd, env=env)


def _check_executable(path: str, what: str) -> None:
    if not isinstance(path, str) or not os.path.isabs(path) or not os.path.isfile(path) \
            or not os.access(path, os.X_OK):
        raise ToolError(f"cannot run {what}: '{path}' is not an executable file")


__all__ = ["COMPILER_NAME", "F_OPTIONS", "MACRO_FLAG", "allow_compiler", "check_compiler_name", "check_flags",
           "check_macros_unused", "compile_c", "flag_allowed", "program_env", "run_counted",
           "run_loopmodel", "run_program", "run_tool"]
