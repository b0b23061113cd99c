"""``machine list | show | convert``: the built-in machine models, a model as loopmodel YAML,
and a Kerncraft machine file converted to loopmodel YAML (``machine probe`` is
:mod:`loopmodel.workflows.probe`)."""
from __future__ import annotations

from ..fileio.kerncraft_machine import convert_kerncraft
from ..fileio.machine_files import builtin_names, load_machine, read_yaml, validate
from ..fileio.machine_writer import machine_mapping, plain_yaml
from ..machine.figure_text import figure_value
from ..machine.provenance import estimated, figure_keys
from .probe import validation_lines


def builtin_models() -> list:
    """``[(name, description, summary), ...]`` of the built-in machine models, sorted by name; the
    description is the CPU's model name, else the file's description; the summary gives sockets,
    cores, clock and how many of the model's figures are estimated
    (:func:`loopmodel.machine.provenance.estimated`).

    Raises:
        MachineError: a built-in file does not load (a defect of the installation; one line).
    """
    out = []
    for name in builtin_names():
        model = load_machine(name)
        sourced = f"{len(estimated(model))} of {len(figure_keys(model))} figures estimated" if model.provenance \
            else "sources as a list"
        summary = f"{model.sockets}x{model.cores_per_socket} cores, {model.clock / 1e9:g} GHz; {sourced}"
        out.append((name, model.model_name or model.description, summary))
    return out


def show(name: str) -> str:
    """The loopmodel YAML text of the machine model ``name`` (a built-in name, ``host`` or a
    machine file in either format), validated, with explicit units (it loads back to an equal
    model). A probed model starts with its self-check as ``#`` comment lines
    (:meth:`~loopmodel.machine.probe_section.SelfCheckSummary.lines`): the verdicts and what stayed
    uncertain; a probe from before the self-check existed says it has none. A model with a
    ``probe.validation`` section then has its ``validation:`` block
    (:func:`~loopmodel.workflows.probe.validation_lines`: |error| per data location, when).

    Raises:
        MachineError: unknown name, unreadable or invalid file (one line).
    """
    model = load_machine(name)
    text = plain_yaml(machine_mapping(model))
    probe = model.probe
    if probe is None:
        return text
    lines = probe.self_check.lines() if probe.self_check else \
        ["self-check: none (this probe did not check its measurements)"]
    lines += validation_lines(probe.validation) if probe.validation else []
    return "".join(f"# {ln}\n" for ln in lines) + text


def convert(path: str) -> str:
    """The loopmodel YAML text of the Kerncraft machine file ``path``, validated.

    Raises:
        MachineError: unreadable file, or one the converter or the schema refuses (one line
            naming the key).
    """
    data = read_yaml(path)
    mapping = convert_kerncraft(data, path)
    validate(mapping, path)
    return plain_yaml(mapping)


def diff(first: str, second: str) -> list:
    """Every figure of two machine models side by side (``machine diff A B``): a probed host
    against the bundled model of its micro-architecture, or two bundled models.

    Returns:
        ``[(figure, text in first, text in second, where each comes from), ...]`` for the figures
        of either model (:func:`~loopmodel.machine.provenance.figure_keys`), in the first
        model's order; a figure one model lacks reads ``—``. The sources are the models'
        ``provenance`` entries (``estimated`` marked), ``probe`` for a probed model's figures.

    Raises:
        MachineError: an unknown name, unreadable or invalid file (one line).
    """
    models = [load_machine(first), load_machine(second)]
    keys = list(figure_keys(models[0]))
    keys += [k for k in figure_keys(models[1]) if k not in keys]
    return [(key, *(figure_value(m, key) for m in models), " / ".join(_source(m, key) for m in models))
            for key in keys]


def _source(model, key: str) -> str:
    entry = model.provenance.get(key)
    if entry is not None:
        return "estimated" if entry.estimated else "published"
    return "probe" if model.probe is not None else "—"
