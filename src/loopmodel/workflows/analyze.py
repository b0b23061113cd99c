"""``analyze``: a kernel on a machine model at one set of sizes or a sweep of them.

:class:`AnalysisOptions` are the options every analysing command shares (``analyze``,
``scaling``, ``energy``, study files); :class:`AnalyzeOptions` adds ``analyze``'s own.
:func:`run` checks the inputs and prepares the analysis; the results are computed as they
are read (:meth:`AnalyzeRun.results`), so that a sweep of millions of sizes streams.

Models and formulas: layer conditions and ECM (kerncraft-tool-paper.txt §2), Roofline (§2.2);
see :mod:`loopmodel.workflows.analysis`.
"""
from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field

from ..errors import DefineError, EmptyPointError, LoopmodelError
from ..fileio.defines import Sweep, define_name, sweep
from ..fileio.host_models import machine_notes
from ..fileio.kernel_file import load_kernel
from ..ir.point import skipped_note
from ..ir.sequence import NestSequence
from ..machine.fields import BANDWIDTH_S
from ..models.prediction import DEFAULT_MULTICORE_MODEL, MULTICORE_MODELS
from ..report.output_units import UNITS
from ..units import parse_quantity
from .analysis import Analyzer, AnalyzerSettings
from .executed import as_compiled
from .sequence import SequenceAnalyzer
from .inputs import alignment_bytes, byte_count, kernel_reference, machine_model, machine_name, size_defines
from .options import function_option, include_option, option

#: ``-p`` names (lower case, ``-``/``_`` removed) -> loopmodel's models; Kerncraft's ECMData
#: (data-transfer terms), ECMCPU (in-core part) and RooflineFLOP included
MODEL_NAMES = {"lc": "LC", "ecm": "ECM", "roofline": "Roofline", "layerconditions": "LC", "rooflineasm": "RooflineASM",
               "ecmdata": "ECM", "ecmcpu": "ECM", "rooflineflop": "Roofline"}
#: what Kerncraft's model names show in loopmodel's output (a note with the result)
PEER_MODEL_NOTES = {
    "ecmdata": "-p ECMData (Kerncraft): the data-transfer terms are the ECM contributions after T_nOL "
               "(T_L1L2, T_L2L3, T_L3MEM in the ECM line); the in-core part as for -p ECM (--incore; its note says which analyzer gave it)",
    "ecmcpu": "-p ECMCPU (Kerncraft): the in-core part is T_OL || T_nOL, the first two terms of the ECM line",
}
#: Kerncraft's -i/--incore-model values -> loopmodel's --incore
INCORE_NAMES = {"auto": "auto", "llvm-mca": "llvm-mca", "osaca": "osaca", "analytic": "analytic",
                "measured": "measured"}
DEFAULT_MODELS = ("LC", "ECM", "Roofline")


def incore_name(text: str) -> str:
    """``--incore``, case-insensitive (Kerncraft's OSACA, LLVM-MCA).

    Raises:
        ValueError: IACA (one line: not supported).
    """
    if text.lower() == "iaca":
        raise ValueError("IACA is not supported (choose OSACA, LLVM-MCA or analytic)")
    return INCORE_NAMES.get(text.lower(), text)


def unit_name(text: str) -> str:
    """``--unit``, case-insensitive (Kerncraft writes cy/It, It/s) -> the spelling of
    :data:`loopmodel.report.output_units.UNITS`."""
    return {u.lower(): u for u in UNITS}.get(text.lower(), text)


