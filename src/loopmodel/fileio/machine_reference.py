"""Reference of every machine-file key, generated from the machine-model dataclasses.

The schema is declared once, by :mod:`loopmodel.machine.model` (field names are the YAML
keys, defaults the file's defaults, ``Annotated`` metadata the constraints and the unit
conversions of :mod:`loopmodel.machine.fields`); this module writes it out as Markdown:
one table per section with each key, its type and unit, whether it is required (with
the default otherwise) and the text of the section's docstring that describes it.

``python -m loopmodel.fileio.machine_reference [FILE]`` prints it (or writes ``FILE``);
``docs/machine-file.md`` is its output, checked by the tests.
"""
from __future__ import annotations

import dataclasses
import inspect
import re
import sys
import typing


from ..machine import fields as fx
from ..machine.model import BenchmarkKernel, MachineModel
from ..machine.provenance import PROVENANCE_KEY_DOCS, FigureSource

#: the unit of each value conversion (:mod:`loopmodel.machine.fields`), as a file writes it
_CONVERSION_UNITS = {
    "quantity_frequency": "Hz (with a unit: '2.7 GHz')",
    "quantity_size": "B (with a unit: '32 KiB')",
    "quantity_bandwidth_cy": "B/cy (with a unit: '64 B/cy')",
    "quantity_bandwidth_s": "B/s (with a unit: '63.4 GB/s')",
    "quantity_cycles": "cy (with a unit: '4 cy')",
    "optional_size": "B (with a unit: '32 KiB')",
    "penalty": "cy per CL (with a unit: '4 cy'; a plain 0 allowed)",
    "latencies": f"cy per operation type, each {fx.LATENCY}",
    "throughputs": f"instructions/cy per operation type, each {fx.THROUGHPUT}",
    "link_bandwidths": f"B/cy ({fx.BANDWIDTH_CY}) or B/s ({fx.BANDWIDTH_S}; at the clock also "
                       f"{fx.BANDWIDTH_CY}), with a unit, or 'measured'",
}


#: conversions that check a section without changing its shape (its keys are the dataclass's)
_SAME_SHAPE = ("hierarchy",)


def _unwrap(tp):
    """``(base type, conversion function or None, constraints, optional)`` of an annotation."""
    conv, cons, optional = None, [], False
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            base, *meta = typing.get_args(tp)
            for m in meta:
                if hasattr(m, "fn"):
                    conv = m.fn
                elif isinstance(m, fx.Gt):
                    cons.append(f"> {m.gt}")
                elif isinstance(m, fx.Ge):
                    cons.append(f">= {m.ge}")
                elif isinstance(m, fx.Le):
                    cons.append(f"<= {m.le}")
                elif isinstance(m, fx.Range):
                    cons.append(f"physical range {m}")
            tp = base
        elif origin is typing.Union and type(None) in typing.get_args(tp):
            optional = True
            args = [a for a in typing.get_args(tp) if a is not type(None)]
            tp = args[0]
        else:
            return tp, conv, cons, optional


def _type_name(tp) -> str:
    origin = typing.get_origin(tp)
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(tp))
    if dataclasses.is_dataclass(tp):
        return f"mapping ({tp.__name__})"
    if origin in (list, tuple):
        args = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return "list" + (f" of {_type_name(_unwrap(args[0])[0])}" if args else "")
    if origin is dict:
        return f"mapping of {_type_name(_unwrap(typing.get_args(tp)[1])[0])}"
    return {str: "text", float: "number", int: "integer", bool: "true/false", list: "list",
            dict: "mapping"}.get(tp, getattr(tp, "__name__", str(tp)))


#: the papers the docstrings cite by file name: (the short name the reference prints, the title)
PAPERS = {
    "kerncraft-tool-paper.txt": ("Kerncraft paper", "J. Hammer, J. Eitzinger, G. Hager, G. Wellein: Kerncraft: "
                                 "A Tool for Analytic Performance Modeling of Loop Kernels"),
    "cross-architecture-machine-models.txt": ("cross-architecture paper", "J. Hofmann et al.: Bridging the "
                                              "Architecture Gap: Abstracting Performance-Relevant Properties "
                                              "of Modern Server Processors"),
    "ecm-model-slides.txt": ("ECM slides", "G. Hager: Performance Engineering, tutorial slides, ISC 2015 "
                             "(the ECM model)"),
    "benchmark-based-coherence-model.txt": ("coherence paper", "B. Putigny, B. Goglin, D. Barthou: A "
                                            "Benchmark-based Performance Model for Memory-bound HPC "
                                            "Applications"),
    "roofline-measurement-thesis.txt": ("Roofline thesis", "R. Steinmann: Applying the Roofline Model (thesis, 2012)"),
}

