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


@pytest.mark.parametrize("state,action,name", [
    (INVALID, L(0), "L I"), (INVALID, Store(3), "S I"),
    (M(0), L(0), "L M own"), (M(0), L(1), "L M other"), (E(1), L(1), "L E own"), (E(1), L(0), "L E other"),
    (S(0, 1), L(1), "L S own"), (S(0, 1), L(2), "L S other"),
    (M(2), Store(2), "S M own"), (M(2), Store(0), "S M other"), (E(2), Store(2), "S E own"),
    (E(2), Store(1), "S E other"), (S(0, 1), Store(0), "S S own"), (S(0, 1), Store(4), "S S other")])
def test_transition_names_the_benchmark(state, action, name):
    """Every one of the 14 benchmarked transitions, told apart by whether the acting thread
    holds a copy (a hit) or not (a miss with a coherence message: the paper's Fig. 3)."""
    from loopmodel.machine.coherence import TRANSITION_KEYS
    assert transition(state, action) == name and name in TRANSITION_KEYS


def test_transition_labels_in_the_papers_notation():
    from loopmodel.models.coherence import transition_label
    assert transition_label("L M other", {frozenset({0})}) == "L_t from (M,{0})"
    assert transition_label("L M other", {frozenset({0}), frozenset({1})}) == "L_t from (M,{u})"
    assert transition_label("L M own", {frozenset({0}), frozenset({1})}) == "L_t from (M,{t})"
    assert transition_label("S S own", {frozenset({0, 1})}) == "S_t from (S,Ω∋t)"
    assert transition_label("L I", {frozenset()}) == "L_t from (I,∅)"


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


# ------------------------------------------------------------------ Algorithm 1
from loopmodel.models.coherence import Chunk, ChunkStates, Statement, phase_time  # noqa: E402

GBS = {"M": 5e9, "E": 10e9, "S": 10e9, "I": 4e9}  # bytes/s by starting state


def lat_load(key, stride, size, threads):
    return size / GBS[key.split()[1]]


def lat_store(key, stride, size, threads):
    return size / 2e9


def static_chunks(array, n, threads):
    per = n // threads
    return {t: Chunk(array, t * per, (t + 1) * per) for t in range(threads)}


