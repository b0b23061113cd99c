"""Writing a machine model as a loopmodel machine file (YAML with explicit units).

The text starts with comment lines (what the file is, units), then the mapping in the key
order given; it is checked to read back into the same model before anyone writes it.
"""
from __future__ import annotations

import dataclasses
import json
import textwrap

import yaml

from .machine_schema import validate_mapping

UNITS_COMMENT = ("Units are explicit: clock in GHz, sizes in B, link bandwidths in B/cy (per direction for "
                 "duplex: full), penalties in cy per cache line, measured bandwidths in GB/s (without "
                 "write-allocate traffic). in_core.throughput: instructions per cycle at full SIMD width; "
                 "latency in cy. coherence: units in the key names ([B], [s]). power: W0 in W, W1 in W/GHz, W2 in "
                 "W/GHz^2.")


def machine_text(mapping: dict, header: list) -> str:
    """The machine file for ``mapping`` (plain YAML data) with ``header`` as ``#`` comment lines.

    Raises:
        MachineError: the text does not read back into a valid model (a defect of the caller;
            one line naming the key).
    """
    body = yaml.safe_dump(mapping, sort_keys=False, width=110, default_flow_style=None, allow_unicode=True)
    validate_mapping(yaml.safe_load(body), "<written machine file>")
    lines = [f"# {h}" for line in header for h in _wrap(line)]
    return "\n".join(lines) + "\n" + body


def _wrap(text: str, width: int = 100) -> list:
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


def _num(x: float) -> str:
    """Shortest text that reads back to ``x`` exactly (``repr``), integers without a point."""
    return str(int(x)) if x == int(x) and abs(x) < 1e15 else repr(x)


def _scaled(value: float, scale: float, unit: str, base_unit: str) -> str:
    """``value`` (base units) as the shortest ``"<value/scale> unit"`` that reads back to exactly
    ``value`` (:func:`loopmodel.units.parse_power` divides by ``scale``); else in ``base_unit``."""
    for digits in range(1, 18):
        text = f"{value * scale:.{digits}g}"
        if float(text) / scale == value:
            text = repr(float(text))  # the shortest spelling of that number: 20.0, not 2e+01
            return f"{text[:-2] if text.endswith('.0') else text} {unit}"
    return f"{_num(value)} {base_unit}"


def _per_ghz(value: float, order: int) -> str:
    """W/Hz^order -> ``"1.9 W/GHz"``/``"1.2 W/GHz^2"`` that reads back to ``value``."""
    suffix = "^2" if order == 2 else ""
    return _scaled(value, 1e9 ** order, f"W/GHz{suffix}", f"W/Hz{suffix}")


def _ghz(value: float) -> str:
    for digits in range(1, 18):
        text = f"{value / 1e9:.{digits}g}"
        if float(text) * 1e9 == value:
            return f"{text} GHz"
    return f"{_num(value)} Hz"


def power_mapping(section) -> dict:
    """The ``power`` section of a machine file for a :class:`~loopmodel.machine.power.PowerSection`
    (plain YAML data, units in the values; read back by
    :func:`loopmodel.machine.fields.power_section` into an equal section)."""
    out = {"W0": _scaled(section.w0, 1.0, "W", "W")}
    if section.w1 is not None:
        out["W1"] = _per_ghz(section.w1, 1)
        out["W2"] = _per_ghz(section.w2, 2)
    if section.per_core is not None:
        out["per core"] = _scaled(section.per_core, 1.0, "W", "W")
        out["at clock"] = _ghz(section.at_clock)
    if section.clock_min is not None:
        out["clock range"] = [_ghz(section.clock_min), _ghz(section.clock_max)]
    if section.clock_step is not None:
        out["clock step"] = _ghz(section.clock_step)
    out["source"] = section.source
    if section.notes:
        out["notes"] = list(section.notes)
    return out


