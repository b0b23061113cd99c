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
import contextlib
import gc
import importlib
import os
import signal
import sys

from ..errors import LoopmodelError, Stopped, stop_reason
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


#: signals that ask a program to end: they stop a command as a Ctrl-C (SIGINT) does
STOP_SIGNALS = ("SIGTERM", "SIGHUP")


@contextlib.contextmanager
def stop_signals():
    """SIGTERM and SIGHUP raise :class:`~loopmodel.errors.Stopped` (a KeyboardInterrupt) in the
    main thread while the command runs, so it stops as for a Ctrl-C: its ``finally`` blocks run
    (a Dask cluster closed, temporary files removed) and nothing half-written is left. A signal
    the caller ignores (``nohup``) stays ignored; after the first, further ones are ignored
    while the command cleans up (SIGKILL still ends it). The handlers before are put back on
    exit. Outside the main thread (no signal handlers there) nothing changes.
    """
    previous, raised = {}, []

    def stop(signum, _frame):
        if not raised:
            raised.append(signum)
            raise Stopped(signum, signal.Signals(signum).name)

    for name in STOP_SIGNALS:
        signum = getattr(signal, name, None)  # Windows has no SIGHUP
        try:
            if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
                previous[signum] = signal.signal(signum, stop)
        except ValueError:  # not the main thread
            break
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv=None) -> int:
    """Run ``loopmodel`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status: 0,
    2 for a user error (one line on stderr); stopped by a signal, one line and 128 + its number:
    130 for SIGINT (Ctrl-C, "interrupted"), 143 for SIGTERM and 129 for SIGHUP ("stopped by
    SIGTERM", :func:`stop_signals`). Whatever the outcome, the cache's note ends the output
    where this process ran without the per-user cache (:func:`_cache_note`).

    As the program (``argv`` None: the ``loopmodel`` command, ``python -m loopmodel``) the cyclic
    garbage collector waits while the command's modules load, and what they made is left out of
    its later passes (``gc.freeze``): its full passes over a growing heap of classes and functions
    took about 5 % of a warm ``analyze``. Called with ``argv`` (tests, other programs) the
    collector is left as it is.
    """
    with stop_signals():
        try:
            return _main(argv)
        except LoopmodelError as exc:
            sys.stderr.write(f"loopmodel: {exc}\n")
            return exc.exit_code
        except KeyboardInterrupt as exc:  # SIGINT, and SIGTERM and SIGHUP (stop_signals)
            reason, status = stop_reason(exc)
            sys.stderr.write(f"loopmodel: {reason}\n")
            return status
        except BrokenPipeError:  # e.g. '| head': stop quietly, and let the exit flush go nowhere
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            except (OSError, ValueError):
                pass
            return 0
        finally:
            _cache_note()


def _main(argv) -> int:
    """Parse ``argv`` (None: the program's) and run its command (:func:`main`)."""
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
    if args.command in COMMANDS:
        return command_module(args.command).run(args)
    parser.print_help()
    return 2


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
