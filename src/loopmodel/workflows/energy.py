"""``energy``: energy to solution and performance per operating point (cores, clock).

Runs the ECM analysis once (:class:`loopmodel.workflows.analysis.Analyzer`), evaluates the ECM
model and the multicore model at every clock (:func:`loopmodel.models.power.ecm_performance`)
and the chip power model of the machine's ``power:`` section or the ``--w0/--w1/--w2`` options
(:func:`loopmodel.models.power.energy_grid`, ecm-model-slides.txt "A simple power model for
multicore chips"). Units: clocks in Hz, power in W, performance in it/s.
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
import os
import re

from ..errors import DefineError
from ..fileio.defines import one_point
from ..fileio.machine_writer import power_mapping
from ..machine.fields import CLOCK, power_section
from ..machine.model import MachineModel
from ..machine.power import PowerSection
from ..models.power import EnergyResult, ecm_performance, energy_grid
from .analysis import AnalysisResult
from .analyze import one_nest, prepare
from .inputs import check_p0, core_list, machine_name
from .options import option
from .scaling import MulticoreOptions, check_level

#: the most operating points one command evaluates
MAX_POINTS = 20000
#: the most clocks of one ``--clock`` range
MAX_CLOCKS = 1000
#: clock units of ``--clock`` -> Hz
CLOCK_PREFIX = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}


@dataclass(frozen=True)
class EnergyOptions(MulticoreOptions):
    """``energy``'s options: the analysis options (``--clock`` a list of clocks here), the
    multicore options (one chip by default) and the chip power model's coefficients."""

    clock: str | None = option(
        None, "core clocks: '1.2:2.7:0.1 GHz' (start:stop:step, stop included), '1.2,2.0,2.7 GHz' or '2.2 GHz' "
              "(default: the power section's clock range and step, else the machine model's clock); core-cycle work "
              "scales with the clock, memory bandwidth does not", "--clock", metavar="CLOCKS")
    cores: str | None = option(None, "core counts: 1:N (default 1:cores per socket, one chip), 1,2,4 or N", "--cores",
                               "-c", metavar="RANGE")
    model: str = option("contention", "multicore model (default contention, paper eq. 5; saturation: min(n P1, "
                                      "P_sat))", "--model", choices=("contention", "saturation"))
    w0: str | None = option(None, "static chip power W0, e.g. '23.6 W' (default: the machine's power section)",
                            "--w0", metavar="POWER")
    w1: str | None = option(None, "dynamic power per core, linear term W1, e.g. '1.9 W/GHz'", "--w1",
                            metavar="W/GHz")
    w2: str | None = option(None, "dynamic power per core, quadratic term W2, e.g. '1.2 W/GHz^2'", "--w2",
                            metavar="W/GHz^2")


@dataclass(frozen=True)
class EnergyRun:
    """The result of ``energy``.

    Attributes:
        result: the :class:`~loopmodel.models.power.EnergyResult` (every operating point, both
            optima, the saving, the notes).
        analysis: the single-core :class:`~loopmodel.workflows.analysis.AnalysisResult` at the
            machine model's clock.
        machine: the :class:`~loopmodel.machine.model.MachineModel`.
        power: the :class:`~loopmodel.machine.power.PowerSection` in use.
        kernel: the kernel as given (text).
        data_in: the memory level the data are in (``--data-in``, else the single-core data location).
        title: ``'KERNEL on MACHINE, sizes N=..., data in MEM'`` (table and plot).
    """

    result: EnergyResult
    analysis: AnalysisResult
    machine: MachineModel
    power: PowerSection
    kernel: str
    data_in: str
    title: str


