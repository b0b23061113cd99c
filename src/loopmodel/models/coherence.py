"""MESI chunk states and their transition function δ (benchmark-based-coherence-model.txt §III-B,
Fig. 2).

Each chunk of an array (an index triplet one thread touches) has a MESI state and the set of
threads whose private caches hold it: ``(M, {t})``, ``(E, {t})``, ``(S, Ω)`` or ``(I, ∅)``. The
actions are a load by a set of threads ``L_T`` and a store by one thread ``S_t``. The timing
of a transition depends on the state it starts from (the paper's §IV, Fig. 3: the same miss
costs very different times from M, E or S), so :func:`transition` names what is to be
benchmarked and :func:`delta` gives the state after the action. The memory hierarchy is one
level of private, infinite caches (the paper's Fig. 1): nothing is evicted.

Pure data and functions; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass

STATES = ("M", "E", "S", "I")


@dataclass(frozen=True)
class ChunkState:
    """A chunk's MESI state and the threads whose caches hold a valid copy.

    Invariants (checked): ``M`` and ``E`` have exactly one thread, ``S`` at least one,
    ``I`` none.

    Raises:
        ValueError: a state outside MESI or a thread set that breaks the invariants.
    """
    state: str
    threads: frozenset = frozenset()

    def __post_init__(self):
        if self.state not in STATES:
            raise ValueError(f"unknown MESI state '{self.state}'")
        n = len(self.threads)
        if (self.state in "ME" and n != 1) or (self.state == "S" and n < 1) or (self.state == "I" and n):
            raise ValueError(f"state {self.state} cannot be held by {n} thread(s)")

    def __str__(self) -> str:
        who = ",".join(str(t) for t in sorted(self.threads)) or "∅"
        return f"({self.state},{{{who}}})" if self.threads else f"({self.state},{who})"


INVALID = ChunkState("I")


@dataclass(frozen=True)
class Load:
    """``L_T``: the threads ``threads`` read the chunk."""
    threads: frozenset

    def __post_init__(self):
        if not self.threads:
            raise ValueError("a load needs at least one thread")


@dataclass(frozen=True)
class Store:
    """``S_t``: thread ``thread`` writes the chunk."""
    thread: int


def delta(state: ChunkState, action) -> ChunkState:
    """The chunk's state after ``action`` (Fig. 2).

    * A store by ``t`` from any state leaves the only valid copy, modified, in ``t``'s cache:
      ``(M, {t})`` (the other copies are invalidated).
    * A load by ``T`` from ``(I, ∅)``: ``(E, T)`` for one thread, ``(S, T)`` for several.
    * A load by ``T`` from ``(M, {t})`` or ``(E, {t})``: unchanged when ``T = {t}``; else the
      copy is shared, ``(S, T ∪ {t})`` (a modified line is written back on the way).
    * A load by ``T`` from ``(S, Ω)``: ``(S, Ω ∪ T)``.

    Raises:
        TypeError: an action that is neither :class:`Load` nor :class:`Store`.
    """
    if isinstance(action, Store):
        return ChunkState("M", frozenset({action.thread}))
    if not isinstance(action, Load):
        raise TypeError(f"unknown action {action!r}")
    readers = frozenset(action.threads)
    if state.state == "I":
        return ChunkState("E" if len(readers) == 1 else "S", readers)
    if state.state in "ME" and readers == state.threads:
        return state
    return ChunkState("S", state.threads | readers)


def transition(state: ChunkState, action) -> str:
    """The benchmark a transition is timed by: the action and the state it starts from,
    e.g. ``"L from M"``, ``"S from S"`` (the paper's L(state, ...) and S(state, ...))."""
    kind = "S" if isinstance(action, Store) else "L"
    return f"{kind} from {state.state}"
