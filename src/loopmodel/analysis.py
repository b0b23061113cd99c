"""One analysis: kernel + machine + sizes -> layer conditions, traffic, ECM, Roofline.

:class:`Analyzer` holds what does not depend on the sizes (the parsed kernel,
the symbolic layer-condition analysis, the machine); :meth:`Analyzer.run`
evaluates one set of ``-D`` values, so a sweep over thousands of sizes reuses
the symbolic work.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .errors import DefineError, ModelError
from .models.ecm import ECMResult, ecm_model
from .models.incore import InCoreResult, analytic_incore
from .models.roofline import RooflineResult, roofline_model
from .predictors.layer_conditions import LayerConditionAnalysis
from .predictors.traffic import TrafficPrediction

MODELS = ("LC", "ECM", "Roofline")


@dataclass(frozen=True)
class Options:
    """Analysis options.

    Attributes:
        models: subset of :data:`MODELS`.
        cores: active cores (shared caches divided; multicore prediction).
        cache_factor: effective cache size fraction (1.0; 0.5 = "C/2" rule).
        vectorize: use SIMD in the analytic in-core model.
        reassociate: allow partial sums for reductions.
        memory_bandwidth: B/s overriding the measured saturated memory bandwidth.
        solve_for: size constant for the layer-condition transition points.
    """

    models: tuple = MODELS
    cores: int = 1
    cache_factor: float = 1.0
    vectorize: bool = True
    reassociate: bool = True
    memory_bandwidth: float | None = None
    solve_for: str | None = None


@dataclass(frozen=True)
class AnalysisResult:
    """Everything computed for one set of sizes (rendered by text, JSON and plots)."""

    kernel: object
    machine: object
    defines: dict
    options: Options
    lc_levels: tuple
    traffic: TrafficPrediction
    incore: InCoreResult
    ecm: ECMResult | None
    roofline: RooflineResult | None
    lc_variable: str | None
    notes: tuple = field(default=())


class Analyzer:
    """Prepared analysis of one kernel on one machine.

    Raises:
        ModelError: the layer-condition predictor does not apply.
        DefineError: ``--lc-variable`` names no constant of the kernel.
    """

    def __init__(self, kernel, machine, options: Options = Options()):
        self.kernel = kernel
        self.machine = machine
        self.options = options
        self.lc = LayerConditionAnalysis(kernel)
        if options.solve_for and options.solve_for not in kernel.constants:
            raise DefineError(f"--lc-variable {options.solve_for}: the kernel has no constant of that name "
                              f"(constants: {', '.join(sorted(kernel.constants)) or 'none'})")
        if options.cores < 1:
            raise DefineError("--cores must be at least 1")
        self._incore = None

    def run(self, defines: dict) -> AnalysisResult:
        """Evaluate all models for ``defines`` (constant -> int)."""
        missing = self.kernel.free_constants(defines)
        if missing:
            raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size> "
                              f"(kernel {self.kernel.source})")
        opt = self.options
        traffic, levels = self.lc.predict(self.machine, defines, opt.cores, opt.cache_factor, opt.solve_for)
        if self._incore is None:
            self._incore = analytic_incore(self.kernel, self.machine, traffic.iterations_per_unit,
                                           opt.vectorize, opt.reassociate)
        incore = self._incore
        ecm = ecm_model(traffic, incore, self.machine, opt.memory_bandwidth) if "ECM" in opt.models else None
        roof = None
        notes = list(traffic.notes) + list(incore.notes)
        if "Roofline" in opt.models:
            try:
                roof = roofline_model(self.kernel, traffic, incore, self.machine, opt.cores)
            except ModelError as exc:
                if opt.models != ("Roofline",):
                    notes.append(f"Roofline skipped: {exc.message}")
                else:
                    raise
        return AnalysisResult(self.kernel, self.machine, dict(defines), opt, tuple(levels), traffic,
                              incore, ecm, roof, opt.solve_for or self.lc.variable, tuple(notes))
