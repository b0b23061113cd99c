"""The in-core time measured on the host (``--incore measured``).

The kernel is benchmarked on this host (benchmark mode, :func:`loopmodel.measure.bench.run_bench`:
pinned, warm, min-of-K, through the per-user cache) at sizes whose data set fits in half of L1
(:func:`l1_sizes`), and that time is the in-core part of the ECM composition. With every datum
in L1 there are no transfers and the ECM prediction is the in-core time,
T_ECM^L1 = max(T_OL, T_nOL) (kerncraft-tool-paper.txt §2.3; its benchmark mode runs kernels the
same way, there to validate the model, here to replace its in-core part).

The split (:func:`split_core_time`): T_OL = the measured time T_core and T_nOL = the model's own
T_nOL (the L1 cycles of the loads, and of the stores where the machine's stores count there;
ecm-model-slides.txt "basic rules": T_nOL is the time the core spends on the loads that does not
overlap with transfers), capped at T_core. Why: a benchmark with the data in L1 gives one time,
not its parts; T_nOL is what the transfers of the other levels add to (ECM eq. 4,
:func:`loopmodel.models.ecm.transfer_time`), and the model's load/store accounting is the best
figure for it, while T_OL, which always overlaps (:func:`loopmodel.models.ecm.combine`), carries
the measured time. So T_ECM^L1 = max(T_core, min(T_nOL, T_core)) = T_core whatever the machine's
``overlap`` says, and the data transfers of the deeper levels come on top of a measured core as
the model says. A machine whose model counts a transfer with the data in L1 (a write-through
L1: the stores go on to L2, Power9) has T_nOL capped at T_core less that transfer where it does
not overlap (:func:`fit_to_l1`), so that the composition in L1 is still T_core; where the
transfer alone exceeds T_core a note says the prediction in L1 is the transfer's.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import os
import socket
import tempfile

from ..errors import LoopmodelError, ModelError, OptionError
from ..ir.point import check_point
from ..measure import bench as measure_bench
from ..models.ecm import ecm_model
from ..models.incore import InCoreMeasurement, InCoreResult

#: share of the L1 the measured data set may fill (the rest for the stack, code, the harness)
L1_SHARE = 0.5
#: the inner size keeps its remainder modulo this many elements where it must shrink (the
#: remainder loop of a SIMD-unrolled loop then runs as many iterations as at the requested size)
INNER_MODULUS = 64
#: L1 capacity assumed where the machine model gives none, B
DEFAULT_L1_B = 32768


@dataclass(frozen=True)
class L1Sizes:
    """Sizes at which a kernel's data set fits in L1 (:func:`l1_sizes`).

    Attributes:
        defines: size constant -> value (the constants no array depends on unchanged).
        data_set_B: the kernel's arrays at ``defines``, B; budget_B: the most allowed, B.
        inner: the size constants of the inner loop's bounds that arrays depend on.
        inner_kept: whether those kept their requested values.
    """

    defines: dict
    data_set_B: float
    budget_B: float
    inner: tuple
    inner_kept: bool

    def note(self, requested: dict) -> str:
        """One sentence: the sizes, the data set and what happened to the inner loop."""
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(self.defines.items()))
        if not self.inner:
            inner = "the inner loop's trip count does not depend on the sizes"
        elif self.inner_kept:
            inner = f"the inner loop keeps its size ({', '.join(f'{k}={requested[k]}' for k in self.inner)})"
        else:
            shrunk = ", ".join(f"{k}={requested[k]}" for k in self.inner if self.defines[k] != requested[k])
            inner = f"the inner loop is shorter than requested ({shrunk}; its data do not fit in L1 otherwise)"
        return (f"measured at {sizes} (data set {self.data_set_B / 1024:.3g} KiB, at most {self.budget_B / 1024:.3g} "
                f"KiB = {L1_SHARE:g} of L1); {inner}")


def data_set_bytes(kernel, defines: dict) -> float:
    """Bytes of all the kernel's arrays at ``defines`` (declared sizes).

    Raises:
        KeyError: a dimension needs a size not in ``defines``.
    """
    return float(sum(a.size_elements.evaluate(defines) * a.element_size for a in kernel.arrays.values()))


def _runs(kernel, defines: dict) -> bool:
    """Whether ``kernel`` runs at ``defines`` (:func:`loopmodel.ir.point.check_point`)."""
    try:
        check_point(kernel, defines)
    except (ModelError, KeyError):
        return False
    return True


def _floor(kernel, sizes: dict, name: str) -> int:
    """The smallest value of ``name`` (others as in ``sizes``) at which the kernel still runs
    (its loops iterate, its arrays exist); bisection, the kernel taken to run at every value
    above one at which it runs."""
    lo, hi = 1, sizes[name]  # the kernel runs at hi
    while lo < hi:
        mid = (lo + hi) // 2
        if _runs(kernel, {**sizes, name: mid}):
            hi = mid
        else:
            lo = mid + 1
    return hi


def _largest_fitting(kernel, sizes: dict, name: str, floor: int, budget: float, requested: int) -> int:
    """The largest value of ``name`` from ``floor`` to ``sizes[name]`` whose data set fits in
    ``budget``, lowered to keep ``requested``'s remainder modulo :data:`INNER_MODULUS` where that
    stays above ``floor``; ``floor`` where nothing fits."""
    lo, hi = floor, sizes[name]
    if data_set_bytes(kernel, {**sizes, name: lo}) > budget:
        return floor
    while lo < hi:  # the data set grows with every size
        mid = (lo + hi + 1) // 2
        if data_set_bytes(kernel, {**sizes, name: mid}) <= budget:
            lo = mid
        else:
            hi = mid - 1
    aligned = lo - (lo - requested) % INNER_MODULUS
    return aligned if aligned >= floor else lo


def l1_sizes(kernel, defines: dict, l1_bytes: float) -> L1Sizes:
    """``defines`` scaled down until the data set fits in :data:`L1_SHARE` of ``l1_bytes`` (B).

    The inner loop's trip count sets the in-core time of short loops (entry and remainder
    cost, :mod:`loopmodel.models.short_loops`), so it is kept where it can be: first the other
    size constants the arrays depend on are halved, the largest first, none below the smallest
    value at which the kernel still runs (a stencil keeps its 2-3 rows); only where even that
    does not fit is the inner loop's constant lowered, to the largest value that fits (keeping
    its remainder modulo :data:`INNER_MODULUS` where it can).

    Args:
        kernel: the kernel IR; defines: every size constant -> int (the requested sizes, at
            which the kernel runs); l1_bytes: the L1 capacity, B.

    Returns:
        :class:`L1Sizes`.

    Raises:
        OptionError: even the smallest sizes at which the kernel runs do not fit (one line).
    """
    sizes = dict(defines)
    budget = L1_SHARE * l1_bytes
    used = {s for arr in kernel.arrays.values() for d in arr.dims for s in d.symbols if s in sizes}
    inner = tuple(sorted((kernel.loops[-1].start.symbols | kernel.loops[-1].stop.symbols) & used))
    floors = {k: _floor(kernel, sizes, k) for k in used} if _runs(kernel, sizes) else {k: 1 for k in used}
    while data_set_bytes(kernel, sizes) > budget:
        others = [k for k in used if k not in inner and sizes[k] > floors[k]]
        if not others:
            break
        k = max(others, key=lambda c: (sizes[c], c))
        sizes[k] = max(floors[k], sizes[k] // 2)
    for k in sorted(inner, key=lambda c: -sizes[c]):
        if data_set_bytes(kernel, sizes) > budget:
            sizes[k] = _largest_fitting(kernel, sizes, k, floors[k], budget, defines[k])
    got = data_set_bytes(kernel, sizes)
    if got > budget:
        raise OptionError(f"--incore measured: the data set of {kernel.source or 'the kernel'} does not fit in "
                          f"{budget / 1024:g} KiB ({L1_SHARE:g} of L1) at any size it runs at (smallest: "
                          f"{', '.join(f'{k}={v}' for k, v in sorted(sizes.items()))}, {got / 1024:.3g} KiB)")
    return L1Sizes(sizes, got, budget, inner, all(sizes[k] == defines[k] for k in inner))


def split_core_time(t_core: float, model_t_nol: float, l1_transfers: float = 0.0,
                    t_nol_overlaps: bool = False) -> tuple:
    """``(T_OL, T_nOL)`` in cy/CL of a measured in-core time ``t_core`` (cy/CL): T_OL = t_core,
    T_nOL = the model's ``model_t_nol`` capped so that the ECM time with the data in L1 is
    t_core (the rule and why: the module docstring). The cap is t_core less ``l1_transfers``,
    the non-overlapping transfers the model counts with the data in L1 (a write-through L1's
    stores, cy/CL; 0 on most machines), unless T_nOL overlaps (``t_nol_overlaps``, the machine's
    ``overlap``), then t_core; never below 0."""
    cap = t_core if t_nol_overlaps else max(0.0, t_core - l1_transfers)
    return t_core, min(model_t_nol, cap)


def fit_to_l1(incore: InCoreResult, traffic, machine, memory_bandwidth: float | None = None) -> InCoreResult:
    """``incore`` (a measured in-core result) with T_nOL capped (:func:`split_core_time`) for the
    data transfers the model counts with the data in L1 (:func:`loopmodel.models.ecm.ecm_model`:
    on a machine whose L1 writes through, the stores' L1-L2 transfer), so that the ECM time with
    the data in L1 is the measured time; unchanged where there are none. Where those transfers
    alone exceed the measured time a note says so (the composition is then theirs).

    Args:
        incore: source ``"measured"``; traffic: the point's
            :class:`~loopmodel.predictors.traffic.TrafficPrediction`; memory_bandwidth: B/s or None
            (as for :func:`~loopmodel.models.ecm.ecm_model`).
    """
    first = machine.memory_hierarchy[0].level
    ecm = ecm_model(traffic, incore, machine, memory_bandwidth)
    parts = ecm.by_location.get(first, ())
    if not parts or incore.measurement is None:
        return incore
    overlap = set(machine.overlap) | set(machine.overlap_unless_memory)
    t_core = incore.T_OL
    nonov = sum(c.cycles for c in parts if c.name not in overlap)
    _, t_nol = split_core_time(t_core, incore.measurement.model_t_nol, nonov, "T_nOL" in overlap)
    names = ", ".join(f"T_{c.name} = {c.cycles:.3g}" for c in parts)
    note = (f"in-core measured: the model counts transfers with the data in {first} ({names} cy/CL); T_nOL = "
            f"{t_nol:.3g} cy/CL so that the ECM time in {first} is the measured time")
    fitted = ecm_model(traffic, dataclasses.replace(incore, T_nOL=t_nol), machine, memory_bandwidth)
    if fitted.T_ECM[first] > t_core * (1 + 1e-9):
        note = (f"in-core measured: the model's transfers with the data in {first} ({names} cy/CL) alone exceed the "
                f"measured {t_core:.3g} cy/CL: the ECM time in {first} is {fitted.T_ECM[first]:.3g} cy/CL, not the "
                "measured time")
    return dataclasses.replace(incore, T_nOL=t_nol, notes=incore.notes + (note,))


def host_model_note(machine) -> str | None:
    """Why ``machine`` cannot stand for this host, else None: it must be a probed model
    (``machine probe``, ``-m host``; bundled models have no ``probe`` section). A note where
    it was probed on a host of another name (the measurement here is taken as its)."""
    probe = machine.probe
    if probe is None:
        raise OptionError(f"--incore measured benchmarks the kernel on this host: it needs a model of this host "
                          f"('-m host' or a file from 'loopmodel machine probe'), not '{machine.name}'")
    probed_on, here = probe.hostname, socket.gethostname()
    if probed_on and probed_on != here:
        return (f"--incore measured: the machine model was probed on host '{probed_on}', the kernel measured "
                f"here on '{here}'")
    return None


def measure_l1(kernel, kernel_text: str, machine, defines: dict, iterations_per_unit: float,
               compiler: str | None = None, flags: str | None = None, machine_file: str | None = None,
               repeat: int = 10, cpu: int | None = 0, use_cache: bool = True) -> tuple:
    """The kernel benchmarked on this host with its data in L1: at :func:`l1_sizes` of
    ``defines`` (the L1 capacity of ``machine``), through
    :func:`loopmodel.measure.bench.run_bench` (pinned to ``cpu``, min-of-K over ``repeat``
    runs, the per-user cache unless ``use_cache`` is False; built with ``compiler``/``flags``,
    else the machine model's).

    Returns:
        ``(InCoreMeasurement, L1Sizes)``; cy/CL = cy/it at the measured clock times
        ``iterations_per_unit`` (the analysis' iterations per CL of work at ``defines``).

    Raises:
        OptionError: the data set cannot fit in L1. ToolError, DefineError, KernelError: as
        :func:`~loopmodel.measure.bench.run_bench`.
    """
    l1 = machine.memory_hierarchy[0].size or DEFAULT_L1_B
    fit = l1_sizes(kernel, defines, l1)
    with tempfile.TemporaryDirectory(prefix="loopmodel-incore-measured-") as d:
        path = os.path.join(d, "kernel.c")
        with open(path, "w") as f:
            f.write(kernel_text)
        bench = measure_bench.run_bench(path, fit.defines, machine, repeat, cpu=cpu, use_cache=use_cache,
                                        machine_file=machine_file, compiler=compiler or "gcc", flags=flags)
    m = bench.measurement
    figures = m.cy_per_cl(bench.clock_hz, iterations_per_unit)
    inner = kernel.loops[-1]
    trips = inner.iterations(fit.defines) if (inner.start.symbols | inner.stop.symbols) <= set(fit.defines) else None
    meas = InCoreMeasurement(dict(fit.defines), fit.data_set_B, float(l1), tuple(figures), len(m.seconds_per_call),
                             figures[2] / figures[0] - 1 if figures[0] > 0 else 0.0, bench.clock_hz, trips,
                             m.compiler, tuple(m.flags), bench.cached)
    return meas, fit


def measured_incore(kernel, kernel_text: str, machine, defines: dict, iterations_per_unit: float,
                    modelled: InCoreResult, compiler: str | None = None, flags: str | None = None,
                    machine_file: str | None = None, repeat: int = 10, cpu: int | None = 0,
                    use_cache: bool = True) -> InCoreResult:
    """The in-core time of ``kernel`` measured on this host (:func:`measure_l1`), split as the
    module docstring says (:func:`split_core_time`).

    Args:
        kernel, kernel_text: the kernel IR and its C text.
        machine: a model of this host measured by ``machine probe`` (:func:`host_model_note`).
        defines: the requested sizes (scaled to L1 by :func:`l1_sizes`).
        iterations_per_unit: inner-loop iterations per CL of work at ``defines``.
        modelled: the model's in-core result at ``defines`` (its T_nOL splits the measured time).
        compiler, flags, machine_file, repeat, cpu, use_cache: as :func:`measure_l1`.

    Returns:
        :class:`~loopmodel.models.incore.InCoreResult`: source ``"measured"``, T_OL and T_nOL in
        cy/CL, its :class:`~loopmodel.models.incore.InCoreMeasurement`, and notes (the figures,
        the split, the sizes).

    Raises:
        OptionError: the machine model was not measured on a host, or the data set cannot fit in
        L1. ToolError, DefineError, KernelError: as :func:`~loopmodel.measure.bench.run_bench`.
    """
    host_note = host_model_note(machine)
    meas, fit = measure_l1(kernel, kernel_text, machine, defines, iterations_per_unit, compiler, flags,
                           machine_file, repeat, cpu, use_cache)
    meas = dataclasses.replace(meas, model_t_nol=modelled.T_nOL)
    t_ol, t_nol = split_core_time(meas.cy_per_cl[0], modelled.T_nOL)  # transfers in L1: fit_to_l1
    capped = " (capped at T_OL)" if modelled.T_nOL > t_ol else ""
    return dataclasses.replace(
        modelled, source="measured", T_OL=t_ol, T_nOL=t_nol, components=_components(meas.cy_per_cl, modelled),
        dependency=0.0, measurement=meas, notes=modelled.notes + _notes(meas, fit, defines, modelled, host_note),
        origin={"T_OL": "the kernel benchmarked on this host with its data in L1",
                "T_nOL": f"the {modelled.source} model's loads and stores{capped}"})


def _components(figures: tuple, modelled: InCoreResult) -> dict:
    """The measured min/median/max and the model's T_OL, T_nOL (cy/CL), by name."""
    out = {"measured min": figures[0], "measured median": figures[1], "measured max": figures[2]}
    for name, value in (("T_OL", modelled.T_OL), ("T_nOL", modelled.T_nOL)):
        if value is not None:
            out[f"{modelled.source} {name}"] = value
    return out


def _notes(meas: InCoreMeasurement, fit: L1Sizes, requested: dict, modelled: InCoreResult,
           host_note: str | None) -> tuple:
    """The notes of a measured in-core result: the figures and the split, the sizes."""
    lo, med, hi = meas.cy_per_cl
    capped = " capped at it" if modelled.T_nOL > lo else ""
    own = (f"in-core time measured on this host: {lo:.3g} cy/CL (min of {meas.runs} runs; median {med:.3g}, "
           f"max {hi:.3g}, spread {meas.spread:.0%}) at {meas.clock_hz / 1e9:.2f} GHz"
           f"{' (from the per-user cache)' if meas.cached else ''}; T_OL = the measured time, T_nOL = the "
           f"{modelled.source} model's {modelled.T_nOL:.3g} cy/CL{capped}",
           "in-core " + fit.note(requested))
    return own + ((host_note,) if host_note else ())


def l1_time(kernel, kernel_text: str, machine, defines: dict, iterations_per_unit: float,
            machine_file: str | None, repeat: int, cpu: int | None, use_cache: bool) -> tuple:
    """``(InCoreMeasurement or None, note or None)``: the kernel benchmarked with its data in L1
    (:func:`measure_l1`, the machine model's compiler and flags) for ``validate``'s side-by-side
    of the modelled and the measured in-core time; None with a one-line reason where it cannot
    be measured. Any machine model: the measurement is of this host, as ``validate``'s own."""
    try:
        meas, _ = measure_l1(kernel, kernel_text, machine, defines, iterations_per_unit, None, None, machine_file,
                             repeat, cpu, use_cache)
    except LoopmodelError as exc:
        sizes = ", ".join(f"{k}={v}" for k, v in sorted(defines.items()))
        return None, f"in-core time with the data in L1 not measured at {sizes}: {exc.message}"
    return meas, None
