"""The pieces of the OpenMP size study that work per class of sizes: the classes and dense ranks
of the cuts (coherence_classes), the MESI states of many classes at once against δ and the
transition names of models.coherence segment by segment (coherence_sizes), and the slots of a
statement's runs (coherence_slots)."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from loopmodel.machine.coherence import LOAD_KEYS, STORE_KEYS
from loopmodel.models.coherence import INVALID, Load, Store, delta, transition
from loopmodel.models.coherence_classes import Layout
from loopmodel.models.coherence_sizes import ClassStates
from loopmodel.models.coherence_slots import slots, statement_runs


@st.composite
def _runs(draw):
    """An array's line runs at a few sizes: per statement (lo, hi) of shape (team, S)."""
    size = draw(st.integers(1, 6))
    team = draw(st.integers(1, 4))
    pairs = []
    for _ in range(draw(st.integers(1, 3))):
        lo = np.array(draw(st.lists(st.lists(st.integers(0, 12), min_size=size, max_size=size),
                                    min_size=team, max_size=team)), dtype=np.int64)
        width = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=size, max_size=size),
                                       min_size=team, max_size=team)), dtype=np.int64)
        pairs.append((lo, lo + width))
    return pairs


@settings(max_examples=60, deadline=None, derandomize=True)
@given(runs=_runs())
def test_the_classes_are_the_sizes_whose_cuts_have_the_same_dense_ranks(runs):
    """Every run's dense rank (its rank among the size's distinct cuts) is np.unique's, two
    sizes share a class exactly where all ranks agree, and the first element at each class's
    cut of each dense rank is the size's own cut x elements per line."""
    layout = Layout({"a": runs}, {"a": 4}, 64, runs[0][0].shape[1])
    values = np.concatenate([x for pair in runs for x in pair])
    want = np.array([np.unique(col, return_inverse=True)[1] for col in values.T]).T
    got = np.concatenate([layout.ranks["a"][j][k][:, layout.inverse] for j in range(len(runs)) for k in (0, 1)])
    assert np.array_equal(got, want)
    for s in range(values.shape[1]):
        for u in range(values.shape[1]):
            same = np.array_equal(want[:, s], want[:, u])
            assert same == (layout.inverse[s] == layout.inverse[u])
    assert list(layout.reps) == sorted(layout.reps)
    for s in range(values.shape[1]):
        distinct = np.unique(values[:, s])
        source = layout.source["a"][layout.inverse[s]]
        assert list(layout.first["a"][s, source[:distinct.size]]) == list(distinct * 16)


@st.composite
def _statements(draw):
    """A few statements on one array of 8 segments in 3 classes: per statement the store flag
    and per thread the segment run [ra, rb) in each class (empty runs allowed, neighbours and
    more than two threads sharing segments)."""
    team = draw(st.integers(1, 5))
    out = []
    for _ in range(draw(st.integers(1, 4))):
        ra = np.array(draw(st.lists(st.lists(st.integers(0, 8), min_size=3, max_size=3), min_size=team,
                                    max_size=team)), dtype=np.int64)
        width = np.array(draw(st.lists(st.lists(st.integers(0, 4), min_size=3, max_size=3), min_size=team,
                                       max_size=team)), dtype=np.int64)
        out.append((draw(st.booleans()), ra, np.minimum(ra + width, 8)))
    return out


@settings(max_examples=80, deadline=None, derandomize=True)
@given(statements=_statements())
def test_the_class_states_follow_delta_segment_by_segment(statements):
    """Each thread's chunk, thread 0 first, takes on every segment the transition
    models.coherence.transition names from the segment's state, which then follows delta:
    the vectorised states (two threads on a segment at once, three or more one by one) give
    the same transitions and states."""
    states = ClassStates({"a": 8}, 3)
    ref = [[INVALID] * 3 for _ in range(8)]
    for store, ra, rb in statements:
        got = states.apply("a", ra, rb, store)
        if got is None:
            assert (ra >= rb).all()
            continue
        lo, key = got
        for t in range(ra.shape[0]):
            action = Store(t) if store else Load(frozenset({t}))
            names = STORE_KEYS if store else LOAD_KEYS
            for r in range(3):
                for j in range(key.shape[1]):
                    seg = lo + j
                    if ra[t, r] <= seg < rb[t, r]:
                        assert names[key[t, j, r]] == transition(ref[seg][r], action)
                        ref[seg][r] = delta(ref[seg][r], action)
                    else:
                        assert key[t, j, r] == -1
    snap = states.snapshot()["a"]
    codes = {"I": 0, "M": 1, "E": 2, "S": 3}
    for seg in range(8):
        for r in range(3):
            assert snap[0][seg, r] == codes[ref[seg][r].state]
            assert {t for t in range(64) if int(snap[1][seg, r]) >> t & 1} == set(ref[seg][r].threads)


@settings(max_examples=80, deadline=None, derandomize=True)
@given(data=st.data(), team=st.integers(1, 4), count=st.integers(1, 4), width=st.integers(1, 7))
def test_the_slots_hold_every_threads_runs_in_order(data, team, count, width):
    """statement_runs cuts each thread's segments where the transition changes; slots places
    every run in a slot of its transition, in increasing slot order."""
    key = np.array(data.draw(st.lists(st.lists(st.lists(st.integers(-1, 6), min_size=count, max_size=count),
                                               min_size=width, max_size=width), min_size=team, max_size=team)),
                   dtype=np.int8)
    for t in range(team):  # a chunk covers contiguous segments: -1 only before and after them
        for r in range(count):
            inside = np.flatnonzero(key[t, :, r] >= 0)
            if inside.size:
                key[t, inside[0]:inside[-1] + 1, r] = np.where(key[t, inside[0]:inside[-1] + 1, r] < 0, 0,
                                                               key[t, inside[0]:inside[-1] + 1, r])
    if not (key >= 0).any():
        return
    rb = np.full((team, count), 5 + width, dtype=np.int64)
    starts, keys = statement_runs(5, key.copy(), rb)
    sequence, slot = slots(keys)
    for t in range(team):
        for r in range(count):
            runs = [(int(s), int(k)) for s, k in zip(starts[t, :, r], keys[t, :, r]) if k >= 0]
            segs = [(5 + j, int(k)) for j, k in enumerate(key[t, :, r]) if k >= 0]
            want = [(s, k) for i, (s, k) in enumerate(segs) if i == 0 or segs[i - 1][1] != k]
            assert runs == want
            places = [int(slot[t, p, r]) for p in range(len(runs))]
            assert places == sorted(set(places))
            assert [sequence[q] for q in places] == [k for _, k in runs]
