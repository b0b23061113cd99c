"""The compiled simulator equals the pure-Python reference, on random
hierarchies and random traces, for every policy, inclusion mode and store policy."""
from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cachesim_reference import ReferenceHierarchy

from loopmodel.cachesim.hierarchy import Hierarchy, LevelSpec

KINDS = {0: "load", 1: "store", 2: "nt"}


@st.composite
def hierarchies(draw):
    n = draw(st.integers(1, 3))
    line = draw(st.sampled_from([16, 32, 64]))
    levels = []
    for i in range(n):
        kind = draw(st.sampled_from(["inclusive", "non-inclusive"] + (["victim"] if i > 0 else [])))
        levels.append(LevelSpec(f"L{i + 1}", draw(st.integers(1, 8)), draw(st.integers(1, 4)), line,
                                draw(st.sampled_from(["LRU", "FIFO", "RANDOM"])), draw(st.booleans()),
                                draw(st.booleans()), kind, draw(st.integers(1, 2 ** 64 - 1)),
                                victim_clean=draw(st.booleans())))
    return levels


@st.composite
def traces(draw, line):
    pool = draw(st.lists(st.integers(0, 40), min_size=1, max_size=24))
    bases = [0, 2 ** 63, 2 ** 64 - 4096]
    out = []
    for _ in range(draw(st.integers(1, 300))):
        base = draw(st.sampled_from(bases))
        ln = draw(st.sampled_from(pool))
        off = draw(st.integers(0, line - 1))
        size = draw(st.integers(1, 24))
        addr = min(base + ln * line + off, 2 ** 64 - size)
        out.append((addr, size, draw(st.sampled_from([0, 0, 0, 1, 1, 2]))))
    return out


def _compare(fast, ref, levels):
    assert fast.stats() == ref.stats()
    for i in range(len(levels)):
        assert fast.contents(i) == ref.contents(i), f"level {i}"


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_per_access_api_matches_reference(data):
    levels = data.draw(hierarchies())
    trace = data.draw(traces(levels[0].line_size))
    quiet = data.draw(st.integers(0, len(trace)))
    fast, ref = Hierarchy(levels), ReferenceHierarchy(levels)
    for k, (addr, size, kind) in enumerate(trace):
        on = k >= quiet  # statistics off for a prefix: state changes, counts do not
        fast.counting = ref.counting = on
        fast.access(addr, size, KINDS[kind])
        ref.access(addr, size, KINDS[kind])
    _compare(fast, ref, levels)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_batch_api_matches_reference(data):
    levels = data.draw(hierarchies())
    trace = data.draw(traces(levels[0].line_size))
    fast, ref = Hierarchy(levels), ReferenceHierarchy(levels)
    fast.trace([a for a, _, _ in trace], [k for _, _, k in trace], [s for _, s, _ in trace])
    for addr, size, kind in trace:
        ref.access(addr, size, KINDS[kind])
    _compare(fast, ref, levels)
    fast.reset_stats()
    ref.reset_stats()
    assert fast.stats() == ref.stats()


# --- the reference itself, against numbers worked out by hand from the specification ----------

def _h(*levels):
    return ReferenceHierarchy(list(levels))


def test_lru_and_fifo_differ_by_hand():
    # one set of 2 ways: A B A C -> LRU evicts B (A was touched), FIFO evicts A (oldest)
    for policy, survivor in (("LRU", 0), ("FIFO", 1)):
        h = _h(LevelSpec("L1", 1, 2, 64, policy))
        for line in (0, 1, 0, 2):
            h.access(line * 64, 8, "load")
        assert sorted(ln for ln, _ in h.contents(0)[0]) == sorted([2, survivor])
        assert h.stats()["L1"]["hits"] == 1 and h.stats()["L1"]["evicts"] == 1


def test_dirty_eviction_by_hand():
    h = _h(LevelSpec("L1", 1, 1, 64))
    h.access(0, 8, "store")   # miss, write-allocate: load_lines 1, MEM.loads 1, dirty
    h.access(64, 8, "load")   # evicts the dirty line: store_lines 1, MEM.stores 1
    s = h.stats()
    assert s["L1"] == {"hits": 0, "misses": 2, "load_lines": 2, "store_lines": 1, "through_bytes": 0,
                       "evicts": 1, "invalidations": 0}
    assert s["MEM"] == {"loads": 2, "stores": 1, "store_bytes": 0}