@dataclass(frozen=True)
class AnalysisOptions:
    """The options of every analysing command (``analyze``, ``scaling``, ``energy``): sizes,
    clock, cache and traffic predictors, in-core analysis. Defaults are the command line's."""

    define: tuple = option(
        (), "size constant: N=1000, N=100:2000:100 (stop included), N=2000:100:-100 (counting down), or Kerncraft's "
            "'-D N 1000' / '--define N 1000' / N=10-1000:5[log[10]]; the preprocessor sees each size defined (#ifndef "
            "N); a NAME without a value is a macro for the preprocessor only (-D TUNED)", "-D", "--define",
        metavar="NAME=VALUE")
    function: str | None = function_option()
    include: tuple = include_option()
    clock: str | None = option(None, "core clock override, e.g. '2.2 GHz' (core-cycle work scales with it; memory "
                                     "bandwidth in B/s does not)", "--clock", metavar="FREQ")
    cache_factor: float = option(
        1.0, "effective fraction of each cache (default 1.0; 0.5 = C/2 rule): of its size for layer conditions, of "
             "its sets for the cache simulation", "--cache-factor", type=float)
    scalar: bool = option(False, "analytic in-core model without SIMD", "--scalar")
    reassociate: bool | None = option(
        None, "analytic in-core model: reductions split into partial sums (default: as the compiler and flags in use "
              "would; gcc/clang only with -ffast-math or -Ofast, icc/icx by default)", "--reassociation",
        off=("--no-reassociation", "reductions keep their loop-carried dependency (no partial sums)"))
    mem_bw: str | None = option(
        None, "memory bus bandwidth for the ECM memory link, e.g. '107.1 GB/s': all bytes moved, write-allocate "
              "traffic included, used as given. Benchmarks such as STREAM report less (copy counts 16 of the 24 B it "
              "moves per element: multiply its figure by 1.5); the machine file's figures are converted so (JSON "
              "bandwidth_source)", "--mem-bw", metavar="BW")
    lc_variable: str | None = option(None, "size constant to solve layer conditions for", "--lc-variable",
                                     metavar="NAME")
    cache_predictor: str = option(
        "lc", "data traffic from layer conditions (default; cache simulation where they do not apply) or from cache "
              "simulation (case-insensitive: Kerncraft's LC, SIM; Kerncraft's default is SIM)", "--cache-predictor",
        "-P", choices=("lc", "sim"), type=str.lower)
    sweeps: str = option(
        "repeated", "the kernel runs in repeated sweeps (default: data that fit in a cache stay there between sweeps) "
                    "or once (single: every array comes from memory)", "--sweeps", choices=("repeated", "single"))
    array_alignment: str = option(
        "4096 B", "cache simulation: arrays start at multiples of this (default '4096 B', a page; layer conditions do "
                  "not depend on it)", "--array-alignment", metavar="BYTES")
    array_padding: str = option(
        "0 B", "cache simulation: array i (declaration order) starts i times this many bytes after its aligned "
               "position (default '0 B')", "--array-padding", metavar="BYTES")
    incore: str | None = option(
        None, "in-core time from llvm-mca or OSACA on the compiled kernel, or from the analytic model (default auto: "
              "llvm-mca, else OSACA, else analytic; case-insensitive, so Kerncraft's OSACA and LLVM-MCA work; IACA is "
              "not supported); measured: the kernel benchmarked on this host with its data in L1 (needs a model of this "
              "host, -m host), T_OL the measured time, T_nOL the model's; --scalar selects the analytic model and is "
              "an error with llvm-mca, osaca or measured (their SIMD is the compiler's: see --compiler-flags)",
        "--incore", "-i", "--incore-model", choices=tuple(INCORE_NAMES), type=incore_name)
    repeat: int = option(10, "--incore measured: runs of the benchmark (default 10; min-of-K)", "--repeat",
                         type=int)
    compiler: str | None = option(
        None, "compiler for the in-core analysis (default: the machine file's gcc entry, e.g. gcc-12, else gcc; the "
              "cross compiler for another ISA)", "--compiler")
    compiler_flags: str | None = option(None, "override the machine model's compiler flags", "--compiler-flags",
                                        metavar="FLAGS")
    asm_block: str | None = option(None, "analyze the assembly loop at this label", "--asm-block", metavar="LABEL")
    pointer_increment: int | None = option(None, "bytes the loop's pointers advance per pass of the assembly loop",
                                           "--pointer-increment", metavar="BYTES", type=int)
    assume_aligned: str | None = option(
        None, "compiled kernel: the compiler may assume every array aligned to BYTES (a power of two, e.g. 32); "
              "default: no alignment knowledge, as for arrays passed in from elsewhere", "--assume-aligned",
        metavar="BYTES")
    trust_machine_flags: bool = option(
        False, "use the machine file's compiler flags and compiler name without the allow-list check (they run on "
               "this host: only for files you trust)", "--trust-machine-flags")
    no_cache: bool = option(False, "do not read or write the per-user cache", "--no-cache")
    nt_stores: bool = option(
        False, "stores to write-only arrays are non-temporal: they bypass the caches, no write-allocate, each line "
               "written goes to memory (layer conditions and cache simulation)", "--nt-stores")


