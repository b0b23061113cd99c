"""``loopmodel machine probe``: measure this host and write its machine model.

    loopmodel machine probe [-o host.yml] [--quick] [--cores 1:N] [--force] [--compiler gcc]
                            [--coherence | --coherence-only] [--power] [--validate]
    loopmodel machine probe --validate-only [--quick] [-o host.yml]

Arguments -> :class:`~loopmodel.workflows.probe.ProbeOptions` -> :func:`loopmodel.workflows.probe.run`
with a progress bar on stderr -> the model to ``-o`` (else stdout; ``--coherence-only`` and
``--validate-only``: to ``-o`` only) and a summary on stderr with the ``self-check:`` block and,
with ``--validate`` / ``--validate-only``, the ``validation:`` block. A full probe whose
self-check leaves measurements uncertain writes nothing (no ``-o``, no stdout, not stored for
``-m host``) and validates nothing unless ``--force``: it prints one line per reason and a
one-line error (exit 2). Errors are one line.
"""
from __future__ import annotations

import sys
from contextlib import contextmanager

from rich.console import Console
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from ..errors import LoopmodelError
from ..fileio.output import check_new_output, write_output
from ..workflows import probe as workflow
from ..workflows.options import fields
from .arguments import add_option, options_from_args


def add_arguments(pr) -> None:
    """The options of ``machine probe`` on the subparser ``pr``.

    ``--coherence`` and ``--coherence-only`` are two switches of
    :class:`~loopmodel.workflows.probe.ProbeOptions` that exclude each other; the generated
    arguments (:func:`loopmodel.cli.arguments.add_options`) know no such group, so they are added
    here into one mutually exclusive group (argparse's message when both are given).
    """
    opts = {f.name: f for f in fields(workflow.ProbeOptions)}
    pr.add_argument("-o", "--output", metavar="FILE.yml",
                    help="write the model here (refuses to overwrite an existing file unless --force); "
                         "without -o it goes to stdout")
    add_option(pr, opts["quick"])
    add_option(pr, opts["cores"])
    for name in ("force", "compiler", "no_store", "power", "validate", "validate_only"):
        add_option(pr, opts[name])
    what = pr.add_mutually_exclusive_group()
    add_option(what, opts["coherence"])
    add_option(what, opts["coherence_only"])


def run(args) -> int:
    """Run ``machine probe`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (output file, options, compiler), and a probe
            whose self-check left measurements uncertain (without ``--force``).
    """
    if args.output:
        check_new_output(args.output, "-o", force=args.force)
    options = options_from_args(workflow.ProbeOptions, args)
    with _progress() as progress:
        result = workflow.run(options, progress)
    if options.coherence_only:
        if args.output:
            write_output(args.output, result.text, "-o", args.force)
        table = result.coherence
        sys.stderr.write(f"coherence table ({len(table.sizes)} sizes, T = {', '.join(map(str, table.threads))}) "
                         f"added to {result.stored}" + (f" and written to {args.output}" if args.output else "")
                         + "\n")
        sys.stderr.write("".join(f"note: {n}\n" for n in table.notes))
        return 0
    if options.validate_only:
        if args.output:
            write_output(args.output, result.text, "-o", args.force)
        sys.stderr.write(f"validation added to {result.stored}"
                         + (f" and written to {args.output}" if args.output else "") + "\n")
        _validation(result.validation)
        return 0
    if result.refused:
        check = result.host_model.self_check
        sys.stderr.write("\n".join(check.lines()) + "\n")
        where = f"written to {args.output}" if args.output else "printed"
        raise LoopmodelError(f"the probe's self-check left {len(check.uncertain)} measurement(s) uncertain, so the "
                             f"model was not {where}{'' if options.no_store else ' nor stored for -m host'}; "
                             "--force writes and stores it anyway, marked uncertain")
    if args.output:
        write_output(args.output, result.text, "-o", args.force)
    else:
        sys.stdout.write(result.text)
    _summary(result.host_model, args.output, result.stored)
    if result.validation is not None:
        _validation(result.validation)
    return 0


@contextmanager
def _progress():
    """The ``progress(what, done, total)`` callback of a rich progress bar on stderr; None when
    stderr is no terminal."""
    if not sys.stderr.isatty():
        yield None
        return
    with Progress(TextColumn("{task.description:<44}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("probe", total=1)

        def progress(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=max(total, 1))

        yield progress


def _summary(model, output: str | None, stored) -> None:
    """A few lines on stderr: where the model went, the fitted rules, the notes."""
    m, fits = model.machine, model.mapping["probe"].get("fits", {})
    chosen = (fits.get("links") or {}).get("chosen") or {}
    lines = [f"machine model written to {output or 'stdout'}" + (f"; kept for '-m host' ({stored})" if stored else ""),
             f"clock {m.clock / 1e9:.3f} GHz; overlap {', '.join(m.overlap)}; "
             f"duplex {chosen.get('duplex', 'n/a')}; memory penalty "
             f"{m.links[-1].penalty_load:.2f} cy/CL; p0 {m.contention_p0:.3g}"]
    lines += [f"note: {n}" for n in model.notes]
    if model.self_check is not None:
        lines += model.self_check.lines()
    sys.stderr.write("\n".join(lines) + "\n")


def _validation(got) -> None:
    """The ``validation:`` block on stderr (as ``machine show`` prints it), then why cases were
    skipped."""
    lines = workflow.validation_lines(got.summary)
    lines += [f"note: skipped {name} in {level}: {why}" for name, level, why in got.skipped]
    sys.stderr.write("\n".join(lines) + "\n")
