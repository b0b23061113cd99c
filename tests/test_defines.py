"""Unit tests for ``loopmodel.fileio.defines`` (-D values, ranges, Kerncraft forms)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import KERNELS, run_cli
from loopmodel.errors import DefineError, LoopmodelError
from loopmodel.fileio.defines import normalize_argv, parse_define_lazy, sweep


def parse_define(text: str) -> tuple:
    """``(name, [sizes])`` of one ``-D`` text, its sizes listed."""
    name, values = parse_define_lazy(text)
    return name, list(values)


def expand(texts, defaults=None) -> list:
    """Every point of the ``-D`` texts, listed."""
    return list(sweep(texts, defaults))


def test_single_value():
    assert parse_define("N=1000") == ("N", [1000])


def test_whitespace_around_name_and_value():
    assert parse_define(" N = 42 ") == ("N", [42])


def test_underscore_names():
    assert parse_define("_n_2=7") == ("_n_2", [7])


def test_two_token_form_normalized():
    argv = ["analyze", "k.c", "-D", "N", "1000", "-m", "X"]
    assert normalize_argv(argv) == ["analyze", "k.c", "-D", "N=1000", "-m", "X"]


def test_two_token_form_with_range_and_several():
    argv = ["-D", "M", "130", "-D", "N", "10-10000:4log10", "k.c"]
    assert normalize_argv(argv) == ["-D", "M=130", "-D", "N=10-10000:4log10", "k.c"]


def test_normalize_keeps_equals_form_and_other_args():
    argv = ["analyze", "-D", "N=5", "k.c", "-m", "IVB", "--json"]
    assert normalize_argv(argv) == argv


def test_normalize_trailing_dash_d_untouched():
    assert normalize_argv(["-D", "N"]) == ["-D", "N"]


def test_normalize_only_joins_name_value_pairs():
    # a value-like second token is required; a file name with capitals or '/' is left alone
    assert normalize_argv(["-D", "N", "K.c"]) == ["-D", "N", "K.c"]
    assert normalize_argv(["-D", "N", "/tmp/k.c"]) == ["-D", "N", "/tmp/k.c"]
    assert normalize_argv(["-D", "1N", "5"]) == ["-D", "1N", "5"]


def test_start_stop_step_inclusive():
    assert parse_define("N=100:2000:100")[1] == list(range(100, 2001, 100))
    assert parse_define("N=100:2000:100")[1][-1] == 2000


def test_start_stop_step_stop_not_on_grid():
    assert parse_define("N=1:10:4")[1] == [1, 5, 9]


def test_start_stop_default_step():
    assert parse_define("N=3:6")[1] == [3, 4, 5, 6]


def test_single_point_range():
    assert parse_define("N=5:5")[1] == [5]


def test_kerncraft_linear_points():
    vals = parse_define("N=100-2000:20")[1]
    assert len(vals) == 20
    assert vals[0] == 100 and vals[-1] == 2000
    assert vals == [100 + 100 * k for k in range(20)]


def test_kerncraft_log10():
    assert parse_define("N=10-10000:4log10")[1] == [10, 100, 1000, 10000]


def test_kerncraft_log2():
    assert parse_define("N=2-1024:10log2")[1] == [2 ** k for k in range(1, 11)]


def test_kerncraft_log_points_increasing_and_unique():
    vals = parse_define("N=1-100:50log10")[1]
    assert vals == sorted(set(vals))
    assert vals[0] == 1 and vals[-1] == 100


def test_kerncraft_plain_range():
    assert parse_define("N=5-8")[1] == [5, 6, 7, 8]


def test_kerncraft_one_point():
    assert parse_define("N=7-100:1")[1] == [7]


def test_expand_single():
    assert expand(["N=10"]) == [{"N": 10}]


def test_expand_cartesian_product():
    pts = expand(["M=1:2", "N=10:30:10"])
    assert len(pts) == 6
    assert {(p["M"], p["N"]) for p in pts} == {(m, n) for m in (1, 2) for n in (10, 20, 30)}
    # order: the first -D varies slowest
    assert [(p["M"], p["N"]) for p in pts][:3] == [(1, 10), (1, 20), (1, 30)]


def test_expand_defaults_from_define():
    assert expand([], {"N": 1000}) == [{"N": 1000}]
    assert expand(None, {"N": 1000, "M": 5}) == [{"N": 1000, "M": 5}]


def test_expand_define_overrides_default():
    assert expand(["N=5"], {"N": 1000, "M": 7}) == [{"N": 5, "M": 7}]


def test_expand_nothing():
    assert expand([]) == [{}]


def test_expand_does_not_mutate_defaults():
    d = {"N": 1}
    expand(["N=2:3"], d)
    assert d == {"N": 1}


def test_defaults_from_kernel_file(tmp_path):
    from loopmodel.fileio.c_kernel import parse_kernel

    k, defaults = parse_kernel("#define N 1000\n#define M 20\ndouble a[M][N];\n"
                               "for (int j=0;j<M;j++) for (int i=0;i<N;i++) a[j][i] = 1.0;\n", "d.c")
    assert defaults == {"N": 1000, "M": 20}
    assert expand(["N=10"], defaults) == [{"N": 10, "M": 20}]
    assert k.free_constants(expand([], defaults)[0]) == []


@pytest.mark.parametrize("text,fragment", [
    ("N", "expected NAME=VALUE"),
    ("N=", "missing value"),
    ("1N=5", "not a valid constant name"),
    ("N-x=5", "not a valid constant name"),
    ("N=abc", "not an integer"),
    ("N=1.5", "not an integer"),
    ("N=0", "positive"),
    ("N=-3", "positive"),
    ("N=10:5", "below start"),
    ("N=1:2:3:4", "start:stop"),
    ("N=1:x", "not an integer"),
    ("N=20-10", "below start"),
    ("N=1-10:0", "number of points"),
])
def test_errors(text, fragment):
    with pytest.raises(DefineError) as ei:
        parse_define(text)
    assert fragment in str(ei.value)
    assert "\n" not in str(ei.value)
    assert isinstance(ei.value, LoopmodelError) and ei.value.exit_code == 2


def test_zero_step_rejected():
    with pytest.raises(DefineError):
        parse_define("N=1:10:0")


def test_normalize_does_not_take_an_option_as_value():
    """'-D N --json' is an incomplete define followed by an option, not N=--json."""
    assert normalize_argv(["-D", "N", "--json"]) == ["-D", "N", "--json"]
    assert normalize_argv(["-D", "N", "-v"]) == ["-D", "N", "-v"]


@pytest.mark.parametrize("spec", ["N=1:10:0", "N=0:10", "N=1-10:0"])
def test_zero_in_range_names_the_whole_spec(spec):
    with pytest.raises(DefineError) as exc:
        parse_define(spec)
    assert f"-D {spec}:" in str(exc.value)


# ---- bounded sizes, ASCII digits, lazy Kerncraft ranges ------------------------------------------------

def _eager_linear(start, stop, num):
    """The list the linear count form gave before it became lazy (reference)."""
    return sorted(set(round(start + (stop - start) * k / (num - 1)) for k in range(num)))


def _eager_log(start, stop, num, base):
    """The list the logarithmic count form gave before it became lazy (reference)."""
    import math

    base = float(base)
    lo, hi = math.log(start, base), math.log(stop, base)
    return sorted(set(round(base ** (lo + (hi - lo) * k / (num - 1))) for k in range(num)))


@pytest.mark.parametrize("text", ["N=" + "9" * 400, "N=4611686018427387905", "N=1:" + "9" * 30,
                                  "N=1-99999999999999999999", "N=1-10:99999999999999999999",
                                  "N=1-10:3log99999999999999999999"])
def test_sizes_above_2_62_are_refused_in_one_line(text):
    with pytest.raises(DefineError) as exc:
        parse_define(text)
    msg = str(exc.value)
    assert "larger than 2**62" in msg and "\n" not in msg and len(msg) < 200


def test_the_largest_size_is_accepted():
    assert parse_define("N=4611686018427387904") == ("N", [2 ** 62])


def test_api_refuses_a_huge_size_in_one_line():
    import loopmodel

    with pytest.raises(DefineError) as exc:
        loopmodel.analyze(str(KERNELS / "daxpy.c"), "SkylakeSP_Gold-6148", {"N": 10 ** 400})
    assert "larger than 2**62" in str(exc.value)


@pytest.mark.parametrize("text", ["N=\uff11\uff10\uff10", "N=\uff11-\uff11\uff10", "N=1:\u0663", "N=1_000",
                                  "N=10-1000:4log\uff12"])
def test_only_ascii_digits(text):
    with pytest.raises(DefineError) as exc:
        parse_define(text)
    assert "not an integer" in str(exc.value)


@pytest.mark.parametrize("text", ["N=10-1000:4log0", "N=10-1000:4log1"])
def test_log_base_below_two_is_refused(text):
    with pytest.raises(DefineError) as exc:
        parse_define(text)
    assert "base of the logarithm" in str(exc.value)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(start=st.integers(1, 3000), span=st.integers(0, 200000), num=st.integers(2, 3000))
def test_lazy_linear_points_are_the_eager_list(start, span, num):
    from loopmodel.fileio.defines import LinearPoints

    pts = LinearPoints(start, start + span, num)
    ref = _eager_linear(start, start + span, num)
    assert len(pts) == len(ref) and list(pts) == ref and pts[-1] == ref[-1]


@settings(max_examples=300, deadline=None, derandomize=True)
@given(start=st.integers(1, 300), span=st.integers(0, 10 ** 6), num=st.integers(2, 3000),
       base=st.sampled_from([2, 3, 10, 16]))
def test_lazy_log_points_are_the_eager_list(start, span, num, base):
    """Dense below the threshold (every integer), distinct above it, and near it as listed."""
    from loopmodel.fileio.defines import LogPoints

    pts = LogPoints(start, start + span, num, base)
    ref = _eager_log(start, start + span, num, base)
    assert len(pts) == len(ref) and list(pts) == ref and pts[-1] == ref[-1]


@pytest.mark.parametrize("text,length,first,last", [
    ("N=1-100:99999999999999999", 100, 1, 100),
    ("N=1-100:1000000000", 100, 1, 100),
    ("N=1-100:99999999999999999log10", 100, 1, 100),
    ("N=1-4611686018427387904:4611686018427387904", 2 ** 62, 1, 2 ** 62),
    ("N=1-4611686018427387904:1000000000", 10 ** 9, 1, 2 ** 62),
    ("N=1000-4611686018427387904:100000log10", None, 1000, 2 ** 62),
])
def test_huge_count_forms_are_lazy(text, length, first, last):
    """Built without listing the points (a list of 10**9 sizes would not fit the test's time)."""
    from loopmodel.fileio.defines import parse_define_lazy

    _, values = parse_define_lazy(text)
    assert not isinstance(values, list)
    assert values[0] == first and values[-1] == last
    if length is not None:
        assert len(values) == length
    mid = len(values) // 2
    assert values[mid - 1] < values[mid] < values[mid + 1]


def test_too_dense_log_form_is_refused():
    with pytest.raises(DefineError) as exc:
        parse_define("N=1-4611686018427387904:4611686018427387904log2")
    assert "give fewer points" in str(exc.value)


def test_sweep_of_a_huge_range_indexes_without_a_list():
    from loopmodel.fileio.defines import sweep

    pts = sweep(["N=1-4611686018427387904:1000000000", "M=1:3"])
    assert len(pts) == 3 * 10 ** 9
    assert pts[0] == {"N": 1, "M": 1} and pts[len(pts) - 1] == {"N": 2 ** 62, "M": 3}
    assert pts.largest() == {"N": 2 ** 62, "M": 3}


def test_listing_is_bounded():
    with pytest.raises(DefineError) as exc:
        expand(["N=1:4611686018427387904", "N=5"])
    assert "given several times" in str(exc.value)


def test_a_huge_count_form_sweeps_without_a_list():
    """'analyze -D N=1-100:1000000000' is the sweep N = 1..100 at once (the 10**9 points, rounded,
    are those 100 sizes), not a list of 10**9 sizes built first."""
    p = run_cli("analyze", KERNELS / "daxpy.c", "-m", "SkylakeSP_Gold-6148", "-D", "N=1-100:1000000000", "-p", "LC",
                timeout=60)
    assert p.returncode == 0, p.stderr
    rows = [line.split()[1] for line in p.stdout.splitlines() if line.startswith("\u2502")]
    assert rows == [str(n) for n in range(1, 101)]


def test_hash_define_values_are_bounded(tmp_path):
    from loopmodel.errors import KernelError
    from loopmodel.fileio.c_kernel import parse_kernel

    with pytest.raises(KernelError) as exc:
        parse_kernel("#define N 99999999999999999999\ndouble a[N];\nfor (int i=0;i<N;i++) a[i] = 1.0;\n", "d.c")
    assert str(exc.value).startswith("d.c:1:1: #define N:") and "larger than 2**62" in str(exc.value)
    with pytest.raises(KernelError):
        parse_kernel("#define N \uff11\uff10\ndouble a[N];\nfor (int i=0;i<N;i++) a[i] = 1.0;\n", "d.c")


# ---------------------------------------------------------------- descending ranges


def test_descending_range_counts_down_to_the_last_size_reached():
    name, values = parse_define_lazy("N=10000:10:-50")
    assert name == "N" and values == range(10000, 9, -50) and values[-1] == 50 and len(values) == 200
    assert list(parse_define_lazy("N=5:1:-2")[1]) == [5, 3, 1] and list(parse_define_lazy("N=7:7:-3")[1]) == [7]


def test_a_descending_sweep_keeps_its_order_and_knows_its_largest_point():
    points = sweep(["N=300:100:-100", "M=2"])
    assert [p["N"] for p in points] == [300, 200, 100] and points.largest() == {"N": 300, "M": 2}


@pytest.mark.parametrize("text,message", [
    ("N=1:10:0", "-D N=1:10:0: the step is zero (give e.g. 1:10:1, or a negative step to count down)"),
    ("N=1:10:-0", "the step is zero"),
    ("N=10:1000:-50", "-D N=10:1000:-50: no sizes: a negative step counts down, and stop 1000 is above start 10 "
                      "(write 1000:10:-50 or 10:1000:50)"),
    ("N=1000:10:50", "-D N=1000:10:50: no sizes: stop 10 is below start 1000 (write 10:1000:50, or 1000:10:-50 to "
                     "count down)"),
    ("N=10:1:--1", "sizes and steps must be positive integers"),
])
def test_zero_steps_and_empty_ranges_say_what_to_write(text, message):
    with pytest.raises(DefineError) as info:
        parse_define_lazy(text)
    assert message in str(info.value) and "\n" not in str(info.value)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(st.integers(1, 10 ** 5), st.integers(1, 10 ** 5), st.integers(1, 10 ** 4))
def test_a_descending_range_holds_the_sizes_of_the_ascending_one_reversed(start, stop, step):
    hi, lo = max(start, stop), min(start, stop)
    down = parse_define_lazy(f"N={hi}:{lo}:-{step}")[1]
    assert list(down) == list(range(hi, lo - 1, -step)) and all(lo <= v <= hi for v in (down[0], down[-1]))
    assert max(down[0], down[-1]) == hi == sweep([f"N={hi}:{lo}:-{step}"]).largest()["N"]
