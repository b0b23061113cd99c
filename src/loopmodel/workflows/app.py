"""``app``: an application as a sequence of loop kernels (YAML), each predicted with the ECM
model and the multicore model, summed over its calls (ecm-model-slides.txt, "ECM model –
saturation"; kerncraft-tool-paper.txt §2)."""
from __future__ import annotations

from dataclasses import dataclass

from ..fileio.app_file import read_app
from ..fileio.defines import one_point, sweep
from ..fileio.host_models import machine_notes
from ..fileio.kernel_file import load_kernel
from ..models.application import predict
from ..models.prediction import DEFAULT_MULTICORE_MODEL, MULTICORE_MODELS
from .analysis import Analyzer, AnalyzerSettings, parallel_notes
from .inputs import check_p0, core_list, machine_model
from .options import option


@dataclass(frozen=True)
class AppOptions:
    """``app``'s options."""

    define: tuple = option((), "override a shared size of the application file", "-D", "--define",
                           metavar="NAME=VALUE")
    cores: str = option("1", "core counts: 1:N, 1,2,4 or N (default 1)", "--cores", "-c", metavar="RANGE")
    model: str = option(DEFAULT_MULTICORE_MODEL, None, "--model", choices=MULTICORE_MODELS)
    p0: float | None = option(None, "contention parameter p0 (default: the machine model's)", "--p0", type=float)
    clock: str | None = option(None, "core clock override, e.g. '2.2 GHz'", "--clock", metavar="FREQ")
    incore: str = option("auto", None, "--incore", choices=("auto", "llvm-mca", "osaca", "analytic", "measured"))
    no_cache: bool = option(False, "do not read or write the per-user cache", "--no-cache")
    trust_machine_flags: bool = option(
        False, "use the machine file's compiler flags and name without the allow-list check", "--trust-machine-flags")


def run(app_file: str, machine, options: AppOptions):
    """Predict the application of ``app_file`` on ``machine`` (name, file or model).

    Returns:
        :class:`loopmodel.models.application.AppPrediction`: per kernel and in total, per core
        count, as ``scaling``'s rows (one n-core analysis per count).

    Raises:
        LoopmodelError: a bad application file, kernel, machine, core list or p0 (one line).
    """
    spec = read_app(app_file, one_point(sweep(list(options.define), {}), "app"))
    model = machine_model(machine, options.clock)
    cores = core_list(options.cores, model.cores_per_socket * model.sockets)
    check_p0(options.p0)
    analyses, per_cores, parallel = [], [], []
    for k in spec.kernels:
        kernel, _, text, notes = load_kernel(k.path, not options.no_cache)
        defines = {n: v for n, v in k.defines.items() if n in kernel.constants}
        settings = AnalyzerSettings(models=("ECM",), incore=options.incore, use_cache=not options.no_cache,
                                    kernel_text=text, notes=notes, machine_file=str(machine),
                                    trust_machine_flags=options.trust_machine_flags)
        analyzer = Analyzer(kernel, model, settings)
        analyses.append(analyzer.run(defines))
        analyses[-1].ecm.require_known()
        per_cores.append({n: analyzer.run(defines, cores=n).ecm for n in cores})  # as scaling's rows
        parallel += [f"{k.name}: {n}" for n in parallel_notes(analyses[-1].confidence, max(cores))]
    return predict(spec, analyses, model, cores, options.model, options.p0, per_cores,
                   machine_notes(machine, model) + tuple(parallel))
