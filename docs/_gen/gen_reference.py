"""Reference pages generated from the code at build time (mkdocs-gen-files):

* ``reference/cli/*.md``: one page per command from loopmodel's argparse parser
  (``loopmodel.cli.build_parser``): usage, every argument with its value, default and help;
* ``reference/json/*.md``: one page per JSON schema of ``docs/schema/`` (every key with its
  type and description), linking the schema file.

Nothing here is committed output: the pages always match the installed code.
"""
from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

import mkdocs_gen_files

os.environ["COLUMNS"] = "100"  # argparse wraps the usage line at the terminal width

from loopmodel.cli import build_parser  # noqa: E402
from loopmodel.cli.commands import COMMANDS  # noqa: E402

#: command -> the how-to page that shows it at work (relative to reference/cli/)
GUIDES = {
    "analyze": ("../../getting-started.md", "Getting started"),
    "scaling": ("../../how-to/scaling.md", "Scaling and saturation"),
    "energy": ("../../how-to/energy.md", "Energy to solution"),
    "compare": ("../../how-to/compare.md", "Compare machine models"),
    "app": ("../../how-to/scaling.md#a-sequence-of-loops-loopmodel-app", "Scaling and saturation"),
    "bench": ("../../how-to/validate.md", "Validate a prediction"),
    "validate": ("../../how-to/validate.md", "Validate a prediction"),
    "roofline": ("../../how-to/roofline.md", "Measured Roofline"),
    "omp": ("../../how-to/omp.md", "OpenMP programs"),
    "sweep": ("../../how-to/sweeps.md", "Sweeps and studies"),
    "machine": ("../../getting-started.md#a-model-of-your-own-machine", "Getting started"),
    "measure": ("../../how-to/scaling.md#measured-scaling", "Scaling and saturation"),
    "codegen": ("../../how-to/validate.md#the-program-that-is-measured", "Validate a prediction"),
}


def _cell(text) -> str:
    """Text for a Markdown table cell (bars escaped, angle brackets as entities)."""
    return (str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
            .replace("|", "\\|").replace("\n", " "))


def _value(action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices and not isinstance(action, argparse._SubParsersAction):
        return " \\| ".join(f"`{c}`" for c in action.choices)
    return f"`{action.metavar or action.dest.upper()}`"


def _default(action) -> str:
    d = action.default
    if d in (None, False, [], argparse.SUPPRESS, "") or action.nargs == 0:
        return ""
    return f"`{d}`"


def _arguments(parser) -> list:
    formatter = parser._get_formatter()
    rows = ["| argument | value | default | description |", "|---|---|---|---|"]
    for action in parser._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)) or action.help == argparse.SUPPRESS:
            continue
        names = ", ".join(f"`{o}`" for o in action.option_strings) or f"`{action.metavar or action.dest}`"
        required = " (required)" if action.required and action.option_strings else ""
        text = formatter._expand_help(action) if action.help else ""
        rows.append(f"| {names}{required} | {_value(action)} | {_default(action)} | {_cell(text)} |")
    return rows


def _usage(parser) -> list:
    return ["```text", parser.format_usage().strip(), "```"]


def _command_page(name: str, parser) -> str:
    out = [f"# loopmodel {name}", "", COMMANDS[name].help[:1].upper() + COMMANDS[name].help[1:] + ".", ""]
    if name in GUIDES:
        link, title = GUIDES[name]
        out += [f"How to use it: [{title}]({link}).", ""]
    out += _usage(parser) + [""]
    subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    if not subs:
        out += _arguments(parser)
    for sub in subs:
        helps = {a.dest: a.help for a in sub._choices_actions}
        for sub_name, sub_parser in sub.choices.items():
            out += [f"## loopmodel {name} {sub_name}", "", (helps.get(sub_name) or "") + ".", ""]
            out += _usage(sub_parser) + [""]
            rows = _arguments(sub_parser)
            out += rows if len(rows) > 2 else ["No arguments."]
            out.append("")
    out += ["", "Generated from the command's parser (`loopmodel " + name + " --help` prints the same).", ""]
    return "\n".join(out)


