"""One analysis: kernel + machine + sizes -> layer conditions, traffic, ECM, Roofline.

:class:`Analyzer` holds what does not depend on the sizes (the parsed kernel,
the symbolic layer-condition analysis, the machine); :meth:`Analyzer.run`
evaluates one set of ``-D`` values, so a sweep over thousands of sizes reuses
the symbolic work.
"""
from __future__ import annotations

import dataclasses
import importlib
import functools
from dataclasses import dataclass, field

from ..compiled.compile import fp_reassociation, resolve_compiler
from ..errors import DefineError, LoopmodelError, ModelError, OptionError, ToolError
from ..ir.kernel import coefficient
from ..ir.point import check_point
from ..machine.vector_width import compiler_vector_width
from ..models import incore as _incore_model
from ..models.ecm import ECMResult, ecm_model, mem_bw_note
from ..models.incore import COMPILED_ANALYSIS, InCoreResult
from ..compiled.incore_fill import filled_machine, missing_figure
from ..models.location import data_location
from ..models.nest_entry import entry_cy_per_it
from ..models.prediction import DEFAULT_MULTICORE_MODEL, Prediction, predict
from ..models.roofline import RooflineResult, roofline_model, versus_ecm
from ..models.split_access import alignment_modulus
from ..models.short_loops import inner_trips, is_short, quantization, short_loop_cy_per_it
from ..predictors.layer_conditions import LayerConditionAnalysis
from ..predictors.traffic import TrafficPrediction
from .confidence import Confidence, assess, kernel_facts
from .executed_simd import executed_simd

MODELS = ("LC", "ECM", "Roofline")


@dataclass(frozen=True)
class AnalyzerSettings:
    """The settings of an :class:`Analyzer`, in the library's units (bytes, B/s, resolved
    analyzer names): what a command's Options (:mod:`loopmodel.workflows.analyze`) become once
    checked and converted.

    Attributes:
        models: subset of :data:`MODELS` and ``RooflineASM`` (the CPU roof from the compiled block, only
            on request).
        cores: active cores (shared caches divided; multicore prediction).
        multicore_model: the n-core model of the prediction (a name of
            :data:`~loopmodel.models.prediction.MULTICORE_MODELS`); p0: its contention parameter
            (None: the machine model's).
        cache_factor: effective cache size fraction (1.0; 0.5 = "C/2" rule; the simulation
            simulates that fraction of each cache's sets).
        vectorize: use SIMD in the analytic in-core model.
        reassociate: allow partial sums for reductions (True: ``--reassociation``, False:
            ``--no-reassociation``, None: as the compiler and flags in use would, see
            :func:`~loopmodel.compiled.compile.fp_reassociation`).
        memory_bandwidth: B/s, the memory bus bandwidth (``--mem-bw``: all bytes moved, write-allocate
            traffic included, used as given) for the ECM link into memory.
        solve_for: size constant for the layer-condition transition points.
        cache_predictor: ``"lc"`` (layer conditions; cache simulation where
            they do not apply) or ``"sim"`` (cache simulation).
        array_alignment, array_padding: array placement for simulation (bytes; layer conditions
            do not depend on it, and say so in a note).
        nt_stores: stores to write-only arrays are non-temporal (both traffic predictors).
        sweeps: ``"repeated"`` (steady state of a kernel run again and again:
            a cache holding the whole data set keeps it between sweeps) or
            ``"single"`` (a kernel run once), for both traffic predictors.
        incore: ``"analytic"``, ``"llvm-mca"``, ``"osaca"``, ``"measured"`` (the kernel benchmarked on
            this host with its data in L1, :mod:`.incore_measured`) or ``"auto"`` (default, as
            ``loopmodel analyze``'s: the first analyzer that works for the machine,
            analytic as last resort).
        compiler, compiler_flags, asm_block, pointer_increment: for the
            compiled in-core analysis (None: machine model / heuristics).
        incore_defines: sizes at which the compiled in-core analysis is done (None:
            each point's own; a sweep passes one point so that it compiles once).
        assume_aligned: bytes the compiled kernel may assume its arrays aligned to
            (``--assume-aligned``; None: no alignment knowledge, as for arrays passed in).
        trust_machine_flags: take compiler flags and names from the machine file without
            the allow-list check (``--trust-machine-flags``).
        machine_file: the machine file's path or built-in name (for error messages).
        measure_repeat, measure_cpu: ``incore="measured"``: runs of the benchmark (min-of-K)
            and the CPU it is pinned to.
        use_cache: read and write the per-user cache of compiled analyses.
        kernel_text: the kernel file's text (needed by compiled analyses; None for a YAML kernel
            description, which has no C code: analytic in-core model).
        notes: notes that go with every result (e.g. how a Kerncraft model name or a YAML
            kernel description was read).
    """

    models: tuple = MODELS
    cores: int = 1
    multicore_model: str = DEFAULT_MULTICORE_MODEL
    p0: float | None = None
    cache_factor: float = 1.0
    vectorize: bool = True
    reassociate: bool | None = None
    memory_bandwidth: float | None = None
    solve_for: str | None = None
    cache_predictor: str = "lc"
    array_alignment: int = 4096
    array_padding: int = 0
    nt_stores: bool = False
    sweeps: str = "repeated"
    incore: str = "auto"
    compiler: str | None = None
    compiler_flags: str | None = None
    asm_block: str | None = None
    pointer_increment: float | None = None
    use_cache: bool = True
    kernel_text: str | None = None
    incore_defines: dict | None = None
    assume_aligned: int | None = None
    trust_machine_flags: bool = False
    machine_file: str | None = None
    measure_repeat: int = 10
    measure_cpu: int | None = 0
    notes: tuple = ()


@dataclass(frozen=True)
class AnalysisResult:
    """Everything computed for one set of sizes (rendered by text, JSON and plots); ``prediction``: the
    figures every report and command reads (:class:`~loopmodel.models.prediction.Prediction`: data
    location, selected T_ECM, n-core figure, Roofline; None without ECM); ``confidence``: its regime
    tags and the host validation's error band (:mod:`loopmodel.workflows.confidence`)."""

    kernel: object
    machine: object
    defines: dict
    options: AnalyzerSettings
    lc_levels: tuple
    traffic: TrafficPrediction
    incore: InCoreResult | None  # None when no requested model needs it (``-p LC``)
    ecm: ECMResult | None
    roofline: RooflineResult | None
    lc_variable: str | None
    notes: tuple = field(default=())
    simulation: object = None  # SimulationInfo (predictors.simulation) of a cache simulation, else None
    compiled: object = None
    roofline_asm: RooflineResult | None = None
    confidence: Confidence | None = None
    prediction: Prediction | None = None

    @property
    def location(self) -> str:
        """The data location (:func:`~loopmodel.models.location.data_location`, the one rule)."""
        if self.prediction is not None:
            return self.prediction.location
        return data_location(self.traffic, self.machine.memory_hierarchy)


