"""``validate``: the ECM prediction of a kernel next to its benchmark, per size; with
``--corpus``, of every case of the validation corpus (:mod:`loopmodel.workflows.corpus`).

For each set of sizes: the data location the layer conditions (or the cache simulation)
choose, T_ECM for it (kerncraft-tool-paper.txt §2.3, cross-architecture-machine-models.txt
eq. 4), the measurement of benchmark mode (:mod:`loopmodel.measure.bench`, min-of-K) in cy/CL
at the clock measured around it, and the relative error predicted / measured - 1; then the
median and largest |error| per data location (:mod:`loopmodel.measure.validation`).
The corpus run gives the same comparison per case in cy/it (T_ECM in cy/CL divided by the
iterations per CL of work) and the distribution of |error| per data location and per regime
(:func:`loopmodel.models.accuracy.summarize`).
"""
from __future__ import annotations

import dataclasses

from dataclasses import dataclass

from ..errors import DefineError, ModelError, OptionError
from ..fileio.c_kernel import load_c_kernel
from ..fileio.host_models import machine_notes
from ..fileio.machine_files import load_machine
from ..measure import bench as measure_bench
from ..measure.validation import ValidationRow, summary, validation_notes
from .analysis import Analyzer, AnalyzerSettings
from .bench import c_kernel_points
from .executed import as_compiled, followed_note
from .incore_measured import l1_time
from .inputs import kernel_reference, size_defines
from .options import function_option, include_option, option
from .same_window import measured_around

#: runs per case of ``--corpus --quick`` at most (min-of-K over fewer runs)
QUICK_REPEAT = 5


@dataclass(frozen=True)
class ValidateOptions:
    """``validate``'s options: the sizes and how the kernel is run."""

    define: tuple = option((), "size constant (value or start:stop[:step])", "-D", "--define", metavar="NAME=VALUE")
    function: str | None = function_option()
    include: tuple = include_option()
    repeat: int = option(10, "runs per size (default 10; min-of-K)", "--repeat", "-r", type=int)
    cpu: int = option(0, "CPU to pin the benchmark to (default 0)", "--cpu", type=int)
    no_cache: bool = option(False, "measure again instead of reading the per-user cache", "--no-cache")
    corpus: bool = option(False, "validate on the shipped corpus (examples and generated kernels, each placed in "
                                 "every memory level) instead of one kernel", "--corpus")
    quick: bool = option(False, f"with --corpus: a dozen kernels, at most {QUICK_REPEAT} runs per case", "--quick")
    seed: int = option(0, "with --corpus: seed of the kernel generator (default 0)", "--seed", type=int)


@dataclass(frozen=True)
class ValidateRun:
    """The result of ``validate``: one :class:`~loopmodel.measure.validation.ValidationRow` per
    size, the machine model, and the notes of the table and the document."""

    rows: tuple
    machine: object
    notes: tuple = ()

    @property
    def summary(self) -> dict:
        """Per data location: points, median and largest |relative error|
        (:func:`loopmodel.measure.validation.summary`)."""
        return summary(self.rows)


def data_level(res) -> str:
    """Where the data of the analysis result ``res`` come from (its prediction's data location,
    :func:`~loopmodel.models.location.data_location`)."""
    return res.location


def ecm_at_data_level(res, where: str = "") -> tuple:
    """``(data location, T_ECM there in cy/CL)`` of the analysis result ``res``.

    Raises:
        ModelError: no ECM prediction there (T_OL unknown); the message names ``where``.
    """
    level = data_level(res)
    predicted = res.prediction.single_core_cy_per_cl
    if predicted is None:
        raise ModelError(f"no ECM prediction{where}: {res.ecm.unknown or 'T_OL unknown'}")
    return level, predicted


def ecm_parts(res, level: str) -> tuple:
    """T_OL, T_nOL and the transfers for data in ``level``: ``(name, cy/CL, overlapping)``."""
    over = set(res.machine.overlap)
    out = [("T_OL", res.ecm.T_OL or 0.0, True), ("T_nOL", res.ecm.T_nOL, "T_nOL" in over)]
    out += [(f"T_{c.name}", c.cycles, c.name in over) for c in res.ecm.by_location.get(level, ())]
    return tuple(out)