def cli_pages() -> None:
    """``reference/cli/index.md`` and one page per command."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    index = ["# Command line", "", "Every command, generated from loopmodel's argument parser:", "",
             "| command | what it does |", "|---|---|"]
    for name, command in COMMANDS.items():
        index.append(f"| [`loopmodel {name}`]({name}.md) | {_cell(command.help)} |")
        with mkdocs_gen_files.open(f"reference/cli/{name}.md", "w") as fh:
            fh.write(_command_page(name, sub.choices[name]))
    index += ["", "Exit status of every command: 0 success, 1 some points of a sweep failed (their rows "
              "hold the error), 2 bad input (one line on stderr naming the file, the line and what is "
              "wrong), 130 interrupted.", ""]
    with mkdocs_gen_files.open("reference/cli/index.md", "w") as fh:
        fh.write("\n".join(index))


def _type(node: dict, defs: dict) -> str:
    if "$ref" in node:
        return "object"
    if "const" in node:
        return f"`{json.dumps(node['const'])}`"
    if "enum" in node:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in node["enum"])
    if "anyOf" in node:
        return " or ".join(dict.fromkeys(_type(n, defs) for n in node["anyOf"]))
    t = node.get("type", "any")
    if t == "array":
        return f"list of {_type(node.get('items', {}), defs)}"
    return t if isinstance(t, str) else " or ".join(t)


def _children(node: dict, defs: dict):
    """The object schema below ``node`` (through references, lists, anyOf, mappings), or None."""
    if "$ref" in node:
        return defs[node["$ref"].split("/")[-1]]
    for key in ("anyOf", "oneOf"):
        for n in node.get(key, ()):
            found = _children(n, defs)
            if found is not None:
                return found
    if node.get("type") == "array":
        return _children(node.get("items", {}), defs)
    if isinstance(node.get("additionalProperties"), dict):
        return _children(node["additionalProperties"], defs)
    return node if "properties" in node else None


def _suffix(node: dict, defs: dict) -> str:
    for n in [node] + node.get("anyOf", []):
        if n.get("type") == "array":
            return "[]"
        if isinstance(n.get("additionalProperties"), dict):
            return ".{key}"
    return ""


def _rows(node: dict, defs: dict, path: str, seen: tuple, out: list) -> None:
    required = set(node.get("required", ()))
    for key, sub in node.get("properties", {}).items():
        full = f"{path}.{key}" if path else key
        desc = sub.get("description") or _children(sub, defs) and _children(sub, defs).get("description") or ""
        out.append(f"| `{full}` | {_type(sub, defs)} | {'yes' if key in required else 'no'} | {_cell(desc)} |")
        child = _children(sub, defs)
        ref = id(child)
        if child is not None and ref not in seen and len(seen) < 6:
            _rows(child, defs, full + _suffix(sub, defs), seen + (ref,), out)


def json_pages() -> None:
    """``reference/json/index.md`` and one page per schema of ``docs/schema``."""
    schemas = sorted((Path(__file__).parent.parent / "schema").glob("*.schema.json"))
    index = ["# JSON schemas", "", "One JSON Schema per `--json` document, generated from the declared document "
             "types (`loopmodel.report.doctypes`); the key-naming rule: [JSON output](../json-output.md).", "",
             "| document | schema |", "|---|---|"]
    for path in schemas:
        name = path.name.removesuffix(".schema.json")
        schema = json.loads(path.read_text())
        defs = schema.get("$defs", {})
        rows = ["| key | type | required | description |", "|---|---|---|---|"]
        _rows(schema, defs, "", (), rows)
        page = [f"# {schema.get('title', name)}", "", " ".join(schema.get("description", "").replace("``", "`").split()),
                "", f"Schema file: [`docs/schema/{path.name}`](../../schema/{path.name}) (JSON Schema "
                "draft 2020-12, generated from `loopmodel.report.doctypes`).", ""] + rows + [""]
        with mkdocs_gen_files.open(f"reference/json/{name}.md", "w") as fh:
            fh.write("\n".join(page))
        index.append(f"| [{_cell(schema.get('title', name))}]({name}.md) | "
                     f"[`{path.name}`](../../schema/{path.name}) |")
    with mkdocs_gen_files.open("reference/json/index.md", "w") as fh:
        fh.write("\n".join(index) + "\n")


cli_pages()
json_pages()
