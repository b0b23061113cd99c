"""``loopmodel energy``: energy to solution and performance per operating point (cores, clock).

    loopmodel energy KERNEL.c -m MACHINE -D N=... [--cores 1:N] [--clock 1.2:2.7:0.1 GHz]
                     [--w0 "23.6 W" --w1 "1.9 W/GHz" --w2 "1.2 W/GHz^2"]
                     [--model contention|saturation] [--json] [--plot z.png]

Runs the ECM analysis once (:class:`loopmodel.workflows.analysis.Analyzer`), evaluates the ECM model and
the multicore model at every clock (:func:`loopmodel.models.power.ecm_performance`) and the
chip power model of the machine's ``power:`` section or the ``--w0/--w1/--w2`` options
(:func:`loopmodel.models.power.energy_grid`, ecm-model-slides.txt "A simple power model for
multicore chips"); renders a table, JSON or the slides' Z-plot. Errors are one line.
"""
from __future__ import annotations

import json
import os
import re
import sys

from ..workflows.analyze import AnalysisOptions, prepare
from ..workflows.inputs import check_p0, core_list
from .arguments import add_options, kernel_and_machine, options_from_args
from .scaling import multicore_args

#: the most operating points one command evaluates
MAX_POINTS = 20000
_CLOCK_PREFIX = {"Hz": 1.0, "kHz": 1e3, "MHz": 1e6, "GHz": 1e9}


def add_parser(sub) -> None:
    """The ``energy`` subcommand on ``sub``."""
    e = sub.add_parser("energy", help="energy to solution and performance per (cores, clock); the energy-optimal "
                                      "operating point (ECM + multicore + chip power model)")
    kernel_and_machine(e)
    add_options(e, AnalysisOptions)
    e.add_argument("--json", action="store_true", help="print one JSON document")
    for action in e._actions:  # the shared --clock takes a list of clocks here
        if action.dest == "clock":
            action.metavar = "CLOCKS"
            action.help = ("core clocks: '1.2:2.7:0.1 GHz' (start:stop:step, stop included), '1.2,2.0,2.7 GHz' "
                           "or '2.2 GHz' (default: the power section's clock range and step, else the machine "
                           "model's clock); core-cycle work scales with the clock, memory bandwidth does not")
        if action.dest == "json":
            action.help = "print one JSON document (points, optimum, saving, notes)"
    multicore_args(e, ("contention", "saturation"), "1:cores per socket, one chip")
    e.add_argument("--w0", metavar="POWER", help="static chip power W0, e.g. '23.6 W' (default: the machine's power "
                                                 "section)")
    e.add_argument("--w1", metavar="W/GHz", help="dynamic power per core, linear term W1, e.g. '1.9 W/GHz'")
    e.add_argument("--w2", metavar="W/GHz^2", help="dynamic power per core, quadratic term W2, e.g. '1.2 W/GHz^2'")
    e.add_argument("--plot", metavar="PNG", help="write the Z-plot: energy per iteration vs performance, one line "
                                                 "per clock (PNG, SVG or PDF by extension)")
    e.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


def clock_list(text: str) -> list:
    """``'1.2:2.7:0.1 GHz'`` (stop included), ``'1.2,2.0 GHz'`` or ``'2.2 GHz'`` -> clocks in Hz,
    ascending.

    Raises:
        DefineError: no unit, bad numbers, step <= 0, start > stop, a clock outside
            :data:`~loopmodel.machine.fields.CLOCK`, too many (one line).
    """
    from ..errors import DefineError
    from ..machine.fields import CLOCK

    m = re.fullmatch(r"\s*(.+?)\s*([kMG]?Hz)\s*", text or "")
    if not m:
        raise DefineError(f"--clock '{text}': give clocks with a unit, e.g. '1.2:2.7:0.1 GHz' or '2.2 GHz'")
    body, scale = m.group(1), _CLOCK_PREFIX[m.group(2)]
    try:
        if ":" in body:
            parts = [float(x) for x in body.split(":")]
            if len(parts) != 3:
                raise DefineError(f"--clock '{text}': a range is start:stop:step, e.g. '1.2:2.7:0.1 GHz'")
            start, stop, step = parts
            if not step > 0 or start > stop:
                raise DefineError(f"--clock '{text}': need start <= stop and a step > 0")
            count = int((stop - start) / step + 1e-9) + 1
            if count > 1000:
                raise DefineError(f"--clock '{text}': {count} clocks; at most 1000")
            vals = [round(start + i * step, 9) for i in range(count)]
        else:
            vals = [float(x) for x in body.split(",")]
    except ValueError:
        raise DefineError(f"--clock '{text}': cannot read the numbers (e.g. '1.2:2.7:0.1 GHz')") from None
    if not vals or min(vals) <= 0:
        raise DefineError(f"--clock '{text}': clocks must be positive")
    try:
        return sorted({CLOCK.check(v * scale) for v in vals})
    except ValueError as exc:
        raise DefineError(f"--clock '{text}': {exc}") from None


