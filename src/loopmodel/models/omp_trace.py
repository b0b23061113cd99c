"""The line states of one OpenMP program at many sizes, simulated once per class of sizes
(benchmark-based-coherence-model.txt §III-B, Fig. 2; :mod:`~loopmodel.models.coherence_sizes`,
:mod:`~loopmodel.models.coherence_classes`):
for every executed phase, each statement's chunks as runs of segments taking one transition,
per thread and class (:class:`Trace`), for :mod:`loopmodel.models.omp_sizes` to count the
bytes and seconds per size.

A trace depends on the program's structure, the thread count and the classes alone (the
dense ranks of every chunk's cuts), not on the sizes: :class:`Traces` keeps the traces of a
study, so that a block of sizes whose classes were all met before reuses them.

Pure functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .coherence_classes import Layout
from .coherence_sizes import ClassStates
from .coherence_slots import slots, statement_runs


@dataclass(frozen=True)
class Runs:
    """A statement's chunks as runs of segments in slots, per thread and class
    (:func:`~loopmodel.models.coherence_slots.slots`).

    Attributes:
        starts: int64 (team, Q, R): the segment each slot starts at (slot 0: the chunk's
            first segment; a slot a class does not use is empty: it starts where the next
            one does; past the last, the segment past the chunk).
        sequence: the transition of each slot (indices into
            :data:`~loopmodel.machine.coherence.LOAD_KEYS` / ``STORE_KEYS``).
    """
    starts: np.ndarray
    sequence: tuple


@dataclass(frozen=True)
class Trace:
    """The simulation of a program's phases in R classes.

    Attributes:
        classes: class signature (bytes,
            :attr:`~loopmodel.models.coherence_classes.Layout.signatures`) -> its column.
        executed: per phase simulated, in order: ``(phase, runs)``, the index of the phase
            among the program's distinct phases and a :class:`Runs` (None: no chunk) per
            statement of its plan.
        order: per executed phase of the program, in order: ``(index into executed,
            iteration)`` (iteration None outside repeats; a repeat's iterations after its
            states repeat are copies of the last one simulated).
    """
    classes: dict
    executed: tuple
    order: tuple


def simulate(items: list, plans: list, layout: Layout) -> Trace:
    """The :class:`Trace` of a program in the classes of ``layout``.

    Args:
        items: the program's items: per item, the index of its phase among ``plans`` (an int)
            or, for a repeat, ``(count, tuple of indices)`` of its body.
        plans: :class:`~loopmodel.models.omp_chunks.Plan` per distinct phase, with the
            ``(array, run)`` of each of its statements in ``layout``: ``(plan, places)``.
        layout: :class:`~loopmodel.models.coherence_classes.Layout` of the plans' chunks.
    """
    states = ClassStates(layout.segments, layout.reps.size)
    executed: list = []
    order: list = []

    def phase(k: int) -> int:
        plan, places = plans[k]
        executed.append((k, tuple(_runs(states, st_.array, st_.store, *layout.ranks[array][run])
                                  for st_, (array, run) in zip(plan.statements, places))))
        return len(executed) - 1

    for item in items:
        if isinstance(item, int):
            order.append((phase(item), None))
            continue
        count, body = item
        before = None
        for it in range(count):
            snap = states.snapshot()
            if before is not None and states.same(before).all():
                last = order[-len(body):]
                order += [(row, j) for j in range(it, count) for row, _ in last]
                break
            before = snap
            order += [(phase(k), it) for k in body]
    return Trace({sig: j for j, sig in enumerate(layout.signatures)}, tuple(executed), tuple(order))


def _runs(states: ClassStates, array: str, store: bool, ra, rb) -> Runs | None:
    """Apply a statement's chunks (threads' runs ``ra .. rb``, int (team, R)) to the class
    states, thread 0 first; their :class:`Runs` (None where no thread has a chunk in any
    class)."""
    window = states.apply(array, ra, rb, store)
    if window is None:
        return None
    starts, keys = statement_runs(*window, rb)
    sequence, slot = slots(keys)
    begin = np.full((keys.shape[0], len(sequence) + 1, keys.shape[2]), -1, dtype=np.int64)
    begin[:, -1] = rb
    t_, p_, r_ = np.nonzero(keys >= 0)
    begin[t_, slot[t_, p_, r_], r_] = starts[t_, p_, r_]
    for j in range(len(sequence) - 1, -1, -1):
        begin[:, j] = np.where(begin[:, j] < 0, begin[:, j + 1], begin[:, j])
    return Runs(begin[:, :-1], sequence)


class Traces:
    """The traces of a study, per program structure and thread count: :meth:`get` reuses one
    that holds every class of a block of sizes."""

    def __init__(self):
        self._known: dict = {}

    def get(self, key, layout: Layout, make) -> tuple:
        """``(trace, columns)``: a trace for ``key`` (a hashable value naming the program's
        structure and the thread count) holding every class of ``layout``, and the column of
        each of its classes in it (int (R,)); ``make()`` gives a new one where none does."""
        for trace in self._known.get(key, ()):
            columns = [trace.classes.get(sig) for sig in layout.signatures]
            if None not in columns:
                return trace, np.array(columns, dtype=np.intp)
        trace = make()
        self._known.setdefault(key, []).append(trace)
        return trace, np.arange(layout.reps.size)


def plan_places(plans: list) -> tuple:
    """``(runs, places)`` for :class:`~loopmodel.models.coherence_classes.Layout` and
    :func:`simulate`: array name -> list of ``(lo, hi)`` of the statements on it, and per
    plan the ``(array, run)`` of each statement."""
    runs: dict = {}
    places = []
    for plan in plans:
        at = []
        for st_ in plan.statements:
            at.append((st_.array, len(runs.setdefault(st_.array, []))))
            runs[st_.array].append((st_.lo, st_.hi))
        places.append(tuple(at))
    return runs, places


def items_of(program, sized_items: tuple, unique: list) -> list:
    """The program's items for :func:`simulate`, the phases as indices into ``unique``."""
    index = {id(sp): k for k, sp in enumerate(unique)}
    out: list = []
    for item, sized in zip(program.items, sized_items):
        if isinstance(sized, tuple):
            if sized:
                out.append((item.count, tuple(index[id(sp)] for sp in sized)))
        else:
            out.append(index[id(sized)])
    return out

