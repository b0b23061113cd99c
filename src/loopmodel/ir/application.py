"""An application: an ordered sequence of loop kernels with sizes and invocation counts (pure data).

Read from an application file by :mod:`loopmodel.fileio.app_file`, predicted by
:mod:`loopmodel.models.application` (cross-architecture-machine-models.txt §5: one iteration
of the PCG solver, Algorithm 1, as its loops).
"""
from __future__ import annotations

from dataclasses import dataclass




@dataclass(frozen=True)
class AppKernel:
    """One loop of the application.

    Attributes:
        name: label; path: kernel file; count: invocations per application iteration;
        defines: size constants (ints); placement: ``first-touch`` or ``one-domain``.
    """

    name: str
    path: str
    count: int
    defines: dict
    placement: str = "first-touch"


@dataclass(frozen=True)
class AppSpec:
    """An application: name and kernels in execution order."""

    name: str
    kernels: tuple
    source: str = ""
