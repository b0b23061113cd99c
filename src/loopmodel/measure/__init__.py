"""Measurements on the host, to validate model predictions (multicore scaling, clock).

* :func:`~loopmodel.measure.stream.run_stream` -- daxpby/triad bandwidth per OpenMP thread count;
* :func:`~loopmodel.measure.clock.measure_clock_hz` -- core clock estimate;
* :func:`~loopmodel.measure.kernel_bench.measure_kernel` -- single-thread runtime of a C kernel
  at given sizes (s/it, cy/CL), to check ECM predictions;
* :mod:`loopmodel.cli.measure` -- the ``loopmodel measure`` subcommand.

The names below are imported on first use, so that building the command-line parser
(which imports :mod:`~loopmodel.cli.measure`) stays cheap.
"""
from __future__ import annotations

#: default compiler flags of the streaming benchmark
DEFAULT_FLAGS = "-O3 -march=native -fopenmp"
#: kernels of the streaming benchmark
KERNEL_NAMES = ("daxpby", "triad")

__all__ = ["StreamPoint", "StreamResult", "run_stream", "measure_clock_hz", "DEFAULT_FLAGS", "KERNEL_NAMES"]

_LAZY = {"StreamPoint": "stream", "StreamResult": "stream", "run_stream": "stream", "measure_clock_hz": "clock"}


def __getattr__(name):
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