def test_dot_product_after_initialisation_by_thread_0():
    """The paper's study: x and y written by thread 0 (M,{0}); a 2-thread dot product then
    loads each thread's half from M (hand-computed)."""
    n = 1_000_000
    init = ChunkStates()
    for a in ("x", "y"):
        init.assign(a, 0, n, M(0))
    stm = [Statement("read", static_chunks("x", n, 2)), Statement("read", static_chunks("y", n, 2))]
    ph = phase_time(stm, init, lat_load, lat_store, 2)
    # each thread reads 2 chunks of 4 MB: working set 8 MB, from M at 5 GB/s: 8e6 / 5e9 s
    assert ph.seconds == pytest.approx(8e6 / 5e9)
    assert ph.transitions == {"L M own": pytest.approx(8e6 / 5e9), "L M other": pytest.approx(8e6 / 5e9)}
    assert ph.holders["L M other"] == {frozenset({0})}
    assert ph.states.state_at("x", 0) == M(0)               # thread 0 reads its own: no change
    assert ph.states.state_at("x", n - 1) == S(0, 1)        # thread 1 reads thread 0's line: shared
    assert init.state_at("x", n - 1) == M(0)                # the argument is not changed
    # first touch by the computing threads instead: each chunk (M,{t}) of its own reader
    own = ChunkStates()
    for a in ("x", "y"):
        for t, c in static_chunks(a, n, 2).items():
            own.assign(a, c.start, c.stop, M(t))
    ph2 = phase_time(stm, own, lat_load, lat_store, 2)
    assert ph2.seconds == pytest.approx(8e6 / 5e9) and set(ph2.transitions) == {"L M own"}
    assert ph2.states.pieces("x", 0, n) == [(0, n // 2, M(0)), (n // 2, n, M(1))]


def test_reads_and_writes_overlap_and_the_slowest_thread_counts():
    a = {0: Chunk("a", 0, 1000), 1: Chunk("a", 1000, 3000)}    # thread 1 has twice the work
    b = {0: Chunk("b", 0, 1000), 1: Chunk("b", 1000, 3000)}
    ph = phase_time([Statement("read", a), Statement("write", b)], ChunkStates(), lat_load, lat_store, 2)
    # thread 1: working set 32 kB; read 16 kB of it from I at 4 GB/s -> 32e3/4e9 * 1/2; write 16 kB at 2 GB/s
    r1, w1 = 32e3 / 4e9 * 0.5, 32e3 / 2e9 * 0.5
    assert ph.reads[1] == pytest.approx(r1) and ph.writes[1] == pytest.approx(w1)
    assert ph.seconds == pytest.approx(max(r1, w1))
    assert ph.states.state_at("a", 0) == E(0) and ph.states.state_at("b", 2999) == M(1)
    assert set(ph.transitions) == {"L I", "S I"}


def test_a_chunk_in_several_states_is_timed_piece_by_piece():
    """A halo: thread 1 reads x[999:2000] after thread 0 wrote x[0:1000] and thread 1
    x[1000:2000]; the element 999 is a miss from (M,{0}), the rest a hit (hand-computed)."""
    s = ChunkStates()
    s.assign("x", 0, 1000, M(0))
    s.assign("x", 1000, 2000, M(1))
    ph = phase_time([Statement("read", {1: Chunk("x", 999, 2000)})], s, lat_load, lat_store, 2)
    ws = 1001 * 8
    assert ph.transitions["L M other"] == pytest.approx(ws / 5e9 * 8 / ws)
    assert ph.transitions["L M own"] == pytest.approx(ws / 5e9 * 8000 / ws)
    assert ph.states.pieces("x", 990, 1001) == [(990, 999, M(0)), (999, 1000, S(0, 1)), (1000, 1001, M(1))]


def test_chunk_states_merge_and_split():
    s = ChunkStates()
    s.assign("a", 10, 20, M(0))
    s.assign("a", 20, 30, M(0))
    assert s.pieces("a", 0, 40) == [(0, 10, INVALID), (10, 30, M(0)), (30, 40, INVALID)]
    s.assign("a", 15, 25, E(1))
    assert s.pieces("a", 10, 30) == [(10, 15, M(0)), (15, 25, E(1)), (25, 30, M(0))]
    assert s.pieces("b", 0, 5) == [(0, 5, INVALID)]


@given(st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.sampled_from([0, 1, 2])), max_size=20),
       st.integers(0, 60))
def test_chunk_states_agree_with_an_element_by_element_map(ops, probe):
    """Property: the interval map gives every element the state of the last assignment that
    covered it (an element-by-element dictionary as the reference)."""
    s, ref = ChunkStates(), {}
    for a, b, t in ops:
        lo, hi = min(a, b), max(a, b)
        s.assign("x", lo, hi, M(t))
        for i in range(lo, hi):
            ref[i] = M(t)
    assert s.state_at("x", probe) == ref.get(probe, INVALID)
    pieces = s.pieces("x", 0, 60)
    assert pieces[0][0] == 0 and pieces[-1][1] == 60
    assert all(p[1] == q[0] for p, q in zip(pieces, pieces[1:]))


def test_chunk_size_and_stride():
    c = Chunk("a", 0, 10, 3)
    assert c.size == 4 * 8 and c.stride == 24
    assert Chunk("a", 5, 5).size == 0


from loopmodel.models.coherence import static_schedule  # noqa: E402


def test_static_schedule_blocks_with_remainders():
    assert static_schedule(0, 10, 3) == {0: (0, 4), 1: (4, 7), 2: (7, 10)}
    assert static_schedule(0, 8, 4) == {0: (0, 2), 1: (2, 4), 2: (4, 6), 3: (6, 8)}
    assert static_schedule(5, 7, 4) == {0: (5, 6), 1: (6, 7)}  # fewer iterations than threads
    assert static_schedule(3, 3, 2) == {}
    with pytest.raises(ValueError):
        static_schedule(0, 1, 0)


@given(st.integers(0, 1000), st.integers(0, 1000), st.integers(1, 64))
def test_static_schedule_covers_every_iteration_once(lo, n, threads):
    sched = static_schedule(lo, lo + n, threads)
    covered = [i for a, b in sched.values() for i in range(a, b)]
    assert covered == list(range(lo, lo + n))
    sizes = [b - a for a, b in sched.values()]
    assert not sizes or max(sizes) - min(sizes) <= 1
