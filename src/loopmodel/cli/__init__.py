"""The command line: one module per command, each parsing its arguments into the command's
Options (:mod:`loopmodel.workflows`), running the workflow and rendering the result
(:mod:`loopmodel.report`). No model logic here.

    loopmodel analyze KERNEL -m MACHINE [-D N=1000] [-p LC -p ECM -p Roofline -p RooflineASM] [--json]
    loopmodel machine list | show NAME | convert KERNCRAFT.yml [-o OUT.yml]
    loopmodel codegen KERNEL [-D N=1000]
    loopmodel sweep STUDY.yml [--workers N | --dask ADDRESS] [-o results.parquet]
"""
from __future__ import annotations

import argparse
import os
import sys

from ..errors import LoopmodelError
from ..fileio.defines import normalize_argv
from ..version import __version__
from . import analyze, app, bench, codegen, energy, machine, measure, omp, roofline, scaling, sweep, validate

#: the commands (each module: ``add_parser(sub)`` and ``run(args)``), in the order ``--help``
#: lists them
COMMANDS = {"analyze": analyze, "scaling": scaling, "codegen": codegen, "app": app, "measure": measure,
            "bench": bench, "energy": energy, "validate": validate, "roofline": roofline, "omp": omp, "sweep": sweep,
            "machine": machine}


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every user error
        sys.stderr.write(f"loopmodel: error: {message} (see 'loopmodel --help')\n")
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The ``loopmodel`` parser with every command of :data:`COMMANDS`."""
    p = _Parser(prog="loopmodel", description="Analytic performance models (layer conditions, ECM, Roofline) "
                                                "of C loop kernels.")
    p.add_argument("--version", action="version", version=f"loopmodel {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for name, module in COMMANDS.items():
        if name == "machine":
            module.add_parser(sub, _Parser)
        else:
            module.add_parser(sub)
    return p


def main(argv=None) -> int:
    """Run ``loopmodel`` with ``argv`` (default: ``sys.argv[1:]``); returns the exit status: 0,
    2 for a user error (one line on stderr), 130 when interrupted."""
    argv = analyze.json_file_argv(normalize_argv(list(sys.argv[1:] if argv is None else argv)))
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command in COMMANDS:
            return COMMANDS[args.command].run(args)
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
