"""``loopmodel machine probe``: measure this host and write its machine model.

    loopmodel machine probe [-o host.yml] [--quick] [--cores 1:N] [--force] [--compiler gcc]
                            [--coherence | --coherence-only] [--power]

Parses the options, runs :func:`loopmodel.measure.probe.run_probe` with a progress bar on
stderr, builds the model (:func:`loopmodel.workflows.hostmodel.build_host_model`), writes it (``-o``,
else stdout) and keeps it as this host's model for ``-m host``. ``--coherence`` adds the MESI
transition table (benchmark-based-coherence-model.txt §IV) to the probe;
``--coherence-only`` measures only that table and adds it to (or replaces it in) the stored
``-m host`` model, keeping everything else. ``--power`` adds the chip power model fitted to
RAPL package power (:mod:`loopmodel.measure.power_probe`). Errors are one line.
"""
from __future__ import annotations

import sys


def add_arguments(pr) -> None:
    """The options of ``machine probe`` on the subparser ``pr``."""
    pr.add_argument("-o", "--output", metavar="FILE.yml",
                    help="write the model here (refuses to overwrite an existing file unless --force); "
                         "without -o it goes to stdout")
    pr.add_argument("--quick", action="store_true",
                    help="fewer sizes, kernels, core counts and repetitions (about a minute on 2 cores)")
    pr.add_argument("--cores", metavar="RANGE", help="core counts for the bandwidth tables: 1:N (default 1:all "
                                                     "CPUs this process may use), 1,2,4 or N")
    pr.add_argument("--force", action="store_true", help="overwrite an existing -o file")
    pr.add_argument("--compiler", default="gcc", help="C compiler for the benchmarks (default gcc)")
    pr.add_argument("--no-store", action="store_true",
                    help="do not keep the model as this host's '-m host' model")
    pr.add_argument("--power", action="store_true",
                    help="also measure package power (Linux powercap/RAPL) of a streaming kernel at 1..N cores, at "
                         "several clocks where cpufreq lets the clock be set, and fit the chip power model W0 + "
                         "(W1·f + W2·f²)·n into the model's power section (a note where no counters are readable)")
    what = pr.add_mutually_exclusive_group()
    what.add_argument("--coherence", action="store_true",
                      help="also measure the MESI transition table (load/store of a chunk in state M, E, S, I at "
                           "1..N threads, 4 KiB to 4x the last-level cache) into the model's coherence section")
    what.add_argument("--coherence-only", action="store_true",
                      help="measure only the MESI transition table and add it to (or replace it in) the stored "
                           "'-m host' model, keeping everything else in it")


def run(args) -> int:
    """Run ``machine probe`` for parsed ``args``; returns the exit status.

    Raises:
        LoopmodelError: one-line user errors (output file, options, compiler).
    """
    from ..fileio.host_models import store_host_model
    from ..fileio.machine_writer import UNITS_COMMENT, machine_text
    from ..fileio.output import check_new_output, write_output
    from ..workflows.hostmodel import build_host_model
    from ..measure.probe import ProbeOptions, run_probe

    if args.output:
        check_new_output(args.output, "-o", force=args.force)
    from .. import toolchain

    toolchain.chosen_compiler(args.compiler)  # before minutes of work
    cores = _cores(args.cores)
    if getattr(args, "coherence_only", False):
        from ..errors import DefineError
        if args.no_store:
            raise DefineError("--coherence-only updates the stored '-m host' model; it cannot go with --no-store")
        if getattr(args, "power", False):
            raise DefineError("--power is part of a full probe; it cannot go with --coherence-only")
        return _coherence_only(args, ProbeOptions.make(cores, args.quick, args.compiler, coherence=True))
    options = ProbeOptions.make(cores, args.quick, args.compiler, getattr(args, "coherence", False),
                                getattr(args, "power", False))
    data = _with_progress(lambda progress: run_probe(options, progress))
    model = build_host_model(data)
    header = [f"loopmodel machine model of the host '{data.host.get('hostname')}' ({data.topology.model_name}), "
              f"measured by '{model.mapping['probe'].get('command', 'loopmodel machine probe')}' on "
              f"{data.host.get('date')} in {data.host.get('duration_s')} s. The probe section holds every "
              "raw figure and fit.", UNITS_COMMENT]
    text = machine_text(model.mapping, header)
    if args.output:
        write_output(args.output, text, "-o", args.force)
    else:
        sys.stdout.write(text)
    stored = None if args.no_store else store_host_model(text)
    _summary(model, args.output, stored)
    return 0


