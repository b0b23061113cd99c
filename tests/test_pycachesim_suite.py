"""pycachesim's own unit-test expectations (its tests/test.py, class TestHighlevel: LRU hierarchies,
write-back, write-allocate) through loopmodel's simulator: independent checks of the simulator.

The transcription of the access patterns and numbers lives in benchmarks/pycachesim_suite.py
(which prints the whole table); the tests here run the ones that take well under a second. The
slow ones (test_large_store_write_allocate, test_large_fill_iter, test_irk_heat and the two 2D
5-point tests with 8000 and 1000 rows: 3 to 10 s each) are run by the script; their 82
expectations all hold (benchmarks/results/pycachesim_suite.txt)."""
from __future__ import annotations

import importlib.util

import pytest

from helpers import ROOT


def _suite():
    spec = importlib.util.spec_from_file_location("pycachesim_suite", ROOT / "benchmarks" / "pycachesim_suite.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SUITE = _suite()
FAST = ["test_fill_nocl", "test_fill", "test_large_fill", "test_large_continious_store_write_allocate",
        "test_cached_store_l1", "test_cached_store_l2_full", "test_cached_store",
        "test_2d5pt_L2_layerconditions_loadstore"]


@pytest.mark.parametrize("name", FAST)
def test_pycachesim_expectation_holds(name):
    rows = getattr(SUITE, name)()
    assert rows
    failing = [(q, want, got) for q, want, got in rows
               if want != got and (name, q) not in SUITE.FAIL_NOTES]
    assert failing == []


def test_2d5pt_small_matrix_writes_nothing_to_memory():
    """pycachesim expects one memory store in its 100-row variant of the 2D 5-point L2 test; the
    4.4 MB the warm-up touches fit in the 20 MiB L3, so no dirty line can have reached memory."""
    rows = {q: got for q, _, got in SUITE.test_2d5pt_L2_layerconditions_loadstore()}
    assert rows["MEM.STORE_count"] == 0
    assert rows["L3.STORE_count"] == 1  # the dirty line written back from L2 stays in the L3
