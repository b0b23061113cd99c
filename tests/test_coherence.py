"""The MESI chunk-state automaton (benchmark-based-coherence-model.txt §III-B, Fig. 2): every
transition, the invariants, and the paper's dot-product example."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
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
    lines = n // 8  # of 64 B (the map is per cache line)
    init = ChunkStates()
    for a in ("x", "y"):
        init.assign(a, 0, lines, M(0))
    stm = [Statement("read", static_chunks("x", n, 2)), Statement("read", static_chunks("y", n, 2))]
    ph = phase_time(stm, init, lat_load, lat_store, 2)
    # each thread reads 2 chunks of 4 MB: working set 8 MB, from M at 5 GB/s: 8e6 / 5e9 s
    assert ph.seconds == pytest.approx(8e6 / 5e9)
    assert ph.transitions == {"L M own": pytest.approx(8e6 / 5e9), "L M other": pytest.approx(8e6 / 5e9)}
    assert ph.holders["L M other"] == {frozenset({0})}
    assert ph.states.state_at("x", 0) == M(0)               # thread 0 reads its own: no change
    assert ph.states.state_at("x", lines - 1) == S(0, 1)    # thread 1 reads thread 0's line: shared
    assert init.state_at("x", lines - 1) == M(0)            # the argument is not changed
    # first touch by the computing threads instead: each chunk (M,{t}) of its own reader
    own = ChunkStates()
    for a in ("x", "y"):
        for t, c in static_chunks(a, n, 2).items():
            own.assign(a, c.start // 8, c.stop // 8, M(t))
    ph2 = phase_time(stm, own, lat_load, lat_store, 2)
    assert ph2.seconds == pytest.approx(8e6 / 5e9) and set(ph2.transitions) == {"L M own"}
    assert ph2.states.pieces("x", 0, lines) == [(0, lines // 2, M(0)), (lines // 2, lines, M(1))]


def test_reads_and_writes_overlap_and_the_slowest_thread_counts():
    a = {0: Chunk("a", 0, 1000), 1: Chunk("a", 1000, 3000)}    # thread 1 has twice the work
    b = {0: Chunk("b", 0, 1000), 1: Chunk("b", 1000, 3000)}
    ph = phase_time([Statement("read", a), Statement("write", b)], ChunkStates(), lat_load, lat_store, 2)
    # thread 1: working set 32 kB; read 16 kB of it from I at 4 GB/s -> 32e3/4e9 * 1/2; write 16 kB at 2 GB/s
    r1, w1 = 32e3 / 4e9 * 0.5, 32e3 / 2e9 * 0.5
    assert ph.reads[1] == pytest.approx(r1) and ph.writes[1] == pytest.approx(w1)
    assert ph.seconds == pytest.approx(max(r1, w1))
    assert ph.states.state_at("a", 0) == E(0) and ph.states.state_at("b", 2999 // 8) == M(1)
    assert set(ph.transitions) == {"L I", "S I"}


def test_a_chunk_in_several_states_is_timed_piece_by_piece():
    """A halo: thread 1 reads x[999:2000] after thread 0 wrote x[0:1000] (lines 0..124 of
    64 B) and thread 1 x[1000:2000] (lines 125..249); the element 999 is a miss from (M,{0}) on
    line 124, which becomes shared, the rest a hit (hand-computed)."""
    s = ChunkStates()
    s.assign("x", 0, 125, M(0))
    s.assign("x", 125, 250, M(1))
    ph = phase_time([Statement("read", {1: Chunk("x", 999, 2000)})], s, lat_load, lat_store, 2)
    ws = 1001 * 8
    assert ph.transitions["L M other"] == pytest.approx(ws / 5e9 * 8 / ws)
    assert ph.transitions["L M own"] == pytest.approx(ws / 5e9 * 8000 / ws)
    assert ph.states.pieces("x", 123, 126) == [(123, 124, M(0)), (124, 125, S(0, 1)), (125, 126, M(1))]


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


# ------------------------------------------------------------------ states per cache line


def _shares(ph) -> dict:
    total = sum(ph.transitions.values())
    return {k: v / total for k, v in ph.transitions.items()}


def test_interleaved_chunks_share_their_cache_line():
    """Threads 0 and 1 write a[0:8:2] and a[1:8:2], interleaved in one 64 B line: the line is
    (M,{1}) after the phase (thread 1 wrote it last), so thread 0's re-read of its own elements
    is a miss on a line thread 1 holds modified, all of it (false sharing), not 7/8 of it."""
    one_ns = lambda key, stride, size, threads: size * 1e-9  # noqa: E731
    write = Statement("write", {0: Chunk("a", 0, 8, 2), 1: Chunk("a", 1, 8, 2)})
    ph0 = phase_time([write], ChunkStates(), one_ns, one_ns, 2)
    assert _shares(ph0) == {"S I": 0.5, "S M other": 0.5}  # thread 1 takes the line thread 0 wrote
    assert ph0.states.pieces("a", 0, 2) == [(0, 1, M(1)), (1, 2, INVALID)]
    ph1 = phase_time([Statement("read", {0: Chunk("a", 0, 8, 2)})], ph0.states, one_ns, one_ns, 2)
    assert _shares(ph1) == {"L M other": 1.0} and ph1.holders == {"L M other": {frozenset({1})}}
    assert ph1.states.state_at("a", 0) == S(0, 1)


def test_a_stride_of_more_than_a_line_touches_its_own_lines_only():
    """a[0::16] and a[8::16] (doubles, 128 B apart): thread 0 has the even lines, thread 1 the
    odd ones; each re-reads its own lines from (M,{t}), none of the other's."""
    one_ns = lambda key, stride, size, threads: size * 1e-9  # noqa: E731
    chunks = {0: Chunk("a", 0, 1600, 16), 1: Chunk("a", 8, 1600, 16)}
    assert chunks[0].lines(64) == [(k, k + 1) for k in range(0, 200, 2)]
    ph0 = phase_time([Statement("write", chunks)], ChunkStates(), one_ns, one_ns, 2)
    assert set(ph0.transitions) == {"S I"}
    assert [ph0.states.state_at("a", k) for k in range(4)] == [M(0), M(1), M(0), M(1)]
    ph1 = phase_time([Statement("read", chunks)], ph0.states, one_ns, one_ns, 2)
    assert set(ph1.transitions) == {"L M own"} and ph1.states.key() == ph0.states.key()


