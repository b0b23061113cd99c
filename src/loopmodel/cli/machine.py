"""``loopmodel machine list | show NAME | convert KERNCRAFT.yml [-o OUT.yml] | probe``."""
from __future__ import annotations

import dataclasses
import json

import yaml

from ..fileio.machine_files import builtin_names, convert_kerncraft, load_machine, read_yaml, validate
from ..fileio.machine_writer import coherence_mapping, power_mapping
from ..fileio.output import check_new_output, write_new_output
from . import probe as cli_probe


def add_parser(sub, parser_class) -> None:
    """The ``machine`` subcommand (list, show, convert, probe) on ``sub``."""
    mch = sub.add_parser("machine", help="list, show, convert or probe machine models")
    mch.set_defaults(machine_parser=mch)
    msub = mch.add_subparsers(dest="machine_command", parser_class=parser_class)
    msub.add_parser("list", help="list built-in machine models")
    sh = msub.add_parser("show", help="print a machine model (built-in name or file) in loopmodel YAML")
    sh.add_argument("name")
    cv = msub.add_parser("convert", help="convert a Kerncraft machine file to loopmodel YAML")
    cv.add_argument("file")
    cv.add_argument("-o", "--output", help="write here (refuses to overwrite an existing file)")
    pr = msub.add_parser("probe", help="measure this host and write its machine model (also kept for '-m host')")
    cli_probe.add_arguments(pr)


def run(args) -> int:
    """Run ``machine list|show|convert|probe``; returns the exit status."""
    if args.machine_command == "list":
        for n in builtin_names():
            m = load_machine(n)
            print(f"{n:28s} {m.model_name or m.description}")
        return 0
    if args.machine_command == "show":
        m = load_machine(args.name)
        print(yaml.safe_dump(_dump(m), sort_keys=False, width=110, default_flow_style=None), end="")
        return 0
    if args.machine_command == "probe":
        return cli_probe.run(args)
    if args.machine_command == "convert":
        if args.output:
            check_new_output(args.output, "-o")
        data = read_yaml(args.file)
        conv = convert_kerncraft(data, args.file)
        validate(conv, args.file)
        text = yaml.safe_dump(conv, sort_keys=False, width=110, default_flow_style=None)
        if args.output:
            write_new_output(args.output, text, "-o")
        else:
            print(text, end="")
        return 0
    args.machine_parser.print_help()
    return 2


def _q(value: float, unit: str, scale: float = 1.0, prefix: str = "") -> str:
    """A quantity that reads back to exactly ``value`` (units.parse_quantity multiplies by the prefix)."""
    scaled = value / scale
    text = f"{int(scaled)}" if scaled == int(scaled) else repr(scaled)
    if float(text) * scale == value:
        return f"{text} {prefix}{unit}"
    return f"{int(value) if value == int(value) else repr(value)} {unit}"


def _dump(m) -> dict:
    """A validated model back to YAML data with explicit units; loads back to an equal model."""
    d = json.loads(json.dumps(dataclasses.asdict(m)))  # tuples -> lists, plain YAML types
    d["clock"] = _q(m.clock, "Hz", 1e9, "G")
    d["cacheline_size"] = _q(m.cacheline_size, "B")
    d["in_core"]["simd_width"] = _q(m.in_core.simd_width, "B")
    for key in ("load", "store"):
        d["in_core"][key]["bytes_per_cycle"] = _q(d["in_core"][key]["bytes_per_cycle"], "B/cy")
    d["in_core"]["latency"] = {k: _q(v, "cy") for k, v in m.in_core.latency.items()}
    for lv in d["memory_hierarchy"]:
        if lv.get("size") is not None:
            lv["size"] = _q(lv["size"], "B")
        for k in [k for k, v in lv.items() if v is None]:
            del lv[k]
    for lk, link in zip(d["links"], m.links):
        lk["penalty_load"] = _q(lk["penalty_load"], "cy")
        lk["penalty_store"] = _q(lk["penalty_store"], "cy")
        bws = ["measured" if b.unit == "measured" else _q(b.value, "B/s", 1e9, "G") if b.unit == "B/s"
               else _q(b.value, "B/cy") for b in link.bandwidth]
        lk["bandwidth"] = bws if len(bws) > 1 else bws[0]
    for k in d["benchmarks"]["kernels"].values():
        k["element_size"] = _q(k["element_size"], "B")
    d["benchmarks"]["measurements"] = {
        lvl: {"cores": list(t.cores), **{name: [_q(v, "B/s", 1e9, "G") for v in vals]
                                         for name, vals in t.bandwidths.items()}}
        for lvl, t in m.benchmarks.measurements.items()}
    d.pop("coherence", None)
    if m.coherence is not None:
        d["coherence"] = coherence_mapping(m.coherence)
    d.pop("power", None)
    if m.power is not None:
        d["power"] = power_mapping(m.power)
    return d
