"""The command line: one module per command (:mod:`loopmodel.cli.commands`), each parsing its
arguments into the command's Options (:mod:`loopmodel.workflows`), running the workflow and
rendering the result (:mod:`loopmodel.report`). No model logic here.

    loopmodel analyze KERNEL -m MACHINE [-D N=1000] [-p LC -p ECM -p Roofline -p RooflineASM] [--json]
    loopmodel machine list | show NAME | convert KERNCRAFT.yml [-o OUT.yml]
    loopmodel codegen KERNEL [-D N=1000]
    loopmodel sweep STUDY.yml [--workers N | --dask ADDRESS] [-o results.parquet]
"""
from __future__ import annotations

import argparse
import gc
import importlib
import os
import sys

from ..errors import LoopmodelError
from ..fileio.defines import normalize_argv
from ..version import __version__
from .argv import json_file_argv
from .commands import COMMANDS


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every user error
        sys.stderr.write(f"loopmodel: error: {message} (see 'loopmodel --help')\n")
        sys.exit(2)


def command_module(name: str):
    """The module of :mod:`loopmodel.cli` that runs command ``name``.

    The one place the command line imports on demand: a command loads its own workflow and
    what that needs, not every command's (``loopmodel --version`` and ``loopmodel analyze`` do
    not import the measuring, sweeping and OpenMP code; benchmarks/import_time.py).
    """
    return importlib.import_module(f"{__name__}.{COMMANDS[name].module}")


def build_parser(commands=None, listed: bool = True) -> argparse.ArgumentParser:
    """The ``loopmodel`` parser: every command of :data:`~loopmodel.cli.commands.COMMANDS` is listed
    (name and help); those in ``commands`` (default: all) get their arguments, the others stay
    placeholders (enough for ``--help`` and for an unknown command's message). With
    ``listed=False`` the others are left out: a command line that names its command parses
    with that command's parser alone (its help, usage and errors name only itself), and
    building the eleven placeholders (about 1 ms) is saved."""
    p = _Parser(prog="loopmodel", description="Analytic performance models (layer conditions, ECM, Roofline) "
                                                "of C loop kernels.")
    p.add_argument("--version", action="version", version=f"loopmodel {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for name, command in COMMANDS.items():
        if commands is not None and name not in commands:
            if listed:
                sub.add_parser(name, help=command.help)
        elif name == "machine":
            command_module(name).add_parser(sub, _Parser)
        else:
            command_module(name).add_parser(sub)
    return p


def _command(argv: list) -> str | None:
    """The command named by ``argv`` (its first word, when that is a command), or None."""
    return argv[0] if argv and argv[0] in COMMANDS else None


def main(argv=None) -> int:
    """Run ``loopmodel`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status: 0,
    2 for a user error (one line on stderr), 130 when interrupted.

    As the program (``argv`` None: the ``loopmodel`` command, ``python -m loopmodel``) the cyclic
    garbage collector waits while the command's modules load, and what they made is left out of
    its later passes (``gc.freeze``): its full passes over a growing heap of classes and functions
    took about 5 % of a warm ``analyze``. Called with ``argv`` (tests, other programs) the
    collector is left as it is.
    """
    program = argv is None
    if program:
        gc.disable()
    argv = json_file_argv(normalize_argv(list(sys.argv[1:] if argv is None else argv)))
    command = _command(argv)
    parser = build_parser(() if command is None else (command,), listed=command is None)
    if program:
        gc.freeze()
        gc.enable()
    args = parser.parse_args(argv)
    try:
        return _run(parser, args)
    finally:
        _cache_note()


def _run(parser, args) -> int:
    """Run the parsed command: its exit status (see :func:`main`)."""
    try:
        if args.command in COMMANDS:
            return command_module(args.command).run(args)
        parser.print_help()
        return 2
    except LoopmodelError as exc:
        sys.stderr.write(f"loopmodel: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("loopmodel: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. '| head': stop quietly, and let the exit flush go nowhere
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


def _cache_note() -> None:
    """The per-user cache's note, once at the end of every command, on stderr: the unsafe
    cache folder for which this process bypassed the cache, and how to fix it
    (:func:`loopmodel.cache.problem`; the cache itself never prints). Looked up among the
    loaded modules: a command that never loaded the cache found nothing, and does not pay
    for importing it."""
    cache = sys.modules.get(f"{__package__.rpartition('.')[0]}.cache")
    note = cache.problem() if cache is not None else None
    if note:
        try:
            sys.stderr.write(f"loopmodel: note: {note}\n")
        except (OSError, ValueError):
            pass
