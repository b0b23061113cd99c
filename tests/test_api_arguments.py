"""Arguments of the Python API of the wrong type or value: each raises a one-line
``LoopmodelError`` naming the argument, a ``TypeError`` (``ApiTypeError``) for a wrong type and a
``ValueError`` (``ApiValueError``) for a refused value; never another exception."""
from __future__ import annotations

import contextlib
import functools
from unittest import mock

import pytest
from helpers import KERNELS, SKX
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loopmodel
from loopmodel import api
from loopmodel.errors import ApiTypeError, ApiValueError, LoopmodelError, UsageError

TRIAD = str(KERNELS / "triad.c")
SIZES = {"N": 1000}


class Reached(Exception):
    """Raised in place of compiling and running a kernel: the arguments passed the checks."""


def _reached(*_args, **_kwargs):
    raise Reached


@contextlib.contextmanager
def _no_runs():
    """bench and validate stop where they would compile and run (the checks come before)."""
    with mock.patch("loopmodel.workflows.bench.run", _reached), \
            mock.patch("loopmodel.workflows.validate.run", _reached):
        yield


def _one_line_error(call):
    """Run ``call``; a LoopmodelError's one line (None when it returned or reached a run)."""
    try:
        with _no_runs():
            call()
    except Reached:
        return None
    except LoopmodelError as exc:
        text = str(exc)
        assert text and "\n" not in text, repr(text)
        return text
    return None


def test_the_api_errors_are_usage_errors_and_builtin_ones():
    assert issubclass(ApiTypeError, UsageError) and issubclass(ApiTypeError, TypeError)
    assert issubclass(ApiValueError, UsageError) and issubclass(ApiValueError, ValueError)
    assert loopmodel.ApiTypeError is ApiTypeError and loopmodel.ApiValueError is ApiValueError


MACHINE = "a name, a path, 'host' or a loopmodel.Machine"
TYPE_CASES = {
    "models": (lambda: loopmodel.analyze(TRIAD, SKX, SIZES, models=None), "models: expected a model name"),
    "from_source": (lambda: loopmodel.Kernel.from_source(None), "text: expected C source text (str), got None"),
    "from_file": (lambda: loopmodel.Kernel.from_file(None), "path: expected a path (str or os.PathLike), got None"),
    "load None": (lambda: loopmodel.Machine.load(None), "name_or_path: expected a machine name or path"),
    "load int": (lambda: loopmodel.Machine.load(42),
                 "name_or_path: expected a machine name or path (str or os.PathLike), got int"),
    "load bytes": (lambda: loopmodel.Machine.load(b"x"), "got bytes"),
    "measured": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, measured={"points": "x"}, incore="analytic"),
                 "measured: the key 'points' is no core count"),
    "measured list": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, measured=[1]), "measured: expected a path"),
    "measured value": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, measured={2: "x"}),
                       "measured[2]: expected a number"),
    "scaling cores": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, cores=[1, None]), "cores: expected core counts"),
    "defines int": (lambda: loopmodel.analyze(TRIAD, SKX, 5), "defines: expected a mapping"),
    "defines key": (lambda: loopmodel.analyze(TRIAD, SKX, {1: 2}), "defines: expected size constant names"),
    "defines value": (lambda: loopmodel.analyze(TRIAD, SKX, {"N": None}), "defines['N']: expected an int"),
    "defines list": (lambda: loopmodel.sweep(TRIAD, SKX, [None]), "defines: expected '-D' texts"),
    "machine None": (lambda: loopmodel.analyze(TRIAD, None, SIZES), f"machine: expected {MACHINE}, got None"),
    "sweep models": (lambda: loopmodel.sweep(TRIAD, SKX, SIZES, models=5),
                     "models: expected a model name or a list of them (LC, ECM, Roofline, RooflineASM), got int"),
    "bench machine": (lambda: loopmodel.bench(TRIAD, SIZES, machine=5), f"machine: expected {MACHINE}, got int"),
    "bench kernel": (lambda: loopmodel.bench(loopmodel.Kernel.from_file(TRIAD), SIZES),
                     "kernel: bench measures a C kernel file: expected its path, got Kernel"),
    "validate machine": (lambda: loopmodel.validate(TRIAD, None, SIZES), f"machine: expected {MACHINE}, got None"),
    "validate text": (lambda: loopmodel.validate("double a[N];\nfor(i=0;i<N;i++) a[i]=1.;", SKX, SIZES),
                      "kernel: validate measures a C kernel file: expected its path, got C source text"),
    "option bytes": (lambda: loopmodel.analyze(TRIAD, SKX, SIZES, unit=b"cy/CL"), "unit: expected a str"),
    "option list": (lambda: loopmodel.analyze(TRIAD, SKX, SIZES, cores=[1]), "cores: expected a single value"),
    "option name": (lambda: loopmodel.analyze(TRIAD, SKX, SIZES, no_such=1), "unknown option 'no_such'"),
    "result": (lambda: loopmodel.Result(None), "analysis: expected a loopmodel.workflows.analysis.AnalysisResult"),
    "machine object": (lambda: loopmodel.Machine({}, "x"), "model: expected a loopmodel.machine.model"),
    "scaling report": (lambda: loopmodel.ScalingReport([], None), "curves: expected a tuple of ScalingResult"),
    "bench report": (lambda: loopmodel.BenchReport((), "yes"), "curve: expected a bool, got str"),
    "machine label": (lambda: api.machine_label(5), f"machine: expected {MACHINE}, got int"),
}