def analytic_incore(kernel, machine, iterations_per_unit: float, vectorize: bool = True,
                    reassociate: bool = True, reassociation_source: str = "",
                    defines: dict | None = None, fold_left: bool = False) -> InCoreResult:
    """The analytic in-core model (:func:`loopmodel.models.incore.analytic_incore`, paper eq. 1-2),
    tolerating a machine model that lacks an operation's throughput or latency.

    What the missing figure bounds is unknown: ``T_OL`` is None (and ``dependency`` for a
    missing latency), its components naming the operation are left out, and a note names
    what is missing. ``T_nOL`` (loads and stores) does not depend on it and is kept. This is
    the analytic model of every path of :class:`Analyzer`, the fallback of ``--incore auto`` too.

    A figure the model lacks that llvm-mca's scheduling model gives is filled in first, with a
    note naming it (:func:`loopmodel.compiled.incore_fill.filled_machine`).

    Returns:
        :class:`~loopmodel.models.incore.InCoreResult` in cy/CL (``T_OL`` possibly None).

    Raises:
        ModelError: the model fails for another reason.
    """
    machine, filled = filled_machine(kernel, machine)
    try:
        res = _incore_model.analytic_incore(kernel, machine, iterations_per_unit, vectorize, reassociate,
                                            reassociation_source, defines, fold_left)
        return dataclasses.replace(res, notes=res.notes + filled) if filled else res
    except ModelError as exc:
        error = exc
    missing = _incore_model.missing_data(kernel, machine)
    if not missing:
        raise error
    ic = machine.in_core
    # any positive stand-in: only T_OL (left out below) depends on these figures
    stand_in = dataclasses.replace(ic, throughput={**ic.throughput, **{op: 1.0 for kind, op in missing
                                                                         if kind == "throughput"}},
                                   latency={**ic.latency, **{op: 1.0 for kind, op in missing if kind == "latency"}})
    try:
        res = _incore_model.analytic_incore(kernel, dataclasses.replace(machine, in_core=stand_in),
                                            iterations_per_unit, vectorize, reassociate, reassociation_source,
                                            defines, fold_left)
    except ModelError:
        raise error from None
    no_tp = {op for kind, op in missing if kind == "throughput"}
    no_lat = any(kind == "latency" for kind, _ in missing)
    comps = {k: v for k, v in res.components.items()
             if not set(k.split("+")) & no_tp and not (no_lat and k == "dependency")}
    what = ", ".join(f"no {kind} for {op} (in_core.{kind}.{op})" for kind, op in missing)
    why = "; ".join(f"{op} {kind}: {missing_figure(machine, kind, op).source}" for kind, op in missing)
    note = (f"machine model '{machine.name}' gives {what}: T_OL is unknown, and so are the ECM predictions "
            f"(T_ECM) and a CPU roof that needs T_OL; the data-transfer contributions are shown (not filled in: "
            f"{why})")
    return dataclasses.replace(res, T_OL=None, components=comps, dependency=None if no_lat else res.dependency,
                               notes=res.notes + (note,))


def short_loop_incore(kernel, machine, incore, compiled, defines: dict, it_per_unit: float):
    """``incore`` with T_OL and T_nOL (cy/CL) for the inner loop's trip count n at ``defines``
    (:mod:`loopmodel.models.short_loops`; the ECM model's in-core times are the steady state of a
    long loop, cross-architecture-machine-models.txt §3.1), with a note where it applies.

    * A compiled block whose pass runs whole inner loops (the compiler unrolled the inner loop
      into the next outer loop; the compiled analysis counts its iterations,
      :attr:`~loopmodel.compiled.incore.CompiledInCore.whole_inner_loops`): unchanged, entry and
      remainder are in the block.
    * Otherwise, n short (:func:`~loopmodel.models.short_loops.is_short`) and the machine model
      giving ``in_core.inner_loop_entry_cy`` and ``inner_loop_remainder_ratio``: both times
      are multiplied by the pass quantization and get the entry overhead, c_entry / n per
      iteration, added to each: nothing else proceeds while the loop is entered and left (a
      time that overlaps nothing adds to both terms of ECM eq. 4). Without the fields a note
      says the overhead is not modelled.

    Unchanged: n unknown (triangular nest) or long, T_OL unknown.
    """
    n = inner_trips(kernel, defines)
    if n is None or incore.T_OL is None or n < 1 or incore.source == "measured":  # measured: as it ran
        return incore
    if compiled is not None and (compiled.whole_inner_loops or compiled.iterations_per_pass > n):
        return incore  # a pass runs whole inner loops: entry and remainder are in the block
    p = compiled.iterations_per_pass if compiled is not None else incore.lanes
    if not is_short(n, p):
        return incore
    ic = machine.in_core
    if ic.inner_loop_entry_cy is None or ic.inner_loop_remainder_ratio is None:
        return dataclasses.replace(incore, notes=incore.notes + (
            f"inner loop of {n} iterations ({p:g} per pass): loop entry overhead and remainder not modelled (no "
            "measurement in this machine model; 'machine probe' measures them)",))
    q = quantization(n, p, ic.inner_loop_remainder_ratio)
    extra = ic.inner_loop_entry_cy / n * it_per_unit
    t_ol, t_nol = incore.T_OL * q + extra, incore.T_nOL * q + extra
    t = incore.core_time / it_per_unit  # steady state, cy/it; max(t_ol, t_nol) / it_per_unit - t is the same
    added = short_loop_cy_per_it(t, n, p, ic.inner_loop_entry_cy, ic.inner_loop_remainder_ratio) - t
    note = (f"inner loop of {n} iterations ({p:g} per pass): +{added:.3g} cy/it loop entry and remainder (measured "
            f"on this host: {ic.inner_loop_entry_cy:.3g} cy per entry, a remainder iteration "
            f"{ic.inner_loop_remainder_ratio:.3g} x a pass)")
    return dataclasses.replace(incore, T_OL=t_ol, T_nOL=t_nol, notes=incore.notes + (note,))