def clock_list(text: str) -> list:
    """``'1.2:2.7:0.1 GHz'`` (stop included), ``'1.2,2.0 GHz'`` or ``'2.2 GHz'`` -> clocks in Hz,
    ascending.

    Raises:
        DefineError: no unit, bad numbers, step <= 0, start > stop, a clock outside
            :data:`~loopmodel.machine.fields.CLOCK`, more than :data:`MAX_CLOCKS` (one line).
    """
    m = re.fullmatch(r"\s*(.+?)\s*([kMG]?Hz)\s*", text or "")
    if not m:
        raise DefineError(f"--clock '{text}': give clocks with a unit, e.g. '1.2:2.7:0.1 GHz' or '2.2 GHz'")
    body, scale = m.group(1), CLOCK_PREFIX[m.group(2)]
    try:
        vals = _clock_range(text, body) if ":" in body else [float(x) for x in body.split(",")]
    except ValueError:
        raise DefineError(f"--clock '{text}': cannot read the numbers (e.g. '1.2:2.7:0.1 GHz')") from None
    if not vals or min(vals) <= 0:
        raise DefineError(f"--clock '{text}': clocks must be positive")
    try:
        return sorted({CLOCK.check(v * scale) for v in vals})
    except ValueError as exc:
        raise DefineError(f"--clock '{text}': {exc}") from None


def _clock_range(text: str, body: str) -> list:
    """The numbers of ``start:stop:step`` (stop included) in ``body``, the ``--clock`` ``text``.

    Raises:
        ValueError: a bad number. DefineError: not three parts, step <= 0, start > stop, too many.
    """
    parts = [float(x) for x in body.split(":")]
    if len(parts) != 3:
        raise DefineError(f"--clock '{text}': a range is start:stop:step, e.g. '1.2:2.7:0.1 GHz'")
    start, stop, step = parts
    if not step > 0 or start > stop:
        raise DefineError(f"--clock '{text}': need start <= stop and a step > 0")
    count = int((stop - start) / step + 1e-9) + 1
    if count > MAX_CLOCKS:
        raise DefineError(f"--clock '{text}': {count} clocks; at most {MAX_CLOCKS}")
    return [round(start + i * step, 9) for i in range(count)]


def power_data(machine, options: EnergyOptions, name: str) -> PowerSection:
    """The :class:`~loopmodel.machine.power.PowerSection` to use: the machine's ``power:`` section
    with ``--w0/--w1/--w2`` replacing its coefficients, or the options alone (``name``: the
    machine as given, for messages).

    Raises:
        DefineError: no power data, an option without the others, bad units (one line).
    """
    given = {k: v for k, v in (("W0", options.w0), ("W1", options.w1), ("W2", options.w2)) if v is not None}
    if machine.power is None and len(given) < 3:
        raise DefineError(f"no power data: the machine model '{name}' has no power: section; pass "
                          "--w0, --w1 and --w2 (e.g. --w0 '23.6 W' --w1 '1.9 W/GHz' --w2 '1.2 W/GHz^2')")
    mapping = power_mapping(machine.power) if machine.power is not None else {"source": "command line"}
    if given:
        if ("W1" in given or "W2" in given) and "W1" not in mapping and not {"W1", "W2"} <= set(given):
            raise DefineError("--w1 and --w2 go together here: the machine's power section has no W1 and W2 "
                              "(only the power per core at one clock)")
        if "W1" in given or "W2" in given:
            mapping.pop("per core", None)
            mapping.pop("at clock", None)
        mapping.update(given)
        mapping["source"] = "command line" + (f" over {name}'s power section" if machine.power else "")
    try:
        return power_section(mapping)
    except ValueError as exc:
        opt = next((f"--{k.lower()}" for k in given if f"'{k}'" in str(exc)), "power")
        raise DefineError(f"{opt}: {exc}") from None