@dataclass(frozen=True)
class AnalyzeOptions(AnalysisOptions):
    """``analyze``'s options: the shared analysis options, the models, the active cores and
    the unit of the predictions."""

    pmodel: tuple = option(
        (), "LC, ECM, Roofline, RooflineASM (repeatable; default: LC, ECM and Roofline); Kerncraft's ECMData, ECMCPU "
            "and RooflineFLOP are aliases (see below)", "-p", "--pmodel", metavar="MODEL")
    cores: int = option(1, "active cores (default 1)", "--cores", "-c", type=int)
    multicore_model: str = option(DEFAULT_MULTICORE_MODEL, "n-core model of --cores (default contention, "
                                  "cross-architecture paper eq. 5; saturation: min(n P1, P_sat) per ccNUMA domain)",
                                  "--multicore-model", choices=MULTICORE_MODELS)
    unit: str = option("cy/CL", "unit of predictions (default cy/CL; case-insensitive, so Kerncraft's cy/It, It/s "
                                "work)", "--unit", "-u", choices=UNITS, type=unit_name)


def model_names(names) -> tuple:
    """``-p`` names -> loopmodel's models (:data:`MODEL_NAMES`; default LC, ECM, Roofline).

    Raises:
        LoopmodelError: an unknown name (one line).
    """
    if not names:
        return DEFAULT_MODELS
    out = []
    for n in names:
        key = n.lower().replace("-", "").replace("_", "")
        if key not in MODEL_NAMES:
            raise LoopmodelError(f"unknown model '{n}' (choose LC, ECM, Roofline, RooflineASM)")
        if MODEL_NAMES[key] not in out:
            out.append(MODEL_NAMES[key])
    return tuple(out)


def peer_models(names) -> tuple:
    """``(notes, incore default)`` for Kerncraft's model names among ``-p`` (:data:`PEER_MODEL_NOTES`):
    ``-p ECMData`` (alone or with LC) needs no in-core analysis, like Kerncraft's, so the analytic
    model supplies T_OL unless ``--incore`` is given; otherwise the default is ``auto``."""
    keys = [n.lower().replace("-", "").replace("_", "") for n in names]
    notes = tuple(dict.fromkeys(PEER_MODEL_NOTES[k] for k in keys if k in PEER_MODEL_NOTES))
    data_only = "ecmdata" in keys and all(k in ("ecmdata", "lc", "layerconditions") for k in keys)
    return notes, "analytic" if data_only else "auto"


def _memory_bandwidth(text: str | None) -> float | None:
    """``--mem-bw`` text -> B/s (None: the machine model's)."""
    if not text:
        return None
    try:
        return BANDWIDTH_S.check(parse_quantity(text, "bandwidth_s"))
    except ValueError as exc:
        raise DefineError(f"--mem-bw: {exc}") from None


def unused_parameters(model, options: AnalysisOptions) -> set:
    """The ``-D`` names that are integer parameters of the kernel function its loops do not use
    (PolyBench's ``tsteps`` of heat-3d, whose time loop runs to the macro ``TSTEPS``)."""
    given = {define_name(t) for t in size_defines(options)}
    return given & set(model.parameters) - set(model.constants)


def _kernel_parts(kernel, incore: str, models: tuple, use_cache: bool = True) -> tuple:
    """``(kernel, defaults, text, notes)`` of a kernel file (its parse cached per user where
    ``use_cache``, :func:`~loopmodel.fileio.kernel_file.load_kernel`) or a :class:`loopmodel.Kernel`;
    refuses a compiling analysis of a YAML description (no C code)."""
    parts = getattr(kernel, "parts", None)  # a loopmodel.Kernel (Python API) carries what load_kernel reads
    model, defaults, text, notes = parts() if parts else load_kernel(kernel, use_cache)
    if text is None and (incore in ("llvm-mca", "osaca", "measured") or "RooflineASM" in models):
        what = f"--incore {incore}" if incore in ("llvm-mca", "osaca", "measured") else "-p RooflineASM"
        raise DefineError(f"{what} compiles the kernel and needs C code; a YAML kernel description has "
                          "none (use --incore analytic, or the C kernel)", file=str(kernel))
    return model, defaults, text, notes


