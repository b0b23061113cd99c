"""Command line: parses arguments and calls the library; no model logic here.

    loopmodel analyze KERNEL -m MACHINE [-D N=1000] [-p LC -p ECM -p Roofline -p RooflineASM] [--json]
    loopmodel machine list | show NAME | convert KERNCRAFT.yml [-o OUT.yml]
    loopmodel codegen KERNEL [-D N=1000]
    loopmodel sweep STUDY.yml [--workers N | --dask ADDRESS] [-o results.parquet]
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from ..version import __version__
from ..errors import LoopmodelError
from ..fileio.output import check_new_output, write_new_output

MODEL_NAMES = {"lc": "LC", "ecm": "ECM", "roofline": "Roofline", "layerconditions": "LC", "rooflineasm": "RooflineASM",
               # Kerncraft's model names: ECMData (data-transfer terms), ECMCPU (in-core part), RooflineFLOP
               "ecmdata": "ECM", "ecmcpu": "ECM", "rooflineflop": "Roofline"}
#: what Kerncraft's model names show in loopmodel's output (a note with the result)
PEER_MODEL_NOTES = {
    "ecmdata": "-p ECMData (Kerncraft): the data-transfer terms are the ECM contributions after T_nOL "
               "(T_L1L2, T_L2L3, T_L3MEM in the ECM line); in-core part from the analytic model unless --incore is given",
    "ecmcpu": "-p ECMCPU (Kerncraft): the in-core part is T_OL || T_nOL, the first two terms of the ECM line",
}
#: Kerncraft's -i/--incore-model values -> loopmodel's --incore
INCORE_NAMES = {"auto": "auto", "llvm-mca": "llvm-mca", "osaca": "osaca", "analytic": "analytic"}
#: suffixes of kernel files: after ``--json`` such a name is the kernel, not the JSON output file
KERNEL_SUFFIXES = (".c", ".yml", ".yaml")


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, like every user error
        sys.stderr.write(f"loopmodel: error: {message} (see 'loopmodel --help')\n")
        sys.exit(2)


#: subcommands that live in a module of their own (``add_parser(sub)`` and ``run(args)``), in
#: the order ``--help`` lists them
COMMAND_MODULES = {"measure": ".measure", "bench": ".bench", "energy": ".energy",
                   "validate": ".validate", "roofline": ".roofline", "omp": ".omp",
                   "sweep": ".sweep"}


def multicore_args(p, models: tuple, default_cores: str) -> None:
    """The multicore options ``scaling`` and ``energy`` share: ``--cores``, ``--model`` (one of
    ``models``, default contention), ``--p0``, ``--placement``, ``--data-in``."""
    p.add_argument("--cores", "-c", default=None, metavar="RANGE",
                   help=f"core counts: 1:N (default {default_cores}), 1,2,4 or N")
    p.add_argument("--model", choices=models, default="contention",
                   help="multicore model (default contention, paper eq. 5; saturation: min(n P1, P_sat))")
    p.add_argument("--p0", type=float, help="contention parameter p0 (default: the machine model's)")
    p.add_argument("--placement", choices=("first-touch", "one-domain"), default="first-touch",
                   help="memory pages in every ccNUMA domain used (default) or all in one domain")
    p.add_argument("--data-in", default="MEM", metavar="LEVEL", help="memory level the data are in (default MEM)")


def build_parser() -> argparse.ArgumentParser:
    from ..report.output_units import UNITS

    p = _Parser(prog="loopmodel", description="Analytic performance models (layer conditions, ECM, Roofline) "
                                                "of C loop kernels.")
    p.add_argument("--version", action="version", version=f"loopmodel {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    a = sub.add_parser("analyze", help="analyze a kernel on a machine model",
                       epilog="Kerncraft spellings accepted: -D/--define N 1000, -P/--cache-predictor LC|SIM, "
                              "-i/--incore-model OSACA|LLVM-MCA, --unit cy/It|It/s|FLOP/s|cy/CL, -p ECMData "
                              "(= ECM, data-transfer terms; analytic in-core unless -i is given), -p ECMCPU (= ECM, "
                              "in-core part T_OL || T_nOL), -p RooflineFLOP (= Roofline), --json FILE (writes a new "
                              "file; an existing one is not overwritten).")
    _analysis_args(a, json_file=True)
    a.add_argument("-p", "--pmodel", action="append", default=[], metavar="MODEL",
                   help="LC, ECM, Roofline, RooflineASM (repeatable; default: LC, ECM and Roofline); Kerncraft's "
                        "ECMData, ECMCPU and RooflineFLOP are aliases (see below)")
    a.add_argument("--cores", "-c", type=int, default=1, help="active cores (default 1)")
    a.add_argument("--unit", "-u", default="cy/CL", choices=UNITS, type=_unit_name,
                   help="unit of predictions (default cy/CL; case-insensitive, so Kerncraft's cy/It, It/s work)")
    a.add_argument("-v", "--verbose", action="count", default=0)
    a.add_argument("--no-progress", action="store_true", help="no progress bar for sweeps")
    a.add_argument("--plot", metavar="FILE", help="with a -D range: write the ECM contributions over the size, "
                                                  "layer-condition transitions marked (PNG, SVG or PDF by extension)")
    a.add_argument("--force", action="store_true", help="overwrite an existing --plot file")

    sc = sub.add_parser("scaling", help="predicted performance per core count (ECM + contention or saturation model)")
    _analysis_args(sc)
    multicore_args(sc, ("contention", "saturation", "both"), "1:cores per socket")
    sc.add_argument("--measured", metavar="JSON", help="measured points ('loopmodel measure --json' output) to "
                                                       "compare with (table, error, plot)")
    sc.add_argument("--fit-p0", action="store_true", help="fit p0 to the --measured points")
    sc.add_argument("--plot", metavar="PNG", help="write a scaling plot (matplotlib)")
    sc.add_argument("--force", action="store_true", help="overwrite an existing --plot file")

    cg = sub.add_parser("codegen", help="print the compilable C program loopmodel builds around a kernel")
    cg.add_argument("kernel", help="C kernel file")
    cg.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                    help="size constant (one value each)")
    _assume_aligned_arg(cg)

    ap = sub.add_parser("app", help="predict an application: a sequence of loop kernels (YAML)")
    ap.add_argument("file", help="application YAML file (see examples/pcg/pcg.yml)")
    ap.add_argument("-m", "--machine", required=True, help="built-in machine name or machine YAML file")
    ap.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                    help="override a shared size of the application file")
    ap.add_argument("--cores", "-c", default="1", metavar="RANGE", help="core counts: 1:N, 1,2,4 or N (default 1)")
    ap.add_argument("--model", choices=("contention", "saturation"), default="contention")
    ap.add_argument("--p0", type=float, help="contention parameter p0 (default: the machine model's)")
    ap.add_argument("--clock", metavar="FREQ", help="core clock override, e.g. '2.2 GHz'")
    ap.add_argument("--incore", choices=("auto", "llvm-mca", "osaca", "analytic"), default="auto")
    ap.add_argument("--no-cache", action="store_true", help="do not read or write the per-user cache")
    ap.add_argument("--trust-machine-flags", action="store_true",
                    help="use the machine file's compiler flags and name without the allow-list check")
    ap.add_argument("--json", action="store_true", help="print one JSON document")

    import importlib

    for module in COMMAND_MODULES.values():
        importlib.import_module(module, __package__).add_parser(sub)

    p.machine_parser = _machine_parser(sub)
    return p


def _machine_parser(sub):
    """The ``machine`` subcommand (list, show, convert, probe); returns its parser."""
    mch = sub.add_parser("machine", help="list, show, convert or probe machine models")
    msub = mch.add_subparsers(dest="machine_command", parser_class=_Parser)
    msub.add_parser("list", help="list built-in machine models")
    sh = msub.add_parser("show", help="print a machine model (built-in name or file) in loopmodel YAML")
    sh.add_argument("name")
    cv = msub.add_parser("convert", help="convert a Kerncraft machine file to loopmodel YAML")
    cv.add_argument("file")
    cv.add_argument("-o", "--output", help="write here (refuses to overwrite an existing file)")
    pr = msub.add_parser("probe", help="measure this host and write its machine model (also kept for '-m host')")
    from . import probe as cli_probe

    cli_probe.add_arguments(pr)
    return mch


def _analysis_args(a, json_file: bool = False) -> None:
    """Options shared by ``analyze`` and ``scaling``: kernel, machine, sizes, predictors, in-core
    (``json_file``: ``--json`` may name an output file, see :func:`json_file_argv`)."""
    a.add_argument("kernel", help="C kernel file, or a Kerncraft YAML kernel description (.yml/.yaml)")
    a.add_argument("-m", "--machine", required=True, help="built-in machine name or machine YAML file")
    a.add_argument("-D", "--define", action="append", default=[], metavar="NAME=VALUE",
                   help="size constant: N=1000, N=100:2000:100 (stop included), or Kerncraft's "
                        "'-D N 1000' / '--define N 1000' / N=10-1000:5[log[10]]")
    a.add_argument("--clock", metavar="FREQ", help="core clock override, e.g. '2.2 GHz' (core-cycle work scales "
                                                   "with it; memory bandwidth in B/s does not)")
    a.add_argument("--cache-factor", type=float, default=1.0,
                   help="effective fraction of each cache (default 1.0; 0.5 = C/2 rule): of its size for layer "
                        "conditions, of its sets for the cache simulation")
    a.add_argument("--scalar", action="store_true", help="analytic in-core model without SIMD")
    ra = a.add_mutually_exclusive_group()
    ra.add_argument("--reassociation", dest="reassociate", action="store_const", const=True, default=None,
                    help="analytic in-core model: reductions split into partial sums (default: as the compiler "
                         "and flags in use would; gcc/clang only with -ffast-math or -Ofast, icc/icx by default)")
    ra.add_argument("--no-reassociation", dest="reassociate", action="store_const", const=False,
                    help="reductions keep their loop-carried dependency (no partial sums)")
    a.add_argument("--mem-bw", metavar="BW",
                   help="memory bus bandwidth for the ECM memory link, e.g. '107.1 GB/s': all bytes moved, "
                        "write-allocate traffic included, used as given. Benchmarks such as STREAM report "
                        "less (copy counts 16 of the 24 B it moves per element: multiply its figure by 1.5); "
                        "the machine file's figures are converted so (JSON bandwidth_source)")
    a.add_argument("--lc-variable", metavar="NAME", help="size constant to solve layer conditions for")
    a.add_argument("--cache-predictor", "-P", choices=("lc", "sim"), default="lc", type=str.lower,
                   help="data traffic from layer conditions (default; cache simulation where they do not "
                        "apply) or from cache simulation (case-insensitive: Kerncraft's LC, SIM; Kerncraft's "
                        "default is SIM)")
    a.add_argument("--sweeps", choices=("repeated", "single"), default="repeated",
                   help="the kernel runs in repeated sweeps (default: data that fit in a cache stay there "
                        "between sweeps) or once (single: every array comes from memory)")
    a.add_argument("--array-alignment", metavar="BYTES", default="4096 B",
                   help="cache simulation: arrays start at multiples of this (default '4096 B', a page; layer "
                        "conditions do not depend on it)")
    a.add_argument("--array-padding", metavar="BYTES", default="0 B",
                   help="cache simulation: array i (declaration order) starts i times this many bytes after its "
                        "aligned position (default '0 B')")
    a.add_argument("--incore", "-i", "--incore-model", choices=tuple(INCORE_NAMES), default=None, type=_incore_name,
                   help="in-core time from llvm-mca or OSACA on the compiled kernel, or from the analytic "
                        "model (default auto: llvm-mca, else OSACA, else analytic; case-insensitive, so "
                        "Kerncraft's OSACA and LLVM-MCA work; IACA is not supported); --scalar selects the "
                        "analytic model and is an error with llvm-mca or osaca (their SIMD is the compiler's: see "
                        "--compiler-flags)")
    a.add_argument("--compiler", help="compiler for the in-core analysis (default: the machine file's gcc entry, e.g. "
                                      "gcc-12, else gcc; the cross compiler for another ISA)")
    a.add_argument("--compiler-flags", metavar="FLAGS", help="override the machine model's compiler flags")
    a.add_argument("--asm-block", metavar="LABEL", help="analyze the assembly loop at this label")
    a.add_argument("--pointer-increment", metavar="BYTES", type=int,
                   help="bytes the loop's pointers advance per pass of the assembly loop")
    _assume_aligned_arg(a)
    a.add_argument("--trust-machine-flags", action="store_true",
                   help="use the machine file's compiler flags and compiler name without the allow-list check "
                        "(they run on this host: only for files you trust)")
    a.add_argument("--no-cache", action="store_true", help="do not read or write the per-user cache")
    a.add_argument("--nt-stores", action="store_true",
                   help="stores to write-only arrays are non-temporal: they bypass the caches, no write-allocate, "
                        "each line written goes to memory (layer conditions and cache simulation)")
    json_help = ("print one JSON document; for -D ranges one document per line as it is computed (JSON Lines)")
    if json_file:
        json_help += ("; '--json FILE' or '--json=FILE' (Kerncraft's spelling) writes that to FILE, a new file (an "
                      "existing one is not overwritten), and prints the text report; the word after --json is FILE "
                      "unless it starts with '-', ends in .c/.yml/.yaml, or names an existing file other than *.json")
        a.add_argument("--json-file", metavar="FILE", help=argparse.SUPPRESS)
    a.add_argument("--json", action="store_true", help=json_help)


def _unit_name(text: str) -> str:
    """``--unit``, case-insensitive (Kerncraft writes cy/It, It/s) -> the spelling of report.units.UNITS."""
    from ..report.output_units import UNITS

    return {u.lower(): u for u in UNITS}.get(text.lower(), text)


def _incore_name(text: str) -> str:
    """``--incore``/``-i``, case-insensitive (Kerncraft's OSACA, LLVM-MCA); IACA is refused in one line."""
    if text.lower() == "iaca":
        raise argparse.ArgumentTypeError("IACA is not supported (choose OSACA, LLVM-MCA or analytic)")
    return INCORE_NAMES.get(text.lower(), text)


def json_file_argv(argv: list) -> list:
    """``analyze ... --json FILE`` / ``--json=FILE`` (Kerncraft's spelling) -> ``--json --json-file FILE``.

    The word after ``--json`` is the output file unless it starts with ``-``, ends in a kernel
    suffix (:data:`KERNEL_SUFFIXES`) or names an existing file other than ``*.json`` (then it is
    the kernel, and ``--json`` prints JSON on stdout as before). Other commands are unchanged.
    """
    import os

    if not argv or argv[0] != "analyze":
        return argv
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a.startswith("--json="):
            out += ["--json", "--json-file", a.split("=", 1)[1]]
        elif a == "--json" and i + 1 < len(argv) and _is_json_file(argv[i + 1], os.path):
            out += ["--json", "--json-file", argv[i + 1]]
            i += 1
        else:
            out.append(a)
        i += 1
    return out


def _is_json_file(word: str, path) -> bool:
    if word.startswith("-") or word.lower().endswith(KERNEL_SUFFIXES):
        return False
    return word.lower().endswith(".json") or not path.exists(word)


def main(argv=None) -> int:
    from ..fileio.defines import normalize_argv

    argv = json_file_argv(normalize_argv(list(sys.argv[1:] if argv is None else argv)))
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "analyze":
            return cmd_analyze(args)
        if args.command == "machine":
            return cmd_machine(args, parser)
        if args.command == "codegen":
            return cmd_codegen(args)
        if args.command == "scaling":
            return cmd_scaling(args)
        if args.command == "app":
            return cmd_app(args)
        if args.command in COMMAND_MODULES:
            import importlib

            return importlib.import_module(COMMAND_MODULES[args.command], __package__).run(args)
        parser.print_help()
        return 2
    except LoopmodelError as exc:
        sys.stderr.write(f"loopmodel: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        sys.stderr.write("loopmodel: interrupted\n")
        return 130
    except BrokenPipeError:  # e.g. '| head': stop quietly, and let the exit flush go nowhere
        import os

        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 0


def _models(names) -> tuple:
    from ..errors import LoopmodelError

    if not names:
        return ("LC", "ECM", "Roofline")
    out = []
    for n in names:
        key = n.lower().replace("-", "").replace("_", "")
        if key not in MODEL_NAMES:
            raise LoopmodelError(f"unknown model '{n}' (choose LC, ECM, Roofline, RooflineASM)")
        if MODEL_NAMES[key] not in out:
            out.append(MODEL_NAMES[key])
    return tuple(out)


def _peer_models(names) -> tuple:
    """``(notes, incore default)`` for Kerncraft's model names among ``-p`` (:data:`PEER_MODEL_NOTES`):
    ``-p ECMData`` (alone or with LC) needs no in-core analysis, like Kerncraft's, so the analytic
    model supplies T_OL unless ``--incore`` is given; otherwise the default is ``auto``."""
    keys = [n.lower().replace("-", "").replace("_", "") for n in names]
    notes = tuple(dict.fromkeys(PEER_MODEL_NOTES[k] for k in keys if k in PEER_MODEL_NOTES))
    data_only = "ecmdata" in keys and all(k in ("ecmdata", "lc", "layerconditions") for k in keys)
    return notes, "analytic" if data_only else "auto"


def _prepare(args, models: tuple, cores: int, notes: tuple = (), incore_default: str = "auto"):
    """Kernel, machine and options from the shared analysis arguments -> ``(Analyzer, points)``;
    ``points`` is a lazy :class:`~loopmodel.fileio.defines.Sweep` (``len``, indexing, iteration).
    ``notes`` go with every result; ``incore_default`` applies when ``--incore`` is not given."""
    from ..workflows.analysis import Analyzer, Options
    from ..errors import DefineError
    from ..fileio.defines import sweep
    from ..fileio.kernel_yaml import load_kernel_file
    from ..machine.fields import BANDWIDTH_S
    from ..units import parse_quantity

    if args.cache_factor <= 0 or args.cache_factor > 1:
        raise DefineError("--cache-factor must be in (0, 1]")
    mem_bw = None
    if args.mem_bw:
        try:
            mem_bw = BANDWIDTH_S.check(parse_quantity(args.mem_bw, "bandwidth_s"))
        except ValueError as exc:
            raise DefineError(f"--mem-bw: {exc}") from None
    alignment = _bytes_option("--array-alignment", args.array_alignment, minimum=1)
    padding = _bytes_option("--array-padding", args.array_padding, minimum=0)
    # a loopmodel.Kernel (Python API) carries what load_kernel_file reads
    parts = getattr(args.kernel, "parts", None)
    kernel, defaults, text, kernel_notes = parts() if parts else load_kernel_file(args.kernel)
    incore = args.incore or incore_default
    if text is None and (incore in ("llvm-mca", "osaca") or "RooflineASM" in models):
        what = f"--incore {incore}" if incore in ("llvm-mca", "osaca") else "-p RooflineASM"
        raise DefineError(f"{what} compiles the kernel and needs C code; a YAML kernel description has "
                          "none (use --incore analytic, or the C kernel)", file=str(args.kernel))
    points = sweep(args.define, defaults)
    unknown = sorted(points.names() - set(kernel.constants))
    if unknown:
        raise DefineError(f"-D {unknown[0]}: the kernel has no constant '{unknown[0]}' "
                          f"(constants: {', '.join(sorted(kernel.constants)) or 'none'})")
    machine = _machine(args)
    from ..fileio.host_models import machine_notes

    notes = tuple(notes) + machine_notes(machine_name(args.machine), machine)
    opts = Options(models=models, cores=cores, cache_factor=args.cache_factor, vectorize=not args.scalar,
                   reassociate=args.reassociate, memory_bandwidth=mem_bw, solve_for=args.lc_variable,
                   cache_predictor=args.cache_predictor, array_alignment=alignment, array_padding=padding,
                   nt_stores=args.nt_stores, sweeps=args.sweeps, incore=incore,
                   compiler=args.compiler, compiler_flags=args.compiler_flags, asm_block=args.asm_block,
                   pointer_increment=args.pointer_increment, use_cache=not args.no_cache,
                   kernel_text=text, notes=tuple(notes) + kernel_notes,
                   incore_defines=points.largest() if len(points) > 1 else None,
                   assume_aligned=_alignment_option(args.assume_aligned), trust_machine_flags=args.trust_machine_flags,
                   machine_file=machine_name(args.machine))
    return Analyzer(kernel, machine, opts), points


def prepare_analyze(args):
    """``loopmodel analyze``'s parsed arguments -> ``(Analyzer, points, models)``: the models of
    ``-p`` (Kerncraft's names mapped, their notes and in-core default applied), the analyzer and
    the lazy size points of :func:`_prepare`. The CLI and :func:`loopmodel.analyze` both call it.

    Raises:
        LoopmodelError: a bad kernel, machine, define or option (one line).
    """
    notes, incore_default = _peer_models(args.pmodel)
    models = _models(args.pmodel)
    analyzer, points = _prepare(args, models, args.cores, notes, incore_default)
    return analyzer, points, models


def cmd_analyze(args) -> int:
    if args.json_file:
        check_new_output(args.json_file, "--json")
    if args.plot:
        from ..report.figures import check_picture_path

        check_picture_path(args.plot)
        check_new_output(args.plot, "--plot", args.force)
    analyzer, points, models = prepare_analyze(args)
    if args.plot:
        args.plot_variable = _plot_variable(points, models)
    if len(points) > 1:
        return _analyze_sweep(args, analyzer, points)
    res = analyzer.run(points[0])
    if args.json:
        from ..report.json_report import to_dict

        text = json.dumps(to_dict(res), indent=1) + "\n"
        if not args.json_file:
            sys.stdout.write(text)
            return 0
        write_new_output(args.json_file, text, "--json")
    from rich.console import Console

    from ..report.text import render

    render(res, Console(highlight=False, width=None if sys.stdout.isatty() else 120), args.unit, args.verbose)
    return 0


def _analyze_sweep(args, analyzer, points) -> int:
    """A ``-D`` range, streamed: each point is written (and flushed) as soon as it is computed --
    a text row, or with ``--json`` one complete JSON document per line (JSON Lines) -- so that
    neither the points nor the results of the sweep are held in memory."""
    from ..report.json_report import to_dict
    from ..report.text import SweepPrinter

    out = sys.stdout
    plot_points = []
    if args.json and not args.json_file:
        def emit(res):
            out.write(json.dumps(to_dict(res)) + "\n")
            out.flush()
        close = None
    elif args.json_file:  # the text rows on stdout, the JSON Lines into the new file at the end
        lines = []
        printer = SweepPrinter(out.write, out.flush, args.unit, points.largest())

        def emit(res):
            lines.append(json.dumps(to_dict(res)) + "\n")
            printer.add(res)

        def close():
            printer.close()
            write_new_output(args.json_file, "".join(lines), "--json")
    else:
        printer = SweepPrinter(out.write, out.flush, args.unit, points.largest())
        emit, close = printer.add, printer.close
    if args.plot:
        emit = _collecting(emit, plot_points, args.plot_variable)
    # rows on a terminal show the progress themselves; the bar is for output sent elsewhere
    if not args.no_progress and sys.stderr.isatty() and not out.isatty():
        from rich.console import Console
        from rich.progress import Progress

        with Progress(transient=True, console=Console(stderr=True)) as prog:
            task = prog.add_task("analyzing", total=len(points))
            for pt in points:
                emit(analyzer.run(pt))
                prog.advance(task)
    else:
        for pt in points:
            emit(analyzer.run(pt))
    if close:
        close()
    if args.plot:
        _write_ecm_plot(args, plot_points, analyzer, points[0])
        if not args.json or args.json_file:
            out.write(f"plot written to {args.plot}\n")
    return 0


def _collecting(emit, plot_points: list, variable: str):
    """``emit`` that also keeps the :class:`~loopmodel.report.ecm_plot.EcmPoint` of each result."""
    from ..report.ecm_plot import ecm_point

    def both(res):
        emit(res)
        plot_points.append(ecm_point(res, variable))
    return both


def _plot_variable(points, models: tuple) -> str:
    """The size constant ``analyze --plot`` draws over: the one ``-D`` range of ``points``.

    Raises:
        DefineError: no range, more than one, or no ECM among the models (one line).
    """
    from ..errors import DefineError

    ranged = [name for name, seq in points.values.items() if len(seq) > 1]
    if not ranged:
        raise DefineError("--plot needs a -D range (e.g. -D N=100:10000:100)")
    if len(ranged) > 1:
        raise DefineError(f"--plot draws over one size: {' and '.join(ranged)} both vary (give one -D range)")
    if "ECM" not in models:
        raise DefineError("--plot draws the ECM contributions: add -p ECM")
    return ranged[0]


def _write_ecm_plot(args, plot_points: list, analyzer, first: dict) -> None:
    """Write the ECM picture of a sweep (:func:`loopmodel.report.ecm_plot.plot`) to ``args.plot``;
    the title names the kernel, the machine and the sizes that do not vary (``first``: a point).

    Raises:
        LoopmodelError: the file cannot be written (one line).
    """
    import os

    from ..report.ecm_plot import plot

    var = args.plot_variable
    fixed = ", ".join(f"{n}={v}" for n, v in sorted(first.items()) if n != var)
    title = f"{os.path.basename(str(args.kernel))} on {analyzer.machine.name}: single-core ECM contributions"
    title += f" ({fixed})" if fixed else ""
    try:
        plot(plot_points, var, args.plot, title)
    except OSError as exc:
        raise LoopmodelError(f"cannot write the plot: {exc.strerror or exc}", file=args.plot) from None


def cmd_scaling(args) -> int:
    from ..errors import LoopmodelError
    from ..report import scaling as rep

    if args.plot:
        check_new_output(args.plot, "--plot", args.force)
    results, res, measured, fit = scaling_results(args)
    if args.plot:
        try:
            rep.plot(results, res, args.plot, measured)
        except OSError as exc:
            raise LoopmodelError(f"cannot write the plot: {exc.strerror}", file=args.plot) from None
    if args.json:
        json.dump(rep.to_dict(results, res, measured, fit), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console

    rep.render(results, res, Console(highlight=False, width=None if sys.stdout.isatty() else 120), measured, fit)
    if args.plot:
        sys.stdout.write(f"plot written to {args.plot}\n")
    return 0


def scaling_results(args) -> tuple:
    """``loopmodel scaling``'s parsed arguments -> ``(results, analysis, measured, fit)``: one
    :class:`~loopmodel.models.scaling.ScalingResult` per model (row n from the analysis with n active
    cores, as ``analyze --cores n``: :func:`~loopmodel.models.scaling.core_point`), the single-core analysis, the
    measured points ({cores: it/s}, or None; ``args.measured`` is a path or such a mapping) and
    ``(p0, rms relative error)`` of ``--fit-p0`` (or None). The CLI and :func:`loopmodel.scaling`
    both call it.

    Raises:
        LoopmodelError: bad sizes, cores, p0, level or measured file (one line).
    """
    from ..errors import DefineError
    from ..fileio.defines import one_point
    from ..models.scaling import fit_p0, scaling

    analyzer, points = _prepare(args, ("ECM",), 1)
    point = one_point(points, "scaling")
    res = analyzer.run(point)
    res.ecm.require_known()
    m = analyzer.machine
    cores = _core_list(args.cores, m.cores_per_socket * m.sockets)
    per_cores = {n: analyzer.run(point, cores=n).ecm for n in cores}
    if args.data_in not in res.ecm.T_ECM:
        raise DefineError(f"--data-in {args.data_in}: no such level (choose {', '.join(res.ecm.T_ECM)})")
    measured = args.measured
    if isinstance(measured, (str, os.PathLike)):
        measured = _read_measured(measured)
    measured = {int(c): float(v) for c, v in measured.items()} if measured else None
    it = res.traffic.iterations_per_unit
    p0, fit = args.p0, None
    if args.fit_p0:
        if not measured:
            raise DefineError("--fit-p0 needs --measured")
        fit = fit_p0(res.ecm, m, measured, it, args.placement, _measured_ecms(analyzer, point, measured, per_cores))
        p0 = fit[0]
    models = ("contention", "saturation") if args.model == "both" else (args.model,)
    _check_p0(p0)
    results = [scaling(res.ecm, m, cores, it, mdl, p0, args.placement, args.data_in, per_cores) for mdl in models]
    return results, res, measured, fit


def _measured_ecms(analyzer, point: dict, measured: dict, per_cores: dict) -> dict:
    """Core count -> ECM result with that many active cores, for every measured count (``--fit-p0``)."""
    from ..errors import DefineError

    m = analyzer.machine
    most = m.cores_per_socket * m.sockets
    bad = [c for c in measured if not 1 <= c <= most]
    if bad:
        raise DefineError(f"--measured: {bad[0]} cores, but the machine model has {most}")
    return {c: per_cores[c] if c in per_cores else analyzer.run(point, cores=c).ecm for c in measured}

def cmd_app(args) -> int:
    from ..workflows.analysis import Analyzer, Options
    from ..fileio.app_file import read_app
    from ..fileio.defines import one_point, sweep
    from ..fileio.kernel_yaml import load_kernel_file
    from ..models.application import predict
    from ..report import application as rep

    spec = read_app(args.file, one_point(sweep(args.define, {}), "app"))
    machine = _machine(args)
    from ..fileio.host_models import machine_notes

    cores = _core_list(args.cores, machine.cores_per_socket * machine.sockets)
    _check_p0(args.p0)
    analyses, per_cores = [], []
    for k in spec.kernels:
        kernel, _, text, notes = load_kernel_file(k.path)
        defines = {n: v for n, v in k.defines.items() if n in kernel.constants}
        opts = Options(models=("ECM",), incore=args.incore, use_cache=not args.no_cache,
                       kernel_text=text, notes=notes, machine_file=str(args.machine),
                       trust_machine_flags=args.trust_machine_flags)
        analyzer = Analyzer(kernel, machine, opts)
        analyses.append(analyzer.run(defines))
        analyses[-1].ecm.require_known()
        per_cores.append({n: analyzer.run(defines, cores=n).ecm for n in cores})  # as scaling's rows
    pred = predict(spec, analyses, machine, cores, args.model, args.p0, per_cores,
                   machine_notes(args.machine, machine))
    if args.json:
        json.dump(rep.to_dict(pred), sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    from rich.console import Console

    rep.render(pred, Console(highlight=False, width=None if sys.stdout.isatty() else 140))
    return 0


def _machine(args):
    """The machine model of ``-m``, with the ``--clock`` override applied."""
    import dataclasses

    from ..errors import DefineError
    from ..fileio.machine_files import load_machine
    from ..machine.fields import CLOCK
    from ..units import parse_quantity

    if isinstance(args.machine, (str, os.PathLike)):
        machine = load_machine(args.machine)
    else:  # the Python API's loopmodel.Machine, or a MachineModel
        machine = getattr(args.machine, "model", args.machine)
    if args.clock:
        try:
            machine = dataclasses.replace(machine, clock=CLOCK.check(parse_quantity(args.clock, "frequency")))
        except ValueError as exc:
            raise DefineError(f"--clock: {exc}") from None
    return machine


def machine_name(spec) -> str:
    """What ``-m`` names: the text given, or for a :class:`loopmodel.Machine` the name or path it
    was loaded from (a bare ``MachineModel``: its ``name``)."""
    if isinstance(spec, (str, os.PathLike)):
        return str(spec)
    return getattr(spec, "spec", None) or spec.name


def _check_p0(p0: float | None) -> None:
    """``--p0`` within the range :func:`loopmodel.models.scaling.scaling` accepts (one-line error)."""
    from ..errors import DefineError
    from ..machine.model import P0_MAX

    if p0 is not None and not 0 < p0 <= P0_MAX:
        raise DefineError(f"--p0 {p0:g}: must be in (0, {P0_MAX}]")


def _core_list(text: str | None, most: int) -> list:
    """``'1:8'`` (inclusive), ``'1:8:2'``, ``'1,2,4'`` or ``'8'`` -> sorted core counts, each in 1..``most``;
    one-line error otherwise."""
    from ..errors import DefineError
    from ..fileio.defines import count_list

    if text is None:
        return list(range(1, most + 1))
    vals = count_list(text, "--cores")
    if min(vals) < 1:
        raise DefineError(f"--cores {text}: core counts must be at least 1")
    if max(vals) > most:
        raise DefineError(f"--cores {text}: the machine model has {most} cores")
    return sorted(set(vals))


def _read_measured(path: str) -> dict:
    """Measured points -> {cores: it/s} from ``loopmodel bench`` / ``measure --json`` output
    (``points`` with ``threads``/``cores`` and ``it_s``)."""
    from ..errors import DefineError

    from ..fileio.reader import read_text

    text = read_text(path, "--measured file", DefineError)
    try:
        doc = json.loads(text)
        pts = doc["points"] if isinstance(doc, dict) else doc
        # it_per_s: files written before schema version 1
        return {int(p.get("threads", p.get("cores"))): float(p["it_s"] if "it_s" in p else p["it_per_s"])
                for p in pts}
    except (ValueError, KeyError, TypeError, AttributeError):
        raise DefineError(f"--measured {path}: expected JSON with 'points' of 'threads' and 'it_s'") from None


def cmd_codegen(args) -> int:
    from ..compiled.codegen import generate_c
    from ..errors import DefineError
    from ..fileio.c_kernel import parse_kernel, read_kernel_text
    from ..fileio.defines import one_point, sweep
    from ..fileio.kernel_yaml import YAML_SUFFIXES

    if str(args.kernel).lower().endswith(YAML_SUFFIXES):
        raise DefineError("codegen needs a C kernel; a YAML kernel description has no code", file=args.kernel)
    text = read_kernel_text(args.kernel)
    kernel, defaults = parse_kernel(text, args.kernel)
    point = one_point(sweep(args.define, defaults), "codegen")
    missing = kernel.free_constants(point)
    if missing:
        raise DefineError(f"no value for {', '.join(missing)}: give -D {missing[0]}=<size>")
    sys.stdout.write(generate_c(kernel, text, point, assume_aligned=_alignment_option(args.assume_aligned)))
    return 0


def _assume_aligned_arg(parser) -> None:
    parser.add_argument("--assume-aligned", metavar="BYTES",
                        help="compiled kernel: the compiler may assume every array aligned to BYTES (a power of "
                             "two, e.g. 32); default: no alignment knowledge, as for arrays passed in from "
                             "elsewhere")


def _alignment_option(text: str | None) -> int | None:
    """``--assume-aligned``: None, or a power of two of bytes; one-line error otherwise."""
    from ..errors import DefineError

    if text is None:
        return None
    value = _bytes_option("--assume-aligned", text, minimum=1)
    if value & (value - 1):
        raise DefineError(f"--assume-aligned: '{text}' must be a power of two of bytes (e.g. 32)")
    return value


def _bytes_option(name: str, text: str, minimum: int) -> int:
    """``'4096'``, ``'4096 B'`` or ``'4 KiB'`` -> int bytes; one-line error otherwise."""
    from ..errors import DefineError
    from ..units import UnitError, parse_quantity

    import re

    t = text.strip()
    try:
        if re.fullmatch(r"-?\d+(\s*B)?", t):  # plain bytes, zero allowed (units.parse_quantity rejects 0)
            value = int(t.rstrip("B").strip())
        else:
            value = parse_quantity(t, "size")
    except UnitError as exc:
        raise DefineError(f"{name}: {exc}") from None
    if value != int(value) or value < minimum:
        raise DefineError(f"{name}: '{text}' must be a whole number of bytes >= {minimum}")
    return int(value)


def cmd_machine(args, parser) -> int:
    import yaml

    from ..fileio.machine_files import builtin_names, convert_kerncraft, load_machine, read_yaml, validate

    if args.machine_command == "list":
        for n in builtin_names():
            m = load_machine(n)
            print(f"{n:28s} {m.model_name or m.description}")
        return 0
    if args.machine_command == "show":
        m = load_machine(args.name)
        print(yaml.safe_dump(_dump(m), sort_keys=False, width=110, default_flow_style=None), end="")
        return 0
    if args.machine_command == "probe":
        from . import probe as cli_probe

        return cli_probe.run(args)
    if args.machine_command == "convert":
        if args.output:
            check_new_output(args.output, "-o")
        data = read_yaml(args.file)
        conv = convert_kerncraft(data, args.file)
        validate(conv, args.file)
        text = yaml.safe_dump(conv, sort_keys=False, width=110, default_flow_style=None)
        if args.output:
            write_new_output(args.output, text, "-o")
        else:
            print(text, end="")
        return 0
    parser.machine_parser.print_help()
    return 2


def _q(value: float, unit: str, scale: float = 1.0, prefix: str = "") -> str:
    """A quantity that reads back to exactly ``value`` (units.parse_quantity multiplies by the prefix)."""
    scaled = value / scale
    text = f"{int(scaled)}" if scaled == int(scaled) else repr(scaled)
    if float(text) * scale == value:
        return f"{text} {prefix}{unit}"
    return f"{int(value) if value == int(value) else repr(value)} {unit}"


def _dump(m) -> dict:
    """A validated model back to YAML data with explicit units; loads back to an equal model."""
    import dataclasses

    d = json.loads(json.dumps(dataclasses.asdict(m)))  # tuples -> lists, plain YAML types
    d["clock"] = _q(m.clock, "Hz", 1e9, "G")
    d["cacheline_size"] = _q(m.cacheline_size, "B")
    d["in_core"]["simd_width"] = _q(m.in_core.simd_width, "B")
    for key in ("load", "store"):
        d["in_core"][key]["bytes_per_cycle"] = _q(d["in_core"][key]["bytes_per_cycle"], "B/cy")
    d["in_core"]["latency"] = {k: _q(v, "cy") for k, v in m.in_core.latency.items()}
    for lv in d["memory_hierarchy"]:
        if lv.get("size") is not None:
            lv["size"] = _q(lv["size"], "B")
        for k in [k for k, v in lv.items() if v is None]:
            del lv[k]
    for lk, link in zip(d["links"], m.links):
        lk["penalty_load"] = _q(lk["penalty_load"], "cy")
        lk["penalty_store"] = _q(lk["penalty_store"], "cy")
        bws = ["measured" if b.unit == "measured" else _q(b.value, "B/s", 1e9, "G") if b.unit == "B/s"
               else _q(b.value, "B/cy") for b in link.bandwidth]
        lk["bandwidth"] = bws if len(bws) > 1 else bws[0]
    for k in d["benchmarks"]["kernels"].values():
        k["element_size"] = _q(k["element_size"], "B")
    d["benchmarks"]["measurements"] = {
        lvl: {"cores": list(t.cores), **{name: [_q(v, "B/s", 1e9, "G") for v in vals]
                                         for name, vals in t.bandwidths.items()}}
        for lvl, t in m.benchmarks.measurements.items()}
    d.pop("coherence", None)
    if m.coherence is not None:
        from ..fileio.machine_writer import coherence_mapping

        d["coherence"] = coherence_mapping(m.coherence)
    d.pop("power", None)
    if m.power is not None:
        from ..fileio.machine_writer import power_mapping

        d["power"] = power_mapping(m.power)
    return d