#: a nest entry below this fraction of the in-core time is left out (below any measurement's resolution)
NEST_ENTRY_MIN_FRACTION = 0.005


def nest_entry_incore(kernel, machine, incore, defines: dict, it_per_unit: float):
    """``incore`` with the cost of entering and leaving the nest once per execution,
    ``in_core.nest_entry_cy`` / the nest's iterations, added to T_OL and T_nOL (cy/CL; nothing
    else proceeds meanwhile), with a note (:mod:`loopmodel.models.nest_entry`).

    Unchanged: no such figure in the machine model, T_OL unknown, the in-core time measured (it
    holds the entry), a nest whose iterations cannot be counted (a size missing, or a nest whose
    count needs more enumeration than :data:`~loopmodel.ir.iteration_count.ENUMERATION_BUDGET`),
    or an entry below :data:`NEST_ENTRY_MIN_FRACTION` of the in-core time.
    """
    c = machine.in_core.nest_entry_cy
    if not c or incore.T_OL is None or incore.source == "measured":
        return incore
    try:
        n = kernel.total_iterations(defines)
    except (KeyError, ValueError):
        return incore
    per_it = entry_cy_per_it(c, n)
    extra = per_it * it_per_unit
    if extra < NEST_ENTRY_MIN_FRACTION * incore.core_time:
        return incore
    note = (f"nest entered and left once per execution: +{per_it:.3g} cy/it ({c:.3g} cy per execution, measured on "
            f"this host, over its {n} iterations)")
    return dataclasses.replace(incore, T_OL=incore.T_OL + extra, T_nOL=incore.T_nOL + extra,
                               notes=incore.notes + (note,))


def _check_cores(cores: int, machine) -> None:
    """Raises DefineError unless 1 <= ``cores`` <= the machine's cores."""
    if cores < 1:
        raise DefineError("--cores must be at least 1")
    total = machine.cores_per_socket * machine.sockets
    if cores > total:
        raise DefineError(f"--cores {cores}: machine model '{machine.name}' has {total} cores "
                          f"({machine.sockets} socket(s) x {machine.cores_per_socket})")


#: the note on a kernel whose sweep feeds itself, predicted on more than one core
IN_PLACE_NOTE = ("values updated in the sweep feed later iterations (in-place, e.g. a Gauss-Seidel sweep): the "
                 "n-core figure assumes the outer loop splits among the cores, which this dependency allows only "
                 "with a wavefront or another order of the updates (synchronisation not modelled)")


def parallel_notes(confidence, cores: int) -> tuple:
    """:data:`IN_PLACE_NOTE` for a prediction on more than one core of a kernel tagged ``in-place``
    (``confidence``: the point's :class:`~loopmodel.workflows.confidence.Confidence`), else nothing."""
    return (IN_PLACE_NOTE,) if cores > 1 and "in-place" in confidence.tags else ()


