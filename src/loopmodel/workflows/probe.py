"""``machine probe``: measure this host (:func:`loopmodel.measure.probe.run_probe`), build its
machine model (:func:`loopmodel.workflows.hostmodel.build_host_model`) and keep it as this
host's model for ``-m host`` (:func:`loopmodel.fileio.host_models.store_host_model`).

``coherence`` adds the MESI transition table (benchmark-based-coherence-model.txt §IV) to the
probe; ``coherence_only`` measures only that table and adds it to (or replaces it in) the
stored ``-m host`` model, keeping everything else. ``power`` adds the chip power model fitted
to RAPL package power (:mod:`loopmodel.measure.power_probe`).

``validate`` measures the validation corpus (:func:`loopmodel.workflows.corpus.run_corpus`:
the quick corpus with ``quick``, else the full one) with the new model and keeps the
distribution of |error| (predicted / measured min - 1) per data location and per regime in
``probe.validation`` (:meth:`loopmodel.machine.probe_section.AccuracySummary.to_mapping`), for
``analyze -m host`` to quote; ``validate_only`` does that for the stored ``-m host`` model,
keeping everything else in it.

A full probe checks itself (:func:`loopmodel.workflows.hostmodel.build_checked_host_model`):
a model whose self-check leaves something uncertain is neither stored nor returned as text
unless ``force`` (and not validated: the refusal comes first).
"""
from __future__ import annotations

from dataclasses import dataclass

import dataclasses
from pathlib import Path

from .. import toolchain
from ..errors import DefineError, MachineError
from ..fileio.defines import count_list
from ..fileio.host_models import HOST_NAME, PROBE_TIME, resolve_host, store_host_model
from ..fileio.machine_files import load_machine, read_yaml
from ..fileio.machine_schema import validate_mapping
from ..fileio.machine_writer import UNITS_COMMENT, coherence_mapping, machine_text
from ..fileio.output import replace_atomically
from ..fileio.reader import read_text
from ..measure import probe as measure_probe
from ..units import parse_quantity
from ..version import __version__
from .corpus import CorpusRun, run_corpus
from .hostmodel import HostModel, build_checked_host_model
from .options import option


