"""Placing the validation corpus (:mod:`loopmodel.measure.corpus`) on a machine model: for each
kernel and each level of the memory hierarchy, the sizes at which the data come from that
level.

The data location is the one ``validate`` uses (:func:`loopmodel.workflows.validate.data_level`:
the level beyond the farthest link with traffic, from the layer conditions or, where they do
not apply, the cache simulation; kerncraft-tool-paper.txt §2.4-2.5) at repeated sweeps. The
placement searches the main size of the kernel (its ``scaled`` size constants together) on a
geometric grid (ratio 2**(1/4)): it starts where the whole data set lies in the geometric
middle between the level's capacity and the capacity of the level above (L1: between the
smallest data set and the L1 capacity), so that the data sit well inside the level, and walks
along the grid until the data location is the level. The capacities are the machine model's
``memory_hierarchy[].size`` (for a probed host: the effective capacities the probe measured).
Memory: the first size whose data set is at least :data:`MEM_FACTOR` times the last cache,
at most :data:`MEM_LIMIT_B` and a quarter of the available memory. The in-core model plays no
part: the placement uses the analytic one (no compiler) and only the traffic.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from ..errors import LoopmodelError
from ..fileio.c_kernel import parse_kernel
from ..measure.corpus import CorpusKernel, corpus_kernels
from ..measure.stream import available_memory
from .analysis import Analyzer, AnalyzerSettings
from .validate import data_level

#: grid ratio of the main size
GRID_RATIO = 2 ** 0.25
#: memory cases: the data set is at least this many times the last cache's capacity
MEM_FACTOR = 4
#: memory cases: the largest data set, B
MEM_LIMIT_B = 2 ** 30
#: grid steps the search walks at most from its start
MAX_STEPS = 24


@dataclass(frozen=True)
class CorpusCase:
    """One kernel at sizes that put its data in ``level``.

    Attributes:
        kernel: :class:`~loopmodel.measure.corpus.CorpusKernel`.
        level: the data location (``L1`` .. ``MEM``).
        defines: size constant -> value.
        data_B: the kernel's whole data set at these sizes, B.
    """

    kernel: CorpusKernel
    level: str
    defines: dict
    data_B: int = 0


def data_bytes(kernel, defines: dict) -> int:
    """Bytes of all arrays of the kernel IR ``kernel`` at ``defines``."""
    return int(sum(a.size_elements.evaluate(defines) * a.element_size for a in kernel.arrays.values()))


def memory_limit_B() -> int:
    """The largest memory case: :data:`MEM_LIMIT_B`, at most a quarter of the available memory
    (:func:`loopmodel.measure.stream.available_memory`), B."""
    avail = available_memory()
    return int(min(MEM_LIMIT_B, avail // 4)) if avail else MEM_LIMIT_B


class _Placer:
    """The search for one kernel on one machine (data locations memoised per size)."""

    def __init__(self, ck: CorpusKernel, machine, limit_B: int):
        self.ck = ck
        self.kernel, _ = parse_kernel(ck.source, f"{ck.name}.c")
        self.analyzer = Analyzer(self.kernel, machine, AnalyzerSettings(models=("ECM",), incore="analytic",
                                                                        use_cache=False))
        self.levels = [lv.level for lv in machine.memory_hierarchy]
        self.caps = [lv.size for lv in machine.memory_hierarchy]
        self.grid = []
        size = float(ck.min_size)
        while True:
            n = int(round(size))
            if not self.grid or n > self.grid[-1]:
                if data_bytes(self.kernel, ck.defines(n)) > limit_B:
                    break
                self.grid.append(n)
            size *= GRID_RATIO
        self.limit_B = limit_B
        self.memo = {}

    def data(self, k: int) -> int:
        return data_bytes(self.kernel, self.ck.defines(self.grid[k]))

    def where(self, k: int) -> int | None:
        """Index of the data location at grid point ``k`` (None: the model cannot run it)."""
        if k not in self.memo:
            try:
                self.memo[k] = self.levels.index(data_level(self.analyzer.run(self.ck.defines(self.grid[k]))))
            except LoopmodelError:
                self.memo[k] = None
        return self.memo[k]

    def start(self, li: int) -> int | None:
        """The grid point whose data set is nearest the middle of level ``li`` (None: none fits)."""
        if li == len(self.levels) - 1:
            want = MEM_FACTOR * (self.caps[-2] or 0)
            return next((k for k in range(len(self.grid)) if self.data(k) >= want), None)
        lo = self.caps[li - 1] if li else self.data(0)
        hi = self.caps[li]
        if not hi or lo >= hi:
            return None
        target = math.log(math.sqrt(lo * hi))
        return min(range(len(self.grid)), key=lambda k: abs(math.log(self.data(k)) - target))

    def place(self, li: int) -> tuple:
        """``(grid point, "")`` for level ``li`` or ``(None, why)``."""
        k = self.start(li) if self.grid else None
        name = self.levels[li]
        if k is None:
            return None, f"{self.ck.name}: not placed in {name}: no size between {self.ck.min_size} and the "\
                         f"{self.limit_B / 2**20:.0f} MiB limit puts its data set there"
        step = None
        for _ in range(MAX_STEPS):
            got = self.where(k)
            if got == li:
                return k, ""
            want = 1 if got is None or got < li else -1
            if step is not None and want != step or not 0 <= k + want < len(self.grid):
                break
            step, k = want, k + want
        return None, f"{self.ck.name}: not placed in {name}: the data location passes from " \
                     f"{self._name(self.where(k))} to the next level without {name} between"

    def _name(self, li) -> str:
        return "nothing" if li is None else self.levels[li]


def place_kernel(ck: CorpusKernel, machine, limit_B: int | None = None) -> tuple:
    """``(cases, notes)`` of one corpus kernel on ``machine``: one :class:`CorpusCase` per level
    it can be placed in, a note for each level it cannot.

    Raises:
        LoopmodelError: the kernel does not parse or the model does not take it (one line).
    """
    placer = _Placer(ck, machine, memory_limit_B() if limit_B is None else limit_B)
    cases, notes = [], []
    for li, name in enumerate(placer.levels):
        if ck.max_levels and li >= ck.max_levels:
            notes.append(f"{ck.name}: not placed in {name}: it needs the cache simulation (the layer conditions "
                         "do not apply), too slow at such sizes")
            continue
        k, why = placer.place(li)
        if k is None:
            notes.append(why)
            continue
        defines = ck.defines(placer.grid[k])
        cases.append(CorpusCase(ck, name, defines, placer.data(k)))
    return cases, notes


def corpus_cases(machine, seed: int = 0, quick: bool = False, limit_B: int | None = None) -> tuple:
    """``(cases, notes)``: the corpus (:func:`loopmodel.measure.corpus.corpus_kernels`) placed
    in every level of ``machine`` (a :class:`~loopmodel.machine.model.MachineModel`), kernel by
    kernel, level by level; a note per case that cannot be placed (and per kernel the model
    does not take). ``limit_B``: the largest data set (default :func:`memory_limit_B`), B."""
    limit_B = memory_limit_B() if limit_B is None else limit_B
    cases, notes = [], []
    for ck in corpus_kernels(seed, quick):
        try:
            got, why = place_kernel(ck, machine, limit_B)
        except LoopmodelError as exc:
            notes.append(f"{ck.name}: left out: {exc}")
            continue
        cases += got
        notes += why
    return tuple(cases), tuple(notes)