_ROLE = re.compile(r":(?:class|mod|func|meth|data|attr):`(~?)([^`]+)`")


def plain(text: str) -> str:
    """Docstring text as Markdown on one line: Sphinx roles and ````literals```` as `` `code` ``
    (``~a.b.C`` as ``C``), the papers' file names as their short names (:data:`PAPERS`)."""
    text = " ".join(text.split())
    text = _ROLE.sub(lambda m: f"`{m.group(2).rsplit('.', 1)[-1] if m.group(1) else m.group(2)}`", text)
    text = text.replace("``", "`")
    for name, (short, _) in PAPERS.items():
        text = text.replace(name, short)
    return text


def _attributes(cls) -> dict:
    """``{field: description}`` from the ``Attributes:`` section of ``cls``'s docstring
    (Google style: ``name: text`` at the section's indent, continued on deeper lines)."""
    lines = (inspect.getdoc(cls) or "").splitlines()
    out, name, indent = {}, None, None
    for line in lines[lines.index("Attributes:") + 1:] if "Attributes:" in lines else ():
        depth = len(line) - len(line.lstrip())
        if line.strip() and depth == 0:
            break
        indent = depth if indent is None and line.strip() else indent
        entry = re.match(r"(\w+)(?: \([^)]*\))?: (.*)", line.strip()) if depth == indent else None
        if entry:
            name = entry.group(1)
            out[name] = entry.group(2)
        elif name and line.strip():
            out[name] += " " + line.strip()
    return out


def _description(cls, name: str) -> str:
    """The description of field ``name`` from ``cls``'s ``Attributes:`` section, as Markdown.

    Raises:
        ValueError: the section does not describe ``name`` (every key must be documented).
    """
    text = _attributes(cls).get(name)
    if not text:
        raise ValueError(f"{cls.__name__}.{name}: no entry in the docstring's Attributes section")
    return plain(text).replace("|", "\\|")


def _default(f) -> str:
    if f.default is not dataclasses.MISSING:
        return "" if f.default in ("", None) else f"`{f.default!r}`"
    if f.default_factory is not dataclasses.MISSING:
        value = f.default_factory()
        return "" if not value or dataclasses.is_dataclass(value) else f"`{value!r}`"
    return ""


def _nested(tp):
    """The dataclass a field's values are (directly, or as list items / mapping values), or None."""
    if dataclasses.is_dataclass(tp):
        return tp
    origin = typing.get_origin(tp)
    args = [a for a in typing.get_args(tp) if a is not Ellipsis]
    if origin in (list, tuple) and args:
        return _nested(_unwrap(args[0])[0])
    if origin is dict and len(args) == 2:
        return _nested(_unwrap(args[1])[0])
    return None


def _paths(cls, path: str, found: dict) -> dict:
    """``{dataclass: [key paths]}`` of every section under ``cls`` (a class may sit at several)."""
    found.setdefault(cls, []).append(path)
    hints = typing.get_type_hints(cls, include_extras=True)
    for f in dataclasses.fields(cls):
        tp, conv, _, _ = _unwrap(hints[f.name])
        sub = _nested(tp) if conv is None or conv.__name__ in _SAME_SHAPE else None
        if sub is not None and sub not in found:
            _paths(sub, _key_path(path, f.name, tp), found)
        elif sub is not None:
            found[sub].append(_key_path(path, f.name, tp))
    return found


def _key_path(path: str, name: str, tp) -> str:
    item = "[]" if typing.get_origin(tp) in (list, tuple) else "{name}" if typing.get_origin(tp) is dict else ""
    return f"{path}.{name}{item}" if path else f"{name}{item}"


