"""``machine probe``: measure this host (:func:`loopmodel.measure.probe.run_probe`), build its
machine model (:func:`loopmodel.workflows.hostmodel.build_host_model`) and keep it as this
host's model for ``-m host`` (:func:`loopmodel.fileio.host_models.store_host_model`).

``coherence`` adds the MESI transition table (benchmark-based-coherence-model.txt §IV) to the
probe; ``coherence_only`` measures only that table and adds it to (or replaces it in) the
stored ``-m host`` model, keeping everything else. ``power`` adds the chip power model fitted
to RAPL package power (:mod:`loopmodel.measure.power_probe`).

A full probe checks itself (:func:`loopmodel.workflows.hostmodel.build_checked_host_model`):
a model whose self-check leaves something uncertain is neither stored nor returned as text
unless ``force``.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .. import toolchain
from ..errors import DefineError, MachineError
from ..fileio.defines import count_list
from ..fileio.host_models import resolve_host, store_host_model
from ..fileio.machine_files import read_yaml
from ..fileio.machine_schema import validate_mapping
from ..fileio.machine_writer import UNITS_COMMENT, coherence_mapping, machine_text
from ..fileio.output import replace_atomically
from ..fileio.reader import read_text
from ..measure import probe as measure_probe
from ..units import parse_quantity
from .hostmodel import HostModel, build_checked_host_model
from .options import option


@dataclass(frozen=True)
class ProbeOptions:
    """``machine probe``'s options. ``coherence`` and ``coherence_only`` exclude each other."""

    quick: bool = option(False, "fewer sizes, kernels, core counts and repetitions (about a minute on 2 cores)",
                         "--quick")
    cores: str | None = option(None, "core counts for the bandwidth tables: 1:N (default 1:all CPUs this process "
                                     "may use), 1,2,4 or N", "--cores", metavar="RANGE")
    compiler: str = option("gcc", "C compiler for the benchmarks (default gcc)", "--compiler")
    no_store: bool = option(False, "do not keep the model as this host's '-m host' model", "--no-store")
    force: bool = option(False, "overwrite an existing -o file, and write and store the model even when the "
                                "probe's self-check leaves measurements uncertain (marked so in probe.self_check)",
                         "--force")
    power: bool = option(
        False, "also measure package power (Linux powercap/RAPL) of a streaming kernel at 1..N cores, at several "
               "clocks where cpufreq lets the clock be set, and fit the chip power model W0 + (W1·f + W2·f²)·n into "
               "the model's power section (a note where no counters are readable)", "--power")
    coherence: bool = option(
        False, "also measure the MESI transition table (load/store of a chunk in state M, E, S, I at 1..N threads, "
               "4 KiB to 4x the last-level cache) into the model's coherence section", "--coherence")
    coherence_only: bool = option(
        False, "measure only the MESI transition table and add it to (or replace it in) the stored '-m host' "
               "model, keeping everything else in it", "--coherence-only")


@dataclass(frozen=True)
class ProbeResult:
    """What a probe made.

    Attributes:
        text: the machine file (YAML with ``#`` comment lines), as kept for ``-m host``.
        stored: where it is kept for ``-m host``; None with ``no_store``.
        host_model: the :class:`~loopmodel.workflows.hostmodel.HostModel` of a full probe
            (None with ``coherence_only``).
        coherence: the :class:`~loopmodel.machine.coherence.CoherenceTable` measured with
            ``coherence_only`` (None otherwise).
        refused: the self-check left measurements uncertain and ``force`` was not given: the
            model was not stored and ``text`` is empty (the reasons are in
            ``host_model.self_check.uncertain``).
    """
    text: str
    stored: Path | None
    host_model: HostModel | None = None
    coherence: object = None
    refused: bool = False