@dataclass(frozen=True)
class ProbeOptions:
    """``machine probe``'s options. ``coherence`` and ``coherence_only`` exclude each other."""

    quick: bool = option(False, f"fewer sizes, kernels, core counts and repetitions (the probe takes {PROBE_TIME})",
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
    validate: bool = option(
        False, "after the probe, measure the validation corpus with the new model (the quick corpus with --quick, "
               "about 2 minutes on 2 cores; else the full one, several minutes) and keep its |error| per data location "
               "and per regime in the model's probe.validation (what 'analyze -m host' quotes)", "--validate")
    validate_only: bool = option(
        False, "measure only the validation corpus (the quick one with --quick) with the stored '-m host' model and "
               "put its summary into (or replace it in) that model's probe.validation, keeping everything else",
        "--validate-only")


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
        validation: the :class:`~loopmodel.workflows.corpus.CorpusRun` of ``validate`` or
            ``validate_only`` (its ``summary`` is what ``probe.validation`` holds); None otherwise.
    """
    text: str
    stored: Path | None
    host_model: HostModel | None = None
    coherence: object = None
    refused: bool = False
    validation: CorpusRun | None = None


def run(options: ProbeOptions, progress=None) -> ProbeResult:
    """Probe this host as ``options`` say (:data:`~loopmodel.fileio.host_models.PROBE_TIME`).

    Args:
        progress: ``progress(step description, points done, points in total)`` callback, or None.
    Raises:
        ToolError: the compiler is not installed, or a benchmark fails (one line).
        DefineError: a bad ``cores`` list, or options that exclude each other (one line).
    A self-check that leaves measurements uncertain is no error: the result says ``refused``
    (and nothing is validated).
        MachineError: the measurements make no valid model; with ``coherence_only`` or
            ``validate_only``: no stored host model, or it cannot be read or replaced (one line).
    """
    toolchain.chosen_compiler(options.compiler)  # before minutes of work
    cores = core_counts(options.cores)
    check_options(options)
    if options.validate_only:
        return _validate_only(options.quick, progress)
    if options.coherence_only:
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
    validation = None
    if options.validate:
        validation = validate_model(model.machine, "the probed model" if options.no_store else HOST_NAME,
                                    options.quick, progress)
        model = dataclasses.replace(model, mapping=with_validation(model.mapping, validation))
    header = [f"loopmodel machine model of the host '{data.host.get('hostname')}' ({data.topology.model_name}), "
              f"measured by '{model.mapping['probe'].get('command', 'loopmodel machine probe')}' on "
              f"{data.host.get('date')} in {data.host.get('duration_s')} s. The probe section holds every "
              "raw figure and fit.", UNITS_COMMENT]
    text = machine_text(model.mapping, header)
    stored = None if options.no_store else store_host_model(text)
    return ProbeResult(text, stored, host_model=model, validation=validation)


def check_options(options: ProbeOptions) -> None:
    """Refuse options that exclude each other: ``coherence_only`` and ``validate_only`` update the
    stored model (no ``no_store``) and measure nothing else (no ``coherence``, ``power``, and
    for ``validate_only`` no ``cores``: the corpus runs on one core); ``validate`` goes with a
    full probe.

    Raises:
        DefineError: the first conflict, one line naming both options.
    """
    if options.validate_only:
        given = [flag for flag, on in (("--validate", options.validate), ("--coherence-only", options.coherence_only),
                                       ("--coherence", options.coherence), ("--power", options.power),
                                       ("--no-store", options.no_store), ("--cores", options.cores is not None))
                 if on]
        if given:
            raise DefineError(f"--validate-only validates the stored '-m host' model and measures nothing else; it "
                              f"cannot go with {given[0]}")
    if options.coherence_only:
        if options.coherence:
            raise DefineError("argument --coherence-only: not allowed with argument --coherence")
        if options.no_store:
            raise DefineError("--coherence-only updates the stored '-m host' model; it cannot go with --no-store")
        if options.power:
            raise DefineError("--power is part of a full probe; it cannot go with --coherence-only")
        if options.validate:
            raise DefineError("--validate goes with a full probe; it cannot go with --coherence-only (run "
                              "--validate-only after it)")


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
    path, text, mapping = _read_stored()
    table, info = measure_probe.probe_coherence(settings, stored_llc_bytes(mapping), progress)
    mapping["coherence"] = coherence_mapping(table)
    mapping["probe"] = {**(mapping.get("probe") or {}), "coherence": info}
    return ProbeResult(_replace_stored(path, text, mapping), path, coherence=table)


def _validate_only(quick: bool, progress) -> ProbeResult:
    """Measure the validation corpus with the stored host model and put the summary into its
    ``probe.validation`` (replacing an older one); the rest of the file stays as it was and it
    is replaced atomically.

    Raises:
        MachineError: no stored host model, or it cannot be read or written (one line).
    """
    path, text, mapping = _read_stored()
    got = validate_model(load_machine(str(path)), HOST_NAME, quick, progress)
    return ProbeResult(_replace_stored(path, text, with_validation(mapping, got)), path, validation=got)


def _read_stored() -> tuple:
    """``(path, text, mapping)`` of the stored host model, its YAML data validated.

    Raises:
        MachineError: none stored, or it cannot be read or is no valid model (one line).
    """
    path = resolve_host()
    text = read_text(path, "host model", MachineError)
    mapping = read_yaml(str(path), text.encode("utf-8"))
    validate_mapping(mapping, str(path))
    return path, text, mapping


def _replace_stored(path: Path, text: str, mapping: dict) -> str:
    """Write ``mapping`` over the stored host model at ``path`` (old content ``text``), keeping
    its ``#`` comment lines; returns the new text.

    Raises:
        MachineError: the file cannot be replaced (one line).
    """
    header = [ln[2:] if ln.startswith("# ") else ln[1:] for ln in text.splitlines() if ln.startswith("#")]
    new = machine_text(mapping, header)
    try:
        replace_atomically(path, new)
    except OSError as exc:
        raise MachineError(f"cannot update the stored host model: {exc.strerror or exc}", file=str(path)) from None
    return new


def validate_model(machine, machine_name: str, quick: bool, progress=None) -> CorpusRun:
    """The validation corpus measured with ``machine`` (:func:`loopmodel.workflows.corpus.run_corpus`,
    seed 0, one thread on CPU 0, every benchmark measured now rather than taken from the per-user
    cache); its summary's provenance also holds the run's ``seconds``, the ``loopmodel_version``
    and the ``model_probe_date`` of the model it validates.

    Args:
        machine: the :class:`~loopmodel.machine.model.MachineModel` to validate.
        machine_name: how messages name it (``"host"`` for the stored model).
        quick: the quick corpus (about 2 minutes on 2 cores) instead of the full one (several minutes).
        progress: ``progress(step description, cases done, cases in total)`` or None.
    Raises:
        LoopmodelError: the corpus cannot be placed on the model (one line); a case that fails is
            skipped, not raised.
    """
    def each(i, n, case, outcome):
        progress(f"validation: {case.kernel.name} in {case.level}", i, n)

    got = run_corpus(machine, machine_name, quick, progress=each if progress is not None else None, fresh=True)
    provenance = {**got.summary.provenance, "seconds": round(got.seconds, 1), "loopmodel_version": __version__,
                  "model_probe_date": machine.probe.date if machine.probe else None}
    return dataclasses.replace(got, summary=dataclasses.replace(got.summary, provenance=provenance))


def with_validation(mapping: dict, got: CorpusRun) -> dict:
    """``mapping`` (a machine file's YAML data) with ``probe.validation`` set to the summary of
    ``got`` (:meth:`loopmodel.machine.probe_section.AccuracySummary.to_mapping`), replacing an older one."""
    return {**mapping, "probe": {**(mapping.get("probe") or {}), "validation": got.summary.to_mapping()}}


def validation_lines(summary) -> list:
    """The ``validation:`` block for a validation summary
    (:class:`~loopmodel.machine.probe_section.AccuracySummary`, e.g. a machine file's
    ``probe.validation``): where and when it was measured, then per data location (L1 .. MEM) and
    over all cases the count, median, p90 and max of |predicted / measured min - 1|."""
    prov = summary.provenance
    corpus = "quick corpus" if prov.get("quick") else "corpus"
    lines = [f"validation: {corpus} (seed {prov.get('seed', '?')}) on {prov.get('date', 'an unknown date')}, "
             f"{prov.get('cases', '?')} case(s) measured, {prov.get('skipped', 0)} skipped"
             + (f", {prov['seconds']} s" if prov.get("seconds") is not None else "")
             + (f", loopmodel {prov['loopmodel_version']}" if prov.get("loopmodel_version") else "")]
    by_level = summary.by_level
    rows = [(lv, by_level[lv]) for lv in sorted(by_level, key=lambda k: (k == "MEM", k))]
    rows += [("all", summary.overall)] if summary.overall else []
    for name, st in rows:
        lines.append(f"  {name}: n={st.count}, |error| median {_percent(st.median)}, "
                     f"p90 {_percent(st.p90)}, max {_percent(st.max)}")
    regimes = summary.by_regime
    lines.append(f"  regimes: {len(regimes)} with cases" + (f" ({', '.join(regimes)})" if regimes else ""))
    return lines


def _percent(x) -> str:
    return f"{100 * x:.1f} %"


def stored_llc_bytes(mapping: dict) -> int | None:
    """The last cache's effective capacity (bytes) the probe of a stored machine file
    (``mapping``: its YAML data) measured, else that cache's size in the model; None without caches."""
    eff = (((mapping.get("probe") or {}).get("fits") or {}).get("effective_capacity_B") or {})
    if eff:
        return int(list(eff.values())[-1])
    caches = [lv for lv in mapping.get("memory_hierarchy", []) if lv.get("level") != "MEM" and lv.get("size")]
    return int(parse_quantity(caches[-1]["size"], "size")) if caches else None
