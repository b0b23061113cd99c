"""The in-core time measured on the host (``--incore measured``).

The kernel is benchmarked (:func:`loopmodel.measure.kernel_bench.measure_kernel`: pinned, warm,
min-of-K) at sizes whose data set fits in half of L1 (:func:`l1_sizes`), and that time is the
in-core part of the ECM composition: with every datum in L1 the ECM prediction is the in-core
time, T_ECM^L1 = max(T_OL, T_nOL) (kerncraft-tool-paper.txt §2.3; its benchmark mode measures
kernels the same way). The measured time is split by the model's own load/store accounting:
T_nOL is the modelled T_nOL (the cycles of the L1 loads, and stores where the machine's stores
count there; ecm-model-slides.txt, basic rules) capped at the measured time, and T_OL the
measured time, so that the composition at L1 equals the measurement and the transfers of the
other levels add to T_nOL as the model says. For users who want ECM's transfer predictions on
top of a measured core time.
"""
from __future__ import annotations

import dataclasses
import math
import os
import tempfile

from ..errors import OptionError
from ..measure.clock import measure_clock_hz
from ..measure.kernel_bench import measure_kernel
from ..models.incore import InCoreResult

#: share of the L1 the measured data set may fill (the rest for the stack, code, the harness)
L1_SHARE = 0.5
#: smallest value a scaled size constant is given
MIN_SIZE = 8


def data_set_bytes(kernel, defines: dict) -> float:
    """Bytes of all the kernel's arrays at ``defines``.

    Raises:
        KeyError: a dimension needs a size not in ``defines``.
    """
    total = 0.0
    for arr in kernel.arrays.values():
        n = 1.0
        for d in arr.dims:
            n *= float(d.evaluate(defines))
        total += n * arr.element_size
    return total


def _inner_constant(kernel) -> str | None:
    """The size constant of the inner loop's trip count (kept while the data fit), or None."""
    names = sorted(kernel.loops[-1].stop.symbols)
    return names[0] if names else None


def l1_sizes(kernel, defines: dict, l1_bytes: float) -> dict:
    """``defines`` with the size constants scaled down until the data set fits in
    :data:`L1_SHARE` of ``l1_bytes``: the largest constant other than the inner loop's is halved
    first (the inner trip count sets the in-core time of short loops, so it is kept as long as
    anything else can shrink), none below :data:`MIN_SIZE`.

    Returns:
        the sizes (constants of ``defines`` that are not sizes of arrays are unchanged).

    Raises:
        OptionError: the data set cannot be made to fit (one line naming the sizes).
    """
    sizes = dict(defines)
    budget = L1_SHARE * l1_bytes
    inner = _inner_constant(kernel)
    used = {s for arr in kernel.arrays.values() for d in arr.dims for s in d.symbols}
    for _ in range(200):
        if data_set_bytes(kernel, sizes) <= budget:
            return sizes
        cands = [k for k in sizes if k in used and sizes[k] > MIN_SIZE]
        others = [k for k in cands if k != inner] or cands
        if not others:
            break
        k = max(others, key=lambda c: sizes[c])
        sizes[k] = max(MIN_SIZE, sizes[k] // 2)
    raise OptionError(f"--incore measured: the data set cannot be made to fit in {budget / 1024:g} KiB of L1 "
                      f"({', '.join(f'{k}={v}' for k, v in sorted(sizes.items()))})")


def measured_incore(kernel, kernel_text: str, machine, defines: dict, iterations_per_unit: float,
                    modelled: InCoreResult, compiler: str | None, flags: str | None,
                    machine_file: str | None = None, cpu: int = 0) -> InCoreResult:
    """The in-core time of ``kernel`` measured on this host, split as the module docstring says.

    Args:
        kernel, kernel_text: the kernel IR and its C text.
        machine: a model of this host measured by ``machine probe`` (its compiler and flags
            build the benchmark unless ``compiler``/``flags`` are given).
        defines: the requested sizes (scaled to L1 by :func:`l1_sizes`).
        iterations_per_unit: inner-loop iterations per CL of work.
        modelled: the model's in-core result (its T_nOL splits the measured time).

    Returns:
        :class:`~loopmodel.models.incore.InCoreResult` (source ``"measured"``, cy/CL) with notes
        giving the sizes, min/median/max and the spread.

    Raises:
        OptionError: the machine model was not measured on a host, or the data set cannot fit in
        L1. ToolError, DefineError, KernelError: as :func:`~loopmodel.measure.kernel_bench.measure_kernel`.
    """
    if not isinstance(machine.probe, dict) or not machine.probe:
        raise OptionError(f"--incore measured benchmarks the kernel on this host: it needs a model of this host "
                          f"('-m host' or a file from 'loopmodel machine probe'), not '{machine.name}'")
    l1 = machine.memory_hierarchy[0].size or 32768
    sizes = l1_sizes(kernel, defines, l1)
    with tempfile.TemporaryDirectory(prefix="loopmodel-incore-measured-") as d:
        path = os.path.join(d, "kernel.c")
        with open(path, "w") as f:
            f.write(kernel_text)
        m = measure_kernel(path, sizes, compiler or "gcc", flags, machine=None if flags else machine, cpu=cpu,
                           machine_file=machine_file)
    clock = measure_clock_hz(compiler or "gcc")
    t_min, t_med, t_max = m.cy_per_cl(clock, iterations_per_unit)
    t_nol = min(modelled.T_nOL, t_min)
    spread = t_max / t_min - 1 if t_min > 0 else math.nan
    note = (f"in-core time measured on this host: {t_min:.3g} cy/CL (min of {len(m.seconds_per_call)} runs; median "
            f"{t_med:.3g}, spread {spread:.0%}) at {', '.join(f'{k}={v}' for k, v in sorted(sizes.items()))} (data "
            f"set {data_set_bytes(kernel, sizes) / 1024:.3g} KiB in L1), {clock / 1e9:.2f} GHz; T_OL = the measured "
            f"time, T_nOL = the {modelled.source} model's {modelled.T_nOL:.3g} cy/CL"
            + (" capped at it" if modelled.T_nOL > t_min else ""))
    comps = {"measured": t_min, "measured median": t_med, f"{modelled.source} T_OL": modelled.T_OL or 0.0}
    return dataclasses.replace(modelled, source="measured", T_OL=t_min, T_nOL=t_nol, components=comps,
                               dependency=0.0, notes=modelled.notes + (note,), origin={
                                   "T_OL": "the kernel benchmarked with its data in L1",
                                   "T_nOL": f"the {modelled.source} model's loads and stores"})
