"""The MESI chunk-state automaton (benchmark-based-coherence-model.txt §III-B, Fig. 2): every
transition, the invariants, and the paper's dot-product example."""
from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loopmodel.models.coherence import INVALID, ChunkState, Load, Store, delta, transition


def S(*t):
    return ChunkState("S", frozenset(t))


def M(t):
    return ChunkState("M", frozenset({t}))


def E(t):
    return ChunkState("E", frozenset({t}))


def L(*t):
    return Load(frozenset(t))


@pytest.mark.parametrize("state,action,after", [
    (INVALID, L(0), E(0)),
    (INVALID, L(0, 1), S(0, 1)),
    (INVALID, Store(2), M(2)),
    (E(0), L(0), E(0)),
    (E(0), L(1), S(0, 1)),
    (E(0), L(0, 1), S(0, 1)),
    (E(0), Store(0), M(0)),
    (E(0), Store(1), M(1)),          # the paper's example: delta((E,{0}), S_1) = (M,{1})
    (M(0), L(0), M(0)),              # dot product, one thread: no state change
    (M(0), L(0, 1), S(0, 1)),        # dot product, threads 0 and 1: (S, T)
    (M(0), L(1), S(0, 1)),
    (M(0), Store(0), M(0)),
    (M(0), Store(3), M(3)),
    (S(0, 1), L(2), S(0, 1, 2)),
    (S(0, 1), L(0), S(0, 1)),
    (S(0, 1), Store(1), M(1)),
    (S(0, 1), Store(5), M(5)),
])
def test_every_transition(state, action, after):
    assert delta(state, action) == after


@pytest.mark.parametrize("state,action,name", [(INVALID, L(0), "L from I"), (M(0), L(0, 1), "L from M"),
                                               (S(0), Store(1), "S from S"), (E(2), Store(2), "S from E")])
def test_transition_names_the_benchmark(state, action, name):
    assert transition(state, action) == name


@pytest.mark.parametrize("state,threads", [("M", ()), ("M", (0, 1)), ("E", (0, 1)), ("S", ()), ("I", (0,)),
                                           ("X", ())])
def test_invalid_states_are_refused(state, threads):
    with pytest.raises(ValueError):
        ChunkState(state, frozenset(threads))


def test_bad_actions_are_refused():
    with pytest.raises(ValueError):
        Load(frozenset())
    with pytest.raises(TypeError):
        delta(INVALID, "load")


def test_state_text():
    assert str(M(0)) == "(M,{0})" and str(S(1, 0)) == "(S,{0,1})" and str(INVALID) == "(I,∅)"


actions = st.one_of(st.builds(Store, st.integers(0, 7)),
                    st.builds(Load, st.frozensets(st.integers(0, 7), min_size=1, max_size=8)))


@given(st.lists(actions, max_size=30))
def test_any_sequence_keeps_the_invariants_and_the_last_writer(seq):
    """Property: after any actions the state is valid; after a store by t and only loads since,
    t still holds a copy (nothing is evicted in the model's infinite private caches)."""
    state, writer = INVALID, None
    for a in seq:
        state = delta(state, a)
        if isinstance(a, Store):
            writer = a.thread
        if writer is not None:
            assert writer in state.threads
        if isinstance(a, Load):
            assert a.threads <= state.threads