def _written_keys() -> dict:
    """conversion name -> (key rows of :mod:`loopmodel.machine.fields`, dataclass written as-is
    below the section or None, its key path)."""
    return {"coherence_section": (fx.COHERENCE_KEY_DOCS, None, ""),
            "power_section": (fx.POWER_KEY_DOCS, None, ""),
            "provenance_section": (PROVENANCE_KEY_DOCS, FigureSource, "provenance{figure}"),
            "benchmark_tables": (fx.BENCHMARK_KEY_DOCS, BenchmarkKernel, "benchmarks.kernels{name}")}


def _written(name: str, conv, out: list) -> tuple:
    """A section whose file form a conversion reads: its docstring, up to ``Raises:``, and the
    table of its keys where :mod:`loopmodel.machine.fields` declares them. Returns the
    dataclass written as-is inside it and its key path, or ``(None, "")``."""
    doc = (inspect.getdoc(conv) or "").split("\nRaises:")[0].strip()
    out += [f"## `{name}` (as written in a file)", "", plain(doc), ""]
    rows, inner, path = _written_keys().get(conv.__name__, ((), None, ""))
    if rows:
        out += ["| key | type | unit / constraint | required | default | description |", "|---|---|---|---|---|---|"]
        out += [f"| `{k}` | {t} | {u} | {'yes' if req else 'no'} | {d} | {text.replace('|', chr(92) + '|')} |"
                for k, t, u, req, d, text in rows]
        out.append("")
    return inner, path


def _section(cls, path: str, out: list, seen: set, paths: dict) -> None:
    """Append the table of ``cls`` (keys under ``path``) and then those of its nested sections."""
    if cls in seen:
        return
    seen.add(cls)
    hints = typing.get_type_hints(cls, include_extras=True)
    summary = plain((inspect.getdoc(cls) or "").split("\n\n")[0])
    title = ", ".join(f"`{p}`" for p in paths.get(cls, [path]))
    out += [f"## {title} ({cls.__name__})", "", summary, "",
            "| key | type | unit / constraint | required | default | description |",
            "|---|---|---|---|---|---|"]
    nested, written = [], []
    for f in dataclasses.fields(cls):
        tp, conv, cons, optional = _unwrap(hints[f.name])
        required = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        unit = _CONVERSION_UNITS.get(getattr(conv, "__name__", ""), "")
        text = _description(cls, f.name)
        typ = _type_name(tp) + (" or null" if optional else "")
        out.append(f"| `{f.name}` | {typ} | {'; '.join([unit] + cons if unit else cons)} | "
                   f"{'yes' if required else 'no'} | {_default(f)} | {text} |")
        sub = _nested(tp) if conv is None or conv.__name__ in _SAME_SHAPE else None
        if sub is not None:
            nested.append((sub, _key_path(path, f.name, tp)))
        elif conv is not None and _nested(tp) is not None:
            written.append((_key_path(path, f.name, tp), conv))
    out.append("")
    for sub, sub_path in nested:
        _section(sub, sub_path, out, seen, paths)
    for name, conv in written:
        inner, inner_path = _written(name, conv, out)
        if inner is not None:
            _section(inner, inner_path, out, seen, paths)


def reference() -> str:
    """The Markdown reference of every machine-file key (``docs/machine-file.md``)."""
    out = ["# Machine-file reference", "",
           "Generated by `python -m loopmodel.fileio.machine_reference` from the machine-model dataclasses",
           "(`loopmodel.machine.model`); do not edit by hand. Keys not listed are errors. Values with a",
           "unit are written with it (`2.7 GHz`, `32 KiB`, `64 B/cy`, `63.4 GB/s`) and held in base units",
           "(Hz, B, B/cy, B/s, cy).", ""]
    _section(MachineModel, "", out, set(), _paths(MachineModel, "", {}))
    out[7] = out[7].replace("## ``", "## top level")
    out += ["", "## Papers", ""] + [f"* {short}: {title}" for short, title in PAPERS.values()]
    return "\n".join(out).rstrip("\n") + "\n"


def print_or_write(text: str, argv: list | None = None) -> int:
    """The ``main`` of a generated document: print ``text``, or write it to the file given as
    the only argument (``argv``, default ``sys.argv[1:]``); returns the exit status 0."""
    argv = sys.argv[1:] if argv is None else argv
    if argv:
        with open(argv[0], "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main(argv: list | None = None) -> int:
    """Print the reference, or write it to the file given as the only argument."""
    return print_or_write(reference(), argv)


if __name__ == "__main__":
    raise SystemExit(main())
