"""The ``coherence:`` section of a machine file holding an *estimated* transition table
(:func:`loopmodel.models.coherence_estimate.estimate_table`), for a model that was not probed.

Run as a generator, it prints the block for a bundled model, to paste into its file::

    python -m loopmodel.fileio.coherence_estimate_section SkylakeSP_Gold-6148 [--c2c-latency 80ns] [--provenance]

``--c2c-latency`` takes a published core-to-core latency (``80ns``, ``0.08 us``, ``8e-8 s``);
``--provenance`` also prints the ``provenance:`` entry that marks the section as estimated
(:mod:`loopmodel.machine.provenance`). Nothing is written to any file.
"""
from __future__ import annotations

import re
import sys

from ..errors import LoopmodelError
from ..models.coherence_estimate import MLP_LINES, estimate_table
from .machine_files import load_machine
from .machine_writer import coherence_mapping, plain_yaml

USAGE = ("usage: python -m loopmodel.fileio.coherence_estimate_section NAME [--c2c-latency 80ns] "
         "[--provenance]")

_SECONDS = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6, "ns": 1e-9}

#: significant digits of the written times: an estimate is not known better
DIGITS = 4


def parse_latency(text: str) -> float:
    """``"80ns"`` / ``"0.08 us"`` / ``"8e-8 s"`` -> seconds.

    Raises:
        ValueError: no number with a unit of s, ms, us, µs or ns, or not above 0 (one line).
    """
    m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+(?:[eE][-+]?[0-9]+)?)\s*(s|ms|us|µs|ns)\s*", str(text))
    if not m or float(m.group(1)) <= 0:
        raise ValueError(f"core-to-core latency '{text}': expected a positive time such as 80ns or 0.08us")
    return float(m.group(1)) * _SECONDS[m.group(2)]


def estimated_section(machine, core_to_core_latency: float | None = None) -> dict:
    """The ``coherence`` mapping of a machine file for the estimated table of ``machine``
    (:func:`~loopmodel.models.coherence_estimate.estimate_table`, its rules and sources there),
    times rounded to :data:`DIGITS` significant digits.

    Raises:
        ValueError: a latency outside (0, 1 ms). ModelError: a ``measured`` link without
            benchmark measurements.
    """
    mapping = coherence_mapping(estimate_table(machine, core_to_core_latency=core_to_core_latency))
    mapping["seconds [s]"] = {key: {t: [float(f"{x:.{DIGITS}g}") for x in row] for t, row in per_t.items()}
                              for key, per_t in mapping["seconds [s]"].items()}
    return mapping


def provenance_entry(machine, core_to_core_latency: float | None = None) -> dict:
    """The ``provenance`` entry (figure ``coherence``) marking the section as estimated."""
    latency = (f"core-to-core latency {core_to_core_latency * 1e9:.4g} ns, {MLP_LINES} lines in flight"
               if core_to_core_latency else "no core-to-core latency")
    return {"coherence": {"source": "loopmodel.models.coherence_estimate: derived from this model's link "
                                     "bandwidths, L1 limits, cache sizes and memory bandwidth",
                          "estimated": True,
                          "reason": f"not measured on a {machine.name}; ECM streams per transition, {latency}"}}


def section_text(name: str, core_to_core_latency: float | None = None, provenance: bool = False) -> str:
    """The YAML text of the ``coherence:`` block (and with ``provenance`` the ``provenance:``
    entry) for the machine model ``name`` (bundled name or file), one comment line first.

    Raises:
        MachineError: unknown or invalid model. ValueError, ModelError: as :func:`estimated_section`.
    """
    machine = load_machine(name)
    latency = f" --c2c-latency {core_to_core_latency * 1e9:g}ns" if core_to_core_latency else ""
    text = (f"# coherence: ESTIMATED from the model's figures, not measured (python -m "
            f"loopmodel.fileio.coherence_estimate_section {machine.name}{latency})\n")
    text += plain_yaml({"coherence": estimated_section(machine, core_to_core_latency)})
    if provenance:
        text += plain_yaml({"provenance": provenance_entry(machine, core_to_core_latency)})
    return text


def main(argv: list | None = None) -> int:
    """Print :func:`section_text` for the arguments ``NAME [--c2c-latency T] [--provenance]``;
    returns the exit status (2 with one line on stderr for bad arguments or a model error)."""
    args = list(sys.argv[1:] if argv is None else argv)
    provenance = "--provenance" in args
    args = [a for a in args if a != "--provenance"]
    latency = None
    try:
        if "--c2c-latency" in args:
            i = args.index("--c2c-latency")
            if i + 1 >= len(args):
                raise ValueError("--c2c-latency needs a value such as 80ns")
            latency = parse_latency(args.pop(i + 1))
            args.pop(i)
        if len(args) != 1 or args[0].startswith("-"):
            raise ValueError(USAGE)
        sys.stdout.write(section_text(args[0], latency, provenance))
    except (ValueError, LoopmodelError) as err:
        sys.stderr.write(f"{err}\n")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