def prepare(kernel, machine, options: AnalysisOptions, models: tuple, cores: int, notes: tuple = (),
            incore_default: str = "auto", multicore: tuple = (DEFAULT_MULTICORE_MODEL, None)) -> tuple:
    """Kernel, machine and the shared analysis options -> ``(Analyzer, points)``; ``points`` is
    a lazy :class:`~loopmodel.fileio.defines.Sweep` (``len``, indexing, iteration). ``notes`` go
    with every result; ``incore_default`` applies when ``options.incore`` is None; ``multicore``:
    ``(model, p0)`` of every point's n-core prediction (p0 None: the machine model's).

    Raises:
        LoopmodelError: a bad kernel, machine, size or option (one line).
    """
    if options.cache_factor <= 0 or options.cache_factor > 1:
        raise DefineError("--cache-factor must be in (0, 1]")
    mem_bw = _memory_bandwidth(options.mem_bw)
    alignment = byte_count("--array-alignment", options.array_alignment, minimum=1)
    padding = byte_count("--array-padding", options.array_padding, minimum=0)
    incore = options.incore or incore_default
    model, defaults, text, kernel_notes = _kernel_parts(kernel_reference(kernel, options), incore, models,
                                                        not options.no_cache)
    unused = unused_parameters(model, options)
    kernel_notes = tuple(kernel_notes) + tuple(
        f"-D {name}: the kernel function's parameter '{name}' is not used by its loops: ignored" for name in unused)
    points = sweep([t for t in size_defines(options) if define_name(t) not in unused], defaults)
    unknown = sorted(points.names() - set(model.constants))
    if unknown:
        raise DefineError(f"-D {unknown[0]}: the kernel has no constant '{unknown[0]}' "
                          f"(constants: {', '.join(sorted(model.constants)) or 'none'})",
                          file=None if hasattr(kernel, "parts") else str(kernel))
    machine_model_ = machine_model(machine, options.clock)
    notes = tuple(notes) + machine_notes(machine_name(machine), machine_model_)
    settings = AnalyzerSettings(
        models=models, cores=cores, cache_factor=options.cache_factor, vectorize=not options.scalar,
        reassociate=options.reassociate, memory_bandwidth=mem_bw, solve_for=options.lc_variable,
        cache_predictor=options.cache_predictor, array_alignment=alignment, array_padding=padding,
        nt_stores=options.nt_stores, sweeps=options.sweeps, incore=incore, compiler=options.compiler,
        compiler_flags=options.compiler_flags, asm_block=options.asm_block,
        pointer_increment=options.pointer_increment, use_cache=not options.no_cache, kernel_text=text,
        notes=notes + tuple(kernel_notes), incore_defines=points.largest() if len(points) > 1 else None,
        assume_aligned=alignment_bytes(options.assume_aligned), trust_machine_flags=options.trust_machine_flags,
        machine_file=machine_name(machine), measure_repeat=options.repeat, multicore_model=multicore[0],
        p0=multicore[1])
    if isinstance(model, NestSequence):
        return sequence_analyzer(model, machine_model_, settings, points), points
    analyzer = Analyzer(model, machine_model_, settings)
    if len(points) == 0:
        return analyzer, points
    at = points.largest() if len(points) > 1 else dict(points[0])
    return (analyzer if model.free_constants(at) else as_compiled(analyzer, machine_model_, at)), points


def one_nest(analyzer, command: str):
    """``analyzer``, for a command that models one loop nest (``scaling``, ``energy``).

    Raises:
        DefineError: the kernel is a function of several nests (one line naming the file).
    """
    if isinstance(analyzer, SequenceAnalyzer):
        seq = analyzer.sequence
        raise DefineError(f"{command} models one loop nest; the kernel holds {len(seq.nests)} (analyze gives each and "
                          "their total; --function names a function of one nest)", file=seq.source)
    return analyzer


def sequence_analyzer(sequence, machine, settings, points) -> SequenceAnalyzer:
    """The analyzer of a kernel function of several nests (:mod:`loopmodel.workflows.sequence`).

    Raises:
        DefineError: a ``-D`` range (a function of several nests is analysed at one set of sizes),
            or ``--incore measured`` (it times one nest).
    """
    if len(points) != 1:
        raise DefineError(f"{sequence.source} holds {len(sequence.nests)} loop nests: they are analysed at one set "
                          "of sizes (give each -D one value)")
    if settings.incore == "measured" or "RooflineASM" in settings.models:
        raise DefineError(f"{sequence.source} holds {len(sequence.nests)} loop nests: --incore measured and -p "
                          "RooflineASM time one nest (use --function with a function of one nest)")
    return SequenceAnalyzer(sequence, machine, settings)