def test_victim_cache_by_hand():
    h = _h(LevelSpec("L1", 1, 1, 64), LevelSpec("L2", 1, 2, 64, kind="victim"))
    h.access(0, 8, "load")     # memory -> L1 directly (L2 probed: miss)
    h.access(64, 8, "load")    # L1 evicts line 0 clean into L2
    assert h.contents(1) == [[(0, False)]]
    h.access(0, 8, "load")     # victim hit: line 0 moves up, line 1 goes down
    assert h.contents(1) == [[(1, False)]] and h.contents(0) == [[(0, False)]]
    s = h.stats()
    assert s["L2"]["hits"] == 1 and s["L2"]["misses"] == 2
    assert s["L1"]["store_lines"] == 2 and s["MEM"]["loads"] == 2


def test_inclusive_back_invalidation_by_hand():
    h = _h(LevelSpec("L1", 1, 2, 64), LevelSpec("L2", 1, 1, 64, kind="inclusive"))
    h.access(0, 8, "store")    # line 0 dirty in L1, clean in L2
    h.access(64, 8, "load")    # L2 evicts line 0: L1's dirty copy invalidated and written back
    s = h.stats()
    assert h.contents(0) == [[(1, False)]]
    assert s["L1"]["invalidations"] == 1 and s["L2"]["store_lines"] == 1 and s["MEM"]["stores"] == 1


def test_write_through_and_no_write_allocate_by_hand():
    h = _h(LevelSpec("L1", 1, 1, 64, write_allocate=False, write_back=False), LevelSpec("L2", 1, 1, 64))
    h.access(0, 8, "store")    # L1 miss, not allocated: 8 B through to L2, which write-allocates
    h.access(0, 8, "store")    # again a miss in L1
    s = h.stats()
    assert h.contents(0) == [[]] and h.contents(1) == [[(0, True)]]
    assert s["L1"]["through_bytes"] == 16 and s["L1"]["misses"] == 2
    assert s["L2"]["misses"] == 1 and s["L2"]["hits"] == 1 and s["MEM"]["loads"] == 1


def test_nt_store_by_hand():
    h = _h(LevelSpec("L1", 1, 1, 64))
    h.access(0, 8, "load")
    h.access(4, 8, "nt")       # invalidates line 0, 8 B straight to memory
    s = h.stats()
    assert h.contents(0) == [[]]
    assert s["L1"]["invalidations"] == 1 and s["L1"]["through_bytes"] == 8 and s["MEM"]["store_bytes"] == 8


def test_access_crossing_lines_by_hand():
    h = _h(LevelSpec("L1", 4, 1, 16))
    h.access(12, 8, "store")   # bytes 12..19: 4 B in line 0, 4 B in line 1
    assert h.stats()["L1"]["misses"] == 2
    assert [s for s in h.contents(0) if s] == [[(0, True)], [(1, True)]]


def test_random_replacement_is_seeded():
    a = _h(LevelSpec("L1", 1, 4, 64, "RANDOM", seed=7))
    b = _h(LevelSpec("L1", 1, 4, 64, "RANDOM", seed=7))
    c = _h(LevelSpec("L1", 1, 4, 64, "RANDOM", seed=8))
    for h in (a, b, c):
        for line in range(40):
            h.access(line * 64 % 2048, 8, "load")
    assert a.contents(0) == b.contents(0)
    assert a.contents(0) != c.contents(0)


def test_fast_simulator_rejects_bad_organisation():
    from loopmodel.errors import ModelError
    with pytest.raises(ModelError):
        Hierarchy([LevelSpec("L1", 4, 2, 48)])
    with pytest.raises(ModelError):
        Hierarchy([LevelSpec("L1", 4, 2, 64, kind="victim")])
    with pytest.raises(ModelError):
        Hierarchy([LevelSpec("L1", 4, 2, 64, policy="PLRU")])