def clocks_of(clock: str | None, machine, power: PowerSection, notes: list) -> list:
    """Clocks in Hz: ``clock`` (``--clock`` text), else the power section's range (and step),
    else the machine's clock; the notes on that choice appended to ``notes``."""
    if clock:
        return clock_list(clock)
    if not power.separable:
        notes.append(f"W1 and W2 are not known separately: only the clock the power per core was measured at "
                     f"({power.at_clock / 1e9:g} GHz)")
        return [power.at_clock]
    if power.clock_min is not None:
        step = power.clock_step or 1e8
        if power.clock_step is None:
            notes.append("the power section gives no clock step: 0.1 GHz")
        count = int((power.clock_max - power.clock_min) / step + 1e-9) + 1
        return [round(power.clock_min + i * step) for i in range(count)]
    notes.append(f"one clock, the machine model's ({machine.clock / 1e9:g} GHz): pass --clock 1.2:2.7:0.1 GHz "
                 "for a range")
    return [machine.clock]


def range_notes(power: PowerSection, clocks: list) -> list:
    """A note naming the clocks outside the power section's clock range (extrapolated), if any."""
    if power.clock_min is None:
        return []
    out = [f for f in clocks if not power.clock_min * (1 - 1e-9) <= f <= power.clock_max * (1 + 1e-9)]
    return [f"{', '.join(f'{f / 1e9:g}' for f in out)} GHz outside the power section's clock range "
            f"({power.clock_min / 1e9:g}-{power.clock_max / 1e9:g} GHz): the power model is extrapolated"] if out else []


def model_notes(power: PowerSection, machine) -> tuple:
    """The notes on the energy model itself and the power section's own notes."""
    out = ["E = W / P_ECM (ECM slides (Hager), 'A simple power model for multicore chips'); W0 is paid once "
           f"per chip in use ({machine.cores_per_socket} cores per chip, filled one after the other)"]
    if power.notes:
        out += [f"power section: {n}" for n in power.notes]
    return tuple(out)


def run(kernel, machine, options: EnergyOptions) -> EnergyRun:
    """Energy to solution and performance of every (cores, clock): the analysis runs at the
    machine model's clock, the grid at each clock of ``options.clock``.

    Args:
        kernel: a kernel file (C or Kerncraft YAML) or a :class:`loopmodel.Kernel`.
        machine: a built-in name, a machine file, ``"host"``, or a :class:`loopmodel.Machine`.
        options: :class:`EnergyOptions` (one value per size).

    Raises:
        LoopmodelError: bad sizes, clocks, cores, p0, level or power data, too many operating
            points (more than :data:`MAX_POINTS`) (one line).
    """
    if options.clock:
        clock_list(options.clock)  # a bad --clock before the analysis
    analyzer, points = prepare(kernel, machine, dataclasses.replace(options, clock=None), ("ECM",), 1)
    analyzer = one_nest(analyzer, "energy")
    point = one_point(points, "energy")
    res = analyzer.run(point)
    res.ecm.require_known()
    m = analyzer.machine
    check_level(res.ecm, options.data_in)
    check_p0(options.p0)
    power = power_data(m, options, machine_name(machine))
    notes = []
    clocks = clocks_of(options.clock, m, power, notes)
    cores = core_list(options.cores, m.cores_per_socket * m.sockets) if options.cores else \
        list(range(1, m.cores_per_socket + 1))
    if len(cores) * len(clocks) > MAX_POINTS:
        raise DefineError(f"{len(cores) * len(clocks)} operating points; at most {MAX_POINTS}")
    notes += range_notes(power, clocks)
    per_cores = {n: analyzer.run(point, cores=n).traffic for n in cores}  # as scaling's rows
    perf = ecm_performance(res.traffic, res.incore, m, cores, clocks, options.model, options.p0, options.placement,
                           options.data_in, analyzer.options.memory_bandwidth, per_cores)
    try:
        result = energy_grid(perf, power, m.cores_per_socket, options.model, tuple(notes) + model_notes(power, m))
    except ValueError as exc:
        raise DefineError(str(exc)) from None
    where = options.data_in or res.ecm.location
    title = (f"{os.path.basename(str(kernel))} on {m.name}, sizes "
             + ", ".join(f"{n}={v}" for n, v in sorted(res.defines.items())) + f", data in {where}")
    return EnergyRun(result, res, m, power, str(kernel), where, title)