@pytest.mark.parametrize("case", sorted(TYPE_CASES))
def test_wrong_types_raise_one_line_type_errors(case):
    call, message = TYPE_CASES[case]
    with _no_runs(), pytest.raises(ApiTypeError) as exc:
        call()
    assert message in str(exc.value) and isinstance(exc.value, TypeError) and "\n" not in str(exc.value)


VALUE_CASES = {
    "load empty": (lambda: loopmodel.Machine.load(""), "name_or_path: expected a machine name or path, got an empty"),
    "file NUL": (lambda: loopmodel.Kernel.from_file("a\0b"), "path: the path 'a\\x00b' holds a NUL character"),
    "kernel NUL": (lambda: loopmodel.analyze("tri\0ad.c", SKX, SIZES),
                   "kernel: the path 'tri\\x00ad.c' holds a NUL character"),
    "measured cores": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, measured={0: 1e9}),
                       "measured[0]: expected at least 1 core"),
    "measured it/s": (lambda: loopmodel.scaling(TRIAD, SKX, SIZES, measured={1: float("nan")}), "positive, finite"),
    "model name": (lambda: loopmodel.sweep(TRIAD, SKX, SIZES, models=["LC", "XY"]),
                   "models: unknown model 'XY' (choose LC, ECM, Roofline, RooflineASM)"),
    "option choice": (lambda: loopmodel.analyze(TRIAD, SKX, SIZES, unit="s"), "argument --unit/-u: invalid choice"),
    "bench repeat": (lambda: loopmodel.bench(TRIAD, SIZES, repeat="x"), "--repeat/-r: invalid int value: 'x'"),
    "result unit": (lambda: loopmodel.Result(loopmodel.analyze(TRIAD, SKX, SIZES, incore="analytic").analysis, "s"),
                    "unit: expected one of cy/CL"),
}


@pytest.mark.parametrize("case", sorted(VALUE_CASES))
def test_refused_values_raise_one_line_value_errors(case):
    call, message = VALUE_CASES[case]
    with _no_runs(), pytest.raises(ApiValueError) as exc:
        call()
    assert message in str(exc.value) and isinstance(exc.value, ValueError) and "\n" not in str(exc.value)


def test_measured_mapping_with_digit_keys_is_read():
    report = loopmodel.scaling(TRIAD, SKX, SIZES, measured={"1": 1e8, 2: 2e8}, incore="analytic", cores="1:2")
    assert dict(report.measured) == {1: 1e8, 2: 2e8}


# ---------------------------------------------------------------- any wrong value, any argument

#: values of the wrong type (or of no meaning) for any argument
WRONG = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.binary(max_size=8),
                  st.text(max_size=12), st.lists(st.integers(), max_size=3),
                  st.lists(st.text(max_size=4), max_size=2),
                  st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
                  st.dictionaries(st.integers(), st.text(max_size=4), max_size=2))

@functools.lru_cache(maxsize=1)
def _analysis():
    return loopmodel.analyze(TRIAD, SKX, SIZES, incore="analytic").analysis


ANALYSIS = {"kernel": TRIAD, "machine": SKX, "defines": SIZES, "incore": "analytic"}
#: function -> (its valid arguments, by keyword, the ones a test replaces by a wrong value)
CALLS = {
    "analyze": (loopmodel.analyze, ANALYSIS,
                ("kernel", "machine", "defines", "models", "cores", "unit", "clock", "cache_predictor", "scalar",
                 "mem_bw", "sweeps", "lc_variable")),
    "sweep": (lambda **kw: loopmodel.sweep(**kw), ANALYSIS,
              ("kernel", "machine", "defines", "models", "cores", "unit", "cache_factor", "array_padding")),
    "scaling": (loopmodel.scaling, ANALYSIS,
                ("kernel", "machine", "defines", "measured", "cores", "model", "p0", "placement", "data_in")),
    "compare": (loopmodel.compare, {"kernel": TRIAD, "machines": [SKX], "defines": SIZES, "incore": "analytic"},
                ("kernel", "machines", "defines", "model", "clock")),
    "bench": (loopmodel.bench, {"kernel": TRIAD, "defines": SIZES},
              ("kernel", "defines", "machine", "repeat", "cache", "cpu", "threads", "timeout")),
    "validate": (loopmodel.validate, {"kernel": TRIAD, "machine": SKX, "defines": SIZES},
                 ("kernel", "machine", "defines", "repeat", "cpu")),
    "Kernel.from_file": (loopmodel.Kernel.from_file, {"path": TRIAD}, ("path",)),
    "Kernel.from_source": (loopmodel.Kernel.from_source, {"text": "double a[N];\nfor(i=0;i<N;i++) a[i]=1.;"},
                           ("text", "name")),
    "Machine.load": (loopmodel.Machine.load, {"name_or_path": SKX}, ("name_or_path",)),
    "Result": (lambda **kw: loopmodel.Result(**{"analysis": _analysis(), **kw}), {}, ("analysis", "unit")),
    "ScalingReport": (lambda **kw: loopmodel.ScalingReport(**{"analysis": loopmodel.Result(_analysis()), **kw}),
                      {"curves": ()}, ("curves", "analysis", "measured", "fit")),
    "BenchReport": (loopmodel.BenchReport, {"results": ()}, ("results", "curve")),
    "machine_label": (api.machine_label, {"machine": SKX}, ("machine",)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
@settings(max_examples=30, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_wrong_values_give_a_result_or_one_line_error(name, data):
    function, valid, slots = CALLS[name]
    replaced = data.draw(st.lists(st.sampled_from(slots), min_size=1, max_size=2, unique=True))
    kwargs = {**valid, **{slot: data.draw(WRONG, label=slot) for slot in replaced}}
    _one_line_error(lambda: function(**kwargs))
