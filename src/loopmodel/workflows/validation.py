"""Model against measurement: the ECM prediction of a kernel next to its benchmark, per size.

For each set of sizes: the data location the layer conditions (or the cache simulation)
choose, T_ECM for it (kerncraft-tool-paper.txt §2.3, cross-architecture-machine-models.txt
eq. 4), the measurement of benchmark mode (:mod:`loopmodel.measure.bench`, min-of-K) in cy/CL
at the clock measured around it, and the relative error predicted / measured - 1; then the
median and largest |error| per data location.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass


@dataclass(frozen=True)
class ValidationRow:
    """One size.

    Attributes:
        defines: the sizes. level: where the data come from (``L1`` .. ``MEM``).
        predicted: T_ECM for that location, cy/CL. ecm: the ECM notation.
        bench: :class:`~loopmodel.measure.bench.BenchResult`.
        parts: ``(name, cy/CL, overlapping)`` of T_OL, T_nOL and each transfer for that
            location (what the plot stacks).
    """
    defines: dict
    level: str
    predicted: float
    ecm: str
    bench: object
    parts: tuple = ()

    @property
    def measured(self) -> tuple:
        """Measured cy/CL (min, median, max)."""
        return self.bench.figures()["cy_per_CL"]

    @property
    def error(self) -> float:
        """predicted / measured (min) - 1."""
        return self.predicted / self.measured[0] - 1

    def to_dict(self) -> dict:
        lo, med, hi = self.measured
        return {"defines": dict(self.defines), "data_location": self.level, "predicted_cy_per_cl": self.predicted,
                "measured_min_cy_per_cl": lo, "measured_median_cy_per_cl": med, "measured_max_cy_per_cl": hi,
                "relative_error": self.error, "ecm": self.ecm, "clock_Hz": self.bench.clock_hz}


def data_level(res) -> str:
    """Where the data come from: the level beyond the farthest link that carries traffic."""
    names = [lv.level for lv in res.machine.memory_hierarchy]
    busy = [i for i, lt in enumerate(res.traffic.levels) if lt.bytes > 0]
    return names[busy[-1] + 1] if busy else names[0]


def _parts(res, level: str) -> tuple:
    """T_OL, T_nOL and the transfers for data in ``level``: ``(name, cy/CL, overlapping)``."""
    over = set(res.machine.overlap)
    out = [("T_OL", res.ecm.T_OL or 0.0, True), ("T_nOL", res.ecm.T_nOL, "T_nOL" in over)]
    out += [(f"T_{c.name}", c.cycles, c.name in over) for c in res.ecm.by_location.get(level, ())]
    return tuple(out)


def summary(rows) -> dict:
    """Level -> ``{"points", "median_abs_error", "max_abs_error"}`` (fractions)."""
    out = {}
    for level in dict.fromkeys(r.level for r in rows):
        errs = [abs(r.error) for r in rows if r.level == level]
        out[level] = {"points": len(errs), "median_abs_error": statistics.median(errs), "max_abs_error": max(errs)}
    return out


def kernel_analyzer(path: str, machine, machine_file: str | None = None, use_cache: bool = True,
                    sweeps: str = "repeated") -> tuple:
    """``(kernel, Analyzer)`` for comparing a C kernel's ECM prediction with its measurement:
    the options of ``loopmodel analyze`` (``--incore auto``) for ECM alone; ``sweeps``
    ``"single"`` for a kernel run once from memory (cold caches).

    Raises:
        LoopmodelError: the kernel file cannot be read or parsed (one line).
    """
    from .analysis import Analyzer, Options
    from ..fileio.c_kernel import parse_kernel_file, read_kernel_text

    kernel, _ = parse_kernel_file(path)
    opts = Options(models=("ECM",), incore="auto", kernel_text=read_kernel_text(path), machine_file=machine_file,
                   use_cache=use_cache, sweeps=sweeps)
    return kernel, Analyzer(kernel, machine, opts)


def validate(path: str, machine, points, repeat: int = 10, cpu: int | None = 0, use_cache: bool = True,
             machine_file: str | None = None) -> list:
    """:class:`ValidationRow` per set of sizes in ``points``.

    Raises:
        LoopmodelError: a kernel the model or the benchmark cannot take (one line).
        ModelError: no ECM prediction (T_OL unknown).
    """
    from ..errors import ModelError
    from ..measure.bench import run_bench

    _, analyzer = kernel_analyzer(path, machine, machine_file, use_cache)
    rows = []
    for pt in points:
        res = analyzer.run(pt)
        level = data_level(res)
        predicted = res.ecm.T_ECM.get(level)
        if predicted is None:
            raise ModelError(f"no ECM prediction at {pt}: {res.ecm.unknown or 'T_OL unknown'}")
        bench = run_bench(path, pt, machine, repeat, 0.01, cpu, use_cache, machine_file=machine_file)
        rows.append(ValidationRow(dict(pt), level, predicted, res.ecm.notation(), bench, _parts(res, level)))
    return rows