def run(options: ProbeOptions, progress=None) -> ProbeResult:
    """Probe this host as ``options`` say (minutes; ``quick``: about one).

    Args:
        progress: ``progress(step description, points done, points in total)`` callback, or None.
    Raises:
        ToolError: the compiler is not installed, or a benchmark fails (one line).
        DefineError: a bad ``cores`` list, or options that exclude each other (one line).
    A self-check that leaves measurements uncertain is no error: the result says ``refused``.
        MachineError: the measurements make no valid model; with ``coherence_only``: no stored
            host model, or it cannot be read or replaced (one line).
    """
    toolchain.chosen_compiler(options.compiler)  # before minutes of work
    cores = core_counts(options.cores)
    if options.coherence_only:
        if options.coherence:
            raise DefineError("argument --coherence-only: not allowed with argument --coherence")
        if options.no_store:
            raise DefineError("--coherence-only updates the stored '-m host' model; it cannot go with --no-store")
        if options.power:
            raise DefineError("--power is part of a full probe; it cannot go with --coherence-only")
        return _coherence_only(measure_probe.ProbeOptions.make(cores, options.quick, options.compiler,
                                                               coherence=True), progress)
    settings = measure_probe.ProbeOptions.make(cores, options.quick, options.compiler, options.coherence,
                                               options.power)
    data = measure_probe.run_probe(settings, progress)
    if progress is not None:
        progress("self-check", 0, 1)
    model = build_checked_host_model(data)
    if not model.self_check.ok and not options.force:
        return ProbeResult("", None, host_model=model, refused=True)
    header = [f"loopmodel machine model of the host '{data.host.get('hostname')}' ({data.topology.model_name}), "
              f"measured by '{model.mapping['probe'].get('command', 'loopmodel machine probe')}' on "
              f"{data.host.get('date')} in {data.host.get('duration_s')} s. The probe section holds every "
              "raw figure and fit.", UNITS_COMMENT]
    text = machine_text(model.mapping, header)
    stored = None if options.no_store else store_host_model(text)
    return ProbeResult(text, stored, host_model=model)


def core_counts(text: str | None) -> list | None:
    """The core counts of ``--cores`` (``1:N``, ``1,2,4`` or ``N``); None without one (all).

    Raises:
        DefineError: a bad list, a count below 1 or above the CPUs this process may use (one line).
    """
    if text is None:
        return None
    cores = count_list(text, "--cores")
    if min(cores) < 1:
        raise DefineError(f"--cores {text}: core counts must be >= 1")
    most = measure_probe.usable_cpus()
    if max(cores) > most:
        raise DefineError(f"--cores {text}: this process may use {most} CPUs")
    return cores


def _coherence_only(settings, progress) -> ProbeResult:
    """Measure the transition table and put it into the stored host model.

    Everything else in the stored file stays as it was (its comment lines and sections); the
    file is replaced atomically.

    Raises:
        MachineError: no stored host model, or it cannot be read or written (one line).
        ToolError: the benchmark fails (one line).
    """
    path = resolve_host()
    text = read_text(path, "host model", MachineError)
    mapping = read_yaml(str(path), text.encode("utf-8"))
    validate_mapping(mapping, str(path))
    table, info = measure_probe.probe_coherence(settings, stored_llc_bytes(mapping), progress)
    mapping["coherence"] = coherence_mapping(table)
    mapping["probe"] = {**(mapping.get("probe") or {}), "coherence": info}
    header = [ln[2:] if ln.startswith("# ") else ln[1:] for ln in text.splitlines() if ln.startswith("#")]
    new = machine_text(mapping, header)
    try:
        replace_atomically(path, new)
    except OSError as exc:
        raise MachineError(f"cannot update the stored host model: {exc.strerror or exc}", file=str(path)) from None
    return ProbeResult(new, path, coherence=table)


def stored_llc_bytes(mapping: dict) -> int | None:
    """The last cache's effective capacity (bytes) the probe of a stored machine file
    (``mapping``: its YAML data) measured, else that cache's size in the model; None without caches."""
    eff = (((mapping.get("probe") or {}).get("fits") or {}).get("effective_capacity_B") or {})
    if eff:
        return int(list(eff.values())[-1])
    caches = [lv for lv in mapping.get("memory_hierarchy", []) if lv.get("level") != "MEM" and lv.get("size")]
    return int(parse_quantity(caches[-1]["size"], "size")) if caches else None