def power_data(machine, args, machine_name: str):
    """The :class:`~loopmodel.machine.power.PowerSection` to use: the machine's ``power:`` section
    with ``--w0/--w1/--w2`` replacing its coefficients, or the options alone.

    Raises:
        DefineError: no power data, an option without the others, bad units (one line).
    """
    from ..errors import DefineError
    from ..fileio.machine_writer import power_mapping
    from ..machine.fields import power_section

    given = {k: v for k, v in (("W0", args.w0), ("W1", args.w1), ("W2", args.w2)) if v is not None}
    if machine.power is None and len(given) < 3:
        raise DefineError(f"no power data: the machine model '{machine_name}' has no power: section; pass "
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
        mapping["source"] = "command line" + (f" over {machine_name}'s power section" if machine.power else "")
    try:
        return power_section(mapping)
    except ValueError as exc:
        opt = next((f"--{k.lower()}" for k in given if f"'{k}'" in str(exc)), "power")
        raise DefineError(f"{opt}: {exc}") from None


def _clocks(args, machine, power, notes: list) -> list:
    """Clocks in Hz: ``--clock``, else the power section's range (and step), else the machine's clock."""
    if args.clock:
        return clock_list(args.clock)
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


def run(args) -> int:
    """Run ``energy`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors.
    """
    from ..errors import DefineError, LoopmodelError
    from ..fileio.defines import one_point
    from ..fileio.output import check_new_output
    from ..models.power import ecm_performance, energy_grid

    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    clock_text, args.clock = args.clock, None  # the analysis runs at the machine's clock, the grid at each
    if clock_text:
        clock_list(clock_text)  # bad --clock before the analysis
    analyzer, points = prepare(args.kernel, args.machine, options_from_args(AnalysisOptions, args), ("ECM",), 1)
    args.clock = clock_text
    point = one_point(points, "energy")
    res = analyzer.run(point)
    res.ecm.require_known()
    m = analyzer.machine
    if args.data_in not in res.ecm.T_ECM:
        raise DefineError(f"--data-in {args.data_in}: no such level (choose {', '.join(res.ecm.T_ECM)})")
    check_p0(args.p0)
    power = power_data(m, args, str(args.machine))
    notes = []
    clocks = _clocks(args, m, power, notes)
    cores = core_list(args.cores, m.cores_per_socket * m.sockets) if args.cores else \
        list(range(1, m.cores_per_socket + 1))
    if len(cores) * len(clocks) > MAX_POINTS:
        raise DefineError(f"{len(cores) * len(clocks)} operating points; at most {MAX_POINTS}")
    notes += _range_notes(power, clocks)
    per_cores = {n: analyzer.run(point, cores=n).traffic for n in cores}  # as scaling's rows
    perf = ecm_performance(res.traffic, res.incore, m, cores, clocks, args.model, args.p0, args.placement,
                           args.data_in, analyzer.options.memory_bandwidth, per_cores)
    try:
        result = energy_grid(perf, power, m.cores_per_socket, args.model, tuple(notes) + _model_notes(power, m))
    except ValueError as exc:
        raise DefineError(str(exc)) from None
    title = (f"{os.path.basename(str(args.kernel))} on {m.name}, sizes " + ", ".join(f"{n}={v}" for n, v in sorted(res.defines.items()))
             + f", data in {args.data_in}")
    if args.plot:
        from ..report.energy import plot

        try:
            plot(result, title, args.plot)
        except OSError as exc:
            raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
    return _output(args, result, res, m, power, title)


def _output(args, result, res, m, power, title: str) -> int:
    from ..fileio.machine_writer import power_mapping
    from ..report import energy as rep

    if args.json:
        ctx = {"kernel": str(args.kernel), "machine": m.name, "defines": dict(res.defines), "data_in": args.data_in,
               "power": rep.power_dict(power)}
        json.dump(rep.to_dict(result, ctx), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console

    pm = power_mapping(power)
    line = ("power model W = W0 + (W1·f + W2·f²)·n: " + ", ".join(f"{k} = {pm[k]}" for k in ("W0", "W1", "W2", "per core",
                                                                                            "at clock") if k in pm)
            + (f" (source: {pm['source']})" if pm.get("source") else ""))
    rep.render(result, title, Console(highlight=False, width=None if sys.stdout.isatty() else 120), line)
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0


def _range_notes(power, clocks: list) -> list:
    if power.clock_min is None:
        return []
    out = [f for f in clocks if not power.clock_min * (1 - 1e-9) <= f <= power.clock_max * (1 + 1e-9)]
    return [f"{', '.join(f'{f / 1e9:g}' for f in out)} GHz outside the power section's clock range "
            f"({power.clock_min / 1e9:g}-{power.clock_max / 1e9:g} GHz): the power model is extrapolated"] if out else []


def _model_notes(power, machine) -> tuple:
    out = ["E = W / P_ECM (ecm-model-slides.txt, 'A simple power model for multicore chips'); W0 is paid once "
           f"per chip in use ({machine.cores_per_socket} cores per chip, filled one after the other)"]
    if power.notes:
        out += [f"power section: {n}" for n in power.notes]
    return tuple(out)
