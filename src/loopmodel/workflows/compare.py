"""``compare``: one kernel at one set of sizes on several machine models, one row per model.

Every figure of a row is read from the workflow that owns it, none is computed here:

* ECM per data location, the data location and T_ECM there: the single-core analysis of
  ``analyze -p ECM -p Roofline`` (:func:`loopmodel.workflows.analyze.run`; its
  :class:`~loopmodel.models.ecm.ECMResult` ``T_ECM`` and the point's
  :class:`~loopmodel.models.prediction.Prediction`; kerncraft-tool-paper.txt §2.3,
  ecm-model-slides.txt "ECM notation");
* the saturation point n_s: the same Prediction (:mod:`loopmodel.models.saturation`,
  ecm-model-slides.txt "ECM model – saturation");
* the Roofline bottleneck: the same analysis' Roofline (kerncraft-tool-paper.txt §1.2.1);
* the socket's performance: the analysis with all cores of one socket active, its
  Prediction's n-core point (``analyze --cores N``, row N of ``scaling``,
  :func:`loopmodel.models.scaling.core_point`);
* energy per iteration: ``energy`` (:func:`loopmodel.workflows.energy.run`, ecm-model-slides.txt
  "A simple power model for multicore chips") at its energy-optimal operating point.

What a machine model cannot give (no measured bandwidths for the Roofline, no ``power:``
section, an unknown T_OL, a model that does not apply) is a footnote of its row
(:class:`Footnote`), never a failure of the command. A bad kernel, size or option and an
unknown machine name stop the command with one line (:class:`~loopmodel.errors.LoopmodelError`).
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from ..errors import DefineError, EmptyPointError, LoopmodelError, MachineError, ModelError, ToolError
from ..fileio.defines import one_point
from ..fileio.machine_files import builtin_names
from ..models.power import EnergyResult
from ..models.prediction import DEFAULT_MULTICORE_MODEL, MULTICORE_MODELS, Prediction
from . import energy
from .analysis import AnalysisResult
from .analyze import AnalysisOptions, AnalyzeOptions, one_nest
from .analyze import run as analyze_run
from .inputs import machine_model, machine_name
from .options import option

#: the ``-m`` word that names every bundled machine model
ALL = "all"
#: the prefix of the analysis' note on a Roofline it could not build beside ECM
#: (:meth:`loopmodel.workflows.analysis.Analyzer.run`)
ROOFLINE_SKIPPED = "Roofline skipped: "


@dataclass(frozen=True)
class CompareOptions(AnalysisOptions):
    """``compare``'s options: the shared analysis options and the multicore model of the
    socket's figure."""

    model: str = option(DEFAULT_MULTICORE_MODEL, "multicore model of the socket's performance (default contention, "
                                                 "paper eq. 5; saturation: min(n P1, P_sat) per ccNUMA domain)",
                        "--model", choices=MULTICORE_MODELS)


@dataclass(frozen=True)
class Footnote:
    """Why a cell of a row is empty.

    Attributes:
        column: the figure: ``analysis`` (the whole row), ``ECM``, ``Roofline``, ``socket`` or
            ``energy``.
        text: the one-line reason, as the model that could not give the figure says it.
    """

    column: str
    text: str


@dataclass(frozen=True)
class MachineRow:
    """One machine model's figures.

    Attributes:
        machine: the machine model's name.
        analysis: the single-core :class:`~loopmodel.workflows.analysis.AnalysisResult` (ECM per
            data location, the Prediction, the Roofline); None where the analysis failed.
        socket: the :class:`~loopmodel.models.prediction.Prediction` with every core of one
            socket active (its ``point``: it/s of all of them, what limits them); None where unknown.
        energy: the :class:`~loopmodel.models.power.EnergyResult` (J per iteration at each
            operating point, the energy optimum); None without a power model.
        footnotes: :class:`Footnote` per figure the model could not give.
    """

    machine: str
    analysis: AnalysisResult | None
    socket: Prediction | None
    energy: EnergyResult | None
    footnotes: tuple = ()


@dataclass(frozen=True)
class CompareRun:
    """The result of ``compare``.

    Attributes:
        kernel: the kernel as given (text).
        defines: size constant -> value (the ``-D`` values; each row's analysis holds them
            with the kernel's defaults).
        model: the multicore model of the socket figures.
        rows: one :class:`MachineRow` per machine model, in the order named.
    """

    kernel: str
    defines: dict
    model: str
    rows: tuple


def machine_names(machines) -> list:
    """``(machine, bundled)`` for the machine models of ``-m`` words in order: ``all`` expanded to
    every bundled model (:func:`~loopmodel.fileio.machine_files.builtin_names`; ``bundled`` True),
    repeats dropped.

    Raises:
        DefineError: no machine named (one line).
    """
    out: list = []
    for m in machines:
        every = isinstance(m, str) and m == ALL
        for name in (builtin_names() if every else (m,)):
            if not any(name is o or (isinstance(name, str) and name == o) for o, _ in out):
                out.append((name, every))
    if not out:
        raise DefineError("compare needs at least one machine model (-m NAME, repeatable; -m all)")
    return out


