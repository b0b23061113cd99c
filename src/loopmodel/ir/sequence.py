"""A kernel function of several loop nests (pure data): the nests in execution order.

Built by the C front-end (:mod:`loopmodel.fileio.c_nests` cuts the function's body into
perfect nests), analysed nest by nest and summed (:mod:`loopmodel.workflows.sequence`), as an
application's loops are (cross-architecture-machine-models.txt §5.2.3: "Composing the model
from single-loop predictions is simple due to the time-based formulation of the ECM model").
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class SequenceNest:
    """One nest of a :class:`NestSequence`.

    Attributes:
        kernel: its :class:`~loopmodel.ir.kernel.Kernel`.
        line: the line of its first statement in the kernel file.
        repeat: the enclosing loops it does not use (a time loop), outermost first: it runs
            once per iteration of them (:class:`~loopmodel.ir.kernel.Loop`).
        path: an identity (the position in the file) of each loop around it, outermost first,
            :attr:`repeat` ones included: nests whose paths share a prefix run interleaved in
            those loops (gemm's two nests in each iteration of ``i``).
    """

    kernel: object
    line: int
    repeat: tuple = ()
    path: tuple = ()

    @property
    def loops(self) -> tuple:
        """Every loop around its statements, outermost first: :attr:`repeat`, then the kernel's."""
        return tuple(self.repeat) + tuple(self.kernel.loops)

    @property
    def label(self) -> str:
        """``line 85 (i,k,j)``: where it is and its loops."""
        loops = ",".join(lp.index for lp in self.kernel.loops)
        return f"line {self.line} ({loops})"

    def sizes(self, defines: Mapping) -> dict:
        """The sizes of ``defines`` the nest's kernel names (its constants), for its own analysis."""
        return {k: v for k, v in defines.items() if k in self.kernel.constants}

    def interleaved_with(self, other: "SequenceNest", depth: int = 0) -> bool:
        """Whether this nest and ``other`` share their enclosing loops down to the one at ``depth``
        (:attr:`path`): then they run interleaved in it, one after the other in each iteration."""
        return len(self.path) > depth and len(other.path) > depth and self.path[:depth + 1] == other.path[:depth + 1]

    def repeats(self, defines: Mapping) -> int:
        """How often the nest runs per call: the product of the :attr:`repeat` loops' trip counts.

        Raises:
            KeyError: a size missing from ``defines``.
        """
        return math.prod(lp.iterations(defines) for lp in self.repeat)


@dataclass(frozen=True)
class NestSequence:
    """A kernel function of several nests.

    Attributes:
        source: the kernel file; nests: :class:`SequenceNest` in execution order.
    """

    source: str
    nests: tuple

    @property
    def arrays(self) -> dict:
        """Every array of the function (name -> :class:`~loopmodel.ir.kernel.Array`), in the order the
        nests name them: one layout of the whole function's data."""
        out = {}
        for nest in self.nests:
            out.update({n: a for n, a in nest.kernel.arrays.items() if n not in out})
        return out

    @property
    def parameters(self) -> frozenset:
        """The integer parameters of the kernel function (:attr:`~loopmodel.ir.kernel.Kernel.parameters`)."""
        return frozenset().union(*(n.kernel.parameters for n in self.nests))

    @property
    def constants(self) -> frozenset:
        """Every size constant any nest or repeat loop names."""
        names = set()
        for nest in self.nests:
            names |= set(nest.kernel.constants)
            for lp in nest.repeat:
                names |= lp.start.symbols | lp.stop.symbols
        return frozenset(names)
