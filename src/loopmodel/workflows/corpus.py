"""``validate --corpus``: the validation corpus (:mod:`loopmodel.measure.corpus`) placed on a
machine model (for each kernel and each level of the memory hierarchy, the sizes at which the
data come from that level), predicted and measured case by case.

The data location is the one ``validate`` uses (:func:`loopmodel.workflows.validate.data_level`:
the level beyond the farthest link with traffic, from the layer conditions or, where they do
not apply, the cache simulation; kerncraft-tool-paper.txt §2.4-2.5) at repeated sweeps. The
placement searches the main size of the kernel (its ``scaled`` size constants together) on a
geometric grid (ratio 2**(1/4)): it starts where the whole data set lies in the geometric
middle between the level's capacity and the capacity of the level above (L1: between the
smallest data set and the L1 capacity), so that the data sit well inside the level, and walks
along the grid until the data location is the level. The capacities are the machine model's
``memory_hierarchy[].size`` (for a probed host: the effective capacities the probe measured).
Memory: the first size whose data set is at least :data:`MEM_FACTOR` times the last cache and
at least the probe's memory benchmark (:data:`loopmodel.measure.probe.MEMORY_MIN_B`: on a
guest the data of a few times its last cache still hit the physical one), at most
:data:`MEM_LIMIT_B` and a quarter of the available memory. The in-core model plays no
part: the placement uses the analytic one (no compiler) and only the traffic.

Each case is then analysed as ``validate`` analyses a kernel file (``--incore auto``) and
measured with benchmark mode (min-of-K); the error is predicted / measured (min) - 1 in cy/it,
summarized per data location and per regime (:func:`loopmodel.models.accuracy.summarize`).
"""
from __future__ import annotations

import math
import os
import platform
import socket
import tempfile
import time
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone

from ..errors import DefineError, LoopmodelError, ModelError
from ..fileio.c_kernel import parse_kernel
from ..fileio.host_models import host_cpu_model, machine_notes
from ..fileio.machine_files import load_machine
from ..measure import bench as measure_bench
from ..measure.corpus import FAMILIES, CorpusKernel, corpus_kernels
from ..measure.probe import MEMORY_MIN_B
from ..measure.stream import available_memory
from ..models.accuracy import APART, AccuracySummary, error_stats, summarize
from .analysis import Analyzer, AnalyzerSettings
from .executed import as_compiled, followed_note
from .same_window import measured_around
from .validate import QUICK_REPEAT, ValidateOptions, check_choice, data_level, ecm_at_data_level, kernel_analyzer

#: how the corpus cases are measured (the first note of ``validate --corpus``)
CORPUS_NOTE = ("measured with loopmodel bench (1 thread pinned, data warm, min-of-K), cy/it at the clock measured "
               "around each case; predicted cy/it = T_ECM (cy/CL) / iterations per CL of work; error = predicted / "
               "measured min - 1")

#: grid ratio of the main size
GRID_RATIO = 2 ** 0.25
#: memory cases: the data set is at least this many times the last cache's capacity
MEM_FACTOR = 4
#: memory cases: the largest data set, B
MEM_LIMIT_B = 2 ** 30
#: grid steps the search walks at most from its start
MAX_STEPS = 24
#: innermost iterations of one kernel call at most (a matrix-matrix product with its data in
#: memory would run for minutes per call)
MAX_ITERATIONS = 2 ** 28


@dataclass(frozen=True)
class CorpusCase:
    """One kernel at sizes that put its data in ``level``.

    Attributes:
        kernel: :class:`~loopmodel.measure.corpus.CorpusKernel`.
        level: the data location (``L1`` .. ``MEM``).
        defines: size constant -> value.
        data_B: the kernel's whole data set at these sizes, B.
    """

    kernel: CorpusKernel
    level: str
    defines: dict
    data_B: int = 0