def run(kernel, machines, options: CompareOptions) -> CompareRun:
    """The kernel on every machine model of ``machines``, one :class:`MachineRow` each.

    Args:
        kernel: a kernel file (C or Kerncraft YAML) or a :class:`loopmodel.Kernel`.
        machines: built-in names (``all``: every bundled one), machine files, ``"host"`` or
            :class:`loopmodel.Machine` objects.
        options: :class:`CompareOptions` (one value per size).

    Raises:
        LoopmodelError: a machine named that cannot be read (checked before any analysis), a bad
            kernel, size or option (one line). What one machine model cannot give is a footnote
            of its row; so is a bundled model of ``all`` that cannot be read.
    """
    rows, broken = [], {}
    names = machine_names(machines)
    for m, bundled in names:
        try:
            machine_model(m, options.clock)  # an unknown name or a bad file: one line, before any work
        except MachineError as exc:
            if not bundled:
                raise
            broken[m] = exc
    for m, _ in names:
        bad = broken.get(m) if isinstance(m, str) else None
        rows.append(MachineRow(m, None, None, None, (Footnote("analysis", str(bad)),)) if bad is not None
                    else machine_row(kernel, m, options))
    first = next((r.analysis for r in rows if r.analysis is not None), None)
    defines = dict(first.defines) if first is not None else {}
    return CompareRun(str(kernel), defines, options.model, tuple(rows))


def machine_row(kernel, machine, options: CompareOptions) -> MachineRow:
    """The row of one machine model: the single-core analysis, the socket's prediction and the
    energy, each from its own workflow (module docstring).

    Raises:
        LoopmodelError: a bad kernel, size or option (the same on every machine). A model that
            does not apply (ModelError) or a tool that fails (ToolError) is the row's footnote.
    """
    name = machine_name(machine)
    opts = AnalyzeOptions(**_analysis_options(options), pmodel=("ECM", "Roofline"), multicore_model=options.model)
    prepared = analyze_run(kernel, machine, opts)
    analyzer = one_nest(prepared.analyzer, "compare")
    point = one_point(prepared.points, "compare")
    try:
        res = analyzer.run(point)
    except EmptyPointError:  # the sizes, not the machine
        raise
    except (ModelError, ToolError) as exc:
        return MachineRow(name, None, None, None, (Footnote("analysis", exc.message),))
    name = res.machine.name
    notes = list(analysis_footnotes(res))
    socket = None
    if res.ecm.unknown is None:
        try:
            socket = analyzer.run(point, cores=res.machine.cores_per_socket).prediction
        except (ModelError, ToolError) as exc:
            notes.append(Footnote("socket", exc.message))
    power, reason = _energy(kernel, machine, options, res)
    if reason:
        notes.append(Footnote("energy", reason))
    return MachineRow(name, res, socket, power, tuple(notes))


def analysis_footnotes(res: AnalysisResult) -> tuple:
    """The footnotes of a single-core analysis: T_OL unknown (ECM and all that needs it), the
    Roofline skipped or without a CPU roof."""
    out = []
    if res.ecm.unknown:
        out.append(Footnote("ECM", f"T_OL n/a: {res.ecm.unknown}"))
    if res.roofline is None:
        skipped = next((n[len(ROOFLINE_SKIPPED):] for n in res.notes if n.startswith(ROOFLINE_SKIPPED)), None)
        out.append(Footnote("Roofline", skipped or "no Roofline for this machine model"))
    elif res.roofline.unknown:
        out.append(Footnote("Roofline", f"CPU roof n/a: {res.roofline.unknown}"))
    return tuple(out)


def _energy(kernel, machine, options: CompareOptions, res: AnalysisResult) -> tuple:
    """``(EnergyResult or None, reason or None)``: ``energy`` on one chip at the clocks of the
    machine's power section (``--clock``: that clock), with the multicore model of the socket.
    A machine model without a power section is a reason, not an error (its ``energy`` would ask
    for ``--w0/--w1/--w2``, which ``compare`` does not take)."""
    if res.machine.power is None:
        return None, "no power: section in the machine model (loopmodel energy --w0/--w1/--w2 gives one)"
    if res.ecm.unknown:
        return None, "needs T_ECM (T_OL n/a)"
    try:
        out = energy.run(kernel, machine, energy.EnergyOptions(**_analysis_options(options), model=options.model))
    except LoopmodelError as exc:
        return None, exc.message
    return out.result, None


def _analysis_options(options: CompareOptions) -> dict:
    """The shared analysis options of ``options`` (:class:`~loopmodel.workflows.analyze.AnalysisOptions`'
    fields), which ``analyze`` and ``energy`` take as ``compare`` was given them."""
    return {f.name: getattr(options, f.name) for f in dataclasses.fields(AnalysisOptions)}