def kernel_analyzer(path: str, machine, machine_file: str | None = None, use_cache: bool = True,
                    sweeps: str = "repeated") -> tuple:
    """``(kernel, Analyzer)`` for comparing a C kernel's ECM prediction with its measurement:
    the options of ``loopmodel analyze`` (``--incore auto``) for ECM alone; ``sweeps``
    ``"single"`` for a kernel run once from memory (cold caches).

    Raises:
        LoopmodelError: the kernel file cannot be read or parsed (one line).
    """
    parsed = load_c_kernel(path)
    kernel = parsed.kernel
    opts = AnalyzerSettings(models=("ECM",), incore="auto", kernel_text=parsed.text, machine_file=machine_file,
                            use_cache=use_cache, sweeps=sweeps, notes=parsed.notes)
    return kernel, Analyzer(kernel, machine, opts)


def measure_rows(path: str, machine, points, repeat: int = 10, cpu: int | None = 0, use_cache: bool = True,
                 machine_file: str | None = None) -> list:
    """:class:`~loopmodel.measure.validation.ValidationRow` per set of sizes in ``points``
    (``machine``: the machine model), each with the modelled in-core time (T_ECM with the data
    in L1) beside the measured one (the kernel benchmarked at sizes that put its data in L1,
    :func:`.incore_measured.l1_time`; the row's own measurement where its data are in L1), so
    that an error shows whether it comes from the core or from the transfers.

    Raises:
        LoopmodelError: a kernel the model or the benchmark cannot take (one line).
        ModelError: no ECM prediction (T_OL unknown).
    """
    _, analyzer = kernel_analyzer(path, machine, machine_file, use_cache)
    rows = []
    for pt in points:
        executed = as_compiled(analyzer, machine, dict(pt))  # the nest the measured program runs
        res = executed.run(pt)
        level, predicted = ecm_at_data_level(res, f" at {pt}")
        bench, window, window_note = measured_around(res, level, lambda: measure_bench.run_bench(
            path, pt, machine, repeat, 0.01, cpu, use_cache, machine_file=machine_file))
        # cy/CL in the unit of work of the nest analysed (the interchanged one where the compiler swaps the loops)
        bench = dataclasses.replace(bench, iterations_per_cl=res.traffic.iterations_per_unit)
        if level == "L1":
            core, core_defines, note = bench.figures()["cy_per_CL"][0], dict(pt), ""
        else:
            meas, note = l1_time(executed.kernel, executed.options.kernel_text, res.machine, dict(pt),
                                 res.traffic.iterations_per_unit, machine_file, repeat, cpu, use_cache)
            core, core_defines = (meas.cy_per_cl[0], meas.defines) if meas is not None else (None, None)
        rows.append(ValidationRow(dict(pt), level, predicted, res.ecm.notation(), bench, ecm_parts(res, level),
                                  res.ecm.T_ECM.get("L1", predicted), core, core_defines, note or "", window,
                                  window_note, followed_note(res)))
    return rows


def run(kernel: str | None, machine: str, options: ValidateOptions) -> ValidateRun:
    """Predict and measure the C kernel file ``kernel`` at each size of ``options.define`` on
    this host, whose model is ``machine`` (a name, a file or ``"host"``). The corpus
    (``options.corpus``) is :func:`loopmodel.workflows.corpus.run`'s.

    Raises:
        LoopmodelError: one-line user errors (kernel, sizes, ``--repeat`` < 1, machine, compiler,
            run; a kernel with ``--corpus``, or neither; ``--quick``/``--seed`` without
            ``--corpus``); ModelError: no ECM prediction.
    """
    check_choice(kernel, options)
    if options.corpus:
        raise OptionError("validate --corpus: the corpus is run by loopmodel.workflows.corpus.run")
    if options.repeat < 1:
        raise DefineError(f"--repeat must be >= 1, got {options.repeat}")
    kernel = kernel_reference(kernel, options)
    points = c_kernel_points(kernel, size_defines(options), "validate")
    model = load_machine(machine)
    rows = measure_rows(kernel, model, points, options.repeat, options.cpu, not options.no_cache, machine)
    return ValidateRun(tuple(rows), model, tuple(validation_notes(rows, machine_notes(machine, model))))


def check_choice(kernel: str | None, options: ValidateOptions) -> None:
    """A kernel or ``--corpus``, not both nor neither; the corpus options only with ``--corpus``.

    Raises:
        OptionError: the combination (one line).
    """
    if kernel and options.corpus:
        raise OptionError("validate: give a kernel file or --corpus, not both")
    if not kernel and not options.corpus:
        raise OptionError("validate: give a kernel file or --corpus")
    if options.corpus and options.define:
        raise OptionError("validate --corpus: -D is not used (the corpus places each kernel itself)")
    if not options.corpus and (options.quick or options.seed):
        raise OptionError("validate: --quick and --seed go with --corpus")
