"""Options of the commands, declared once.

Each command's options are a frozen dataclass (``AnalyzeOptions``, ``ScalingOptions``, ...)
whose fields are made with :func:`option`: the default, the help text and the command-line
spelling of each option live in the field. The command line (:mod:`loopmodel.cli.arguments`)
generates its arguments from these fields; the Python API and study files build the same
dataclass from keyword values with :func:`from_values`, which reads a value as the command
line reads its text (same conversions, choices and messages). So the two cannot drift.
"""
from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping

from ..errors import ApiTypeError, ApiValueError

#: the kinds of option (how a value is given): a switch (False or True), a pair of switches
#: (None, True or False), a repeatable option (a tuple of texts), or one value
KINDS = ("flag", "pair", "append", "value")


def option(default, help: str, *flags: str, metavar: str | None = None, choices: tuple | None = None,
           type=None, off: tuple | None = None, hidden: bool = False):
    """A field of an Options dataclass.

    Args:
        default: the value when the option is not given (``False`` makes a switch; a tuple a
            repeatable option).
        help: the help text of the command line (``--help``).
        flags: the command-line spellings, the first long one naming it in messages
            (``"--cache-predictor", "-P"``).
        metavar, choices: as argparse's.
        type: converts the text of a value (``int``, ``float``, or a function that raises
            ValueError with a one-line message); None keeps the text.
        off: ``(flag, help)`` of the switch that sets False, for an option of three states
            (None: the default, True: ``flags``, False: ``off``).
        hidden: left out of ``--help``.
    """
    if off is not None:
        kind = "pair"
    elif default is False:
        kind = "flag"
    elif isinstance(default, tuple):
        kind = "append"
    else:
        kind = "value"
    meta = {"help": help, "flags": flags, "metavar": metavar, "choices": choices, "type": type, "off": off,
            "hidden": hidden, "kind": kind}
    return dataclasses.field(default=default, metadata=meta)


def function_option():
    """The ``--function NAME`` field of a command that reads a kernel file (a new field per class)."""
    return option(None, "the function of the kernel file that is the kernel (default: the one function with loops; "
                        "main is left out)", "--function", metavar="NAME")


def include_option():
    """The ``-I DIR`` field of a command that reads a kernel file (a new field per class)."""
    return option((), "folder searched for the kernel's #include \"...\" and <...> headers, after the kernel's own "
                      "(repeatable; standard headers are skipped)", "-I", "--include-dir", metavar="DIR")


def fields(cls) -> tuple:
    """The option fields of an Options dataclass, in declaration order."""
    return tuple(f for f in dataclasses.fields(cls) if "kind" in f.metadata)


def names(cls) -> tuple:
    """The option names (keyword names) of an Options dataclass."""
    return tuple(f.name for f in fields(cls))


def flag_text(f) -> str:
    """How argparse names the option in messages: its flags joined by ``/``."""
    return "/".join(f.metadata["flags"])


def from_values(cls, command: str, values: Mapping):
    """``cls`` with ``values`` (option name -> value) set; the rest keep their defaults.

    A value is read as the command line reads its text: a number or text for one value
    (converted by the field's ``type`` and checked against its choices), True/False for a
    switch, True/False/None for a pair of switches, a value or a list for a repeatable option;
    None leaves an option at its default.

    Raises:
        ApiTypeError: an unknown name (the valid ones listed), or a value of a type the option
            cannot take (a list for one value, text for a switch), naming the option.
        ApiValueError: a value the option refuses, with the command line's message
            (``argument --unit/-u: invalid choice: 's' (choose from ...)``).
    """
    known = {f.name: f for f in fields(cls)}
    out = {}
    for name, value in values.items():
        if name not in known:
            raise ApiTypeError(f"unknown option '{name}' of {command} (choose {', '.join(sorted(known))})")
        out[name] = read_value(known[name], value)
    return cls(**out)


def read_value(f, value):
    """The value of field ``f`` for ``value`` (see :func:`from_values`; same errors)."""
    kind = f.metadata["kind"]
    if kind == "flag":
        if not isinstance(value, bool):
            raise ApiTypeError(f"{f.name}: expected true or false, got {value!r}")
        return value
    if kind == "pair":
        if value is not None and not isinstance(value, bool):
            raise ApiTypeError(f"{f.name}: expected one of true, false or null, got {value!r}")
        return value
    if value is None:
        return f.default
    if kind == "append":
        items = value if isinstance(value, (list, tuple)) else [value]
        return tuple(_one_value(f, v) for v in items)
    return _one_value(f, value)


def _one_value(f, value):
    """One value of ``f`` read from its text, as argparse reads it."""
    if isinstance(value, (list, tuple, dict)) or value is None:
        raise ApiTypeError(f"{f.name}: expected a single value, got {json.dumps(value, default=str)}")
    if not isinstance(value, (str, int, float)):
        raise ApiTypeError(f"{f.name}: expected a str, a number, a bool or None, got {type(value).__name__}")
    text = json.dumps(value) if isinstance(value, bool) else str(value)
    convert = f.metadata["type"]
    if convert is not None:
        try:
            text = convert(text)
        except ValueError as exc:
            if convert in (int, float):
                raise ApiValueError(f"argument {flag_text(f)}: invalid {convert.__name__} value: '{text}'") from None
            raise ApiValueError(f"argument {flag_text(f)}: {exc}") from None
    choices = f.metadata["choices"]
    if choices is not None and text not in choices:
        raise ApiValueError(f"argument {flag_text(f)}: invalid choice: {text!r} (choose from "
                            f"{', '.join(repr(c) for c in choices)})")
    return text