def plain_yaml(data: dict) -> str:
    """The YAML text of machine-file data as ``machine show`` and ``machine convert`` print it
    (keys in the given order, lines up to 110 columns, short lists inline)."""
    return yaml.safe_dump(data, sort_keys=False, width=110, default_flow_style=None, allow_unicode=True)


def quantity_text(value: float, unit: str, scale: float = 1.0, prefix: str = "") -> str:
    """``value`` (base units) as ``"<value/scale> <prefix><unit>"`` when that reads back to
    exactly ``value`` (:func:`loopmodel.units.parse_quantity` multiplies by the prefix), else
    as ``"<value> <unit>"``."""
    scaled = value / scale
    text = f"{int(scaled)}" if scaled == int(scaled) else repr(scaled)
    if float(text) * scale == value:
        return f"{text} {prefix}{unit}"
    return f"{int(value) if value == int(value) else repr(value)} {unit}"


def machine_mapping(model) -> dict:
    """A validated :class:`~loopmodel.machine.model.MachineModel` as machine-file data (plain
    YAML types) with explicit units: clock in GHz, sizes in B, bandwidths in B/cy or GB/s,
    penalties and latencies in cy. It loads back to an equal model."""
    q = quantity_text
    # tuples -> lists, plain YAML types; the probe section is written as read (below)
    d = json.loads(json.dumps(dataclasses.asdict(dataclasses.replace(model, probe=None))))
    d["clock"] = q(model.clock, "Hz", 1e9, "G")
    d["cacheline_size"] = q(model.cacheline_size, "B")
    d["in_core"]["simd_width"] = q(model.in_core.simd_width, "B")
    for key in ("load", "store"):
        d["in_core"][key]["bytes_per_cycle"] = q(d["in_core"][key]["bytes_per_cycle"], "B/cy")
    d["in_core"]["latency"] = {k: q(v, "cy") for k, v in model.in_core.latency.items()}
    for k in ("latency_by_width", "throughput_by_width"):  # widths as numbers, as the probe writes them
        d["in_core"][k] = {op: {int(w): v for w, v in row.items()} for op, row in getattr(model.in_core, k).items()}
    for k in ("inner_loop_entry_cy", "inner_loop_remainder_ratio", "nest_entry_cy", "store_forward_latency",
              "taken_branches_per_cycle", "latency_by_width", "throughput_by_width"):
        if d["in_core"].get(k) in (None, {}):
            d["in_core"].pop(k, None)
    for lv in d["memory_hierarchy"]:
        if lv.get("size") is not None:
            lv["size"] = q(lv["size"], "B")
        for k in [k for k, v in lv.items() if v is None]:
            del lv[k]
    for lk, link in zip(d["links"], model.links):
        lk["penalty_load"] = q(lk["penalty_load"], "cy")
        lk["penalty_store"] = q(lk["penalty_store"], "cy")
        bws = ["measured" if b.unit == "measured" else q(b.value, "B/s", 1e9, "G") if b.unit == "B/s"
               else q(b.value, "B/cy") for b in link.bandwidth]
        lk["bandwidth"] = bws if len(bws) > 1 else bws[0]
    for k in d["benchmarks"]["kernels"].values():
        k["element_size"] = q(k["element_size"], "B")
    d["benchmarks"]["measurements"] = {
        lvl: {"cores": list(t.cores), **{name: [q(v, "B/s", 1e9, "G") for v in vals]
                                         for name, vals in t.bandwidths.items()}}
        for lvl, t in model.benchmarks.measurements.items()}
    d.pop("coherence", None)
    if model.coherence is not None:
        d["coherence"] = coherence_mapping(model.coherence)
    d.pop("power", None)
    if model.power is not None:
        d["power"] = power_mapping(model.power)
    d.pop("provenance", None)
    if model.provenance:
        d["provenance"] = {k: {"source": e.source, **({"estimated": True} if e.estimated else {}),
                               **({"reason": e.reason} if e.reason else {})} for k, e in model.provenance.items()}
    d["probe"] = model.probe.raw if model.probe is not None else {}  # the section as read: the same text back
    return d
