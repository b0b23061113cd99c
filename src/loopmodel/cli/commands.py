"""The commands of the command line, in the order ``loopmodel --help`` lists them: for each, its
module of :mod:`loopmodel.cli` (``add_parser(sub)``, ``run(args)``) and its one-line help."""
from __future__ import annotations

from typing import NamedTuple


class Command(NamedTuple):
    """A command: its module of :mod:`loopmodel.cli` and its one-line help."""

    module: str
    help: str


#: name -> :class:`Command`, in the order of ``--help``
COMMANDS = {
    "analyze": Command("analyze", "analyze a kernel on a machine model"),
    "scaling": Command("scaling", "predicted performance per core count (ECM + contention or saturation model)"),
    "compare": Command("compare", "one kernel on several machine models: ECM per data location, saturation, "
                                  "Roofline bottleneck, performance per core and socket, energy"),
    "codegen": Command("codegen", "print the compilable C program loopmodel builds around a kernel"),
    "app": Command("app", "predict an application: a sequence of loop kernels (YAML)"),
    "measure": Command("measure", "measure daxpby/triad bandwidth per thread count on this host (validates models)"),
    "bench": Command("bench", "measure a kernel on this host (pinned, min-of-K; s/it, cy/CL, it/s, FLOP/s)"),
    "energy": Command("energy", "energy to solution and performance per (cores, clock); the energy-optimal "
                       "operating point (ECM + multicore + chip power model)"),
    "validate": Command("validate", "ECM prediction vs measurement on this host, per size"),
    "roofline": Command("roofline", "measured Roofline points of kernels on this host, with the model's"),
    "omp": Command("omp", "predict an OpenMP program per thread count (MESI chunk states, benchmarked transitions)"),
    "sweep": Command("sweep", "run a design-space study (kernels x machines x sizes x options) on Dask"),
    "machine": Command("machine", "list, show, convert or probe machine models"),
}