def _cores(text: str | None):
    from ..errors import DefineError
    from ..fileio.defines import count_list
    from ..measure.probe import usable_cpus

    if text is None:
        return None
    cores = count_list(text, "--cores")
    if min(cores) < 1:
        raise DefineError(f"--cores {text}: core counts must be >= 1")
    most = usable_cpus()
    if max(cores) > most:
        raise DefineError(f"--cores {text}: this process may use {most} CPUs")
    return cores


def _with_progress(work):
    """Run ``work(progress)`` with a rich progress bar on stderr (none when stderr is no terminal)."""
    if not sys.stderr.isatty():
        return work(None)
    from rich.console import Console
    from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

    with Progress(TextColumn("{task.description:<44}"), BarColumn(), TextColumn("{task.completed}/{task.total}"),
                  TimeElapsedColumn(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("probe", total=1)

        def progress(what: str, done: int, total: int) -> None:
            bar.update(task, description=what, completed=done, total=max(total, 1))

        return work(progress)


def _summary(model, output: str | None, stored) -> None:
    """A few lines on stderr: where the model went, the fitted rules, the notes."""
    m, fits = model.machine, model.mapping["probe"].get("fits", {})
    chosen = (fits.get("links") or {}).get("chosen") or {}
    lines = [f"machine model written to {output or 'stdout'}" + (f"; kept for '-m host' ({stored})" if stored else ""),
             f"clock {m.clock / 1e9:.3f} GHz; overlap {', '.join(m.overlap)}; "
             f"duplex {chosen.get('duplex', 'n/a')}; memory penalty "
             f"{m.links[-1].penalty_load:.2f} cy/CL; p0 {m.contention_p0:.3g}"]
    lines += [f"note: {n}" for n in model.notes]
    sys.stderr.write("\n".join(lines) + "\n")


def _coherence_only(args, options) -> int:
    """``--coherence-only``: measure the transition table and put it into the stored host model.

    Everything else in the stored file stays as it was (its comment lines and sections); the
    file is replaced atomically. With ``-o`` the updated model is written there too.

    Raises:
        MachineError: no stored host model, or it cannot be read or written (one line).
        ToolError: the benchmark fails (one line).
    """
    from ..errors import MachineError
    from ..fileio.host_models import resolve_host
    from ..fileio.machine_files import read_yaml
    from ..fileio.reader import read_text
    from ..fileio.machine_writer import coherence_mapping, machine_text
    from ..fileio.machine_schema import validate_mapping
    from ..fileio.output import replace_atomically, write_output
    from ..measure.probe import probe_coherence

    path = resolve_host()
    text = read_text(path, "host model", MachineError)
    mapping = read_yaml(str(path), text.encode("utf-8"))
    validate_mapping(mapping, str(path))
    table, info = _with_progress(lambda progress: probe_coherence(options, _stored_llc(mapping), progress))
    mapping["coherence"] = coherence_mapping(table)
    mapping["probe"] = {**(mapping.get("probe") or {}), "coherence": info}
    header = [ln[2:] if ln.startswith("# ") else ln[1:] for ln in text.splitlines() if ln.startswith("#")]
    new = machine_text(mapping, header)
    if args.output:
        write_output(args.output, new, "-o", args.force)
    try:
        replace_atomically(path, new)
    except OSError as exc:
        raise MachineError(f"cannot update the stored host model: {exc.strerror or exc}", file=str(path)) from None
    sys.stderr.write(f"coherence table ({len(table.sizes)} sizes, T = {', '.join(map(str, table.threads))}) added to "
                     f"{path}" + (f" and written to {args.output}" if args.output else "") + "\n")
    sys.stderr.write("".join(f"note: {n}\n" for n in table.notes))
    return 0


def _stored_llc(mapping: dict):
    """The last cache's effective capacity (bytes) a stored probe measured, else its size in the model."""
    eff = (((mapping.get("probe") or {}).get("fits") or {}).get("effective_capacity_B") or {})
    if eff:
        return int(list(eff.values())[-1])
    from ..units import parse_quantity

    caches = [lv for lv in mapping.get("memory_hierarchy", []) if lv.get("level") != "MEM" and lv.get("size")]
    return int(parse_quantity(caches[-1]["size"], "size")) if caches else None