def data_bytes(kernel, defines: dict) -> int:
    """Bytes of all arrays of the kernel IR ``kernel`` at ``defines``."""
    return int(sum(a.size_elements.evaluate(defines) * a.element_size for a in kernel.arrays.values()))


def memory_limit_B() -> int:
    """The largest memory case: :data:`MEM_LIMIT_B`, at most a quarter of the available memory
    (:func:`loopmodel.measure.stream.available_memory`), B."""
    avail = available_memory()
    return int(min(MEM_LIMIT_B, avail // 4)) if avail else MEM_LIMIT_B


class _Placer:
    """The search for one kernel on one machine (data locations memoised per size)."""

    def __init__(self, ck: CorpusKernel, machine, limit_B: int):
        self.ck = ck
        self.kernel, _ = parse_kernel(ck.source, f"{ck.name}.c")
        self.analyzer = Analyzer(self.kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic",
                                                                        use_cache=False))
        self.levels = [lv.level for lv in machine.memory_hierarchy]
        self.caps = [lv.size for lv in machine.memory_hierarchy]
        self.grid = []
        size = float(ck.min_size)
        while True:
            n = int(round(size))
            if not self.grid or n > self.grid[-1]:
                if data_bytes(self.kernel, ck.defines(n)) > limit_B:
                    break
                self.grid.append(n)
            size *= GRID_RATIO
        self.limit_B = limit_B
        self.memo = {}

    def data(self, k: int) -> int:
        return data_bytes(self.kernel, self.ck.defines(self.grid[k]))

    def where(self, k: int) -> int | None:
        """Index of the data location at grid point ``k`` (None: the model cannot run it)."""
        if k not in self.memo:
            try:
                self.memo[k] = self.levels.index(data_level(self.analyzer.run(self.ck.defines(self.grid[k]))))
            except LoopmodelError:
                self.memo[k] = None
        return self.memo[k]

    def start(self, li: int) -> int | None:
        """The grid point whose data set is nearest the middle of level ``li`` (None: none fits)."""
        if li == len(self.levels) - 1:
            want = max(MEM_FACTOR * (self.caps[-2] or 0), MEMORY_MIN_B)
            return next((k for k in range(len(self.grid)) if self.data(k) >= want), None)
        lo = self.caps[li - 1] if li else self.data(0)
        hi = self.caps[li]
        if not hi or lo >= hi:
            return None
        target = math.log(math.sqrt(lo * hi))
        return min(range(len(self.grid)), key=lambda k: abs(math.log(self.data(k)) - target))

    def place(self, li: int) -> tuple:
        """``(grid point, "")`` for level ``li`` or ``(None, why)``."""
        k = self.start(li) if self.grid else None
        name = self.levels[li]
        if k is None:
            return None, f"{self.ck.name}: not placed in {name}: no size between {self.ck.min_size} and the "\
                         f"{self.limit_B / 2**20:.0f} MiB limit puts its data set there"
        step = None
        for _ in range(MAX_STEPS):
            got = self.where(k)
            if got == li:
                return k, ""
            want = 1 if got is None or got < li else -1
            if step is not None and want != step or not 0 <= k + want < len(self.grid):
                break
            step, k = want, k + want
        return None, f"{self.ck.name}: not placed in {name}: the data location passes from " \
                     f"{self._name(self.where(k))} to the next level without {name} between"

    def _name(self, li) -> str:
        return "nothing" if li is None else self.levels[li]


def place_kernel(ck: CorpusKernel, machine, limit_B: int | None = None) -> tuple:
    """``(cases, notes)`` of one corpus kernel on ``machine``: one :class:`CorpusCase` per level
    it can be placed in, a note for each level it cannot.

    Raises:
        LoopmodelError: the kernel does not parse or the model does not take it (one line).
    """
    placer = _Placer(ck, machine, memory_limit_B() if limit_B is None else limit_B)
    cases, notes = [], []
    for li, name in enumerate(placer.levels):
        if ck.max_levels and li >= ck.max_levels:
            notes.append(f"{ck.name}: not placed in {name}: it needs the cache simulation (the layer conditions "
                         "do not apply), too slow at such sizes")
            continue
        k, why = placer.place(li)
        if k is None:
            notes.append(why)
            continue
        defines = ck.defines(placer.grid[k])
        try:
            iterations = placer.kernel.total_iterations(defines)
        except ValueError as exc:  # a count that needs more enumeration than the budget
            notes.append(f"{ck.name}: not placed in {name}: {exc}")
            continue
        if iterations > MAX_ITERATIONS:
            notes.append(f"{ck.name}: not placed in {name}: one call would run {iterations:.2e} iterations "
                         f"(at most {MAX_ITERATIONS:.2e})")
            continue
        cases.append(CorpusCase(ck, name, defines, placer.data(k)))
    return cases, notes


def corpus_cases(machine, seed: int = 0, quick: bool = False, limit_B: int | None = None) -> tuple:
    """``(cases, notes)``: the corpus (:func:`loopmodel.measure.corpus.corpus_kernels`) placed
    in every level of ``machine`` (a :class:`~loopmodel.machine.model.MachineModel`), kernel by
    kernel, level by level; a note per case that cannot be placed (and per kernel the model
    does not take). ``limit_B``: the largest data set (default :func:`memory_limit_B`), B."""
    limit_B = memory_limit_B() if limit_B is None else limit_B
    cases, notes = [], []
    for ck in corpus_kernels(seed, quick):
        try:
            got, why = place_kernel(ck, machine, limit_B)
        except LoopmodelError as exc:
            notes.append(f"{ck.name}: left out: {exc}")
            continue
        cases += got
        notes += why
    return tuple(cases), tuple(notes)


@dataclass(frozen=True)
class CorpusResult:
    """One measured case of the corpus.

    Attributes:
        case: :class:`~loopmodel.workflows.corpus.CorpusCase` (kernel, sizes, and the data
            location of the nest analysed: that of the nest the compiler runs where it
            interchanges the loops).
        regimes: regime tags of the analysis, as ``analyze`` attaches them
            (:attr:`~loopmodel.workflows.confidence.Confidence.tags`).
        predicted_cy_per_it: T_ECM for the case's level / iterations per CL, cy/it.
        ecm: the ECM notation (cy/CL).
        bench: :class:`~loopmodel.measure.bench.BenchResult`.
        window_cy_per_it: the prediction with the memory term at the bandwidth measured right
            before and after the kernel's runs (:mod:`loopmodel.workflows.same_window`), cy/it;
            None where the data are not in memory, the memory term is not a benchmark, or the
            kernel's figures came from the cache.
        window: that :class:`~loopmodel.workflows.same_window.SameWindow` (None as above).
        nest_note: the analysis' note where it analysed the interchanged nest gcc runs ("" else).
    """

    case: object
    regimes: tuple
    predicted_cy_per_it: float
    ecm: str
    bench: object
    window_cy_per_it: float | None = None
    window: object = None
    nest_note: str = ""

    @property
    def measured(self) -> tuple:
        """Measured cy/it (min, median, max over the runs)."""
        return self.bench.figures()["cy_per_it"]

    @property
    def error(self) -> float:
        """predicted / measured (min) - 1."""
        return self.predicted_cy_per_it / self.measured[0] - 1

    @property
    def window_error(self) -> float | None:
        """same-window prediction / measured (min) - 1; None without one."""
        return None if self.window_cy_per_it is None else self.window_cy_per_it / self.measured[0] - 1


@dataclass(frozen=True)
class CorpusRun:
    """The result of ``validate --corpus``.

    Attributes:
        cases: :class:`CorpusResult` per measured case, in corpus order.
        skipped: ``(name, level, reason)`` per case placed but not measured or predicted.
        summary: :class:`~loopmodel.machine.probe_section.AccuracySummary` over the cases' regime tags.
        by_family: family (:data:`loopmodel.measure.corpus.FAMILIES`) -> |error| statistics.
        notes: how it was measured, on which host, what was left out.
        seconds: wall time of the run, s.
        machine: the machine model.
        same_window: ``(stored, window)`` :class:`~loopmodel.machine.probe_section.ErrorStats` of
            |error| over the cases with a same-window prediction, from the stored model and from
            the bandwidth of the same minutes (None: no such case).
    """

    cases: tuple
    skipped: tuple
    summary: AccuracySummary
    by_family: dict = field(default_factory=dict)
    notes: tuple = ()
    seconds: float = 0.0
    machine: object = None
    same_window: tuple | None = None


def measure_case(case, directory: str, machine, repeat: int, cpu: int | None, use_cache: bool,
                 machine_file: str | None, fresh: bool = False) -> CorpusResult:
    """Predict and measure one :class:`~loopmodel.workflows.corpus.CorpusCase` (its source
    written to ``directory``) as ``validate`` does a kernel file: the nest the compiler runs
    (:func:`loopmodel.workflows.executed.as_compiled`), the reference bandwidth measured around
    a memory case (:func:`loopmodel.workflows.same_window.measured_around`); ``fresh``: measure
    even where the per-user cache holds this benchmark's result (the analysis may still come
    from it).

    Where the analysis follows an interchange, the case counts in the data location of the
    interchanged nest (the placement analysed the nest as written).

    Raises:
        LoopmodelError: the model, compiler or run fails (one line); ModelError: no T_ECM, or
            the analysis of the nest as written puts the data elsewhere than the placement did.
    """
    path = os.path.join(directory, f"{case.kernel.name}.c")
    if not os.path.exists(path):
        with open(path, "w", encoding="utf-8") as fh:
            fh.write(case.kernel.source)
    _, analyzer = kernel_analyzer(path, machine, machine_file, use_cache)
    executed = as_compiled(analyzer, machine, dict(case.defines))
    res = executed.run(case.defines)
    level, predicted = ecm_at_data_level(res)
    if executed is analyzer and level != case.level:
        raise ModelError(f"the analysis puts the data in {level}, not {case.level}")
    bench, window, _ = measured_around(res, level, lambda: measure_bench.run_bench(
        path, case.defines, machine, repeat, 0.01, cpu, use_cache and not fresh, machine_file=machine_file))
    per_it = res.traffic.iterations_per_unit
    return CorpusResult(replace(case, level=level), tuple(res.confidence.tags), predicted / per_it,
                        res.ecm.notation(), bench, None if window is None else window.predicted_cy_per_cl / per_it,
                        window, followed_note(res))


def run_corpus(machine, machine_name: str, quick: bool = False, seed: int = 0, repeat: int = 10,
               cpu: int | None = 0, use_cache: bool = True, progress=None, fresh: bool = False) -> CorpusRun:
    """Place the corpus on ``machine`` (:func:`loopmodel.workflows.corpus.corpus_cases`), predict
    and measure every case (:func:`measure_case`; ``quick``: at most :data:`QUICK_REPEAT` runs
    each; ``fresh``: no benchmark result taken from the per-user cache), and summarize |error|
    per data location and per regime.

    A case that fails (compiler, model, no ECM prediction) is skipped with its reason.
    ``progress(i, n, case, outcome)``, if given, is called after each case (``outcome``: the
    :class:`CorpusResult` or the reason it was skipped).

    Raises:
        DefineError: ``repeat`` < 1.
    """
    if repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {repeat}")
    started = time.monotonic()
    repeat = min(repeat, QUICK_REPEAT) if quick else repeat
    cases, placement_notes = corpus_cases(machine, seed, quick)
    done, skipped = [], []
    machine_file = str(machine_name)
    with tempfile.TemporaryDirectory(prefix="loopmodel-corpus-") as tmp:
        for i, case in enumerate(cases, 1):
            try:
                outcome = measure_case(case, tmp, machine, repeat, cpu, use_cache, machine_file, fresh)
                done.append(outcome)
            except LoopmodelError as exc:
                outcome = str(exc).replace(tmp + os.sep, "")
                skipped.append((case.kernel.name, case.level, outcome))
            if progress:
                progress(i, len(cases), case, outcome)
    provenance = {"date": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "cases": len(done),
                  "skipped": len(skipped), "seed": seed, "quick": quick, "repeat": repeat,
                  "host": socket.gethostname(), "cpu_model": host_cpu_model() or platform.machine()}
    summary_ = summarize(((r.case.level, r.regimes, r.error) for r in done), provenance)
    families = summarize((r.case.level, r.case.kernel.families, r.error) for r in done).by_regime
    by_family = {f: families[f] for f in FAMILIES if f in families}
    notes = corpus_notes(done, skipped, placement_notes, machine_notes(machine_name, machine), provenance)
    return CorpusRun(tuple(done), tuple(skipped), summary_, by_family, notes, time.monotonic() - started, machine,
                     same_window_stats(done))


def same_window_stats(done) -> tuple | None:
    """``(stored, window)`` |error| statistics over the cases of ``done`` (:class:`CorpusResult`)
    with a same-window prediction: the model's error and the error left once the host's drift in
    memory bandwidth is taken out (:mod:`loopmodel.workflows.same_window`); None without such a case."""
    judged = [r for r in done if r.window_error is not None]
    if not judged:
        return None
    return error_stats([abs(r.error) for r in judged]), error_stats([abs(r.window_error) for r in judged])


def corpus_notes(done, skipped, placement_notes, host_notes, provenance) -> tuple:
    """The notes of ``validate --corpus``: how it was measured (:data:`CORPUS_NOTE`), on which
    host, the corpus, what was skipped and why, the benchmarks' notes (each once)."""
    notes = [CORPUS_NOTE, *host_notes,
             f"host {provenance['host']} ({provenance['cpu_model']}); corpus seed {provenance['seed']}"
             f"{' (quick)' if provenance['quick'] else ''}, {provenance['repeat']} run(s) per case; "
             f"{len(done)} case(s) measured, {len(skipped)} skipped, {len(placement_notes)} not placed"]
    apart = sum(1 for r in done if set(r.regimes) & set(APART))
    if apart:
        notes.append(f"{apart} case(s) that the compiler restructured ({', '.join(APART)}: the prediction is for "
                     "the loop as written) count only in their own regime's row, not per data location, overall "
                     "or in their other regimes")
    notes += [f"skipped {name} in {level}: {why}" for name, level, why in skipped]
    notes += list(placement_notes)
    unstable = [r for r in done if r.bench.stability is not None and r.bench.stability.verdict == "disagree"]
    if unstable:
        notes.append(f"{len(unstable)} case(s) whose blocks of runs disagree beyond the tolerance (the host was "
                     "busy or its clock moved; their minimum is kept): "
                     + ", ".join(f"{r.case.kernel.name} in {r.case.level}" for r in unstable))
    notes += [n for r in done for n in r.bench.notes if not n.startswith("blocks disagree")]
    return tuple(dict.fromkeys(notes))


def run(machine: str, options: ValidateOptions, progress=None) -> CorpusRun:
    """``validate --corpus`` on this host, whose model is ``machine`` (a name, a file or
    ``"host"``): :func:`run_corpus` with the options' runs, CPU and cache use (``progress``:
    as there).

    Raises:
        LoopmodelError: one-line user errors (``--repeat`` < 1, ``-D`` given, machine).
    """
    check_choice(None, options)
    return run_corpus(load_machine(machine), machine, options.quick, options.seed, options.repeat, options.cpu,
                      not options.no_cache, progress)