class SkippedPoints:
    """The points of a sweep skipped because the kernel does nothing there
    (:class:`~loopmodel.errors.EmptyPointError`), counted as the sweep is read."""

    def __init__(self):
        self.count = 0
        self.first: EmptyPointError | None = None

    def add(self, error: EmptyPointError, count: int = 1) -> None:
        """Count ``count`` skipped points, ``error`` the refusal of the first of them."""
        self.count += count
        self.first = self.first or error

    def note(self, total: int) -> str | None:
        """The sweep's one note on the skipped points (:func:`loopmodel.ir.point.skipped_note`), None
        where none was skipped."""
        return skipped_note(self.count, total, str(self.first)) if self.count else None


@dataclass(frozen=True)
class AnalyzeRun:
    """A prepared ``analyze``: the analyzer, the size points (a lazy sweep) and the models.

    :meth:`results` computes one :class:`~loopmodel.workflows.analysis.AnalysisResult` per point
    as it is read. A sweep (more than one point) skips the points at which the kernel does
    nothing (:class:`~loopmodel.errors.EmptyPointError`) and counts them in ``skipped``
    (:meth:`note`); a single such point is refused.
    """

    analyzer: Analyzer
    points: Sweep
    models: tuple
    skipped: SkippedPoints = field(default_factory=SkippedPoints)

    def results(self) -> Iterator:
        """The results, one per point (the empty points of a sweep skipped), each computed when it is read.

        Raises:
            LoopmodelError: as :meth:`~loopmodel.workflows.analysis.Analyzer.run` at a point; the
                first point's :class:`EmptyPointError` where the kernel does nothing at any point.
        """
        return (res for _, res in self.kept())

    def kept(self) -> Iterator:
        """``(index, result)`` of each point not skipped (:meth:`results`), in sweep order."""
        total = len(self.points)
        for index, point in enumerate(self.points):
            try:
                yield index, self.analyzer.run(point)
            except EmptyPointError as exc:
                if total == 1:
                    raise
                self.skipped.add(exc)
        if self.skipped.count == total:
            raise self.skipped.first

    def note(self) -> str | None:
        """The one note on the points skipped so far (None where none was)."""
        return self.skipped.note(len(self.points))

    def pieces(self) -> tuple:
        """``(Pieces, reason)``: the sweep split into pieces of equal figures, one analysis per piece
        (:func:`loopmodel.workflows.pieces.piecewise`; ``reason`` None), or, where that cannot be
        shown exact, every point analysed and a piece of its own (``reason`` says why; memory then
        grows with the points). The points at which the kernel does nothing are left out of both
        (:meth:`note`).

        Raises:
            LoopmodelError: as :meth:`~loopmodel.workflows.analysis.Analyzer.run` at a point.
        """
        pieces = _pieces()
        found, reason = pieces.piecewise(self.analyzer, self.points, self.skipped)
        if found is not None:
            return found, None
        return pieces.point_by_point(self.points, tuple(self.kept())), reason

    def constants(self) -> dict:
        """The size constants with one value at every point (defaults and single ``-D`` values)."""
        return {**self.points.base, **{n: seq[0] for n, seq in self.points.values.items() if len(seq) == 1}}


def _pieces():
    """:mod:`.pieces`, loaded when a sweep is evaluated piece by piece (it needs numpy, which an
    analysis of one point does not import)."""
    return importlib.import_module(f"{__package__}.pieces")


def run(kernel, machine, options: AnalyzeOptions) -> AnalyzeRun:
    """Check the inputs of ``analyze`` and prepare it: the models of ``-p`` (Kerncraft's names
    mapped, their notes and in-core default applied), the analyzer and the lazy size points.

    Args:
        kernel: a kernel file (C or Kerncraft YAML) or a :class:`loopmodel.Kernel`.
        machine: a built-in name, a machine file, ``"host"``, or a :class:`loopmodel.Machine`.
        options: :class:`AnalyzeOptions`.

    Raises:
        LoopmodelError: a bad kernel, machine, size or option (one line).
    """
    notes, incore_default = peer_models(options.pmodel)
    models = model_names(options.pmodel)
    analyzer, points = prepare(kernel, machine, options, models, options.cores, notes, incore_default,
                               (options.multicore_model, None))
    return AnalyzeRun(analyzer, points, models)
