"""argparse arguments generated from an Options dataclass (:mod:`loopmodel.workflows.options`),
and the parsed arguments read back into that dataclass: the command line and the Python API
take their option names, defaults, choices and help from the same fields."""
from __future__ import annotations

import argparse

from ..report.plain import rich_module, text_console
from ..workflows.options import fields, names


class _ArgumentType:
    """An option's ``type`` for argparse: a ValueError's message becomes argparse's one line."""

    def __init__(self, convert):
        self.convert = convert
        self.__name__ = getattr(convert, "__name__", "value")

    def __call__(self, text: str):
        try:
            return self.convert(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None


def _argparse_type(convert):
    if convert in (int, float, str.lower):  # argparse's own messages ("invalid int value: 'x'")
        return convert
    return _ArgumentType(convert)


def add_options(parser, cls, skip: tuple = ()) -> None:
    """Add the arguments of every option field of ``cls`` (but those named in ``skip``) to
    ``parser``, in declaration order."""
    for f in fields(cls):
        if f.name not in skip:
            add_option(parser, f)


def add_option(parser, f) -> None:
    """Add the argument(s) of option field ``f`` to ``parser``."""
    meta = f.metadata
    help_text = argparse.SUPPRESS if meta["hidden"] else meta["help"]
    kind = meta["kind"]
    if kind == "flag":
        parser.add_argument(*meta["flags"], dest=f.name, action="store_true", help=help_text)
    elif kind == "pair":
        group = parser.add_mutually_exclusive_group()
        group.add_argument(*meta["flags"], dest=f.name, action="store_const", const=True, default=None,
                           help=help_text)
        off_flag, off_help = meta["off"]
        group.add_argument(off_flag, dest=f.name, action="store_const", const=False, help=off_help)
    else:
        extra = {"action": "append", "default": []} if kind == "append" else {"default": f.default}
        for key in ("metavar", "choices"):
            if meta[key] is not None:
                extra[key] = meta[key]
        if meta["type"] is not None:
            extra["type"] = _argparse_type(meta["type"])
        parser.add_argument(*meta["flags"], dest=f.name, help=help_text, **extra)


def add_options_around_json(parser, cls, shared_cls, json_help: str, before_json=()) -> None:
    """The arguments of ``cls`` (an analysing command's Options) in the order of ``--help``: the
    options it shares with ``shared_cls`` (its base,
    :class:`~loopmodel.workflows.analyze.AnalysisOptions`), the arguments ``before_json``
    (``(flags, keywords)`` pairs), ``--json`` (``json_help``), then the command's own options."""
    shared = names(shared_cls)
    add_options(parser, cls, skip=tuple(n for n in names(cls) if n not in shared))
    for flags, keywords in before_json:
        parser.add_argument(*flags, **keywords)
    parser.add_argument("--json", action="store_true", help=json_help)
    add_options(parser, cls, skip=shared)


def options_from_args(cls, args: argparse.Namespace, **values):
    """The ``cls`` instance of parsed ``args`` (repeatable options as tuples); ``values`` set
    fields the parser does not hold."""
    out = {}
    for f in fields(cls):
        if f.name in values:
            out[f.name] = values[f.name]
            continue
        value = getattr(args, f.name)
        out[f.name] = tuple(value) if isinstance(value, list) else value
    return cls(**out)


def kernel_and_machine(parser) -> None:
    """The positional kernel and the required ``-m`` of the analysing commands."""
    parser.add_argument("kernel", help="C kernel file, or a Kerncraft YAML kernel description (.yml/.yaml)")
    parser.add_argument("-m", "--machine", required=True, help="built-in machine name or machine YAML file")


def plot_arguments(parser, help_text: str, metavar: str = "FILE") -> None:
    """``--plot FILE`` (a picture, written as a new file) and ``--force`` (overwrite it)."""
    parser.add_argument("--plot", metavar=metavar, help=help_text)
    parser.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


def console(width: int = 120):
    """The console of text reports (:func:`loopmodel.report.plain.text_console`): rich's on a
    terminal (its width), else ``width`` columns of plain text, as rich would write them."""
    return text_console(width)


def progress_bar():
    """A transient rich progress bar on standard error (rich loaded only when one is shown)."""
    return rich_module("progress").Progress(transient=True, console=rich_module("console").Console(stderr=True))
