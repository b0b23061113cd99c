"""``loopmodel app APP.yml -m MACHINE [--cores 1:N] [--model ...] [-D N=...] [--json]``."""
from __future__ import annotations

import json
import sys

from ..report import application as rep
from ..workflows import app as workflow
from .commands import COMMANDS
from .arguments import add_options, console, options_from_args


def add_parser(sub) -> None:
    """The ``app`` subcommand on ``sub``."""
    ap = sub.add_parser("app", help=COMMANDS["app"].help)
    ap.add_argument("file", help="application YAML file (see examples/pcg/pcg.yml)")
    ap.add_argument("-m", "--machine", required=True, help="built-in machine name or machine YAML file")
    add_options(ap, workflow.AppOptions)
    ap.add_argument("--json", action="store_true", help="print one JSON document")


def run(args) -> int:
    """Predict and render; returns the exit status (errors: LoopmodelError, one line)."""
    pred = workflow.run(args.file, args.machine, options_from_args(workflow.AppOptions, args))
    if args.json:
        json.dump(rep.to_dict(pred), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    rep.render(pred, console(140))
    return 0
