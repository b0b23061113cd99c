"""Unit tests for ``loopmodel.fileio.defines`` (-D values, ranges, Kerncraft forms)."""
from __future__ import annotations

import pytest

from loopmodel.errors import DefineError, LoopmodelError
from loopmodel.fileio.defines import expand, normalize_argv, parse_define


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
