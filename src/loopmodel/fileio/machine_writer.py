"""Writing a machine model as a loopmodel machine file (YAML with explicit units).

The text starts with comment lines (what the file is, units), then the mapping in the key
order given; it is checked to read back into the same model before anyone writes it.
"""
from __future__ import annotations

UNITS_COMMENT = ("Units are explicit: clock in GHz, sizes in B, link bandwidths in B/cy (per direction for "
                 "duplex: full), penalties in cy per cache line, measured bandwidths in GB/s (without "
                 "write-allocate traffic). in_core.throughput: instructions per cycle at full SIMD width; "
                 "latency in cy. coherence: units in the key names ([B], [s]).")


def machine_text(mapping: dict, header: list) -> str:
    """The machine file for ``mapping`` (plain YAML data) with ``header`` as ``#`` comment lines.

    Raises:
        MachineError: the text does not read back into a valid model (a defect of the caller;
            one line naming the key).
    """
    import yaml

    from .machine_schema import validate_mapping

    body = yaml.safe_dump(mapping, sort_keys=False, width=110, default_flow_style=None, allow_unicode=True)
    validate_mapping(yaml.safe_load(body), "<written machine file>")
    lines = [f"# {h}" for line in header for h in _wrap(line)]
    return "\n".join(lines) + "\n" + body


def _wrap(text: str, width: int = 100) -> list:
    import textwrap

    return textwrap.wrap(text, width) or [""]


def coherence_mapping(table) -> dict:
    """The ``coherence`` section of a machine file for a
    :class:`~loopmodel.machine.coherence.CoherenceTable` (plain YAML data, units in the keys;
    read back by :func:`loopmodel.machine.fields.coherence_section` into an equal table)."""
    def rows(block: dict) -> dict:
        return {key: {int(t): [float(x) for x in row] for t, row in per_t.items()} for key, per_t in block.items()}

    return {"element size [B]": int(table.element_size), "stride [B]": int(table.stride),
            "sizes [B]": [int(s) for s in table.sizes], "threads": [int(t) for t in table.threads],
            "cpus": [int(c) for c in table.cpus],
            "region overhead [s]": {int(t): float(s) for t, s in table.region_overhead.items()},
            "seconds [s]": rows(table.seconds), "spread": rows(table.spread), "notes": list(table.notes)}
