"""``loopmodel scaling``: predicted performance per core count (ECM with the contention or
saturation model)."""
from __future__ import annotations

import json
import os
import sys

from ..errors import DefineError, LoopmodelError
from ..fileio.defines import one_point
from ..fileio.output import check_new_output
from ..models.scaling import fit_p0, scaling
from ..report import scaling as rep
from ..workflows.analyze import AnalysisOptions, prepare
from ..workflows.inputs import check_p0, core_list, read_measured
from .arguments import add_options, console, kernel_and_machine, options_from_args


def add_parser(sub) -> None:
    """The ``scaling`` subcommand on ``sub``."""
    sc = sub.add_parser("scaling", help="predicted performance per core count (ECM + contention or saturation model)")
    kernel_and_machine(sc)
    add_options(sc, AnalysisOptions)
    sc.add_argument("--json", action="store_true", help="print one JSON document; for -D ranges one document per "
                                                        "line as it is computed (JSON Lines)")
    multicore_args(sc, ("contention", "saturation", "both"), "1:cores per socket")
    sc.add_argument("--measured", metavar="JSON", help="measured points ('loopmodel measure --json' output) to "
                                                       "compare with (table, error, plot)")
    sc.add_argument("--fit-p0", action="store_true", help="fit p0 to the --measured points")
    sc.add_argument("--plot", metavar="PNG", help="write a scaling plot (matplotlib)")
    sc.add_argument("--force", action="store_true", help="overwrite an existing --plot file")


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


def run(args) -> int:
    """Run ``scaling`` for parsed ``args``; returns the exit status."""
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
    rep.render(results, res, console(), measured, fit)
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
    analyzer, points = prepare(args.kernel, args.machine, options_from_args(AnalysisOptions, args), ("ECM",), 1)
    point = one_point(points, "scaling")
    res = analyzer.run(point)
    res.ecm.require_known()
    m = analyzer.machine
    cores = core_list(args.cores, m.cores_per_socket * m.sockets)
    per_cores = {n: analyzer.run(point, cores=n).ecm for n in cores}
    if args.data_in not in res.ecm.T_ECM:
        raise DefineError(f"--data-in {args.data_in}: no such level (choose {', '.join(res.ecm.T_ECM)})")
    measured = args.measured
    if isinstance(measured, (str, os.PathLike)):
        measured = read_measured(measured)
    measured = {int(c): float(v) for c, v in measured.items()} if measured else None
    it = res.traffic.iterations_per_unit
    p0, fit = args.p0, None
    if args.fit_p0:
        if not measured:
            raise DefineError("--fit-p0 needs --measured")
        fit = fit_p0(res.ecm, m, measured, it, args.placement, _measured_ecms(analyzer, point, measured, per_cores))
        p0 = fit[0]
    models = ("contention", "saturation") if args.model == "both" else (args.model,)
    check_p0(p0)
    results = [scaling(res.ecm, m, cores, it, mdl, p0, args.placement, args.data_in, per_cores) for mdl in models]
    return results, res, measured, fit


def _measured_ecms(analyzer, point: dict, measured: dict, per_cores: dict) -> dict:
    """Core count -> ECM result with that many active cores, for every measured count (``--fit-p0``)."""
    m = analyzer.machine
    most = m.cores_per_socket * m.sockets
    bad = [c for c in measured if not 1 <= c <= most]
    if bad:
        raise DefineError(f"--measured: {bad[0]} cores, but the machine model has {most}")
    return {c: per_cores[c] if c in per_cores else analyzer.run(point, cores=c).ecm for c in measured}
