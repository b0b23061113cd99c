"""``loopmodel machine list | show NAME | diff A B | convert KERNCRAFT.yml [-o OUT.yml] | probe``: arguments
-> :mod:`loopmodel.workflows.machine` (``probe``: :mod:`loopmodel.cli.probe`) -> stdout or ``-o``."""
from __future__ import annotations

import sys

from ..fileio.output import check_new_output, write_new_output
from ..workflows import machine as workflow
from . import probe as cli_probe
from .commands import COMMANDS


def add_parser(sub, parser_class) -> None:
    """The ``machine`` subcommand (list, show, convert, probe) on ``sub``; its subcommands'
    parsers are ``parser_class`` (the command line's one-line errors)."""
    mch = sub.add_parser("machine", help=COMMANDS["machine"].help)
    mch.set_defaults(machine_parser=mch)
    msub = mch.add_subparsers(dest="machine_command", parser_class=parser_class)
    msub.add_parser("list", help="list built-in machine models")
    sh = msub.add_parser("show", help="print a machine model (built-in name or file) in loopmodel YAML")
    sh.add_argument("name")
    df = msub.add_parser("diff", help="every figure of two machine models side by side (a probed host against a "
                                      "bundled model)")
    df.add_argument("first")
    df.add_argument("second")
    cv = msub.add_parser("convert", help="convert a Kerncraft machine file to loopmodel YAML")
    cv.add_argument("file")
    cv.add_argument("-o", "--output", help="write here (refuses to overwrite an existing file)")
    pr = msub.add_parser("probe", help="measure this host and write its machine model (also kept for '-m host')")
    cli_probe.add_arguments(pr)


def run(args) -> int:
    """Run ``machine list|show|convert|probe``; returns the exit status (errors: LoopmodelError,
    one line)."""
    if args.machine_command == "list":
        models = workflow.builtin_models()
        width = max(len(d) for _, d, _ in models)
        for name, description, summary in models:
            print(f"{name:28s} {description:{width}s}  {summary}")
        return 0
    if args.machine_command == "show":
        sys.stdout.write(workflow.show(args.name))
        return 0
    if args.machine_command == "diff":
        rows = workflow.diff(args.first, args.second)
        width = max(len(r[0]) for r in rows)
        wa = max(len(args.first), *(len(r[1]) for r in rows))
        print(f"{'figure':{width}s}  {args.first:{wa}s}  {args.second}")
        for key, a, b, _ in rows:
            mark = " " if a == b else "*"
            print(f"{key:{width}s}  {a:{wa}s}  {b}{'' if mark == ' ' else '  *'}")
        return 0
    if args.machine_command == "probe":
        return cli_probe.run(args)
    if args.machine_command == "convert":
        if args.output:
            check_new_output(args.output, "-o")
        text = workflow.convert(args.file)
        if args.output:
            write_new_output(args.output, text, "-o")
        else:
            sys.stdout.write(text)
        return 0
    args.machine_parser.print_help()
    return 2