def test_lines_of_float_chunks_and_other_line_sizes():
    """16 floats per 64 B line, 32 per 128 B line; a chunk's bytes are counted per line."""
    c = Chunk("f", 10, 50, 1, 4)
    assert c.lines(64) == [(0, 4)] and c.lines(128) == [(0, 2)]
    assert [c.bytes_in(64, k, k + 1) for k in range(4)] == [6 * 4, 16 * 4, 16 * 4, 2 * 4]
    assert sum(c.bytes_in(128, k, k + 1) for k in range(2)) == c.size


def test_a_chunk_over_too_many_separate_lines_is_refused_in_one_line():
    from loopmodel.errors import ModelError
    from loopmodel.models.coherence import MAX_CHUNK_RUNS

    with pytest.raises(ModelError) as exc:
        Chunk("a", 0, 16 * (MAX_CHUNK_RUNS + 1), 16).lines(64)
    assert str(exc.value) == (f"a chunk of 'a' touches {MAX_CHUNK_RUNS + 1} separate cache lines (stride 128 B); "
                              f"the coherence model tracks at most {MAX_CHUNK_RUNS} per chunk")


@given(st.lists(st.tuples(st.lists(st.tuples(st.integers(0, 40), st.integers(1, 4)), min_size=1, max_size=5),
                          st.sampled_from([0, 1, 2])), max_size=12), st.integers(0, 45))
@settings(derandomize=True, max_examples=200, deadline=None)
def test_update_of_many_runs_agrees_with_a_line_by_line_map(ops, probe):
    """Property: :meth:`ChunkStates.update` over several runs at once (one merge pass) gives
    every line the state δ gives it, and returns the states before, line by line (a
    dictionary per line as the reference)."""
    from loopmodel.models.coherence import Load, Store, delta

    s, ref = ChunkStates(), {}
    for spans, t in ops:
        lines = sorted({x for lo, n in spans for x in range(lo, lo + n)})
        runs = []
        for x in lines:
            if runs and runs[-1][1] == x:
                runs[-1] = (runs[-1][0], x + 1)
            else:
                runs.append((x, x + 1))
        action = Store(t) if t != 2 else Load(frozenset({1}))
        pieces = s.update("x", runs, lambda before: delta(before, action))
        assert [x for lo, hi, _ in pieces for x in range(lo, hi)] == lines
        for lo, hi, before in pieces:
            for x in range(lo, hi):
                assert before == ref.get(x, INVALID)
                ref[x] = delta(before, action)
    assert s.state_at("x", probe) == ref.get(probe, INVALID)
    assert all(s.state_at("x", x) == st_ for x, st_ in ref.items())
    ivs = s.key()[0][1] if s.key() else ()
    assert all(a[1] <= b[0] and not (a[1] == b[0] and a[2] == b[2]) for a, b in zip(ivs, ivs[1:]))
