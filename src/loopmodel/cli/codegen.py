"""``loopmodel codegen KERNEL.c [-D N=1000] [--assume-aligned BYTES]``: prints the C program."""
from __future__ import annotations

import sys

from ..workflows import codegen as workflow
from .commands import COMMANDS
from .arguments import add_options, options_from_args


def add_parser(sub) -> None:
    """The ``codegen`` subcommand on ``sub``."""
    cg = sub.add_parser("codegen", help=COMMANDS["codegen"].help)
    cg.add_argument("kernel", help="C kernel file")
    add_options(cg, workflow.CodegenOptions)


def run(args) -> int:
    """Print the program; returns the exit status (errors: LoopmodelError, one line)."""
    sys.stdout.write(workflow.run(args.kernel, options_from_args(workflow.CodegenOptions, args)))
    return 0
