"""``machine list | show | convert``: the built-in machine models, a model as loopmodel YAML,
and a Kerncraft machine file converted to loopmodel YAML (``machine probe`` is
:mod:`loopmodel.workflows.probe`)."""
from __future__ import annotations

from ..fileio.kerncraft_machine import convert_kerncraft
from ..fileio.machine_files import builtin_names, load_machine, read_yaml, validate
from ..fileio.machine_writer import machine_mapping, plain_yaml
from .probe import validation_lines


def builtin_models() -> list:
    """``[(name, description), ...]`` of the built-in machine models, sorted by name; the
    description is the CPU's model name, else the file's description.

    Raises:
        MachineError: a built-in file does not load (a defect of the installation; one line).
    """
    out = []
    for name in builtin_names():
        model = load_machine(name)
        out.append((name, model.model_name or model.description))
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
