"""Pointer-chase latency benchmark: the driver with a fake runner (no timing involved), the
output parser, argument checks, and one small real run that must time real dependent loads."""
from __future__ import annotations

import shutil

import pytest

from loopmodel.errors import ToolError
from loopmodel.measure.latency import make_point, parse_output, run_latency

needs_gcc = pytest.mark.skipif(shutil.which("gcc") is None, reason="gcc needed")


@needs_gcc
def test_driver_with_a_fake_runner():
    seen = {}

    def fake(cmd, timeout):
        seen["cmd"], seen["timeout"] = cmd, timeout
        return "size 4096 pinned 1 ns 1.5 1.2 1.3\nsize 1048576 pinned 1 ns 6.0 5.0 5.5\n"

    r = run_latency([4096, 1 << 20], repetitions=3, min_time_s=0.01, cpu=1, runner=fake)
    assert seen["cmd"][1:] == ["1", "64", "3", "0.01", "4096", "1048576"]
    assert seen["timeout"] > 0
    assert [(p.size_bytes, p.ns_min, p.ns_median, p.ns_max) for p in r.points] == [
        (4096, 1.2, 1.3, 1.5), (1 << 20, 5.0, 5.5, 6.0)]
    assert r.pinned and r.notes == () and r.cpu == 1
    assert r.points[0].cycles(2e9) == pytest.approx(2.4)  # 1.2 ns at 2 GHz
    assert r.points[1].spread == pytest.approx(0.2)


@needs_gcc
def test_unpinned_run_says_so():
    r = run_latency([4096], repetitions=1, min_time_s=0.01, runner=lambda c, t: "size 4096 pinned 0 ns 2.0\n")
    assert not r.pinned and "could not pin" in r.notes[0]


@pytest.mark.parametrize("stdout", ["", "size 4096 pinned 1 ns 1.0\nsize 8192 pinned 1 ns 1.0\n",
                                    "size 4096 pinned 1 ns -3.0\n", "size 4096 pinned 1 ns\n", "garbage\n"])
def test_malformed_output_is_one_line(stdout):
    with pytest.raises(ToolError) as e:
        parse_output(stdout, [4096], 1)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("sizes,reps", [([], 3), ([64], 3), ([4096], 0)])
def test_bad_arguments(sizes, reps):
    with pytest.raises(ToolError, match="at least 2 lines"):
        run_latency(sizes, repetitions=reps)


def test_median_of_even_count():
    assert make_point(64, [4.0, 1.0, 3.0, 2.0]).ns_median == 2.5


@needs_gcc
def test_real_chase_times_dependent_loads():
    """No load takes less than a cycle of a 5 GHz core (0.2 ns): a chase the compiler elided (the
    chased pointer stored only into a dead variable) timed nothing and gave negative figures."""
    r = run_latency([4096, 256 << 10], repetitions=2, min_time_s=0.002)
    assert [p.size_bytes for p in r.points] == [4096, 256 << 10]
    assert all(p.ns_min >= 0.2 and p.ns_max < 1e4 for p in r.points)
    assert r.pinned or r.notes