def _split_notes(kernel, defines: dict, cores: int) -> list:
    """A note where ``cores`` cores cannot split the outermost loop's trips evenly (5 % or more of
    extra work for the core with the largest part): the traffic is that of such a part
    (:func:`~loopmodel.predictors.layer_conditions.data_set_parts`), the multicore time assumes
    work divided evenly."""
    if cores <= 1:
        return []
    trips = kernel.loops[0].iterations(defines)
    part = -(-trips // cores)
    if part * cores < 1.05 * trips:
        return []
    busy = -(-trips // part)
    return [f"{cores} cores split the outermost loop's {trips} trips into parts of {part}: {busy} core(s) with "
            f"work, the largest part {part * cores / trips:.2f}x an even share; the multicore time assumes the "
            "work divided evenly"]


def _conversion_notes(kernel, incore) -> list:
    """A note where the analytic in-core model leaves out the conversions of loop indices used as
    floating-point values (``x = (i + 0.5) * dx``: one int-to-double conversion per iteration, or
    per SIMD vector): the machine models give no conversion throughput."""
    if incore is None or incore.source != "analytic" or not kernel.index_values:
        return []
    names = ", ".join(f"'{i}'" for i in kernel.index_values)
    return [f"loop index {names} used as a floating-point value: its integer-to-floating-point conversion "
            "(one instruction per iteration, or per SIMD vector) is not in the analytic in-core model (the machine "
            f"model gives no conversion throughput); {COMPILED_ANALYSIS} counts it"]


class Analyzer:
    """Prepared analysis of one kernel on one machine.

    Raises:
        ModelError: the layer-condition predictor does not apply.
        DefineError: ``--lc-variable`` names no constant of the kernel.
        OptionError: in-core options that cannot be honoured together
            (:func:`check_incore_options`: ``vectorize=False`` with a named compiled analyzer,
            a named analyzer without ``kernel_text``, ``asm_block``/``pointer_increment`` where
            only the analytic model runs).
    """

    def __init__(self, kernel, machine, options: AnalyzerSettings = AnalyzerSettings()):
        check_incore_options(options)
        self.kernel = kernel
        self.machine, self.vector_width = compiler_machine(machine, options.compiler, options.compiler_flags)
        self._hardware_width = machine.in_core.simd_width
        self._default_width = compiler_machine(machine)[1].bytes  # the machine file's compiler and flags
        self.options = options
        self.requested_incore = options.incore
        if not options.vectorize and options.incore == "auto":  # --scalar: the analytic model without SIMD
            self.options = options = dataclasses.replace(options, incore="analytic")
        self.lc = None
        self.lc_error = None
        try:
            self.lc = LayerConditionAnalysis(kernel, nt_stores=options.nt_stores)
        except ModelError as exc:
            if options.models == ("LC",):
                raise
            self.lc_error = exc  # e.g. transposed access: fall back to cache simulation
        self.sim = _simulation().SimulationPredictor(kernel) \
            if (options.cache_predictor == "sim" or self.lc is None) else None
        if options.solve_for and options.solve_for not in kernel.constants:
            raise DefineError(f"--lc-variable {options.solve_for}: the kernel has no constant of that name "
                              f"(constants: {', '.join(sorted(kernel.constants)) or 'none'})")
        _check_cores(options.cores, machine)
        if options.sweeps not in ("repeated", "single"):
            raise DefineError(f"--sweeps {options.sweeps}: choose 'repeated' or 'single'")
        self._incore = {}  # (it per CL of work, non-contiguous accesses, SIMD, reassociation) -> analytic result
        self._compiled_memo = {}
        self._nests = {}  # sizes -> the compiler's report of the nest (loop_structure)
        self._last_compiled = (None, None)  # the last point's compiled analysis (runs at other core counts)
        self._refused = set()  # the compiled analyzers that refused this kernel under --incore auto
        self._alternative = {}  # refused analyzers -> the --incore to name instead (_name_compiled)
        if options.incore == "measured":  # refused before any point: a bundled model is not this host
            _measuring().host_model_note(machine)

    def run(self, defines: dict, cores: int | None = None) -> AnalysisResult:
        """Evaluate all models for ``defines`` (constant -> int).

        Args:
            defines: size constant -> value.
            cores: active cores for this run (None: ``options.cores``); ``scaling`` runs each core
                count of one point so (the in-core analysis is done once).

        Raises:
            DefineError: a constant without a value, a core count outside the machine.
            ModelError: sizes at which the kernel cannot run (:func:`~loopmodel.ir.point.check_point`:
                an empty iteration space, an array without elements or beyond 2**62 bytes), or a
                model that does not apply.
        """
        missing = self.kernel.free_constants(defines)
        if missing:
            raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size> "
                              f"(kernel {self.kernel.source})")
        check_point(self.kernel, defines)
        opt = self.options
        if cores is not None and cores != opt.cores:
            _check_cores(cores, self.machine)
            opt = dataclasses.replace(opt, cores=cores)
        notes = []
        traffic, levels, sim_info = None, (), None
        if self.lc is not None:
            traffic, levels = self.lc.predict(self.machine, defines, opt.cores, opt.cache_factor, opt.solve_for,
                                              sweeps=opt.sweeps)
        if self.sim is not None:
            traffic, sim_info = self.sim.predict(self.machine, defines, opt.cores, opt.array_alignment,
                                                 opt.array_padding, opt.nt_stores, sweeps=opt.sweeps,
                                                 cache_factor=opt.cache_factor)
            if self.lc is None:
                reason = self.lc_error.message.rsplit("; use cache simulation", 1)[0]
                notes.append(f"{reason}; data traffic from cache simulation instead")
        elif (opt.array_alignment, opt.array_padding) != (AnalyzerSettings.array_alignment,
                                                          AnalyzerSettings.array_padding):
            notes.append("--array-alignment, --array-padding: layer conditions do not depend on where the arrays "
                         "lie (no cache sets or associativity conflicts); they take effect with --cache-predictor sim")
        incore, compiled = None, None
        if "ECM" in opt.models or "Roofline" in opt.models:  # layer conditions need no in-core model
            incore, compiled = self._incore_for(defines, traffic.iterations_per_unit)
            option_notes = self._option_notes(incore, compiled, traffic.iterations_per_unit, defines)
            incore = dataclasses.replace(incore, notes=incore.notes + option_notes)
            incore = short_loop_incore(self.kernel, self.machine, incore, compiled, defines,
                                       traffic.iterations_per_unit)
            incore = nest_entry_incore(self.kernel, self.machine, incore, defines, traffic.iterations_per_unit)
        unknown = self._unknown_incore(incore) if incore is not None and incore.T_OL is None else None
        roof_asm = None
        if "RooflineASM" in opt.models:
            roof_asm, asm_incore, asm_compiled = self._roofline_asm(defines, traffic, incore, compiled)
            incore, compiled = incore or asm_incore, compiled or asm_compiled
        if incore is not None and incore.source == "measured":  # the ECM time in L1 = the time measured there
            incore = _measuring().fit_to_l1(incore, traffic, self.machine, opt.memory_bandwidth)
        ecm = ecm_model(traffic, incore, self.machine, opt.memory_bandwidth, unknown) if "ECM" in opt.models else None
        pred = None if ecm is None else predict(ecm, self.machine, opt.cores, traffic.iterations_per_unit,
                                                 opt.multicore_model, opt.p0)
        roof = None
        notes += list(opt.notes) + list(traffic.notes) + (list(incore.notes) if incore is not None else [])
        if ecm is not None and compiled is not None and incore.source != "analytic":
            notes += self._agreement(defines, traffic, incore, compiled, ecm)
        notes += _conversion_notes(self.kernel, incore)
        if "Roofline" in opt.models:
            roof = self._roofline(opt, traffic, incore, unknown, (ecm, pred), notes)
        for r in (roof, roof_asm):
            notes += [n for n in (r.notes if r is not None else ()) if n not in notes]
        notes += _split_notes(self.kernel, defines, opt.cores)
        if ecm is not None and opt.memory_bandwidth is not None:
            keep = "; the Roofline keeps the measured bandwidths" if roof or roof_asm else ""
            notes.append(mem_bw_note(traffic, self.machine, opt.memory_bandwidth) + keep)
        lc_var = opt.solve_for or (self.lc.variable if self.lc is not None else None)
        res = AnalysisResult(self.kernel, self.machine, dict(defines), opt, tuple(levels), traffic,
                             incore, ecm, roof, lc_var, tuple(self._name_compiled(notes)), sim_info, compiled,
                             roof_asm, prediction=pred and dataclasses.replace(pred, roofline=roof))
        return self._finish(res)

    def _roofline(self, opt, traffic, incore, unknown, ecm_pred: tuple, notes: list):
        """The point's Roofline with ``opt``'s cores (:func:`~loopmodel.models.roofline.roofline_model`) and
        the note where it is slower than the ECM prediction (``ecm_pred``: the ECM result and the point's
        :class:`~loopmodel.models.prediction.Prediction`, None without ECM;
        :func:`~loopmodel.models.roofline.versus_ecm`); None with a note in ``notes`` where it cannot be
        built beside other models.

        Raises:
            ModelError: it cannot be built and is the only model asked for."""
        ecm, pred = ecm_pred
        try:
            roof = roofline_model(self.kernel, traffic, incore, self.machine, opt.cores, unknown=unknown)
        except ModelError as exc:
            if opt.models == ("Roofline",):
                raise
            notes.append(f"Roofline skipped: {exc.message}")
            return None
        return roof if pred is None else versus_ecm(roof, ecm, pred, self.machine.clock)

    def _finish(self, res: AnalysisResult) -> AnalysisResult:
        """``res`` with its confidence and the note on a sweep that feeds itself predicted on several cores."""
        opt = res.options
        conf = assess(res, self._accuracy, self._facts)
        return dataclasses.replace(res, confidence=conf, notes=res.notes + parallel_notes(conf, opt.cores))

    def _name_compiled(self, notes: list) -> list:
        """``notes`` where those of the analytic model that point to a compiled in-core analysis
        (:data:`~loopmodel.models.incore.COMPILED_ANALYSIS`) name the ``--incore`` that can run here
        and has not refused this kernel (:func:`loopmodel.compiled.available.instead`); where none
        can, they stay as they are. Looked up only where such a note is."""
        if not any(COMPILED_ANALYSIS in n for n in notes):
            return notes
        refused = frozenset(self._refused)
        if refused not in self._alternative:
            self._alternative[refused] = _compiled("available").instead(self.machine, refused)
        alt = self._alternative[refused]
        if alt == "analytic":
            return notes
        return [n.replace(COMPILED_ANALYSIS, f"{COMPILED_ANALYSIS} (--incore {alt})") for n in notes]

    @functools.cached_property
    def _facts(self):
        """The size-independent part of the regime tags (:func:`~.confidence.kernel_facts`)."""
        return kernel_facts(self.kernel, self.machine)

    def loop_structure(self, defines: dict):
        """What the compiler does to the nest at the sizes ``defines``, from its optimisation report
        (:func:`loopmodel.compiled.incore.loop_structure`, with this analysis' compiler and flags);
        None where the compiler gives no report.

        Raises:
            ToolError: the compiler is missing or fails; MachineError: a machine file's compiler
                flag or name is not allowed (one line each).
        """
        key = tuple(sorted(defines.items()))  # once per set of sizes: every point asks again
        if key not in self._nests:
            opt = self.options
            self._nests[key] = _compiled("incore").loop_structure(
                self.kernel, self.machine, defines, opt.compiler, opt.compiler_flags, opt.use_cache,
                opt.trust_machine_flags, opt.machine_file)
        return self._nests[key]

    @functools.cached_property
    def _accuracy(self):
        """The machine model's validation summary (``probe.validation``), or False without one."""
        probe = self.machine.probe
        return (probe.validation if probe else None) or False

    def _incore_for(self, defines, it_per_unit):
        """``(InCoreResult, compiled info or None)`` of the requested in-core analysis."""
        opt = self.options
        if opt.incore == "analytic" or opt.kernel_text is None:
            return self._analytic_for(it_per_unit, defines), None
        key = (tuple(sorted(defines.items())), it_per_unit)  # the in-core analysis does not depend on cores
        if self._last_compiled[0] != key:
            measured = opt.incore == "measured"
            self._last_compiled = (key, self._measured_for(defines, it_per_unit) if measured
                                   else self._compiled_incore(defines, it_per_unit))
        return self._last_compiled[1]

    def _measured_for(self, defines, it_per_unit):
        """``(InCoreResult, None)``: the kernel benchmarked on this host with its data in L1
        (:func:`.incore_measured.measured_incore`), its time split by the ``auto`` in-core
        model's T_nOL; once per set of sizes measured (a sweep: the largest point's)."""
        opt = self.options
        at = opt.incore_defines or defines
        memo_key = ("measured", tuple(sorted(at.items())), it_per_unit)
        if memo_key not in self._compiled_memo:
            modelled, _ = self._compiled_incore(defines, it_per_unit, "auto")
            self._compiled_memo[memo_key] = (_measuring().measured_incore(
                self.kernel, opt.kernel_text, self.machine, at, it_per_unit, modelled, opt.compiler,
                opt.compiler_flags, opt.machine_file, opt.measure_repeat, opt.measure_cpu, opt.use_cache), None)
        return self._compiled_memo[memo_key]

    def _analytic_for(self, it_per_unit, defines, vectorize=None, reassociate=None):
        """The analytic in-core result at ``it_per_unit`` iterations per CL and ``defines``, with the
        options' SIMD and reassociation unless ``vectorize``/``reassociate`` say otherwise (to
        compare); computed once per it/CL, set of non-contiguous accesses (size-dependent strides
        change both between points) and setting."""
        opt = self.options
        reassociation = self._reassociation if reassociate is None else (reassociate, "")
        vectorize = opt.vectorize if vectorize is None else vectorize
        simd = self._executed_simd(defines, reassociation[0]) if vectorize else None
        key = (it_per_unit, self._strided(defines), vectorize, reassociation, self._alignment(defines), simd)
        if key not in self._incore:
            machine, fold_left, extra = self.machine, False, []
            if simd is not None:
                vectorize = simd.vector_bytes is not None
                if vectorize and simd.vector_bytes < self.machine.in_core.simd_width:
                    machine = dataclasses.replace(self.machine, in_core=narrowed(self.machine.in_core,
                                                                                 simd.vector_bytes))
                fold_left, extra = simd.fold_left, [simd.note] if simd.note else []
            res = analytic_incore(self.kernel, machine, it_per_unit, vectorize, *reassociation, defines, fold_left)
            if simd is None:
                given = {op: n for op, n in res.operations.items() if op in self.machine.in_core.throughput}
                extra = width_note(self.vector_width, self._hardware_width, res.lanes, given)
            self._incore[key] = dataclasses.replace(res, notes=res.notes + tuple(extra)) if extra else res
        return self._incore[key]

    def _executed_simd(self, defines, reassociate: bool):
        """The SIMD form of the compiled inner loop from gcc's report
        (:func:`.executed_simd.executed_simd`), where this analysis compiles the kernel anyway
        (``--incore`` auto, llvm-mca, osaca, measured, with the C source); None elsewhere, or
        where the compiler cannot be run (the compiled analysis reports that itself)."""
        opt = self.options
        if opt.incore == "analytic" or opt.kernel_text is None:
            return None
        try:  # a sweep: the sizes the compiled analysis is made at (compiled once)
            nest = self.loop_structure(opt.incore_defines or defines)
        except LoopmodelError:
            return None
        return executed_simd(nest, self.kernel, int(self.machine.in_core.simd_width), reassociate)

    def _agreement(self, defines, traffic, incore, compiled, ecm) -> list:
        """``[note]`` where the compiled in-core result's T_ECM and the analytic model's differ by more
        than 25 % in a data location, naming why (:func:`loopmodel.compiled.agreement.disagreement_note`);
        ``[]`` where they agree."""
        analytic = self._analytic_for(traffic.iterations_per_unit, defines)
        if analytic.T_OL is None:
            return []
        other = ecm_model(traffic, analytic, self.machine, self.options.memory_bandwidth)
        note = _compiled("agreement").disagreement_note(other, ecm, analytic, incore, compiled, self.kernel)
        return [note] if note else []

    def _unknown_incore(self, incore) -> str:
        """Why ``incore.T_OL`` is unknown: the throughputs or latencies the machine model lacks."""
        missing = _incore_model.missing_data(self.kernel, self.machine)
        what = ", ".join(f"no {kind} for {op}" for kind, op in missing)
        return f"machine model '{self.machine.name}' gives {what or 'no complete in-core data'}"

    def _roofline_asm(self, defines, traffic, incore, compiled):
        """RooflineASM: ``(RooflineResult, InCoreResult, compiled info)``, the CPU roof from the compiled block."""
        opt = self.options
        asm_incore, asm_compiled = incore, compiled
        if compiled is None:
            if opt.kernel_text is None:
                raise ModelError("RooflineASM needs the kernel's source text (compiled in-core analysis)")
            asm_incore, asm_compiled = self._compiled_incore(defines, traffic.iterations_per_unit,
                                                             "auto" if opt.incore == "analytic" else opt.incore)
            if asm_compiled is None:
                raise ModelError("RooflineASM needs llvm-mca or OSACA: " + asm_incore.notes[-1])
        roof = roofline_model(self.kernel, traffic, asm_incore, self.machine, opt.cores, cpu_from_block=True)
        return roof, asm_incore, asm_compiled

    def _compiled_incore(self, defines, it_per_unit, mode=None):
        """llvm-mca or OSACA on the compiled kernel; ``incore='auto'``: llvm-mca, else OSACA, else analytic."""
        opt = self.options
        mode = mode or opt.incore
        at = opt.incore_defines or defines
        memo_key = (mode, tuple(sorted(at.items())), it_per_unit)
        if opt.incore_defines and memo_key in self._compiled_memo:  # a sweep: compiled once
            return self._compiled_memo[memo_key]
        res = self._compiled_incore_uncached(defines, it_per_unit, mode, at)
        if opt.incore_defines:
            self._compiled_memo[memo_key] = res
        return res

    def _compiled_incore_uncached(self, defines, it_per_unit, mode, at):
        """The first analyzer of ``mode`` whose result accounts for the whole block, else analytic.

        With ``mode='auto'`` an analyzer that fails or leaves instructions unaccounted for
        (:func:`loopmodel.compiled.incore.unaccounted`) is skipped with a note naming why
        and which instructions; an explicitly requested analyzer raises instead. With
        ``mode='auto'`` on a machine the probe measured (:func:`loopmodel.compiled.checked.has_probe`)
        both llvm-mca and OSACA run and the one whose per-instruction figures agree better with the
        probe's is used (:meth:`_closest_to_probe`).
        """
        opt = self.options
        analyzers = ("llvm-mca", "osaca") if mode == "auto" else (mode,)
        skipped, done = [], []
        for analyzer in analyzers:
            try:
                done.append(_compiled("incore").compiled_incore(
                    self.kernel, self.machine, at, it_per_unit, analyzer, opt.compiler,
                    opt.compiler_flags, opt.asm_block, opt.pointer_increment, opt.use_cache,
                    assume_aligned=opt.assume_aligned, trust_machine=opt.trust_machine_flags,
                    machine_file=opt.machine_file, suggest=mode != "auto"))
            except ToolError as e:
                if mode != "auto" or isinstance(e, OptionError):
                    raise
                skipped.append(e.message)
                self._refused.add(analyzer)
                continue
            if not _compiled("checked").has_probe(self.machine):
                break
        if done:
            (res, info), picked = self._closest_to_probe(done)
            extra = tuple(f"{m}; {info.analyzer} used instead" for m in skipped) + picked
            if opt.incore_defines and opt.incore_defines != defines:
                sizes = ", ".join(f"{k}={v}" for k, v in sorted(opt.incore_defines.items()))
                extra += (f"compiled in-core analysis done once, at {sizes}, for all points of the sweep",)
            return dataclasses.replace(res, notes=extra + res.notes), info
        named = [f"{flag} {value}" for flag, value in (("--asm-block", opt.asm_block),
                                                        ("--pointer-increment", opt.pointer_increment)) if value]
        if named:  # options that only mean something for a compiled block cannot be honoured
            raise OptionError(f"{', '.join(named)}: no compiled in-core analysis possible ({'; '.join(skipped)})")
        res = self._analytic_for(it_per_unit, defines)
        return dataclasses.replace(res, notes=res.notes + (f"compiled in-core analysis not possible "
                                                           f"({'; '.join(skipped)}); analytic model used",)), None

    @staticmethod
    def _closest_to_probe(done: list) -> tuple:
        """``((result, info), notes)``: of the analyzers' ``(InCoreResult, CompiledInCore)``, the one
        whose figures agree best with the probe's (fewest disagreeing classes, then the smaller summed
        relative difference: :func:`loopmodel.compiled.checked.score`; the first on a tie, llvm-mca, and
        where no check compared a row),
        with a note naming the pick and why; ``(done[0], ())`` for one analyzer."""
        if len(done) == 1:
            return done[0], ()
        checked = _compiled("checked")
        scores = [checked.score(info.check) for _, info in done]
        best = min(range(len(done)), key=lambda i: scores[i])

        def told(i):
            info, (bad, rel) = done[i][1], scores[i]
            rows = len(info.check.rows) if info.check else 0
            if not rows:
                return f"{info.analyzer} {info.analyzer_version} ({info.target}): no rows compared"
            return (f"{info.analyzer} {info.analyzer_version} ({info.target}): {bad} of {rows} figures off the probe "
                    f"by more than {checked.TOLERANCE:.0%}" + (f" (summed {rel:.0%})" if bad else ""))
        others = "; ".join(told(i) for i in range(len(done)) if i != best)
        if scores[best][0] == float("inf"):
            return done[best], (f"--incore auto: {done[best][1].analyzer} used, the first analyzer: no figure of "
                                f"either was compared with the probe's ({told(best)}; {others})",)
        return done[best], (f"--incore auto: {done[best][1].analyzer} used, its latencies and throughputs of the "
                            f"block's FP instructions agree best with the probe's ({told(best)}; {others})",)

    def _option_notes(self, res, compiled, it_per_unit, defines) -> tuple:
        """Notes on the in-core source and the in-core options given that do not change ``res``.

        The analytic model where ``--incore auto`` asked for a compiled analyzer: ``--scalar``
        chose it, or there is no C code. ``--reassociation``/``--no-reassociation`` on a compiled
        analysis (the compiler decided). On the analytic model: ``--scalar``, ``--reassociation``,
        ``--no-reassociation``, ``--compiler``/``--compiler-flags`` where its T_OL and T_nOL come
        out the same without them (:meth:`_same_analytic`), and ``--assume-aligned`` (only the
        compiled kernel's).
        """
        opt = self.options
        flag = {True: "--reassociation", False: "--no-reassociation", None: None}[opt.reassociate]
        if compiled is not None:
            return (f"{flag}: no effect here: {compiled.analyzer} times the code {compiled.compiler} built with "
                    f"'{' '.join(compiled.flags)}', reductions as those flags allow (reassociated with "
                    "-ffast-math, for gcc and clang)",) if flag else ()
        notes = []
        if self.requested_incore == "auto" and not opt.vectorize:
            notes.append("--scalar: the in-core part is the analytic model's without SIMD (llvm-mca and OSACA, "
                         "which time the compiled kernel's own SIMD, are not used)")
        elif self.requested_incore == "auto" and opt.kernel_text is None:
            notes.append("no C code to compile (a YAML kernel description, or no kernel_text given), so the in-core "
                         "part is the analytic model's (llvm-mca and OSACA need the C kernel)")
        same = functools.partial(self._same_analytic, res, it_per_unit, defines)
        if not opt.vectorize and same(vectorize=True):
            notes.append("--scalar: no effect here: the analytic model gives the same T_OL and T_nOL with SIMD")
        unset = self._flags_default  # without the option
        if flag and (same(reassociate=not opt.reassociate) or opt.reassociate == unset[0]):
            why = ("T_OL and T_nOL come out the same either way (no reduction, or one accumulator's chain bounds "
                   "it either way)" if opt.reassociate != unset[0]
                   else f"it is the default ({unset[1]})")
            notes.append(f"{flag}: no effect here: {why}")
        given = " and ".join(f for f, v in (("--compiler", opt.compiler), ("--compiler-flags", opt.compiler_flags))
                             if v)
        machine_default = self._machine_default
        width_same = self.vector_width.bytes == self._default_width or res.lanes == 1  # scalar either way
        if given and width_same and (flag or unset[0] == machine_default or same(reassociate=machine_default)):
            notes.append(f"{given}: no effect on the analytic in-core model here (it compiles nothing; the "
                         "compiler and flags decide only its SIMD width, of no effect here, and whether it takes "
                         "reductions as reassociated"
                         + (f", which {flag} sets)" if flag else ", and that comes out the same)"))
        if opt.assume_aligned is not None:
            notes.append(f"--assume-aligned {opt.assume_aligned}: no effect on the analytic in-core model (it "
                         "applies to the compiled kernel of llvm-mca and OSACA)")
        return tuple(notes)

    def _same_analytic(self, res, it_per_unit, defines, vectorize=None, reassociate=None) -> bool:
        """Whether the analytic model gives ``res``'s T_OL and T_nOL with ``vectorize`` or
        ``reassociate`` other than the options' (:meth:`_analytic_for`)."""
        other = self._analytic_for(it_per_unit, defines, vectorize, reassociate)
        return (other.T_OL, other.T_nOL) == (res.T_OL, res.T_nOL)

    @functools.cached_property
    def _flags_default(self) -> tuple:
        """``(reassociate, why)`` of the compiler and flags in use without ``--reassociation``."""
        opt = self.options
        return _flags_reassociation(self.machine, opt.compiler, opt.compiler_flags)

    @functools.cached_property
    def _machine_default(self) -> bool:
        """Whether the machine model's compiler and flags reassociate reductions."""
        return _flags_reassociation(self.machine, None, None)[0]

    def _strided(self, defines: dict) -> tuple:
        """:func:`~loopmodel.models.incore.strided_accesses` at ``defines``; computed once where no
        inner-loop stride depends on a size."""
        if self.fixed_strides is not None:
            return self.fixed_strides
        return tuple(_incore_model.strided_accesses(self.kernel, defines))

    @functools.cached_property
    def fixed_strides(self) -> tuple | None:
        """The strided accesses where they do not depend on the sizes, else None."""
        k = self.kernel
        if all(coefficient(a.offset, k.inner_loop.index).is_constant()
               for a in tuple(k.streamed_writes()) + tuple(k.streamed_reads())):
            return tuple(_incore_model.strided_accesses(k, None))
        return None

    def _alignment(self, defines: dict) -> tuple:
        """What the split vector accesses at ``defines`` depend on (the analytic model charges them,
        :func:`~loopmodel.models.split_access.split_accesses`): the sizes modulo
        :func:`~loopmodel.models.split_access.alignment_modulus`, else the sizes themselves."""
        m = self.alignment_modulus
        return tuple(sorted((k, v % m if m else v) for k, v in defines.items()))

    @functools.cached_property
    def alignment_modulus(self) -> int | None:
        """:func:`~loopmodel.models.split_access.alignment_modulus` of the kernel on the machine's cache line."""
        return alignment_modulus(self.kernel, int(self.machine.cacheline_size))

    @functools.cached_property
    def _reassociation(self) -> tuple:
        """``(reassociate, why)`` for the analytic in-core model: the option if given, else what
        the compiler and flags in use do (:func:`~loopmodel.compiled.compile.fp_reassociation`);
        decided once per analyzer (the options do not change between points)."""
        opt = self.options
        if opt.reassociate is not None:
            return opt.reassociate, ("--reassociation" if opt.reassociate else "--no-reassociation") + " given"
        return _flags_reassociation(self.machine, opt.compiler, opt.compiler_flags)


def compiler_machine(machine, compiler: str | None = None, flags: str | None = None) -> tuple:
    """``(machine, VectorWidth)``: ``machine`` with ``in_core.simd_width`` the width ``compiler``
    with ``flags`` (None: the machine model's, :func:`~loopmodel.compiled.compile.resolve_compiler`)
    vectorizes with (:func:`~loopmodel.machine.vector_width.compiler_vector_width`: the one rule), so
    that every in-core figure, SIMD lane count and split-access charge of an analysis uses it.
    The machine model unchanged where the width is its own, or where the flags cannot be read
    (the in-core analysis reports that error itself)."""
    hw = machine.in_core.simd_width
    try:
        s = resolve_compiler(machine, compiler, flags)
    except LoopmodelError:
        return machine, compiler_vector_width(machine.isa, hw, None, None)
    width = compiler_vector_width(machine.isa, hw, s.command, s.flags if s.flags_from != "default" else None)
    if width.bytes == hw:
        return machine, width
    return dataclasses.replace(machine, in_core=narrowed(machine.in_core, width.bytes)), width


#: operations whose units process a fixed number of bytes per cycle whatever the vector width: a
#: narrower instruction issues proportionally more often (Skylake-SP vdivpd xmm/ymm/zmm 4/8/16 cy
#: reciprocal throughput, Intel's optimization manual; the machine file gives the full-width figure)
FIXED_BYTES_PER_CYCLE = ("DIV", "SQRT")


def narrowed(in_core, width: float):
    """``in_core`` with SIMD width ``width`` bytes (less than its own): the instruction throughputs of
    :data:`FIXED_BYTES_PER_CYCLE` scaled by the width ratio, the others kept (one ADD, MUL or FMA
    instruction per port and cycle at any width, cross-architecture-machine-models.txt §3.4.1)."""
    ratio = in_core.simd_width / width
    tp = {op: v * ratio if op in FIXED_BYTES_PER_CYCLE else v for op, v in in_core.throughput.items()}
    return dataclasses.replace(in_core, simd_width=width, throughput=tp)


def width_note(width, hardware_width: float, lanes: int, operations: dict | None = None) -> list:
    """``[note]`` where an analytic in-core result with ``lanes`` SIMD lanes uses vectors narrower
    than the machine's registers (``width``: :class:`~loopmodel.machine.vector_width.VectorWidth`),
    naming the throughputs :func:`narrowed` scaled where ``operations`` (per iteration) has them."""
    if lanes <= 1 or width.bytes >= hardware_width:
        return []
    scaled = [op for op in FIXED_BYTES_PER_CYCLE if (operations or {}).get(op)]
    also = (f"; the {'/'.join(scaled)} throughput is per full-width instruction in the machine model, scaled by "
            f"{hardware_width / width.bytes:g} for the narrower ones (their units move the same bytes per cycle "
            "at any vector width)") if scaled else ""
    return [f"SIMD width {width.bytes} B, not the machine's {hardware_width:g} B registers: {width.reason}{also}"]


def _flags_reassociation(machine, compiler, flags) -> tuple:
    """``(reassociate, why)``: whether ``compiler`` with ``flags`` (None: the machine model's) splits
    reductions into partial sums (:func:`~loopmodel.compiled.compile.fp_reassociation`)."""
    s = resolve_compiler(machine, compiler, flags)
    assumed, why = fp_reassociation(s.command, s.flags)
    return assumed, f"{why}; compiler: {' '.join((s.command,) + s.flags)}, flags from {s.flags_from}"


def check_incore_options(opt: AnalyzerSettings) -> None:
    """Refuse in-core options that cannot be honoured together, in one line.

    * ``incore`` other than ``auto``, ``llvm-mca``, ``osaca``, ``analytic``, ``measured``;
    * ``measure_repeat`` below 1 (``--incore measured``);
    * ``vectorize=False`` (``--scalar``, the analytic model without SIMD) with an explicit
      compiled analyzer, whose SIMD is the compiler's (``--compiler-flags`` chooses it);
    * an explicit compiled analyzer without the kernel's C source (``kernel_text``);
    * ``asm_block`` or ``pointer_increment`` where only the analytic model is used
      (``incore='analytic'``, ``--scalar`` with ``auto``, no C source) and no ``RooflineASM``
      compiles the kernel (they name a part of the compiled kernel).

    Raises:
        OptionError: the first conflict found.
    """
    if opt.incore not in ("auto", "llvm-mca", "osaca", "analytic", "measured"):
        raise OptionError(f"--incore {opt.incore}: choose auto, llvm-mca, osaca, analytic or measured")
    if opt.incore == "measured" and opt.measure_repeat < 1:
        raise OptionError(f"--repeat must be >= 1, got {opt.measure_repeat}")
    compiled = opt.incore in ("llvm-mca", "osaca", "measured")
    if compiled and not opt.vectorize:
        raise OptionError(f"--scalar is the analytic in-core model without SIMD; --incore {opt.incore} times the "
                          "compiled kernel, whose SIMD the compiler chooses (for scalar code give --compiler-flags, "
                          "e.g. '-O3 -fno-tree-vectorize')")
    if compiled and opt.kernel_text is None:
        raise OptionError(f"--incore {opt.incore} compiles the kernel and needs its C code (kernel_text); a YAML "
                          "kernel description has none (use --incore analytic, or the C kernel)")
    named = [f"{f} {v}" for f, v in (("--asm-block", opt.asm_block), ("--pointer-increment", opt.pointer_increment))
             if v is not None]
    analytic_only = opt.incore == "analytic" or (opt.incore == "auto" and (not opt.vectorize or
                                                                           opt.kernel_text is None))
    if named and analytic_only and not ("RooflineASM" in opt.models and opt.kernel_text is not None):
        why = ("--incore analytic" if opt.incore == "analytic" else "--scalar" if not opt.vectorize
               else "no C code to compile")
        raise OptionError(f"{', '.join(named)}: no compiled in-core analysis with {why} (they name a part of "
                          "the compiled kernel)")


def _compiled(name: str):
    """The module ``name`` of :mod:`loopmodel.compiled` (``incore``, ``checked``, ``agreement``, ``available``),
    loaded when a compiled in-core analysis runs: an analysis with the analytic in-core model does
    not import the assembly parsers and analyzer back-ends (benchmarks/speed_check.py)."""
    return importlib.import_module(f"..compiled.{name}", __package__)


def _simulation():
    """:mod:`loopmodel.predictors.simulation`, loaded when a cache simulation runs (``--cache-predictor
    sim``, or layer conditions that do not apply): an analysis that does not simulate does not
    import the simulator (a C extension and its loop-nest types; benchmarks/speed_check.py)."""
    return importlib.import_module("..predictors.simulation", __package__)


def _measuring():
    """:mod:`.incore_measured`, loaded when ``--incore measured`` asks for it (the benchmark code
    is not imported by an ``analyze`` that does not measure)."""
    return importlib.import_module(f"{__package__}.incore_measured")
