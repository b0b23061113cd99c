"""``scaling``: predicted performance per core count (ECM with the contention or saturation
model, :mod:`loopmodel.models.scaling`).

:class:`MulticoreOptions` are the options ``scaling`` and ``energy`` share (core counts,
multicore model, p0, page placement, data location); :class:`ScalingOptions` adds the
comparison with a measurement. :func:`run` returns a :class:`ScalingRun`.
"""
from __future__ import annotations

from dataclasses import dataclass

from collections.abc import Mapping

from ..errors import DefineError
from ..fileio.defines import one_point
from ..models.prediction import DEFAULT_MULTICORE_MODEL, MULTICORE_MODELS
from ..models.scaling import fit_p0, scaling
from .analysis import AnalysisResult
from .analyze import AnalysisOptions, one_nest, prepare
from .inputs import check_p0, core_list, read_measured
from .options import option


@dataclass(frozen=True)
class MulticoreOptions(AnalysisOptions):
    """The analysis options and the multicore options of ``scaling`` and ``energy``."""

    cores: str | None = option(None, "core counts: 1:N (default 1:cores per socket), 1,2,4 or N", "--cores", "-c",
                               metavar="RANGE")
    model: str = option(DEFAULT_MULTICORE_MODEL, "multicore model (default contention, paper eq. 5, as analyze "
                                                 "--cores; saturation: min(n P1, P_sat))", "--model",
                        choices=(*MULTICORE_MODELS, "both"))
    p0: float | None = option(None, "contention parameter p0 (default: the machine model's)", "--p0", type=float)
    placement: str = option("first-touch", "memory pages in every ccNUMA domain used (default) or all in one domain",
                            "--placement", choices=("first-touch", "one-domain"))
    data_in: str | None = option(None, "memory level the data are in (default: the data location of each core "
                                       "count's analysis, as analyze --cores)", "--data-in", metavar="LEVEL")


@dataclass(frozen=True)
class ScalingOptions(MulticoreOptions):
    """``scaling``'s options: the multicore options and the measured points to compare with."""

    measured: str | None = option(None, "measured points ('loopmodel measure --json' output) to compare with "
                                        "(table, error, plot)", "--measured", metavar="JSON")
    fit_p0: bool = option(False, "fit p0 to the --measured points", "--fit-p0")


@dataclass(frozen=True)
class ScalingRun:
    """The result of ``scaling``.

    Attributes:
        curves: one :class:`~loopmodel.models.scaling.ScalingResult` per model (contention,
            saturation or both), row n from the analysis with n active cores.
        analysis: the single-core :class:`~loopmodel.workflows.analysis.AnalysisResult`.
        measured: cores -> measured it/s, or None.
        fit: ``(p0, rms relative error)`` of ``fit_p0``, or None.
    """

    curves: tuple
    analysis: AnalysisResult
    measured: dict | None = None
    fit: tuple | None = None


def check_level(ecm, level: str | None) -> None:
    """``--data-in``: ``level`` (None: not given) must be a level of the ECM result ``ecm``.

    Raises:
        DefineError: no such level (one line, the levels listed).
    """
    if level is not None and level not in ecm.T_ECM:
        raise DefineError(f"--data-in {level}: no such level (choose {', '.join(ecm.T_ECM)})")


def run(kernel, machine, options: ScalingOptions, measured: Mapping | None = None) -> ScalingRun:
    """Predicted performance per core count: row n of each curve comes from the analysis with n
    active cores, as ``analyze --cores n`` (:func:`~loopmodel.models.scaling.core_point`).

    Args:
        kernel: a kernel file (C or Kerncraft YAML) or a :class:`loopmodel.Kernel`.
        machine: a built-in name, a machine file, ``"host"``, or a :class:`loopmodel.Machine`.
        options: :class:`ScalingOptions` (one value per size).
        measured: measured points {cores: it/s}, checked; None reads ``options.measured`` (a
            ``measure``/``bench --json`` file) if given.

    Raises:
        LoopmodelError: bad sizes, cores, p0, level or measured file (one line).
    """
    analyzer, points = prepare(kernel, machine, options, ("ECM",), 1)
    analyzer = one_nest(analyzer, "scaling")
    point = one_point(points, "scaling")
    res = analyzer.run(point)
    res.ecm.require_known()
    m = analyzer.machine
    cores = core_list(options.cores, m.cores_per_socket * m.sockets)
    per_cores = {n: analyzer.run(point, cores=n).ecm for n in cores}
    check_level(res.ecm, options.data_in)
    if measured is None and options.measured:
        measured = read_measured(options.measured)
    measured = {int(c): float(v) for c, v in measured.items()} if measured else None
    it = res.traffic.iterations_per_unit
    p0, fit = options.p0, None
    if options.fit_p0:
        if not measured:
            raise DefineError("--fit-p0 needs --measured")
        ecms = measured_ecms(analyzer, point, measured, per_cores)
        fit = fit_p0(res.ecm, m, measured, it, options.placement, ecms)
        p0 = fit[0]
    models = ("contention", "saturation") if options.model == "both" else (options.model,)
    check_p0(p0)
    curves = tuple(scaling(res.ecm, m, cores, it, mdl, p0, options.placement, options.data_in, per_cores)
                   for mdl in models)
    return ScalingRun(curves, res, measured, fit)


def measured_ecms(analyzer, point: dict, measured: dict, per_cores: dict) -> dict:
    """Core count -> ECM result with that many active cores, for every measured count
    (``--fit-p0``); ``per_cores`` holds those already computed.

    Raises:
        DefineError: a measured core count the machine model does not have (one line).
    """
    m = analyzer.machine
    most = m.cores_per_socket * m.sockets
    bad = [c for c in measured if not 1 <= c <= most]
    if bad:
        raise DefineError(f"--measured: {bad[0]} cores, but the machine model has {most}")
    return {c: per_cores[c] if c in per_cores else analyzer.run(point, cores=c).ecm for c in measured}
